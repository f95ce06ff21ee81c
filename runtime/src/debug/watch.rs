//! What each thread is doing and waiting for, kept where any thread (a watchdog, a signal
//! handler) can read it: the hang report's source ([`super::hang`]). A recorder of the
//! instrumentation calls keeps it while `OXIOMP_HANG_SECONDS` is set ([`super::watch_events`]);
//! otherwise it stays empty.
//!
//! Only the thread itself writes its [`Watch`]; others read it while it changes, so every
//! field is an atomic. The record holds values, never a pointer a reader follows: what the
//! report shows of a team or a task (its size, location, function, ancestors) the thread
//! copied from its own team or task when it began there. So a reader never touches a
//! descriptor that may have gone; a value read half-way through a change (a state pushed,
//! its wait not yet) shows in one report at worst, and a hung thread's values are stable.
//! The fields are written and read Relaxed, but the count of levels: a reader that sees a
//! level counted sees the values the thread wrote into it before (Release/Acquire).

use std::sync::atomic::{
    AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
};

use oxiomp_instrument::{Meet, MeetKind, MutexOp, State, mutex_kind, sync_kind};

/// How many trace states are kept, outermost first; deeper ones are counted, not kept.
pub const DEPTH: usize = 32;
/// How many nested regions are kept.
pub const LEVELS: usize = 8;
/// How many locks a thread is known to hold at once.
pub const HELD: usize = 8;
/// How many of a task's ancestors are kept (a wait for a task's children finds a descendant
/// this many generations down).
pub const ANCESTORS: usize = 8;
/// How many dimensions of a doacross iteration are kept.
pub const DOACROSS: usize = 4;

/// A region the thread is a member of.
#[derive(Default)]
struct Level {
    /// The team's descriptor.
    team: AtomicU64,
    /// The thread's number in the team (low half) and the team's size (high half).
    member: AtomicU64,
    /// The task the thread runs in this region (its implicit task, or an explicit one), its
    /// routine (0: implicit) and its ancestors, nearest first (0: none).
    task: AtomicU64,
    routine: AtomicU64,
    ancestors: [AtomicU64; ANCESTORS],
    /// The team's `ident_t`, outlined function and nesting level.
    ident: AtomicU64,
    entry: AtomicU64,
    level: AtomicU32,
    /// The `ident_t` of the barrier the thread met last, while it is in it (0: none told).
    barrier: AtomicU64,
    /// The OMPT sync kind of that barrier (0: none told).
    barrier_kind: AtomicU32,
    /// The program's call of that barrier (a return address; 0: not known).
    barrier_code: AtomicU64,
    /// The worksharing loop the thread is in, or was in last, in this region.
    looped: LoopWatch,
}

/// The worksharing loop a thread is in (in one region): what the report needs to find which
/// thread runs an iteration that another waits for (its turn in an `ordered` region, a
/// doacross `depend(sink)`).
#[derive(Default)]
struct LoopWatch {
    /// How many loops the thread has begun in the region: the same number on every member
    /// for the same loop (a team's members meet its loops in one order).
    seq: AtomicU32,
    /// The loop's first and last values and step (the bits of an `i64`), its schedule
    /// (`sched_type`) and chunk, as the thread met it.
    lower: AtomicU64,
    upper: AtomicU64,
    stride: AtomicU64,
    sched: AtomicU32,
    chunk: AtomicU64,
    /// Whether the runtime divides it statically (the report works out its chunks); if not,
    /// the chunk the thread was handed last, iteration numbers from 0: `first..end`.
    is_static: AtomicBool,
    first: AtomicU64,
    end: AtomicU64,
    /// The `ident_t` of the `ordered` region the thread met last in the loop (0: none), and
    /// the program's call of it (a return address; 0: not known).
    ordered: AtomicU64,
    ordered_code: AtomicU64,
}

