//! Teams and the fork/join of parallel regions.
//!
//! A thread that forks keeps the team it built ("hot team", one per nesting level), with its
//! workers reserved: the next region of the same size at that level reuses team, workers and
//! barrier as they are, and the fork costs one epoch store per worker. A different size gives
//! workers back to, or takes them from, the runtime's pool.
//!
//! Fork: the primary thread fills in the team (parent, level, ICVs, job), then advances each
//! worker's `go` epoch (Release); each worker sees it (Acquire), runs its implicit task, and sets
//! its `joined` epoch (Release), which the primary waits for (Acquire) at the join. Between
//! those two hand-overs the team is only read, so it needs no lock.

mod fork_state;

use std::ffi::c_void;

use crate::barrier::Barrier;
use crate::icv::{Icvs, ProcBind};
use crate::places::{self, Placement};
use crate::registry::Runtime;
use crate::sync::atomic::{AtomicU32, Ordering};
use crate::task::Task;
use crate::thread::{Thread, ThreadDesc};
use crossbeam_utils::CachePadded;
pub(crate) use fork_state::ForkState;
use oxiomp_instrument::State;

/// The code a team runs: `run(data, gtid, tid)` on every member.
#[derive(Clone, Copy)]
pub struct Job {
    pub run: unsafe fn(data: *const (), gtid: i32, tid: u32),
    pub data: *const (),
    /// The address of the user's code, for tools and debuggers (0 if none).
    pub entry: usize,
    /// A function of the runtime's own run on every member (a league of the teams construct,
    /// which then runs the user's code), traced as "Runtime: internal microtask"; otherwise
    /// the user's code, traced as "Runtime: user microtask".
    pub internal: bool,
}

impl Job {
    const NONE: Job = Job { run: no_job, data: std::ptr::null(), entry: 0, internal: false };

    /// Whether `other` is the same job (the same function on the same data).
    fn same(&self, other: &Job) -> bool {
        // `internal` goes with `run` (only the league's function is internal).
        self.run as usize == other.run as usize && self.data == other.data && self.entry == other.entry
    }

    /// The state of a thread running the job (a user or an internal microtask).
    #[inline]
    fn state(&self) -> oxiomp_instrument::State {
        if self.internal { State::InternalMicrotask } else { State::UserMicrotask }
    }
}

/// Stores `v` in `slot` unless it holds `v` already (see `run_team`: a store, even of the same
/// value, takes the cache line away from the threads that read it).
#[inline]
pub(crate) fn set<T: PartialEq>(slot: &mut T, v: T) {
    if *slot != v {
        *slot = v;
    }
}

unsafe fn no_job(_: *const (), _: i32, _: u32) {}

/// A team of threads executing a parallel region (or a serialized region, or the implicit
/// region of an initial thread). `#[repr(C)]`: the leading fields are read by debuggers.
#[repr(C)]
pub struct Team {
    /// Threads in the team.
    pub nthreads: u32,
    /// Nesting level: parallel regions enclosing (and including) this one.
    pub level: u32,
    /// Active (more than one thread) regions among them.
    pub active_level: u32,
    /// The primary thread's thread number in the parent team.
    pub parent_tid: u32,
    /// The enclosing team (null for an initial thread's implicit team).
    pub parent: *const Team,
    /// gtid of the primary thread.
    pub master_gtid: i32,
    /// Team number and number of teams of the enclosing `teams` construct (0 / 1 outside).
    pub team_num: i32,
    pub num_teams: i32,
    /// The user's outlined function, for tools.
    pub entry: usize,
    /// The `ident_t` of the construct, for diagnostics.
    pub ident: *const c_void,
    /// Members by thread number; `[0]` is the primary thread.
    members: Vec<&'static ThreadDesc>,
    barrier: Barrier,
    job: Job,
    /// The team's copy of a region's outlined function and arguments (`ForkRequest::outlined`).
    outlined: Outlined,
    argv: Vec<*mut c_void>,
    /// The ICVs every implicit task of the team starts with.
    icvs: Icvs,
    /// Binding policy and the primary thread's place (None: no binding).
    policy: ProcBind,
    master_place: Option<u32>,
    /// The contention group's thread count.
    pub(crate) cg: *const AtomicU32,
    /// The contention group counter of a team that starts one (league members).
    cg_own: AtomicU32,
    /// `single` constructs claimed so far in the current region.
    singles: AtomicU32,
    /// Dispatched loops in flight.
    ring: crate::worksharing::dispatch::Ring,
    /// Reductions and copyprivate.
    exchange: crate::worksharing::reduction::Exchange,
    /// Cancellation of a worksharing construct: its number + 1 (0: none). The region's own
    /// cancellation belongs to the barrier (see `barrier`'s protocol).
    cancel_ws: AtomicU32,
    /// Doacross loops in flight: (worksharing number, state, members still in it).
    doacross: parking_lot::Mutex<Vec<(u32, std::sync::Arc<crate::worksharing::doacross::Doacross>, u32)>>,
    /// The hidden helper threads' team (see `hidden`): it runs no region, only tasks.
    hidden: bool,
    /// Ready and pending explicit tasks.
    tasks: crate::task::pool::TaskPool,
    /// The members' implicit tasks, by thread number.
    implicit: Box<[CachePadded<Task>]>,
    /// What only the primary thread writes at every fork and join, on a line of its own.
    primary: CachePadded<PrimaryOnly>,
}

