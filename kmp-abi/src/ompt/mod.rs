//! OMPT, the OpenMP tool interface (OpenMP 5.2, chapter 19; `omp-tools.h`): a tool found at
//! start-up ([`start`]) registers callbacks and looks up the inquiry functions ([`entry`]);
//! the runtime tells it what happens through the one event vocabulary (`oxiomp_instrument`'s
//! `ToolEvent`s), which [`Dispatch`] turns into the callbacks.
//!
//! Every host callback of OpenMP 5.2 is dispatched ([`cb::ALWAYS`], [`cb::SOMETIMES`]); the
//! runtime's paths with a tool attached are those whose synchronisation the tool is told of
//! (see `docs/support.md`). The code addresses callbacks take are found by unwinding
//! ([`codeptr`]); the frames where the program's code and the runtime's meet are kept in each
//! task ([`frame`]).

mod codeptr;
mod entry;
pub(crate) mod frame;
mod start;

use std::cell::Cell;
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

use oxiomp_instrument::{
    ChunkOf, Event, MutexOp, Recorder, SyncPoint, ToolEvent, Worksharing, cancel_flags, sync_kind,
    task_flags, task_status, work_kind,
};
use oxiomp_runtime::Thread;
use oxiomp_runtime::task::{Access, Dep, Task};
use oxiomp_runtime::team::Team;

pub(crate) use codeptr::{caller_in_task, codeptr, in_this_library};
pub(crate) use start::start;

/// `ompt_data_t`: a tool's word (a value or a pointer).
type Data = u64;

/// `ompt_frame_t`: the runtime's task frame has its layout.
use oxiomp_runtime::task::frame::Frame;

/// Callback numbers (`ompt_callbacks_t`) this runtime dispatches.
mod cb {
    pub const THREAD_BEGIN: usize = 1;
    pub const THREAD_END: usize = 2;
    pub const PARALLEL_BEGIN: usize = 3;
    pub const PARALLEL_END: usize = 4;
    pub const TASK_CREATE: usize = 5;
    pub const TASK_SCHEDULE: usize = 6;
    pub const IMPLICIT_TASK: usize = 7;
    pub const CONTROL_TOOL: usize = 11;
    pub const SYNC_REGION_WAIT: usize = 16;
    pub const MUTEX_RELEASED: usize = 17;
    pub const DEPENDENCES: usize = 18;
    pub const TASK_DEPENDENCE: usize = 19;
    pub const WORK: usize = 20;
    pub const MASKED: usize = 21;
    pub const SYNC_REGION: usize = 23;
    pub const LOCK_INIT: usize = 24;
    pub const LOCK_DESTROY: usize = 25;
    pub const MUTEX_ACQUIRE: usize = 26;
    pub const MUTEX_ACQUIRED: usize = 27;
    pub const NEST_LOCK: usize = 28;
    pub const FLUSH: usize = 29;
    pub const CANCEL: usize = 30;
    pub const REDUCTION: usize = 31;
    pub const DISPATCH: usize = 32;
    pub const ERROR: usize = 37;
    /// The highest callback number of OpenMP 5.2 (`ompt_callback_error`).
    pub const LAST: usize = 37;
    /// The callbacks dispatched for every event of their kind (`ompt_set_always`).
    pub const ALWAYS: &[usize] = &[
        THREAD_BEGIN,
        THREAD_END,
        PARALLEL_BEGIN,
        PARALLEL_END,
        TASK_CREATE,
        TASK_SCHEDULE,
        IMPLICIT_TASK,
        SYNC_REGION_WAIT,
        MUTEX_RELEASED,
        DEPENDENCES,
        SYNC_REGION,
        LOCK_INIT,
        LOCK_DESTROY,
        MUTEX_ACQUIRE,
        MUTEX_ACQUIRED,
        NEST_LOCK,
        REDUCTION,
        CONTROL_TOOL,
        MASKED,
        FLUSH,
        CANCEL,
        ERROR,
    ];
    /// The callbacks dispatched for some of their events (`ompt_set_sometimes`): `work` (not
    /// for `scope` or `workshare`), `dispatch` (loops' chunks, a static loop's first chunk of
    /// each thread; not sections or taskloops), `task_dependence` (not
    /// through the runtime's join nodes, which stand for a finished group of concurrent
    /// accessors of an address).
    pub const SOMETIMES: &[usize] = &[WORK, DISPATCH, TASK_DEPENDENCE];
}