impl LoopWatch {
    fn view(&self) -> LoopView {
        LoopView {
            seq: self.seq.load(Relaxed),
            lower: self.lower.load(Relaxed) as i64,
            upper: self.upper.load(Relaxed) as i64,
            stride: self.stride.load(Relaxed) as i64,
            sched: self.sched.load(Relaxed) as i32,
            chunk: self.chunk.load(Relaxed) as i64,
            is_static: self.is_static.load(Relaxed),
            first: self.first.load(Relaxed),
            end: self.end.load(Relaxed),
            ordered: self.ordered.load(Relaxed),
            ordered_code: self.ordered_code.load(Relaxed),
        }
    }
}

/// A thread's loop, as read (see [`Watch::loop_in`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoopView {
    /// Loops the thread has begun in the region, this one included (0: none).
    pub seq: u32,
    pub lower: i64,
    pub upper: i64,
    pub stride: i64,
    pub sched: i32,
    pub chunk: i64,
    pub is_static: bool,
    /// The thread's current chunk (a dispatched loop): iterations `first..end`, from 0.
    pub first: u64,
    pub end: u64,
    /// The `ident_t` of the `ordered` region the thread met last in the loop (0: none), and
    /// the program's call of it (0: not known).
    pub ordered: u64,
    pub ordered_code: u64,
}

impl LoopView {
    /// The loop's number of iterations.
    pub fn count(&self) -> u64 {
        let (lb, ub, st) = (self.lower as i128, self.upper as i128, self.stride as i128);
        crate::worksharing::static_sched::trip_count(lb, ub, if st == 0 { 1 } else { st })
            .min(u64::MAX as u128) as u64
    }

    /// The number (from 0) of the iteration of value `v`.
    fn index_of(&self, v: u64) -> u64 {
        let d = v.wrapping_sub(self.lower as u64);
        match self.stride {
            0 => 0,
            st if st > 0 => d / st as u64,
            st => 0u64.wrapping_sub(d) / st.unsigned_abs(),
        }
    }
}

impl Level {
    fn set_task(&self, t: &TaskCopy) {
        self.task.store(t.task, Relaxed);
        self.routine.store(t.routine, Relaxed);
        for (a, v) in self.ancestors.iter().zip(t.ancestors) {
            a.store(v, Relaxed);
        }
    }
}

/// One thread's watched state (in its descriptor).
pub struct Watch {
    /// The trace states (`State` codes), outermost first.
    states: [AtomicU8; DEPTH],
    depth: AtomicU32,
    levels: [Level; LEVELS],
    nlevels: AtomicU32,
    /// The team whose join the thread waits at, as its primary thread (0: none), and its size.
    join: AtomicU64,
    join_size: AtomicU32,
    /// From the end of the thread's part of a region to the region's end (`ParallelEnd`), or
    /// to its next region: tasks it runs meanwhile (at the join) belong to no level of its.
    ended: AtomicBool,
    /// The last team whose region the thread ended its part of.
    left: AtomicU64,
    /// The mutex the thread waits to acquire: OMPT mutex kind (0: none) and address.
    mutex_kind: AtomicU32,
    mutex: AtomicU64,
    /// Addresses of the locks, critical sections and ordered regions it holds (0: free slot).
    held: [AtomicU64; HELD],
    /// The iteration a doacross `depend(sink)` waits for (its first `doacross_n` numbers; 0:
    /// none), the sink's `ident_t` and the number of iterations of the loop's first dimension.
    doacross: [AtomicU64; DOACROSS],
    doacross_n: AtomicU32,
    sink: AtomicU64,
    sink_count: AtomicU64,
    /// When the thread's current wait began, or it last came back to it from running a task
    /// (`now_ns`).
    since: AtomicU64,
}

impl Default for Watch {
    fn default() -> Self {
        Self::new()
    }
}

