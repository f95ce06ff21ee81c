//! A task's end: its last part, its detach event, its destructors, the release of its
//! successors, the counts its parent, taskgroup and barrier wait on, and its block's return to
//! the thread's cache.

use std::ffi::c_void;

use super::descriptor::{
    self, Counted, EVENT_BODY_DONE, EVENT_FULFILLED, Kind, Routine, State, flags, release_ref,
};
use super::group::TaskGroup;
use super::pool::Ended;
use super::submit::make_ready;
use super::{Task, deps};
use crate::sync::atomic::Ordering;
use crate::sync::retire;
use crate::thread::Thread;

/// One execution of `t` ended: complete it if it was the last part.
pub(super) fn finish_part(t: &'static Task, th: Option<Thread>) {
    // One part outstanding: ours, and only the running task could add another (it has
    // returned), so no read-modify-write is needed. Otherwise AcqRel: the completing thread
    // sees what every part did.
    if t.rest.parts.load(Ordering::Acquire) == 1 {
        t.rest.parts.store(0, Ordering::Relaxed);
        complete(t, th);
    } else if t.rest.parts.fetch_sub(1, Ordering::AcqRel) == 1 {
        complete(t, th);
    }
}

/// The body of `t` is done: complete it, unless it waits for its detach event.
fn complete(t: &'static Task, th: Option<Thread>) {
    if t.head.flags & flags::DETACHABLE != 0 && !detached_body_done(t, th) {
        return;
    }
    finish(t, th);
}

/// The body of detachable task `t` is done: whether its event was fulfilled already (then it
/// completes now).
#[cold]
#[inline(never)]
fn detached_body_done(t: &'static Task, th: Option<Thread>) -> bool {
    // AcqRel: pairs with `fulfill_event`.
    let prev = t.rest.event.fetch_or(EVENT_BODY_DONE, Ordering::AcqRel);
    let fulfilled = prev & EVENT_FULFILLED != 0;
    super::tool::detach_body_done(t, fulfilled, th.map_or(std::ptr::null(), |th| th.task_state().task()));
    fulfilled
}

/// Completes `t`: destructors, dependences, counts, then its own reference.
fn finish(t: &'static Task, th: Option<Thread>) {
    run_destructors(t);
    t.head.state.store(State::Complete as u32, Ordering::Relaxed);
    // No more children can be generated: the map's references go.
    // SAFETY: the task's body has ended; only its completion touches the map now.
    drop(unsafe { (*t.rest.child_deps.get()).take() });
    if t.rest.dep_tracked.load(Ordering::Relaxed) {
        oxiomp_instrument::task_releasing_deps_enter();
        deps::release_successors(t, &mut |s| make_ready(s));
        oxiomp_instrument::task_releasing_deps_exit();
    }
    uncount(t);
    descriptor::release_ref_from(t, th.map(|th| th.desc().task_cache()));
}

/// `__kmpc_omp_task_complete_if0`: the undeferred task's body has returned.
#[inline]
pub fn complete_if0(th: Thread, t: &'static Task) {
    oxiomp_instrument::task_finish(oxiomp_instrument::State::TaskRunningIf0, t.head.trace_id);
    let ts = th.task_state();
    ts.replace_task(t.head.parent);
    super::tool::body_done(t, t.head.parent);
    // The undeferred task ran in the generating task's context: what it set dies with it.
    ts.replace_icv_save(t.rest.outer_save.get());
    if let Some(i) = t.icvs.take() {
        th.replace_icvs(i);
    }
    // Its if(0) fields back at rest (nothing reads them once the body has returned).
    t.rest.if0.set(false);
    t.rest.outer_save.set(std::ptr::null());
    if !retire_quietly(th, t) {
        finish_part(t, Some(th));
    }
}

