//! A team's ready tasks and the threads waiting for them.
//!
//! Every member owns a work-stealing deque (LIFO for its owner, thieves take the oldest tasks,
//! up to [`STEAL_BATCH`] at once, run one and keep the rest in their own deque);
//! an injector takes tasks readied by threads outside the team (a detach fulfilled elsewhere)
//! and tasks put back; prioritised tasks go to heaps looked at first (`prio.rs`).
//!
//! # Waking waiters (README.md §4)
//! Threads that wait for a condition (a count reaching 0) run tasks meanwhile, then park in the
//! pool's [`Lot`] (`sync/lot.rs`: the protocol, why no wake-up is lost, and its loom models),
//! each on a word of its own, under the *key* of what it waits for; a thread waiting in a task
//! (under the scheduling constraint) parks as one that takes only some work. A push onto a
//! member's own queue wakes one thread that takes any work (the pusher itself can always run
//! what it pushed there); a task queued elsewhere wakes the threads waiting in its ancestors
//! and one that takes any work; a count reaching 0 wakes the threads keyed by it; rare events
//! (a mutexinoutset lock freed, a `taskwait depend` satisfied) wake every one.

use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use crossbeam_utils::CachePadded;

use super::descriptor::TaskRef;
use super::prio::{HeapRefused, PrioHeaps};
use crate::sync::atomic::{AtomicU32, Ordering, fence};
use crate::sync::lot::{Announced, Lot, Parker, Takes};

/// The ready tasks of one team.
pub(crate) struct TaskPool {
    deques: Box<[CachePadded<Worker<TaskRef>>]>,
    stealers: Box<[Stealer<TaskRef>]>,
    injector: Injector<TaskRef>,
    /// The prioritised tasks.
    prio: PrioHeaps,
    /// The members' places to park.
    lot: Lot,
    /// Threads outside the team completing one of its tasks (detach fulfilled elsewhere).
    foreign: AtomicU32,
    /// Whether the team's region began with more busy threads than CPUs: then a thread that
    /// waits in a task and may run no task it sees sleeps (README.md §4). Fixed for a region,
    /// so that every wait in the team follows the same rule.
    alone: bool,
}

// SAFETY: each deque's `Worker` is used only by the member with that thread number (the
// `owner_*` methods' contract); everything else is Sync.
unsafe impl Sync for TaskPool {}
// SAFETY: as above.
unsafe impl Send for TaskPool {}

impl TaskPool {
    pub(crate) fn new(n: u32) -> TaskPool {
        let deques: Box<[_]> = (0..n.max(1)).map(|_| CachePadded::new(Worker::new_lifo())).collect();
        let stealers = deques.iter().map(|w| w.stealer()).collect();
        TaskPool {
            deques,
            stealers,
            injector: Injector::new(),
            prio: PrioHeaps::new(n),
            lot: Lot::new(n as usize),
            foreign: AtomicU32::new(0),
            alone: false,
        }
    }

    /// Pushes a ready task: member `tid`'s deque (caller must be that member), or the injector
    /// when `tid` is None; a prioritised task to the member's heap (or the outside heap).
    pub(crate) fn push(&self, tid: Option<u32>, t: TaskRef, priority: i32) {
        let own = tid.filter(|&tid| (tid as usize) < self.deques.len());
        if priority > 0 {
            return self.queue_outside(t, |t| self.prio.push(own, t, priority));
        }
        match own {
            Some(tid) => {
                self.deques[tid as usize].push(t);
                self.notify_work();
            }
            None => self.queue_outside(t, |t| self.injector.push(t)),
        }
    }

    /// At the start of a region (no task queued, no member waiting): whether the team is
    /// oversubscribed for its waits (`alone`).
    pub(crate) fn set_alone(&mut self, v: bool) {
        self.alone = v;
    }

    /// Whether a thread waiting in a task sleeps when it may run no task it sees.
    #[inline]
    pub(crate) fn alone(&self) -> bool {
        self.alone
    }

