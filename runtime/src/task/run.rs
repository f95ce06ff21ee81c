//! A task's execution on a thread: the thread's current task and ICVs around the body, an
//! untied task's later parts, taskloop chunks run in place, cancellation before the start.

use super::descriptor::{self, Counted, KmpTask, Routine, State, TaskRef, ToolFrame, release_ref};
use super::finish::{finish_part, retire_quietly, run_destructors, uncount};
use super::{Task, TaskGroup, deps};
use crate::icv::IcvSave;
use crate::sync::atomic::Ordering;
use crate::thread::Thread;

/// Runs a task its creator runs at once (the cut-off): without dependences (so without
/// mutexinoutset locks), not detachable. It is not counted in its parent unless it ends with
/// children left, for their sake (`Counted::Lazy`; an untied one's later parts run here too).
#[inline]
pub(super) fn run_at_once(th: Thread, t: &'static Task) {
    // Not counted in its parent unless it ends with children left (`Counted::Lazy`).
    t.head.state.store(State::Running as u32, Ordering::Relaxed);
    // A new task (its first part): its ICV slot is empty, as it rested on the free list.
    debug_assert!(!t.has_icvs());
    if is_cancelled(t) {
        return end_cancelled_at_once(th, t);
    }
    run_body_borrowing(th, t, None, true);
    if !retire_quietly(th, t) {
        finish_part(t, Some(th));
    }
}

/// [`run_at_once`] for a task cancelled before it started: its body does not run (it is
/// still the current task for that instant, as any task that runs).
#[cold]
#[inline(never)]
fn end_cancelled_at_once(th: Thread, t: &'static Task) {
    run_body_borrowing(th, t, None, false);
    if !retire_quietly(th, t) {
        finish_part(t, Some(th));
    }
}

/// Runs `t`, not started yet, on the calling thread (its body only if it is not cancelled).
/// False if it could not start (a mutexinoutset lock is busy; the task was put back).
pub(super) fn execute(th: Thread, t: &'static Task) -> bool {
    execute_part(th, t, false)
}

/// Runs one part of `t` on the calling thread: its first (`started` false: not run if the
/// task is cancelled) or a later one of a task that has started (run whatever happened
/// meanwhile: a started task is not cancelled but at a cancellation point of its own). False
/// if it could not start (a steering request holds it back, or a mutexinoutset lock is busy;
/// the task was put back).
pub(super) fn execute_part(th: Thread, t: &'static Task, started: bool) -> bool {
    // SAFETY: set before the task was queued; read by the thread that runs it.
    let mutexes = unsafe { (*t.rest.mutexes.get()).as_deref() };
    if !started && !super::steer::may_start(t) {
        t.team().tasks().put_back(TaskRef(t));
        return false;
    }
    if let Some(ms) = mutexes
        && !deps::lock_all(ms)
    {
        t.team().tasks().put_back(TaskRef(t));
        return false;
    }
    let cancelled = !started && is_cancelled(t);
    t.head.state.store(State::Running as u32, Ordering::Relaxed);
    run_body(th, t, None, !cancelled);
    if let Some(ms) = mutexes {
        deps::unlock_all(ms);
        // A member of the same mutexinoutset group may have been put back meanwhile: a
        // thread asleep in a wait must look again.
        t.team().tasks().notify_all();
    }
    finish_part(t, Some(th));
    true
}

/// Runs chunk after chunk in block `t` on the calling thread, each an included task of the
/// current task that is not counted and not completed (a taskloop's chunks run in place):
/// `next` readies the block for the next chunk, false when there is none. Stops after a chunk
/// that left children behind (its block must not serve another chunk: that chunk's `taskwait`
/// and dependences must see only its own children). One ICV save slot serves the run; what a
/// chunk changes in the ICVs dies with it. `TRACED`: each chunk is a task of its own in the
/// trace, created as it starts.
#[inline]
pub(crate) fn run_in_place<const TRACED: bool>(
    th: Thread,
    t: &'static Task,
    ident: usize,
    mut next: impl FnMut() -> bool,
) {
    debug_assert!(!t.has_icvs());
    let ts = th.task_state();
    let parent = ts.task();
    let saved = IcvSave::new();
    let prev_save = ts.icv_save();
    // SAFETY: the task's own kmp_task_t.
    let entry = unsafe { (*t.kmp()).routine }.map_or(0, |r| r as usize);
    while next() {
        let id = if TRACED {
            super::tool::created(t, &[], false);
            oxiomp_instrument::task_created(oxiomp_instrument::Site { entry, ident })
        } else {
            0
        };
        ts.replace_task(t);
        // Each chunk's first change of an ICV saves them here (and clears the pointer).
        ts.replace_icv_save(&saved);
        call_routine(th, t, Some(id), true, parent);
        ts.replace_task(parent);
        if let Some(back) = saved.take() {
            th.replace_icvs(back);
        }
        run_destructors(t);
        // Relaxed: only this thread writes it (a chunk counts the children it generates;
        // their retirement goes to another word, see `sync/retire.rs`).
        if t.rest.spawned.load(Ordering::Relaxed) != 0 {
            break;
        }
    }
    // The chunks' uses of `icv_save` ended with them.
    ts.replace_icv_save(prev_save);
}