/// The part of a team only its primary thread touches, kept off the lines the workers read
/// (which stay valid in their caches from region to region: see `set`).
struct PrimaryOnly {
    /// The `go` epoch each worker was released with, to wait for at the join.
    epochs: Vec<u32>,
    /// What this team reserved of the contention group, given back at the join.
    cg_reserved: u32,
}

// SAFETY: a team is mutated only by its primary thread while no worker runs on it; workers
// read it between the `go` (Acquire) and `joined` (Release) hand-overs. Raw pointers in it point
// to teams and counters that outlive the region.
unsafe impl Sync for Team {}
// SAFETY: as above.
unsafe impl Send for Team {}

impl Team {
    fn empty(icvs: Icvs) -> Team {
        Team {
            nthreads: 1,
            level: 0,
            active_level: 0,
            parent_tid: 0,
            parent: std::ptr::null(),
            master_gtid: -1,
            team_num: 0,
            num_teams: 1,
            entry: 0,
            ident: std::ptr::null(),
            members: Vec::new(),
            barrier: Barrier::new(1),
            job: Job::NONE,
            outlined: Outlined { func: 0, argc: 0, argv: std::ptr::null() },
            argv: Vec::new(),
            icvs,
            policy: ProcBind::False,
            master_place: None,
            cg: std::ptr::null(),
            cg_own: AtomicU32::new(1),
            singles: AtomicU32::new(0),
            ring: crate::worksharing::dispatch::Ring::new(1),
            exchange: crate::worksharing::reduction::Exchange::new(1),
            cancel_ws: AtomicU32::new(0),
            doacross: parking_lot::Mutex::new(Vec::new()),
            hidden: false,
            tasks: crate::task::pool::TaskPool::new(1),
            implicit: Box::new([CachePadded::new(Task::implicit())]),
            primary: CachePadded::new(PrimaryOnly { epochs: Vec::new(), cg_reserved: 0 }),
        }
    }

    /// Points the implicit tasks at this team (after it reached its final address) and
    /// resets them for a new region.
    fn reset_implicit_tasks(&mut self) {
        let me: *const Team = self;
        for t in self.implicit.iter_mut() {
            t.reset_implicit(me);
        }
    }

    /// The implicit task of member `tid`.
    pub(crate) fn implicit_task(&self, tid: u32) -> *const Task {
        &*self.implicit[(tid as usize).min(self.implicit.len() - 1)]
    }

    /// The team's explicit tasks.
    pub(crate) fn tasks(&self) -> &crate::task::pool::TaskPool {
        &self.tasks
    }

    /// Whether this is the hidden helper threads' team (see `hidden`).
    #[inline]
    pub(crate) fn runs_hidden_tasks(&self) -> bool {
        self.hidden
    }