    /// Prioritised tasks member `tid` has queued (in its heap), as last seen: for the cut-off.
    #[inline]
    pub(crate) fn prio_queued(&self, tid: u32) -> usize {
        self.prio.len_of(tid)
    }

    /// Tasks in member `tid`'s own deque (caller: that member).
    #[inline]
    pub(crate) fn own_len(&self, tid: u32) -> usize {
        self.deques.get(tid as usize).map_or(0, |w| w.len())
    }

    /// Puts back a task that may not run here now (refused by the scheduling constraint, or
    /// its mutexinoutset lock busy) where any member can take it. It was in no queue
    /// meanwhile (see `steal_into`): a thread that looked for work then may have parked, and
    /// the threads that may run it are woken ([`queue_outside`](Self::queue_outside)).
    #[cold]
    pub(crate) fn put_back(&self, t: TaskRef) {
        self.queue_outside(t, |t| self.injector.push(t));
    }

    /// Moves every task of member `tid`'s own deque to the injector (caller: that member,
    /// about to sleep while it may run none of them: README.md §4), waking the threads that
    /// may be waiting for each.
    #[cold]
    pub(crate) fn spill(&self, tid: u32) {
        if let Some(w) = self.deques.get(tid as usize) {
            while let Some(t) = w.pop() {
                self.put_back(t);
            }
        }
    }

    /// Takes a ready task for member `tid` (priority heap, own deque, injector, then a random
    /// victim). `allowed` filters by the task scheduling constraint; refused tasks are put
    /// back where others can take them.
    ///
    /// `anchor` identifies the constraint `allowed` stands for (the address of the task the
    /// thread waits in; 0: none, every task allowed). Only an unconstrained thread steals
    /// several tasks at once into its own deque: a constrained one must not, its own deque then
    /// holding, on top, exactly the descendants of the task it waits in (pushed since that task
    /// started), which is what lets it stop at the first task it may not run. `refused` is the
    /// thread's memo of a fruitless search of the priority heap (see `HeapRefused`).
    ///
    /// Inlined into the search of waiting threads (`wait::find`), which polls here between its
    /// polls of what it waits for: as a call of its own, its prologue and epilogue cost a
    /// barrier's helping waiter more than the looks themselves when the queues are empty.
    #[inline]
    pub(crate) fn take(
        &self,
        tid: u32,
        rng: &mut u32,
        allowed: &dyn Fn(TaskRef) -> bool,
        anchor: usize,
        refused: &mut HeapRefused,
    ) -> Option<TaskRef> {
        let batch = anchor == 0;
        if let Some(t) = self.take_own(tid, allowed, anchor, refused) {
            return Some(t);
        }
        let own = if batch { self.deques.get(tid as usize) } else { None };
        // Each source is looked at before stealing from it: crossbeam's steal pins the epoch
        // (a thread-local lookup, a fence, and now and then a walk over every thread's epoch
        // line) before it finds a queue empty, and a waiting thread polls here between its
        // polls of the flag it waits on (`EpochFlag::wait_reach_helping`). A look at a deque
        // still costs a fence (crossbeam's `Stealer::is_empty`); at the injector, two loads.
        if !self.injector.is_empty()
            && let Some(t) = self.steal_into(
                own,
                |w| self.injector.steal_batch_with_limit_and_pop(w, STEAL_BATCH),
                || self.injector.steal(),
            )
        {
            if allowed(t) {
                return Some(t);
            }
            self.put_back(t);
        }
        let n = self.stealers.len() as u32;
        if n > 1 {
            *rng ^= *rng << 13;
            *rng ^= *rng >> 17;
            *rng ^= *rng << 5;
            let start = *rng % n;
            // At most MAX_VICTIMS victims a call, from a random one on: in a large team, a
            // waiting thread polls here between its polls of what it waits for, and a look at
            // every deque would make each poll cost the team's size. Nothing is lost by it: a
            // thread parks only once `has_work` looked at every queue.
            let others = (0..n).map(|k| (start + k) % n).filter(|&v| v != tid);
            for v in others.take(MAX_VICTIMS as usize) {
                let victim = &self.stealers[v as usize];
                if victim.is_empty() {
                    continue;
                }
                if let Some(t) = self.steal_into(
                    own,
                    |w| victim.steal_batch_with_limit_and_pop(w, STEAL_BATCH),
                    || victim.steal(),
                ) {
                    if allowed(t) {
                        return Some(t);
                    }
                    self.put_back(t);
                    return None;
                }
            }
        }
        None
    }