/// `ompt_thread_t`.
const THREAD_INITIAL: i32 = 1;
const THREAD_WORKER: i32 = 2;
/// `ompt_scope_endpoint_t`.
const SCOPE_BEGIN: i32 = 1;
const SCOPE_END: i32 = 2;
/// `ompt_task_flag_t`.
const TASK_INITIAL: i32 = 1;
const TASK_IMPLICIT: i32 = 2;

/// The registered callbacks by number (0: none). Relaxed: a callback is a plain function
/// address, set by the tool from `initialize` (before any event is dispatched, on the same
/// thread) or later by the tool itself, which orders its own registrations.
static CALLBACKS: [AtomicUsize; cb::LAST + 1] = [const { AtomicUsize::new(0) }; cb::LAST + 1];

/// The callback registered under number `which`, as a function of type `F`.
///
/// # Safety
/// `F` is the function pointer type OMPT gives callback `which`.
#[inline]
unsafe fn callback<F: Copy>(which: usize) -> Option<F> {
    let f = CALLBACKS[which].load(Ordering::Relaxed);
    // SAFETY: `f` is a non-null function address the tool registered for `which`, whose type
    // is `F` (the caller's contract); function pointers and usize have the same size.
    (f != 0).then(|| unsafe { std::mem::transmute_copy::<usize, F>(&f) })
}

type ThreadBeginFn = unsafe extern "C" fn(i32, *mut Data);
type ThreadEndFn = unsafe extern "C" fn(*mut Data);
type ParallelBeginFn = unsafe extern "C" fn(*mut Data, *const Frame, *mut Data, u32, i32, *const c_void);
type ParallelEndFn = unsafe extern "C" fn(*mut Data, *mut Data, i32, *const c_void);
type ImplicitTaskFn = unsafe extern "C" fn(i32, *mut Data, *mut Data, u32, u32, i32);
type SyncRegionFn = unsafe extern "C" fn(i32, i32, *mut Data, *mut Data, *const c_void);
type TaskCreateFn = unsafe extern "C" fn(*mut Data, *const Frame, *mut Data, i32, i32, *const c_void);
type DependencesFn = unsafe extern "C" fn(*mut Data, *const Dependence, i32);
type TaskScheduleFn = unsafe extern "C" fn(*mut Data, i32, *mut Data);
type MutexAcquireFn = unsafe extern "C" fn(i32, u32, u32, u64, *const c_void);
type MutexFn = unsafe extern "C" fn(i32, u64, *const c_void);
type NestLockFn = unsafe extern "C" fn(i32, u64, *const c_void);
type TaskDependenceFn = unsafe extern "C" fn(*mut Data, *mut Data);
type WorkFn = unsafe extern "C" fn(i32, i32, *mut Data, *mut Data, u64, *const c_void);
type DispatchFn = unsafe extern "C" fn(*mut Data, *mut Data, i32, Data);
type MaskedFn = unsafe extern "C" fn(i32, *mut Data, *mut Data, *const c_void);
type FlushFn = unsafe extern "C" fn(*mut Data, *const c_void);
type CancelFn = unsafe extern "C" fn(*mut Data, i32, *const c_void);
type ErrorFn = unsafe extern "C" fn(i32, *const c_char, usize, *const c_void);
type ControlToolFn = unsafe extern "C" fn(u64, u64, *mut c_void, *const c_void) -> i32;

/// What a worker still owes the tool when it arrives at a region's closing barrier: the
/// barrier's end and its implicit task's end, told when the worker learns that the barrier
/// is over (at its next region, or when it ends), with a copy of the implicit task's data
/// (the team may be gone by then).
#[derive(Clone, Copy)]
struct Pending {
    index: u32,
}

