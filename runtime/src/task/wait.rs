//! Waiting in a task: `taskwait`, `taskyield`, taskgroups (and their cancellation), `taskwait
//! depend(...)`, and the task running a waiting thread does meanwhile, under the scheduling
//! constraint (README §6), at barriers without it.

use super::pool::Park;
use super::run::execute;
use super::*;
use crate::sync::wait::{HANDOVER_NS, Spin, YieldGap};
use oxiomp_instrument::{SyncPoint, ToolEvent, sync_kind};
use std::time::Duration;

/// Runs one ready task of the current team, if the scheduling constraint allows one.
pub fn run_one(th: Thread) -> bool {
    match find(th, true) {
        // SAFETY: a queued task stays alive until it completes.
        Some(r) => execute(th, unsafe { &*r.0 }),
        None => false,
    }
}

/// Takes a ready task of the current team that the scheduling constraint allows, stealing
/// from the other members' deques only with `steal` (`TaskPool::take_unstolen`).
#[inline]
fn find(th: Thread, steal: bool) -> Option<TaskRef> {
    let ts = th.task_state();
    let anchor = ts.tsc();
    let pool = th.team().tasks();
    let allowed = |r: TaskRef| {
        // SAFETY: queued tasks are alive.
        let c = unsafe { &*r.0 };
        // Untied tasks too: a frame blocked on this thread's stack cannot move (README §6).
        // SAFETY: the anchor is null or a task suspended on this thread, alive.
        unsafe { anchor.as_ref() }.is_none_or(|a| c.descends_from(a))
    };
    let (mut rng, mut refused) = ts.search();
    let got = if steal {
        pool.take(th.tid(), &mut rng, &allowed, anchor as usize, &mut refused)
    } else {
        pool.take_unstolen(th.tid(), &allowed, anchor as usize, &mut refused)
    };
    ts.end_search(rng, refused);
    got
}

/// Waits until `cond` holds, running tasks of the current team meanwhile; spins, yields, then
/// parks on the pool under `key` (what ends the wait: `pool::Ended`, README.md §4).
pub(crate) fn wait_until(th: Thread, key: usize, cond: &dyn Fn() -> bool) {
    let pool = th.team().tasks();
    let mut start: Option<Instant> = None;
    let mut polls = 0u32;
    let mut yields = YieldGap::<1, 32>::new();
    loop {
        if cond() {
            return;
        }
        // Copies: `cond` may change the thread's state.
        let anchor = th.task_state().tsc();
        if !anchor.is_null() && pool.alone() {
            wait_alone(th, key, anchor, cond);
            continue;
        }
        if run_one(th) {
            start = None;
            polls = 0;
            continue;
        }
        if cond() {
            return;
        }
        // A few polls spinning, then a pause between polls (every poll looks at the other
        // members' deques: polling them faster slows their owners' pushes): a yield when the
        // runtime has more busy threads than CPUs, else a yield when `yields` says (every
        // poll, further apart while nobody takes the CPU) and a round of spin hints between.
        polls = polls.wrapping_add(1);
        let oversubscribed = WaitPolicy::oversubscribed();
        if polls < 64 && !oversubscribed {
            std::hint::spin_loop();
            continue;
        }
        let now = if oversubscribed {
            std::thread::yield_now();
            Instant::now()
        } else if yields.due(polls) {
            yields.yield_now()
        } else {
            for _ in 0..Spin::POLLS {
                std::hint::spin_loop();
            }
            continue;
        };
        // The tasks waited for are running or queued: like a hand-over (`sync::wait::Spin`),
        // polled for at least HANDOVER_NS whatever the block time.
        let block = WaitPolicy::block_time().max(Duration::from_nanos(HANDOVER_NS));
        if now - *start.get_or_insert(now) < block {
            continue;
        }
        let refused = th.task_state().heap_refused();
        pool.park(th.tid(), key, Park { cond, anchor: anchor as usize, refused: &refused });
        start = None;
    }
}

/// One round of a wait in task `anchor` in an oversubscribed team: runs a task it may run
/// if it finds one (as any waiter does: one steal at most), else sleeps until what it waits for
/// ends or a task it may run is queued where it looks after announcing itself (its own deque,
/// the heaps, the injector: not the other members' deques). The tasks it waits for run on
/// other threads, which need the CPU more than it needs to poll them (yielding in a loop hands
/// the CPU to the next waiter, which polls in turn). Before it sleeps it spills its own deque,
/// whose tasks it may not run now, to the injector: a sleeping thread holds no queued task
/// (README.md §4).
#[cold]
fn wait_alone(th: Thread, key: usize, anchor: *const Task, cond: &dyn Fn() -> bool) {
    let pool = th.team().tasks();
    if let Some(r) = find(th, true) {
        // SAFETY: a queued task stays alive until it completes.
        execute(th, unsafe { &*r.0 });
        return;
    }
    pool.spill(th.tid());
    let a = pool.announce(th.tid(), key, anchor);
    if cond() {
        return pool.leave(a);
    }
    match find(th, false) {
        Some(r) => {
            pool.leave(a);
            // SAFETY: as above.
            execute(th, unsafe { &*r.0 });
        }
        None => pool.sleep(a),
    }
}