    /// The hidden helper threads' team (see `hidden`), `members` by thread number: it runs no
    /// region and never ends; its members take the hidden tasks from its pool. Its primary
    /// thread is gtid 1, a number libomp gives a helper that runs no task (here a descriptor
    /// without a thread). Its own contention group.
    pub(crate) fn new_hidden(members: Vec<&'static ThreadDesc>) -> &'static Team {
        let n = members.len() as u32;
        let mut t = Box::new(Team::empty(Runtime::get().settings().icvs));
        t.nthreads = n;
        t.members = members;
        t.master_gtid = 1;
        t.hidden = true;
        t.barrier = Barrier::new(n);
        t.exchange = crate::worksharing::reduction::Exchange::new(n);
        t.ring = crate::worksharing::dispatch::Ring::new(n);
        t.tasks = crate::task::pool::TaskPool::new(n);
        t.implicit = (0..n).map(|_| CachePadded::new(Task::implicit())).collect();
        t.cg_own = AtomicU32::new(n);
        let t: &'static mut Team = Box::leak(t);
        t.cg = &t.cg_own;
        t.reset_implicit_tasks();
        t
    }

    /// At the end of a region on this team (every member's implicit task has ended): waits
    /// for the remaining tasks, running them, then for outside threads still finishing one.
    pub(crate) fn finish_tasks(&self, th: Thread) {
        crate::task::drain(th, self.implicit[..self.nthreads.max(1) as usize].iter().map(|t| &**t));
        self.tasks.wait_foreign();
    }

    /// The implicit team of an initial thread.
    pub(crate) fn new_root(gtid: i32, cg: &'static AtomicU32) -> Box<Team> {
        let mut t = Box::new(Team::empty(Runtime::get().settings().icvs));
        t.reset_root(gtid, cg);
        t
    }

    /// Makes this team the fresh implicit team of initial thread `gtid` (a descriptor's root
    /// team serves each initial thread the descriptor serves), in place: its address stays.
    pub(crate) fn reset_root(&mut self, gtid: i32, cg: &'static AtomicU32) {
        *self = Team::empty(Runtime::get().settings().icvs);
        self.master_gtid = gtid;
        self.cg = cg;
        self.reset_implicit_tasks();
    }

    /// The workers (members other than the primary thread).
    pub(crate) fn workers(&self) -> impl Iterator<Item = &'static ThreadDesc> + '_ {
        self.members.iter().skip(1).copied()
    }

    /// The team's barrier for member `th` (the current team): completes only when every
    /// member has arrived and every task of the team is complete; waiting members run tasks.
    #[inline]
    pub fn barrier(&self, th: Thread) {
        if crate::query::cancellation_on() {
            // A member that left a cancelled region never arrives: see `barrier`'s protocol.
            self.cancel_barrier(th);
            return;
        }
        oxiomp_instrument::barrier_plain_enter();
        let tid = th.tid() as usize;
        crate::task::drain(th, std::iter::once(&*self.implicit[tid]));
        let spinning = self.barrier.wait_helping(th.tid(), &mut || crate::task::help_barrier(th));
        crate::barrier::trace_end(State::BarrierPlain, spinning);
    }

    /// Whether the calling thread (number `tid`, whose implicit task has now met `k` single
    /// constructs) executes the k-th `single` of the region: the first thread to get there wins.
    #[inline]
    pub(crate) fn claim_single(&self, k: u32) -> bool {
        // Every member passed single k-1 before reaching single k, and single k-1 was claimed by
        // then, so the counter is at least k-1 here and exactly one CAS from k-1 succeeds.
        // Relaxed: the decision guards no data; the construct's barrier publishes the body.
        self.nthreads == 1
            || self.singles.compare_exchange(k - 1, k, Ordering::Relaxed, Ordering::Relaxed).is_ok()
    }

    pub(crate) fn exchange(&self) -> &crate::worksharing::reduction::Exchange {
        &self.exchange
    }

    /// A cancellation barrier (`__kmpc_cancel_barrier`) for member `th`: true, on every member
    /// leaving this episode alike, when the region was cancelled (see `barrier`'s protocol).
    pub fn cancel_barrier(&self, th: Thread) -> bool {
        oxiomp_instrument::barrier_plain_enter();
        let tid = th.tid();
        crate::task::drain(th, std::iter::once(&*self.implicit[tid as usize]));
        let (cancelled, spinning) = self.barrier.wait_cancellable(tid, &mut || crate::task::help_barrier(th));
        crate::barrier::trace_end(State::BarrierPlain, spinning);
        cancelled
    }

    /// Whether the barrier member `th` passed last belongs to a cancelled episode (then not
    /// every member need have arrived: data published before it may be missing).
    pub(crate) fn last_barrier_cancelled(&self, th: Thread) -> bool {
        self.barrier.cancelled_before(self.barrier.episode(th.tid()))
    }

    /// Member `th` cancels the region (`cancel parallel`).
    pub(crate) fn cancel_region(&self, th: Thread) {
        self.barrier.cancel(th.tid());
    }

    /// Whether member `th`, at a cancellation point, leaves the region (its next cancellation
    /// barrier will say the region was cancelled).
    pub(crate) fn region_cancelled_for(&self, th: Thread) -> bool {
        self.barrier.cancelled_for(th.tid())
    }

    /// Whether the region was cancelled at all (its tasks that have not started never do).
    #[inline]
    pub(crate) fn region_cancel_requested(&self) -> bool {
        self.barrier.cancel_requested()
    }

    /// Records a cancellation request for worksharing construct `ws` (Relaxed: the request is
    /// a flag other threads poll at cancellation points; the data the cancelled code touched
    /// is ordered by the barriers that follow).
    pub(crate) fn cancel_worksharing(&self, ws: u32) {
        self.cancel_ws.store(ws.wrapping_add(1), Ordering::Relaxed);
    }

    /// Whether worksharing construct `ws` was cancelled.
    #[inline]
    pub(crate) fn worksharing_cancelled(&self, ws: u32) -> bool {
        self.cancel_ws.load(Ordering::Relaxed) == ws.wrapping_add(1)
    }

    /// The doacross state of the loop numbered `key`, created by the first member to arrive.
    pub(crate) fn doacross_join(
        &self,
        key: u32,
        dims: &[crate::worksharing::doacross::Dim],
    ) -> std::sync::Arc<crate::worksharing::doacross::Doacross> {
        let mut list = self.doacross.lock();
        if let Some(e) = list.iter().find(|e| e.0 == key) {
            return e.1.clone();
        }
        let d = crate::worksharing::doacross::Doacross::new(dims);
        list.push((key, d.clone(), self.nthreads));
        d
    }

    /// A member is done with doacross loop `key`; the last one drops it.
    pub(crate) fn doacross_leave(&self, key: u32) {
        let mut list = self.doacross.lock();
        if let Some(i) = list.iter().position(|e| e.0 == key) {
            list[i].2 -= 1;
            if list[i].2 == 0 {
                list.swap_remove(i);
            }
        }
    }

    /// Resets the per-region construct state (the team is idle: the primary thread alone
    /// touches it, and the fork's release publishes it, hence Relaxed).
    /// Values are stored only where they changed (see `set`).
    fn begin_region(&mut self) {
        set(self.singles.get_mut(), 0);
        self.ring.reset();
        self.barrier.end_cancellation();
        set(self.cancel_ws.get_mut(), 0);
        self.reset_implicit_tasks();
    }

    /// The ring of dispatched-loop slots.
    pub(crate) fn ring(&self) -> &crate::worksharing::dispatch::Ring {
        &self.ring
    }

    /// Makes the team `n` threads big with `me` as primary thread, reserving or returning
    /// workers as needed. When no more threads can be started the team is smaller: returns
    /// its size and why it is not `n`.
    fn resize(
        &mut self,
        n: u32,
        me: &'static ThreadDesc,
        rt: &'static Runtime,
    ) -> (u32, Option<crate::thread::SpawnError>) {
        if self.members.is_empty() {
            self.members.push(me);
        }
        if !std::ptr::eq(self.members[0], me) {
            self.members[0] = me;
        }
        let cur = self.members.len();
        let mut why = None;
        if (n as usize) < cur {
            rt.release_workers(self.members.drain(n as usize..));
        } else if n as usize > cur {
            why = rt.acquire_workers(n as usize - cur, &mut self.members).err();
        }
        let n = self.members.len();
        if self.barrier.size() as usize != n {
            self.barrier = Barrier::new(n as u32);
            self.exchange = crate::worksharing::reduction::Exchange::new(n as u32);
            self.ring = crate::worksharing::dispatch::Ring::new(n as u32);
            self.tasks = crate::task::pool::TaskPool::new(n as u32);
            self.implicit = (0..n).map(|_| CachePadded::new(Task::implicit())).collect();
        }
        self.primary.epochs.resize(n, 0);
        set(&mut self.nthreads, n as u32);
        (n as u32, why)
    }

    /// Copies `o` and its arguments into the team (what changed only) and returns the copy.
    ///
    /// # Safety
    /// `o.argv` holds `o.argc` pointers.
    unsafe fn copy_outlined(&mut self, o: &Outlined) -> *const () {
        if self.argv.len() < o.argc {
            self.argv.resize(o.argc, std::ptr::null_mut());
        }
        // SAFETY: the caller's contract.
        let src = unsafe { std::slice::from_raw_parts(o.argv, o.argc) };
        for (d, s) in self.argv.iter_mut().zip(src) {
            set(d, *s);
        }
        set(&mut self.outlined, Outlined { func: o.func, argc: o.argc, argv: self.argv.as_ptr() });
        &self.outlined as *const Outlined as *const ()
    }

    /// Runs the implicit task of thread `tid` of this team on `th`, then restores nothing: the
    /// caller restores its own state.
    pub(crate) fn run_member(&self, th: Thread, tid: u32) {
        let placement = self.placement(tid);
        let mut icvs = self.icvs;
        if let Some(p) = placement {
            icvs.partition_start = p.partition_start;
            icvs.partition_len = p.partition_len;
        }
        th.begin_implicit_task(self, tid, icvs);
        if let Some(p) = placement {
            th.bind(p.place);
        }
        display_affinity(th);
        oxiomp_instrument::enter_with(|| self.job.state());
        // SAFETY: the job's data stays valid until the join, which waits for this call to
        // return on every member; `run` was paired with that data by whoever built the job.
        unsafe { (self.job.run)(self.job.data, th.gtid(), tid) };
        crate::worksharing::end_left_loop(th);
        oxiomp_instrument::leave_with(|| self.job.state());
    }

    /// What decides where the team's members run: the binding policy, the primary thread's
    /// place and the partition (`OMP_DISPLAY_AFFINITY` reprints when it changes).
    pub(crate) fn placement_key(&self) -> (ProcBind, Option<u32>, u32, u32) {
        (self.policy, self.master_place, self.icvs.partition_start, self.icvs.partition_len)
    }

    fn placement(&self, tid: u32) -> Option<Placement> {
        let master = self.master_place?;
        let i = &self.icvs;
        Some(places::place_thread(
            self.policy,
            i.partition_start,
            i.partition_len,
            master,
            self.nthreads,
            tid,
        ))
    }
}

/// What the encountering thread asks of a fork.
#[derive(Clone, Copy)]
pub struct ForkRequest {
    pub job: Job,
    pub ident: *const c_void,
    /// `job.data` is an [`Outlined`] the team copies (see [`ForkRequest::outlined`]).
    copy_outlined: bool,
}

impl ForkRequest {
    pub fn new(job: Job, ident: *const c_void) -> ForkRequest {
        ForkRequest { job, ident, copy_outlined: false }
    }