thread_local! {
    /// The calling worker's pending end of its last implicit task (see [`Pending`]).
    static PENDING: Cell<Option<Pending>> = const { Cell::new(None) };
    /// The data of that implicit task, copied at the barrier (its address goes to the tool).
    static PENDING_DATA: Cell<Data> = const { Cell::new(0) };
    /// Whether the calling thread's end was told (a thread ending by itself and then at exit
    /// is told once).
    static ENDED: Cell<bool> = const { Cell::new(false) };
    /// The work type of the calling thread's dynamically scheduled loop (told at its end).
    static LOOP_KIND: Cell<u32> = const { Cell::new(work_kind::LOOP_DYNAMIC) };
}

/// The recorder installed once a tool has initialized: the tool events of each group become
/// callbacks; state events are not a tool's business.
pub(crate) struct Dispatch;

impl Recorder for Dispatch {
    fn record(&self, events: &[Event]) {
        for e in events {
            match *e {
                Event::Tool(t) => dispatch(t),
                // Loops, sections and distribute begin with their `ToolEvent::Work`, which
                // gives their schedule and count.
                Event::WorksharingBegin {
                    kind:
                        Worksharing::ForDynamic
                        | Worksharing::ForStatic
                        | Worksharing::Sections
                        | Worksharing::Distribute,
                    ..
                } => {}
                Event::WorksharingBegin { kind, .. } => work(work_kind_of(kind), true, work_count(kind)),
                Event::WorksharingEnd(Worksharing::ForDynamic) => work(LOOP_KIND.with(|k| k.get()), false, 0),
                Event::WorksharingEnd(kind) => work(work_kind_of(kind), false, work_count(kind)),
                _ => {}
            }
        }
    }

    /// No task numbers: a tool does not need them.
    fn task_number(&self) -> u32 {
        0
    }
}

/// The team at address `team`.
///
/// # Safety
/// `team` is the address the runtime put in a tool event, of a team alive while the event is
/// dispatched (on the thread that recorded it).
unsafe fn team<'a>(team: usize) -> &'a Team {
    // SAFETY: the caller's contract.
    unsafe { &*(team as *const Team) }
}

/// The data of the calling thread's current task (implicit or explicit).
fn current_task_data(th: Thread) -> *mut Data {
    oxiomp_runtime::task::current(th).head.tool.as_ptr()
}

/// The data of the task at address `task` (null for 0).
///
/// # Safety
/// `task` is 0 or the address the runtime put in a tool event, of a task alive while the
/// event is dispatched.
unsafe fn task_data(task: usize) -> *mut Data {
    // SAFETY: the caller's contract.
    unsafe { (task as *const Task).as_ref() }.map_or(std::ptr::null_mut(), |t| t.head.tool.as_ptr())
}