/// Counts a block `run_in_place` will use (once, before its first body) for retirement only:
/// its chunks complete before their parent goes on, but children they leave behind must hold
/// barriers.
pub(crate) fn begin_in_place(t: &'static Task) {
    t.rest.counted.set(Counted::Retire);
    // SAFETY: the parent is the task running on this thread, alive.
    descriptor::bump(&unsafe { &*t.head.parent }.rest.spawned, 1);
}

/// Releases a block used by `run_in_place` (its destructors already ran).
pub(crate) fn discard_after_run(t: &'static Task) {
    t.head.state.store(State::Complete as u32, Ordering::Relaxed);
    // SAFETY: no body runs any more: only we touch the map.
    drop(unsafe { (*t.rest.child_deps.get()).take() });
    uncount(t);
    release_ref(t);
}

/// Runs `t`'s body (when `run`) on this thread as its current task, with the task's ICVs;
/// afterwards the thread's own ICVs are back. A task with its own copy of the ICVs (queued
/// tasks) swaps them in and out. A task without one (run at once by its creator) borrows the
/// thread's ICVs, which are its creator's: `icv_save` points at a slot on this stack frame, and
/// only a body that changes an ICV pays for the copy (`Thread::change_icvs`), restored here.
/// (An untied task's later parts run in the same `call_routine` loop, on the same ICVs.)
/// `trace` is the number the body runs under in the trace: `None`
/// for the task's own (`trace_id`, read only when tracing), `Some` for a chunk run in place.
#[inline]
fn run_body(th: Thread, t: &'static Task, trace: Option<u32>, run: bool) {
    if t.has_icvs() {
        return run_body_own_icvs(th, t, trace, run);
    }
    run_body_borrowing(th, t, trace, run);
}

/// [`run_body`] for a task without ICVs of its own (it borrows the thread's).
#[inline]
fn run_body_borrowing(th: Thread, t: &'static Task, trace: Option<u32>, run: bool) {
    let ts = th.task_state();
    let prev_task = ts.replace_task(t);
    let saved = IcvSave::new();
    let prev_save = ts.replace_icv_save(&saved);
    call_routine(th, t, trace, run, prev_task);
    ts.replace_task(prev_task);
    // The body's own uses of `icv_save` ended with it (nested bodies restore theirs).
    ts.replace_icv_save(prev_save);
    if let Some(back) = saved.take() {
        th.replace_icvs(back);
    }
}

/// `run_body` for a task that carries its own ICVs: swapped in, and the thread's swapped back.
#[cold]
fn run_body_own_icvs(th: Thread, t: &'static Task, trace: Option<u32>, run: bool) {
    let ts = th.task_state();
    let prev_task = ts.replace_task(t);
    let mine = t.icvs.get().unwrap_or(th.icvs());
    let back = th.replace_icvs(mine);
    let prev_save = ts.replace_icv_save(std::ptr::null());
    call_routine(th, t, trace, run, prev_task);
    ts.replace_task(prev_task);
    ts.replace_icv_save(prev_save);
    th.replace_icvs(back);
}

/// Calls the task's routine (when `run`) in place of `prev`, the task the thread ran before,
/// recording its execution. With tracing (or a tool) on, the whole execution (every part) is
/// [`call_traced`]'s.
#[inline]
fn call_routine(th: Thread, t: &'static Task, trace: Option<u32>, run: bool, prev: *const Task) {
    let kt = t.kmp();
    // SAFETY: the routine comes from the compiler's alloc.
    if run && let Some(r) = unsafe { (*kt).routine } {
        if oxiomp_instrument::any_enabled() {
            return call_watched(th, r, t, trace, prev);
        }
        call_plain(th, r, t);
    } else if !run {
        super::tool::cancelled(t, prev);
    }
}

/// Runs every part of `t`'s routine `r` on this thread, recording nothing.
#[inline(always)]
fn call_plain(th: Thread, r: Routine, t: &'static Task) {
    let kt = t.kmp();
    // SAFETY: the routine and task come from the compiler's alloc; the routine takes
    // (gtid, task).
    unsafe { r(th.gtid(), kt) };
    // An untied task's next parts, re-submitted to run here (`rerun_here`): clang's
    // untied tasks re-submit themselves at least once, so this is no cold path.
    // A cancellation meanwhile does not stop them: the task has started, and a started
    // task runs to its end or to a cancellation point of its own (its scheduling points,
    // where clang splits it, are none).
    if !th.task_state().rerun().is_null() {
        while take_rerun(th, t) {
            // SAFETY: as above.
            unsafe { r(th.gtid(), kt) };
        }
    }
}

