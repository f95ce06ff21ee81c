//! Retirement: how the runtime learns that a task and all its descendants are complete, so
//! that a barrier (or the end of a region) can tell that every task of an implicit task's
//! tree is done without a counter shared by the whole tree. Model-checked with loom
//! (`loom_tests` below); the task engine (`task/mod.rs`) applies it to its tasks.
//!
//! # Protocol
//! Each node has `spawned`, the children it generated that count here (written only by the
//! thread running the node, and final once its body has returned), and `retired`: the count
//! of its children that retired (modulo 2^31) plus bit [`SELF_DONE`], set when the node
//! itself completes. Both updates of `retired` are SeqCst read-modify-writes.
//! * A node **retires** when it has completed and every child has retired. A node without
//!   children retires at its completion, without touching its own word ([`self_done`]).
//!   Otherwise whichever update makes its word read "`SELF_DONE` and count == `spawned`"
//!   (its own completion, or the last child's retirement) retires it: exactly one does, as
//!   each update is one read-modify-write of the same word, and `SELF_DONE` is set only once
//!   `spawned` is final (the count may equal an earlier `spawned` while the body still
//!   generates children; without `SELF_DONE` that decides nothing).
//! * Retiring a node adds one to its parent's word, which may retire the parent in turn
//!   ([`retire`] walks up). A root (an implicit task) never completes in this sense: its
//!   tree is done when its count equals its `spawned`; a waiter polls that with Acquire
//!   ([`tree_done`]).
//!
//! # Why the deciding thread sees the final counts
//! `spawned` is final when the node's body returns, before its completion's update; each
//! child's retirement happens after the child was handed over (which published `spawned` as
//! of its creation). The updates of one word are read-modify-writes, a release sequence: the
//! thread that makes the deciding update has acquired every earlier update, hence sees
//! `spawned` as final as any updater saw it, and the deciding update is the one that sees it
//! equal to the count. A root waiter that reads "count == `spawned`" with Acquire has
//! acquired every retirement in the tree (each retirement happens after the retirements and
//! completions below it, by the same chains), so it sees everything the tree's tasks did.

// Under loom the task engine is not built: only the models use this module.
#![cfg_attr(loom, allow(dead_code))]

use super::atomic::{AtomicU32, Ordering};

/// `retired`: the node has completed (its own share of the subtree is gone).
pub(crate) const SELF_DONE: u32 = 1 << 31;
/// `retired`: the count of retired children.
pub(crate) const RETIRED_MASK: u32 = SELF_DONE - 1;

/// A node of the retirement tree (a task).
pub(crate) trait Retiring {
    /// Children generated that count for retirement (owner-written).
    fn spawned(&self) -> &AtomicU32;
    /// Retired children and [`SELF_DONE`].
    fn retired(&self) -> &AtomicU32;
    /// The parent (None for a root), which is alive while a child can still retire into it.
    fn parent(&self) -> Option<&Self>;
    /// Whether this is a root (an implicit task): it never retires itself.
    fn is_root(&self) -> bool;
}

/// Whether `retired` (a value of `n`'s word) says every child of `n` has retired.
#[inline]
fn all_retired<N: Retiring + ?Sized>(n: &N, retired: u32) -> bool {
    // Relaxed: see the module docs (the caller has synchronised through `retired`'s RMWs).
    retired & RETIRED_MASK == n.spawned().load(Ordering::Relaxed) & RETIRED_MASK
}

/// Adds one retired child, or [`SELF_DONE`], to the word; returns the new value.
fn add_retired(word: &AtomicU32, delta: u32) -> u32 {
    // SeqCst: the read-modify-writes of one word form the chain through which the deciding
    // thread sees the final `spawned` (and a waiter parked on a count is woken: `sleep.rs`).
    let mut old = word.load(Ordering::Relaxed);
    loop {
        let new = if delta == SELF_DONE {
            old | SELF_DONE
        } else {
            (old & SELF_DONE) | (old.wrapping_add(1) & RETIRED_MASK)
        };
        match word.compare_exchange_weak(old, new, Ordering::SeqCst, Ordering::Relaxed) {
            Ok(_) => return new,
            Err(o) => old = o,
        }
    }
}

/// `n` (not a root) has completed; true if its whole subtree is done now, and the caller
/// must then [`retire`] it.
pub(crate) fn self_done<N: Retiring + ?Sized>(n: &N) -> bool {
    // Relaxed: only the thread that ran `n` wrote `spawned`; it is that thread, or one that
    // synchronised with it through the completion, that completes `n`.
    n.spawned().load(Ordering::Relaxed) == 0 || all_retired(n, add_retired(n.retired(), SELF_DONE))
}

/// `n`'s subtree is done: counts it as retired in its parent, and retires the parent in turn
/// while that completes its subtree. Returns true if it reached a root whose tree is now done
/// (its waiters may go on).
pub(crate) fn retire<N: Retiring + ?Sized>(n: &N) -> bool {
    let mut n = n;
    loop {
        // A root has no parent and never retires (the caller passes a node that is not one).
        let Some(parent) = n.parent() else {
            return false;
        };
        let r = add_retired(parent.retired(), 1);
        if parent.is_root() {
            return all_retired(parent, r);
        }
        if r & SELF_DONE == 0 || !all_retired(parent, r) {
            return false;
        }
        n = parent;
    }
}

