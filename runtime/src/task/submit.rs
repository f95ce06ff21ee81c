//! A task's submission (`__kmpc_omp_task`, `__kmpc_omp_task_with_deps`, the start of an if(0)
//! task): the count in its parent and taskgroup, its dependences, and the cut-off that runs it
//! at once or queues it.

use super::descriptor::{self, Counted, Kind, State, TaskRef, final_bits, flags, release_ref};
use super::run::{execute, execute_part, run_at_once};
use super::{Dep, Task, deps};
use crate::sync::atomic::Ordering;
use crate::thread::Thread;

/// Ready tasks a creator may queue before it runs new ones at once.
pub(super) const CUTOFF: usize = 64;

/// Whether the cut-off is in force (`KMP_ENABLE_TASK_THROTTLING`, on by default): off, every
/// task that may be deferred is queued, however many. Read only once a queue is long, so a
/// task creation pays nothing for it. A std atomic: not part of any model.
static THROTTLING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Whether `queued` tasks reach the cut-off.
#[inline]
fn at_cutoff(queued: usize) -> bool {
    // Relaxed: written once, while the runtime starts, before any team can create a task.
    queued >= CUTOFF && THROTTLING.load(std::sync::atomic::Ordering::Relaxed)
}

/// Called once by the runtime's start with the settings' `KMP_ENABLE_TASK_THROTTLING`.
pub(crate) fn set_throttling(on: bool) {
    // Relaxed: see `at_cutoff`.
    THROTTLING.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// `__kmpc_omp_task`: [`submit`] for a task without dependences, with the common cases inline:
/// a new task without priority or detach event that the cut-off runs at once, and an untied
/// task, running here, re-submitting itself for its next part.
#[inline]
pub fn submit_task(th: Thread, t: &'static Task) -> Result<(), crate::error::Misuse> {
    // Relaxed: a new task is not shared yet; for a running untied task only `!= 0` matters,
    // and its running part keeps the count above 0 (see `submit`).
    let parts = t.rest.parts.load(Ordering::Relaxed);
    if parts == 0 && t.head.flags & flags::PRIORITY == 0 && runs_at_once(t, || may_defer(th, t)) {
        super::tool::created(t, &[], true);
        t.rest.parts.store(1, Ordering::Relaxed);
        run_at_once(th, t);
        return Ok(());
    }
    // As in `submit` (an if(0) task runs its parts nested instead).
    if parts != 0
        && std::ptr::eq(th.task_state().task(), t)
        && t.head.flags & flags::TIED == 0
        && !t.rest.if0.get()
    {
        rerun_here(th, t);
        return Ok(());
    }
    submit_queued(th, t)
}

/// [`submit_task`] beyond its common case: out of line, so that the common case keeps a
/// small frame (no dependence list).
#[cold]
#[inline(never)]
fn submit_queued(th: Thread, t: &'static Task) -> Result<(), crate::error::Misuse> {
    submit(th, t, &mut Vec::new())
}

/// `__kmpc_omp_task` / `__kmpc_omp_task_with_deps`: schedules a task (with its dependences),
/// or lets a running untied task go on with its next part. Fails, doing nothing, for a task
/// submitted again while it is queued, waits for its dependences or runs, unless it is an
/// untied task re-submitting itself from its own body. (A detachable task whose body has
/// ended but whose event is not fulfilled yet is not told from a new one: submitting it again
/// is undefined, as it is with libomp.)
pub fn submit(th: Thread, t: &'static Task, deps: &mut Vec<Dep>) -> Result<(), crate::error::Misuse> {
    // A task submitted for the first time is not shared yet (Relaxed, plain store below); a
    // running untied task re-submitting itself is the thread's current task, so its count is
    // above 0 while this part runs.
    if t.rest.parts.load(Ordering::Relaxed) != 0 {
        if t.rest.if0.get() {
            // An untied if(0) task: undeferred, every part runs here, nested, on the ICVs the
            // task has now (borrowed: `has_icvs` is false), leaving its creator's saved ICVs
            // alone.
            t.rest.parts.fetch_add(1, Ordering::AcqRel);
            execute_part(th, t, true);
            return Ok(());
        }
        if std::ptr::eq(th.task_state().task(), t) && t.head.flags & flags::TIED == 0 {
            // Clang's untied task re-submits itself at each task scheduling point in its
            // region (the first as soon as it starts), after the point's own call (taskwait,
            // taskyield) and right before it returns. Its next part goes on here, on the same
            // ICVs: queueing it would only have this thread take it back (it is the newest
            // task of its deque) after a push, a pop and a copy of the ICVs.
            rerun_here(th, t);
            return Ok(());
        }
        return Err(crate::error::Misuse::TaskSubmittedTwice);
    }
    if t.head.flags & flags::PRIORITY != 0 {
        // SAFETY: the task's own `kmp_task_t`; clang stores the priority in data2.
        let p = unsafe { (*t.kmp()).data2 } as i32;
        // The task is not shared yet (it is queued below).
        t.head.priority.set(p.clamp(0, crate::query::max_task_priority()));
    }
    let defer = may_defer(th, t);
    let at_once = runs_at_once(t, || defer) && (deps.is_empty() || siblings_done(t));
    super::tool::created(t, deps, at_once);
    // Relaxed: not shared yet; the queue hand-over publishes it.
    t.rest.parts.store(1, Ordering::Relaxed);
    if t.head.flags & flags::DETACHABLE != 0 {
        th.task_state().detach().forget(t);
    }
    if at_once {
        run_at_once(th, t);
        return Ok(());
    }
    // Queued (or waiting for its dependences): it may run on another thread, later, so it
    // takes its creator's ICVs along and holds its creator.
    t.icvs.put(th.icvs());
    descriptor::hold_ancestors(t);
    count_new(t);
    if !deps.is_empty() {
        oxiomp_instrument::task_check_deps_enter();
        let ready = register_deps(t, deps);
        oxiomp_instrument::task_check_deps_exit();
        if !ready {
            return Ok(());
        }
    }
    schedule(th, t, defer);
    Ok(())
}

/// The untied task running on this thread re-submitted itself for its next part (clang's
/// untied tasks do so at each task scheduling point, the first one as soon as they start, and
/// return at once): the part runs when the current one returns, in the same execution
/// (`call_routine` loops, `take_rerun`), not nested inside the current part's frame and
/// without a second part to count. Not for if(0) tasks: their body is called by the
/// compiler's code, which would not loop.
fn rerun_here(th: Thread, t: &'static Task) {
    th.task_state().set_rerun(t);
}

/// Runs `f` with the thread's reusable dependence buffer (empty), so that converting a
/// dependence list does not allocate once the buffer has grown.
pub fn with_dep_buffer<R>(th: Thread, f: impl FnOnce(&mut Vec<Dep>) -> R) -> R {
    let mut v = th.task_state().take_dep_buffer();
    v.clear();
    let r = f(&mut v);
    v.clear();
    th.task_state().put_dep_buffer(v);
    r
}

/// Counts a new task as a child of its parent (`created`, and for retirement, `spawned`) and
/// in its taskgroup. It is not visible to other threads yet, so Relaxed: the queue hand-over
/// publishes the counts with the task. Its parent runs on this thread: only this thread
/// writes the parent's counters.
fn count_new(t: &Task) {
    t.rest.counted.set(Counted::Full);
    // SAFETY: the parent is alive (the task holds a reference on it, or it is implicit).
    let parent = unsafe { &*t.head.parent };
    descriptor::bump(&parent.rest.created, 1);
    descriptor::bump(&parent.rest.spawned, 1);
    // SAFETY: a taskgroup outlives the tasks generated in it.
    if let Some(g) = unsafe { t.head.group.as_ref() } {
        g.count.fetch_add(1, Ordering::Relaxed);
    }
}

/// Enters `t` in its parent's dependence map; true if it is ready now.
fn register_deps(t: &Task, deps: &mut Vec<Dep>) -> bool {
    deps::merge(deps);
    // SAFETY: the parent is the task running on this thread (it generates `t`), alive.
    let parent = unsafe { &*t.head.parent };
    // SAFETY: only the task running on this thread touches its child map, and no other
    // reference to the map lives across this call.
    let map = unsafe { &mut *parent.rest.child_deps.get() }.get_or_insert_with(Default::default);
    let mutexes = map.register(t, deps);
    if !mutexes.is_empty() {
        // SAFETY: the task is not queued yet.
        unsafe { *t.rest.mutexes.get() = Some(mutexes.into_boxed_slice()) };
    }
    deps::finish_registration(t)
}

/// Whether a new task like `t` should be queued rather than run at once (the cut-off: the
/// creator's deque holds `CUTOFF` tasks, or for a prioritised task its heap).
#[inline]
pub(crate) fn may_defer(th: Thread, t: &Task) -> bool {
    let team = th.team();
    !(std::ptr::eq(team, t.head.team)
        && (t.head.is_final & final_bits::INCLUDED != 0
            || team.nthreads == 1
            || if t.head.priority.get() == 0 {
                at_cutoff(team.tasks().own_len(th.tid()))
            } else {
                prio_cut_off(th)
            }))
}

/// The cut-off for a prioritised task: its creator's heap holds `CUTOFF` tasks (as for its
/// deque).
#[cold]
fn prio_cut_off(th: Thread) -> bool {
    at_cutoff(th.team().tasks().prio_queued(th.tid()))
}

/// Whether every sibling generated before the new task `t` has completed. Dependences hold
/// only between siblings, so all of `t`'s are satisfied then; and a task that runs at once
/// (not detachable) completes before its creator generates the next sibling, so it need not
/// enter the dependence map either: no later sibling can find it incomplete. (A team of one
/// thread or a final task runs every child at once: a dependence chain there costs what
/// plain tasks cost.)
#[inline]
fn siblings_done(t: &Task) -> bool {
    // SAFETY: the parent is the task generating `t` on this thread, alive while it runs.
    // Acquire (`children_done`): the completed siblings' writes happen-before `t`'s body.
    unsafe { &*t.head.parent }.children_done()
}

/// Whether a new task without dependences runs right here, given the cut-off's answer
/// (`defer`, [`may_defer`], asked only for a task that is not detachable); a detachable one is
/// always counted as a child (its event may complete it later, elsewhere).
#[inline]
fn runs_at_once(t: &Task, defer: impl FnOnce() -> bool) -> bool {
    t.head.flags & flags::DETACHABLE == 0 && !defer()
}

/// Runs a ready task now (`defer` false: the cut-off) or queues it on the calling thread's
/// deque.
fn schedule(th: Thread, t: &'static Task, defer: bool) {
    let team = th.team();
    let pool = team.tasks();
    let tid = th.tid();
    if !defer {
        execute(th, t);
    } else {
        oxiomp_instrument::task_scheduling_enter();
        t.head.state.store(State::Queued as u32, Ordering::Relaxed);
        super::tool::queued(t);
        super::steer::reprioritise(t);
        if std::ptr::eq(team, t.head.team) {
            pool.push(Some(tid), TaskRef(t), t.head.priority.get());
        } else {
            t.team().tasks().push(None, TaskRef(t), t.head.priority.get());
        }
        oxiomp_instrument::task_scheduling_exit();
    }
}

// `Task::state` is written with Relaxed stores throughout: it is a label for debuggers and
// checks, never used to synchronise.

/// A task whose dependences are satisfied (called by whoever released the last one).
pub(crate) fn make_ready(t: &'static Task) {
    match t.head.kind {
        Kind::Waiter => {
            t.team().tasks().notify_all();
            release_ref(t);
        }
        _ => {
            t.head.state.store(State::Queued as u32, Ordering::Relaxed);
            super::tool::queued(t);
            super::steer::reprioritise(t);
            let pool = t.team().tasks();
            match Thread::peek() {
                // Onto this thread's deque only a task its scheduling constraint lets it start:
                // a waiting thread stops at the first task on top of its deque it may not
                // start (README §6). A successor of a task that completed here for another
                // reason (its event fulfilled by a descendant of the anchor) goes where any
                // member takes it: on top of the deque it hid the anchor's descendants below
                // it from this thread, for ever in a team of one.
                Some(th) if std::ptr::eq(th.team(), t.head.team) && may_start_here(th, t) => {
                    pool.push(Some(th.tid()), TaskRef(t), t.head.priority.get())
                }
                _ => pool.push(None, TaskRef(t), t.head.priority.get()),
            }
        }
    }
}

/// Whether a task `t` made ready on `th` may go on top of its deque: a thread that waits in a
/// task stops at the first task on top of its deque it may not start (README §6), so what is
/// pushed there must descend from the task it runs, which may wait later (while the thread
/// waits in a task, the task it runs is that one or a descendant of it); but for an implicit
/// task waiting in a barrier, which takes any task until all have completed.
fn may_start_here(th: Thread, t: &Task) -> bool {
    let ts = th.task_state();
    // SAFETY: the current task runs on this thread, alive.
    match unsafe { ts.task().as_ref() } {
        Some(c) if !(c.head.kind == descriptor::Kind::Implicit && ts.at_barrier()) => t.descends_from(c),
        _ => true,
    }
}

/// `__kmpc_omp_task_begin_if0`: the encountering thread runs `kt` now.
#[inline(always)]
pub fn begin_if0(th: Thread, t: &'static Task) {
    // Not counted unless it ends with children left (`Counted::Lazy`): it completes before
    // the encountering task goes on; a detachable one may complete later, on another thread,
    // and is counted as a child.
    if t.head.flags & flags::DETACHABLE != 0 {
        descriptor::hold_ancestors(t);
        count_new(t);
        enter_detached_if0(th, t);
    }
    // Not shared yet and never scheduled (parts was 0): a plain store, no locked RMW.
    t.rest.parts.store(1, Ordering::Relaxed);
    t.head.state.store(State::Running as u32, Ordering::Relaxed);
    // The body runs on the generating task's ICVs; what it changes is undone at its end
    // (`complete_if0`): the first change saves them in the task's slot.
    let ts = th.task_state();
    t.rest.outer_save.set(ts.replace_icv_save(&t.icvs));
    t.rest.if0.set(true);
    super::tool::created(t, &[], false);
    let prev = ts.replace_task(t);
    super::tool::switched(prev, t, false);
    oxiomp_instrument::task_begin(oxiomp_instrument::State::TaskRunningIf0, t.head.trace_id);
}

/// A detachable if(0) task begins: it holds the dependences of the wait before it (if any) in
/// the dependence map until it completes (see [`PendingDetach`]).
#[cold]
#[inline(never)]
fn enter_detached_if0(th: Thread, t: &'static Task) {
    let Some(mut deps) = th.task_state().detach().begin(t) else {
        return;
    };
    // Ready at once: the wait just returned, and the generating task made no sibling since,
    // so every predecessor the map holds for these dependences has completed.
    let ready = register_deps(t, &mut deps);
    debug_assert!(ready, "a detachable if(0) task waited for its dependences already");
    th.task_state().detach().restore(deps);
}
