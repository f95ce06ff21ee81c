//! What a recorder is given: [`Event`]s, in groups that happen at one instant.

use crate::{Site, State, Worksharing};

/// One thing the calling thread does that a recorder may record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// It enters a state (pushes it on its subsystem stack).
    Enter(State),
    /// It leaves a state (pops it).
    Leave(State),
    /// It created the task numbered `id` (see [`Recorder::task_number`]); `site` is the task's
    /// code and construct (its type).
    TaskCreated { id: u32, site: Site },
    /// It starts running task `id`.
    TaskExecute(u32),
    /// It stops running task `id`.
    TaskEnd(u32),
    /// It begins its part of a worksharing construct of kind `kind` whose `ident_t` is `ident`
    /// (0 when unknown).
    WorksharingBegin { kind: Worksharing, ident: usize },
    /// It ends its part of the innermost worksharing construct, of kind `kind`.
    WorksharingEnd(Worksharing),
    /// It is about to sleep in the kernel (a futex wait): it runs no more until
    /// [`Resume`](Event::Resume), and records nothing meanwhile.
    Pause,
    /// It runs again.
    Resume,
    /// Its CPU binding changed (a place, or the program's own affinity call).
    AffinityChanged,
    /// What a tool interface (OMPT) is told and a trace is not: always a group of its own.
    Tool(ToolEvent),
    /// It arrives at a construct every thread of its team meets, in the same order and with
    /// the same values (the run-time checks compare the arrivals): always a group of its own.
    Meet(Meet),
}

/// A construct every thread of a team must meet in the same order, as one thread arrives at
/// it ([`Event::Meet`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meet {
    pub kind: MeetKind,
    /// The construct's `ident_t` (0: unknown, as in gcc's code).
    pub ident: usize,
    /// A loop's first and last (inclusive) value and its step; `sections`: 0, count - 1, 1.
    /// Bits of the loop's type (an `unsigned long long` loop's values above 2^63 wrap).
    pub lower: i64,
    pub upper: i64,
    pub stride: i64,
    /// A loop's schedule (libomp's `sched_type`, modifiers included) and chunk.
    pub sched: i32,
    pub chunk: i64,
    /// For [`MeetKind::RegionEnd`], the region's outlined function (0: unknown), which names
    /// where the region is when its `ident_t` does not.
    pub code: usize,
}

/// What a [`Meet`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeetKind {
    /// A worksharing loop (`for`), static or dispatched.
    Loop,
    /// A `sections` construct.
    Sections,
    /// A `single` construct (every thread arrives; one runs it).
    Single,
    /// A barrier the program calls (explicit, or a construct's implicit one: its `ident_t`
    /// says which).
    Barrier,
    /// The end of the thread's implicit task: it leaves the region (`ident`: the region's).
    RegionEnd,
    /// An `ordered` region of the loop the thread is in (met by each iteration, not by the
    /// team as one: checked against that loop, not queued).
    Ordered,
}

impl Meet {
    /// A construct with no values (single, barrier, region end).
    pub const fn plain(kind: MeetKind, ident: usize) -> Meet {
        Meet { kind, ident, lower: 0, upper: 0, stride: 0, sched: 0, chunk: 0, code: 0 }
    }
}