    /// [`take`](Self::take) without stealing from the other members' deques (a constrained
    /// thread in an oversubscribed team: README.md §4): the heaps, the thread's own deque, and
    /// every task of the injector.
    pub(crate) fn take_unstolen(
        &self,
        tid: u32,
        allowed: &dyn Fn(TaskRef) -> bool,
        anchor: usize,
        refused: &mut HeapRefused,
    ) -> Option<TaskRef> {
        self.take_own(tid, allowed, anchor, refused).or_else(|| self.take_outside(allowed))
    }

    /// The heaps, then member `tid`'s own deque.
    #[inline]
    fn take_own(
        &self,
        tid: u32,
        allowed: &dyn Fn(TaskRef) -> bool,
        anchor: usize,
        refused: &mut HeapRefused,
    ) -> Option<TaskRef> {
        if let Some(t) = self.prio.take(tid, allowed, anchor, refused) {
            return Some(t);
        }
        let w = self.deques.get(tid as usize)?;
        let t = w.pop()?;
        if allowed(t) {
            return Some(t);
        }
        // Newer tasks sit on top: if the top may not run, nothing below may either. While it
        // was out, a thread may have found no work and parked: wake one.
        w.push(t);
        self.notify_work();
        None
    }

    /// A task of the injector that `allowed` accepts, looking at each task there once (the
    /// refused ones go back, to the injector's end).
    fn take_outside(&self, allowed: &dyn Fn(TaskRef) -> bool) -> Option<TaskRef> {
        for _ in 0..self.injector.len() {
            let t = steal(|| self.injector.steal())?;
            if allowed(t) {
                return Some(t);
            }
            self.put_back(t);
        }
        None
    }

    /// Steals from one source: a batch into the thief's deque `own` when given (`batch`), else
    /// one task (`one`). The tasks of a batch were in no queue while they moved, so a thread
    /// that looked for work meanwhile may have parked: it is woken if any are left over.
    ///
    /// Never inlined: a steal pins crossbeam's epoch, whose thread-local the compiler would
    /// otherwise look up (`__tls_get_addr`) before `take`'s loop over the victims, on every
    /// call of a waiter that finds every queue empty.
    #[inline(never)]
    fn steal_into(
        &self,
        own: Option<&CachePadded<Worker<TaskRef>>>,
        batch: impl Fn(&Worker<TaskRef>) -> Steal<TaskRef>,
        one: impl Fn() -> Steal<TaskRef>,
    ) -> Option<TaskRef> {
        let t = steal(|| match own {
            Some(w) => batch(w),
            None => one(),
        })?;
        if own.is_some_and(|w| !w.is_empty()) {
            self.notify_work();
        }
        Some(t)
    }

    /// Whether any queue looks non-empty to a thread constrained by `anchor` that keeps the
    /// memo `refused` (the heaps count only when they may hold a task it has not refused).
    fn has_work(&self, anchor: usize, refused: &HeapRefused) -> bool {
        self.prio.has_work(anchor, refused)
            || !self.injector.is_empty()
            || self.stealers.iter().any(|s| !s.is_empty())
    }