pub(super) fn dispatch(e: ToolEvent) {
    let Some(th) = Thread::peek() else { return };
    match e {
        ToolEvent::ThreadBegin { initial } => {
            ENDED.with(|e| e.set(false));
            let data = th.desc().tool.as_ptr();
            // SAFETY: the thread's own word, zeroed before the tool sees it (`ToolData`).
            unsafe { data.write(0) };
            // SAFETY: the callback's registered type.
            if let Some(f) = unsafe { callback::<ThreadBeginFn>(cb::THREAD_BEGIN) } {
                // SAFETY: calling the tool's callback with its documented arguments.
                unsafe { f(if initial { THREAD_INITIAL } else { THREAD_WORKER }, data) };
            }
        }
        ToolEvent::ThreadEnd => {
            if ENDED.with(|e| e.replace(true)) {
                return;
            }
            end_pending();
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<ThreadEndFn>(cb::THREAD_END) } {
                // SAFETY: as above.
                unsafe { f(th.desc().tool.as_ptr()) };
            }
        }
        ToolEvent::ParallelBegin { team: t, requested, flags } => {
            // SAFETY: the event's team (see `team`).
            let tm = unsafe { team(t) };
            let data = tm.tool.as_ptr();
            // SAFETY: the region's word, zeroed by its primary before any member sees it.
            unsafe { data.write(0) };
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<ParallelBeginFn>(cb::PARALLEL_BEGIN) } {
                // SAFETY: the encountering task is suspended beneath the region, alive.
                let enc = unsafe { tm.encountering.as_ref() }.unwrap_or(oxiomp_runtime::task::current(th));
                let frame = frame::of(enc);
                // SAFETY: as above.
                unsafe { f(enc.head.tool.as_ptr(), frame, data, requested, flags as i32, codeptr()) };
            }
        }
        ToolEvent::ParallelEnd { team: t, flags } => {
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<ParallelEndFn>(cb::PARALLEL_END) } {
                // SAFETY: the event's team (see `team`).
                let data = unsafe { team(t) }.tool.as_ptr();
                // The primary is back in the encountering task.
                let enc = current_task_data(th);
                // SAFETY: as above.
                unsafe { f(data, enc, flags as i32, codeptr()) };
            }
        }
        ToolEvent::ImplicitTaskBegin { team: t, index, size, initial } => {
            end_pending();
            // SAFETY: the event's team (see `team`).
            let tm = unsafe { team(t) };
            if tm.is_league() {
                // A league member's task is told as each team's initial task it runs
                // (`ToolEvent::LeagueTaskBegin`).
                return;
            }
            let data = tm.implicit_tool_data(index);
            // SAFETY: the implicit task's word, zeroed by the thread that runs the task; an
            // initial task's region (its thread's root team) begins with it, and that thread
            // zeroes the region's word too.
            unsafe {
                data.write(0);
                if initial {
                    tm.tool.as_ptr().write(0);
                }
            }
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<ImplicitTaskFn>(cb::IMPLICIT_TASK) } {
                let flags = if initial { TASK_INITIAL } else { TASK_IMPLICIT };
                // SAFETY: as above.
                unsafe { f(SCOPE_BEGIN, tm.tool.as_ptr(), data, size, index, flags) };
            }
        }
        ToolEvent::ImplicitTaskEnd { team: t, index, size, initial } => {
            if initial && ENDED.with(|e| e.get()) {
                return;
            }
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<ImplicitTaskFn>(cb::IMPLICIT_TASK) } {
                // SAFETY: the event's team (see `team`).
                let data = unsafe { team(t) }.implicit_tool_data(index);
                let flags = if initial { TASK_INITIAL } else { TASK_IMPLICIT };
                let size = if initial { 0 } else { size };
                // SAFETY: as above.
                unsafe { f(SCOPE_END, std::ptr::null_mut(), data, size, index, flags) };
            }
        }
        ToolEvent::LeagueTaskBegin { league, index, team_num, num_teams } => {
            // SAFETY: the event's team (see `team`).
            let tm = unsafe { team(league) };
            let data = tm.implicit_tool_data(index);
            // SAFETY: the initial task's word (the league member's implicit task), zeroed by
            // the thread that runs it before the tool sees it.
            unsafe { data.write(0) };
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<ImplicitTaskFn>(cb::IMPLICIT_TASK) } {
                // SAFETY: as above.
                unsafe { f(SCOPE_BEGIN, tm.tool.as_ptr(), data, num_teams, team_num, TASK_INITIAL) };
            }
        }
        ToolEvent::LeagueTaskEnd { league, index, team_num } => {
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<ImplicitTaskFn>(cb::IMPLICIT_TASK) } {
                // SAFETY: the event's team (see `team`).
                let data = unsafe { team(league) }.implicit_tool_data(index);
                // SAFETY: as above.
                unsafe { f(SCOPE_END, std::ptr::null_mut(), data, 0, team_num, TASK_INITIAL) };
            }
        }
        ToolEvent::JoinArrive { team: t, index } => {
            // SAFETY: the event's team (see `team`).
            let tm = unsafe { team(t) };
            if tm.is_league() {
                // Its members' tasks (the teams' initial tasks) have ended.
                return;
            }
            let (pdata, tdata) = (tm.tool.as_ptr(), tm.implicit_tool_data(index));
            sync_region(SCOPE_BEGIN, pdata, tdata, index == 0);
            if index != 0 {
                // SAFETY: the implicit task's word, which only its thread's tool code uses now.
                PENDING_DATA.with(|d| d.set(unsafe { tdata.read() }));
                PENDING.with(|p| p.set(Some(Pending { index })));
            }
        }
        ToolEvent::JoinDone { team: t } => {
            // SAFETY: the event's team (see `team`).
            let tm = unsafe { team(t) };
            if tm.is_league() {
                return;
            }
            // The region has ended in its barrier: no parallel data (as for the workers).
            let tdata = tm.implicit_tool_data(0);
            sync_region(SCOPE_END, std::ptr::null_mut(), tdata, true);
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<ImplicitTaskFn>(cb::IMPLICIT_TASK) } {
                // SAFETY: as above.
                unsafe { f(SCOPE_END, std::ptr::null_mut(), tdata, tm.nthreads, 0, TASK_IMPLICIT) };
            }
        }
        ToolEvent::TaskCreate { task, flags, has_deps } => {
            // SAFETY: the event's task, alive while it is dispatched.
            let data = unsafe { task_data(task) };
            // SAFETY: the new task's word, zeroed by its creator before the tool sees it.
            unsafe { data.write(0) };
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<TaskCreateFn>(cb::TASK_CREATE) } {
                let enc = oxiomp_runtime::task::current(th);
                let frame = frame::of(enc);
                // SAFETY: as above.
                unsafe { f(enc.head.tool.as_ptr(), frame, data, flags as i32, has_deps as i32, codeptr()) };
            }
        }
        ToolEvent::Dependences { task, list, n } => {
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<DependencesFn>(cb::DEPENDENCES) } {
                // SAFETY: the runtime's list of `n` dependences, alive while the event is
                // dispatched (`ToolEvent::Dependences`).
                let deps = unsafe { std::slice::from_raw_parts(list as *const Dep, n as usize) };
                let out: Vec<Dependence> = deps.iter().map(Dependence::of).collect();
                // SAFETY: as above.
                unsafe { f(task_data(task), out.as_ptr(), out.len() as i32) };
            }
        }
        // OMPT has no callback for a sink's wait (its dependence was told), nor for a task's
        // queueing, nor for the tasks behind a `taskwait depend` (its dependences were told).
        ToolEvent::DoacrossWait { .. } | ToolEvent::TaskQueued { .. } | ToolEvent::WaitDependence { .. } => {}
        ToolEvent::Doacross { source, iters, n } => {
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<DependencesFn>(cb::DEPENDENCES) } {
                // SAFETY: the runtime's `n` iteration numbers, alive while the event is
                // dispatched (`ToolEvent::Doacross`).
                let iters = unsafe { std::slice::from_raw_parts(iters as *const u64, n as usize) };
                let kind = if source { DEPENDENCE_SOURCE } else { DEPENDENCE_SINK };
                let out: Vec<Dependence> =
                    iters.iter().map(|&i| Dependence { variable: i as Data, kind }).collect();
                // SAFETY: as above.
                unsafe { f(current_task_data(th), out.as_ptr(), out.len() as i32) };
            }
        }
        ToolEvent::TaskwaitDeps { data, list, n } => {
            let data = data as *mut Data;
            // SAFETY: the wait's word, on the runtime's stack for as long as the wait lasts.
            unsafe { data.write(0) };
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<TaskCreateFn>(cb::TASK_CREATE) } {
                let enc = oxiomp_runtime::task::current(th);
                let flags = task_flags::TASKWAIT | task_flags::UNDEFERRED | task_flags::MERGEABLE;
                // SAFETY: as above.
                unsafe { f(enc.head.tool.as_ptr(), frame::of(enc), data, flags as i32, 1, codeptr()) };
            }
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<DependencesFn>(cb::DEPENDENCES) } {
                // SAFETY: as for `ToolEvent::Dependences`.
                let deps = unsafe { std::slice::from_raw_parts(list as *const Dep, n as usize) };
                let out: Vec<Dependence> = deps.iter().map(Dependence::of).collect();
                // SAFETY: as above.
                unsafe { f(data, out.as_ptr(), out.len() as i32) };
            }
        }
        ToolEvent::TaskwaitDepsDone { data } => {
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<TaskScheduleFn>(cb::TASK_SCHEDULE) } {
                let status = task_status::TASKWAIT_COMPLETE as i32;
                // SAFETY: the wait's word (as above).
                unsafe { f(data as *mut Data, status, std::ptr::null_mut()) };
            }
        }
        ToolEvent::TaskSchedule { prior, status, next } => {
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<TaskScheduleFn>(cb::TASK_SCHEDULE) } {
                // SAFETY: the event's tasks, alive while it is dispatched.
                unsafe { f(task_data(prior), status as i32, task_data(next)) };
            }
        }
        ToolEvent::Sync { kind, point } => sync(th, kind, point),
        ToolEvent::Mutex { op, kind, wait_id } => mutex(op, kind, wait_id),
        ToolEvent::TaskDependence { src, sink, .. } => {
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<TaskDependenceFn>(cb::TASK_DEPENDENCE) } {
                // SAFETY: the event's tasks, alive while it is dispatched.
                unsafe { f(task_data(src), task_data(sink)) };
            }
        }
        ToolEvent::Work { kind, begin, count } => {
            if begin && (work_kind::LOOP_STATIC..=work_kind::LOOP_OTHER).contains(&kind) {
                LOOP_KIND.with(|k| k.set(kind));
            }
            work(kind, begin, count)
        }
        ToolEvent::Chunk { start, iterations, of } => {
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<DispatchFn>(cb::DISPATCH) } {
                let chunk = DispatchChunk { start, iterations };
                let instance = &chunk as *const DispatchChunk as Data;
                let kind = match of {
                    ChunkOf::Loop => DISPATCH_WS_LOOP_CHUNK,
                    ChunkOf::Distribute => DISPATCH_DISTRIBUTE_CHUNK,
                    ChunkOf::Taskloop => DISPATCH_TASKLOOP_CHUNK,
                };
                // SAFETY: as above; the chunk outlives the call.
                unsafe { f(th.team().tool.as_ptr(), current_task_data(th), kind, instance) };
            }
        }
        ToolEvent::Section => {
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<DispatchFn>(cb::DISPATCH) } {
                // The instance of a section is the construct's code address (as libomp has it).
                let instance = codeptr() as Data;
                // SAFETY: as above.
                unsafe { f(th.team().tool.as_ptr(), current_task_data(th), DISPATCH_SECTION, instance) };
            }
        }
        ToolEvent::Masked { begin } => {
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<MaskedFn>(cb::MASKED) } {
                let endpoint = if begin { SCOPE_BEGIN } else { SCOPE_END };
                // SAFETY: as above.
                unsafe { f(endpoint, th.team().tool.as_ptr(), current_task_data(th), codeptr()) };
            }
        }
        ToolEvent::Flush => {
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<FlushFn>(cb::FLUSH) } {
                // SAFETY: as above.
                unsafe { f(th.desc().tool.as_ptr(), codeptr()) };
            }
        }
        ToolEvent::Cancel { flags, task } => {
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<CancelFn>(cb::CANCEL) } {
                // SAFETY: the event's task (0: the current one), alive while it is dispatched.
                let data = if task == 0 { current_task_data(th) } else { unsafe { task_data(task) } };
                // A discarded task's cancellation has no code address (no construct of the
                // program's is where it happens).
                let ra = if flags & cancel_flags::DISCARDED_TASK != 0 { std::ptr::null() } else { codeptr() };
                // SAFETY: as above.
                unsafe { f(data, flags as i32, ra) };
            }
        }
        ToolEvent::Error { severity, message, len } => {
            // SAFETY: as above.
            if let Some(f) = unsafe { callback::<ErrorFn>(cb::ERROR) } {
                // SAFETY: as above; the message is alive while the event is dispatched.
                unsafe { f(severity as i32, message as *const c_char, len, codeptr()) };
            }
        }
    }
}