/// The lives of threads, parallel regions and implicit tasks as a tool interface sees them.
/// `team` is the address of the runtime's team descriptor (opaque here); `index` a thread's
/// number in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolEvent {
    /// The calling thread begins: an initial thread (at its first call into the runtime) or a
    /// worker (before it waits for its first region).
    ThreadBegin { initial: bool },
    /// The calling thread ends (a worker retired, an initial thread whose end the runtime
    /// sees).
    ThreadEnd,
    /// The calling thread begins a parallel region of `team`, asked for `requested` threads;
    /// `flags` as OMPT's `ompt_parallel_flag_t` (invoker and team kind).
    ParallelBegin { team: usize, requested: u32, flags: u32 },
    /// The calling thread, the region's primary, ends it.
    ParallelEnd { team: usize, flags: u32 },
    /// The calling thread begins implicit task `index` of `team`, of `size` threads
    /// (`initial`: an initial thread's implicit task, `team` its root team).
    ImplicitTaskBegin { team: usize, index: u32, size: u32, initial: bool },
    /// The calling thread ends its implicit task `index` of `team` (an initial one: the thread
    /// ends).
    ImplicitTaskEnd { team: usize, index: u32, size: u32, initial: bool },
    /// The calling thread begins the initial task of team `team_num` of a league of
    /// `num_teams` teams: its implicit task `index` of the league's team `league` (which runs
    /// one team's initial task after another when the league has fewer members than teams).
    LeagueTaskBegin { league: usize, index: u32, team_num: u32, num_teams: u32 },
    /// The calling thread ends the initial task of [`ToolEvent::LeagueTaskBegin`].
    LeagueTaskEnd { league: usize, index: u32, team_num: u32 },
    /// The calling thread reaches the implicit barrier at the end of its implicit task
    /// `index` in `team` (a worker's barrier ends when the primary has seen every member
    /// arrive: the worker learns it at its next wake-up).
    JoinArrive { team: usize, index: u32 },
    /// The primary thread has seen every member of `team` arrive at the implicit barrier and
    /// the team's tasks end.
    JoinDone { team: usize },
    /// The calling thread generates task `task` (the address of the runtime's descriptor,
    /// opaque here, whose parent is the task the thread runs); `flags` as OMPT's
    /// `ompt_task_flag_t`; `has_deps`: dependences follow ([`ToolEvent::Dependences`]).
    TaskCreate { task: usize, flags: u32, has_deps: bool },
    /// The dependences of the new task `task`: `n` of them, in the runtime's list at address
    /// `list` (opaque here), alive while the event is dispatched.
    Dependences { task: usize, list: usize, n: u32 },
    /// The calling thread stops running task `prior` for the reason `status` (OMPT's
    /// `ompt_task_status_t`, [`task_status`]) and runs `next` (task addresses; 0: none).
    TaskSchedule { prior: usize, status: u32, next: usize },
    /// A synchronisation region of `kind` (OMPT's `ompt_sync_region_t`, [`sync_kind`]) of
    /// the calling thread's current task reaches `point`.
    Sync { kind: u32, point: SyncPoint },
    /// A mutual-exclusion operation `op` on the mutex at address `wait_id`, of `kind` (OMPT's
    /// `ompt_mutex_t`, [`mutex_kind`]).
    Mutex { op: MutexOp, kind: u32, wait_id: usize },
    /// Task `sink` (just generated, or a `taskwait depend`'s wait) depends on its sibling
    /// `src`, not complete yet (task addresses), through the storage at `addr` (`usize::MAX`:
    /// through `omp_all_memory`).
    TaskDependence { src: usize, sink: usize, addr: usize },
    /// The calling thread's current `taskwait depend` (told by [`ToolEvent::TaskwaitDeps`])
    /// waits for task `src`, not complete yet, through the storage at `addr` (`usize::MAX`:
    /// through `omp_all_memory`). (A tool interface is told the wait's dependences with the
    /// wait; this names the tasks behind them.)
    WaitDependence { src: usize, addr: usize },
    /// Explicit task `task` is ready and queued where team members take tasks (its
    /// dependences are satisfied and the runtime defers it). A task its creator runs at once
    /// is never queued.
    TaskQueued { task: usize },
    /// The calling thread's current task waits for the `n` dependences in the runtime's list
    /// at `list` (a `taskwait depend`, or an if(0) task's dependences): a tool sees the wait as
    /// a task of its own, undeferred and mergeable, whose word is the `ToolData` at `data`.
    TaskwaitDeps { data: usize, list: usize, n: u32 },
    /// The wait of [`ToolEvent::TaskwaitDeps`] with word `data` is over.
    TaskwaitDepsDone { data: usize },
    /// The calling thread begins (`begin`) or ends a worksharing construct of `kind` (OMPT's
    /// `ompt_work_t`, [`work_kind`]) that the trace has no event of (the trace's own,
    /// [`Event::WorksharingBegin`] and [`Event::WorksharingEnd`], are a tool's too, but for a
    /// dynamically scheduled loop, whose schedule this event gives at its beginning); `count`:
    /// its amount of work, when known (0 otherwise).
    Work { kind: u32, begin: bool, count: u64 },
    /// The calling thread takes a chunk of `iterations` iterations from `start` of a
    /// worksharing loop, a `distribute` construct or a `taskloop` (`of`; a taskloop's chunk
    /// when its task starts, the calling thread's current task).
    Chunk { start: u64, iterations: u64, of: ChunkOf },
    /// The calling thread's current task reaches `depend(source)` (`source`) or
    /// `depend(sink)` of a doacross loop, for the iteration whose number (from 0) in each of
    /// the loop's `n` dimensions is in the list of `u64`s at address `iters` (alive while the
    /// event is dispatched). A sink outside the iteration space is not told.
    Doacross { source: bool, iters: usize, n: u32 },
    /// The calling thread's `depend(sink)` of a doacross loop begins (`waiting`) or ends
    /// waiting for an iteration that has not reached its `depend(source)` yet: the iteration
    /// as in [`ToolEvent::Doacross`]; `ident`: the sink's `ident_t` (0: not known); `count`:
    /// the number of iterations of the loop's first dimension. (Told to every recorder that
    /// sees every event: a hang report shows the wait.)
    DoacrossWait { waiting: bool, iters: usize, n: u32, ident: usize, count: u64 },
    /// The calling thread is handed sections of a statically scheduled `sections`
    /// construct (which ones, the compiled code knows).
    Section,
    /// The calling thread begins (`begin`) or ends the block of a `masked` construct.
    Masked { begin: bool },
    /// The calling thread performs a `flush`.
    Flush,
    /// A cancellation, `flags` as OMPT's `ompt_cancel_flag_t` ([`cancel_flags`]), of task
    /// `task` (0: the calling thread's current task).
    Cancel { flags: u32, task: usize },
    /// An `error` directive, of `severity` (1 warning, 2 fatal), with the `len` bytes of text
    /// at address `message` (alive while the event is dispatched).
    Error { severity: u32, message: usize, len: usize },
}

