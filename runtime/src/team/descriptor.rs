//! The team descriptor: what a team of threads shares while it runs a region (its size and
//! nesting, the job, the barrier, the worksharing and task state of the region), and the
//! parts of it a thread reads on its own (the implicit tasks, the construct counters). The
//! fork and join that fill it in and run it are `team`'s; this module names no thread type
//! (see [`Member`]).

use std::ffi::c_void;
use std::ptr::NonNull;

use crossbeam_utils::CachePadded;
use oxiomp_instrument::State;

use crate::barrier::Barrier;
use crate::icv::{Icvs, ProcBind};
use crate::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use crate::task::descriptor::{Task, ToolFrame};

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
    pub(super) const NONE: Job = Job { run: no_job, data: std::ptr::null(), entry: 0, internal: false };

    /// Whether `other` is the same job (the same function on the same data).
    pub(super) fn same(&self, other: &Job) -> bool {
        // `internal` goes with `run` (only the league's function is internal).
        self.run as usize == other.run as usize && self.data == other.data && self.entry == other.entry
    }

    /// The state of a thread running the job (a user or an internal microtask).
    #[inline]
    pub(super) fn state(&self) -> oxiomp_instrument::State {
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
    /// The task that encountered the region (the scheduling parent of its implicit tasks);
    /// null for the initial team.
    pub encountering: *const Task,
    /// The members' implicit tasks (`implicit`'s first, each `DEBUG_FIELDS`'
    /// `team.implicit_stride` bytes after the previous), for a debugger.
    pub implicit_tasks: *const u8,
    /// Members by thread number; `[0]` is the primary thread.
    pub(super) members: Vec<Member>,
    pub(super) barrier: Barrier,
    pub(super) job: Job,
    /// The team's copy of a region's outlined function and arguments (`ForkRequest::outlined`).
    pub(super) outlined: Outlined,
    pub(super) argv: Vec<*mut c_void>,
    /// The ICVs every implicit task of the team starts with.
    pub(super) icvs: Icvs,
    /// Binding policy and the primary thread's place (None: no binding).
    pub(super) policy: ProcBind,
    pub(super) master_place: Option<u32>,
    /// The contention group's thread count.
    pub(crate) cg: *const AtomicU32,
    /// The contention group counter of a team that starts one (league members).
    pub(super) cg_own: AtomicU32,
    /// `single` constructs claimed so far in the current region.
    pub(super) singles: AtomicU32,
    /// Dispatched loops in flight.
    pub(super) ring: crate::worksharing::dispatch::Ring,
    /// Reductions and copyprivate.
    pub(super) exchange: crate::worksharing::reduction::Exchange,
    /// Cancellation of a worksharing construct: its number + 1 (0: none). The region's own
    /// cancellation belongs to the barrier (see `barrier`'s protocol).
    pub(super) cancel_ws: AtomicU32,
    /// State shared by the members of worksharing constructs in flight (doacross loops, the
    /// compiler layer's).
    pub(super) shared: parking_lot::Mutex<Vec<crate::worksharing::shared::SharedEntry>>,
    /// The hidden helper threads' team (see `hidden`): it runs no region, only tasks.
    pub(super) hidden: bool,
    /// Ready and pending explicit tasks.
    pub(super) tasks: crate::task::pool::TaskPool,
    /// The members' implicit tasks, by thread number.
    pub(super) implicit: Box<[CachePadded<Implicit>]>,
    /// A tool's word for the region (OMPT's parallel data: see `tool`).
    pub tool: crate::tool::ToolData,
    /// A league team's initial task as a tool sees it: the implicit task of the league member
    /// running the team's code, which a tool sees run in a one-thread region the runtime forks
    /// for the team (libomp's teams are so). Null for other teams and while no thread runs
    /// the team; written and read only by the thread running it.
    pub(super) league_initial: AtomicPtr<Task>,
    /// What only the primary thread writes at every fork and join, on a line of its own.
    pub(super) primary: CachePadded<PrimaryOnly>,
}