/// `ompt_dispatch_section`, `ompt_dispatch_ws_loop_chunk`, `ompt_dispatch_taskloop_chunk`,
/// `ompt_dispatch_distribute_chunk`.
const DISPATCH_SECTION: i32 = 2;
const DISPATCH_WS_LOOP_CHUNK: i32 = 3;
const DISPATCH_TASKLOOP_CHUNK: i32 = 4;
const DISPATCH_DISTRIBUTE_CHUNK: i32 = 5;

/// `ompt_dispatch_chunk_t`.
#[repr(C)]
struct DispatchChunk {
    start: u64,
    iterations: u64,
}

/// The OMPT work type of a construct the trace names (`oxiomp_instrument::Worksharing`).
fn work_kind_of(w: Worksharing) -> u32 {
    match w {
        Worksharing::ForStatic => work_kind::LOOP_STATIC,
        Worksharing::ForDynamic => work_kind::LOOP_DYNAMIC,
        Worksharing::Sections => work_kind::SECTIONS,
        Worksharing::Single => work_kind::SINGLE_EXECUTOR,
        Worksharing::Distribute => work_kind::DISTRIBUTE,
    }
}

/// The amount of work a tool is told a construct the trace names has: a `single`'s one block
/// (a loop's count is not known there: 0).
fn work_count(w: Worksharing) -> u64 {
    (w == Worksharing::Single) as u64
}