    /// A request whose job's data is an [`Outlined`]: a team runs the job on its own copy of
    /// it (arguments included), which a hot team's workers find in their caches region after
    /// region: the copy is stored only where it changed, while the caller's lives on a stack
    /// the primary thread rewrites at every fork.
    ///
    /// # Safety
    /// `job.data` points at an `Outlined` whose `argv` holds `argc` pointers, both valid until
    /// the fork returns; `job.run` accepts any `Outlined` with the same function and arguments.
    pub unsafe fn outlined(job: Job, ident: *const c_void) -> ForkRequest {
        ForkRequest { job, ident, copy_outlined: true }
    }
}

/// An outlined function and its arguments, as the C ABI passes them to a fork.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Outlined {
    pub func: usize,
    pub argc: usize,
    pub argv: *const *mut c_void,
}

/// Executes a parallel region: the encountering thread becomes the primary thread of a new
/// team (or runs it alone, serialized) and returns after the join.
pub fn fork(th: Thread, req: ForkRequest) {
    // A pending binding happens before the fork's own states begin: the thread moves while it
    // is in none of them (where ovni's emulator and our trace views agree on a CPU change).
    th.bind_if_pending();
    oxiomp_instrument::fork_call_enter();
    let (n, bind) = decide_team(th);
    if n <= 1 {
        oxiomp_instrument::fork_call_exit();
        serialized_begin_with(th, req.ident, req.job.entry);
        oxiomp_instrument::enter_with(|| req.job.state());
        // SAFETY: as in `Team::run_member`: the data outlives this call.
        unsafe { (req.job.run)(req.job.data, th.gtid(), 0) };
        crate::worksharing::end_left_loop(th);
        oxiomp_instrument::leave_with(|| req.job.state());
        serialized_end(th);
        return;
    }
    run_team(th, n, bind, req, true);
    if crate::places::reset_on() && th.team().level == 0 {
        th.reset_binding();
    }
}