    /// After a push onto a member's own queue: wakes one parked thread that takes any work,
    /// or, when the team is not oversubscribed (`alone`), one that takes some (it may be waiting in
    /// an ancestor of the task). Only for parallelism: the pusher itself runs what it pushed
    /// there if nobody takes it (README.md §4).
    #[inline]
    fn notify_work(&self) {
        fence(Ordering::SeqCst);
        if self.lot.any_parked() {
            self.lot.wake_one(!self.alone);
        }
    }

    /// After an event any parked thread may be waiting for (a mutexinoutset lock freed, a
    /// `taskwait depend` satisfied, a hidden task's counts): wakes them all.
    #[inline]
    pub(crate) fn notify_all(&self) {
        fence(Ordering::SeqCst);
        if self.lot.any_parked() {
            self.lot.wake_all();
        }
    }

    /// Queues `t` (with `queue`) where its owner's progress does not carry it (the injector,
    /// a heap), then wakes the parked threads waiting in an ancestor of `t`, which may run it,
    /// and one thread that may run any task. Once queued, `t` may run and be freed at once:
    /// when a thread looks parked beforehand, `t` is held (a reference) for the look at its
    /// ancestors; otherwise, in the rare case that one parks meanwhile, every thread parked in
    /// a task is woken.
    #[inline]
    fn queue_outside(&self, t: TaskRef, queue: impl FnOnce(TaskRef)) {
        // Relaxed: a hint; the look that counts follows the fence.
        let held = self.lot.any_parked().then(|| {
            // SAFETY: `t` is alive until queued (its queuer holds it).
            let task = unsafe { &*t.0 };
            // Relaxed: as any new reference, taken by a holder (`descriptor::release_ref`).
            task.rest.refs.fetch_add(1, Ordering::Relaxed);
            task
        });
        queue(t);
        fence(Ordering::SeqCst);
        if self.lot.any_parked() {
            self.wake_for(held);
        }
        if let Some(task) = held {
            super::descriptor::release_ref(task);
        }
    }

    #[cold]
    fn wake_for(&self, task: Option<&super::Task>) {
        match task {
            Some(task) => self
                .lot
                .wake_keyed_if(|_, anchor, depth| anchor != 0 && task.descends_from_addr(anchor, depth)),
            None => self.lot.wake_keyed_if(|_, anchor, _| anchor != 0),
        }
        self.lot.wake_one(false);
    }

    /// After counts dropped by a task's end (`task::uncount`): wakes the threads waiting for
    /// what ended.
    #[inline]
    pub(crate) fn notify_ended(&self, ended: Ended) {
        fence(Ordering::SeqCst);
        if self.lot.any_parked() {
            self.wake_ended(ended);
        }
    }

    #[cold]
    fn wake_ended(&self, ended: Ended) {
        for key in [ended.children_of, ended.group] {
            if key != 0 {
                self.lot.wake_key(key);
            }
        }
        if ended.tree {
            self.lot.wake_idle();
        }
    }

    /// For a barrier's flag writer that has issued a SeqCst fence since its write
    /// (`EpochFlag::set`): wakes the members parked here while they wait in the barrier
    /// (`BarrierHelp`), which park as threads that take any work.
    #[inline]
    pub(crate) fn notify_barrier_fenced(&self) {
        if self.lot.any_parked() {
            self.lot.wake_idle();
        }
    }

    /// Parks member `tid` until notified, unless `cond` holds or work is visible once
    /// announced (to a thread constrained by `anchor` with the memo `refused`, as in `take`).
    /// `key` names what it waits for (what `notify_ended` is given when it ends; 0 for a
    /// tree, a barrier, or nothing).
    pub(crate) fn park(&self, tid: u32, key: usize, wait: Park<'_>) {
        let (cond, anchor, refused) = (wait.cond, wait.anchor, wait.refused);
        let who = self.parker(tid, key, anchor as *const super::Task);
        self.lot.park(who, &|| cond() || self.has_work(anchor, refused));
    }