/// Nanoseconds on the monotonic clock (async-signal-safe).
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes `ts`, which lives through the call.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// What a thread waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// A barrier of `team`: the one of `ident` (0: not told) and OMPT sync kind `kind`, or the
    /// team's join (`join`: the primary thread waits for its workers to end their parts).
    /// `size` is the team's, `entry` its outlined function; `code` the program's call of the
    /// barrier (a return address; 0: not known).
    Barrier { team: u64, ident: u64, kind: u32, join: bool, size: u32, entry: u64, code: u64 },
    /// The child tasks of `task` (a `taskwait`), whose routine is `routine` (0: implicit).
    Taskwait { task: u64, routine: u64 },
    /// The tasks of a taskgroup of `task`.
    Taskgroup { task: u64, routine: u64 },
    /// A lock, critical section or ordered region (OMPT mutex kind) at `addr`.
    Mutex { kind: u32, addr: u64 },
    /// A doacross loop's iteration whose numbers (from 0) in the first `n` dimensions are
    /// `iters` (a `depend(sink)` of `ident_t` `ident`; the loop's first dimension has `count`
    /// iterations).
    Doacross { iters: [u64; DOACROSS], n: u32, ident: u64, count: u64 },
}

/// A region a thread is a member of, as read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Member {
    pub team: u64,
    pub tid: u32,
    pub size: u32,
    pub task: u64,
    /// The team's `ident_t`, outlined function and nesting level (0: an initial thread's
    /// root team).
    pub ident: u64,
    pub entry: u64,
    pub level: u32,
}

/// What a thread copies of the team it begins a region in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TeamCopy {
    pub team: u64,
    pub tid: u32,
    pub size: u32,
    pub ident: u64,
    pub entry: u64,
    pub level: u32,
}

/// What a thread copies of the task it runs: the task, its routine, its ancestors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskCopy {
    pub task: u64,
    pub routine: u64,
    pub ancestors: [u64; ANCESTORS],
}

impl Watch {
    pub fn new() -> Watch {
        Watch {
            states: [const { AtomicU8::new(0) }; DEPTH],
            depth: AtomicU32::new(0),
            levels: Default::default(),
            nlevels: AtomicU32::new(0),
            join: AtomicU64::new(0),
            join_size: AtomicU32::new(0),
            ended: AtomicBool::new(false),
            left: AtomicU64::new(0),
            mutex_kind: AtomicU32::new(0),
            mutex: AtomicU64::new(0),
            held: [const { AtomicU64::new(0) }; HELD],
            doacross: [const { AtomicU64::new(0) }; DOACROSS],
            doacross_n: AtomicU32::new(0),
            sink: AtomicU64::new(0),
            sink_count: AtomicU64::new(0),
            since: AtomicU64::new(0),
        }
    }

    // The writer's side: called on the thread itself only.

    /// In the child of a fork (its one thread runs this, for every descriptor): what the
    /// parent's threads were in and waited for is not the child's.
    pub(crate) fn forget_after_fork(&self) {
        self.reset();
    }

    pub(super) fn reset(&self) {
        self.depth.store(0, Relaxed);
        self.nlevels.store(0, Release);
        self.ended.store(false, Relaxed);
        self.join.store(0, Relaxed);
        self.mutex_kind.store(0, Relaxed);
        self.doacross_n.store(0, Relaxed);
        for h in &self.held {
            h.store(0, Relaxed);
        }
    }

    pub(super) fn enter(&self, s: State) {
        let d = self.depth.load(Relaxed) as usize;
        if d < DEPTH {
            self.states[d].store(s as u8, Relaxed);
        }
        self.depth.store(d as u32 + 1, Relaxed);
        if is_wait(s) {
            self.since.store(now_ns(), Relaxed);
        }
    }

    pub(super) fn leave(&self, s: State) {
        self.depth.store(self.depth.load(Relaxed).saturating_sub(1), Relaxed);
        match s {
            // Back from running a task: whatever the thread waits in made progress.
            State::TaskRunning | State::TaskRunningIf0 => self.since.store(now_ns(), Relaxed),
            State::BarrierPlain => {
                if let Some(l) = self.innermost() {
                    l.barrier.store(0, Relaxed);
                    l.barrier_kind.store(0, Relaxed);
                    l.barrier_code.store(0, Relaxed);
                }
            }
            State::BarrierJoin => self.join.store(0, Relaxed),
            _ => {}
        }
    }

