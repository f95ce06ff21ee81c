//! Dependence release: how a node (a task with dependences, a join node, a `taskwait
//! depend` waiter) learns that its last predecessor has completed, exactly once. The task
//! engine's dependence maps (`task/deps.rs`) decide which edges to add; this is the protocol
//! the edges follow, small enough to be model-checked with loom (`loom_tests` below).
//!
//! # Protocol
//! * `npred` counts what the node still waits for: 1 for the *registration guard*, held by
//!   the thread that is adding the node's edges, plus one per predecessor edge not yet
//!   released. It starts at 1.
//! * An edge p -> s is added under p's successor lock, and only if p has not completed: p's
//!   `done` flag is set under the same lock when p completes ([`DepRelease::complete`]), and the
//!   completer takes p's successor list with it.
//! * Each count is dropped once with [`DepRelease::arrive`]: the guard by the registering
//!   thread after its last edge, an edge by its predecessor's completer. The `arrive` that
//!   takes `npred` to 0 is the one that makes the node ready.
//!
//! # Why it is correct
//! *Every edge added is released exactly once.* An edge is added under p's lock while `done`
//! is false; p's completion sets `done` and takes the list under the same lock, so the edge is
//! either in the list the completer takes (released once, by it) or was never added (p had
//! completed: the lock ordered the adder after the completer). No edge is added after
//! `done`, so none is left behind.
//!
//! *The node becomes ready exactly once, and not too early.* The guard keeps `npred` above 0
//! while edges are being added (the increments happen before the guard's own decrement, on
//! the registering thread), so no intermediate 0 exists; after the guard is dropped no count
//! is added; the counts dropped equal the counts added, so exactly one `arrive` sees the
//! transition 1 -> 0.
//!
//! *Whoever makes the node ready has seen its predecessors' effects.* A predecessor's
//! completer releases its edge with an AcqRel decrement after the predecessor's body; the
//! decrements form one release sequence on `npred`, so the thread whose decrement reaches 0
//! has acquired every earlier one. For a predecessor that completed before the edge could be
//! added, the registering thread took p's lock after the completer released it: the lock
//! carries the effects, and the guard's AcqRel decrement passes them on.

// Under loom the task engine is not built: only the models use this module.
#![cfg_attr(loom, allow(dead_code))]

use super::atomic::{AtomicU32, Ordering};
use super::mutex::Mutex;

/// The release state of one node; `P` names a node (a task pointer in the engine: `NonNull`,
/// so that `Option<P>` takes no more room than `P`).
pub(crate) struct DepRelease<P> {
    /// What the node still waits for: the registration guard plus unreleased edges.
    npred: AtomicU32,
    succ: Mutex<Succ<P>>,
}

/// The successor side of a node.
struct Succ<P> {
    /// Set when the node completed: no edges may be added after.
    done: bool,
    /// The first successor inline, the rest in `rest` (most nodes have one successor).
    first: Option<P>,
    rest: Vec<P>,
}

/// The successors a completing node took with it: each is owed one [`DepRelease::arrive`].
pub(crate) struct Successors<P> {
    first: Option<P>,
    rest: Vec<P>,
}

impl<P> IntoIterator for Successors<P> {
    type Item = P;
    type IntoIter = std::iter::Chain<std::option::IntoIter<P>, std::vec::IntoIter<P>>;

    fn into_iter(self) -> Self::IntoIter {
        self.first.into_iter().chain(self.rest)
    }
}

impl<P> DepRelease<P> {
    /// A node whose registration guard is held (by the caller, until [`arrive`](Self::arrive)).
    pub(crate) fn new() -> DepRelease<P> {
        DepRelease {
            npred: AtomicU32::new(1),
            succ: Mutex::new(Succ { done: false, first: None, rest: Vec::new() }),
        }
    }

    /// Whether the node is as [`new`](Self::new) made it (guard held, no edge, not complete):
    /// the resting state of a free task block's node. For checks.
    pub(crate) fn is_new(&self) -> bool {
        let s = self.succ.lock();
        // Relaxed: the node is not shared (a free block, checked by its owner).
        self.npred.load(Ordering::Relaxed) == 1 && !s.done && s.first.is_none() && s.rest.is_empty()
    }

    /// Adds the edge `self -> succ` (whose release state is `succ_state`) unless `self` has
    /// completed; true if added. The caller holds `succ`'s registration guard.
    pub(crate) fn add_edge(&self, succ: P, succ_state: &DepRelease<P>) -> bool {
        let mut s = self.succ.lock();
        if s.done {
            return false;
        }
        // Relaxed: the guard keeps `npred` above 0 until registration ends, and the guard's
        // AcqRel decrement (on this thread, after this) orders the increment before any
        // decrement that could reach 0.
        succ_state.npred.fetch_add(1, Ordering::Relaxed);
        if s.first.is_none() {
            s.first = Some(succ);
        } else {
            s.rest.push(succ);
        }
        true
    }

