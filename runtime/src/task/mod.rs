//! Explicit tasks: creation, scheduling on per-thread work-stealing deques, waiting
//! (`taskwait`, taskgroups, barriers), dependences, taskloops, detach and task reductions.
//!
//! The protocols (completion counting, dependence release, waking waiters) are explained with
//! proof sketches in `README.md` next to this file.
//!
//! Scheduling policy:
//! * A ready task goes to the creating thread's deque; idle members steal the oldest task of a
//!   random victim. Prioritised tasks go to a shared heap that is looked at first.
//! * Cut-off: a task runs at once (undeferred) when the team has one thread, when it is
//!   included in a final task, or when the creator's deque already holds `CUTOFF` tasks, so a
//!   producer that outpaces its consumers does not build an unbounded queue (unless
//!   `KMP_ENABLE_TASK_THROTTLING=0` asks for no cut-off, as libomp has it).
//! * An untied task's next part (clang re-submits the task at each of its scheduling points)
//!   runs on the thread that ran the previous part, as soon as that part returns.
//! * Task scheduling constraint: a thread suspended in a tied task (taskwait, taskgroup end,
//!   taskyield) only starts tied tasks that descend from it.

pub(crate) mod cache;
mod create;
pub mod deps;
pub mod descriptor;
mod finish;
pub mod frame;
pub mod graph;
pub mod group;
pub(crate) mod pool;
mod prio;
mod run;
pub(crate) mod state;
pub mod steer;
mod submit;
pub mod taskloop;
mod tool;
mod wait;

use std::ffi::c_void;
use std::time::Instant;

pub use create::alloc;
pub use create::alloc_hidden;
pub(crate) use create::next_id;
pub use deps::{Access, Dep};
pub use descriptor::{KmpTask, KmpTaskloop, Routine, Task};
pub(crate) use finish::discard;
pub use finish::{allow_completion_event, complete_if0, completion_event, fulfill_event};
pub use group::{Init, ItemSpec, TaskGroup};
pub(crate) use run::{begin_in_place, cancelled_in, discard_after_run, run_in_place};
pub use submit::{begin_if0, submit, submit_task, with_dep_buffer};
pub(crate) use submit::{make_ready, may_defer, set_throttling};
pub use tool::flags_of as tool_flags;
pub(crate) use wait::{BarrierHelp, serve_hidden};
pub use wait::{
    cancel_taskgroup, drain, help_barrier, run_one, taskgroup_begin, taskgroup_cancelled, taskgroup_end,
    taskwait, taskyield, wait_deps,
};

use crate::sync::WaitPolicy;
use crate::sync::atomic::Ordering;
use crate::thread::Thread;
use descriptor::{Kind, TaskRef, flags, release_ref};

/// The calling thread's current task.
#[inline]
pub fn current(th: Thread) -> &'static Task {
    // SAFETY: the thread's task always points at the running task (an implicit task of the
    // current team, or an explicit task this thread is executing), alive while it runs.
    unsafe { &*th.task_state().task() }
}

/// `omp_in_final`.
pub fn in_final(th: Thread) -> bool {
    current(th).head.is_final != 0
}

/// `omp_in_explicit_task`.
pub fn in_explicit_task(th: Thread) -> bool {
    current(th).is_explicit()
}

/// Task reductions: `__kmpc_taskred_init` (and the older `__kmpc_task_reduction_init`)
/// attach reduction items to the current taskgroup; returns the handle.
pub fn reduction_init(th: Thread, items: &[ItemSpec]) -> *mut c_void {
    let t = current(th);
    let gp = t.head.cur_group.get() as *mut TaskGroup;
    if gp.is_null() {
        return std::ptr::null_mut();
    }
    let n = th.team().nthreads;
    // SAFETY: the current task's innermost group, open; only this task modifies it.
    unsafe { (*gp).reduction = Some(Box::new(group::Reduction::new(items, n))) };
    gp as *mut c_void
}

