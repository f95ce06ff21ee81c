//! How threads come and go: an initial thread registers at its first call into the runtime
//! and gives its descriptor back when it ends; a worker is started for a team, waits in its
//! main loop for the next region, and retires when the program pauses the runtime; a fork's
//! child restarts as the one thread it has. The descriptors themselves, and the hand-over
//! protocol between a primary thread and its workers, are `thread`'s.

use oxiomp_instrument::{State, ToolEvent};

use crate::debug::state::ompt_state;
use crate::registry::Runtime;
use crate::sync::atomic::Ordering;
use crate::team::Team;
use crate::thread::{self, Thread, ThreadDesc};

impl Thread {
    /// The calling thread; a thread the runtime does not know yet becomes a new initial thread.
    #[inline]
    pub fn current() -> Thread {
        match Thread::peek() {
            Some(th) => th,
            None => register_initial(),
        }
    }

    /// The calling thread, which the compiler names by the gtid the runtime gave it. The
    /// thread-local slot is two loads (see `thread::current`), cheaper than the gtid table;
    /// debug builds check that the gtid is the caller's.
    #[inline]
    pub fn from_gtid(gtid: i32) -> Thread {
        let me = Thread::current();
        debug_assert!(
            Runtime::get().thread(gtid).is_none_or(|d| std::ptr::eq(d, me.desc())),
            "gtid {gtid} is not the calling thread's"
        );
        me
    }
}

/// Registers the calling thread, which the runtime does not know yet, as an initial thread.
#[cold]
fn register_initial() -> Thread {
    let rt = Runtime::get();
    // Left when the thread's trace stream closes, at the thread's end or the process's
    // exit: the outermost state, which the closer ends last. (Not at the thread's end in
    // the runtime: `exit` called inside a region ends it with the region's states still
    // open.) The first thread enters it as its initialisation of the runtime ends.
    oxiomp_instrument::attached_enter();
    // An ended initial thread's descriptor, else a retired worker's (whose threadprivate
    // copies go: they were the worker's), else a new one: so that descriptors number the
    // threads alive at once, whatever their kinds.
    let reused = rt.take_ended().or_else(|| {
        rt.take_retired().inspect(|d| {
            crate::threadprivate::thread_ended(d.gtid);
            // Relaxed: the descriptor serves no thread yet.
            d.is_initial.store(1, Ordering::Relaxed);
        })
    });
    let desc = match reused {
        Some(d) => d,
        None => leak_registered(1, rt).unwrap_or_else(|| {
            crate::stderr_line(format_args!(
                "oxiomp: error: more than {} threads use OpenMP at once; cannot continue",
                crate::registry::MAX_THREADS
            ));
            std::process::abort()
        }),
    };
    start_initial(desc, rt);
    thread::set_current(desc);
    end_at_thread_exit(desc);
    rt.adjust_busy(1);
    // After the thread is registered: a tool's start may ask about it.
    crate::tool::start_once();
    // SAFETY: `desc` is now the calling thread's descriptor.
    let me = unsafe { Thread::on_own_thread(desc) };
    let root = me.team() as *const Team as usize;
    oxiomp_instrument::tool(|| ToolEvent::ThreadBegin { initial: true });
    oxiomp_instrument::tool(|| ToolEvent::ImplicitTaskBegin { team: root, index: 1, size: 1, initial: true });
    me
}

/// A new descriptor under a new gtid, recorded in the registry's table (None when the table
/// is full). Its task numbers start at the gtid's base.
fn leak_registered(is_initial: u32, rt: &Runtime) -> Option<&'static ThreadDesc> {
    // Workers: the hidden helpers' reserved gtids are not the program's threads.
    let limit = if is_initial == 1 {
        crate::registry::MAX_THREADS as u32
    } else {
        rt.thread_limit().saturating_add(rt.settings().hidden.reserved_gtids())
    };
    rt.register_new(limit, |gtid| ThreadDesc::leak_new(gtid, is_initial, rt.settings().icvs))
}