    /// The thread runs `t` now (in its innermost region; not at a region's join, where the
    /// region's level is gone).
    pub(super) fn run_task(&self, t: &TaskCopy) {
        if self.ended.load(Relaxed) {
            return;
        }
        if let Some(l) = self.innermost() {
            l.set_task(t);
        }
    }

    /// The region whose part the thread ended is over (`ParallelEnd`).
    pub(super) fn region_over(&self) {
        self.ended.store(false, Relaxed);
    }

    /// The barrier the thread is in (or about to enter) is of OMPT sync kind `kind`.
    pub(super) fn barrier_kind(&self, kind: u32) {
        if let Some(l) = self.innermost() {
            l.barrier_kind.store(kind, Relaxed);
        }
    }

    /// The thread, a team's primary, waits at the join of `team`, of `size` threads.
    pub(super) fn join(&self, team: u64, size: u32) {
        self.join_size.store(size, Relaxed);
        self.join.store(team, Relaxed);
    }

    fn innermost(&self) -> Option<&Level> {
        // Acquire: see the module (the thread itself reads its own values).
        let n = self.nlevels.load(Acquire) as usize;
        (1..=LEVELS).contains(&n).then(|| &self.levels[n - 1])
    }

    /// The thread begins its part of the region of team `c`, running `task`.
    pub(super) fn push_level(&self, c: &TeamCopy, task: &TaskCopy) {
        let n = self.nlevels.load(Relaxed) as usize;
        if n < LEVELS {
            let l = &self.levels[n];
            l.team.store(c.team, Relaxed);
            l.member.store(c.tid as u64 | (c.size as u64) << 32, Relaxed);
            l.ident.store(c.ident, Relaxed);
            l.entry.store(c.entry, Relaxed);
            l.level.store(c.level, Relaxed);
            l.set_task(task);
            l.barrier.store(0, Relaxed);
            l.barrier_kind.store(0, Relaxed);
            l.barrier_code.store(0, Relaxed);
            l.looped.seq.store(0, Relaxed);
        }
        self.ended.store(false, Relaxed);
        // Release: a reader that counts this level (Acquire) reads the values above.
        self.nlevels.store(n as u32 + 1, Release);
    }

    /// The thread ends its part of its innermost region: a member's end (`Meet`), which every
    /// member tells; or the end of an initial thread's implicit task (`ImplicitTaskEnd` with no
    /// member's end before it: a serialized or league region tells both, and is left once).
    pub(super) fn pop_level(&self, member_end: bool) {
        if !member_end && self.ended.swap(false, Relaxed) {
            return;
        }
        let n = self.nlevels.load(Relaxed) as usize;
        if n == 0 {
            return;
        }
        if let Some(l) = self.innermost() {
            self.left.store(l.team.load(Relaxed), Relaxed);
        }
        self.ended.store(member_end, Relaxed);
        self.nlevels.store(n as u32 - 1, Release);
    }

    pub(super) fn meet(&self, m: Meet) {
        match m.kind {
            // A member's end of its region (a worker tells no implicit task's end).
            MeetKind::RegionEnd => self.pop_level(true),
            MeetKind::Barrier => {
                if let Some(l) = self.innermost() {
                    l.barrier.store(m.ident as u64, Relaxed);
                    l.barrier_code.store(m.code as u64, Relaxed);
                }
            }
            // `sections` handed out as a loop's chunks count as a loop of theirs.
            MeetKind::Loop | MeetKind::Sections => {
                if let Some(l) = self.innermost() {
                    let lp = &l.looped;
                    lp.lower.store(m.lower as u64, Relaxed);
                    lp.upper.store(m.upper as u64, Relaxed);
                    lp.stride.store(m.stride as u64, Relaxed);
                    lp.sched.store(m.sched as u32, Relaxed);
                    lp.chunk.store(m.chunk as u64, Relaxed);
                    lp.is_static.store(false, Relaxed);
                    lp.first.store(0, Relaxed);
                    lp.end.store(0, Relaxed);
                    lp.ordered.store(0, Relaxed);
                    lp.ordered_code.store(0, Relaxed);
                    lp.seq.store(lp.seq.load(Relaxed).wrapping_add(1), Relaxed);
                }
            }
            MeetKind::Ordered => {
                if let Some(l) = self.innermost() {
                    l.looped.ordered.store(m.ident as u64, Relaxed);
                    l.looped.ordered_code.store(m.code as u64, Relaxed);
                }
            }
            MeetKind::Single => {}
        }
    }

