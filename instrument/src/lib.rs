//! The one event vocabulary of oxiomp.
//!
//! Every place in the runtime that changes what a thread is doing calls one function of this
//! crate: `instr::barrier_plain_enter()`, `instr::barrier_plain_exit()`, and so on. The functions
//! are generated from the single table in [`states!`] below, which also carries each state's
//! ovni event code (OpenMP model "P" 1.2.1) and its Paraver value, so a recorder, an OMPT bridge
//! or a debugger hook can hang off the same calls without the engine growing a second set of
//! hooks.
//!
//! Without tracing each call is one load of a cached flag and a predictable branch. With
//! `OMP_OVNI=1` the [`ovni`] recorder writes every thread's events as ovni streams; [`trace`]
//! reads them back (the `oxiomp-trace` tool) and [`format`] is the binary format both share.

#![deny(clippy::undocumented_unsafe_blocks)]

pub mod format;
pub mod ovni;
pub mod tls;
pub mod trace;

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

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
            pub fn $enter() { if enabled() { recorder().push(State::$variant) } }
            #[doc = concat!("Leave \"", $label, "\".")]
            #[inline(always)]
            pub fn $exit() { if enabled() { recorder().pop(State::$variant) } }
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

/// Where a task's or a construct's code is: its function's address (`entry`, 0: none) and the
/// `ident_t` the compiler passed for the construct (`ident`, 0: none), whose source location a
/// recorder may read (`;file;function;line;column;;`) to name the construct.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Site {
    pub entry: usize,
    pub ident: usize,
}

/// What consumes the event stream. Implementations must be cheap, lock-free and allocation-free
/// on `push`/`pop` (they run on the runtime's hot paths when tracing is on).
pub trait Recorder: Send + Sync {
    /// The calling thread enters `state` (pushes it on its subsystem stack).
    fn push(&self, state: State);
    /// The calling thread leaves `state` (pops it).
    fn pop(&self, state: State);
    /// A task numbered `id` was created; `site` is its code and construct (its type).
    fn task_created(&self, _id: u32, _site: Site) {}
    /// A task numbered `id` was created (as in `task_created`) and the calling thread leaves
    /// `state` (the allocation), at one instant.
    fn task_created_leaving(&self, id: u32, site: Site, state: State) {
        self.task_created(id, site);
        self.pop(state);
    }
    /// A task numbered `id` was created (as in `task_created`) in `state` (its allocation),
    /// which the calling thread enters and leaves at that instant: a state that took no
    /// measurable time.
    fn task_created_within(&self, id: u32, site: Site, state: State) {
        self.push(state);
        self.task_created_leaving(id, site, state);
    }
    /// A task numbered `id` was created in `state` (its allocation), as in
    /// `task_created_within`, but recorded with the calling thread's next event, at that
    /// event's instant (one clock read for both). For a task its creator hands to the runtime
    /// right after allocating it (clang's code fills the task in between): its creation is
    /// stamped at its submission. A recorder may record it at once, as this default does.
    fn task_created_later(&self, id: u32, site: Site, state: State) {
        self.task_created_within(id, site, state);
    }
    /// The number of a new task of the calling thread (0: none; the task is not traced).
    fn task_number(&self) -> u32 {
        next_task_number()
    }
    /// The calling thread starts running task `id`.
    fn task_execute(&self, _id: u32) {}
    /// The calling thread stops running task `id`.
    fn task_end(&self, _id: u32) {}
    /// The calling thread begins (true) or ends its part of a worksharing construct of kind
    /// `w` whose `ident_t` is `ident` (0 when unknown, as at an end).
    fn worksharing(&self, _w: Worksharing, _ident: usize, _begin: bool) {}
    /// The calling thread begins its part of `w` and enters `state` (`begin`), or leaves
    /// `state` and ends its part of `w`, at one instant.
    fn worksharing_state(&self, w: Worksharing, ident: usize, state: State, begin: bool) {
        if begin {
            self.worksharing(w, ident, true);
            self.push(state);
        } else {
            self.pop(state);
            self.worksharing(w, ident, false);
        }
    }
    /// The calling thread leaves `from` and enters `to` at one instant.
    fn switch(&self, from: State, to: State) {
        self.pop(from);
        self.push(to);
    }
    /// The calling thread enters `pass`, leaves it and enters `to` at one instant: a state
    /// that took no measurable time (an uncontended lock acquisition).
    fn pass_into(&self, pass: State, to: State) {
        self.push(pass);
        self.switch(pass, to);
    }
    /// The calling thread leaves `from`, enters `pass` and leaves it at one instant (an
    /// uncontended lock release).
    fn pass_out(&self, from: State, pass: State) {
        self.switch(from, pass);
        self.pop(pass);
    }
    /// The calling thread leaves `inner` and then `outer`, which encloses it, at one instant.
    fn leave_both(&self, inner: State, outer: State) {
        self.pop(inner);
        self.pop(outer);
    }
    /// The calling thread enters `state` to run task `id`, at one instant.
    fn task_begin(&self, state: State, id: u32) {
        self.push(state);
        self.task_execute(id);
    }
    /// The calling thread stops running task `id` and leaves `state`, at one instant.
    fn task_finish(&self, state: State, id: u32) {
        self.task_end(id);
        self.pop(state);
    }
    /// The calling thread is about to sleep in the kernel (a futex wait): it runs no more
    /// until [`thread_resume`](Self::thread_resume), and records nothing meanwhile.
    fn thread_pause(&self) {}
    /// The calling thread runs again.
    fn thread_resume(&self) {}
    /// The calling thread's CPU binding changed.
    fn affinity_changed(&self) {}
}