/// The life of a hidden helper thread (see `hidden`), on its team: runs the team's tasks, with
/// no scheduling constraint, and parks on the pool when there are none; never returns. It
/// does not wait out the block time first: spinning helpers would take CPUs from the
/// program's teams, and a hidden task only waits for the wake-up.
pub(crate) fn serve_hidden(th: Thread) {
    let ts = th.task_state();
    ts.replace_tsc(std::ptr::null());
    ts.replace_at_barrier(true);
    let pool = th.team().tasks();
    let mut idle = 0u32;
    loop {
        if run_one(th) {
            idle = 0;
            continue;
        }
        idle += 1;
        if idle < 16 {
            std::thread::yield_now();
            continue;
        }
        let refused = ts.heap_refused();
        pool.park(th.tid(), 0, Park { cond: &|| false, anchor: 0, refused: &refused });
        idle = 0;
    }
}

/// Runs `f` with the scheduling constraint anchored at the current task, tied or untied
/// (README §6: a waiting untied task's frame cannot leave this thread either).
fn constrained<R>(th: Thread, f: impl FnOnce() -> R) -> R {
    let ts = th.task_state();
    let prev = ts.replace_tsc(ts.task());
    let r = f();
    ts.replace_tsc(prev);
    r
}

/// `taskwait`: waits for the current task's children.
pub fn taskwait(th: Thread) {
    let t = current(th);
    if t.children_done() {
        return sync_tool(sync_kind::TASKWAIT, SyncPoint::Whole);
    }
    oxiomp_instrument::taskwait_enter();
    sync_tool(sync_kind::TASKWAIT, SyncPoint::BeginWait);
    constrained(th, || wait_until(th, t as *const Task as usize, &|| t.children_done()));
    sync_tool(sync_kind::TASKWAIT, SyncPoint::WaitDoneEnd);
    oxiomp_instrument::taskwait_exit();
}

/// Tells a tool that a synchronisation region of `kind` of the current task reaches `point`.
#[inline(always)]
fn sync_tool(kind: u32, point: SyncPoint) {
    oxiomp_instrument::tool(|| ToolEvent::Sync { kind, point });
}

/// `taskyield`: may run another task.
pub fn taskyield(th: Thread) {
    oxiomp_instrument::taskyield_enter();
    let ts = th.task_state();
    ts.set_yielding(true);
    constrained(th, || run_one(th));
    ts.set_yielding(false);
    oxiomp_instrument::taskyield_exit();
}

/// Waits until every task descending from the given implicit tasks of the current team has
/// completed, running tasks meanwhile (barriers: the thread's own implicit task; the region's
/// end: all of them). Once an implicit task waits here it creates no tasks and runs none of
/// its own at once (a task run at once is counted only at its end, `Counted::Lazy`, so while
/// one runs its root's count may read 0: but then the root's own thread is busy in it, and
/// the region's end drains only after every member arrived); a queued task of its root only
/// runs while the count is above 0, so a count seen at 0 here stays 0.
pub fn drain<'a>(th: Thread, roots: impl Iterator<Item = &'a Task> + Clone) {
    let done = || roots.clone().all(|r| r.descendants_done());
    if done() {
        return;
    }
    oxiomp_instrument::barrier_task_enter();
    at_barrier(th, || wait_until(th, 0, &done));
    oxiomp_instrument::barrier_task_exit();
}

/// A waiting thread's helper at barriers: runs one task with no constraint.
pub fn help_barrier(th: Thread) -> bool {
    at_barrier(th, || run_one(th))
}

/// A member waiting in its team's barrier: runs the team's tasks ([`help_barrier`]) and parks
/// on the team's task pool rather than on the barrier's flag, so that a task pushed while it
/// sleeps wakes it (asleep on the flag, it would run none of the team's tasks until the
/// barrier completes: with a short block time, tasks created after the other members went to
/// sleep would all run on their creator's thread). The barrier's flags notify the pool while
/// a member is parked there (`Barrier`'s `Counted`).
pub(crate) struct BarrierHelp {
    th: Thread,
}

impl BarrierHelp {
    pub(crate) fn new(th: Thread) -> Self {
        BarrierHelp { th }
    }
}

impl crate::sync::wait::Helper for BarrierHelp {
    #[inline]
    fn help(&mut self) -> bool {
        help_barrier(self.th)
    }

    fn park(&mut self, ready: &dyn Fn() -> bool) -> bool {
        let team = self.th.team();
        let refused = self.th.task_state().heap_refused();
        // Anchor 0: at a barrier every task is allowed (`at_barrier`). Key 0: woken by the
        // barrier's flags (`published`) and by new tasks.
        let wait = Park { cond: ready, anchor: 0, refused: &refused };
        team.tasks().park(self.th.tid(), 0, wait);
        true
    }

