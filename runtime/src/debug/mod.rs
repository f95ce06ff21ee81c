//! What a debugger reads of the runtime (OMPD): the layout table of the structs it follows
//! from the exported root, the process-wide values it shows, and each thread's state, kept
//! by a recorder of the instrumentation calls (`Keeper`) while `OMP_DEBUG=enabled` or a tool
//! is attached. The `extern "C"` layer exports the table and the values and installs the
//! keeper; the debugger library (`ompd/`) reads them through the debugger.

pub mod hang;
pub mod layout;
pub mod state;
pub mod watch;

use std::ffi::c_char;

use oxiomp_instrument::{ChunkOf, Event, MutexOp, SyncPoint, ToolEvent, Worksharing};

use crate::registry::Runtime;
use crate::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};
use crate::task::descriptor::Task;
use crate::team::descriptor::Team;
use crate::thread::Thread;
use layout::Field;
use watch::{TaskCopy, TeamCopy};

/// Process-wide values a debugger shows (the global and address-space ICVs, the
/// `OMP_DISPLAY_ENV` text) and the root it starts from, published once at start-up
/// ([`Globals::publish`]). The `extern "C"` layer exports one (`oxiomp_debug_globals`); the
/// layout table describes it.
#[repr(C)]
pub struct Globals {
    /// The runtime's descriptor table (`Runtime`), null until published.
    pub runtime: AtomicPtr<Runtime>,
    /// The `OMP_DISPLAY_ENV=verbose` text, NUL-terminated.
    pub display_env: AtomicPtr<c_char>,
    /// affinity-format-var, NUL-terminated.
    pub affinity_format: AtomicPtr<c_char>,
    pub stacksize: AtomicU64,
    pub num_procs: AtomicU32,
    /// wait-policy-var: 1 active, 0 passive.
    pub wait_policy: AtomicU32,
    pub cancellation: AtomicU32,
    pub max_task_priority: AtomicU32,
    pub display_affinity: AtomicU32,
    pub nteams: AtomicU32,
    pub teams_thread_limit: AtomicU32,
    /// debug-var: 1 with `OMP_DEBUG=enabled`.
    pub debug: AtomicU32,
    /// 1 once a tool is attached (tool-var is "enabled" unless `OMP_TOOL=disabled`).
    pub tool: AtomicU32,
    /// The number of places (`omp_get_num_places`).
    pub num_places: AtomicU32,
}

impl Globals {
    pub const fn new() -> Globals {
        Globals {
            runtime: AtomicPtr::new(std::ptr::null_mut()),
            display_env: AtomicPtr::new(std::ptr::null_mut()),
            affinity_format: AtomicPtr::new(std::ptr::null_mut()),
            stacksize: AtomicU64::new(0),
            num_procs: AtomicU32::new(0),
            wait_policy: AtomicU32::new(0),
            cancellation: AtomicU32::new(0),
            max_task_priority: AtomicU32::new(0),
            display_affinity: AtomicU32::new(0),
            nteams: AtomicU32::new(0),
            teams_thread_limit: AtomicU32::new(0),
            debug: AtomicU32::new(0),
            tool: AtomicU32::new(0),
            num_places: AtomicU32::new(0),
        }
    }

    /// Fills the values in from the runtime's settings (once, at start-up; the texts are
    /// leaked: they live as long as the process). Relaxed stores: a debugger reads them in a
    /// stopped process, and nothing in the process reads them.
    pub fn publish(&self, rt: &'static Runtime, tool: bool) {
        let st = rt.settings();
        let g = &st.globals;
        let leak = |s: String| -> *mut c_char {
            let c = std::ffi::CString::new(s.replace('\0', " ")).unwrap_or_default();
            c.into_raw()
        };
        self.display_env.store(leak(crate::env::display_verbose(st)), Ordering::Relaxed);
        self.affinity_format.store(leak(g.affinity_format.clone()), Ordering::Relaxed);
        self.stacksize.store(g.stacksize as u64, Ordering::Relaxed);
        self.num_procs.store(rt.num_procs(), Ordering::Relaxed);
        self.wait_policy.store(g.wait_active as u32, Ordering::Relaxed);
        self.cancellation.store(g.cancellation as u32, Ordering::Relaxed);
        self.max_task_priority.store(g.max_task_priority as u32, Ordering::Relaxed);
        self.display_affinity.store(g.display_affinity as u32, Ordering::Relaxed);
        self.nteams.store(g.nteams as u32, Ordering::Relaxed);
        self.teams_thread_limit.store(g.teams_thread_limit as u32, Ordering::Relaxed);
        self.debug.store(g.debug as u32, Ordering::Relaxed);
        self.tool.store(tool as u32, Ordering::Relaxed);
        self.num_places.store(st.places.places.len() as u32, Ordering::Relaxed);
        // Last: a debugger that finds the root finds the values filled in.
        self.runtime.store(rt as *const Runtime as *mut Runtime, Ordering::Release);
    }
}

