//! Thread descriptors, the thread-local pointer to the current one, initial (root) threads and
//! the worker main loop.

use std::cell::{Cell, UnsafeCell};

use crossbeam_utils::CachePadded;

use crate::current;
use crate::icv::{Icvs, ProcBind};
use crate::registry::Runtime;
use crate::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32, Ordering};
use crate::sync::wait::EpochFlag;
use crate::team::Team;
use oxiomp_instrument::State;

/// What a thread is doing, for debuggers and tools (values of OMPD's `omp_state_t` where one
/// fits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum ThreadState {
    Work = 1,
    Idle = 2,
    Overhead = 3,
    WaitBarrier = 0x10,
}

/// A thread the runtime knows: an initial thread (the program's main thread, or any thread the
/// program created that called into the runtime) or a pool worker.
#[repr(C)]
pub struct ThreadDesc {
    /// Global thread number: stable for the thread's life. A descriptor (and so its number)
    /// serves a new thread after its thread ended: a worker's after `omp_pause_resource` or a
    /// fork, an initial thread's (but the first one's) when the next initial thread comes.
    pub gtid: i32,
    /// The OS thread id (`gettid`) of the thread on the descriptor (0 between threads).
    pub os_tid: AtomicI32,
    /// 1 for an initial thread, 0 for a worker (a worker that forks inside a region is the
    /// initial thread of the child process).
    pub is_initial: AtomicU32,
    /// A [`ThreadState`] value.
    pub state: AtomicU32,
    /// What the master writes and the worker reads at a fork: one cache line.
    go: CachePadded<Mailbox>,
    /// What the worker writes and the master reads at a join: one cache line.
    joined: CachePadded<Report>,
    /// What the thread runs now (team, thread number, ICVs) and where it is bound.
    core: Core,
    /// Its tasks.
    tasks: crate::task::state::ThreadState,
    /// The regions it forks: teams kept for later, pushed clauses.
    fork: crate::team::ForkState,
    /// Its worksharing constructs.
    ws: crate::worksharing::state::ThreadState,
    /// Threads in the contention group this thread is the initial thread of (itself included).
    pub(crate) cg_threads: AtomicU32,
    /// Free task blocks of tasks this thread created.
    task_cache: crate::task::BlockCache,
    /// A worker's OS thread, joined when it retires (before its descriptor serves another).
    thread: parking_lot::Mutex<Option<std::thread::JoinHandle<()>>>,
}

// SAFETY: the per-thread states (`core`, `fork`, `ws`, `tasks`: `Cell`s) are private to this
// module and reached only through `Thread`, which only the descriptor's own thread holds (it
// is made from the thread-local pointer and is not `Send`), or, in a fork's child, by the one
// thread there is (`forget_state_after_fork`); `assignment` is written by the one master
// that owns the worker while the worker is idle, and read by the worker only after the `go`
// epoch (Release/Acquire) has handed it over.
unsafe impl Sync for ThreadDesc {}
// SAFETY: as above.
unsafe impl Send for ThreadDesc {}

#[derive(Clone, Copy)]
struct Assignment {
    team: *const Team,
    tid: u32,
}

/// The fork's hand-over to a worker, in one cache line (the worker, woken by the epoch, finds
/// its assignment in the line it has just fetched).
#[repr(C)]
struct Mailbox {
    /// Fork release: the master that assigned work advances it; the worker waits on it.
    epoch: EpochFlag,
    /// The work assigned with the latest epoch. Written by the assigning master before it
    /// advances the epoch (Release), read by this worker after it sees the epoch (Acquire).
    assignment: UnsafeCell<Assignment>,
}

/// The join's hand-over from a worker, in one cache line (the master that sees the epoch has
/// fetched the help protocol's words with it).
#[repr(C)]
struct Report {
    /// Join: the worker sets it to the `go` epoch it finished; the master waits on it.
    epoch: EpochFlag,
    /// The team whose tasks this worker may still help with after leaving its region.
    help_team: AtomicPtr<Team>,
    /// Whether the worker is looking at `help_team` right now.
    helping: AtomicBool,
}