/// Sets `desc` up for the initial thread calling this (a new descriptor, or one an ended
/// initial thread left): its root team made, or the one the descriptor has reset for this
/// thread (its memory outlives the threads), then fresh per-thread state
/// (`ThreadDesc::begin_initial`).
fn start_initial(desc: &'static ThreadDesc, rt: &Runtime) {
    let root: &'static mut Team = match desc.root_team() {
        None => Box::leak(Team::new_root(desc.gtid, &desc.cg_threads)),
        Some(root) => {
            // SAFETY: the root team belongs to this descriptor; the thread that used it ended
            // (`end_initial`) with every region of it over, and nothing else keeps a
            // reference to an ended thread's root team.
            let root = unsafe { &mut *root };
            root.reset_root(desc.gtid, &desc.cg_threads);
            root
        }
    };
    desc.begin_initial(rt.settings().icvs, root);
}

/// The key whose destructor runs when an initial thread ends (its value: the thread's
/// descriptor). A pthread key rather than a `thread_local!`: glibc runs key destructors after
/// the thread-local destructors (C++ `thread_local`, Rust's), which may still use OpenMP, and
/// runs them again if one of those sets the key anew (the thread registered again).
fn end_key() -> Option<libc::pthread_key_t> {
    static KEY: std::sync::OnceLock<Option<libc::pthread_key_t>> = std::sync::OnceLock::new();
    *KEY.get_or_init(|| {
        let mut key: libc::pthread_key_t = 0;
        // SAFETY: `key` is written by the call; the destructor is a plain function that does
        // not unwind (the library is built with panic=abort).
        let rc = unsafe { libc::pthread_key_create(&mut key, Some(initial_thread_ended)) };
        // Without a key (the process used up its keys), initial threads' descriptors are not
        // reused: each new thread gets a new one, as long as the table has room.
        (rc == 0).then_some(key)
    })
}

/// Has `desc` (the calling initial thread's) recycled when the thread ends: through the key,
/// or, when there is none, a thread-local destructor (which runs before the program's own
/// thread-local destructors may: a fallback only).
fn end_at_thread_exit(desc: &'static ThreadDesc) {
    match end_key() {
        Some(key) => {
            // SAFETY: a key this library created; the value is a descriptor, never freed.
            unsafe { libc::pthread_setspecific(key, desc as *const ThreadDesc as *const libc::c_void) };
        }
        None => {
            let _ = END_FALLBACK.try_with(|_| {});
        }
    }
}

thread_local! {
    static END_FALLBACK: EndFallback = const { EndFallback };
}

/// [`end_at_thread_exit`] without a key.
struct EndFallback;

impl Drop for EndFallback {
    fn drop(&mut self) {
        if let Some(th) = Thread::peek() {
            end_initial(th);
        }
    }
}

/// The end of an initial thread: see [`end_initial`].
extern "C" fn initial_thread_ended(p: *mut libc::c_void) {
    // SAFETY: the key's value is the ending thread's own descriptor (`register_initial`),
    // which is never freed.
    if let Some(desc) = unsafe { (p as *const ThreadDesc).as_ref() } {
        // SAFETY: the key's destructor runs on the thread whose value it is.
        end_initial(unsafe { Thread::on_own_thread(desc) });
    }
}

/// The initial thread `me` ends (the pthread key's destructor, on that thread). Its implicit
/// region ends as a region does: the tasks it generated complete (deferred ones run here,
/// detached ones are waited for), then its workers go back to the pool. Unless it is the
/// process's first thread (whose threadprivate copies are the variables themselves), its
/// threadprivate copies are destroyed (their destructors may use OpenMP: tasks and workers
/// are handled again after them) and the descriptor waits for the next thread. The thread's
/// slot is emptied last: should it call the runtime again (a later destructor), it registers
/// anew. A thread that ends inside a region (`pthread_exit` there) keeps its descriptor: the
/// region's teams still point at it.
fn end_initial(me: Thread) {
    let rt = Runtime::get();
    let desc = me.desc();
    let inside = !me.outside_regions();
    let end_region = || {
        if !inside {
            me.team().finish_tasks(me);
        }
        release_hot_teams(me, rt);
    };
    end_region();
    if desc.gtid != 0 && !inside {
        crate::threadprivate::thread_ended(desc.gtid);
        end_region();
    }
    // A tool hears of the end once the implicit task's tasks are done.
    if !inside {
        let root = me.team() as *const Team as usize;
        oxiomp_instrument::tool(|| ToolEvent::ImplicitTaskEnd {
            team: root,
            index: 1,
            size: 1,
            initial: true,
        });
    }
    oxiomp_instrument::tool(|| ToolEvent::ThreadEnd);
    rt.adjust_busy(-1);
    // Relaxed: see `ThreadDesc::begin_initial`.
    desc.state.store(ompt_state::IDLE, Ordering::Relaxed);
    desc.clear_os_thread();
    if desc.gtid != 0 && !inside {
        thread::clear_current();
        rt.thread_ended(desc);
    }
}

