//! The one event vocabulary of oxiomp.
//!
//! Every place in the runtime that changes what a thread is doing calls one function of this
//! crate: `instr::barrier_plain_enter()`, `instr::barrier_plain_exit()`, and so on. The functions
//! are generated from the single table in [`states!`] below, which also carries each state's
//! ovni event code (OpenMP model "P" 1.2.1) and its Paraver value, so a recorder, an OMPT bridge
//! or a debugger hook can hang off the same calls without the engine growing a second set of
//! hooks.
//!
//! A recorder is given [`Event`]s in groups that happen at one instant (a state left and the
//! next entered, a task's creation and the end of its allocation), so that it reads the clock
//! once per group: [`Recorder::record`] is its one method that matters.
//!
//! Without tracing each call is one load of a cached flag and a predictable branch. With
//! `OMP_OVNI=1` the [`ovni`] recorder writes every thread's events as ovni streams; [`trace`]
//! reads them back (the `oxiomp-trace` tool) and [`format`] is the binary format both share.

#![deny(clippy::undocumented_unsafe_blocks)]

mod event;
pub mod format;
pub mod ovni;
pub mod tls;
pub mod trace;

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

pub use event::{
    ChunkOf, Event, MAX_GROUP, Meet, MeetKind, MutexOp, Recorder, SyncPoint, ToolEvent, cancel_flags,
    mutex_kind, parallel_flags, sync_kind, task_flags, task_status, work_kind,
};

/// The subsystem a state belongs to (the OpenMP-V subsystem view).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subsystem {
    Barrier,
    Critical,
    WorkDistribution,
    Task,
    Runtime,
}

macro_rules! states {
    ($( $variant:ident, $enter:ident, $exit:ident, $sub:ident, $value:literal, $mcv:literal, $label:literal; )*) => {
        /// A subsystem state a thread can be in. The discriminant is the Paraver value of event
        /// type 50 in ovni's OpenMP model.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        pub enum State { $( $variant = $value, )* }

        impl State {
            /// Every state, in Paraver value order.
            pub const ALL: &'static [State] = &[ $( State::$variant, )* ];

            /// The subsystem this state belongs to.
            pub const fn subsystem(self) -> Subsystem {
                match self { $( State::$variant => Subsystem::$sub, )* }
            }

            /// ovni's model/category/value characters for entering the state (the value
            /// character upper-cased ends it).
            pub const fn ovni_mcv(self) -> &'static [u8; 3] {
                match self { $( State::$variant => $mcv, )* }
            }

            /// The event code of entering (`enter`) or leaving the state.
            pub const fn ovni_code(self, enter: bool) -> [u8; 3] {
                let mut mcv = *self.ovni_mcv();
                if !enter {
                    mcv[2] = format::end_code(mcv[2]);
                }
                mcv
            }

            /// The name shown in views and summaries.
            pub const fn label(self) -> &'static str {
                match self { $( State::$variant => $label, )* }
            }
        }

        $(
            #[doc = concat!("Enter \"", $label, "\".")]
            #[inline(always)]
            pub fn $enter() { record_with(|| [Event::Enter(State::$variant)]) }
            #[doc = concat!("Leave \"", $label, "\".")]
            #[inline(always)]
            pub fn $exit() { record_with(|| [Event::Leave(State::$variant)]) }
        )*
    };
}

