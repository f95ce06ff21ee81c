//! Thread descriptors, the handle on the calling thread's, and the thread-local pointer to
//! it; the hand-over of work between a primary thread and its workers. A descriptor holds
//! each subsystem's per-thread state (the fork's, worksharing's, tasking's), which the
//! subsystems reach through the handle. How threads come and go (registration, the workers'
//! loop) is `lifecycle`'s.

use std::cell::{Cell, UnsafeCell};

use crossbeam_utils::CachePadded;

use crate::debug::layout::Field;
use crate::debug::state::ompt_state;
use crate::icv::{Icvs, ProcBind};
use crate::places::PlaceList;
use crate::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use crate::sync::wait::EpochFlag;
use crate::task::cache::BlockCache;
use crate::team::descriptor::Team;
use crate::team::fork_state::{ForkState, Saved};

oxiomp_instrument::thread_slot!(mod current: *const ThreadDesc = "oxiomp_current_thread";);

/// Records `desc` as the calling thread's descriptor (when the thread is registered), and its
/// block cache as the thread's own.
#[inline]
pub(crate) fn set_current(desc: &'static ThreadDesc) {
    current::set(desc);
    crate::task::cache::set_own(&desc.task_cache);
}

/// Forgets the calling thread's descriptor (an initial thread at its end gives it up).
pub(crate) fn clear_current() {
    current::set(std::ptr::null());
    crate::task::cache::set_own(std::ptr::null());
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
    /// What the thread does: an `ompt_state_t` value (`debug::state::ompt_state`), kept
    /// while a state keeper is installed (`crate::debug`); otherwise only set as a thread
    /// begins (work) and ends (idle).
    pub state: AtomicU32,
    /// What the thread waits for in a wait state: the lock's, critical section's or ordered
    /// region's address, or its team's for a barrier (0: none).
    pub wait_id: AtomicU64,
    /// The `pthread_t` of the thread on the descriptor (0 between threads).
    pub pthread: AtomicU64,
    /// What the master writes and the worker reads at a fork: one cache line.
    go: CachePadded<Mailbox>,
    /// What the worker writes and the master reads at a join: one cache line.
    joined: CachePadded<Report>,
    /// What the thread runs now (team, thread number, ICVs) and where it is bound.
    core: Core,
    /// Its tasks.
    tasks: crate::task::state::ThreadState,
    /// The regions it forks: teams kept for later, pushed clauses.
    fork: ForkState,
    /// Its worksharing constructs.
    ws: crate::worksharing::state::ThreadState,
    /// What it does, as a debugger sees it (kept while a state keeper is installed).
    debug: crate::debug::state::DebugState,
    /// Threads in the contention group this thread is the initial thread of (itself included).
    pub(crate) cg_threads: AtomicU32,
    /// Free task blocks of tasks this thread created.
    task_cache: BlockCache,
    /// A worker's OS thread, joined when it retires (before its descriptor serves another).
    thread: parking_lot::Mutex<Option<std::thread::JoinHandle<()>>>,
    /// A tool's word for the thread (OMPT's thread data: see `tool`).
    pub tool: crate::tool::ToolData,
    /// What the thread does and waits for, for a hang report (kept while a watch is on).
    pub watch: crate::debug::watch::Watch,
}

// SAFETY: the per-thread states (`core`, `fork`, `ws`, `tasks`: `Cell`s) are private to this
// module and reached only through `Thread`, which only the descriptor's own thread holds (it
// is made from the thread-local pointer, or by `Thread::on_own_thread`, whose caller vouches
// that the descriptor is its own; it is not `Send`), or, in a fork's child, by the one
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

/// A handle on the calling thread's descriptor. Not `Send`: it must stay on its thread.
#[derive(Clone, Copy)]
pub struct Thread {
    desc: &'static ThreadDesc,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Thread {
    /// The handle on `desc`.
    ///
    /// # Safety
    /// `desc` is the calling thread's descriptor (the handle reaches the thread's state,
    /// which only its own thread touches: see `ThreadDesc`'s `Sync`).
    #[inline]
    pub(crate) unsafe fn on_own_thread(desc: &'static ThreadDesc) -> Thread {
        Thread { desc, _not_send: std::marker::PhantomData }
    }