impl Default for Globals {
    fn default() -> Self {
        Self::new()
    }
}

const GLOBAL_FIELDS: [Field; 15] = [
    crate::debug_field!("globals.runtime", Globals, runtime),
    crate::debug_field!("globals.display_env", Globals, display_env),
    crate::debug_field!("globals.affinity_format", Globals, affinity_format),
    crate::debug_field!("globals.stacksize", Globals, stacksize),
    crate::debug_field!("globals.num_procs", Globals, num_procs),
    crate::debug_field!("globals.wait_policy", Globals, wait_policy),
    crate::debug_field!("globals.cancellation", Globals, cancellation),
    crate::debug_field!("globals.max_task_priority", Globals, max_task_priority),
    crate::debug_field!("globals.display_affinity", Globals, display_affinity),
    crate::debug_field!("globals.nteams", Globals, nteams),
    crate::debug_field!("globals.teams_thread_limit", Globals, teams_thread_limit),
    crate::debug_field!("globals.debug", Globals, debug),
    crate::debug_field!("globals.tool", Globals, tool),
    crate::debug_field!("globals.num_places", Globals, num_places),
    Field::size_of("globals", std::mem::size_of::<Globals>()),
];

const N: usize = GLOBAL_FIELDS.len()
    + crate::registry::DEBUG_FIELDS.len()
    + crate::thread::DEBUG_FIELDS.len()
    + crate::team::descriptor::DEBUG_FIELDS.len()
    + crate::task::descriptor::DEBUG_FIELDS.len()
    + crate::task::frame::DEBUG_FIELDS.len()
    + crate::icv::DEBUG_FIELDS.len();

/// The layout table (see [`layout`]).
pub type Table = layout::Layout<N>;

/// The layout of the structs a debugger follows: what the `extern "C"` layer exports as
/// `oxiomp_debug_layout`.
pub const LAYOUT: Table = layout::Layout::new(layout::join(&[
    &GLOBAL_FIELDS,
    &crate::registry::DEBUG_FIELDS,
    &crate::thread::DEBUG_FIELDS,
    &crate::team::descriptor::DEBUG_FIELDS,
    &crate::task::descriptor::DEBUG_FIELDS,
    &crate::task::frame::DEBUG_FIELDS,
    &crate::icv::DEBUG_FIELDS,
]));

/// Keeps the calling thread's state for a debugger from `events` (a group the
/// instrumentation delivered), and says which of the debugger's breakpoint functions the
/// group reaches (`bp`).
pub fn observe(events: &[Event], mut bp: impl FnMut(Breakpoint)) {
    let Some(th) = Thread::peek() else { return };
    let d = th.debug();
    for e in events {
        match *e {
            Event::Enter(s) => {
                d.enter(s);
                if runs_task(s) {
                    bp(Breakpoint::TaskBegin);
                }
            }
            Event::Leave(s) => {
                d.leave();
                if runs_task(s) {
                    bp(Breakpoint::TaskEnd);
                }
            }
            Event::Tool(t) => match t {
                ToolEvent::ThreadBegin { .. } => {
                    d.reset();
                    bp(Breakpoint::ThreadBegin);
                }
                ToolEvent::ThreadEnd => bp(Breakpoint::ThreadEnd),
                ToolEvent::ParallelBegin { .. } => bp(Breakpoint::ParallelBegin),
                ToolEvent::ParallelEnd { .. } => bp(Breakpoint::ParallelEnd),
                ToolEvent::ImplicitTaskBegin { .. } => bp(Breakpoint::TaskBegin),
                ToolEvent::ImplicitTaskEnd { .. } => bp(Breakpoint::TaskEnd),
                ToolEvent::Sync { kind, point } => {
                    use oxiomp_instrument::SyncPoint::*;
                    match point {
                        Begin | BeginWait => d.sync(kind, true),
                        End | WaitDoneEnd => d.sync(kind, false),
                        _ => {}
                    }
                }
                ToolEvent::Mutex { op: MutexOp::Acquire, kind, wait_id } => {
                    d.mutex_wait(Some((kind, wait_id as u64)))
                }
                ToolEvent::Mutex { op: MutexOp::Acquired | MutexOp::NestAcquired, .. } => d.mutex_wait(None),
                _ => {}
            },
            _ => {}
        }
    }
    let team = th.team_if_any();
    let p = d.current(team.map_or(0, |t| t as *const crate::team::descriptor::Team as u64));
    let state = state::resolve(p.state, team.is_some_and(|t| t.nthreads > 1 || t.level > 0));
    let desc = th.desc();
    // Relaxed: the thread's own display values, read by a debugger in a stopped process or
    // by a tool on this thread (`ompt_get_state`).
    desc.state.store(state, Ordering::Relaxed);
    desc.wait_id.store(p.wait_id, Ordering::Relaxed);
}