/// `__kmpc_task_reduction_get_th_data`: the calling thread's copy of reduction item `item`,
/// looked up in the group `handle` (or the current task's groups when null), then in the
/// enclosing groups.
pub fn reduction_data(th: Thread, handle: Option<&TaskGroup>, item: *mut c_void) -> *mut c_void {
    let tid = th.tid();
    let mut g = match handle {
        Some(g) => g as *const TaskGroup,
        None => current(th).head.cur_group.get(),
    };
    // SAFETY: groups with reductions stay open while tasks that use them run.
    while let Some(x) = unsafe { g.as_ref() } {
        if let Some(r) = &x.reduction
            && let Some(p) = r.lookup(item, tid)
        {
            return p;
        }
        g = x.parent;
    }
    item
}

/// `__kmpc_taskred_modifier_init`: `reduction(task, ...)` on a parallel or worksharing
/// construct: each thread opens a taskgroup whose reduction combines into its own private item.
pub fn reduction_modifier_init(th: Thread, items: &[ItemSpec]) -> *mut c_void {
    taskgroup_begin(th);
    reduction_init(th, items)
}

/// `__kmpc_task_reduction_modifier_fini`.
pub fn reduction_modifier_fini(th: Thread) {
    taskgroup_end(th);
}

/// Sets the compiler layer's word of the current task's innermost open taskgroup (see
/// [`group_word`]); false when no taskgroup is open.
pub fn set_group_word(th: Thread, w: usize) -> bool {
    // SAFETY: the current task's innermost group, open while the task runs.
    match unsafe { current(th).head.cur_group.get().as_ref() } {
        Some(g) => {
            // Relaxed: set before the task creates the tasks that read it (task creation
            // publishes it) and read by the task itself.
            g.foreign.store(w, Ordering::Relaxed);
            true
        }
        None => false,
    }
}

/// The compiler layer's word of the current task's innermost taskgroup that has one (a task
/// is in the groups its creator was in), 0 when none has.
pub fn group_word(th: Thread) -> usize {
    let mut g = current(th).head.cur_group.get();
    // SAFETY: enclosing groups outlive the tasks generated in them.
    while let Some(x) = unsafe { g.as_ref() } {
        // Relaxed: see `set_group_word`.
        let w = x.foreign.load(Ordering::Relaxed);
        if w != 0 {
            return w;
        }
        g = x.parent;
    }
    0
}

/// A task body in Rust, boxed in the task's privates.
type Body = Box<dyn FnOnce() + Send>;

unsafe extern "C" fn run_rust_body(_gtid: i32, kt: *mut KmpTask) -> i32 {
    // SAFETY: `spawn` wrote a `Body` right after the `kmp_task_t`; a task runs once, so the
    // box is taken exactly once.
    unsafe {
        let slot = (kt as *mut u8).add(std::mem::size_of::<KmpTask>()) as *mut Body;
        std::ptr::read(slot)();
    }
    0
}

/// Creates a task running `f`, with dependences `deps`, as a child of the current task: the
/// safe entry point for Rust code and tests (the compiler's path is `alloc` + `submit`).
pub fn spawn(th: Thread, deps: &[Dep], f: impl FnOnce() + Send + 'static) {
    let size = std::mem::size_of::<KmpTask>() + std::mem::size_of::<Body>();
    let kt = alloc(flags::TIED, size, 0, Some(run_rust_body), 0);
    // SAFETY: the task was allocated with room for a `Body` after its `kmp_task_t`, 8-aligned.
    unsafe { std::ptr::write((kt as *mut u8).add(std::mem::size_of::<KmpTask>()) as *mut Body, Box::new(f)) };
    // SAFETY: `kt` is the task just allocated.
    let t: &'static Task = unsafe { Task::from_kmp(kt) };
    let mut v = deps.to_vec();
    // A new task: never refused.
    let _ = submit(th, t, &mut v);
}

/// Runs `f` as an undeferred task (`if(0)`) of the current task: the safe counterpart of
/// `begin_if0` / the compiler's direct call / `complete_if0`.
pub fn undeferred(th: Thread, f: impl FnOnce()) {
    let kt = alloc(flags::TIED, std::mem::size_of::<KmpTask>(), 0, None, 0);
    // SAFETY: `kt` is the task just allocated.
    let t: &'static Task = unsafe { Task::from_kmp(kt) };
    begin_if0(th, t);
    f();
    complete_if0(th, t);
}

#[cfg(all(test, not(loom)))]
mod tests;
