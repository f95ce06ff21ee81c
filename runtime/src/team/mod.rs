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

pub(crate) mod descriptor;
pub(crate) mod fork_state;

use std::ffi::c_void;
use std::ptr::NonNull;

use crate::barrier::Barrier;
use crate::icv::ProcBind;
use crate::places::{self, Placement};
use crate::registry::Runtime;
use crate::sync::atomic::{AtomicU32, Ordering};
use crate::task::Task;
use crate::team::descriptor::Implicit;
use crate::thread::{Thread, ThreadDesc};
use crossbeam_utils::CachePadded;
pub use descriptor::{Job, Outlined, Team};
pub(crate) use descriptor::{Member, set};
pub use fork_state::Strict;
use fork_state::{Forked, Open};
use oxiomp_instrument::{Meet, MeetKind, State, SyncPoint, ToolEvent, parallel_flags, sync_kind};

impl Member {
    /// The member that `desc`'s thread is.
    #[inline]
    pub(crate) fn of(desc: &'static ThreadDesc) -> Member {
        // SAFETY: the address of a thread descriptor.
        unsafe { Member::from_addr(NonNull::from(desc).cast()) }
    }

    /// The member's thread descriptor.
    #[inline]
    pub(crate) fn desc(self) -> &'static ThreadDesc {
        // SAFETY: a member holds a thread descriptor's address (`from_addr`'s contract), and
        // descriptors are never freed.
        unsafe { self.addr().cast::<ThreadDesc>().as_ref() }
    }
}