/// [`call_routine`] with a recorder on: traced when one sees every event, else (the run-time
/// checks alone) run plainly, and the checks told of the body's end when a task may hold a
/// lock it set (they look for one).
#[cold]
#[inline(never)]
fn call_watched(th: Thread, r: Routine, t: &'static Task, trace: Option<u32>, prev: *const Task) {
    if oxiomp_instrument::enabled() {
        return call_traced(th, r, t, trace, prev);
    }
    call_plain(th, r, t);
    if oxiomp_instrument::task_locks_held() {
        super::tool::body_done(t, prev);
    }
}

/// Whether `rerun_here` asked for `t` to run again on this thread (and clears the request).
#[inline]
fn take_rerun(th: Thread, t: &'static Task) -> bool {
    let ts = th.task_state();
    let r = ts.rerun();
    // Looked at before it is cleared: almost always there is no request, and no store then.
    if r.is_null() {
        return false;
    }
    ts.set_rerun(std::ptr::null());
    std::ptr::eq(r, t)
}

/// [`call_routine`] with tracing or a tool on: each part runs in its running state, between
/// the task's execution events; a tool sees the thread switch from `prev` to the task, and the
/// task's body end.
#[cold]
#[inline(never)]
fn call_traced(th: Thread, r: Routine, t: &'static Task, trace: Option<u32>, prev: *const Task) {
    let trace_id = trace.unwrap_or(t.head.trace_id);
    // The task's frames while it runs here (or is suspended beneath what it calls).
    let tf = ToolFrame::new();
    tf.scheduled_after(prev);
    t.head.frame.set(&tf);
    super::tool::switched(prev, t, th.task_state().take_yielding());
    super::tool::started(t);
    loop {
        oxiomp_instrument::task_begin(oxiomp_instrument::State::TaskRunning, trace_id);
        tf.frame.code_begins();
        // SAFETY: as in `call_routine`; the exit slot is the task's, which this thread runs.
        unsafe { call_task(r, th.gtid(), t.kmp(), tf.frame.exit_slot()) };
        tf.frame.code_ended();
        oxiomp_instrument::task_finish(oxiomp_instrument::State::TaskRunning, trace_id);
        if !take_rerun(th, t) {
            break;
        }
    }
    t.head.frame.set(std::ptr::null());
    super::tool::body_done(t, prev);
}

/// Whether `t` must not run its body: its taskgroup or (with OMP_CANCELLATION) its parallel
/// region was cancelled.
#[inline]
fn is_cancelled(t: &Task) -> bool {
    // The task's fields are read only when cancellation is enabled (a cold call).
    crate::query::cancellation_on() && task_cancel_requested(t)
}

#[cold]
#[inline(never)]
fn task_cancel_requested(t: &Task) -> bool {
    // SAFETY: as in `cancelled_in`.
    cancel_requested(unsafe { t.head.group.as_ref() }, t.team())
}

/// Whether a task generated in taskgroup `group` (or null) of `team` must not start.
#[inline]
pub(crate) fn cancelled_in(group: *const TaskGroup, team: &crate::team::Team) -> bool {
    // SAFETY: a taskgroup outlives the tasks generated in it, which the caller runs.
    let g = unsafe { group.as_ref() };
    // Taskgroups and regions are cancelled only with cancellation enabled (`cancel`): one
    // load when it is not.
    crate::query::cancellation_on() && cancel_requested(g, team)
}

#[cold]
#[inline(never)]
fn cancel_requested(g: Option<&TaskGroup>, team: &crate::team::Team) -> bool {
    g.is_some_and(|g| g.is_cancelled()) || team.region_cancel_requested()
}

/// Calls the task's code, `routine(gtid, task)`, from a frame of its own whose frame pointer
/// it first stores at `exit` (the task's exit frame).
///
/// # Safety
/// `routine` is the task's entry and `task` its `kmp_task_t`; `exit` is valid for writes.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
unsafe extern "C" fn call_task(routine: Routine, gtid: i32, task: *mut KmpTask, exit: *mut usize) {
    // The stack is 16-aligned at the call: the return address and the saved rbp make 16.
    core::arch::naked_asm!(
        ".cfi_startproc",
        "push rbp",
        ".cfi_def_cfa_offset 16",
        ".cfi_offset rbp, -16",
        "mov rbp, rsp",
        ".cfi_def_cfa_register rbp",
        "mov [rcx], rbp",
        "mov rax, rdi",
        "mov edi, esi",
        "mov rsi, rdx",
        "call rax",
        "pop rbp",
        ".cfi_def_cfa rsp, 8",
        "ret",
        ".cfi_endproc",
    )
}

/// [`call_task`] where no frame pointer can be had: the exit frame is a stack address of
/// this function's frame.
///
/// # Safety
/// As for the x86-64 one.
#[cfg(not(target_arch = "x86_64"))]
#[inline(never)]
unsafe extern "C" fn call_task(routine: Routine, gtid: i32, task: *mut KmpTask, exit: *mut usize) {
    let mark = 0u8;
    // SAFETY: per the contract.
    unsafe {
        exit.write(std::hint::black_box(&mark) as *const u8 as usize);
        routine(gtid, task);
    }
}