/// The calling thread begins (`begin`) or ends its part of a worksharing construct of OMPT
/// work type `kind`.
fn work(kind: u32, begin: bool, count: u64) {
    let Some(th) = Thread::peek() else { return };
    // SAFETY: the callback's registered type.
    if let Some(f) = unsafe { callback::<WorkFn>(cb::WORK) } {
        let endpoint = if begin { SCOPE_BEGIN } else { SCOPE_END };
        // SAFETY: calling the tool's callback with its documented arguments.
        unsafe { f(kind as i32, endpoint, th.team().tool.as_ptr(), current_task_data(th), count, codeptr()) };
    }
}

/// `omp_control_tool`: the tool's answer (its `control_tool` callback's), -2 without a tool,
/// -1 if it registered no such callback.
pub(crate) fn control_tool(command: i32, modifier: i32, arg: *mut c_void) -> i32 {
    if !oxiomp_instrument::tool_attached() {
        return -2;
    }
    // SAFETY: the callback's registered type.
    match unsafe { callback::<ControlToolFn>(cb::CONTROL_TOOL) } {
        // SAFETY: calling the tool's callback with its documented arguments.
        Some(f) => unsafe { f(command as u64, modifier as u64, arg, codeptr()) },
        None => -1,
    }
}

/// `ompt_dependence_type_source` and `ompt_dependence_type_sink`.
const DEPENDENCE_SOURCE: i32 = 5;
const DEPENDENCE_SINK: i32 = 6;