/// The calling thread is about to sleep in the kernel (ovni's `OHp`): call it right before
/// the blocking call, and [`thread_resume`] right after; nothing else is recorded between.
#[inline]
pub fn thread_pause() {
    if enabled() {
        recorder().thread_pause()
    }
}

/// The calling thread runs again after [`thread_pause`] (ovni's `OHr`).
#[inline]
pub fn thread_resume() {
    if enabled() {
        recorder().thread_resume()
    }
}

/// The calling thread's CPU binding changed (a place, or the program's own affinity call):
/// a recorder notes where the thread now runs (ovni's `OAs`).
#[inline]
pub fn affinity_changed() {
    if enabled() {
        recorder().affinity_changed()
    }
}

/// The calling thread begins its part of worksharing construct `w` and enters `state` (its
/// chunk, section, single, loop initialisation) at one instant.
#[inline(always)]
pub fn worksharing_enter(w: Worksharing, ident: usize, state: State) {
    if enabled() {
        recorder().worksharing_state(w, ident, state, true)
    }
}

/// The calling thread leaves `state` and ends its part of worksharing construct `w` at one
/// instant.
#[inline(always)]
pub fn worksharing_leave(state: State, w: Worksharing) {
    if enabled() {
        recorder().worksharing_state(w, 0, state, false)
    }
}

/// The calling thread leaves state `from` and enters `to` at one instant (adjacent calls, so
/// the recorder may stamp both events with one clock read).
#[inline(always)]
pub fn switch(from: State, to: State) {
    if enabled() {
        recorder().switch(from, to)
    }
}

/// The calling thread passes through state `pass` into `to` at one instant (one clock read
/// for the three events): for a state that took no measurable time.
#[inline(always)]
pub fn pass_into(pass: State, to: State) {
    if enabled() {
        recorder().pass_into(pass, to)
    }
}

/// The calling thread leaves `from` and passes through state `pass` at one instant.
#[inline(always)]
pub fn pass_out(from: State, pass: State) {
    if enabled() {
        recorder().pass_out(from, pass)
    }
}

/// Enter the state `state()` gives, one known only at run time (the generated `*_enter`
/// functions otherwise): worked out only when tracing is on, so that the hot path does not
/// load what it is made of.
#[inline(always)]
pub fn enter_with(state: impl FnOnce() -> State) {
    if enabled() {
        recorder().push(state())
    }
}

/// Leave the state `state()` gives, as in [`enter_with`].
#[inline(always)]
pub fn leave_with(state: impl FnOnce() -> State) {
    if enabled() {
        recorder().pop(state())
    }
}

/// The calling thread enters the state `state()` gives (one of a run of states of one kind: a
/// loop's chunks), leaving the previous one of the run first if `leaving`, at one instant (one
/// clock read for both events).
#[inline(always)]
pub fn again_with(leaving: bool, state: impl FnOnce() -> State) {
    if enabled() {
        let s = state();
        if leaving { recorder().switch(s, s) } else { recorder().push(s) }
    }
}