/// What a thread runs now: its current team, thread number and ICVs, and where it is bound.
/// Only the owning thread touches it (see `ThreadDesc`'s `Sync`). `#[repr(C)]`: a debugger
/// reads `team` and `tid` (docs/architecture.md, *Descriptor layout*).
#[repr(C)]
struct Core {
    /// The team of the current implicit task (never null once registered).
    team: Cell<*const Team>,
    /// The thread number in `team`.
    tid: Cell<u32>,
    /// The ICVs of the current task.
    icvs: Cell<Icvs>,
    /// The place the thread is bound to, if any.
    place: Cell<Option<u32>>,
    /// An initial thread with binding requested that is not bound yet: it is bound to the first
    /// place of its partition when it starts its first parallel region or asks for its place,
    /// as libomp binds a root thread (not at its first call, which may only set an ICV).
    bind_pending: Cell<bool>,
    /// The affinity line this thread printed last (`OMP_DISPLAY_AFFINITY`; taken while used).
    last_affinity: Cell<Option<String>>,
    /// An initial thread's root team (the implicit region's), made with the descriptor and
    /// reset for each thread the descriptor serves; null for a worker.
    root_team: Cell<*mut Team>,
}

impl Core {
    fn new(icvs: Icvs) -> Core {
        Core {
            team: Cell::new(std::ptr::null()),
            tid: Cell::new(0),
            icvs: Cell::new(icvs),
            place: Cell::new(None),
            bind_pending: Cell::new(false),
            last_affinity: Cell::new(None),
            root_team: Cell::new(std::ptr::null_mut()),
        }
    }
}

/// A slot for ICVs a task body may have to save (see `task::state::ThreadState::icv_save`). Not an
/// `Option<Icvs>`: creating an empty one must cost one store, not a copy of the whole struct.
pub(crate) struct IcvSave {
    full: Cell<bool>,
    icvs: Cell<std::mem::MaybeUninit<Icvs>>,
}

impl IcvSave {
    #[inline]
    pub(crate) fn new() -> Self {
        IcvSave { full: Cell::new(false), icvs: Cell::new(std::mem::MaybeUninit::uninit()) }
    }

    /// Makes the slot at `p` an empty one without writing the (uninitialised) ICV bytes.
    ///
    /// # Safety
    /// `p` is valid for writes and holds no live slot.
    #[inline]
    pub(crate) unsafe fn init_empty(p: *mut IcvSave) {
        // SAFETY: per the contract; `icvs` may stay uninitialised (it is a MaybeUninit), and
        // `full` false says so.
        unsafe { std::ptr::addr_of_mut!((*p).full).write(Cell::new(false)) };
    }

    pub(crate) fn put(&self, icvs: Icvs) {
        self.icvs.set(std::mem::MaybeUninit::new(icvs));
        self.full.set(true);
    }

    /// Whether ICVs were saved.
    #[inline]
    pub(crate) fn is_full(&self) -> bool {
        self.full.get()
    }

    /// A copy of the saved ICVs, if any, leaving them saved.
    #[inline]
    pub(crate) fn get(&self) -> Option<Icvs> {
        // SAFETY: `full` is set only after `icvs` was written.
        self.full.get().then(|| unsafe { self.icvs.get().assume_init() })
    }

    /// The saved ICVs, if any were saved.
    #[inline]
    pub(crate) fn take(&self) -> Option<Icvs> {
        // SAFETY: `full` is set only after `icvs` was written.
        self.full.replace(false).then(|| unsafe { self.icvs.get().assume_init() })
    }
}

/// What a region saves of its encountering thread's state and restores at its end.
#[derive(Clone, Copy)]
pub(crate) struct Saved {
    team: *const Team,
    tid: u32,
    icvs: Icvs,
    ws: crate::worksharing::state::Saved,
    task: crate::task::state::Saved,
}

impl Saved {
    /// The team the thread was in.
    pub(crate) fn team(&self) -> *const Team {
        self.team
    }

    pub(crate) fn tid(&self) -> u32 {
        self.tid
    }

    pub(crate) fn icvs(&self) -> &Icvs {
        &self.icvs
    }
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
        // SAFETY: the slot only ever holds a leaked (never freed) descriptor of this thread.
        if let Some(desc) = unsafe { current::get().as_ref() } {
            desc.end_initial();
        }
    }
}