/// Gives the workers of the teams `me` kept for its next regions back to the pool (the thread
/// ends, or pauses).
pub(crate) fn release_hot_teams(me: Thread, rt: &Runtime) {
    for team in me.fork_state().take_all_hot().into_iter().flatten() {
        rt.release_workers(team.workers());
    }
}

/// In the child of a fork, on the forking thread `me` (the only one left): its teams are
/// forgotten (their workers are gone); if it forked inside a region, or is a worker, it
/// becomes the initial thread of a fresh runtime: level 0, a root team of its own, the
/// settings' ICVs, as libomp's child does. (The child must not return from the region it
/// forked in: the region's other threads are not there to end it.) Otherwise it goes on as it
/// was, with the ICVs it had.
pub(crate) fn restart_in_fork_child(me: Thread, rt: &Runtime) {
    let desc = me.desc();
    desc.forget_after_fork();
    if desc.is_initial() && me.outside_regions() {
        return;
    }
    // The region's frames on this thread's stack still point at its teams: forgotten, not
    // freed.
    desc.forget_state_after_fork(rt.settings().icvs);
    // Relaxed: see `is_initial`.
    desc.is_initial.store(1, Ordering::Relaxed);
    start_initial(desc, rt);
    end_at_thread_exit(desc);
}

/// Why no worker could be started.
#[derive(Debug)]
pub enum SpawnError {
    /// As many threads use the runtime as it runs at once ([`Runtime::thread_limit`]).
    TableFull,
    /// The system refused a thread (limits on processes or memory).
    System(std::io::Error),
}

impl std::fmt::Display for SpawnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpawnError::TableFull => write!(
                f,
                "{} threads use the runtime already, the most it runs at once",
                Runtime::get().thread_limit()
            ),
            SpawnError::System(e) => write!(f, "the system refused a new thread: {e}"),
        }
    }
}

