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
pub mod deps;
pub mod descriptor;
pub mod graph;
pub mod group;
pub(crate) mod pool;
mod prio;
pub(crate) mod state;
pub mod taskloop;
mod wait;

use std::ffi::c_void;
use std::time::Instant;

pub use deps::{Access, Dep};
pub use descriptor::{KmpTask, KmpTaskloop, Routine, Task};
pub use group::{Init, ItemSpec, TaskGroup};
pub(crate) use wait::serve_hidden;
pub use wait::{
    cancel_taskgroup, drain, help_barrier, run_one, taskgroup_begin, taskgroup_cancelled, taskgroup_end,
    taskwait, taskyield, wait_deps,
};

use crate::icv::IcvSave;
use crate::sync::WaitPolicy;
use crate::sync::atomic::Ordering;
use crate::sync::retire;
use crate::thread::Thread;
use descriptor::{
    Counted, CreationTrace, EVENT_BODY_DONE, EVENT_FULFILLED, Kind, NewTask, State, TaskRef, final_bits,
    flags, release_ref,
};

/// Ready tasks a creator may queue before it runs new ones at once.
const CUTOFF: usize = 64;

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

/// The calling thread's current task.
#[inline]
pub fn current(th: Thread) -> &'static Task {
    // SAFETY: the thread's task always points at the running task (an implicit task of the
    // current team, or an explicit task this thread is executing), alive while it runs.
    unsafe { &*th.task_state().task() }
}

/// `__kmpc_omp_task_alloc`: a new child of the calling thread's current task; returns its
/// `kmp_task_t`. The common case (a known thread, tracing off, a block on the thread's local
/// list) calls nothing, so it needs no stack frame; the rest (a thread the runtime does not
/// know yet, the traced allocation with its state and the task's creation event, a block from
/// elsewhere) is a cold copy. `ident`: the construct's `ident_t` (its source location names
/// the task's type in a trace), or 0.
#[inline]
pub fn alloc(
    flags: u32,
    sizeof_task: usize,
    sizeof_shareds: usize,
    routine: Option<Routine>,
    ident: usize,
) -> *mut KmpTask {
    if !oxiomp_instrument::enabled()
        && let Some(th) = Thread::peek()
        && let Some(block) =
            th.desc().task_cache().try_alloc(descriptor::block_size(sizeof_task, sizeof_shareds))
    {
        let n = new_task(th, flags, sizeof_task, sizeof_shareds, routine, CreationTrace::Off);
        // SAFETY: a block of `block_size` bytes from the thread's own local free list.
        return unsafe { descriptor::init_rested(block, n) }.kmp();
    }
    alloc_slow(flags, sizeof_task, sizeof_shareds, routine, ident)
}

#[cold]
#[inline(never)]
fn alloc_slow(
    flags: u32,
    sizeof_task: usize,
    sizeof_shareds: usize,
    routine: Option<Routine>,
    ident: usize,
) -> *mut KmpTask {
    let th = Thread::current();
    let cache = th.desc().task_cache();
    let mut trace = CreationTrace::Off;
    if oxiomp_instrument::enabled() {
        // A block from the thread's own list is recorded as an instant allocation (see
        // `CreationTrace::Instant`); any other is timed, and its creation event leaves the
        // allocation state (one clock read for both).
        if let Some(block) = cache.try_alloc(descriptor::block_size(sizeof_task, sizeof_shareds)) {
            let n = new_task(th, flags, sizeof_task, sizeof_shareds, routine, CreationTrace::Instant(ident));
            // SAFETY: a block of `block_size` bytes from the thread's own local free list.
            return unsafe { descriptor::init_rested(block, n) }.kmp();
        }
        oxiomp_instrument::task_allocation_enter();
        trace = CreationTrace::Timed(ident);
    }
    descriptor::alloc(new_task(th, flags, sizeof_task, sizeof_shareds, routine, trace), cache).kmp()
}

/// `__kmpc_omp_target_task_alloc` while hidden helper threads serve: a new child of the
/// calling thread's current task that the helpers' `team` runs (see `hidden`), untied as
/// libomp makes a target task. Its counts are its parent's, as any child's: `taskwait`,
/// taskgroups, barriers and dependences treat it as they treat the others.
#[cold]
#[inline(never)]
pub fn alloc_hidden(
    flags: u32,
    sizeof_task: usize,
    sizeof_shareds: usize,
    routine: Option<Routine>,
    ident: usize,
    team: &'static crate::team::Team,
) -> *mut KmpTask {
    let th = Thread::current();
    let mut trace = CreationTrace::Off;
    if oxiomp_instrument::enabled() {
        oxiomp_instrument::task_allocation_enter();
        trace = CreationTrace::Timed(ident);
    }
    let mut n = new_task(th, flags & !descriptor::flags::TIED, sizeof_task, sizeof_shareds, routine, trace);
    n.team = team;
    descriptor::alloc(n, th.desc().task_cache()).kmp()
}