states! {
    BarrierFork, barrier_fork_enter, barrier_fork_exit, Barrier, 1, b"PBf", "Barrier: fork";
    BarrierJoin, barrier_join_enter, barrier_join_exit, Barrier, 2, b"PBj", "Barrier: join";
    BarrierPlain, barrier_plain_enter, barrier_plain_exit, Barrier, 3, b"PBb", "Barrier: plain";
    BarrierSpinWait, barrier_spin_wait_enter, barrier_spin_wait_exit, Barrier, 4, b"PBs", "Barrier: spin wait";
    BarrierTask, barrier_task_enter, barrier_task_exit, Barrier, 5, b"PBt", "Barrier: task";
    CriticalAcquiring, critical_acquiring_enter, critical_acquiring_exit, Critical, 6, b"PIa", "Critical: acquiring";
    CriticalReleasing, critical_releasing_enter, critical_releasing_exit, Critical, 7, b"PIr", "Critical: releasing";
    CriticalSection, critical_section_enter, critical_section_exit, Critical, 8, b"PI[", "Critical: section";
    Distribute, distribute_enter, distribute_exit, WorkDistribution, 9, b"PWd", "Work-distribution: distribute";
    DynamicForChunk, dynamic_for_chunk_enter, dynamic_for_chunk_exit, WorkDistribution, 10, b"PWc", "Work-distribution: dynamic for chunk";
    DynamicForInit, dynamic_for_init_enter, dynamic_for_init_exit, WorkDistribution, 11, b"PWy", "Work-distribution: dynamic for init";
    StaticForChunk, static_for_chunk_enter, static_for_chunk_exit, WorkDistribution, 12, b"PWs", "Work-distribution: static for chunk";
    Section, section_enter, section_exit, WorkDistribution, 13, b"PWe", "Work-distribution: section";
    Single, single_enter, single_exit, WorkDistribution, 14, b"PWi", "Work-distribution: single";
    TaskAllocation, task_allocation_enter, task_allocation_exit, Task, 15, b"PTa", "Task: allocation";
    TaskCheckDeps, task_check_deps_enter, task_check_deps_exit, Task, 16, b"PTc", "Task: check deps";
    TaskDuplicating, task_duplicating_enter, task_duplicating_exit, Task, 17, b"PTd", "Task: duplicating";
    TaskReleasingDeps, task_releasing_deps_enter, task_releasing_deps_exit, Task, 18, b"PTr", "Task: releasing deps";
    TaskRunning, task_running_enter, task_running_exit, Task, 19, b"PT[", "Task: running task";
    TaskRunningIf0, task_running_if0_enter, task_running_if0_exit, Task, 20, b"PTi", "Task: running task if0";
    TaskScheduling, task_scheduling_enter, task_scheduling_exit, Task, 21, b"PTs", "Task: scheduling";
    Taskgroup, taskgroup_enter, taskgroup_exit, Task, 22, b"PTg", "Task: taskgroup";
    Taskwait, taskwait_enter, taskwait_exit, Task, 23, b"PTt", "Task: taskwait";
    TaskwaitDeps, taskwait_deps_enter, taskwait_deps_exit, Task, 24, b"PTw", "Task: taskwait deps";
    Taskyield, taskyield_enter, taskyield_exit, Task, 25, b"PTy", "Task: taskyield";
    Attached, attached_enter, attached_exit, Runtime, 26, b"PA[", "Runtime: attached";
    ForkCall, fork_call_enter, fork_call_exit, Runtime, 27, b"PCf", "Runtime: fork call";
    Init, init_enter, init_exit, Runtime, 28, b"PCi", "Runtime: init";
    InternalMicrotask, internal_microtask_enter, internal_microtask_exit, Runtime, 29, b"PMi", "Runtime: internal microtask";
    UserMicrotask, user_microtask_enter, user_microtask_exit, Runtime, 30, b"PMu", "Runtime: user microtask";
    WorkerLoop, worker_loop_enter, worker_loop_exit, Runtime, 31, b"PH[", "Runtime: worker main loop";
}

/// ovni event codes outside the state table (each row of [`states!`] carries its state's
/// code): ovni's own model "O" and the OpenMP model's task, worksharing and type events.
pub mod code {
    /// The thread begins running (payload: CPU, creator's thread id, tag).
    pub const THREAD_EXECUTE: [u8; 3] = *b"OHx";
    /// The thread ends.
    pub const THREAD_END: [u8; 3] = *b"OHe";
    /// The thread pauses (sleeps in the kernel).
    pub const THREAD_PAUSE: [u8; 3] = *b"OHp";
    /// The thread resumes after a pause.
    pub const THREAD_RESUME: [u8; 3] = *b"OHr";
    /// The thread now runs on the CPU of the payload.
    pub const AFFINITY_SET: [u8; 3] = *b"OAs";
    /// The thread begins flushing its buffer.
    pub const FLUSH_BEGIN: [u8; 3] = *b"OF[";
    /// The thread ends flushing its buffer.
    pub const FLUSH_END: [u8; 3] = *b"OF]";
    /// ovni's user-defined burst begins (read, never written).
    pub const USER_BEGIN: [u8; 3] = *b"OU[";
    /// ovni's user-defined burst ends (read, never written).
    pub const USER_END: [u8; 3] = *b"OU]";
    /// A task is created (payload: its number, its type).
    pub const TASK_CREATE: [u8; 3] = *b"PPc";
    /// A task starts running (payload: its number).
    pub const TASK_EXECUTE: [u8; 3] = *b"PPx";
    /// A task stops running (payload: its number).
    pub const TASK_END: [u8; 3] = *b"PPe";
    /// A worksharing part begins (payload: its type).
    pub const WORKSHARING_BEGIN: [u8; 3] = *b"PQx";
    /// A worksharing part ends (payload: its type).
    pub const WORKSHARING_END: [u8; 3] = *b"PQe";
    /// A task or worksharing type is declared (jumbo payload: its number and label).
    pub const TYPE_CREATE: [u8; 3] = *b"POc";
}