/// `ompt_dependence_t`.
#[repr(C)]
struct Dependence {
    variable: Data,
    kind: i32,
}

impl Dependence {
    /// What a tool is told of dependence `d`; `omp_all_memory` is told as `out_all_memory` (as
    /// libomp tells it).
    fn of(d: &Dep) -> Dependence {
        Dependence { variable: d.addr as Data, kind: dependence_type(d.kind) }
    }
}

/// OMPT's `ompt_dependence_type_t` of an access; `omp_all_memory` is `out_all_memory`.
pub(crate) fn dependence_type(kind: Access) -> i32 {
    match kind {
        Access::In => 1,
        Access::Out => 2,
        Access::InOut => 3,
        Access::MutexInOutSet => 4,
        Access::InOutSet => 7,
        Access::AllMemory => 34,
    }
}

/// A synchronisation region of `kind` of the calling thread's current task reaches `point`:
/// `sync_region` (or `reduction`) for the region, `sync_region_wait` for the waiting in it.
fn sync(th: Thread, kind: u32, point: SyncPoint) {
    let pdata = th.team().tool.as_ptr();
    let tdata = current_task_data(th);
    let which = if kind == sync_kind::REDUCTION { cb::REDUCTION } else { cb::SYNC_REGION };
    // SAFETY: the callbacks' registered types.
    let (region, wait) =
        unsafe { (callback::<SyncRegionFn>(which), callback::<SyncRegionFn>(cb::SYNC_REGION_WAIT)) };
    let wait = wait.filter(|_| which == cb::SYNC_REGION);
    let steps: &[(Option<SyncRegionFn>, i32)] = match point {
        SyncPoint::Begin => &[(region, SCOPE_BEGIN)],
        SyncPoint::BeginWait => &[(region, SCOPE_BEGIN), (wait, SCOPE_BEGIN)],
        SyncPoint::Wait => &[(wait, SCOPE_BEGIN)],
        SyncPoint::WaitDone => &[(wait, SCOPE_END)],
        SyncPoint::WaitDoneEnd => &[(wait, SCOPE_END), (region, SCOPE_END)],
        SyncPoint::End => &[(region, SCOPE_END)],
        SyncPoint::Whole => {
            &[(region, SCOPE_BEGIN), (wait, SCOPE_BEGIN), (wait, SCOPE_END), (region, SCOPE_END)]
        }
    };
    let ra = if region.is_some() || wait.is_some() { codeptr() } else { std::ptr::null() };
    for &(f, endpoint) in steps {
        if let Some(f) = f {
            // SAFETY: calling the tool's callback with its documented arguments.
            unsafe { f(kind as i32, endpoint, pdata, tdata, ra) };
        }
    }
}