/// Starts a worker thread and returns its descriptor (the thread waits for work): on the
/// descriptor of a worker whose thread ended (`omp_pause_resource`, or a fork's child), or on a
/// new one. Fails when the table is full or the system refuses the thread (the descriptor
/// then waits for the next worker started).
pub(crate) fn spawn_worker(rt: &'static Runtime) -> Result<&'static ThreadDesc, SpawnError> {
    // A retired worker's descriptor, else an ended initial thread's (see `register_initial`),
    // else a new one.
    let reused = rt.take_retired().or_else(|| {
        rt.take_ended().inspect(|d| {
            // Relaxed: the descriptor serves no thread yet.
            d.is_initial.store(0, Ordering::Relaxed);
        })
    });
    let desc = match reused {
        Some(d) => d,
        None => leak_registered(0, rt).ok_or(SpawnError::TableFull)?,
    };
    // The epoch the thread waits beyond: read before the caller can assign work (after this
    // returns), which advances it.
    let base = desc.fork_epoch();
    let gtid = desc.gtid;
    // SAFETY: gettid has no preconditions.
    let creator = unsafe { libc::gettid() };
    let spawned = std::thread::Builder::new()
        .name(format!("oxiomp-{gtid}"))
        .stack_size(rt.worker_stacksize())
        .spawn(move || worker_main(desc, base, creator));
    match spawned {
        Ok(h) => {
            desc.set_join_handle(h);
            Ok(desc)
        }
        Err(e) => {
            rt.retire(desc);
            Err(SpawnError::System(e))
        }
    }
}

/// Starts the thread of hidden helper `desc` (a reserved descriptor, see `hidden`): member
/// `tid` of the helpers' `team`, bound to `cpus` when given (reported under
/// `KMP_HIDDEN_HELPER_AFFINITY` when `verbose`); it adds one to `ready` once set up. It runs
/// the team's tasks for the rest of the process (it is never joined).
pub(crate) fn spawn_hidden_helper(
    rt: &'static Runtime,
    desc: &'static ThreadDesc,
    team: &'static Team,
    tid: u32,
    cpus: Option<Vec<u32>>,
    verbose: bool,
    ready: &'static std::sync::atomic::AtomicU32,
) -> Result<(), SpawnError> {
    // SAFETY: gettid has no preconditions.
    let creator = unsafe { libc::gettid() };
    std::thread::Builder::new()
        .name(format!("oxiomp-h{}", desc.gtid))
        .stack_size(rt.worker_stacksize())
        .spawn(move || {
            oxiomp_instrument::thread_started_by(creator);
            let me = start_os_thread(desc);
            oxiomp_instrument::tool(|| ToolEvent::ThreadBegin { initial: false });
            me.begin_implicit_task(team, tid, rt.settings().icvs);
            if let Some(cpus) = cpus {
                crate::places::bind_current_thread_reporting(
                    &cpus,
                    desc.gtid,
                    verbose.then_some("KMP_HIDDEN_HELPER_AFFINITY"),
                );
            }
            // Recorded before it counts as ready: a traced program may end as soon as its
            // target tasks are done, and the thread's stream must exist whole by then.
            oxiomp_instrument::worker_loop_enter();
            // Release: the starter waits for it (Acquire) before the helpers take tasks.
            ready.fetch_add(1, std::sync::atomic::Ordering::Release);
            crate::task::serve_hidden(me);
        })
        .map(drop)
        .map_err(SpawnError::System)
}

/// A new OS thread takes worker descriptor `desc` over: it records itself as the descriptor's
/// thread and gets the handle on it.
fn start_os_thread(desc: &'static ThreadDesc) -> Thread {
    thread::set_current(desc);
    desc.set_os_thread();
    desc.new_os_thread();
    // SAFETY: `desc` is now the calling thread's descriptor.
    unsafe { Thread::on_own_thread(desc) }
}

/// Asks idle worker `w` (reserved by the caller: in no team, out of the pool) to end its
/// thread, and waits until the thread has ended (its thread-local destructors too, which may
/// still call into the runtime through the descriptor), so that the descriptor can serve a
/// new thread.
pub(crate) fn retire_worker(w: &'static ThreadDesc) {
    let e = w.assign(std::ptr::null(), 0);
    w.wait_reported(e);
    if let Some(h) = w.take_join_handle() {
        let _ = h.join();
    }
}

/// The body of a worker thread started by the thread whose OS id is `creator`.
fn worker_main(desc: &'static ThreadDesc, base_epoch: u32, creator: i32) {
    oxiomp_instrument::thread_started_by(creator);
    let me = start_os_thread(desc);
    oxiomp_instrument::tool(|| ToolEvent::ThreadBegin { initial: false });
    oxiomp_instrument::worker_loop_enter();
    let mut epoch = base_epoch;
    // Until the primary thread of the previous region has drained its tasks and stopped us,
    // this thread helps run them while it waits for new work (see `help_previous`).
    let mut help = || desc.help_previous(|| crate::task::help_barrier(me));
    loop {
        epoch = epoch.wrapping_add(1);
        oxiomp_instrument::barrier_fork_enter();
        let mut spinning = false;
        let (team, tid) = desc.wait_for_work(epoch, &mut help, &mut spinning);
        crate::barrier::trace_end(State::BarrierFork, spinning);
        if team.is_null() {
            // `retire_worker`: the thread ends. Teams it kept for nested regions give their
            // workers back first; after reporting it touches the descriptor no more.
            release_hot_teams(me, Runtime::get());
            oxiomp_instrument::worker_loop_exit();
            oxiomp_instrument::tool(|| ToolEvent::ThreadEnd);
            desc.state.store(ompt_state::IDLE, Ordering::Relaxed);
            desc.clear_os_thread();
            desc.report_joined(epoch, std::ptr::null());
            return;
        }
        // SAFETY: the team stays alive until the master has seen our join below, and (for
        // helping afterwards) until it closed the team's task pool, which waits for helpers.
        let team: &'static Team = unsafe { &*team };
        team.run_member(me, tid);
        oxiomp_instrument::tool(|| ToolEvent::JoinArrive { team: team as *const Team as usize, index: tid });
        oxiomp_instrument::barrier_join_enter();
        desc.report_joined(epoch, team);
        oxiomp_instrument::barrier_join_exit();
    }
}