/// Where a task's or a construct's code is: its function's address (`entry`, 0: none) and the
/// `ident_t` the compiler passed for the construct (`ident`, 0: none), whose source location a
/// recorder may read (`;file;function;line;column;;`) to name the construct.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Site {
    pub entry: usize,
    pub ident: usize,
}

/// Kinds of worksharing constructs, for their begin/end events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Worksharing {
    ForStatic = 1,
    ForDynamic = 2,
    Sections = 3,
    Single = 4,
    Distribute = 5,
}

impl Worksharing {
    pub const fn label(self) -> &'static str {
        match self {
            Worksharing::ForStatic => "for (static)",
            Worksharing::ForDynamic => "for (dynamic)",
            Worksharing::Sections => "sections",
            Worksharing::Single => "single",
            Worksharing::Distribute => "distribute",
        }
    }
}

// The front ends: one call per instrumentation point. Each is one load of a cached flag and a
// predictable branch while tracing is off; the events are put together only when it is on.

/// Records the events `events()` gives (at most [`MAX_GROUP`]), at one instant. `events` runs
/// only when tracing is on (the hot path does not load what the events are made of), in a
/// function of its own, out of line and cold: an instrumentation point adds one load, a
/// branch and a call to the code around it, which the compiler then inlines and lays out as
/// it would without tracing. In that function the group's shape is known, so the ovni
/// recorder's dispatch on it folds away.
#[inline(always)]
pub fn record_with<const N: usize>(events: impl FnOnce() -> [Event; N]) {
    if enabled() {
        outline(move || deliver(&events()))
    }
}

/// [`record_with`] for the events the run-time checks watch (constructs a team meets, the
/// worksharing constructs a thread begins and ends, regions and their members beginning,
/// cancellation): recorded also when the checks are the only recorder, which the other points
/// then leave alone.
#[inline(always)]
pub fn record_checked_with<const N: usize>(events: impl FnOnce() -> [Event; N]) {
    if any_enabled() {
        outline(move || deliver(&events()))
    }
}

/// [`tool`] for an event the run-time checks watch (see [`record_checked_with`]).
#[inline(always)]
pub fn tool_checked(event: impl FnOnce() -> ToolEvent) {
    record_checked_with(|| [Event::Tool(event())])
}

/// Runs `f`, out of line: one cold function per call site of [`record_with`].
#[cold]
#[inline(never)]
fn outline(f: impl FnOnce()) {
    f()
}

/// Hands `events` to the installed recorders; the ovni recorder directly (inlined), the others
/// through their slots.
#[inline(always)]
fn deliver(events: &[Event]) {
    let m = mode();
    if m & OVNI != 0 {
        ovni::OvniRecorder.record(events);
    }
    if m & !OVNI != 0 {
        deliver_slots(m, events);
    }
}

/// Hands `events` to each slot's recorder whose bit is set in `m`, in the order of [`SLOTS`].
#[cold]
fn deliver_slots(m: u8, events: &[Event]) {
    for slot in SLOTS {
        if m & slot.bit != 0 {
            slot.deliver(events);
        }
    }
}

/// The calling thread is about to sleep in the kernel (ovni's `OHp`): call it right before
/// the blocking call, and [`thread_resume`] right after; nothing else is recorded between.
#[inline]
pub fn thread_pause() {
    record_with(|| [Event::Pause])
}

/// The calling thread runs again after [`thread_pause`] (ovni's `OHr`).
#[inline]
pub fn thread_resume() {
    record_with(|| [Event::Resume])
}

/// Tells a tool interface `event()` (worked out only when a recorder is installed).
#[inline(always)]
pub fn tool(event: impl FnOnce() -> ToolEvent) {
    record_with(|| [Event::Tool(event())])
}