/// How many threads the next region gets, consuming the pushed clauses; reserves them in the
/// contention group (the reservation is recorded on the team by `run_team`).
fn decide_team(th: Thread) -> (u32, ProcBind) {
    let strict = th.fork_state().take_strict();
    let (n, bind, requested) = decide_team_size(th);
    if let Some(s) = strict
        && n < requested
    {
        s.fell_short(requested, n);
    }
    (n, bind)
}

/// `decide_team` without the `strict` modifier: (threads, binding, threads requested).
fn decide_team_size(th: Thread) -> (u32, ProcBind, u32) {
    let (fs, icvs) = (th.fork_state(), th.icvs());
    let requested = fs.take_nthreads();
    let bind = fs.take_bind().unwrap_or(icvs.bind);
    let requested = if requested > 0 { requested } else { icvs.nthreads };
    let team = th.team();
    if requested <= 1 || team.active_level >= icvs.max_active_levels {
        return (1, bind, requested);
    }
    let rt = Runtime::get();
    let mut n = requested;
    if icvs.dynamic {
        n = n.min(rt.num_procs());
    }
    // The contention group may not exceed thread-limit-var.
    let limit = icvs.thread_limit.max(1);
    // SAFETY: `cg` points at a counter owned by a leaked descriptor or by a team that
    // encloses this one, so it outlives this region.
    let cg = unsafe { &*team.cg };
    // Relaxed: the counter is only an admission count; it guards no other data.
    let mut cur = cg.load(Ordering::Relaxed);
    loop {
        let extra = (n - 1).min(limit.saturating_sub(cur));
        match cg.compare_exchange_weak(cur, cur + extra, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return (extra + 1, bind, requested),
            Err(now) => cur = now,
        }
    }
}