/// What a chunk of iterations belongs to ([`ToolEvent::Chunk`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkOf {
    /// A worksharing loop.
    Loop,
    /// A `distribute` construct.
    Distribute,
    /// A `taskloop`: the chunk is a task.
    Taskloop,
}

/// Where a synchronisation region is ([`ToolEvent::Sync`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncPoint {
    /// It begins (without waiting yet).
    Begin,
    /// It begins and its thread waits at once.
    BeginWait,
    /// Its thread begins waiting.
    Wait,
    /// Its thread stops waiting.
    WaitDone,
    /// Its thread stops waiting and the region ends.
    WaitDoneEnd,
    /// It ends (its thread not waiting).
    End,
    /// It begins and ends at once (nothing to wait for): begins, waits, stops, ends.
    Whole,
}

/// What happens to a mutex ([`ToolEvent::Mutex`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MutexOp {
    /// The thread begins to acquire it.
    Acquire,
    /// The thread holds it.
    Acquired,
    /// The thread released it.
    Released,
    /// A lock is initialised.
    Init,
    /// A lock is destroyed.
    Destroy,
    /// The owner of a nestable lock takes it once more.
    NestAcquired,
    /// The owner of a nestable lock releases it but still holds it.
    NestReleased,
}

/// OMPT's `ompt_task_status_t` values ([`ToolEvent::TaskSchedule`]).
pub mod task_status {
    pub const COMPLETE: u32 = 1;
    pub const YIELD: u32 = 2;
    pub const CANCEL: u32 = 3;
    pub const DETACH: u32 = 4;
    pub const EARLY_FULFILL: u32 = 5;
    pub const LATE_FULFILL: u32 = 6;
    pub const SWITCH: u32 = 7;
    pub const TASKWAIT_COMPLETE: u32 = 8;
}

/// OMPT's `ompt_sync_region_t` values ([`ToolEvent::Sync`]).
pub mod sync_kind {
    pub const BARRIER_EXPLICIT: u32 = 3;
    pub const BARRIER_IMPLEMENTATION: u32 = 4;
    pub const TASKWAIT: u32 = 5;
    pub const TASKGROUP: u32 = 6;
    pub const REDUCTION: u32 = 7;
    pub const BARRIER_IMPLICIT_WORKSHARE: u32 = 8;
    pub const BARRIER_IMPLICIT_PARALLEL: u32 = 9;
    pub const BARRIER_TEAMS: u32 = 10;
}

/// OMPT's `ompt_mutex_t` values ([`ToolEvent::Mutex`]).
pub mod mutex_kind {
    pub const LOCK: u32 = 1;
    pub const TEST_LOCK: u32 = 2;
    pub const NEST_LOCK: u32 = 3;
    pub const TEST_NEST_LOCK: u32 = 4;
    pub const CRITICAL: u32 = 5;
    pub const ATOMIC: u32 = 6;
    pub const ORDERED: u32 = 7;
}