impl Team {
    /// The hidden helper threads' team (see `hidden`), `members` by thread number: it runs no
    /// region and never ends; its members take the hidden tasks from its pool. Its primary
    /// thread is gtid 1, a number libomp gives a helper that runs no task (here a descriptor
    /// without a thread). Its own contention group.
    pub(crate) fn new_hidden(members: Vec<&'static ThreadDesc>) -> &'static Team {
        let n = members.len() as u32;
        let mut t = Box::new(Team::empty(Runtime::get().settings().icvs));
        t.nthreads = n;
        t.members = members.into_iter().map(Member::of).collect();
        t.master_gtid = 1;
        t.hidden = true;
        t.barrier = Barrier::new(n);
        t.exchange = crate::worksharing::reduction::Exchange::new(n);
        t.ring = crate::worksharing::dispatch::Ring::new(n);
        t.tasks = crate::task::pool::TaskPool::new(n);
        t.implicit = (0..n).map(|_| CachePadded::new(Implicit::new())).collect();
        t.cg_own = AtomicU32::new(n);
        let t: &'static mut Team = Box::leak(t);
        t.cg = &t.cg_own;
        t.reset_implicit_tasks();
        t
    }

    /// At the end of a region on this team (every member's implicit task has ended): waits
    /// for the remaining tasks, running them, then for outside threads still finishing one.
    #[inline]
    pub(crate) fn finish_tasks(&self, th: Thread) {
        crate::task::drain(th, self.implicit_tasks());
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

    /// The implicit tasks of the region's members.
    #[inline]
    pub(crate) fn implicit_tasks(&self) -> impl Iterator<Item = &Task> + Clone {
        self.implicit[..self.nthreads.max(1) as usize].iter().map(|t| &t.task)
    }

    /// The workers (members other than the primary thread).
    pub(crate) fn workers(&self) -> impl Iterator<Item = &'static ThreadDesc> + '_ {
        self.members.iter().skip(1).map(|m| m.desc())
    }

    /// The team's barrier for member `th` (the current team): completes only when every
    /// member has arrived and every task of the team is complete; waiting members run tasks.
    /// A barrier the runtime itself needs (a tool is told of an implementation barrier).
    #[inline]
    pub fn barrier(&self, th: Thread) {
        self.barrier_as(th, sync_kind::BARRIER_IMPLEMENTATION);
    }

    /// [`barrier`](Self::barrier), a tool being told it is one of `kind` (OMPT's
    /// `ompt_sync_region_t`: explicit, implicit at a worksharing construct's end, ...).
    #[inline]
    pub fn barrier_as(&self, th: Thread, kind: u32) {
        crate::worksharing::end_unmarked_single(th);
        if crate::query::cancellation_on() {
            // A member that left a cancelled region never arrives: see `barrier`'s protocol.
            self.cancel_barrier_as(th, kind);
            return;
        }
        oxiomp_instrument::barrier_plain_enter();
        oxiomp_instrument::tool(|| ToolEvent::Sync { kind, point: SyncPoint::BeginWait });
        let tid = th.tid() as usize;
        crate::task::drain(th, std::iter::once(&self.implicit[tid].task));
        let spinning = self.barrier.wait_helping(th.tid(), &mut crate::task::BarrierHelp::new(th));
        oxiomp_instrument::tool(|| ToolEvent::Sync { kind, point: SyncPoint::WaitDoneEnd });
        crate::barrier::trace_end(State::BarrierPlain, spinning);
    }

    /// A cancellation barrier (`__kmpc_cancel_barrier`) for member `th`, a tool being told it
    /// is one of `kind`: true, on every member leaving this episode alike, when the region was
    /// cancelled (see `barrier`'s protocol).
    pub fn cancel_barrier_as(&self, th: Thread, kind: u32) -> bool {
        crate::worksharing::end_unmarked_single(th);
        oxiomp_instrument::barrier_plain_enter();
        oxiomp_instrument::tool(|| ToolEvent::Sync { kind, point: SyncPoint::BeginWait });
        let tid = th.tid();
        crate::task::drain(th, std::iter::once(&self.implicit[tid as usize].task));
        let (cancelled, spinning) =
            self.barrier.wait_cancellable(tid, &mut crate::task::BarrierHelp::new(th));
        oxiomp_instrument::tool(|| ToolEvent::Sync { kind, point: SyncPoint::WaitDoneEnd });
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

    /// Makes the team `n` threads big with `me` as primary thread, reserving or returning
    /// workers as needed. When no more threads can be started the team is smaller: returns
    /// its size and why it is not `n`.
    fn resize(
        &mut self,
        n: u32,
        me: &'static ThreadDesc,
        rt: &'static Runtime,
    ) -> (u32, Option<crate::lifecycle::SpawnError>) {
        let me = Member::of(me);
        if self.members.is_empty() {
            self.members.push(me);
        }
        if self.members[0] != me {
            self.members[0] = me;
        }
        let cur = self.members.len();
        let mut why = None;
        if (n as usize) < cur {
            rt.release_workers(self.members.drain(n as usize..).map(Member::desc));
        } else if n as usize > cur {
            why = rt.acquire_workers(n as usize - cur, &mut self.members).err();
        }
        let n = self.members.len();
        if self.barrier.size() as usize != n {
            self.barrier = Barrier::new(n as u32);
            self.exchange = crate::worksharing::reduction::Exchange::new(n as u32);
            self.ring = crate::worksharing::dispatch::Ring::new(n as u32);
            self.tasks = crate::task::pool::TaskPool::new(n as u32);
            self.implicit = (0..n).map(|_| CachePadded::new(Implicit::new())).collect();
        }
        self.primary.epochs.resize(n, 0);
        self.tasks.set_alone(crate::sync::WaitPolicy::oversubscribed());
        set(&mut self.nthreads, n as u32);
        (n as u32, why)
    }

    /// Runs the implicit task of thread `tid` of this team on `th`, then restores nothing: the
    /// caller restores its own state.
    #[inline]
    pub(crate) fn run_member(&self, th: Thread, tid: u32) {
        self.member_begin(th, tid);
        // SAFETY: the job's data stays valid until the join, which waits for this call to
        // return on every member; `run` was paired with that data by whoever built the job.
        unsafe { (self.job.run)(self.job.data, th.gtid(), tid) };
        self.member_end(th);
    }

    /// Thread `tid`'s implicit task begins on `th` (what comes before the job).
    #[inline(always)]
    fn member_begin(&self, th: Thread, tid: u32) {
        let placement = self.placement(tid);
        let mut icvs = self.icvs;
        if let Some(p) = placement {
            icvs.partition_start = p.partition_start;
            icvs.partition_len = p.partition_len;
        }
        th.begin_implicit_task(self, tid, icvs);
        if let Some(p) = placement {
            th.bind(p.place, Runtime::places());
        }
        display_affinity(th);
        let team = self as *const Team as usize;
        oxiomp_instrument::tool_checked(|| ToolEvent::ImplicitTaskBegin {
            team,
            index: tid,
            size: self.nthreads,
            initial: false,
        });
        oxiomp_instrument::enter_with(|| self.job.state());
    }

    /// The job of `th`'s implicit task has returned.
    #[inline(always)]
    fn member_end(&self, th: Thread) {
        crate::worksharing::end_left_loop(th);
        oxiomp_instrument::leave_with(|| self.job.state());
        self.meet_end();
    }

    /// The calling thread leaves this team's region (for the run-time checks).
    #[inline(always)]
    fn meet_end(&self) {
        oxiomp_instrument::meet(|| Meet {
            code: self.entry,
            ..Meet::plain(MeetKind::RegionEnd, self.ident as usize)
        });
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

/// Executes a parallel region: the encountering thread becomes the primary thread of a new
/// team (or runs it alone, serialized) and returns after the join.
pub fn fork(th: Thread, req: ForkRequest) {
    // A pending binding happens before the fork's own states begin: the thread moves while it
    // is in none of them (where ovni's emulator and our trace views agree on a CPU change).
    th.bind_if_pending(Runtime::places);
    oxiomp_instrument::fork_call_enter();
    let (n, bind, requested) = decide_team(th);
    if n <= 1 {
        oxiomp_instrument::fork_call_exit();
        serialized_begin_with(th, req.ident, req.job.entry);
        serial_tool_begin(th, requested, parallel_flags::INVOKER_RUNTIME);
        oxiomp_instrument::enter_with(|| req.job.state());
        // SAFETY: as in `Team::run_member`: the data outlives this call.
        unsafe { (req.job.run)(req.job.data, th.gtid(), 0) };
        crate::worksharing::end_left_loop(th);
        oxiomp_instrument::leave_with(|| req.job.state());
        serialized_end_flagged(th, parallel_flags::INVOKER_RUNTIME);
        return;
    }
    run_team(th, n, bind, req, true, (requested, parallel_flags::INVOKER_RUNTIME | parallel_flags::TEAM));
    if crate::places::reset_on() && th.team().level == 0 {
        th.reset_binding(&Runtime::get().settings().mask);
    }
}

// The split fork: a parallel region whose primary thread's part is not a call the runtime
// makes but the caller's own code between `fork_open` and `fork_close` (gcc's code before
// gcc 4.9 calls `GOMP_parallel_start`, then the outlined function itself, then
// `GOMP_parallel_end`). The team's workers run the job as in `fork`; the primary
// thread returns from the open as member 0, and the close ends its implicit task and joins.
// Between the two the region is recorded in the thread's fork state, innermost last, so
// such regions nest.

/// Opens a parallel region: the team (or the serialized region) begins, its workers run
/// `req.job`, and the calling thread returns as its primary thread, in its implicit task, to
/// run its part in its own code. [`fork_close`] ends it.
///
/// `req.job.data` must stay valid until `fork_close` returns it.
pub fn fork_open(th: Thread, req: ForkRequest) {
    th.bind_if_pending(Runtime::places);
    oxiomp_instrument::fork_call_enter();
    let (n, bind, requested) = decide_team(th);
    let open = if n <= 1 {
        oxiomp_instrument::fork_call_exit();
        serialized_begin_with(th, req.ident, req.job.entry);
        serial_tool_begin(th, requested, parallel_flags::INVOKER_RUNTIME);
        oxiomp_instrument::enter_with(|| req.job.state());
        Open { job: req.job, team: th.team(), forked: None }
    } else {
        let flags = parallel_flags::INVOKER_RUNTIME | parallel_flags::TEAM;
        let forked = start_team(th, n, bind, req, true, (requested, flags));
        forked.team.member_begin(th, 0);
        Open { job: req.job, team: &*forked.team, forked: Some(forked) }
    };
    th.fork_state().push_open(open);
}

/// Closes the innermost region [`fork_open`] opened on `th`: the primary thread's implicit
/// task ends, the team joins. Returns the data of the job it was opened with; `None` (and
/// nothing changes) when `th` is not in such a region as its primary thread, at the region's
/// own level.
pub fn fork_close(th: Thread) -> Option<*const ()> {
    let current: *const Team = th.team();
    let open = th.fork_state().pop_open(current)?;
    match open.forked {
        None => {
            crate::worksharing::end_left_loop(th);
            oxiomp_instrument::leave_with(|| open.job.state());
            serialized_end_flagged(th, parallel_flags::INVOKER_RUNTIME);
        }
        Some(forked) => {
            forked.team.member_end(th);
            join_team(th, forked);
            if crate::places::reset_on() && th.team().level == 0 {
                th.reset_binding(&Runtime::get().settings().mask);
            }
        }
    }
    Some(open.job.data)
}

/// How many threads the next region gets, consuming the pushed clauses; reserves them in the
/// contention group (the reservation is recorded on the team by `run_team`).
fn decide_team(th: Thread) -> (u32, ProcBind, u32) {
    let strict = th.fork_state().take_strict();
    let (n, bind, requested) = decide_team_size(th);
    if let Some(s) = strict
        && n < requested
    {
        s.fell_short(requested, n);
    }
    (n, bind, requested)
}

/// `decide_team` without the `strict` modifier: (threads, binding, threads requested).
fn decide_team_size(th: Thread) -> (u32, ProcBind, u32) {
    let (fs, icvs) = (th.fork_state(), th.icvs());
    let requested = fs.take_nthreads();
    let bind = fs.take_bind().unwrap_or(icvs.bind);
    let team = th.team();
    let requested = if requested > 0 {
        requested
    } else if team.active_level == 0 {
        crate::task::steer::num_threads().unwrap_or(icvs.nthreads)
    } else {
        icvs.nthreads
    };
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

/// Forks a team of exactly `n` threads (n - 1 already reserved in the contention group, when
/// `reserved`) and joins it. `tool`: the threads asked for and the region's OMPT flags, which
/// a tool is told.
#[inline]
fn run_team(th: Thread, n: u32, bind: ProcBind, req: ForkRequest, reserved: bool, tool: (u32, u32)) {
    let forked = start_team(th, n, bind, req, reserved, tool);
    forked.team.run_member(th, 0);
    join_team(th, forked);
}

/// The fork of [`run_team`]: the team's workers start; the primary thread has not begun its
/// implicit task yet.
#[inline(always)]
fn start_team(
    th: Thread,
    n: u32,
    bind: ProcBind,
    req: ForkRequest,
    reserved: bool,
    tool: (u32, u32),
) -> Forked {
    let (requested, flags) = tool;
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
        set(&mut t.encountering, th.task_state().task());
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
            Some(th.place(Runtime::places).unwrap_or(saved.icvs().partition_start).min(nplaces - 1))
        };
        set(&mut t.master_place, master_place);
    }
    // The join epochs are moved out: from here on the team is only read, until the join.
    let mut epochs = std::mem::take(&mut team.primary.epochs);
    let tp: *const Team = &*team;
    let team = team;
    oxiomp_instrument::tool_checked(|| ToolEvent::ParallelBegin { team: tp as usize, requested, flags });
    for (tid, w) in team.workers().enumerate() {
        epochs[tid + 1] = w.assign(tp, tid as u32 + 1);
    }
    oxiomp_instrument::fork_call_exit();
    Forked { team, epochs, saved, level, flags }
}

/// The join of [`run_team`], once the primary thread's implicit task has ended.
#[inline(always)]
fn join_team(th: Thread, forked: Forked) {
    let Forked { team, mut epochs, saved, level, flags } = forked;
    let rt = Runtime::get();
    let tp: *const Team = &*team;
    oxiomp_instrument::tool(|| ToolEvent::JoinArrive { team: tp as usize, index: 0 });
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
    oxiomp_instrument::tool(|| ToolEvent::JoinDone { team: tp as usize });
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
    oxiomp_instrument::tool(|| ToolEvent::ParallelEnd { team: tp as usize, flags });
    if let Some(old) = th.fork_state().keep_hot(level, team) {
        // A nested construct at the same level (a league's inner teams) left its own team here.
        rt.release_workers(old.workers());
    }
}

/// A team is smaller than asked (`wanted` threads, `got`): the first time, one warning says
/// why. Later teams cut short say nothing (the warning would repeat at every region).
#[cold]
fn team_smaller(wanted: u32, got: u32, why: Option<crate::lifecycle::SpawnError>) {
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
    let requested = fs.take_nthreads();
    fs.take_bind();
    fs.take_strict();
    serialized_begin_with(th, ident, 0);
    serial_tool_begin(th, requested.max(1), parallel_flags::INVOKER_PROGRAM);
}

/// A tool is told that a serialized region began on `th` (its team now `th`'s), invoked as
/// `invoker` says: the region, then its one implicit task.
fn serial_tool_begin(th: Thread, requested: u32, invoker: u32) {
    let team = th.team() as *const Team as usize;
    let flags = invoker | parallel_flags::TEAM;
    oxiomp_instrument::tool_checked(|| ToolEvent::ParallelBegin { team, requested, flags });
    oxiomp_instrument::tool_checked(|| ToolEvent::ImplicitTaskBegin {
        team,
        index: 0,
        size: 1,
        initial: false,
    });
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
    t.members.push(Member::of(th.desc()));
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
    t.encountering = th.task_state().task();
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
    serialized_end_flagged(th, parallel_flags::INVOKER_PROGRAM)
}

/// [`serialized_end`] of a region invoked as `invoker` says (for a tool).
fn serialized_end_flagged(th: Thread, invoker: u32) -> bool {
    if !th.fork_state().in_serial() {
        return false;
    }
    th.team().finish_tasks(th);
    th.team().meet_end();
    let team = th.team() as *const Team as usize;
    oxiomp_instrument::tool(|| ToolEvent::ImplicitTaskEnd { team, index: 0, size: 1, initial: false });
    match th.fork_state().end_serial() {
        Some(s) => {
            th.restore(s);
            let flags = invoker | parallel_flags::TEAM;
            oxiomp_instrument::tool(|| ToolEvent::ParallelEnd { team, flags });
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
    let master_place =
        if placed { th.place(Runtime::places).unwrap_or(icvs.partition_start).min(nplaces - 1) } else { 0 };
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
    let tool = (nteams, parallel_flags::INVOKER_RUNTIME | parallel_flags::LEAGUE);
    run_team(th, nteams, ProcBind::False, ForkRequest::new(job, req.ident), false, tool);
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
/// A tool sees the member's implicit task as the team's initial task, and the code run in a
/// one-thread region of the team that the runtime forks (`t`'s implicit task 0): the shape
/// libomp gives it, whose teams run their code so.
///
/// # Safety
/// As for `run_league_member`.
unsafe fn run_league_team(league: &League, t: &Team, th: Thread, gtid: i32) {
    let (member, index) = (th.team() as *const Team as usize, th.tid());
    let (team, team_num) = (t as *const Team as usize, t.team_num as u32);
    let region = parallel_flags::INVOKER_RUNTIME | parallel_flags::TEAM;
    oxiomp_instrument::tool(|| ToolEvent::LeagueTaskBegin {
        league: member,
        index,
        team_num,
        num_teams: t.num_teams as u32,
    });
    oxiomp_instrument::tool_checked(|| ToolEvent::ParallelBegin {
        team,
        requested: t.icvs.thread_limit,
        flags: region,
    });
    // Relaxed: read back only by this thread (`Team::league_initial`).
    t.league_initial.store(crate::task::current(th) as *const Task as *mut Task, Ordering::Relaxed);
    let saved = th.save();
    th.begin_implicit_task(t, 0, t.icvs);
    oxiomp_instrument::tool_checked(|| ToolEvent::ImplicitTaskBegin {
        team,
        index: 0,
        size: 1,
        initial: false,
    });
    if let Some(p) = t.master_place {
        th.bind(p, Runtime::places());
    }
    oxiomp_instrument::user_microtask_enter();
    // SAFETY: as in `Team::run_member`.
    unsafe { (league.user.run)(league.user.data, gtid, 0) };
    crate::worksharing::end_left_loop(th);
    oxiomp_instrument::user_microtask_exit();
    t.finish_tasks(th);
    t.meet_end();
    oxiomp_instrument::tool(|| ToolEvent::ImplicitTaskEnd { team, index: 0, size: 1, initial: false });
    th.restore(saved);
    t.league_initial.store(std::ptr::null_mut(), Ordering::Relaxed);
    oxiomp_instrument::tool(|| ToolEvent::ParallelEnd { team, flags: region });
    oxiomp_instrument::tool(|| ToolEvent::LeagueTaskEnd { league: member, index, team_num });
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