/// Forks a team of exactly `n` threads (n - 1 already reserved in the contention group, unless
/// `league` is set) and joins it.
fn run_team(th: Thread, n: u32, bind: ProcBind, req: ForkRequest, reserved: bool) {
    let rt = Runtime::get();
    let level = th.team().level as usize;
    let mut team = th.fork_state().take_hot(level).unwrap_or_else(|| Box::new(Team::empty(th.icvs())));
    let (saved, child_icvs) = (th.save(), th.child_icvs());
    let wanted = n;
    {
        // SAFETY: the parent team encloses this region and outlives it.
        let parent = unsafe { &*saved.team() };
        let t = &mut *team;
        let (n, why) = t.resize(n.min(rt.thread_limit()), th.desc(), rt);
        if n < wanted {
            team_smaller(wanted, n, why);
            if reserved {
                // Give back to the contention group what the team could not use.
                // SAFETY: as in `decide_team` (the team takes the parent's group below).
                unsafe { &*parent.cg }.fetch_sub(wanted - n, Ordering::Relaxed);
            }
        }
        // A hot team usually gets the values it had in its last region. Each field is written
        // only when it changes: a line the master leaves clean stays valid in the workers'
        // caches, which then read it at the fork without fetching it again.
        set(&mut t.parent, saved.team());
        set(&mut t.parent_tid, saved.tid());
        set(&mut t.level, parent.level + 1);
        set(&mut t.active_level, parent.active_level + 1);
        set(&mut t.master_gtid, th.gtid());
        set(&mut t.team_num, parent.team_num);
        set(&mut t.num_teams, parent.num_teams);
        set(&mut t.entry, req.job.entry);
        set(&mut t.ident, req.ident);
        let mut job = req.job;
        if req.copy_outlined {
            // SAFETY: the request's contract (`ForkRequest::outlined`).
            job.data = unsafe { t.copy_outlined(&*(req.job.data as *const Outlined)) };
        }
        if !t.job.same(&job) {
            t.job = job;
        }
        set(&mut t.icvs, child_icvs);
        t.begin_region();
        set(&mut t.cg, parent.cg);
        t.primary.cg_reserved = if reserved { n - 1 } else { 0 };
        let policy = bind.policy();
        let nplaces = rt.settings().places.places.len() as u32;
        set(&mut t.policy, policy);
        let master_place = if policy == ProcBind::False || nplaces == 0 {
            None
        } else {
            Some(th.place().unwrap_or(saved.icvs().partition_start).min(nplaces - 1))
        };
        set(&mut t.master_place, master_place);
    }
    // The join epochs are moved out: from here on the team is only read, until the join.
    let mut epochs = std::mem::take(&mut team.primary.epochs);
    let tp: *const Team = &*team;
    let team = team;
    for (tid, w) in team.workers().enumerate() {
        epochs[tid + 1] = w.assign(tp, tid as u32 + 1);
    }
    oxiomp_instrument::fork_call_exit();
    team.run_member(th, 0);
    oxiomp_instrument::barrier_join_enter();
    let mut spinning = false;
    for (tid, w) in team.workers().enumerate() {
        w.wait_joined(epochs[tid + 1], &mut || crate::task::help_barrier(th), &mut spinning);
    }
    // A spin wait stays open while the team's last tasks are waited for (README, Tracing).
    team.finish_tasks(th);
    for w in team.workers() {
        w.stop_helping();
    }
    crate::barrier::trace_end(State::BarrierJoin, spinning);
    let mut team = team;
    team.primary.epochs = std::mem::take(&mut epochs);
    if team.primary.cg_reserved > 0 {
        // Release: the region's work (the workers', joined above) happens before what a thread
        // that reads the group back at its size does: the unload's destruction of threadprivate
        // copies (`threadprivate::destroy_copies_at_exit`, Acquire). Reservations need no more.
        // SAFETY: as in `decide_team`.
        unsafe { &*team.cg }.fetch_sub(team.primary.cg_reserved, Ordering::Release);
        team.primary.cg_reserved = 0;
    }
    th.restore(saved);
    if let Some(old) = th.fork_state().keep_hot(level, team) {
        // A nested construct at the same level (a league's inner teams) left its own team here.
        rt.release_workers(old.workers());
    }
}

/// A team is smaller than asked (`wanted` threads, `got`): the first time, one warning says
/// why. Later teams cut short say nothing (the warning would repeat at every region).
#[cold]
fn team_smaller(wanted: u32, got: u32, why: Option<crate::thread::SpawnError>) {
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    // Relaxed: only which warning is printed depends on it.
    if WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let why = match why {
        Some(e) => e.to_string(),
        None => format!("oxiomp runs at most {} threads at once", Runtime::get().thread_limit()),
    };
    crate::registry::warn(&format!(
        "oxiomp: warning: asked for {wanted} threads (a parallel region's team, or a league's \
         teams), started {got} ({why}); later teams may be cut short likewise, without a warning"
    ));
}

/// Starts a serialized region (`if(0)`, or beyond max-active-levels): one thread, one more
/// level, no more active levels.
pub fn serialized_begin(th: Thread, ident: *const c_void) {
    let fs = th.fork_state();
    fs.take_nthreads();
    fs.take_bind();
    fs.take_strict();
    serialized_begin_with(th, ident, 0);
}