/// Tells a tool interface that the calling thread does `op` on the mutex at `wait_id`, of
/// `kind` ([`mutex_kind`]).
#[inline(always)]
pub fn mutex(op: MutexOp, kind: u32, wait_id: usize) {
    tool(|| ToolEvent::Mutex { op, kind, wait_id })
}

/// [`mutex`] for what the run-time checks watch: a lock's acquisition and release. When the
/// checks are the only recorder, the event goes straight to their [`Recorder::mutex`]: a
/// lock pair costs a few nanoseconds, which the general delivery (a group put together out
/// of line, each slot's bit tested, the event matched) would multiply.
#[inline(always)]
pub fn mutex_checked(op: MutexOp, kind: u32, wait_id: usize) {
    match mode() {
        OFF => {}
        CHECKER => match op {
            MutexOp::Acquired => checker_lock_acquired(kind, wait_id),
            MutexOp::Released => checker_lock_released(kind, wait_id),
            _ => checker_mutex(op, kind, wait_id),
        },
        _ => deliver_mutex(op, kind, wait_id),
    }
}

/// [`mutex_checked`] with other recorders: out of line and taking the event's values (a
/// tail call, as [`checker_mutex`]).
#[cold]
#[inline(never)]
fn deliver_mutex(op: MutexOp, kind: u32, wait_id: usize) {
    deliver(&[Event::Tool(ToolEvent::Mutex { op, kind, wait_id })]);
}

/// [`mutex_checked`] with the checks the only recorder: out of line, so that a lock's fast
/// path stays frame-less (a tail call here).
#[inline(never)]
fn checker_mutex(op: MutexOp, kind: u32, wait_id: usize) {
    if let Some(r) = CHECKER_SLOT.recorder.get() {
        r.mutex(op, kind, wait_id);
    }
}

/// [`checker_mutex`] for a lock's acquisition (the operation known at the call: no match).
#[inline(never)]
fn checker_lock_acquired(kind: u32, lock: usize) {
    if let Some(r) = CHECKER_SLOT.recorder.get() {
        r.lock_acquired(kind, lock);
    }
}

/// [`checker_mutex`] for a lock's release.
#[inline(never)]
fn checker_lock_released(kind: u32, lock: usize) {
    if let Some(r) = CHECKER_SLOT.recorder.get() {
        r.lock_released(kind, lock);
    }
}

/// The calling thread arrives at a construct its whole team meets, `meet()` (worked out only
/// when a recorder is installed): for the run-time checks.
#[inline(always)]
pub fn meet(meet: impl FnOnce() -> Meet) {
    record_checked_with(|| [Event::Meet(meet())])
}

/// The calling thread's CPU binding changed (a place, or the program's own affinity call):
/// a recorder notes where the thread now runs (ovni's `OAs`).
#[inline]
pub fn affinity_changed() {
    record_with(|| [Event::AffinityChanged])
}

/// The calling thread begins its part of worksharing construct `w` and enters `state` (its
/// chunk, section, single, loop initialisation) at one instant.
#[inline(always)]
pub fn worksharing_enter(w: Worksharing, ident: usize, state: State) {
    record_checked_with(|| [Event::WorksharingBegin { kind: w, ident }, Event::Enter(state)])
}

/// The calling thread leaves `state` and ends its part of worksharing construct `w` at one
/// instant.
#[inline(always)]
pub fn worksharing_leave(state: State, w: Worksharing) {
    record_checked_with(|| [Event::Leave(state), Event::WorksharingEnd(w)])
}

/// The calling thread begins its part of worksharing construct `w`, in no state of its own.
#[inline(always)]
pub fn worksharing_begin(w: Worksharing, ident: usize) {
    record_checked_with(|| [Event::WorksharingBegin { kind: w, ident }])
}

/// The calling thread ends its part of a worksharing construct.
#[inline(always)]
pub fn worksharing_end(w: Worksharing) {
    record_checked_with(|| [Event::WorksharingEnd(w)])
}

/// The calling thread leaves state `from` and enters `to` at one instant.
#[inline(always)]
pub fn switch(from: State, to: State) {
    record_with(|| [Event::Leave(from), Event::Enter(to)])
}

/// The calling thread passes through state `pass` into `to` at one instant: for a state that
/// took no measurable time (an uncontended lock acquisition).
#[inline(always)]
pub fn pass_into(pass: State, to: State) {
    record_with(|| [Event::Enter(pass), Event::Leave(pass), Event::Enter(to)])
}