/// A root's tree is done: every child it spawned has retired. Acquire: pairs with the
/// retirements' SeqCst updates (everything the tree did is visible to the caller).
pub(crate) fn tree_done<N: Retiring + ?Sized>(root: &N) -> bool {
    root.retired().load(Ordering::Acquire) & RETIRED_MASK
        == root.spawned().load(Ordering::Relaxed) & RETIRED_MASK
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;

    /// A node of a model tree, with the data its "body" writes (a loom cell: a read not
    /// ordered after the write is reported as a data race).
    struct Node {
        parent: *const Node,
        root: bool,
        spawned: AtomicU32,
        retired: AtomicU32,
        data: UnsafeCell<u32>,
    }

    impl Retiring for Node {
        fn spawned(&self) -> &AtomicU32 {
            &self.spawned
        }
        fn retired(&self) -> &AtomicU32 {
            &self.retired
        }
        fn parent(&self) -> Option<&Node> {
            // SAFETY: parents point into the same boxed slice, alive as long as `self`.
            (!self.root).then(|| unsafe { &*self.parent })
        }
        fn is_root(&self) -> bool {
            self.root
        }
    }

    /// Node 0 is the root; `root_done` counts the retirements that found its tree done.
    struct Tree {
        nodes: Box<[Node]>,
        root_done: AtomicU32,
    }

    // SAFETY: the parent pointers stay inside `nodes`; the cells are only touched through
    // loom's checked accessors.
    unsafe impl Sync for Tree {}
    // SAFETY: as above.
    unsafe impl Send for Tree {}

    impl Tree {
        fn new(parent: &[usize]) -> Arc<Tree> {
            let mut nodes: Box<[Node]> = parent
                .iter()
                .enumerate()
                .map(|(i, _)| Node {
                    parent: std::ptr::null(),
                    root: i == 0,
                    spawned: AtomicU32::new(0),
                    retired: AtomicU32::new(0),
                    data: UnsafeCell::new(0),
                })
                .collect();
            let base = nodes.as_ptr();
            for (n, &p) in nodes.iter_mut().zip(parent) {
                n.parent = base.wrapping_add(p);
            }
            Arc::new(Tree { nodes, root_done: AtomicU32::new(0) })
        }

        /// Node `i` (spawned earlier) runs and completes.
        fn complete(&self, i: usize) {
            let n = &self.nodes[i];
            // SAFETY: only node i's thread writes its data.
            n.data.with_mut(|v| unsafe { *v = 1 });
            if self_done(n) && retire(n) {
                self.root_done.fetch_add(1, Ordering::Relaxed);
            }
        }

        /// The root waiter: once the tree is done, every node's data is visible.
        fn wait_root(&self) {
            while !tree_done(&self.nodes[0]) {
                loom::thread::yield_now();
            }
            for (i, n) in self.nodes.iter().enumerate().skip(1) {
                // SAFETY: loom checks the access against the writer's.
                assert_eq!(n.data.with(|v| unsafe { *v }), 1, "node {i} not done at the root's end");
            }
        }
    }

    /// Root 0 -> task 1 -> child 2: the child completes on another thread while task 1
    /// completes; exactly one of them retires task 1 into the root, and the root's waiter
    /// sees both tasks' writes.
    #[test]
    fn child_races_its_parents_completion() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            let t = Tree::new(&[0, 0, 1]);
            // The root spawns task 1; task 1 (on thread a) spawns child 2 and hands it to b.
            t.nodes[0].spawned.store(1, Ordering::Relaxed);
            let a = t.clone();
            let ha = loom::thread::spawn(move || {
                a.nodes[1].spawned.store(1, Ordering::Relaxed);
                let b = a.clone();
                let hb = loom::thread::spawn(move || b.complete(2));
                a.complete(1);
                hb.join().unwrap();
            });
            t.wait_root();
            ha.join().unwrap();
            assert_eq!(t.root_done.load(Ordering::Relaxed), 1, "the root's tree was found done once");
            assert_eq!(t.nodes[1].retired.load(Ordering::Relaxed), SELF_DONE | 1);
        });
    }

    /// Task 1 (on thread a) hands child 2 to thread b, then generates child 3 and hands it
    /// to thread c, then completes; the root's waiter reads every task's write. Child 2 was
    /// handed over when task 1's `spawned` was 1: if it retires last, it learns the final 2
    /// only through the chain of updates of task 1's word; task 1 retires into the root
    /// exactly once, whichever update comes last.
    #[test]
    fn children_handed_over_before_spawned_is_final() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(2);
        model.check(|| {
            let t = Tree::new(&[0, 0, 1, 1]);
            t.nodes[0].spawned.store(1, Ordering::Relaxed);
            let a = t.clone();
            let ha = loom::thread::spawn(move || {
                let mut hs = Vec::new();
                for c in [2, 3] {
                    a.nodes[1].spawned.store(c as u32 - 1, Ordering::Relaxed);
                    let b = a.clone();
                    hs.push(loom::thread::spawn(move || b.complete(c)));
                }
                a.complete(1);
                for h in hs {
                    h.join().unwrap();
                }
            });
            t.wait_root();
            ha.join().unwrap();
            assert_eq!(t.root_done.load(Ordering::Relaxed), 1);
            assert_eq!(t.nodes[0].retired.load(Ordering::Relaxed), 1, "task 1 retired into the root once");
        });
    }
}