fn serialized_begin_with(th: Thread, ident: *const c_void, entry: usize) {
    let parent = th.team();
    let parent_ptr: *const Team = parent;
    let icvs = th.child_icvs();
    let t = th.fork_state().begin_serial(th.save(), icvs);
    // SAFETY: the serialized regions' teams belong to this thread's fork state, each boxed (its
    // address stable); the one for the new depth serves no region now (the region that used
    // it last has ended), and only this thread touches it.
    let t = unsafe { &mut *t };
    t.begin_region();
    t.members.clear();
    t.members.push(th.desc());
    t.nthreads = 1;
    t.parent = parent_ptr;
    t.parent_tid = th.tid();
    t.level = parent.level + 1;
    t.active_level = parent.active_level;
    t.master_gtid = th.gtid();
    t.team_num = parent.team_num;
    t.num_teams = parent.num_teams;
    t.entry = entry;
    t.ident = ident;
    t.icvs = icvs;
    t.cg = parent.cg;
    th.begin_implicit_task(t, 0, icvs);
    display_affinity(th);
}

/// `OMP_DISPLAY_AFFINITY`: the thread's line as its implicit task in a region starts.
#[inline]
fn display_affinity(th: Thread) {
    if crate::affinity_format::displaying() {
        // Taken out of the thread's state: the line's fields read that state too.
        let mut last = th.take_last_affinity();
        crate::affinity_format::display_if_changed(&mut last);
        th.set_last_affinity(last);
    }
}

/// Ends the innermost serialized region. Returns false (and changes nothing) if there is none.
pub fn serialized_end(th: Thread) -> bool {
    if !th.fork_state().in_serial() {
        return false;
    }
    th.team().finish_tasks(th);
    match th.fork_state().end_serial() {
        Some(s) => {
            th.restore(s);
            true
        }
        None => false,
    }
}

/// The teams of a host `teams` construct.
struct League {
    teams: Vec<Team>,
    user: Job,
}

/// Executes a host `teams` region: `num_teams` initial threads, each the only thread of its
/// team and the initial thread of its own contention group of at most `thread_limit` threads.
pub fn fork_teams(th: Thread, req: ForkRequest) {
    let rt = Runtime::get();
    let (nt, tl) = th.fork_state().take_teams();
    let nteams = if nt > 0 { nt } else { crate::query::max_teams().max(1) as u32 };
    let default_limit = crate::query::teams_thread_limit();
    let limit = if tl > 0 {
        tl
    } else if default_limit > 0 {
        default_limit as u32
    } else {
        (rt.num_procs() / nteams).max(1)
    };
    let (parent, icvs) = (th.team(), th.icvs());
    let mut league = League { teams: Vec::with_capacity(nteams as usize), user: req.job };
    // With binding in force, the teams divide the encountering thread's place partition as a
    // parallel region's threads would (KMP_TEAMS_PROC_BIND, spread by default); each team's
    // initial thread is bound to its team's place.
    let nplaces = rt.settings().places.places.len() as u32;
    let teams_bind = rt.settings().globals.teams_bind;
    let placed = icvs.bind != ProcBind::False && nplaces > 0 && icvs.partition_len > 0;
    let master_place = if placed { th.place().unwrap_or(icvs.partition_start).min(nplaces - 1) } else { 0 };
    for k in 0..nteams {
        let mut t = Team::empty(icvs);
        t.level = parent.level;
        t.active_level = parent.active_level;
        t.parent = parent.parent;
        t.parent_tid = parent.parent_tid;
        t.team_num = k as i32;
        t.num_teams = nteams as i32;
        t.entry = req.job.entry;
        t.ident = req.ident;
        t.icvs.thread_limit = limit;
        t.icvs.nthreads = t.icvs.nthreads.min(limit);
        if placed {
            let p = places::place_thread(
                teams_bind,
                icvs.partition_start,
                icvs.partition_len,
                master_place,
                nteams,
                k,
            );
            t.icvs.partition_start = p.partition_start;
            t.icvs.partition_len = p.partition_len;
            t.master_place = Some(p.place);
        }
        league.teams.push(t);
    }
    // Each league team starts a contention group of its own. The vector is not resized any
    // more, so the pointers into it stay valid.
    for t in &mut league.teams {
        t.cg = &t.cg_own;
        t.reset_implicit_tasks();
    }
    let job = Job {
        run: run_league_member,
        data: &league as *const League as *const (),
        entry: req.job.entry,
        internal: true,
    };
    oxiomp_instrument::fork_call_enter();
    run_team(th, nteams, ProcBind::False, ForkRequest::new(job, req.ident), false);
}

/// The job of one member of a league: run the user's code as the initial thread of team `tid`.
/// When fewer threads could be started than the league has teams, member `tid` runs teams
/// `tid`, `tid + members`, ... one after the other: every team runs, with its own number.
unsafe fn run_league_member(data: *const (), gtid: i32, tid: u32) {
    // SAFETY: `data` is the `League` on `fork_teams`'s stack, alive until the join.
    let league = unsafe { &*(data as *const League) };
    let th = Thread::current();
    let members = th.team().nthreads.max(1) as usize;
    for t in league.teams.iter().skip(tid as usize).step_by(members) {
        // SAFETY: forwarded from the caller.
        unsafe { run_league_team(league, t, th, gtid) };
    }
}