/// The calling thread leaves `from` and passes through state `pass` at one instant (an
/// uncontended lock release).
#[inline(always)]
pub fn pass_out(from: State, pass: State) {
    record_with(|| [Event::Leave(from), Event::Enter(pass), Event::Leave(pass)])
}

/// Enter the state `state()` gives, one known only at run time (the generated `*_enter`
/// functions otherwise): worked out only when tracing is on.
#[inline(always)]
pub fn enter_with(state: impl FnOnce() -> State) {
    record_with(|| [Event::Enter(state())])
}

/// Leave the state `state()` gives, as in [`enter_with`].
#[inline(always)]
pub fn leave_with(state: impl FnOnce() -> State) {
    record_with(|| [Event::Leave(state())])
}

/// The calling thread enters `state` (a task-running state) to run the task with trace
/// number `id` (0: not traced; the state is still recorded).
#[inline(always)]
pub fn task_begin(state: State, id: u32) {
    if id != 0 {
        record_with(|| [Event::Enter(state), Event::TaskExecute(id)])
    } else {
        record_with(|| [Event::Enter(state)])
    }
}

/// The calling thread stops running the task with trace number `id` and leaves `state`.
#[inline(always)]
pub fn task_finish(state: State, id: u32) {
    if id != 0 {
        record_with(|| [Event::TaskEnd(id), Event::Leave(state)])
    } else {
        record_with(|| [Event::Leave(state)])
    }
}

/// The next block of task trace numbers not yet given to a thread.
static NEXT_TASK_IDS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
/// Task trace numbers a thread takes at once (so that threads creating tasks do not all
/// increment one shared counter per task).
const TASK_ID_BLOCK: u32 = 1024;

thread_local! {
    /// The calling thread's unused task trace numbers: `next..end`.
    static TASK_IDS: std::cell::Cell<(u32, u32)> = const { std::cell::Cell::new((0, 0)) };
}

/// A task was created: returns its trace number (0 when tracing is off, when nothing is
/// recorded for it).
#[inline(always)]
pub fn task_created(site: Site) -> u32 {
    if !enabled() {
        return 0;
    }
    task_created_slow(site, Around::Nothing)
}

/// [`task_created`], and the calling thread leaves `state` (which it entered to allocate the
/// task) at the same instant: one clock read for both.
#[inline(always)]
pub fn task_created_leaving(site: Site, state: State) -> u32 {
    if !enabled() {
        return 0;
    }
    task_created_slow(site, Around::Leaving(state))
}

/// [`task_created`] in `state` (the allocation), entered and left at the instant of the
/// creation (an allocation too short to time: the clock read would cost more than what it
/// measures), recorded with the calling thread's next event and stamped with its clock read
/// ([`Recorder::record_later`]): for a task that its creator submits right after filling it
/// in, so that a task run at once reads the clock twice (its start and its end).
#[inline(always)]
pub fn task_created_later(site: Site, state: State) -> u32 {
    if !enabled() {
        return 0;
    }
    task_created_slow(site, Around::Later(state))
}

/// The state events recorded at the instant of a task's creation.
#[derive(Clone, Copy)]
enum Around {
    Nothing,
    /// The thread leaves this state.
    Leaving(State),
    /// The thread enters and leaves this state, at the instant of its next event.
    Later(State),
}

/// Numbers a new task and records its creation, with the state events `around` it (which
/// are recorded even when the task gets no number).
#[cold]
fn task_created_slow(site: Site, around: Around) -> u32 {
    let ovni = mode() & OVNI != 0;
    let id = if ovni {
        ovni::OvniRecorder.task_number()
    } else if let Some(r) = recorder() {
        r.task_number()
    } else if mode() & AYUDAME != 0 {
        // Ayudame's task ids are the tasks' numbers.
        next_task_number()
    } else {
        0
    };
    let created = Event::TaskCreated { id, site };
    match (id, around) {
        (0, Around::Nothing) => {}
        (0, Around::Leaving(s)) => deliver(&[Event::Leave(s)]),
        (0, Around::Later(s)) => deliver(&[Event::Enter(s), Event::Leave(s)]),
        (_, Around::Nothing) => deliver(&[created]),
        (_, Around::Leaving(s)) => deliver(&[created, Event::Leave(s)]),
        (_, Around::Later(s)) => {
            let events = [Event::Enter(s), created, Event::Leave(s)];
            if ovni {
                ovni::OvniRecorder.record_later(&events);
                if mode() & OTHER != 0 {
                    TOOL_SLOT.deliver(&events);
                }
            } else if let Some(r) = recorder() {
                r.record_later(&events);
            } else {
                deliver(&events);
            }
        }
    }
    id
}