/// The lock implementation a tool is told of: the one `ompt_enumerate_mutex_impls` lists.
const MUTEX_IMPL: u32 = 1;

/// A mutex operation `op` on the mutex `wait_id` of `kind`.
fn mutex(op: MutexOp, kind: u32, wait_id: usize) {
    let id = wait_id as u64;
    let k = kind as i32;
    // SAFETY: in each arm, the callback's registered type, called with its documented
    // arguments.
    unsafe {
        match op {
            MutexOp::Acquire => {
                if let Some(f) = callback::<MutexAcquireFn>(cb::MUTEX_ACQUIRE) {
                    f(k, 0, MUTEX_IMPL, id, codeptr())
                }
            }
            MutexOp::Acquired => {
                if let Some(f) = callback::<MutexFn>(cb::MUTEX_ACQUIRED) {
                    f(k, id, codeptr())
                }
            }
            MutexOp::Released => {
                if let Some(f) = callback::<MutexFn>(cb::MUTEX_RELEASED) {
                    f(k, id, codeptr())
                }
            }
            MutexOp::Init => {
                if let Some(f) = callback::<MutexAcquireFn>(cb::LOCK_INIT) {
                    f(k, 0, MUTEX_IMPL, id, codeptr())
                }
            }
            MutexOp::Destroy => {
                if let Some(f) = callback::<MutexFn>(cb::LOCK_DESTROY) {
                    f(k, id, codeptr())
                }
            }
            MutexOp::NestAcquired | MutexOp::NestReleased => {
                if let Some(f) = callback::<NestLockFn>(cb::NEST_LOCK) {
                    let endpoint = if op == MutexOp::NestAcquired { SCOPE_BEGIN } else { SCOPE_END };
                    f(endpoint, id, codeptr())
                }
            }
        }
    }
}

/// A region's closing barrier begins (`SCOPE_BEGIN`: `sync_region`, then `sync_region_wait`)
/// or ends (the reverse); `primary`: on the region's primary thread, whose code address is the
/// region's (a worker's is null, as in libomp: no call of the program's leads there).
fn sync_region(endpoint: i32, pdata: *mut Data, tdata: *mut Data, primary: bool) {
    // SAFETY: the callbacks' registered types.
    let (region, wait) = unsafe {
        (callback::<SyncRegionFn>(cb::SYNC_REGION), callback::<SyncRegionFn>(cb::SYNC_REGION_WAIT))
    };
    let k = sync_kind::BARRIER_IMPLICIT_PARALLEL as i32;
    let ra = if primary && (region.is_some() || wait.is_some()) { codeptr() } else { std::ptr::null() };
    let order = if endpoint == SCOPE_BEGIN { [region, wait] } else { [wait, region] };
    for f in order.into_iter().flatten() {
        // SAFETY: calling the tool's callback with its documented arguments.
        unsafe { f(k, endpoint, pdata, tdata, ra) };
    }
}

/// Tells the tool what the calling worker owes it (see [`Pending`]), if anything: the closing
/// barrier of its last region ended, and its implicit task (both with no parallel data: the
/// region may be gone).
fn end_pending() {
    let Some(p) = PENDING.with(|p| p.take()) else { return };
    let data = PENDING_DATA.with(|d| d.as_ptr());
    sync_region(SCOPE_END, std::ptr::null_mut(), data, false);
    // SAFETY: as above.
    if let Some(f) = unsafe { callback::<ImplicitTaskFn>(cb::IMPLICIT_TASK) } {
        // SAFETY: as above; `data` is the thread's own copy, alive as long as the thread.
        unsafe { f(SCOPE_END, std::ptr::null_mut(), data, 0, p.index, TASK_IMPLICIT) };
    }
}