/// Keeps the calling thread's watched state from `events` (a group the instrumentation
/// delivered).
pub fn watch_events(events: &[Event]) {
    let Some(th) = Thread::peek() else { return };
    let w = &th.desc().watch;
    for e in events {
        match *e {
            Event::Enter(s) => w.enter(s),
            Event::Leave(s) => w.leave(s),
            Event::Meet(m) => w.meet(m),
            Event::WorksharingBegin { kind: Worksharing::ForStatic, .. } => w.loop_kind(true),
            Event::WorksharingBegin { kind: Worksharing::ForDynamic, .. } => w.loop_kind(false),
            Event::WorksharingEnd(Worksharing::ForDynamic) => w.loop_done(),
            Event::Tool(t) => match t {
                ToolEvent::ThreadBegin { .. } => w.reset(),
                ToolEvent::ImplicitTaskBegin { team, index, size, initial } => {
                    // SAFETY: the event names the team the thread begins its part of, alive
                    // until its members have left the region.
                    let t = unsafe { &*(team as *const Team) };
                    // An initial thread's implicit task is thread 0 of its root team.
                    let tid = if initial { 0 } else { index };
                    let c = TeamCopy {
                        team: team as u64,
                        tid,
                        size,
                        ident: t.ident as u64,
                        entry: t.entry as u64,
                        level: t.level,
                    };
                    // SAFETY: the thread's own implicit task in the team, alive with the team.
                    w.push_level(&c, &unsafe { task_copy(t.implicit_task(tid)) });
                }
                // After the member's end (`Meet`), but for an initial thread's implicit task.
                ToolEvent::ImplicitTaskEnd { .. } => w.pop_level(false),
                ToolEvent::ParallelEnd { .. } => w.region_over(),
                ToolEvent::JoinArrive { team, index: 0 } => {
                    // SAFETY: the primary thread arrives at its team's join: the team is alive.
                    w.join(team as u64, unsafe { &*(team as *const Team) }.nthreads)
                }
                ToolEvent::TaskSchedule { next, .. } => {
                    // SAFETY: the task the thread switches to, which runs (or resumes) on it now.
                    w.run_task(&unsafe { task_copy(next as *const Task) })
                }
                ToolEvent::Sync { kind, point: SyncPoint::Begin | SyncPoint::BeginWait }
                    if watch::is_barrier(kind) =>
                {
                    w.barrier_kind(kind)
                }
                ToolEvent::Mutex { op, kind, wait_id } => w.mutex(op, kind, wait_id as u64),
                ToolEvent::DoacrossWait { waiting, iters, n, ident, count } => {
                    // SAFETY: the event's iteration is `n` numbers at `iters`, alive while the
                    // event is dispatched.
                    let iters = unsafe { std::slice::from_raw_parts(iters as *const u64, n as usize) };
                    w.doacross(waiting.then_some(iters), ident as u64, count)
                }
                ToolEvent::Chunk { start, iterations, of: ChunkOf::Loop } => w.chunk(start, iterations),
                _ => {}
            },
            _ => {}
        }
    }
}

/// What the watch keeps of task `t`: its routine and ancestors.
///
/// # Safety
/// `t` is null or a task that runs (or is about to run) on the calling thread: it is alive,
/// and so are its ancestors (a task holds its parent until it is freed).
unsafe fn task_copy(t: *const Task) -> TaskCopy {
    let mut c = TaskCopy { task: t as u64, ..TaskCopy::default() };
    // SAFETY: as the caller says.
    let Some(task) = (unsafe { t.as_ref() }) else { return c };
    c.routine = task.routine_addr() as u64;
    let mut p = task.head.parent;
    for a in c.ancestors.iter_mut() {
        // SAFETY: an ancestor of a live task is alive (see above).
        let Some(parent) = (unsafe { p.as_ref() }) else { break };
        *a = p as u64;
        p = parent.head.parent;
    }
    c
}

/// Whether `s` is the state of running an explicit task's code.
fn runs_task(s: oxiomp_instrument::State) -> bool {
    matches!(s, oxiomp_instrument::State::TaskRunning | oxiomp_instrument::State::TaskRunningIf0)
}

/// The breakpoint functions a debugger sets (OMPD's `ompd_bp_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Breakpoint {
    ThreadBegin,
    ThreadEnd,
    ParallelBegin,
    ParallelEnd,
    TaskBegin,
    TaskEnd,
}