/// The team descriptor's fields a debugger reads (`crate::debug::layout`).
pub(crate) const DEBUG_FIELDS: [crate::debug::layout::Field; 18] = [
    crate::debug_field!("team.nthreads", Team, nthreads),
    crate::debug_field!("team.level", Team, level),
    crate::debug_field!("team.active_level", Team, active_level),
    crate::debug_field!("team.parent_tid", Team, parent_tid),
    crate::debug_field!("team.parent", Team, parent),
    crate::debug_field!("team.master_gtid", Team, master_gtid),
    crate::debug_field!("team.team_num", Team, team_num),
    crate::debug_field!("team.num_teams", Team, num_teams),
    crate::debug_field!("team.entry", Team, entry),
    crate::debug_field!("team.ident", Team, ident),
    crate::debug_field!("team.encountering", Team, encountering),
    crate::debug_field!("team.implicit_tasks", Team, implicit_tasks),
    crate::debug_field!("team.icvs", Team, icvs),
    crate::debug_field!("team.tool", Team, tool),
    crate::debug_field!("team.hidden", Team, hidden),
    crate::debug_field!("implicit.task", Implicit, task),
    crate::debug_field!("implicit.frame", Implicit, frame),
    crate::debug::layout::Field::size_of(
        "team.implicit_stride",
        std::mem::size_of::<CachePadded<Implicit>>(),
    ),
];

/// A member's implicit task and its frames, which the task's `Head::frame` points at once the
/// team has its final address (they are written only while a tool is attached).
pub(crate) struct Implicit {
    pub(crate) task: Task,
    frame: ToolFrame,
}

impl Implicit {
    pub(crate) fn new() -> Implicit {
        Implicit { task: Task::implicit(), frame: ToolFrame::new() }
    }
}

/// A member of a team: its thread's descriptor, by address. The thread descriptor holds teams
/// (its current team, its root team, the teams it keeps for its next forks), so the team's
/// definition does not name the thread's type: the two modules would import each other, and
/// the thread layer sits below the team's. `team`, which knows both, turns a member back into
/// its descriptor (`Member::of`, `Member::desc`).
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct Member(NonNull<c_void>);

impl Member {
    /// # Safety
    /// `addr` is the address of a thread descriptor (`thread::ThreadDesc`; descriptors are
    /// never freed).
    #[inline]
    pub(super) unsafe fn from_addr(addr: NonNull<c_void>) -> Member {
        Member(addr)
    }

    /// The address of the member's thread descriptor.
    #[inline]
    pub(super) fn addr(self) -> NonNull<c_void> {
        self.0
    }
}

/// The part of a team only its primary thread touches, kept off the lines the workers read
/// (which stay valid in their caches from region to region: see `set`).
pub(super) struct PrimaryOnly {
    /// The `go` epoch each worker was released with, to wait for at the join.
    pub(super) epochs: Vec<u32>,
    /// What this team reserved of the contention group, given back at the join.
    pub(super) cg_reserved: u32,
}

// SAFETY: a team is mutated only by its primary thread while no worker runs on it; workers
// read it between the `go` (Acquire) and `joined` (Release) hand-overs. Raw pointers in it point
// to teams and counters that outlive the region.
unsafe impl Sync for Team {}
// SAFETY: as above.
unsafe impl Send for Team {}

