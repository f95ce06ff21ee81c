//! A team's prioritised ready tasks: one heap per member, holding the tasks that member
//! pushed, and one for tasks readied outside the team, each behind a lock of its own. A thread
//! looks at its own heap first (where a waiting thread finds its own children), then at the
//! others. One heap for the whole team put every prioritised task of a recursion through one
//! lock, and a waiting thread's search of it (see [`take_allowed`]) through every other
//! thread's tasks: a prioritised fib ran several times slower than a plain one.
//!
//! Priority is a hint (OpenMP: "a hint for the priority of the generated task"): among the
//! tasks of one heap the highest priority, then the oldest, is taken first; across heaps a
//! thread's own come first.
//!
//! # What a thread remembers ([`HeapRefused`])
//! A thread waiting inside a task may start only that task's descendants. When every heap
//! holds only tasks it may not start, it remembers the heaps' push counts, and neither searches
//! them again nor counts them as work that keeps it from parking, until a push changes a count.
//! Sound because tasks only leave the heaps until then, and whether a task descends from the
//! anchor never changes. A push is seen: the pusher stores the heap's length, then its count
//! (Release), and a reader loads the counts (Acquire) before it looks at any length or heap;
//! a parking thread loads them after the sleep protocol's fence, which pairs with the fence
//! of the `notify` that follows every push (`sync/sleep.rs`).

use std::collections::BinaryHeap;

use crossbeam_utils::CachePadded;

use super::descriptor::TaskRef;
use crate::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

struct Prio {
    priority: i32,
    seq: u64,
    task: TaskRef,
}

impl PartialEq for Prio {
    fn eq(&self, o: &Self) -> bool {
        self.priority == o.priority && self.seq == o.seq
    }
}
impl Eq for Prio {}
impl PartialOrd for Prio {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Prio {
    /// Highest priority first; among equals, the oldest first.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.priority.cmp(&o.priority).then(o.seq.cmp(&self.seq))
    }
}

/// One heap: its tasks and how many were ever pushed (each entry's `seq`), under its lock;
/// the length and the count again for looks without the lock.
#[derive(Default)]
struct Heap {
    tasks: parking_lot::Mutex<(BinaryHeap<Prio>, u64)>,
    len: AtomicUsize,
    pushes: AtomicU64,
}

/// The prioritised tasks of one team (see the module's docs).
pub(crate) struct PrioHeaps {
    /// Member `tid`'s heap at `tid`, the heap of tasks readied outside the team last.
    heaps: Box<[CachePadded<Heap>]>,
    /// Set at the team's first prioritised task, never cleared: until then a look for work
    /// costs one load, not one per heap.
    used: AtomicBool,
    /// Distinct for every set of heaps made in the process (never 0): a thread's memo names
    /// the heaps it is about (a team's heaps are replaced when it is resized, maybe at the
    /// same address).
    id: u64,
}