    /// The loop the thread met last is divided statically by the runtime (`is_static`), or
    /// handed out in chunks.
    pub(super) fn loop_kind(&self, is_static: bool) {
        if let Some(l) = self.innermost() {
            l.looped.is_static.store(is_static, Relaxed);
        }
    }

    /// The thread is done with its dispatched loop: it has no chunk of it any more.
    pub(super) fn loop_done(&self) {
        if let Some(l) = self.innermost() {
            l.looped.end.store(l.looped.first.load(Relaxed), Relaxed);
        }
    }

    /// The thread is handed a chunk of `iterations` iterations from value `start` of its
    /// loop (a dispatched one: a static loop's chunks the report works out).
    pub(super) fn chunk(&self, start: u64, iterations: u64) {
        let Some(l) = self.innermost() else { return };
        let lp = &l.looped;
        if lp.is_static.load(Relaxed) {
            return;
        }
        let first = lp.view().index_of(start);
        lp.first.store(first, Relaxed);
        lp.end.store(first.saturating_add(iterations), Relaxed);
    }

    pub(super) fn mutex(&self, op: MutexOp, kind: u32, addr: u64) {
        match op {
            MutexOp::Acquire if !matches!(kind, mutex_kind::TEST_LOCK | mutex_kind::TEST_NEST_LOCK) => {
                self.mutex.store(addr, Relaxed);
                self.mutex_kind.store(kind, Relaxed);
                self.since.store(now_ns(), Relaxed);
            }
            MutexOp::Acquired => {
                self.mutex_kind.store(0, Relaxed);
                if let Some(free) = self.held.iter().find(|h| h.load(Relaxed) == 0) {
                    free.store(addr, Relaxed);
                }
            }
            MutexOp::NestAcquired => self.mutex_kind.store(0, Relaxed),
            MutexOp::Released => {
                if let Some(h) = self.held.iter().find(|h| h.load(Relaxed) == addr) {
                    h.store(0, Relaxed);
                }
            }
            _ => {}
        }
    }

    /// The thread's `depend(sink)` of `ident` begins waiting for iteration `iters` (its
    /// numbers in each dimension) of a loop whose first dimension has `count` iterations, or
    /// (None) its wait is over.
    pub(super) fn doacross(&self, iters: Option<&[u64]>, ident: u64, count: u64) {
        let Some(iters) = iters else {
            self.doacross_n.store(0, Relaxed);
            return;
        };
        for (a, &v) in self.doacross.iter().zip(iters) {
            a.store(v, Relaxed);
        }
        self.sink.store(ident, Relaxed);
        self.sink_count.store(count, Relaxed);
        self.since.store(now_ns(), Relaxed);
        self.doacross_n.store(iters.len().min(DOACROSS) as u32, Relaxed);
    }

    // The readers' side: any thread.

    /// The trace states, outermost first (those kept), and how many there are in all.
    pub fn states(&self) -> (impl Iterator<Item = State> + '_, usize) {
        let d = self.depth.load(Relaxed) as usize;
        let kept = self.states[..d.min(DEPTH)].iter().filter_map(|s| state_of(s.load(Relaxed)));
        (kept, d)
    }