impl Team {
    pub(super) fn empty(icvs: Icvs) -> Team {
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
            encountering: std::ptr::null(),
            implicit_tasks: std::ptr::null(),
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
            shared: parking_lot::Mutex::new(Vec::new()),
            hidden: false,
            tasks: crate::task::pool::TaskPool::new(1),
            implicit: Box::new([CachePadded::new(Implicit::new())]),
            tool: crate::tool::ToolData::new(),
            league_initial: AtomicPtr::new(std::ptr::null_mut()),
            primary: CachePadded::new(PrimaryOnly { epochs: Vec::new(), cg_reserved: 0 }),
        }
    }

    /// Points the implicit tasks at this team (after it reached its final address) and
    /// resets them for a new region.
    #[inline]
    pub(super) fn reset_implicit_tasks(&mut self) {
        let me: *const Team = self;
        let first = self.implicit.as_ptr() as *const u8;
        if self.implicit_tasks != first {
            self.implicit_tasks = first;
        }
        for t in self.implicit.iter_mut() {
            t.task.reset_implicit(me);
            let frame: *const ToolFrame = &t.frame;
            if t.task.head.frame.get() != frame {
                t.task.head.frame.set(frame);
            }
        }
    }

    /// Whether the team's members are a `teams` construct's league (each runs the initial
    /// task of one team at a time).
    pub fn is_league(&self) -> bool {
        self.job.internal
    }

    /// A league team's initial task as a tool sees it, while a thread runs the team (see
    /// `league_initial`); null otherwise.
    pub fn league_initial(&self) -> *const Task {
        // Relaxed: written by the thread running the team, the only one that asks.
        self.league_initial.load(Ordering::Relaxed)
    }

    /// The tool's word of member `tid`'s implicit task.
    pub fn implicit_tool_data(&self, tid: u32) -> *mut u64 {
        self.implicit[(tid as usize).min(self.implicit.len() - 1)].task.head.tool.as_ptr()
    }

    /// The implicit task of member `tid`.
    #[inline]
    pub fn implicit_task(&self, tid: u32) -> *const Task {
        &self.implicit[(tid as usize).min(self.implicit.len() - 1)].task
    }

    /// The team's explicit tasks.
    #[inline]
    pub(crate) fn tasks(&self) -> &crate::task::pool::TaskPool {
        &self.tasks
    }

    /// Whether this is the hidden helper threads' team (see `hidden`).
    #[inline]
    pub(crate) fn runs_hidden_tasks(&self) -> bool {
        self.hidden
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

    #[inline]
    pub(crate) fn exchange(&self) -> &crate::worksharing::reduction::Exchange {
        &self.exchange
    }

    /// Whether the region was cancelled at all (its tasks that have not started never do).
    #[inline]
    pub(crate) fn region_cancel_requested(&self) -> bool {
        self.barrier.cancel_requested()
    }

    /// Records a cancellation request for worksharing construct `ws` (Relaxed: the request is
    /// a flag other threads poll at cancellation points; the data the cancelled code touched
    /// is ordered by the barriers that follow).
    #[inline]
    pub(crate) fn cancel_worksharing(&self, ws: u32) {
        self.cancel_ws.store(ws.wrapping_add(1), Ordering::Relaxed);
    }

    /// Whether worksharing construct `ws` was cancelled.
    #[inline]
    pub(crate) fn worksharing_cancelled(&self, ws: u32) -> bool {
        self.cancel_ws.load(Ordering::Relaxed) == ws.wrapping_add(1)
    }

    /// The state of kind `what` of worksharing construct `key`: made by `make` for the first
    /// member to arrive, under the team's lock (so the others find it made), then counted
    /// out by [`Team::shared_leave`].
    pub(crate) fn shared_join(
        &self,
        key: u32,
        what: crate::worksharing::shared::Shared,
        make: impl FnOnce() -> crate::worksharing::shared::SharedState,
    ) -> crate::worksharing::shared::SharedState {
        let mut list = self.shared.lock();
        if let Some(e) = list.iter().find(|e| e.key == key && e.what == what) {
            return e.state.clone();
        }
        let state = make();
        list.push(crate::worksharing::shared::SharedEntry {
            key,
            what,
            state: state.clone(),
            users: self.nthreads,
        });
        state
    }

    /// A member is done with the state of kind `what` of construct `key`; the last one drops
    /// the team's reference.
    pub(crate) fn shared_leave(&self, key: u32, what: crate::worksharing::shared::Shared) {
        let mut list = self.shared.lock();
        if let Some(i) = list.iter().position(|e| e.key == key && e.what == what) {
            list[i].users -= 1;
            if list[i].users == 0 {
                list.swap_remove(i);
            }
        }
    }

    /// Resets the per-region construct state (the team is idle: the primary thread alone
    /// touches it, and the fork's release publishes it, hence Relaxed).
    /// Values are stored only where they changed (see `set`).
    #[inline]
    pub(super) fn begin_region(&mut self) {
        set(self.singles.get_mut(), 0);
        self.ring.reset();
        self.barrier.end_cancellation();
        set(self.cancel_ws.get_mut(), 0);
        self.reset_implicit_tasks();
    }

    /// The ring of dispatched-loop slots.
    #[inline]
    pub(crate) fn ring(&self) -> &crate::worksharing::dispatch::Ring {
        &self.ring
    }

    /// Copies `o` and its arguments into the team (what changed only) and returns the copy.
    ///
    /// # Safety
    /// `o.argv` holds `o.argc` pointers.
    #[inline]
    pub(super) unsafe fn copy_outlined(&mut self, o: &Outlined) -> *const () {
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

    /// What decides where the team's members run: the binding policy, the primary thread's
    /// place and the partition (`OMP_DISPLAY_AFFINITY` reprints when it changes).
    #[inline]
    pub(crate) fn placement_key(&self) -> (ProcBind, Option<u32>, u32, u32) {
        (self.policy, self.master_place, self.icvs.partition_start, self.icvs.partition_len)
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