/// The calling thread leaves the state `what()` gives if `leaving` and ends its part of the
/// worksharing construct it gives if `ending`, at one instant; `what` is worked out only when
/// tracing is on and one of them happens.
#[inline(always)]
pub fn leave_part_with(leaving: bool, ending: bool, what: impl FnOnce() -> (Worksharing, State)) {
    if enabled() && (leaving || ending) {
        let (w, s) = what();
        let r = recorder();
        match (leaving, ending) {
            (true, true) => r.worksharing_state(w, 0, s, false),
            (true, false) => r.pop(s),
            _ => r.worksharing(w, 0, false),
        }
    }
}

/// The calling thread begins its part of worksharing construct `w`, in no state of its own.
#[inline(always)]
pub fn worksharing_begin(w: Worksharing, ident: usize) {
    if enabled() {
        recorder().worksharing(w, ident, true)
    }
}

/// The calling thread leaves barrier state `state` (fork, join, plain), and first "Barrier:
/// spin wait" inside it when `spinning` (it was waiting awake when the barrier completed), at
/// one instant.
#[inline(always)]
pub fn barrier_leave(state: State, spinning: bool) {
    if enabled() {
        if spinning { recorder().leave_both(State::BarrierSpinWait, state) } else { recorder().pop(state) }
    }
}

/// The calling thread enters `state` (a task-running state) to run the task with trace
/// number `id` (0: not traced; the state is still recorded).
#[inline(always)]
pub fn task_begin(state: State, id: u32) {
    if enabled() {
        if id != 0 { recorder().task_begin(state, id) } else { recorder().push(state) }
    }
}

/// The calling thread stops running the task with trace number `id` and leaves `state`.
#[inline(always)]
pub fn task_finish(state: State, id: u32) {
    if enabled() {
        if id != 0 { recorder().task_finish(state, id) } else { recorder().pop(state) }
    }
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

/// The calling thread ends its part of a worksharing construct.
#[inline(always)]
pub fn worksharing_end(w: Worksharing) {
    if enabled() {
        recorder().worksharing(w, 0, false)
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
/// ([`Recorder::task_created_later`]): for a task that its creator submits right after filling
/// it in, so that a task run at once reads the clock twice (its start and its end).
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
    let r = recorder();
    let id = r.task_number();
    match (id, around) {
        (0, Around::Nothing) => {}
        (0, Around::Leaving(s)) => r.pop(s),
        (0, Around::Later(s)) => {
            r.push(s);
            r.pop(s);
        }
        (_, Around::Nothing) => r.task_created(id, site),
        (_, Around::Leaving(s)) => r.task_created_leaving(id, site, s),
        (_, Around::Later(s)) => r.task_created_later(id, site, s),
    }
    id
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
fn next_task_number() -> u32 {
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

static ENABLED: AtomicBool = AtomicBool::new(false);
static RECORDER: OnceLock<&'static dyn Recorder> = OnceLock::new();

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

/// Whether a recorder is installed. Relaxed suffices: the flag only goes from false to true,
/// after the recorder is published through the `OnceLock` (which has its own
/// acquire/release); a thread that still reads false merely skips events of the moment.
#[inline(always)]
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

#[cold]
fn recorder() -> &'static dyn Recorder {
    *RECORDER.get().expect("instrument: enabled without a recorder")
}

/// Stops recording in this process (a child forked where its trace could not begin: see the
/// recorder's fork handler).
pub(crate) fn disable() {
    ENABLED.store(false, Ordering::Relaxed);
}

/// Installs the process-wide recorder. Returns false if one was installed already.
pub fn install(recorder: &'static dyn Recorder) -> bool {
    if RECORDER.set(recorder).is_err() {
        return false;
    }
    ENABLED.store(true, Ordering::Release);
    true
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

    struct Counting(std::sync::atomic::AtomicUsize);
    impl Recorder for Counting {
        fn push(&self, _: State) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
        fn pop(&self, _: State) {
            self.0.fetch_add(100, Ordering::Relaxed);
        }
    }

    #[test]
    fn installed_recorder_sees_calls() {
        static C: Counting = Counting(std::sync::atomic::AtomicUsize::new(0));
        barrier_plain_enter(); // no recorder yet (or already): must not panic
        assert!(install(&C));
        assert!(!install(&C));
        let before = C.0.load(Ordering::Relaxed);
        barrier_plain_enter();
        barrier_plain_exit();
        assert_eq!(C.0.load(Ordering::Relaxed) - before, 101);
    }
}