    /// The regions the thread is a member of, outermost first.
    pub fn members(&self) -> impl Iterator<Item = Member> + '_ {
        // Acquire: see the module.
        let n = (self.nlevels.load(Acquire) as usize).min(LEVELS);
        self.levels[..n].iter().map(|l| {
            let m = l.member.load(Relaxed);
            Member {
                team: l.team.load(Relaxed),
                tid: m as u32,
                size: (m >> 32) as u32,
                task: l.task.load(Relaxed),
                ident: l.ident.load(Relaxed),
                entry: l.entry.load(Relaxed),
                level: l.level.load(Relaxed),
            }
        })
    }

    /// Whether the thread runs a task below `task` (a child, or a descendant) in any of its
    /// regions.
    pub fn runs_descendant_of(&self, task: u64) -> bool {
        // Acquire: see the module.
        let n = (self.nlevels.load(Acquire) as usize).min(LEVELS);
        task != 0 && self.levels[..n].iter().any(|l| l.ancestors.iter().any(|a| a.load(Relaxed) == task))
    }

    /// The innermost region the thread is a member of.
    pub fn member(&self) -> Option<Member> {
        self.members().last()
    }

    /// Whether the thread is a member of `team`'s region.
    pub fn member_of(&self, team: u64) -> Option<Member> {
        self.members().find(|m| m.team == team)
    }

    /// The loop the thread is in (or met last) in `team`'s region, if it met one there.
    pub fn loop_in(&self, team: u64) -> Option<LoopView> {
        // Acquire: see the module.
        let n = (self.nlevels.load(Acquire) as usize).min(LEVELS);
        let l = self.levels[..n].iter().rfind(|l| l.team.load(Relaxed) == team)?;
        Some(l.looped.view()).filter(|v| v.seq != 0)
    }

    /// The last team whose region the thread ended its part of.
    pub fn left(&self) -> u64 {
        self.left.load(Relaxed)
    }

    /// Whether the thread holds the lock, critical section or ordered region at `addr`.
    pub fn holds(&self, addr: u64) -> bool {
        addr != 0 && self.held.iter().any(|h| h.load(Relaxed) == addr)
    }

    /// What the thread waits for now, and since when (`now_ns`), if it waits.
    pub fn wait(&self) -> Option<(Wait, u64)> {
        let since = self.since.load(Relaxed);
        let kind = self.mutex_kind.load(Relaxed);
        if kind != 0 {
            return Some((Wait::Mutex { kind, addr: self.mutex.load(Relaxed) }, since));
        }
        let n = self.doacross_n.load(Relaxed);
        if n != 0 {
            let mut iters = [0; DOACROSS];
            for (i, a) in iters.iter_mut().zip(&self.doacross) {
                *i = a.load(Relaxed);
            }
            let (ident, count) = (self.sink.load(Relaxed), self.sink_count.load(Relaxed));
            return Some((Wait::Doacross { iters, n, ident, count }, since));
        }
        let d = self.depth.load(Relaxed) as usize;
        if d > DEPTH || self.nlevels.load(Acquire) as usize > LEVELS {
            return None;
        }
        let level = self.innermost();
        let task = |l: &Level| (l.task.load(Relaxed), l.routine.load(Relaxed));
        for s in self.states[..d].iter().rev().filter_map(|s| state_of(s.load(Relaxed))) {
            let wait = match (s, level) {
                // Parts of the wait below them.
                (State::BarrierSpinWait | State::BarrierTask | State::TaskScheduling, _) => continue,
                (State::BarrierPlain, Some(l)) => Wait::Barrier {
                    team: l.team.load(Relaxed),
                    ident: l.barrier.load(Relaxed),
                    kind: l.barrier_kind.load(Relaxed),
                    join: false,
                    size: (l.member.load(Relaxed) >> 32) as u32,
                    entry: l.entry.load(Relaxed),
                    code: l.barrier_code.load(Relaxed),
                },
                (State::BarrierJoin, _) => {
                    let team = self.join.load(Relaxed);
                    if team == 0 {
                        return None;
                    }
                    let size = self.join_size.load(Relaxed);
                    let kind = sync_kind::BARRIER_IMPLICIT_PARALLEL;
                    Wait::Barrier { team, ident: 0, kind, join: true, size, entry: 0, code: 0 }
                }
                (State::Taskwait | State::TaskwaitDeps, Some(l)) => {
                    let (task, routine) = task(l);
                    Wait::Taskwait { task, routine }
                }
                (State::Taskgroup, Some(l)) => {
                    let (task, routine) = task(l);
                    Wait::Taskgroup { task, routine }
                }
                (State::CriticalAcquiring, _) => Wait::Mutex { kind: mutex_kind::CRITICAL, addr: 0 },
                _ => return None,
            };
            return Some((wait, since));
        }
        None
    }
}

