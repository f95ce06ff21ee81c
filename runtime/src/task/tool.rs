//! What a tool interface (OMPT) is told of explicit tasks: their creation and dependences, and
//! each switch of a thread from one task to another (`ToolEvent`s; tasks are named by their
//! descriptors' addresses). Each function is one instrumentation point: a load of the cached
//! tracing flag while nothing listens.

use oxiomp_instrument::{ChunkOf, ToolEvent, cancel_flags, task_flags, task_status};

use super::descriptor::{Counted, KmpTaskloop, State, final_bits, flags};
use super::{Dep, Task};
use crate::sync::atomic::Ordering;

/// Task `t` is generated (submitted for the first time), with dependences `deps`; its
/// creator runs it at once if `at_once`.
#[inline(always)]
pub(super) fn created(t: &Task, deps: &[Dep], at_once: bool) {
    if oxiomp_instrument::enabled() {
        tell_created(t, deps, at_once);
    }
}

#[cold]
#[inline(never)]
fn tell_created(t: &Task, deps: &[Dep], at_once: bool) {
    let task = t as *const Task as usize;
    let undeferred = if at_once { task_flags::UNDEFERRED } else { 0 };
    oxiomp_instrument::tool(|| ToolEvent::TaskCreate {
        task,
        flags: flags_of(t) | undeferred,
        has_deps: !deps.is_empty(),
    });
    if !deps.is_empty() {
        oxiomp_instrument::tool(|| ToolEvent::Dependences {
            task,
            list: deps.as_ptr() as usize,
            n: deps.len() as u32,
        });
    }
}

/// Task `t`, ready, is about to be queued (before the push: no member can start it sooner).
#[inline(always)]
pub(super) fn queued(t: &Task) {
    oxiomp_instrument::tool(|| ToolEvent::TaskQueued { task: t as *const Task as usize });
}

/// OMPT's flags (`ompt_task_flag_t`) of explicit task `t`.
pub fn flags_of(t: &Task) -> u32 {
    let mut f = task_flags::EXPLICIT;
    if t.head.flags & flags::TIED == 0 {
        f |= task_flags::UNTIED;
    }
    if t.head.is_final & final_bits::FINAL != 0 {
        f |= task_flags::FINAL;
    }
    // Run at once by its creator (if(0), included, or not deferred by the runtime: a task
    // that runs and was never counted in its parent).
    // Relaxed: the state of the calling thread's own task, or of one suspended beneath it.
    let running = t.head.state.load(Ordering::Relaxed) == State::Running as u32;
    let at_once = running && t.rest.counted.get() == Counted::Lazy;
    if t.rest.if0.get() || t.head.is_final & final_bits::INCLUDED != 0 || at_once {
        f |= task_flags::UNDEFERRED;
    }
    f
}

/// The calling thread leaves task `prior` for `next` (`status`).
#[inline(always)]
fn schedule(prior: *const Task, status: u32, next: *const Task) {
    oxiomp_instrument::tool(|| ToolEvent::TaskSchedule {
        prior: prior as usize,
        status,
        next: next as usize,
    });
}

/// Task `t`, just switched to, starts: a taskloop chunk tells its iterations (from the bounds
/// clang keeps in its header).
#[inline(always)]
pub(super) fn started(t: &Task) {
    if t.head.flags & flags::TASKLOOP_CHUNK != 0 {
        // SAFETY: the flag is set only on chunks laid out as `KmpTaskloop`; the thread is
        // about to run the chunk, whose bounds nobody writes any more.
        let (lb, ub, st) = unsafe {
            let kt = t.kmp() as *const KmpTaskloop;
            ((*kt).lb, (*kt).ub, (*kt).st)
        };
        oxiomp_instrument::tool(|| ToolEvent::Chunk {
            start: lb,
            iterations: super::taskloop::trip_count(lb, ub, st),
            of: ChunkOf::Taskloop,
        });
    }
}

/// The calling thread suspends `prev` to run `t` (nothing when `t` goes on running: the
/// nested later part of an untied if(0) task), in a `taskyield` of `prev` if `yielding`.
#[inline(always)]
pub(super) fn switched(prev: *const Task, t: &Task, yielding: bool) {
    if !std::ptr::eq(prev, t) {
        schedule(prev, if yielding { task_status::YIELD } else { task_status::SWITCH }, t);
    }
}

/// The body of `t` returned to `prev` for the last time: it completes (cancelled, if its
/// taskgroup was meanwhile), unless it waits for its detach event (`finish::complete` tells
/// that case, when it knows).
#[inline(always)]
pub(super) fn body_done(t: &Task, prev: *const Task) {
    if !std::ptr::eq(prev, t) && t.head.flags & flags::DETACHABLE == 0 {
        // Checked: the run-time checks look for locks the task still holds.
        oxiomp_instrument::tool_checked(|| ToolEvent::TaskSchedule {
            prior: t as *const Task as usize,
            status: if group_cancelled(t) { task_status::CANCEL } else { task_status::COMPLETE },
            next: prev as usize,
        });
    }
}

/// Whether the taskgroup of `t` (or one enclosing it) was cancelled.
fn group_cancelled(t: &Task) -> bool {
    // SAFETY: a taskgroup outlives the tasks generated in it.
    unsafe { t.head.group.as_ref() }.is_some_and(|g| g.is_cancelled())
}

/// `t`, cancelled before it started, ends without running (discarded); the thread goes back
/// to `prev`.
#[inline(always)]
pub(super) fn cancelled(t: &Task, prev: *const Task) {
    let task = t as *const Task as usize;
    oxiomp_instrument::tool_checked(|| ToolEvent::Cancel {
        flags: cancel_flags::DISCARDED_TASK
            | if group_cancelled(t) { cancel_flags::TASKGROUP } else { cancel_flags::PARALLEL },
        task,
    });
    schedule(t, task_status::CANCEL, prev);
}

/// The body of detachable task `t` returned to `next`: `fulfilled` says whether its event
/// was fulfilled already (then it completes), else it waits for it.
#[inline(always)]
pub(super) fn detach_body_done(t: &Task, fulfilled: bool, next: *const Task) {
    let status = if fulfilled { task_status::COMPLETE } else { task_status::DETACH };
    // Checked, as in `body_done`.
    oxiomp_instrument::tool_checked(|| ToolEvent::TaskSchedule {
        prior: t as *const Task as usize,
        status,
        next: next as usize,
    });
}

/// The event of detachable task `t` is fulfilled: before its body ended (`early`), or after
/// (then it completes now).
#[inline(always)]
pub(super) fn fulfilled(t: &Task, early: bool) {
    let status = if early { task_status::EARLY_FULFILL } else { task_status::LATE_FULFILL };
    schedule(t, status, std::ptr::null());
}