/// The end of an initial thread: see [`ThreadDesc::end_initial`].
extern "C" fn initial_thread_ended(p: *mut libc::c_void) {
    // SAFETY: the key's value is the ending thread's own descriptor (`register_initial`),
    // which is never freed.
    if let Some(desc) = unsafe { (p as *const ThreadDesc).as_ref() } {
        desc.end_initial();
    }
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

/// A handle on the calling thread's descriptor. Not `Send`: it must stay on its thread.
#[derive(Clone, Copy)]
pub struct Thread {
    desc: &'static ThreadDesc,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Thread {
    /// The calling thread; a thread the runtime does not know yet becomes a new initial thread.
    #[inline]
    pub fn current() -> Thread {
        let p = current::get();
        // SAFETY: the slot only ever holds a leaked (never freed) descriptor of this thread.
        match unsafe { p.as_ref() } {
            Some(desc) => Thread { desc, _not_send: std::marker::PhantomData },
            None => Self::register_initial(),
        }
    }

    /// The calling thread, which the compiler names by the gtid the runtime gave it. The
    /// thread-local slot is two loads (see `current.rs`), cheaper than the gtid table; debug
    /// builds check that the gtid is the caller's.
    #[inline]
    pub fn from_gtid(gtid: i32) -> Thread {
        let me = Thread::current();
        debug_assert!(
            Runtime::get().thread(gtid).is_none_or(|d| std::ptr::eq(d, me.desc)),
            "gtid {gtid} is not the calling thread's"
        );
        me
    }

    /// Whether the thread is in its own root team: not inside a parallel, serialized or teams
    /// region (a league's teams are at level 0 too, but each is a contention group of its
    /// own; a root team's group is its initial thread's).
    pub fn outside_regions(self) -> bool {
        let team = self.team();
        team.level == 0 && std::ptr::eq(team.cg, &self.desc().cg_threads)
    }

    /// The calling thread if the runtime knows it (never registers a new one).
    #[inline]
    pub fn peek() -> Option<Thread> {
        let p = current::get();
        // SAFETY: as in `current`.
        unsafe { p.as_ref() }.map(|desc| Thread { desc, _not_send: std::marker::PhantomData })
    }

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
            None => ThreadDesc::leak_registered(1, rt).unwrap_or_else(|| {
                crate::stderr_line(format_args!(
                    "oxiomp: error: more than {} threads use OpenMP at once; cannot continue",
                    crate::registry::MAX_THREADS
                ));
                std::process::abort()
            }),
        };
        desc.start_initial(rt);
        current::set(desc);
        end_at_thread_exit(desc);
        rt.adjust_busy(1);
        Thread { desc, _not_send: std::marker::PhantomData }
    }

    pub fn desc(&self) -> &'static ThreadDesc {
        self.desc
    }

    pub fn gtid(&self) -> i32 {
        self.desc.gtid
    }

    /// The thread's fork state (teams kept, pushed clauses).
    #[inline]
    pub(crate) fn fork_state(&self) -> &crate::team::ForkState {
        &self.desc.fork
    }

    /// The thread's worksharing state.
    #[inline]
    pub(crate) fn ws_state(&self) -> &crate::worksharing::state::ThreadState {
        &self.desc.ws
    }

    /// The thread's tasking state.
    #[inline]
    pub(crate) fn task_state(&self) -> &crate::task::state::ThreadState {
        &self.desc.tasks
    }

    /// The current team.
    #[inline]
    pub fn team(&self) -> &Team {
        // SAFETY: the team is set at registration and always points at a live team: teams
        // outlive the regions that run on them (hot teams are kept, serialized and root teams
        // are never freed while referenced).
        unsafe { &*self.desc.core.team.get() }
    }

    /// The thread number in the current team.
    #[inline]
    pub fn tid(&self) -> u32 {
        self.desc.core.tid.get()
    }

    /// The current task's ICVs.
    #[inline]
    pub fn icvs(&self) -> Icvs {
        self.desc.core.icvs.get()
    }

    /// Makes `icvs` the current task's ICVs; returns the previous ones (a task that runs with
    /// ICVs of its own, and gives the thread's back at its end).
    #[inline]
    pub(crate) fn replace_icvs(&self, icvs: Icvs) -> Icvs {
        self.desc.core.icvs.replace(icvs)
    }

    /// Changes the current task's ICVs with `f`; they are first saved if the running task
    /// borrowed the thread's ones (see `task::state::ThreadState::icv_save`).
    #[inline]
    pub fn change_icvs<R>(&self, f: impl FnOnce(&mut Icvs) -> R) -> R {
        let core = &self.desc.core;
        let mut icvs = core.icvs.get();
        let slot = self.task_state().replace_icv_save(std::ptr::null());
        // SAFETY: a non-null save slot is that of a task body running on this thread: on
        // `task::run_body`'s frame, or in an if(0) task's header, alive until `run_body` /
        // `complete_if0` resets the pointer.
        if let Some(slot) = unsafe { slot.as_ref() } {
            slot.put(icvs);
        }
        let r = f(&mut icvs);
        core.icvs.set(icvs);
        r
    }

    /// The ICVs of the implicit tasks of a region this thread forks: its own for a child
    /// (`Icvs::for_child`), with nthreads-var from a pushed `num_threads` list, which this
    /// consumes.
    #[inline]
    pub(crate) fn child_icvs(&self) -> Icvs {
        let mut c = self.icvs().for_child();
        if let Some((first, rest)) = self.fork_state().take_nthreads_rest().split_first() {
            c.nthreads = *first;
            c.nthreads_rest = rest;
        }
        c
    }

    /// The current implicit task's state, to restore after a nested region.
    #[inline]
    pub(crate) fn save(&self) -> Saved {
        let core = &self.desc.core;
        Saved {
            team: core.team.get(),
            tid: core.tid.get(),
            icvs: core.icvs.get(),
            ws: self.ws_state().save(),
            task: self.task_state().save(),
        }
    }

    #[inline]
    pub(crate) fn restore(&self, s: Saved) {
        let core = &self.desc.core;
        core.team.set(s.team);
        core.tid.set(s.tid);
        core.icvs.set(s.icvs);
        self.ws_state().restore(s.ws);
        self.task_state().restore(s.task);
    }

    /// The thread starts the implicit task of member `tid` of `team`, with `icvs`: its
    /// construct counters begin at zero, and its ICVs are its own.
    #[inline]
    pub(crate) fn begin_implicit_task(&self, team: &Team, tid: u32, icvs: Icvs) {
        let core = &self.desc.core;
        core.team.set(team);
        core.tid.set(tid);
        core.icvs.set(icvs);
        self.task_state().begin_implicit(team.implicit_task(tid));
        self.ws_state().begin_implicit();
    }

    /// Binds the thread to `place`, unless it is there already.
    pub(crate) fn bind(&self, place: u32) {
        let core = &self.desc.core;
        if core.place.get() == Some(place) {
            return;
        }
        if let Some(cpus) = Runtime::get().settings().places.places.get(place as usize)
            && crate::places::bind_current_thread(cpus)
        {
            core.place.set(Some(place));
        }
    }

    /// The affinity line the thread printed last (taken: give it back with
    /// `set_last_affinity`).
    #[inline]
    pub(crate) fn take_last_affinity(&self) -> Option<String> {
        self.desc.core.last_affinity.take()
    }

    #[inline]
    pub(crate) fn set_last_affinity(&self, line: Option<String>) {
        self.desc.core.last_affinity.set(line);
    }

    /// The thread was bound elsewhere (`kmp_set_affinity`): it is at no place now.
    pub fn forget_place(&self) {
        let core = &self.desc.core;
        core.place.set(None);
        core.bind_pending.set(false);
    }

    /// Whether the thread is inside a sections construct started with `__kmpc_next_section`.
    pub fn sections_open(&self) -> bool {
        self.ws_state().sections_open()
    }

    pub fn set_sections_open(&self, open: bool) {
        self.ws_state().set_sections_open(open);
    }

    /// `KMP_AFFINITY=reset`: the primary thread of an outermost region that ended gets the
    /// process's CPU set back, and is bound again when it next needs a place.
    #[cold]
    pub(crate) fn reset_binding(&self) {
        let core = &self.desc.core;
        if core.place.take().is_some() && crate::places::bind_current_thread(&Runtime::get().settings().mask)
        {
            core.bind_pending.set(self.icvs().bind != ProcBind::False);
        }
    }

    /// The place the thread is bound to; an initial thread whose binding is pending is bound
    /// first (see `Core::bind_pending`).
    #[inline]
    pub fn place(&self) -> Option<u32> {
        self.bind_if_pending();
        self.desc.core.place.get()
    }

    /// Binds an initial thread whose binding is pending (see `Core::bind_pending`).
    #[inline]
    pub(crate) fn bind_if_pending(&self) {
        if self.desc.core.bind_pending.replace(false) {
            self.bind(self.icvs().partition_start);
        }
    }
}