/// Ends a task its creator ran at once (the cut-off or if(0)) in the common case where nothing
/// but this thread ever saw it: every task it generated, if any, ran at once and retired
/// quietly too (its `spawned` is 0; nothing made it hold its parent), it has no destructors
/// and is not detachable. Then nobody else holds a reference (`refs` is 1), nothing
/// registered it in a dependence map, and its fields own nothing (no child map, no
/// mutexinoutset locks, no successors), it was never counted (`Counted::Lazy`), and its block
/// goes straight back to the cache. Returns false, doing nothing, when the full completion is
/// needed.
#[inline]
pub(super) fn retire_quietly(th: Thread, t: &'static Task) -> bool {
    // Relaxed loads: all these are written only by this thread (the task ran here, was never
    // queued, and nothing else references it while `spawned` is 0).
    if t.head.flags & (flags::DETACHABLE | flags::DESTRUCTORS) != 0
        || t.rest.spawned.load(Ordering::Relaxed) != 0
        || t.rest.parent_ref.get()
        || t.rest.counted.get() != Counted::Lazy
        || t.rest.parts.load(Ordering::Relaxed) != 1
    {
        return false;
    }
    debug_assert_eq!(t.rest.refs.load(Ordering::Relaxed), 1);
    debug_assert!(!t.rest.dep_tracked.load(Ordering::Relaxed));
    // No `Complete` state: the block is freed at once, and nothing can look at it.
    // SAFETY: as said above, this thread holds the only reference, and drops it here.
    unsafe { descriptor::free_unshared(t, th.desc().task_cache()) };
    true
}

/// Runs the destructors thunk of `t`'s privates, if the compiler gave one.
pub(super) fn run_destructors(t: &Task) {
    let kt = t.kmp();
    if t.head.flags & flags::DESTRUCTORS != 0 {
        // SAFETY: clang stores its destructors thunk in data1 when it sets the flag; the thunk
        // takes (gtid, task).
        unsafe {
            let f: Routine = std::mem::transmute::<usize, Routine>((*kt).data1);
            f(Thread::peek().map_or(0, |th| th.gtid()), kt);
        }
    }
}

/// Finishes a task that never runs and was never counted (a taskloop pattern).
pub(crate) fn discard(t: &'static Task) {
    run_destructors(t);
    release_ref(t);
}

/// The decrements matching `count_new`, SeqCst so that a waiter parked on the count is woken
/// (see `pool`): the taskgroup's count, the parent's completed children, then retirement.
/// (A task that was not counted, `Counted::Lazy`, is counted here if it must retire.)
/// The team may be reused once the root's last child retired (but for the wake-up, which the
/// team's end waits for: see `Team::finish_tasks`).
pub(super) fn uncount(t: &Task) {
    let team = t.team();
    if team.runs_hidden_tasks() {
        return uncount_hidden(t, team);
    }
    let ended = drop_counts(t);
    if ended.any() {
        team.tasks().notify_ended(ended);
    }
}

/// [`uncount`] for a task the hidden helpers run (a hidden task, or a descendant of one): its
/// counts may end a wait in the team the hidden task came from (its creator's `taskwait`, a
/// taskgroup, a barrier, the region's end), whose threads park on their own team's pool. That
/// team is alive while the task is counted, and this thread holds it as an outside thread
/// (`enter_foreign`) until the wake-up is done, as `fulfill_event` does.
#[cold]
#[inline(never)]
fn uncount_hidden(t: &Task, team: &crate::team::Team) {
    let origin = origin_team(t).tasks();
    origin.enter_foreign();
    if drop_counts(t).any() {
        team.tasks().notify_all();
        origin.notify_all();
    }
    origin.leave_foreign();
}

/// The team a task of the hidden helpers comes from: that of its nearest ancestor the helpers
/// do not run. Its ancestors are alive: each task holds its parent while it is counted.
fn origin_team(t: &Task) -> &crate::team::Team {
    let mut n = t;
    // SAFETY: see above; an explicit task's parent is never null.
    while let Some(p) = unsafe { n.head.parent.as_ref() } {
        if !p.team().runs_hidden_tasks() {
            return p.team();
        }
        n = p;
    }
    n.team()
}