/// A new number from the tasks' numbering, for something a recorder tells as a task of its
/// own (a `taskwait depend`'s wait): unique among the tasks' numbers, never 0.
pub fn next_number() -> u32 {
    next_task_number()
}

/// A new block of task numbers for one thread: `(next, end)`, `next` not 0.
pub(crate) fn task_number_block() -> (u32, u32) {
    // Relaxed: unique blocks are all that is needed. Number 0 means "not traced", so a block
    // that starts at 0 (the first, or after wrapping) skips it.
    let next = NEXT_TASK_IDS.fetch_add(TASK_ID_BLOCK, Ordering::Relaxed);
    (next.max(1), next.wrapping_add(TASK_ID_BLOCK))
}

/// The next task number of the calling thread's block, kept in a thread-local (0 if the
/// thread's storage is gone): for recorders that keep no per-thread state of their own.
pub(crate) fn next_task_number() -> u32 {
    TASK_IDS
        .try_with(|ids| {
            let (mut next, mut end) = ids.get();
            if next == end {
                (next, end) = task_number_block();
            }
            ids.set((next.wrapping_add(1), end));
            next
        })
        .unwrap_or(0)
}

thread_local! {
    /// The OS thread id of the thread that started the calling one (-1: none known).
    static CREATOR: std::cell::Cell<i32> = const { std::cell::Cell::new(-1) };
}

/// The calling thread was started by the thread whose OS thread id is `tid`: a recorder names it
/// as the thread's creator (ovni's `OHx`). A thread that never calls this (the program's own
/// threads, the initial thread) has none (-1). Call it before the thread's first event.
pub fn thread_started_by(tid: i32) {
    let _ = CREATOR.try_with(|c| c.set(tid));
}

/// The creator set by [`thread_started_by`] for the calling thread, or -1.
pub(crate) fn creator() -> i32 {
    CREATOR.try_with(|c| c.get()).unwrap_or(-1)
}

/// Which recorders are installed, a bit each: `OVNI` ([`ovni::OvniRecorder`], called
/// directly) and one per [`Slot`]: `OTHER` (a tool interface), `KEEPER` (what keeps each
/// thread's state for a debugger), `CHECKER` (the run-time checks), `WATCHER` (what keeps each
/// thread's waits for a hang report) and `AYUDAME` (task-graph events for an Ayudame library);
/// any may be (a trace, a tool, a debugger, the checks, the watch and Ayudame at once), or none
/// (`OFF`).
static MODE: AtomicU8 = AtomicU8::new(OFF);
const OFF: u8 = 0;
const OVNI: u8 = 1;
const OTHER: u8 = 2;
const KEEPER: u8 = 4;
const CHECKER: u8 = 8;
const WATCHER: u8 = 16;
const AYUDAME: u8 = 32;

/// A recorder beside the ovni one: its bit in `MODE`, and the recorder once installed.
struct Slot {
    bit: u8,
    recorder: OnceLock<&'static dyn Recorder>,
}

impl Slot {
    const fn new(bit: u8) -> Slot {
        Slot { bit, recorder: OnceLock::new() }
    }

    /// Installs `recorder` and sets the slot's bit. Returns false if one was installed
    /// already.
    fn install(&self, recorder: &'static dyn Recorder) -> bool {
        if self.recorder.set(recorder).is_err() {
            return false;
        }
        // Release: with the OnceLock's own, the recorder is published before the bit.
        MODE.fetch_or(self.bit, Ordering::Release);
        true
    }

    /// Hands `events` to the slot's recorder, if it is visible yet (see [`mode`]).
    fn deliver(&self, events: &[Event]) {
        if let Some(r) = self.recorder.get() {
            r.record(events);
        }
    }
}

static TOOL_SLOT: Slot = Slot::new(OTHER);
static KEEPER_SLOT: Slot = Slot::new(KEEPER);
static CHECKER_SLOT: Slot = Slot::new(CHECKER);
static WATCHER_SLOT: Slot = Slot::new(WATCHER);
static AYUDAME_SLOT: Slot = Slot::new(AYUDAME);
/// The slots in the order they see a group: the tool's, the keeper's (a debugger's view), the
/// checks', the watch's, Ayudame's.
static SLOTS: [&Slot; 5] = [&TOOL_SLOT, &KEEPER_SLOT, &CHECKER_SLOT, &WATCHER_SLOT, &AYUDAME_SLOT];