    #[inline]
    fn published(&self) {
        self.th.team().tasks().notify_barrier_fenced();
    }
}

/// Runs `f` as the thread's implicit task waiting in a barrier: no scheduling constraint.
fn at_barrier<R>(th: Thread, f: impl FnOnce() -> R) -> R {
    let ts = th.task_state();
    let prev = (ts.replace_tsc(std::ptr::null()), ts.replace_at_barrier(true));
    let r = f();
    ts.replace_tsc(prev.0);
    ts.replace_at_barrier(prev.1);
    r
}

/// `__kmpc_taskgroup`: opens a taskgroup in the current task.
pub fn taskgroup_begin(th: Thread) {
    let t = current(th);
    let g = Box::new(TaskGroup::new(t.head.cur_group.get()));
    t.head.cur_group.set(Box::into_raw(g));
    sync_tool(sync_kind::TASKGROUP, SyncPoint::Begin);
}

/// `__kmpc_end_taskgroup`: waits for every task generated in the innermost taskgroup, then
/// finishes its reductions.
pub fn taskgroup_end(th: Thread) {
    let t = current(th);
    let gp = t.head.cur_group.get();
    // SAFETY: the group was opened by this task and is still open.
    let Some(g) = (unsafe { gp.as_ref() }) else {
        return;
    };
    oxiomp_instrument::taskgroup_enter();
    sync_tool(sync_kind::TASKGROUP, SyncPoint::Wait);
    // Acquire: pairs with the completions' SeqCst decrements (their effects are visible).
    if g.count.load(Ordering::Acquire) != 0 {
        constrained(th, || wait_until(th, gp as usize, &|| g.count.load(Ordering::Acquire) == 0));
    }
    // Before the reductions combine: a tool then knows the tasks' partial results complete.
    sync_tool(sync_kind::TASKGROUP, SyncPoint::WaitDoneEnd);
    t.head.cur_group.set(g.parent);
    // SAFETY: created by `taskgroup_begin` with Box::into_raw; no task refers to it any more.
    let g = unsafe { Box::from_raw(gp as *mut TaskGroup) };
    if let Some(r) = g.reduction {
        r.finish();
    }
    oxiomp_instrument::taskgroup_exit();
}

/// `cancel taskgroup`: cancels the innermost taskgroup of the current task.
pub fn cancel_taskgroup(th: Thread) -> bool {
    // SAFETY: the current task's groups are open and alive.
    match unsafe { current(th).head.cur_group.get().as_ref() } {
        Some(g) => {
            g.cancelled.store(1, Ordering::Relaxed); // Relaxed: a request polled by others.
            true
        }
        None => false,
    }
}

/// Whether the innermost taskgroup of the current task was cancelled.
pub fn taskgroup_cancelled(th: Thread) -> bool {
    // SAFETY: as in `cancel_taskgroup`.
    unsafe { current(th).head.cur_group.get().as_ref() }.is_some_and(|g| g.is_cancelled())
}

/// `taskwait depend(...)` (and `task if(0) depend(...)`): waits for the sibling tasks the
/// dependences name. A tool is told of the wait as of a task of its own with these
/// dependences, complete when they are satisfied (as libomp tells it).
pub fn wait_deps(th: Thread, deps: &mut Vec<Dep>) {
    th.task_state().detach().wait(deps);
    let word = crate::tool::ToolData::new();
    let data = word.as_ptr() as usize;
    oxiomp_instrument::tool(|| ToolEvent::TaskwaitDeps {
        data,
        list: deps.as_ptr() as usize,
        n: deps.len() as u32,
    });
    wait_deps_quietly(th, deps);
    oxiomp_instrument::tool(|| ToolEvent::TaskwaitDepsDone { data });
}

/// [`wait_deps`] but for the tool's events.
fn wait_deps_quietly(th: Thread, deps: &mut Vec<Dep>) {
    let t = current(th);
    // SAFETY: only the task running on this thread touches its child map.
    let Some(map) = (unsafe { &*t.rest.child_deps.get() }).as_deref() else { return };
    // Every child complete: every dependence is satisfied (Acquire: their writes are seen).
    if t.children_done() {
        return;
    }
    oxiomp_instrument::taskwait_deps_enter();
    deps::merge(deps);
    let w = descriptor::alloc_node(Kind::Waiter, t.head.team);
    // Two references: ours, and the one `make_ready` drops.
    w.rest.refs.fetch_add(1, Ordering::Relaxed);
    map.watch(w, deps);
    if !deps::finish_registration(w) {
        // Key 0: a waiter readied wakes every parked thread (`make_ready`).
        constrained(th, || wait_until(th, 0, &|| w.rest.dep.is_ready()));
    } else {
        release_ref(w);
    }
    release_ref(w);
    oxiomp_instrument::taskwait_deps_exit();
}