/// Whether `s` is a wait a hang can be in.
fn is_wait(s: State) -> bool {
    matches!(
        s,
        State::BarrierPlain
            | State::BarrierJoin
            | State::Taskwait
            | State::TaskwaitDeps
            | State::Taskgroup
            | State::CriticalAcquiring
    )
}

/// The state of trace code `code`.
fn state_of(code: u8) -> Option<State> {
    State::ALL.get((code as usize).checked_sub(1)?).copied()
}

/// Whether OMPT sync kind `kind` is a barrier's.
pub(super) fn is_barrier(kind: u32) -> bool {
    matches!(
        kind,
        sync_kind::BARRIER_EXPLICIT
            | sync_kind::BARRIER_IMPLEMENTATION
            | sync_kind::REDUCTION
            | sync_kind::BARRIER_IMPLICIT_WORKSHARE
            | sync_kind::BARRIER_IMPLICIT_PARALLEL
            | sync_kind::BARRIER_TEAMS
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn team(team: u64, tid: u32, size: u32) -> TeamCopy {
        TeamCopy { team, tid, size, ident: 0, entry: 0x50, level: 1 }
    }

    fn task(task: u64, parent: u64) -> TaskCopy {
        let mut ancestors = [0; ANCESTORS];
        ancestors[0] = parent;
        TaskCopy { task, routine: 0, ancestors }
    }

    #[test]
    fn the_innermost_wait_is_what_the_thread_waits_for() {
        let w = Watch::new();
        assert_eq!(w.wait(), None);
        w.push_level(&team(0x100, 2, 4), &task(0x200, 0));
        w.enter(State::UserMicrotask);
        assert_eq!(w.wait(), None);
        w.meet(Meet::plain(MeetKind::Barrier, 0x300));
        w.enter(State::BarrierPlain);
        w.enter(State::BarrierSpinWait);
        let barrier =
            Wait::Barrier { team: 0x100, ident: 0x300, kind: 0, join: false, size: 4, entry: 0x50, code: 0 };
        assert_eq!(w.wait().map(|(x, _)| x), Some(barrier));
        // Running a task in the barrier is not waiting; a lock it asks for is.
        w.run_task(&task(0x600, 0x200));
        assert!(w.runs_descendant_of(0x200));
        w.enter(State::TaskRunning);
        assert_eq!(w.wait(), None);
        w.mutex(MutexOp::Acquire, mutex_kind::LOCK, 0x400);
        assert_eq!(w.wait().map(|(x, _)| x), Some(Wait::Mutex { kind: mutex_kind::LOCK, addr: 0x400 }));
        w.mutex(MutexOp::Acquired, mutex_kind::LOCK, 0x400);
        assert!(w.holds(0x400));
        w.mutex(MutexOp::Released, mutex_kind::LOCK, 0x400);
        assert!(!w.holds(0x400));
        let before = w.since.load(Relaxed);
        w.leave(State::TaskRunning);
        w.run_task(&task(0x200, 0));
        assert!(w.since.load(Relaxed) >= before, "back from a task, the wait starts again");
        assert_eq!(w.wait().map(|(x, _)| x), Some(barrier));
        w.leave(State::BarrierSpinWait);
        w.leave(State::BarrierPlain);
        assert_eq!(w.wait(), None);
        w.enter(State::Taskwait);
        assert_eq!(w.wait().map(|(x, _)| x), Some(Wait::Taskwait { task: 0x200, routine: 0 }));
        w.leave(State::Taskwait);
        // The member's end leaves the region; tasks run at the join belong to no level.
        w.meet(Meet::plain(MeetKind::RegionEnd, 0));
        assert_eq!(w.member(), None);
        assert_eq!(w.left(), 0x100);
    }

    #[test]
    fn a_dispatched_loops_chunk_is_kept_in_iteration_numbers() {
        let w = Watch::new();
        w.push_level(&team(0x100, 1, 4), &task(0x200, 0));
        assert_eq!(w.loop_in(0x100), None);
        // gcc's loops pass the program's values: from 100 down to 2 by steps of -7.
        let m = Meet {
            lower: 100,
            upper: 2,
            stride: -7,
            sched: 35,
            chunk: 2,
            ..Meet::plain(MeetKind::Loop, 0x10)
        };
        w.meet(m);
        w.loop_kind(false);
        w.chunk(86, 2);
        let l = w.loop_in(0x100).unwrap();
        assert_eq!((l.seq, l.first, l.end, l.is_static, l.count()), (1, 2, 4, false, 15));
        w.meet(Meet::plain(MeetKind::Ordered, 0x20));
        assert_eq!(w.loop_in(0x100).unwrap().ordered, 0x20);
        // Done with the loop: no chunk of it any more.
        w.loop_done();
        let l = w.loop_in(0x100).unwrap();
        assert_eq!(l.first, l.end);
        // The next loop, static: its chunks are worked out by the report, not told.
        w.meet(Meet { lower: 0, upper: 9, stride: 1, sched: 34, ..Meet::plain(MeetKind::Loop, 0x30) });
        w.loop_kind(true);
        w.chunk(0, 3);
        let l = w.loop_in(0x100).unwrap();
        assert_eq!((l.seq, l.is_static, l.first, l.end, l.ordered), (2, true, 0, 0, 0));
        // A new region counts its loops afresh.
        w.push_level(&team(0x300, 0, 2), &task(0x400, 0x200));
        assert_eq!(w.loop_in(0x300), None);
        assert_eq!(w.loop_in(0x100).map(|l| l.seq), Some(2));
    }

    #[test]
    fn a_test_of_a_lock_does_not_wait() {
        let w = Watch::new();
        w.mutex(MutexOp::Acquire, mutex_kind::TEST_LOCK, 0x10);
        assert_eq!(w.wait(), None);
    }

    #[test]
    fn a_region_is_left_once_and_join_tasks_touch_no_level() {
        let w = Watch::new();
        w.push_level(&team(0x1, 0, 1), &task(0xa, 0));
        // A serialized region: the member's end, then its implicit task's end.
        w.push_level(&team(0x2, 0, 1), &task(0xb, 0xa));
        w.meet(Meet::plain(MeetKind::RegionEnd, 0));
        w.pop_level(false);
        assert_eq!(w.member().map(|m| m.team), Some(0x1));
        w.region_over();
        // An active region: the member's end, tasks at the join, the region's end.
        w.push_level(&team(0x3, 0, 2), &task(0xc, 0xa));
        w.meet(Meet::plain(MeetKind::RegionEnd, 0));
        w.run_task(&task(0xd, 0xc));
        w.run_task(&task(0xc, 0xa));
        w.region_over();
        assert_eq!(w.member().map(|m| m.task), Some(0xa));
        // The initial thread's end.
        w.pop_level(false);
        assert_eq!(w.member(), None);
    }

    #[test]
    fn levels_deeper_than_kept_are_counted_and_wait_says_nothing() {
        let w = Watch::new();
        for i in 0..LEVELS as u64 + 3 {
            w.push_level(&team(0x10 + i, 0, 2), &task(0x100 + i, 0));
        }
        w.enter(State::BarrierPlain);
        assert_eq!(w.wait(), None);
        for _ in 0..3 {
            w.meet(Meet::plain(MeetKind::RegionEnd, 0));
            w.region_over();
        }
        assert_eq!(w.member().map(|m| m.team), Some(0x10 + LEVELS as u64 - 1));
    }
}