/// Whether a recorder prints its warnings (the runtime's `KMP_WARNINGS`).
static WARNINGS: AtomicBool = AtomicBool::new(true);

/// Turns the recorders' warnings on or off (the runtime passes its own setting on).
pub fn set_warnings(on: bool) {
    // Relaxed: a setting read when a warning is printed; no data depends on it.
    WARNINGS.store(on, Ordering::Relaxed);
}

/// Whether a recorder prints its warnings.
pub(crate) fn warnings_on() -> bool {
    // Relaxed: see `set_warnings`.
    WARNINGS.load(Ordering::Relaxed)
}

/// Which recorders are installed (`MODE`). Relaxed suffices: a bit is set after its recorder
/// is published (through the `OnceLock`, or a static) and cleared for good; a thread that
/// reads a bit before the recorder is visible to it finds no recorder and skips the events
/// of the moment ([`Slot::deliver`]), as one that still reads the bit clear does.
#[inline(always)]
fn mode() -> u8 {
    MODE.load(Ordering::Relaxed)
}

/// Whether a recorder that sees every event is installed (a trace, a tool, a debugger's
/// keeper): what most instrumentation points test.
#[inline(always)]
pub fn enabled() -> bool {
    mode() & !CHECKER != OFF
}

/// Whether any recorder is installed, the run-time checks included: what the points the
/// checks watch test ([`record_checked_with`]), and the fast paths that skip such a point.
#[inline(always)]
pub fn any_enabled() -> bool {
    mode() != OFF
}

/// Whether a tool interface's recorder ([`install`]) is listening: the runtime then takes the
/// paths whose synchronisation a tool can see (a tool sees no atomic the runtime uses).
#[inline]
pub fn tool_attached() -> bool {
    mode() & OTHER != 0
}

#[cold]
fn recorder() -> Option<&'static dyn Recorder> {
    TOOL_SLOT.recorder.get().copied()
}

/// Stops the ovni recorder in this process (a child forked where its trace could not begin:
/// see the recorder's fork handler); a tool's recorder stays.
pub(crate) fn disable() {
    MODE.fetch_and(!OVNI, Ordering::Relaxed);
}

/// Installs the process-wide recorder of a tool interface, beside the ovni recorder if that
/// one is on. Returns false if one was installed already.
pub fn install(recorder: &'static dyn Recorder) -> bool {
    TOOL_SLOT.install(recorder)
}

/// Installs the recorder that keeps each thread's state where a debugger reads it (it sees
/// every event, after the trace's and the tool's recorders). Returns false if one was
/// installed already.
pub fn install_keeper(keeper: &'static dyn Recorder) -> bool {
    KEEPER_SLOT.install(keeper)
}

/// Installs the run-time checks' recorder (it sees every event, after the others). Returns
/// false if one was installed already.
pub fn install_checker(checker: &'static dyn Recorder) -> bool {
    CHECKER_SLOT.install(checker)
}

/// How many locks explicit tasks have set and not unset yet, as the run-time checks count
/// them (always 0 without the checks). While it is 0 no task can end holding a lock, and the
/// runtime does not tell the checks, when they are the only recorder, of each task's end.
static TASK_LOCKS: AtomicUsize = AtomicUsize::new(0);