/// OMPT's `ompt_work_t` values ([`ToolEvent::Work`]).
pub mod work_kind {
    pub const SECTIONS: u32 = 2;
    pub const SINGLE_EXECUTOR: u32 = 3;
    pub const SINGLE_OTHER: u32 = 4;
    pub const DISTRIBUTE: u32 = 6;
    pub const TASKLOOP: u32 = 7;
    pub const SCOPE: u32 = 8;
    pub const LOOP_STATIC: u32 = 10;
    pub const LOOP_DYNAMIC: u32 = 11;
    pub const LOOP_GUIDED: u32 = 12;
    pub const LOOP_OTHER: u32 = 13;
}

/// OMPT's `ompt_cancel_flag_t` bits ([`ToolEvent::Cancel`]).
pub mod cancel_flags {
    pub const PARALLEL: u32 = 0x01;
    pub const SECTIONS: u32 = 0x02;
    pub const LOOP: u32 = 0x04;
    pub const TASKGROUP: u32 = 0x08;
    pub const ACTIVATED: u32 = 0x10;
    pub const DETECTED: u32 = 0x20;
    pub const DISCARDED_TASK: u32 = 0x40;
}

/// OMPT's `ompt_task_flag_t` bits of an explicit task ([`ToolEvent::TaskCreate`]).
pub mod task_flags {
    pub const EXPLICIT: u32 = 0x4;
    pub const TASKWAIT: u32 = 0x10;
    pub const UNDEFERRED: u32 = 0x0800_0000;
    pub const UNTIED: u32 = 0x1000_0000;
    pub const FINAL: u32 = 0x2000_0000;
    pub const MERGEABLE: u32 = 0x4000_0000;
    pub const MERGED: u32 = 0x8000_0000;
}

/// OMPT's `ompt_parallel_flag_t` values the runtime passes in [`ToolEvent::ParallelBegin`].
pub mod parallel_flags {
    /// The program calls the region's outlined function (`__kmpc_serialized_parallel`).
    pub const INVOKER_PROGRAM: u32 = 0x1;
    /// The runtime calls it (`__kmpc_fork_call`).
    pub const INVOKER_RUNTIME: u32 = 0x2;
    /// A `teams` construct's league.
    pub const LEAGUE: u32 = 0x4000_0000;
    /// A parallel region's team.
    pub const TEAM: u32 = 0x8000_0000;
}

/// The most events one group holds (a state passed through on the way into another: three).
pub const MAX_GROUP: usize = 4;

/// What consumes the event stream. Implementations must be cheap, lock-free and allocation-free
/// in `record` (it runs on the runtime's hot paths when tracing is on).
pub trait Recorder: Send + Sync {
    /// The calling thread did `events` (at most [`MAX_GROUP`], never empty), in this order, at
    /// one instant.
    fn record(&self, events: &[Event]);

    /// As [`record`](Self::record), but the events may be recorded with the calling thread's
    /// next group, at that group's instant (one clock read for both). Given for a task its
    /// creator hands to the runtime right after allocating it (clang's code fills the task in
    /// between): `[Enter(a), TaskCreated, Leave(a)]` for its allocation state `a`, stamped at
    /// its submission. A recorder may record them at once, as this default does.
    fn record_later(&self, events: &[Event]) {
        self.record(events);
    }

    /// The calling thread's mutex event `op` of kind `kind` on `wait_id`: what
    /// [`record`](Self::record) of the one [`ToolEvent::Mutex`] does, as this default does; a
    /// recorder may answer it without the event's match.
    fn mutex(&self, op: MutexOp, kind: u32, wait_id: usize) {
        self.record(&[Event::Tool(ToolEvent::Mutex { op, kind, wait_id })]);
    }

    /// The calling thread's task acquired the lock at `lock`, of kind `kind` (a lock's set or
    /// successful test, nestable or not, at nesting 1): [`mutex`](Self::mutex) with
    /// [`MutexOp::Acquired`], as this default does, given apart so that a recorder may answer
    /// it without the operation's match.
    fn lock_acquired(&self, kind: u32, lock: usize) {
        self.mutex(MutexOp::Acquired, kind, lock);
    }

    /// The calling thread's task released the lock at `lock`, of kind `kind`: as
    /// [`lock_acquired`](Self::lock_acquired), for [`MutexOp::Released`].
    fn lock_released(&self, kind: u32, lock: usize) {
        self.mutex(MutexOp::Released, kind, lock);
    }

    /// The number of a new task of the calling thread (0: none; the task is not traced).
    fn task_number(&self) -> u32 {
        crate::next_task_number()
    }
}