    /// Drops one of the counts the node waits for (its registration guard, or the edge of a
    /// predecessor that completed); true if it was the last: the caller makes the node ready.
    pub(crate) fn arrive(&self) -> bool {
        // AcqRel: the decrements form a release sequence, so the last one has acquired every
        // earlier one (each predecessor's effects before its release).
        self.npred.fetch_sub(1, Ordering::AcqRel) == 1
    }

    /// Marks the node complete: no edge is added to it from now on; returns the successors
    /// whose edges it must release (one [`arrive`](Self::arrive) each).
    pub(crate) fn complete(&self) -> Successors<P> {
        let mut s = self.succ.lock();
        s.done = true;
        Successors { first: s.first.take(), rest: std::mem::take(&mut s.rest) }
    }

    /// The successors the node has now (none once it completed: they were released).
    pub(crate) fn successors(&self) -> Vec<P>
    where
        P: Copy,
    {
        let s = self.succ.lock();
        s.first.into_iter().chain(s.rest.iter().copied()).collect()
    }

    /// Whether the node has completed (its dependants no longer wait for it).
    pub(crate) fn is_complete(&self) -> bool {
        self.succ.lock().done
    }

    /// Whether the node waits for nothing any more (guard dropped, every edge released).
    /// Acquire: pairs with the `arrive` that reached 0 (its predecessors' effects are
    /// visible to a waiter that saw it).
    pub(crate) fn is_ready(&self) -> bool {
        self.npred.load(Ordering::Acquire) == 0
    }
}

impl<P> Default for DepRelease<P> {
    fn default() -> Self {
        DepRelease::new()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering as O};

    #[test]
    fn a_node_without_edges_is_ready_when_its_guard_drops() {
        let n: DepRelease<u32> = DepRelease::new();
        assert!(!n.is_ready());
        assert!(n.arrive());
        assert!(n.is_ready());
    }

    #[test]
    fn no_edge_is_added_to_a_completed_node() {
        let (p, s): (DepRelease<u32>, DepRelease<u32>) = (DepRelease::new(), DepRelease::new());
        assert!(p.add_edge(7, &s));
        assert_eq!(p.complete().into_iter().collect::<Vec<_>>(), vec![7]);
        assert!(p.is_complete());
        assert!(!p.add_edge(8, &s), "p is done");
        assert!(!s.arrive(), "the edge from p is still owed");
        assert!(s.arrive(), "p's release was the last count");
    }