    /// Whether the thread is in its own root team: not inside a parallel, serialized or teams
    /// region (a league's teams are at level 0 too, but each is a contention group of its
    /// own; a root team's group is its initial thread's).
    pub fn outside_regions(self) -> bool {
        let team = self.team();
        team.level == 0 && std::ptr::eq(team.cg, &self.desc().cg_threads)
    }

    /// The thread's state as a debugger sees it (`crate::debug`).
    #[inline]
    pub(crate) fn debug(self) -> &'static crate::debug::state::DebugState {
        &self.desc.debug
    }

    /// The calling thread if the runtime knows it (never registers a new one).
    #[inline]
    pub fn peek() -> Option<Thread> {
        let p = current::get();
        // SAFETY: the slot only ever holds null or a leaked (never freed) descriptor of this
        // thread (`set_current`).
        unsafe { p.as_ref() }.map(|desc| Thread { desc, _not_send: std::marker::PhantomData })
    }

    pub fn desc(&self) -> &'static ThreadDesc {
        self.desc
    }

    pub fn gtid(&self) -> i32 {
        self.desc.gtid
    }

    /// The thread's fork state (teams kept, pushed clauses).
    #[inline]
    pub(crate) fn fork_state(&self) -> &ForkState {
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

    /// The current team, or None for a worker that has not had one yet.
    #[inline]
    pub(crate) fn team_if_any(&self) -> Option<&Team> {
        // SAFETY: as in `team`, when not null.
        unsafe { self.desc.core.team.get().as_ref() }
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

    /// Binds the thread to `place` of `places`, unless it is there already.
    pub(crate) fn bind(&self, place: u32, places: &PlaceList) {
        let core = &self.desc.core;
        if core.place.get() == Some(place) {
            return;
        }
        if let Some(cpus) = places.places.get(place as usize)
            && crate::places::bind_current_thread(cpus, self.gtid())
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
    /// process's CPU set (`mask`) back, and is bound again when it next needs a place.
    #[cold]
    pub(crate) fn reset_binding(&self, mask: &[u32]) {
        let core = &self.desc.core;
        if core.place.take().is_some() && crate::places::bind_current_thread(mask, self.gtid()) {
            core.bind_pending.set(self.icvs().bind != ProcBind::False);
        }
    }

    /// The place the thread is bound to, of the list `places` gives; an initial thread whose
    /// binding is pending is bound first (see `Core::bind_pending`).
    #[inline]
    pub fn place(&self, places: impl FnOnce() -> &'static PlaceList) -> Option<u32> {
        self.bind_if_pending(places);
        self.desc.core.place.get()
    }

    /// Binds an initial thread whose binding is pending (see `Core::bind_pending`) to its
    /// place of the list `places` gives (asked for only then).
    #[inline]
    pub(crate) fn bind_if_pending(&self, places: impl FnOnce() -> &'static PlaceList) {
        if self.desc.core.bind_pending.replace(false) {
            self.bind(self.icvs().partition_start, places());
        }
    }
}

impl ThreadDesc {
    /// The descriptor of a hidden helper thread, under its reserved `gtid` (see `hidden`).
    pub(crate) fn leak_hidden_helper(gtid: i32, icvs: Icvs) -> &'static ThreadDesc {
        let d = ThreadDesc::leak_new(gtid, 0, icvs);
        // Relaxed: no thread yet; the registry publishes the descriptor.
        d.state.store(ompt_state::IDLE, Ordering::Relaxed);
        d
    }

    /// A new descriptor under `gtid` (never freed), for an initial thread (`is_initial` 1) or a
    /// worker (0).
    pub(crate) fn leak_new(gtid: i32, is_initial: u32, icvs: Icvs) -> &'static ThreadDesc {
        Box::leak(Box::new(ThreadDesc {
            gtid,
            os_tid: AtomicI32::new(0),
            is_initial: AtomicU32::new(is_initial),
            state: AtomicU32::new(ompt_state::WORK_SERIAL),
            wait_id: AtomicU64::new(0),
            pthread: AtomicU64::new(0),
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
            debug: Default::default(),
            watch: Default::default(),
            tasks: crate::task::state::ThreadState::new(gtid),
            cg_threads: AtomicU32::new(1),
            task_cache: BlockCache::new(),
            thread: parking_lot::Mutex::new(None),
            tool: crate::tool::ToolData::new(),
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
    pub(crate) fn new_os_thread(&self) {
        self.core.place.set(None);
        self.core.last_affinity.set(None);
        self.tasks.stir_rng(self.gtid);
    }

    /// The root team an earlier initial thread left in the descriptor, if any (see
    /// [`begin_initial`](Self::begin_initial)). Called by the initial thread taking the
    /// descriptor over.
    pub(crate) fn root_team(&self) -> Option<*mut Team> {
        let root = self.core.root_team.get();
        (!root.is_null()).then_some(root)
    }

    /// Sets the descriptor up for the initial thread calling this, with `root` as its root
    /// team (the implicit region's): fresh per-thread state with the settings' `icvs` (what
    /// outlives a thread is kept: the root team's memory, the serialized regions' teams, the
    /// task numbers given out), the thread's id recorded last (see `Runtime`'s note for
    /// debuggers).
    pub(crate) fn begin_initial(&'static self, icvs: Icvs, root: &'static Team) {
        self.restart_state(icvs, true);
        self.tasks.stir_rng(self.gtid);
        self.core.root_team.set(root as *const Team as *mut Team);
        self.core.team.set(root);
        self.tasks.begin_implicit(root.implicit_task(0));
        // With binding requested, an initial thread is bound to the first place of its
        // partition once it needs a place (`Thread::place`).
        self.core.bind_pending.set(icvs.bind != ProcBind::False);
        // Relaxed: a debugger reads these of a stopped process; the registry's lock orders
        // them for the next thread the descriptor serves.
        self.cg_threads.store(1, Ordering::Relaxed);
        self.state.store(ompt_state::WORK_SERIAL, Ordering::Relaxed);
        self.set_os_thread();
    }

    /// Records the calling thread as the one on the descriptor: its OS thread id and its
    /// `pthread_t`, which debuggers and tools look threads up by. Relaxed: for display by
    /// debuggers and tools only.
    pub(crate) fn set_os_thread(&self) {
        // SAFETY: gettid and pthread_self have no preconditions.
        let (tid, me) = unsafe { (libc::gettid(), libc::pthread_self()) };
        self.os_tid.store(tid, Ordering::Relaxed);
        self.pthread.store(me, Ordering::Relaxed);
    }

    /// No thread is on the descriptor any more (see [`set_os_thread`](Self::set_os_thread)).
    pub(crate) fn clear_os_thread(&self) {
        self.os_tid.store(0, Ordering::Relaxed);
        self.pthread.store(0, Ordering::Relaxed);
    }

    /// Whether the descriptor is an initial thread's.
    pub fn is_initial(&self) -> bool {
        // Relaxed: changes only in a fork's child, where this is the only thread.
        self.is_initial.load(Ordering::Relaxed) == 1
    }

    /// The cache of task blocks this thread allocates from.
    pub(crate) fn task_cache(&self) -> &BlockCache {
        &self.task_cache
    }

    /// The OS thread serving this worker descriptor, to join when it retires.
    pub(crate) fn set_join_handle(&self, h: std::thread::JoinHandle<()>) {
        *self.thread.lock() = Some(h);
    }

    pub(crate) fn take_join_handle(&self) -> Option<std::thread::JoinHandle<()>> {
        self.thread.lock().take()
    }

    // The hand-over between a primary thread and its worker: the master `assign`s work and
    // advances `go`; the worker, in `wait_for_work`, sees the epoch and runs it, then
    // `report_joined`s the epoch back, which the master awaits (`wait_joined`). After the
    // join the worker may still help with the tasks of the team it left (`help_previous`)
    // until the master withdraws it (`stop_helping`).

    /// The last epoch of `go` (a new worker waits for the one after it).
    pub(crate) fn fork_epoch(&self) -> u32 {
        self.go.epoch.load()
    }

    /// Hands the worker its next implicit task (called by the owning master, the worker idle;
    /// a null team asks the worker to end). Returns the epoch to wait for at the join.
    pub(crate) fn assign(&self, team: *const Team, tid: u32) -> u32 {
        // SAFETY: the worker is idle (it finished the previous epoch, which the master observed
        // through `joined`, or it was just taken from the pool), so nobody reads the assignment
        // until `go` advances below.
        unsafe { *self.go.assignment.get() = Assignment { team, tid } };
        let e = self.go.epoch.load().wrapping_add(1);
        self.go.epoch.set(e);
        e
    }

    /// The worker waits for epoch `epoch` of `go`, calling `help` meanwhile, and returns what
    /// it was assigned (a null team: end the thread). Called by the worker.
    pub(crate) fn wait_for_work(
        &self,
        epoch: u32,
        help: &mut dyn crate::sync::wait::Helper,
        spinning: &mut bool,
    ) -> (*const Team, u32) {
        self.go.epoch.wait_reach_helping(epoch, help, spinning);
        // SAFETY: `go` reached `epoch` (Acquire), so the master's write of the assignment
        // happened-before this read, and it will not write again before we report the join.
        let a = unsafe { *self.go.assignment.get() };
        (a.team, a.tid)
    }

    /// The worker has finished epoch `epoch`, and may help with the tasks of `help_team` (null:
    /// none) until the master withdraws it. Called by the worker; after it, the worker touches
    /// `team` only through `help_previous`.
    pub(crate) fn report_joined(&self, epoch: u32, help_team: *const Team) {
        // Relaxed: the master reads it after our `joined` (Release) below.
        self.joined.help_team.store(help_team as *mut Team, Ordering::Relaxed);
        self.joined.epoch.set(epoch);
    }

    /// Waits until the worker has finished epoch `e`, calling `help` meanwhile.
    pub(crate) fn wait_joined(&self, e: u32, help: &mut dyn crate::sync::wait::Helper, spinning: &mut bool) {
        self.joined.epoch.wait_reach_helping(e, help, spinning);
    }

    /// Waits until the worker has finished epoch `e`.
    pub(crate) fn wait_reported(&self, e: u32) {
        self.joined.epoch.wait_reach(e);
    }

    /// Runs `help` (one task of the team this worker last left) if the team's primary thread
    /// still lets it. Called by the worker.
    pub(crate) fn help_previous(&self, help: impl FnOnce() -> bool) -> bool {
        // Relaxed: a cheap first look; once withdrawn the team never comes back.
        let r = &self.joined;
        if r.help_team.load(Ordering::Relaxed).is_null() {
            return false;
        }
        // Dekker with `stop_helping`: SeqCst store then load here, SeqCst store then load
        // there: either we see the team withdrawn, or the master sees us helping and waits.
        r.helping.store(true, Ordering::SeqCst);
        let ran = !r.help_team.load(Ordering::SeqCst).is_null() && help();
        // Release: our last use of the team happens-before the master's load that sees false.
        r.helping.store(false, Ordering::Release);
        ran
    }

    /// Withdraws the team this worker may help (its tasks are all complete) and waits until
    /// the worker no longer looks at it.
    pub(crate) fn stop_helping(&self) {
        self.joined.help_team.store(std::ptr::null_mut(), Ordering::SeqCst);
        while self.joined.helping.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
    }

    /// In the child of a fork (the only thread left): forgets this descriptor's hot teams and
    /// the handle of its thread, which the child does not have (joining or detaching it would
    /// act on a thread that is not there). The teams' memory is left alone: dropping it could
    /// meet state a vanished thread left half-written.
    pub(crate) fn forget_after_fork(&self) {
        for team in self.fork.take_all_hot() {
            std::mem::forget(team);
        }
        if let Some(mut h) = self.thread.try_lock() {
            std::mem::forget(h.take());
        }
    }

    /// In the child of a fork, for a descriptor whose thread is not there (or the forking
    /// thread, restarting): forgets all the thread left in the descriptor, without freeing
    /// any of it (see `forget_after_fork`: the thread may have been in the middle of changing
    /// it): its teams (hot, serialized, root), its whole per-thread state (but the task
    /// numbers given out), the team it was helping, its cache's free lists, what the hang
    /// watch kept of it. A new thread the descriptor serves starts from scratch, with `icvs`.
    pub(crate) fn forget_state_after_fork(&self, icvs: Icvs) {
        self.forget_after_fork();
        self.restart_state(icvs, false);
        // Relaxed: the only thread.
        self.joined.help_team.store(std::ptr::null_mut(), Ordering::Relaxed);
        self.joined.helping.store(false, Ordering::Relaxed);
        self.task_cache.forget_after_fork();
        self.watch.forget_after_fork();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    #[test]
    fn each_thread_has_its_own_current_slot() {
        // Any distinct non-null addresses serve as descriptors here: the slot only stores them.
        for v in [1usize, 2] {
            let addr = Box::leak(Box::new(v)) as *const usize as usize;
            std::thread::spawn(move || {
                let p = addr as *const super::ThreadDesc;
                assert!(super::current::get().is_null(), "a new thread's slot starts empty");
                super::current::set(p);
                assert_eq!(super::current::get(), p);
            })
            .join()
            .unwrap();
        }
    }
}

/// The thread descriptor's fields a debugger reads (`crate::debug::layout`).
pub(crate) const DEBUG_FIELDS: [Field; 13] = [
    Field::size_of("thread", std::mem::size_of::<ThreadDesc>()),
    crate::debug_field!("thread.gtid", ThreadDesc, gtid),
    crate::debug_field!("thread.os_tid", ThreadDesc, os_tid),
    crate::debug_field!("thread.is_initial", ThreadDesc, is_initial),
    crate::debug_field!("thread.state", ThreadDesc, state),
    crate::debug_field!("thread.wait_id", ThreadDesc, wait_id),
    crate::debug_field!("thread.pthread", ThreadDesc, pthread),
    crate::debug_field!("thread.team", ThreadDesc, core.team),
    crate::debug_field!("thread.tid", ThreadDesc, core.tid),
    crate::debug_field!("thread.icvs", ThreadDesc, core.icvs),
    Field::new(
        "thread.task",
        std::mem::offset_of!(ThreadDesc, tasks) + crate::task::state::ThreadState::TASK_OFFSET,
        std::mem::size_of::<usize>(),
    ),
    crate::debug_field!("thread.tool", ThreadDesc, tool),
    crate::debug_field!("thread.cg_threads", ThreadDesc, cg_threads),
];

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
        assert_eq!([offset_of!(ThreadDesc, wait_id), offset_of!(ThreadDesc, pthread)], [16, 24]);
        assert_eq!(offset_of!(Team, implicit_tasks), 64);
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
                offset_of!(Team, encountering),
            ],
            [0, 4, 8, 12, 16, 24, 28, 32, 40, 48, 56]
        );
        assert_eq!(
            [
                offset_of!(Task, head.kind),
                offset_of!(Task, head.flags),
                offset_of!(Task, head.state),
                offset_of!(Task, head.id),
                offset_of!(Task, head.parent),
                offset_of!(Task, head.root),
                offset_of!(Task, head.team),
                offset_of!(Task, head.depth),
                offset_of!(Task, head.tool),
            ],
            [0, 4, 8, 16, 32, 40, 48, 64, 88]
        );
        assert_eq!([offset_of!(Task, head.size), offset_of!(Task, head.frame)], [28, 72]);
        assert_eq!(std::mem::size_of::<crate::task::descriptor::ToolFrame>(), 32);
        assert_eq!(crate::task::descriptor::HEADER, 320);
        // The counter its owner writes and the one other threads increment are on separate
        // cache lines.
        assert_ne!(offset_of!(Task, rest.created) / 64, offset_of!(Task, rest.completed) / 64);
    }
}