/// Runs the user's code as the initial thread of league team `t`.
///
/// # Safety
/// As for `run_league_member`.
unsafe fn run_league_team(league: &League, t: &Team, th: Thread, gtid: i32) {
    let saved = th.save();
    th.begin_implicit_task(t, 0, t.icvs);
    if let Some(p) = t.master_place {
        th.bind(p);
    }
    oxiomp_instrument::user_microtask_enter();
    // SAFETY: as in `Team::run_member`.
    unsafe { (league.user.run)(league.user.data, gtid, 0) };
    crate::worksharing::end_left_loop(th);
    oxiomp_instrument::user_microtask_exit();
    t.finish_tasks(th);
    th.restore(saved);
}

/// Whether the calling thread executes the `single` construct it has reached.
pub fn single(th: Thread) -> bool {
    let k = th.ws_state().next_single();
    th.team().claim_single(k)
}

/// `num_threads(n)` for the next region the thread encounters.
pub fn push_num_threads(th: Thread, n: u32) {
    th.fork_state().push_nthreads(n, &[]);
}

/// `num_threads(n1, n2, ...)` for the next region the thread encounters: n1 threads, and
/// nthreads-var n2, ... in the region and the levels below it (`list` is not empty).
pub fn push_num_threads_list(th: Thread, list: &[u32]) {
    th.fork_state().push_nthreads(list[0], intern(&list[1..]));
}

/// A `num_threads` list as nthreads-var holds one: for the program's lifetime, each distinct
/// list stored once (a program has few).
fn intern(list: &[u32]) -> &'static [u32] {
    static LISTS: parking_lot::Mutex<Vec<&'static [u32]>> = parking_lot::Mutex::new(Vec::new());
    if list.is_empty() {
        return &[];
    }
    let mut lists = LISTS.lock();
    if let Some(l) = lists.iter().find(|l| **l == list) {
        return l;
    }
    let l: &'static [u32] = Box::leak(list.into());
    lists.push(l);
    l
}

/// The `strict` modifier of a `num_threads` clause: the region must get the threads it asks
/// for, or the program is told (`fatal`: it ends; otherwise a warning and the region runs with
/// what it got). `text` names where and why (the clause's location and message).
pub struct Strict {
    pub fatal: bool,
    pub text: String,
}

impl Strict {
    #[cold]
    fn fell_short(&self, requested: u32, got: u32) {
        let what = format!(
            "{}: num_threads(strict: {requested}) gets only {got} thread{}",
            self.text,
            if got == 1 { "" } else { "s" }
        );
        if self.fatal {
            crate::user_error(format_args!("{what}"));
        }
        crate::stderr_line(format_args!("oxiomp: warning: {what}"));
    }
}

/// Marks the next region's `num_threads` clause `strict` (after `push_num_threads*`).
pub fn push_strict(th: Thread, strict: Strict) {
    th.fork_state().push_strict(Some(Box::new(strict)));
}

/// `proc_bind(b)` for the next region the thread encounters.
pub fn push_proc_bind(th: Thread, b: ProcBind) {
    th.fork_state().push_bind(Some(b));
}

/// `num_teams(n) thread_limit(t)` for the next teams construct (0 = clause absent).
pub fn push_num_teams(th: Thread, num_teams: u32, thread_limit: u32) {
    th.fork_state().push_teams((num_teams, thread_limit));
}

/// Runs `f(tid)` on a team of threads (the team size follows the ICVs and `num_threads`), a
/// safe entry point for Rust code and tests.
pub fn parallel<F: Fn(u32) + Sync>(num_threads: Option<u32>, f: F) {
    unsafe fn trampoline<F: Fn(u32) + Sync>(data: *const (), _gtid: i32, tid: u32) {
        // SAFETY: `data` is the `&F` passed below, alive until the join.
        let f = unsafe { &*(data as *const F) };
        f(tid)
    }
    let th = Thread::current();
    if let Some(n) = num_threads {
        th.fork_state().push_nthreads(n, &[]);
    }
    let job = Job { run: trampoline::<F>, data: &f as *const F as *const (), entry: 0, internal: false };
    fork(th, ForkRequest::new(job, std::ptr::null()));
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn every_member_runs_once() {
        for n in [1u32, 2, 3, 8] {
            let hits: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            parallel(Some(n), |tid| {
                hits[tid as usize].fetch_add(1, Ordering::Relaxed);
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1), "n={n}");
        }
    }

    #[test]
    fn barrier_and_queries() {
        let sum = AtomicUsize::new(0);
        parallel(Some(4), |tid| {
            let th = Thread::current();
            assert_eq!(th.tid(), tid);
            assert_eq!(th.team().nthreads, 4);
            assert_eq!(th.team().level, 1);
            sum.fetch_add(1, Ordering::Relaxed);
            th.team().barrier(th);
            assert_eq!(sum.load(Ordering::Relaxed), 4);
        });
    }
}