/// Takes `t`'s counts back (see [`uncount`]): what reached 0, so that its waiters are woken.
fn drop_counts(t: &Task) -> Ended {
    match t.rest.counted.get() {
        Counted::Lazy => return tree_only(uncount_lazy(t)),
        Counted::Retire => return tree_only(uncount_undeferred(t)),
        Counted::Full => {}
    }
    let mut ended = Ended::default();
    // SAFETY: a taskgroup outlives its tasks; after the decrement we use only its address.
    if let Some(g) = unsafe { t.head.group.as_ref() }
        && g.count.fetch_sub(1, Ordering::SeqCst) == 1
    {
        ended.group = g as *const TaskGroup as usize;
    }
    // SAFETY: our reference keeps an explicit parent alive; implicit ones live in the team.
    let parent = unsafe { &*t.head.parent };
    // SeqCst (an AcqRel chain): the last completer has synchronised with every earlier one,
    // each of which saw `created` as of its own child's creation, so it sees the final
    // `created` when the parent waits (see README.md).
    let done = parent.rest.completed.fetch_add(1, Ordering::SeqCst).wrapping_add(1);
    if done == parent.rest.created.load(Ordering::Relaxed) {
        ended.children_of = parent as *const Task as usize;
    }
    // The task's subtree is done if it never had children (none can come now), or when the
    // last one retires (`sync/retire.rs` arbitrates between us and that child).
    if retire::self_done(t) {
        ended.tree = retire::retire(t);
    }
    ended
}

fn tree_only(tree: bool) -> Ended {
    Ended { tree, ..Ended::default() }
}

/// The end of an undeferred task: without children, its count is simply taken back (the
/// parent is suspended on this thread); otherwise it retires like any task. True if its
/// retirement ended a root's tree.
fn uncount_undeferred(t: &Task) -> bool {
    if t.rest.spawned.load(Ordering::Relaxed) == 0 {
        // SAFETY: as in `begin_in_place`: the parent is suspended beneath the task here.
        descriptor::bump(&unsafe { &*t.head.parent }.rest.spawned, u32::MAX);
        return false;
    }
    retire_undeferred(t)
}

/// The end of a task that was not counted (`Counted::Lazy`: run at once or if(0), ending on
/// its creator's thread): without children nothing was counted and nothing is; otherwise it
/// is counted for retirement in its parent now (which is suspended on this thread: its
/// `spawned` is ours to write, and it cannot have completed or waited for its tree since the
/// task began) and retires like any task. A block that never ran has no children. True if
/// its retirement ended a root's tree.
fn uncount_lazy(t: &Task) -> bool {
    if t.rest.spawned.load(Ordering::Relaxed) == 0 {
        return false;
    }
    // SAFETY: as said above, the parent is alive beneath this task.
    descriptor::bump(&unsafe { &*t.head.parent }.rest.spawned, 1);
    t.rest.counted.set(Counted::Retire);
    retire_undeferred(t)
}

/// An undeferred task with children has completed: it retires once they have. True if that
/// ended a root's tree.
fn retire_undeferred(t: &Task) -> bool {
    retire::self_done(t) && retire::retire(t)
}

/// The event handle of a detachable task.
pub fn completion_event(t: &Task) -> *mut c_void {
    t as *const Task as *mut c_void
}

/// `__kmpc_task_allow_completion_event`: the event handle of a detachable task. Until the
/// task is submitted or begun (if(0)), the thread remembers it: for `task if(0) detach(e)
/// depend(...)` clang emits a `taskwait depend(...)` between the two, and those are the
/// dependences the task must hold until its event is fulfilled (see [`PendingDetach`]).
pub fn allow_completion_event(th: Thread, t: &Task) -> *mut c_void {
    th.task_state().detach().given_event(t);
    completion_event(t)
}

/// `omp_fulfill_event`: completes the event of `t` (the task an event handle names: see
/// [`Task::from_event`]); the task completes once its body has finished too. Returns an error
/// for a task that is not detachable, or whose event was fulfilled before.
pub fn fulfill_event(t: &'static Task) -> Result<(), crate::error::Misuse> {
    if t.head.kind != Kind::Explicit || t.head.flags & flags::DETACHABLE == 0 {
        return Err(crate::error::Misuse::NotAnEvent);
    }
    let pool = t.team().tasks();
    pool.enter_foreign();
    // AcqRel: whoever sees both bits completes the task and must see the other side's writes.
    let prev = t.rest.event.fetch_or(EVENT_FULFILLED, Ordering::AcqRel);
    let r = if prev & EVENT_FULFILLED != 0 {
        Err(crate::error::Misuse::EventFulfilledTwice)
    } else {
        let body_done = prev & EVENT_BODY_DONE != 0;
        super::tool::fulfilled(t, !body_done);
        if body_done {
            finish(t, None);
        }
        Ok(())
    };
    pool.leave_foreign();
    r
}