    /// Announces member `tid`, waiting under `key` in task `anchor` (null: in none), before it
    /// looks for work it may run: a task queued from then on where the thread does not look
    /// before it sleeps wakes it (README.md §4). Then [`sleep`](Self::sleep) or
    /// [`leave`](Self::leave).
    pub(crate) fn announce(&self, tid: u32, key: usize, anchor: *const super::Task) -> Announced {
        self.lot.announce(self.parker(tid, key, anchor))
    }

    pub(crate) fn sleep(&self, a: Announced) {
        self.lot.sleep(a);
    }

    pub(crate) fn leave(&self, a: Announced) {
        self.lot.leave(a);
    }

    fn parker(&self, tid: u32, key: usize, anchor: *const super::Task) -> Parker {
        debug_assert!((tid as usize) < self.deques.len(), "parks only members");
        let place = (tid as usize).min(self.deques.len() - 1);
        // SAFETY: the anchor is null or the task the thread waits in, alive meanwhile.
        match unsafe { anchor.as_ref() } {
            None => Parker { place, key, takes: Takes::Any, tag: 0, rank: 0 },
            Some(a) => Parker { place, key, takes: Takes::Some, tag: anchor as usize, rank: a.head.depth },
        }
    }

    /// A thread outside the team is about to complete one of its tasks (the pool is alive:
    /// the task is pending).
    pub(crate) fn enter_foreign(&self) {
        self.foreign.fetch_add(1, Ordering::SeqCst);
    }

    pub(crate) fn leave_foreign(&self) {
        // Release: our last use of the pool happens-before the closer's load that sees 0.
        self.foreign.fetch_sub(1, Ordering::Release);
    }

    /// At the region's end (no task pending): waits until no outside thread still completes
    /// one of the team's tasks, so that the team may be reused or freed.
    pub(crate) fn wait_foreign(&self) {
        // Acquire: pairs with `leave_foreign`.
        while self.foreign.load(Ordering::Acquire) != 0 {
            std::thread::yield_now();
        }
    }
}

/// What a task's end ended, for [`TaskPool::notify_ended`]: the keys of the waits it may end
/// (0: none).
#[derive(Clone, Copy, Default)]
pub(crate) struct Ended {
    /// The parent's address, when its last child completed (`taskwait`).
    pub(crate) children_of: usize,
    /// The taskgroup's address, when its count reached 0 (end of taskgroup).
    pub(crate) group: usize,
    /// A root's tree retired (barriers, the region's end).
    pub(crate) tree: bool,
}

impl Ended {
    pub(crate) fn any(&self) -> bool {
        self.children_of != 0 || self.group != 0 || self.tree
    }
}

/// How a thread parks on the pool ([`TaskPool::park`]).
pub(crate) struct Park<'a> {
    /// What it waits for.
    pub(crate) cond: &'a dyn Fn() -> bool,
    /// Its scheduling constraint (0: none).
    pub(crate) anchor: usize,
    /// Its memo of refused heaps.
    pub(crate) refused: &'a HeapRefused,
}

/// The most deques one `take` looks at for a task to steal.
const MAX_VICTIMS: u32 = 32;

/// Tasks a thief takes at once (from a deque at most half of it, from the injector what its
/// current block holds, up to this limit): one runs, the others go to the thief's own deque,
/// where others may steal them in turn. One steal (an epoch pin and a CAS on the victim's
/// lines) then serves several tasks when one thread produces them and another consumes.
const STEAL_BATCH: usize = 8;