/// The parts of a new child of the calling thread's current task.
#[inline(always)]
fn new_task(
    th: Thread,
    flags: u32,
    sizeof_task: usize,
    sizeof_shareds: usize,
    routine: Option<Routine>,
    trace: CreationTrace,
) -> NewTask<'static> {
    let parent = current(th);
    NewTask {
        parent,
        team: parent.head.team,
        id: next_id(th),
        flags,
        sizeof_task,
        sizeof_shareds,
        routine,
        trace,
    }
}

/// A task number unique in the process: the thread's gtid (bits 40 and up) and its own count
/// (unique until a thread has created 2^40 tasks).
#[inline]
pub(crate) fn next_id(th: Thread) -> u64 {
    th.task_state().next_task_id()
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
        if prev & EVENT_BODY_DONE != 0 {
            finish(t, None);
        }
        Ok(())
    };
    pool.leave_foreign();
    r
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
    // Relaxed: not shared yet; the queue hand-over publishes it.
    t.rest.parts.store(1, Ordering::Relaxed);
    if t.head.flags & flags::DETACHABLE != 0 {
        th.task_state().detach().forget(t);
    }
    if t.head.flags & flags::PRIORITY != 0 {
        // SAFETY: the task's own `kmp_task_t`; clang stores the priority in data2.
        let p = unsafe { (*t.kmp()).data2 } as i32;
        // The task is not shared yet (it is queued below).
        t.head.priority.set(p.clamp(0, crate::query::max_task_priority()));
    }
    let defer = may_defer(th, t);
    if runs_at_once(t, || defer) && (deps.is_empty() || siblings_done(t)) {
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
            oxiomp_instrument::task_created(oxiomp_instrument::Site { entry, ident })
        } else {
            0
        };
        ts.replace_task(t);
        // Each chunk's first change of an ICV saves them here (and clears the pointer).
        ts.replace_icv_save(&saved);
        call_routine(th, t, Some(id), true);
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
    call_routine(th, t, trace, run);
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
    call_routine(th, t, trace, run);
    ts.replace_task(prev_task);
    ts.replace_icv_save(prev_save);
    th.replace_icvs(back);
}

/// Calls the task's routine (when `run`), recording its execution.
#[inline]
fn call_routine(th: Thread, t: &'static Task, trace: Option<u32>, run: bool) {
    let kt = t.kmp();
    // SAFETY: the routine and task come from the compiler's alloc; the routine takes
    // (gtid, task).
    if run && let Some(r) = unsafe { (*kt).routine } {
        call_part(r, th.gtid(), t, trace);
        // An untied task's next parts, re-submitted to run here (`rerun_here`): clang's
        // untied tasks re-submit themselves at least once, so this is no cold path.
        // A cancellation meanwhile does not stop them: the task has started, and a started
        // task runs to its end or to a cancellation point of its own (its scheduling points,
        // where clang splits it, are none).
        if !th.task_state().rerun().is_null() {
            while take_rerun(th, t) {
                call_part(r, th.gtid(), t, trace);
            }
        }
    }
}

/// Calls a task's body for one part. One test of the tracing flag: when tracing, the body
/// runs in its running state, between the task's execution events, in a cold copy.
#[inline(always)]
fn call_part(r: Routine, gtid: i32, t: &'static Task, trace: Option<u32>) {
    if oxiomp_instrument::enabled() {
        call_traced(r, gtid, t, trace);
    } else {
        // SAFETY: the routine and task come from the compiler's alloc; the routine takes
        // (gtid, task).
        unsafe { r(gtid, t.kmp()) };
    }
}