impl PrioHeaps {
    /// The heaps of a team of `n` members.
    pub(crate) fn new(n: u32) -> PrioHeaps {
        // Relaxed: distinct values are all that is needed.
        static IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        PrioHeaps {
            heaps: (0..=n.max(1)).map(|_| CachePadded::new(Heap::default())).collect(),
            used: AtomicBool::new(false),
            id: IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// The heap of member `tid`, or the outside heap for None (or a number past the team).
    fn heap_of(&self, tid: Option<u32>) -> &Heap {
        let outside = self.heaps.len() - 1;
        &self.heaps[tid.map_or(outside, |t| (t as usize).min(outside))]
    }

    /// Queues `t` with `priority` (> 0) in member `tid`'s heap (the caller is that member), or
    /// in the outside heap for None.
    pub(crate) fn push(&self, tid: Option<u32>, t: TaskRef, priority: i32) {
        let h = self.heap_of(tid);
        let mut p = h.tasks.lock();
        p.1 += 1;
        let seq = p.1;
        p.0.push(Prio { priority, seq, task: t });
        // Relaxed: a hint, ordered before the count by the count's Release store.
        h.len.store(p.0.len(), Ordering::Relaxed);
        // Release: whoever loads this count (Acquire) sees the length stored before it.
        h.pushes.store(seq, Ordering::Release);
        drop(p);
        if !self.used.load(Ordering::Relaxed) {
            // Relaxed: a hint; a thread that still reads false skips the heaps for one look,
            // and the parking threads' look comes after the notify that follows this push.
            self.used.store(true, Ordering::Relaxed);
        }
    }

    /// Tasks in member `tid`'s heap, as last stored: for the cut-off.
    #[inline]
    pub(crate) fn len_of(&self, tid: u32) -> usize {
        // Relaxed: a heuristic's input.
        self.heap_of(Some(tid)).len.load(Ordering::Relaxed)
    }

    /// The sum of the heaps' push counts (Acquire: see the module's docs).
    fn pushes(&self) -> u64 {
        self.heaps.iter().map(|h| h.pushes.load(Ordering::Acquire)).fold(0, u64::wrapping_add)
    }

    /// Whether the memo `refused` says that every queued task is refused by the constraint
    /// `anchor` (never for an unconstrained thread).
    fn all_refused(&self, anchor: usize, refused: &HeapRefused) -> bool {
        refused.about(self, anchor) && refused.pushes == self.pushes()
    }

    /// Whether a heap may hold a task for a thread constrained by `anchor` with the memo
    /// `refused`.
    pub(crate) fn has_work(&self, anchor: usize, refused: &HeapRefused) -> bool {
        self.used.load(Ordering::Relaxed)
            && !self.all_refused(anchor, refused)
            && self.heaps.iter().any(|h| h.len.load(Ordering::Relaxed) != 0)
    }

    /// Takes a task for member `tid` that `allowed` accepts: from its own heap first, then
    /// from the others; from each the best it may start. `anchor` identifies the constraint
    /// `allowed` stands for (0: none). A constrained thread that finds nothing notes so in
    /// `refused`.
    #[inline]
    pub(crate) fn take(
        &self,
        tid: u32,
        allowed: &dyn Fn(TaskRef) -> bool,
        anchor: usize,
        refused: &mut HeapRefused,
    ) -> Option<TaskRef> {
        if !self.used.load(Ordering::Relaxed) {
            return None;
        }
        self.take_slow(tid, allowed, anchor, refused)
    }

    #[cold]
    fn take_slow(
        &self,
        tid: u32,
        allowed: &dyn Fn(TaskRef) -> bool,
        anchor: usize,
        refused: &mut HeapRefused,
    ) -> Option<TaskRef> {
        let n = self.heaps.len();
        // The thread's own heap first: only the thread pushes into it, so its own count tells
        // whether it changed since a fruitless look. (A thread numbered past the team has none:
        // the outside heap is nobody's own.)
        let own = (tid as usize) < n - 1;
        // Relaxed: this thread wrote it.
        let own_pushes = if own { self.heaps[tid as usize].pushes.load(Ordering::Relaxed) } else { 0 };
        let own_refused = refused.about(self, anchor) && refused.own == own_pushes;
        if own
            && !own_refused
            && let Some(t) = self.take_from(tid as usize, allowed)
        {
            return Some(t);
        }
        // Read before any other heap is looked at: a push after this changes the sum.
        let pushes = self.pushes();
        if refused.about(self, anchor) && refused.pushes == pushes {
            return None;
        }
        let first = if own { tid as usize + 1 } else { 0 };
        let others = if own { n - 1 } else { n };
        for k in 0..others {
            if let Some(t) = self.take_from((first + k) % n, allowed) {
                return Some(t);
            }
        }
        if anchor != 0 {
            *refused = HeapRefused { heaps: self.id, pushes, own: own_pushes, anchor };
        }
        None
    }

    /// Takes the best task `allowed` accepts from heap `i`, if any.
    #[inline]
    fn take_from(&self, i: usize, allowed: &dyn Fn(TaskRef) -> bool) -> Option<TaskRef> {
        let h = &self.heaps[i];
        // Relaxed: a hint; the heap's lock orders its content (see the module's docs for why a
        // memo made after this look misses no push).
        if h.len.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let mut p = h.tasks.lock();
        let got = match p.0.peek() {
            Some(top) if allowed(top.task) => p.0.pop().map(|x| x.task),
            Some(_) => take_allowed(&mut p.0, allowed),
            None => None,
        };
        if got.is_some() {
            // Relaxed: a hint (see `push`).
            h.len.store(p.0.len(), Ordering::Relaxed);
        }
        got
    }
}

/// A thread's memo of its last fruitless look at its team's prioritised tasks: when the heaps
/// `heaps` had seen `pushes` pushes in all, they held no task the constraint anchored at
/// `anchor` allows (see the module's docs). An anchor's address reused by a later task is
/// harmless: the tasks queued then were all pushed before that task existed, so none descends
/// from it.
#[derive(Clone, Copy, Default)]
pub(crate) struct HeapRefused {
    /// The heaps' id (`PrioHeaps::id`); 0: no memo.
    heaps: u64,
    pushes: u64,
    /// The count of the thread's own heap then (its own heap is looked at without the sum).
    own: u64,
    /// The constraint's task address.
    anchor: usize,
}

impl HeapRefused {
    /// Whether this memo is about `heaps` and the constraint `anchor` (never for an
    /// unconstrained thread); its counts say whether it still holds.
    #[inline]
    fn about(&self, heaps: &PrioHeaps, anchor: usize) -> bool {
        anchor != 0 && self.anchor == anchor && self.heaps == heaps.id
    }
}

/// The heap's best task that `allowed` accepts, taken out of it, when its top is refused (a
/// thread waiting in a task may run only that task's descendants). Looking at the top alone
/// would hang: threads that each wait in a task whose prioritised children sit below an
/// older task none of them may start (recursive code with `priority` and `taskwait`; libomp
/// 19 hangs there) would never reach them. Every entry is looked at, and the heap rebuilt
/// without the one taken: O(n) in the buffer the heap already has (no allocation), on a path
/// only constrained threads take.
#[cold]
fn take_allowed(heap: &mut BinaryHeap<Prio>, allowed: &dyn Fn(TaskRef) -> bool) -> Option<TaskRef> {
    // `iter` visits the heap's buffer in its order, the order `into_vec` keeps.
    let (best, _) =
        heap.iter().enumerate().filter(|(_, e)| allowed(e.task)).max_by(|(_, a), (_, b)| a.cmp(b))?;
    let mut entries = std::mem::take(heap).into_vec();
    let taken = entries.swap_remove(best).task;
    *heap = BinaryHeap::from(entries);
    Some(taken)
}