fn steal(mut f: impl FnMut() -> Steal<TaskRef>) -> Option<TaskRef> {
    loop {
        match f() {
            Steal::Success(t) => return Some(t),
            Steal::Empty => return None,
            Steal::Retry => std::hint::spin_loop(),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Distinct task pointers the pool only compares (it never dereferences them).
    fn fake(i: usize) -> TaskRef {
        TaskRef((0x1000 + 0x100 * i) as *const _)
    }

    /// A constrained thread (it waits in a task, and may run only that task's descendants)
    /// takes no batch. Here the injector holds two refused tasks, then an allowed one: a batch
    /// would run (refuse) the first and put the allowed one under the second in the thread's
    /// own deque, where the thread stops looking (the first task it may not run ends its search
    /// of its deque), and it would never take it.
    #[test]
    fn a_constrained_thread_takes_no_batch() {
        let pool = TaskPool::new(1);
        let allowed = fake(0);
        pool.push(None, fake(1), 0);
        pool.push(None, fake(2), 0);
        pool.push(None, allowed, 0);
        let (mut rng, mut refused) = (1, HeapRefused::default());
        let only = |t: TaskRef| t == allowed;
        // What a waiting thread does between polls: takes, is refused, retries.
        let found = (0..8).any(|_| pool.take(0, &mut rng, &only, WAITS_IN, &mut refused) == Some(allowed));
        assert!(found, "the allowed task was never taken");
        // Unconstrained, a thief takes a batch: one runs, the rest are in its own deque.
        for i in 3..8 {
            pool.push(None, fake(i), 0);
        }
        let any = |_: TaskRef| true;
        let first = pool.take(0, &mut rng, &any, 0, &mut refused).expect("a foreign task");
        assert!(first != allowed);
        assert!(pool.own_len(0) >= 1, "the batch's other tasks are in the thief's deque");
    }

    /// A constrained thread finds its prioritised tasks below a top it may not run: the best
    /// of those it may run (highest priority, then oldest), the refused ones staying queued in
    /// order for the others.
    #[test]
    fn a_constrained_thread_reaches_below_a_refused_top() {
        let pool = TaskPool::new(2);
        pool.push(Some(0), fake(1), 9); // the top, refused
        pool.push(Some(0), fake(2), 3);
        pool.push(Some(0), fake(3), 5);
        pool.push(Some(0), fake(4), 5); // as high as fake(3), younger
        pool.push(Some(0), fake(5), 7); // refused
        let (mut rng, mut refused) = (1, HeapRefused::default());
        let mine = |t: TaskRef| [fake(2), fake(3), fake(4)].contains(&t);
        let order: Vec<_> = (0..4).map(|_| pool.take(1, &mut rng, &mine, WAITS_IN, &mut refused)).collect();
        assert_eq!(order, [Some(fake(3)), Some(fake(4)), Some(fake(2)), None]);
        let any = |_: TaskRef| true;
        let mut other = HeapRefused::default();
        assert_eq!(pool.take(0, &mut rng, &any, WAITS_IN + 1, &mut other), Some(fake(1)));
        assert_eq!(pool.take(0, &mut rng, &any, WAITS_IN + 1, &mut other), Some(fake(5)));
        assert_eq!(pool.take(0, &mut rng, &any, WAITS_IN + 1, &mut other), None);
    }

    /// After a fruitless search of the heap a constrained thread does not search it again
    /// (its refusal is remembered) until a task is pushed, and does not count it as work that
    /// keeps it from parking; another constraint, or no memo, still finds the heap.
    #[test]
    fn a_refused_heap_is_not_searched_again_until_a_push() {
        let pool = TaskPool::new(2);
        // One refused task in the heap of tasks from outside the team, one in the thread's own.
        pool.push(None, fake(1), 4);
        pool.push(Some(1), fake(2), 6);
        let looks = std::cell::Cell::new(0);
        let mine = |t: TaskRef| {
            looks.set(looks.get() + 1);
            t == fake(3)
        };
        let (mut rng, mut refused) = (1, HeapRefused::default());
        assert_eq!(pool.take(1, &mut rng, &mine, WAITS_IN, &mut refused), None);
        let first = looks.get();
        assert!(first >= 2, "the first search looks at every task in the heap");
        assert!(!pool.has_work(WAITS_IN, &refused), "only refused tasks: the thread may park");
        assert!(pool.has_work(WAITS_IN + 1, &refused), "another constraint has not refused them");
        assert!(pool.has_work(0, &refused), "an unconstrained thread runs any of them");
        for _ in 0..5 {
            assert_eq!(pool.take(1, &mut rng, &mine, WAITS_IN, &mut refused), None);
        }
        assert_eq!(looks.get(), first, "no search of the heaps, its own included, without a push");
        // A push (an allowed task, with a priority below the refused ones): searched again.
        pool.push(None, fake(3), 1);
        assert!(pool.has_work(WAITS_IN, &refused));
        assert_eq!(pool.take(1, &mut rng, &mine, WAITS_IN, &mut refused), Some(fake(3)));
        assert!(looks.get() > first);
        // The memo names this pool's count only: another pool with as many pushes (a team
        // resized, a nested team) is searched, whatever the anchor's address.
        let memo = refused;
        let other = TaskPool::new(2);
        // The memo was made after this pool's second push: the other pool makes two.
        for i in 0..2 {
            other.push(None, fake(10 + i), 2);
        }
        assert!(other.has_work(WAITS_IN, &memo), "a memo of another pool");
    }

    /// Each thread's prioritised tasks go to a heap of its own, which it looks at first (a
    /// waiting thread finds its own children there without the others' locks); then the
    /// others', the best task of each first. Tasks readied outside the team go to a heap of
    /// their own, which every member reaches.
    #[test]
    fn prioritised_tasks_go_to_their_creators_heap() {
        let pool = TaskPool::new(2);
        pool.push(Some(0), fake(1), 9);
        pool.push(Some(1), fake(2), 1);
        pool.push(Some(1), fake(3), 2);
        pool.push(None, fake(4), 5);
        assert_eq!((pool.prio_queued(0), pool.prio_queued(1)), (1, 2));
        let (mut rng, mut refused) = (1, HeapRefused::default());
        let any = |_: TaskRef| true;
        let order: Vec<_> = (0..5).map(|_| pool.take(1, &mut rng, &any, 0, &mut refused)).collect();
        assert_eq!(order, [Some(fake(3)), Some(fake(2)), Some(fake(4)), Some(fake(1)), None]);
        assert_eq!((pool.prio_queued(0), pool.prio_queued(1)), (0, 0));
    }

    /// A member about to sleep spills its deque to the injector; a constrained thread that
    /// does not steal (`take_unstolen`) takes from there only a task it may run, looking at each
    /// once, and leaves the others queued; it never takes from another member's deque.
    #[test]
    fn a_spilled_deque_is_found_by_those_who_may_run_its_tasks() {
        let pool = TaskPool::new(2);
        for i in 1..=3 {
            pool.push(Some(0), fake(i), 0);
        }
        pool.push(Some(1), fake(9), 0);
        pool.spill(0);
        assert_eq!(pool.own_len(0), 0);
        let mut refused = HeapRefused::default();
        let only_2 = |t: TaskRef| t == fake(2);
        assert_eq!(pool.take_unstolen(1, &only_2, WAITS_IN, &mut refused), Some(fake(2)));
        assert_eq!(pool.take_unstolen(1, &only_2, WAITS_IN, &mut refused), None);
        let only_9 = |t: TaskRef| t == fake(9);
        assert_eq!(pool.take_unstolen(0, &only_9, WAITS_IN, &mut refused), None, "taken from a victim");
        // The spilled tasks left go to whoever may run them; the victim's task stays in its
        // deque.
        let any = |_: TaskRef| true;
        let mut rest: Vec<_> = (0..3).map(|_| pool.take_unstolen(0, &any, 0, &mut refused)).collect();
        rest.sort_by_key(|t| t.map(|t| t.0 as usize));
        assert_eq!(rest, [None, Some(fake(1)), Some(fake(3))]);
        assert_eq!(pool.own_len(1), 1);
    }

    /// The address of a task a constrained thread waits in (any non-zero value).
    const WAITS_IN: usize = 0x40;
}