impl ThreadDesc {
    /// A new descriptor under a new gtid, recorded in the registry's table (None when the
    /// table is full). Its task numbers start at the gtid's base.
    fn leak_registered(is_initial: u32, rt: &Runtime) -> Option<&'static ThreadDesc> {
        // Workers: the hidden helpers' reserved gtids are not the program's threads.
        let limit = if is_initial == 1 {
            crate::registry::MAX_THREADS as u32
        } else {
            rt.thread_limit().saturating_add(rt.settings().hidden.reserved_gtids())
        };
        rt.register_new(limit, |gtid| ThreadDesc::leak_new(gtid, is_initial, rt.settings().icvs))
    }

    /// The descriptor of a hidden helper thread, under its reserved `gtid` (see `hidden`).
    pub(crate) fn leak_hidden_helper(gtid: i32, icvs: Icvs) -> &'static ThreadDesc {
        let d = ThreadDesc::leak_new(gtid, 0, icvs);
        // Relaxed: no thread yet; the registry publishes the descriptor.
        d.state.store(ThreadState::Idle as u32, Ordering::Relaxed);
        d
    }

    fn leak_new(gtid: i32, is_initial: u32, icvs: Icvs) -> &'static ThreadDesc {
        Box::leak(Box::new(ThreadDesc {
            gtid,
            os_tid: AtomicI32::new(0),
            is_initial: AtomicU32::new(is_initial),
            state: AtomicU32::new(ThreadState::Work as u32),
            go: CachePadded::new(Mailbox {
                epoch: EpochFlag::new(0),
                assignment: UnsafeCell::new(Assignment { team: std::ptr::null(), tid: 0 }),
            }),
            joined: CachePadded::new(Report {
                epoch: EpochFlag::new(0),
                help_team: AtomicPtr::new(std::ptr::null_mut()),
                helping: AtomicBool::new(false),
            }),
            core: Core::new(icvs),
            fork: Default::default(),
            ws: Default::default(),
            tasks: crate::task::state::ThreadState::new(gtid),
            cg_threads: AtomicU32::new(1),
            task_cache: crate::task::BlockCache::new(),
            thread: parking_lot::Mutex::new(None),
        }))
    }

    /// Gives the descriptor's per-thread state back its starting values, but for what outlives
    /// a thread (the serialized regions' teams, the root team, the task numbers given out, the
    /// victim selection). `drop_old`: what it held is dropped (false: forgotten, in a fork's
    /// child, where a vanished thread may have left it half-written; the teams are forgotten
    /// then too).
    ///
    /// Called by the thread that takes the descriptor over, before it records the thread's id
    /// (see `Runtime`'s note): no other thread looks at this state.
    fn restart_state(&self, icvs: Icvs, drop_old: bool) {
        let c = &self.core;
        c.team.set(std::ptr::null());
        c.tid.set(0);
        c.icvs.set(icvs);
        c.place.set(None);
        c.bind_pending.set(false);
        let line = c.last_affinity.take();
        if !drop_old {
            std::mem::forget(line);
            // Its root team too: the next initial thread makes a new one.
            c.root_team.set(std::ptr::null_mut());
        }
        self.fork.restart(drop_old);
        self.ws.restart(drop_old);
        self.tasks.restart(drop_old);
    }

    /// A new OS thread serves the descriptor (a worker's): what belongs to an OS thread, not
    /// to the descriptor, starts afresh: a reused descriptor's previous thread left its own
    /// binding and affinity line (this thread inherited its creator's CPU set, which `bind`
    /// must replace), and the victim selection is stirred.
    fn new_os_thread(&self) {
        self.core.place.set(None);
        self.core.last_affinity.set(None);
        self.tasks.stir_rng(self.gtid);
    }

    /// Sets the descriptor up for the initial thread calling this (a new descriptor, or one an
    /// ended initial thread left): fresh per-thread state (what outlives a thread is kept: the root
    /// team's memory, the serialized regions' teams, the task numbers given out), its root
    /// team reset, the thread's id recorded last (see `Runtime`'s note for debuggers).
    fn start_initial(&'static self, rt: &Runtime) {
        let icvs = rt.settings().icvs;
        let root = self.core.root_team.get();
        self.restart_state(icvs, true);
        self.tasks.stir_rng(self.gtid);
        let root: &'static mut Team = if root.is_null() {
            Box::leak(Team::new_root(self.gtid, &self.cg_threads))
        } else {
            // SAFETY: the root team belongs to this descriptor; the thread that used it ended
            // (`end_initial`) with every region of it over, and nothing else keeps a reference
            // to an ended thread's root team.
            let root = unsafe { &mut *root };
            root.reset_root(self.gtid, &self.cg_threads);
            root
        };
        self.core.root_team.set(root);
        self.core.team.set(root);
        self.tasks.begin_implicit(root.implicit_task(0));
        // With binding requested, an initial thread is bound to the first place of its
        // partition once it needs a place (`Thread::place`).
        self.core.bind_pending.set(icvs.bind != ProcBind::False);
        // Relaxed: a debugger reads these of a stopped process; the registry's lock orders
        // them for the next thread the descriptor serves.
        self.cg_threads.store(1, Ordering::Relaxed);
        self.state.store(ThreadState::Work as u32, Ordering::Relaxed);
        // SAFETY: gettid has no preconditions.
        self.os_tid.store(unsafe { libc::gettid() }, Ordering::Relaxed);
    }

    /// The initial thread this descriptor serves ends (the pthread key's destructor, on that
    /// thread). Its implicit region ends as a region does: the tasks it generated complete
    /// (deferred ones run here, detached ones are waited for), then its workers go back to the
    /// pool. Unless it is the process's first thread (whose threadprivate copies are the
    /// variables themselves), its threadprivate copies are destroyed (their destructors may
    /// use OpenMP: tasks and workers are handled again after them) and the descriptor waits
    /// for the next thread. The thread's slot is emptied last: should it call the runtime
    /// again (a later destructor), it registers anew. A thread that ends inside a region
    /// (`pthread_exit` there) keeps its descriptor: the region's teams still point at it.
    fn end_initial(&'static self) {
        let rt = Runtime::get();
        let me = Thread { desc: self, _not_send: std::marker::PhantomData };
        let inside = !me.outside_regions();
        let end_region = || {
            if !inside {
                me.team().finish_tasks(me);
            }
            self.release_hot_teams(rt);
        };
        end_region();
        if self.gtid != 0 && !inside {
            crate::threadprivate::thread_ended(self.gtid);
            end_region();
        }
        rt.adjust_busy(-1);
        // Relaxed: see `start_initial`.
        self.state.store(ThreadState::Idle as u32, Ordering::Relaxed);
        self.os_tid.store(0, Ordering::Relaxed);
        if self.gtid != 0 && !inside {
            current::clear();
            rt.thread_ended(self);
        }
    }

    /// Hands the worker its next implicit task (called by the owning master, the worker idle).
    /// Returns the epoch to wait for at the join.
    pub(crate) fn assign(&self, team: *const Team, tid: u32) -> u32 {
        // SAFETY: the worker is idle (it finished the previous epoch, which the master observed
        // through `joined`, or it was just taken from the pool), so nobody reads the assignment
        // until `go` advances below.
        unsafe { *self.go.assignment.get() = Assignment { team, tid } };
        let e = self.go.epoch.load().wrapping_add(1);
        self.go.epoch.set(e);
        e
    }

    /// The cache of task blocks this thread allocates from.
    pub(crate) fn task_cache(&self) -> &crate::task::BlockCache {
        &self.task_cache
    }

    /// Runs one task of the team this worker last left, if its primary thread still lets it.
    fn help_previous(&self, me: Thread) -> bool {
        // Relaxed: a cheap first look; once withdrawn the team never comes back.
        let r = &self.joined;
        if r.help_team.load(Ordering::Relaxed).is_null() {
            return false;
        }
        // Dekker with `stop_helping`: SeqCst store then load here, SeqCst store then load
        // there: either we see the team withdrawn, or the master sees us helping and waits.
        r.helping.store(true, Ordering::SeqCst);
        let ran = !r.help_team.load(Ordering::SeqCst).is_null() && crate::task::help_barrier(me);
        // Release: our last use of the team happens-before the master's load that sees false.
        r.helping.store(false, Ordering::Release);
        ran
    }

    /// Whether the descriptor is an initial thread's.
    pub fn is_initial(&self) -> bool {
        // Relaxed: changes only in a fork's child, where this is the only thread.
        self.is_initial.load(Ordering::Relaxed) == 1
    }

    /// In the child of a fork, on the forking thread (the only one left): its teams are
    /// forgotten (their workers are gone); if it forked inside a region, or is a worker, it
    /// becomes the initial thread of a fresh runtime: level 0, a root team of its own, the
    /// settings' ICVs, as libomp's child does. (The child must not return from the region
    /// it forked in: the region's other threads are not there to end it.) Otherwise it goes
    /// on as it was, with the ICVs it had.
    pub(crate) fn restart_in_fork_child(&'static self, rt: &Runtime) {
        self.forget_after_fork(&mut Vec::new());
        let me = Thread { desc: self, _not_send: std::marker::PhantomData };
        if self.is_initial() && me.outside_regions() {
            return;
        }
        // The region's frames on this thread's stack still point at its teams: forgotten, not
        // freed.
        self.forget_state_after_fork(rt);
        // Relaxed: see `is_initial`.
        self.is_initial.store(1, Ordering::Relaxed);
        self.start_initial(rt);
        end_at_thread_exit(self);
    }

    /// Withdraws the team this worker may help (its tasks are all complete) and waits until
    /// the worker no longer looks at it.
    pub(crate) fn stop_helping(&self) {
        self.joined.help_team.store(std::ptr::null_mut(), Ordering::SeqCst);
        while self.joined.helping.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
    }

    /// Gives the workers of the teams this thread kept for its next regions back to the pool
    /// (the thread ends, or pauses). Called by the owning thread.
    pub(crate) fn release_hot_teams(&self, rt: &Runtime) {
        for team in self.fork.take_all_hot().into_iter().flatten() {
            rt.release_workers(team.workers());
        }
    }

    /// In the child of a fork (the only thread left): drops this descriptor's hot teams,
    /// appending their workers to `out`, and forgets the handle of its thread, which the child
    /// does not have (joining or detaching it would act on a thread that is not there). The
    /// teams' memory is left alone: dropping it could meet state a vanished thread left
    /// half-written.
    pub(crate) fn forget_after_fork(&self, out: &mut Vec<&'static ThreadDesc>) {
        for team in self.fork.take_all_hot().into_iter().flatten() {
            out.extend(team.workers());
            std::mem::forget(team);
        }
        if let Some(mut h) = self.thread.try_lock() {
            std::mem::forget(h.take());
        }
    }

    /// In the child of a fork, for a descriptor whose thread is not there (or the forking
    /// thread, restarting): forgets all the thread left in the descriptor, without freeing
    /// any of it (see `forget_after_fork`: the thread may have been in the middle of changing
    /// it): its teams (hot, serialized, root), its whole per-thread state (but the task numbers given
    /// out), the team it was helping, its cache's free lists. A new thread the descriptor
    /// serves starts from scratch.
    pub(crate) fn forget_state_after_fork(&self, rt: &Runtime) {
        self.forget_after_fork(&mut Vec::new());
        self.restart_state(rt.settings().icvs, false);
        // Relaxed: the only thread.
        self.joined.help_team.store(std::ptr::null_mut(), Ordering::Relaxed);
        self.joined.helping.store(false, Ordering::Relaxed);
        self.task_cache.forget_after_fork();
    }

    /// Waits until the worker has finished epoch `e`, calling `help` meanwhile.
    pub(crate) fn wait_joined(&self, e: u32, help: &mut dyn FnMut() -> bool, spinning: &mut bool) {
        self.joined.epoch.wait_reach_helping(e, help, spinning);
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
        None => ThreadDesc::leak_registered(0, rt).ok_or(SpawnError::TableFull)?,
    };
    // The epoch the thread waits beyond: read before the caller can assign work (after this
    // returns), which advances it.
    let base = desc.go.epoch.load();
    let gtid = desc.gtid;
    // SAFETY: gettid has no preconditions.
    let creator = unsafe { libc::gettid() };
    let spawned = std::thread::Builder::new()
        .name(format!("oxiomp-{gtid}"))
        .stack_size(rt.worker_stacksize())
        .spawn(move || worker_main(desc, base, creator));
    match spawned {
        Ok(h) => {
            *desc.thread.lock() = Some(h);
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
            current::set(desc);
            // Relaxed: for display by debuggers and tools only.
            // SAFETY: gettid has no preconditions.
            desc.os_tid.store(unsafe { libc::gettid() }, Ordering::Relaxed);
            desc.new_os_thread();
            let me = Thread { desc, _not_send: std::marker::PhantomData };
            me.begin_implicit_task(team, tid, rt.settings().icvs);
            if let Some(cpus) = cpus {
                crate::places::bind_current_thread_reporting(
                    &cpus,
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

/// Asks idle worker `w` (reserved by the caller: in no team, out of the pool) to end its
/// thread, and waits until the thread has ended (its thread-local destructors too, which may
/// still call into the runtime through the descriptor), so that the descriptor can serve a
/// new thread.
pub(crate) fn retire_worker(w: &'static ThreadDesc) {
    let e = w.assign(std::ptr::null(), 0);
    w.joined.epoch.wait_reach(e);
    if let Some(h) = w.thread.lock().take() {
        let _ = h.join();
    }
}

/// The body of a worker thread started by the thread whose OS id is `creator`.
fn worker_main(desc: &'static ThreadDesc, base_epoch: u32, creator: i32) {
    oxiomp_instrument::thread_started_by(creator);
    current::set(desc);
    // Relaxed: for display by debuggers and tools only.
    // SAFETY: gettid has no preconditions.
    desc.os_tid.store(unsafe { libc::gettid() }, Ordering::Relaxed);
    desc.new_os_thread();
    oxiomp_instrument::worker_loop_enter();
    let me = Thread { desc, _not_send: std::marker::PhantomData };
    let mut epoch = base_epoch;
    // Until the primary thread of the previous region has drained its tasks and stopped us,
    // this thread helps run them while it waits for new work (see `help_previous`).
    let mut help = || desc.help_previous(me);
    loop {
        epoch = epoch.wrapping_add(1);
        desc.state.store(ThreadState::Idle as u32, Ordering::Relaxed);
        oxiomp_instrument::barrier_fork_enter();
        let mut spinning = false;
        desc.go.epoch.wait_reach_helping(epoch, &mut help, &mut spinning);
        crate::barrier::trace_end(State::BarrierFork, spinning);
        desc.state.store(ThreadState::Work as u32, Ordering::Relaxed);
        // SAFETY: `go` reached `epoch` (Acquire), so the master's write of the assignment
        // happened-before this read, and it will not write again before we set `joined`.
        let a = unsafe { *desc.go.assignment.get() };
        if a.team.is_null() {
            // `retire_worker`: the thread ends. Teams it kept for nested regions give their
            // workers back first; after `joined` it touches the descriptor no more.
            desc.release_hot_teams(Runtime::get());
            oxiomp_instrument::worker_loop_exit();
            desc.state.store(ThreadState::Idle as u32, Ordering::Relaxed);
            // Relaxed: for display only.
            desc.os_tid.store(0, Ordering::Relaxed);
            desc.joined.epoch.set(epoch);
            return;
        }
        // SAFETY: the team stays alive until the master has seen our join below, and (for
        // helping afterwards) until it closed the team's task pool, which waits for helpers.
        let team: &'static Team = unsafe { &*a.team };
        team.run_member(me, a.tid);
        oxiomp_instrument::barrier_join_enter();
        // Relaxed: the master reads it after our `joined` (Release) below.
        desc.joined.help_team.store(team as *const Team as *mut Team, Ordering::Relaxed);
        desc.joined.epoch.set(epoch);
        oxiomp_instrument::barrier_join_exit();
    }
}

/// The descriptor layout docs/architecture.md gives debuggers (*Descriptor layout*), on
/// x86-64: a change of it must change that table too.
#[cfg(all(test, not(loom), target_arch = "x86_64"))]
mod layout {
    use super::*;
    use crate::registry::Runtime;
    use crate::task::Task;
    use std::mem::offset_of;

    #[test]
    fn debugger_visible_offsets_are_as_documented() {
        assert_eq!(
            [
                offset_of!(Runtime, magic),
                offset_of!(Runtime, thread_count),
                offset_of!(Runtime, thread_capacity)
            ],
            [0, 8, 12]
        );
        assert_eq!(offset_of!(Runtime, threads), 16);
        assert_eq!(
            [
                offset_of!(ThreadDesc, gtid),
                offset_of!(ThreadDesc, os_tid),
                offset_of!(ThreadDesc, is_initial),
                offset_of!(ThreadDesc, state),
            ],
            [0, 4, 8, 12]
        );
        assert_eq!(offset_of!(ThreadDesc, core) + offset_of!(Core, team), 384);
        assert_eq!(offset_of!(ThreadDesc, core) + offset_of!(Core, tid), 392);
        assert_eq!(offset_of!(ThreadDesc, tasks) + crate::task::state::ThreadState::TASK_OFFSET, 536);
        assert_eq!(
            [
                offset_of!(Team, nthreads),
                offset_of!(Team, level),
                offset_of!(Team, active_level),
                offset_of!(Team, parent_tid),
                offset_of!(Team, parent),
                offset_of!(Team, master_gtid),
                offset_of!(Team, team_num),
                offset_of!(Team, num_teams),
                offset_of!(Team, entry),
                offset_of!(Team, ident),
            ],
            [0, 4, 8, 12, 16, 24, 28, 32, 40, 48]
        );
        assert_eq!(
            [
                offset_of!(Task, kind),
                offset_of!(Task, flags),
                offset_of!(Task, state),
                offset_of!(Task, id),
                offset_of!(Task, parent),
                offset_of!(Task, root),
                offset_of!(Task, team),
                offset_of!(Task, depth),
            ],
            [0, 4, 8, 16, 32, 40, 48, 64]
        );
        assert_eq!(crate::task::descriptor::HEADER, 320);
    }
}