    /// Real threads racing a registration (two edges, then the guard) against both
    /// predecessors' completions, many times: the node is made ready exactly once, after both
    /// predecessors' writes (the loom models below check every interleaving of smaller cases).
    #[test]
    fn racing_completions_make_the_node_ready_once() {
        for _ in 0..2000 {
            let nodes: Arc<[DepRelease<usize>; 3]> = Arc::new(std::array::from_fn(|_| DepRelease::new()));
            let data = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
            let readied = Arc::new(AtomicUsize::new(0));
            let check = |data: &[AtomicUsize; 2], readied: &AtomicUsize| {
                assert_eq!(data[0].load(O::Relaxed) + data[1].load(O::Relaxed), 2);
                readied.fetch_add(1, O::Relaxed);
            };
            let hs: Vec<_> = (0..2)
                .map(|p| {
                    let (nodes, data, readied) = (nodes.clone(), data.clone(), readied.clone());
                    std::thread::spawn(move || {
                        data[p].store(1, O::Relaxed);
                        for s in nodes[p].complete() {
                            if nodes[s].arrive() {
                                check(&data, &readied);
                            }
                        }
                    })
                })
                .collect();
            nodes[0].add_edge(2, &nodes[2]);
            nodes[1].add_edge(2, &nodes[2]);
            if nodes[2].arrive() {
                check(&data, &readied);
            }
            for h in hs {
                h.join().unwrap();
            }
            assert_eq!(readied.load(O::Relaxed), 1);
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;
    use loom::sync::atomic::{AtomicUsize, Ordering as O};

    /// Nodes named by index, each with the data its "body" writes (a loom cell: a read not
    /// ordered after the write is reported as a data race).
    struct Graph {
        nodes: Vec<DepRelease<usize>>,
        data: Vec<UnsafeCell<u32>>,
        readied: Vec<AtomicUsize>,
    }

    // SAFETY: the cells are only touched through loom's checked accessors.
    unsafe impl Sync for Graph {}
    // SAFETY: as above.
    unsafe impl Send for Graph {}

    impl Graph {
        fn new(n: usize) -> Arc<Graph> {
            Arc::new(Graph {
                nodes: (0..n).map(|_| DepRelease::new()).collect(),
                data: (0..n).map(|_| UnsafeCell::new(0)).collect(),
                readied: (0..n).map(|_| AtomicUsize::new(0)).collect(),
            })
        }

        /// Node `i` is ready: it reads every predecessor's data (must be ordered after the
        /// writes) and counts its readiness.
        fn ready(&self, i: usize, preds: &[usize]) {
            for &p in preds {
                // SAFETY: loom checks the access against the writer's.
                assert_eq!(
                    self.data[p].with(|v| unsafe { *v }),
                    1,
                    "node {i} saw predecessor {p} unfinished"
                );
            }
            self.readied[i].fetch_add(1, O::Relaxed);
        }

        /// Node `i`'s body and completion; `succ_preds[s]` lists the predecessors of each
        /// successor `s`, for `ready`.
        fn run_and_complete(&self, i: usize, succ_preds: &[&[usize]]) {
            // SAFETY: only node i's own thread writes its data.
            self.data[i].with_mut(|v| unsafe { *v = 1 });
            for s in self.nodes[i].complete() {
                if self.nodes[s].arrive() {
                    self.ready(s, succ_preds[s]);
                }
            }
        }
    }

    /// One edge racing its predecessor's completion: the dependant is made ready once, by
    /// whichever side comes last, after the predecessor's write.
    #[test]
    fn edge_against_completion() {
        loom::model(|| {
            let g = Graph::new(2);
            let preds: [&[usize]; 2] = [&[], &[0]];
            let g2 = g.clone();
            let t = loom::thread::spawn(move || {
                let preds: [&[usize]; 2] = [&[], &[0]];
                g2.run_and_complete(0, &preds);
            });
            g.nodes[0].add_edge(1, &g.nodes[1]);
            if g.nodes[1].arrive() {
                g.ready(1, preds[1]);
            }
            t.join().unwrap();
            assert_eq!(g.readied[1].load(O::Relaxed), 1);
            assert!(g.nodes[0].is_complete() && g.nodes[1].is_ready());
        });
    }

    /// Two predecessors completing on two threads while the dependant registers both edges.
    #[test]
    fn two_predecessors() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            let g = Graph::new(3);
            let hs: Vec<_> = (0..2)
                .map(|p| {
                    let g = g.clone();
                    loom::thread::spawn(move || {
                        let preds: [&[usize]; 3] = [&[], &[], &[0, 1]];
                        g.run_and_complete(p, &preds);
                    })
                })
                .collect();
            g.nodes[0].add_edge(2, &g.nodes[2]);
            g.nodes[1].add_edge(2, &g.nodes[2]);
            if g.nodes[2].arrive() {
                g.ready(2, &[0, 1]);
            }
            for h in hs {
                h.join().unwrap();
            }
            assert_eq!(g.readied[2].load(O::Relaxed), 1);
        });
    }

    /// A join node between a predecessor and a dependant (as the maps insert when the access
    /// kind of a group changes): the join completes itself when ready, and the dependant,
    /// registered while the join may be completing, is ready once, after the predecessor.
    #[test]
    fn through_a_join() {
        // 0: predecessor, 1: join (nothing of its own to run), 2: dependant.
        fn join_ready(g: &Graph) {
            for s in g.nodes[1].complete() {
                if g.nodes[s].arrive() {
                    g.ready(s, &[0]);
                }
            }
        }
        loom::model(|| {
            let g = Graph::new(3);
            let g2 = g.clone();
            let t = loom::thread::spawn(move || {
                // SAFETY: only this thread writes node 0's data.
                g2.data[0].with_mut(|v| unsafe { *v = 1 });
                for s in g2.nodes[0].complete() {
                    if g2.nodes[s].arrive() {
                        join_ready(&g2);
                    }
                }
            });
            g.nodes[0].add_edge(1, &g.nodes[1]);
            if g.nodes[1].arrive() {
                join_ready(&g);
            }
            g.nodes[1].add_edge(2, &g.nodes[2]);
            if g.nodes[2].arrive() {
                g.ready(2, &[0]);
            }
            t.join().unwrap();
            assert_eq!(g.readied[2].load(O::Relaxed), 1);
        });
    }
}