#[cold]
#[inline(never)]
fn call_traced(r: Routine, gtid: i32, t: &'static Task, trace: Option<u32>) {
    let trace_id = trace.unwrap_or(t.head.trace_id);
    oxiomp_instrument::task_begin(oxiomp_instrument::State::TaskRunning, trace_id);
    // SAFETY: as in `call_part`.
    unsafe { r(gtid, t.kmp()) };
    oxiomp_instrument::task_finish(oxiomp_instrument::State::TaskRunning, trace_id);
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
            t.team().tasks().notify();
            release_ref(t);
        }
        _ => {
            t.head.state.store(State::Queued as u32, Ordering::Relaxed);
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

/// Runs a task its creator runs at once (the cut-off): without dependences (so without
/// mutexinoutset locks), not detachable. It is not counted in its parent unless it ends with
/// children left, for their sake (`Counted::Lazy`; an untied one's later parts run here too).
#[inline]
fn run_at_once(th: Thread, t: &'static Task) {
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

/// Ends a task its creator ran at once (the cut-off or if(0)) in the common case where nothing
/// but this thread ever saw it: every task it generated, if any, ran at once and retired
/// quietly too (its `spawned` is 0; nothing made it hold its parent), it has no destructors
/// and is not detachable. Then nobody else holds a reference (`refs` is 1), nothing
/// registered it in a dependence map, and its fields own nothing (no child map, no
/// mutexinoutset locks, no successors), it was never counted (`Counted::Lazy`), and its block
/// goes straight back to the cache. Returns false, doing nothing, when the full completion is
/// needed.
#[inline]
fn retire_quietly(th: Thread, t: &'static Task) -> bool {
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

/// Runs `t`, not started yet, on the calling thread (its body only if it is not cancelled).
/// False if it could not start (a mutexinoutset lock is busy; the task was put back).
fn execute(th: Thread, t: &'static Task) -> bool {
    execute_part(th, t, false)
}

/// Runs one part of `t` on the calling thread: its first (`started` false: not run if the
/// task is cancelled) or a later one of a task that has started (run whatever happened
/// meanwhile: a started task is not cancelled but at a cancellation point of its own). False
/// if it could not start (a mutexinoutset lock is busy; the task was put back).
fn execute_part(th: Thread, t: &'static Task, started: bool) -> bool {
    // SAFETY: set before the task was queued; read by the thread that runs it.
    let mutexes = unsafe { (*t.rest.mutexes.get()).as_deref() };
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
        t.team().tasks().notify();
    }
    finish_part(t, Some(th));
    true
}

/// One execution of `t` ended: complete it if it was the last part.
fn finish_part(t: &'static Task, th: Option<Thread>) {
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
    if t.head.flags & flags::DETACHABLE != 0 {
        // AcqRel: pairs with `fulfill_event`.
        let prev = t.rest.event.fetch_or(EVENT_BODY_DONE, Ordering::AcqRel);
        if prev & EVENT_FULFILLED == 0 {
            return;
        }
    }
    finish(t, th);
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

/// Runs the destructors thunk of `t`'s privates, if the compiler gave one.
fn run_destructors(t: &Task) {
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
fn uncount(t: &Task) {
    let team = t.team();
    if team.runs_hidden_tasks() {
        return uncount_hidden(t, team);
    }
    if drop_counts(t) {
        team.tasks().notify();
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
    if drop_counts(t) {
        team.tasks().notify();
        origin.notify();
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

/// Takes `t`'s counts back (see [`uncount`]); true if a count reached 0, so that its waiters
/// must be woken.
fn drop_counts(t: &Task) -> bool {
    match t.rest.counted.get() {
        Counted::Lazy => return uncount_lazy(t),
        Counted::Retire => return uncount_undeferred(t),
        Counted::Full => {}
    }
    let mut zero = false;
    // SAFETY: a taskgroup outlives its tasks; we do not touch it after the decrement.
    if let Some(g) = unsafe { t.head.group.as_ref() } {
        zero |= g.count.fetch_sub(1, Ordering::SeqCst) == 1;
    }
    // SAFETY: our reference keeps an explicit parent alive; implicit ones live in the team.
    let parent = unsafe { &*t.head.parent };
    // SeqCst (an AcqRel chain): the last completer has synchronised with every earlier one,
    // each of which saw `created` as of its own child's creation, so it sees the final
    // `created` when the parent waits (see README.md).
    let done = parent.rest.completed.fetch_add(1, Ordering::SeqCst).wrapping_add(1);
    zero |= done == parent.rest.created.load(Ordering::Relaxed);
    // The task's subtree is done if it never had children (none can come now), or when the
    // last one retires (`sync/retire.rs` arbitrates between us and that child).
    if retire::self_done(t) {
        zero |= retire::retire(t);
    }
    zero
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

/// `__kmpc_omp_task_begin_if0`: the encountering thread runs `kt` now.
#[inline]
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
    ts.replace_task(t);
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

/// `__kmpc_omp_task_complete_if0`: the undeferred task's body has returned.
#[inline]
pub fn complete_if0(th: Thread, t: &'static Task) {
    oxiomp_instrument::task_finish(oxiomp_instrument::State::TaskRunningIf0, t.head.trace_id);
    let ts = th.task_state();
    ts.replace_task(t.head.parent);
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