/// The run-time checks saw an explicit task set a lock (`set`) or a lock set by one unset.
pub fn task_locks_changed(set: bool) {
    // Relaxed: a task's own set and its end are on one thread, in that order (a lock set by
    // an untied task, which may move, is not counted): it reads its own increment. Another
    // thread's count only makes this one tell the checks of a task's end needlessly.
    if set {
        TASK_LOCKS.fetch_add(1, Ordering::Relaxed);
    } else {
        TASK_LOCKS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Whether some explicit task holds a lock it set (see [`task_locks_changed`]).
#[inline]
pub fn task_locks_held() -> bool {
    // Relaxed: see `task_locks_changed`.
    TASK_LOCKS.load(Ordering::Relaxed) != 0
}

/// Installs the recorder that keeps each thread's waits for a hang report (it sees every
/// event, after the others). Returns false if one was installed already.
pub fn install_watcher(watcher: &'static dyn Recorder) -> bool {
    WATCHER_SLOT.install(watcher)
}

/// Installs the recorder that tells an Ayudame library of the task graph (it sees every
/// event, after the others). Returns false if one was installed already.
pub fn install_ayudame(ayudame: &'static dyn Recorder) -> bool {
    AYUDAME_SLOT.install(ayudame)
}

/// Whether a recorder that follows each task listens (a tool, an Ayudame library): a
/// taskloop then creates each chunk as a task of its own, as the program's code asks, rather
/// than running ranges of chunks in reused blocks.
#[inline]
pub fn tasks_followed() -> bool {
    mode() & (OTHER | AYUDAME) != 0
}

/// Whether the runtime keeps task frames: a tool (OMPT) or a debugger (OMPD) reads them.
#[inline(always)]
pub fn frames_wanted() -> bool {
    mode() & (OTHER | KEEPER) != 0
}

/// Stops handing events to the recorder of [`install`] (the tool was finalized); it stays
/// installed, so that no other can be.
pub fn uninstall() {
    MODE.fetch_and(!OTHER, Ordering::Relaxed);
}

/// Turns the ovni recorder on, which the front ends then call directly (a static: nothing to
/// publish first). Returns false if it was on already.
pub(crate) fn install_ovni(_recorder: &'static ovni::OvniRecorder) -> bool {
    MODE.fetch_or(OVNI, Ordering::Release) & OVNI == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_all_31_states_with_distinct_codes() {
        assert_eq!(State::ALL.len(), 31);
        for (i, s) in State::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i + 1, "{s:?} out of order");
            assert_eq!(s.ovni_mcv()[0], b'P');
            for t in &State::ALL[i + 1..] {
                assert_ne!(s.ovni_mcv(), t.ovni_mcv());
                assert_ne!(s.label(), t.label());
            }
        }
        assert_eq!(State::CriticalSection.subsystem(), Subsystem::Critical);
        assert_eq!(State::WorkerLoop.label(), "Runtime: worker main loop");
    }

    /// The groups the calling test thread recorded, in order.
    struct Groups(std::sync::Mutex<Vec<(std::thread::ThreadId, Vec<Event>)>>);
    impl Recorder for Groups {
        fn record(&self, events: &[Event]) {
            self.0.lock().unwrap().push((std::thread::current().id(), events.to_vec()));
        }
    }

    #[test]
    fn front_ends_deliver_their_events_in_groups() {
        static G: Groups = Groups(std::sync::Mutex::new(Vec::new()));
        barrier_plain_enter(); // no recorder yet (or already): must not panic
        assert!(install(&G));
        assert!(!install(&G));
        let me = std::thread::current().id();
        let mine = || -> Vec<Vec<Event>> {
            let all = G.0.lock().unwrap();
            all.iter().filter(|(t, _)| *t == me).map(|(_, g)| g.clone()).collect()
        };
        let before = mine().len();
        barrier_plain_enter();
        switch(State::BarrierPlain, State::Single);
        task_begin(State::TaskRunning, 0);
        task_begin(State::TaskRunning, 7);
        task_finish(State::TaskRunning, 7);
        record_with(|| [Event::Leave(State::Single), Event::WorksharingEnd(Worksharing::Single)]);
        pass_into(State::CriticalAcquiring, State::CriticalSection);
        use Event::*;
        use State::*;
        assert_eq!(
            mine()[before..],
            [
                vec![Enter(BarrierPlain)],
                vec![Leave(BarrierPlain), Enter(Single)],
                vec![Enter(TaskRunning)],
                vec![Enter(TaskRunning), TaskExecute(7)],
                vec![TaskEnd(7), Leave(TaskRunning)],
                vec![Leave(Single), WorksharingEnd(Worksharing::Single)],
                vec![Enter(CriticalAcquiring), Leave(CriticalAcquiring), Enter(CriticalSection)],
            ]
        );
        // A tool event: a group of its own.
        tool(|| ToolEvent::JoinArrive { team: 8, index: 1 });
        assert_eq!(mine().last().unwrap(), &vec![Tool(ToolEvent::JoinArrive { team: 8, index: 1 })]);
        // A creation with its allocation state: one group, the task numbered (not 0).
        let id = task_created_leaving(Site { entry: 1, ident: 0 }, TaskAllocation);
        assert_ne!(id, 0);
        assert_eq!(
            mine().last().unwrap(),
            &vec![TaskCreated { id, site: Site { entry: 1, ident: 0 } }, Leave(TaskAllocation)]
        );
    }
}
