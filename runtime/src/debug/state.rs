//! What a thread is doing, as a debugger (OMPD) and a tool (OMPT's `ompt_get_state`) see it:
//! the innermost OpenMP state of the thread and what it waits for, kept in its descriptor
//! while a state keeper is installed (`OMP_DEBUG=enabled`, or a tool attached).
//!
//! The keeper follows the same instrumentation calls that drive the trace: the subsystem
//! states are entered and left as a stack (ovni's emulator checks that they nest), so the
//! state is the one of the innermost entry that says something (work, a wait, overhead), and
//! leaving it restores the one below. A mutex wait (a lock, critical section, ordered region
//! or atomic) comes from the tool events around the acquisition and lies over the stack.

use std::cell::Cell;

use oxiomp_instrument::{State, mutex_kind, sync_kind};

/// Values of OMPT's and OMPD's `ompt_state_t`.
pub mod ompt_state {
    pub const WORK_SERIAL: u32 = 0x000;
    pub const WORK_PARALLEL: u32 = 0x001;
    pub const WORK_REDUCTION: u32 = 0x002;
    pub const WAIT_BARRIER: u32 = 0x010;
    pub const WAIT_BARRIER_IMPLICIT_PARALLEL: u32 = 0x011;
    pub const WAIT_BARRIER_IMPLICIT_WORKSHARE: u32 = 0x012;
    pub const WAIT_BARRIER_IMPLICIT: u32 = 0x013;
    pub const WAIT_BARRIER_EXPLICIT: u32 = 0x014;
    pub const WAIT_BARRIER_IMPLEMENTATION: u32 = 0x015;
    pub const WAIT_BARRIER_TEAMS: u32 = 0x016;
    pub const WAIT_TASKWAIT: u32 = 0x020;
    pub const WAIT_TASKGROUP: u32 = 0x021;
    pub const WAIT_MUTEX: u32 = 0x040;
    pub const WAIT_LOCK: u32 = 0x041;
    pub const WAIT_CRITICAL: u32 = 0x042;
    pub const WAIT_ATOMIC: u32 = 0x043;
    pub const WAIT_ORDERED: u32 = 0x044;
    pub const WAIT_TARGET: u32 = 0x080;
    pub const WAIT_TARGET_MAP: u32 = 0x081;
    pub const WAIT_TARGET_UPDATE: u32 = 0x082;
    pub const IDLE: u32 = 0x100;
    pub const OVERHEAD: u32 = 0x101;
    pub const UNDEFINED: u32 = 0x102;

    /// Every state with its name, in OMPT's order (what `ompt_enumerate_states` and
    /// `ompd_enumerate_states` list).
    pub const ALL: &[(u32, &std::ffi::CStr)] = &[
        (WORK_SERIAL, c"ompt_state_work_serial"),
        (WORK_PARALLEL, c"ompt_state_work_parallel"),
        (WORK_REDUCTION, c"ompt_state_work_reduction"),
        (WAIT_BARRIER, c"ompt_state_wait_barrier"),
        (WAIT_BARRIER_IMPLICIT_PARALLEL, c"ompt_state_wait_barrier_implicit_parallel"),
        (WAIT_BARRIER_IMPLICIT_WORKSHARE, c"ompt_state_wait_barrier_implicit_workshare"),
        (WAIT_BARRIER_IMPLICIT, c"ompt_state_wait_barrier_implicit"),
        (WAIT_BARRIER_EXPLICIT, c"ompt_state_wait_barrier_explicit"),
        (WAIT_BARRIER_IMPLEMENTATION, c"ompt_state_wait_barrier_implementation"),
        (WAIT_BARRIER_TEAMS, c"ompt_state_wait_barrier_teams"),
        (WAIT_TASKWAIT, c"ompt_state_wait_taskwait"),
        (WAIT_TASKGROUP, c"ompt_state_wait_taskgroup"),
        (WAIT_MUTEX, c"ompt_state_wait_mutex"),
        (WAIT_LOCK, c"ompt_state_wait_lock"),
        (WAIT_CRITICAL, c"ompt_state_wait_critical"),
        (WAIT_ATOMIC, c"ompt_state_wait_atomic"),
        (WAIT_ORDERED, c"ompt_state_wait_ordered"),
        (WAIT_TARGET, c"ompt_state_wait_target"),
        (WAIT_TARGET_MAP, c"ompt_state_wait_target_map"),
        (WAIT_TARGET_UPDATE, c"ompt_state_wait_target_update"),
        (IDLE, c"ompt_state_idle"),
        (OVERHEAD, c"ompt_state_overhead"),
        (UNDEFINED, c"ompt_state_undefined"),
    ];
}

use ompt_state as s;

/// A stack entry that is work: serial or parallel by the thread's team, decided when the
/// state is published.
const WORK: u16 = 0xffff;
/// How deep the stack is kept; deeper entries are counted, and the state stays the last one
/// known until the stack is back within it.
const DEPTH: usize = 48;

/// The keeper's per-thread state: only the thread itself touches it (see `ThreadDesc`'s
/// `Sync`), through `Thread::debug`.
pub struct DebugState {
    /// The entries, innermost at `depth - 1`.
    stack: [Cell<u16>; DEPTH],
    depth: Cell<u32>,
    /// The barrier kind the thread is in (an OMPT `sync_kind`; 0: none told).
    barrier_kind: Cell<u32>,
    /// The mutex wait the thread is in: its state and wait id (state 0: none).
    mutex: Cell<(u32, u64)>,
}

impl Default for DebugState {
    fn default() -> Self {
        Self::new()
    }
}

/// What the keeper publishes after an event: the thread's state (`ompt_state_t`, with
/// [`WORK`] not yet resolved) and the wait id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Published {
    pub state: u32,
    pub wait_id: u64,
}

impl DebugState {
    pub fn new() -> DebugState {
        DebugState {
            stack: [const { Cell::new(0) }; DEPTH],
            depth: Cell::new(0),
            barrier_kind: Cell::new(0),
            mutex: Cell::new((0, 0)),
        }
    }

    /// Forgets everything: a new thread begins on the descriptor.
    pub fn reset(&self) {
        self.depth.set(0);
        self.barrier_kind.set(0);
        self.mutex.set((0, 0));
    }

    /// The thread enters `state`.
    pub fn enter(&self, state: State) {
        let d = self.depth.get() as usize;
        if d < DEPTH {
            self.stack[d].set(self.class(state));
        }
        self.depth.set(d as u32 + 1);
    }

    /// The thread leaves its innermost state.
    pub fn leave(&self) {
        self.depth.set(self.depth.get().saturating_sub(1));
    }

    /// A synchronisation region of OMPT kind `kind` begins (`true`) or ends: a barrier's
    /// kind refines the barrier state the thread is in, or enters next.
    pub fn sync(&self, kind: u32, begin: bool) {
        let barrier = barrier_state(kind);
        if !begin {
            self.barrier_kind.set(0);
            return;
        }
        if barrier.is_none() {
            return;
        }
        self.barrier_kind.set(kind);
        let d = self.depth.get() as usize;
        if (1..=DEPTH).contains(&d) && is_barrier(self.stack[d - 1].get() as u32) {
            self.stack[d - 1].set(barrier.unwrap_or(s::WAIT_BARRIER) as u16);
        }
    }

    /// The thread begins waiting for a mutex of OMPT kind `kind` at `wait_id` (`Some`) or no
    /// longer waits (`None`).
    pub fn mutex_wait(&self, wait: Option<(u32, u64)>) {
        self.mutex.set(match wait {
            // A test does not wait.
            Some((mutex_kind::TEST_LOCK | mutex_kind::TEST_NEST_LOCK, _)) | None => (0, 0),
            Some((kind, id)) => (mutex_state(kind), id),
        });
    }

    /// The state to publish: `team_wait_id` names the barrier the thread waits in (its team).
    pub fn current(&self, team_wait_id: u64) -> Published {
        let (m, id) = self.mutex.get();
        if m != 0 {
            return Published { state: m, wait_id: id };
        }
        let d = (self.depth.get() as usize).min(DEPTH);
        let mut i = d;
        let mut top = None;
        while i > 0 {
            i -= 1;
            let e = self.stack[i].get();
            match top {
                // Overhead over a wait (a barrier's or taskwait's scheduling) is the wait.
                None if e as u32 == s::OVERHEAD => top = Some(e),
                None => return self.publish(e, team_wait_id),
                Some(_) if e == WORK || e as u32 == s::OVERHEAD || e as u32 == s::IDLE => break,
                Some(_) => return self.publish(e, team_wait_id),
            }
        }
        match top {
            Some(e) => self.publish(e, team_wait_id),
            None => Published { state: WORK as u32, wait_id: 0 },
        }
    }

    fn publish(&self, e: u16, team_wait_id: u64) -> Published {
        let state = if e == WORK { WORK as u32 } else { e as u32 };
        let wait_id = if is_barrier(state) { team_wait_id } else { 0 };
        Published { state, wait_id }
    }

    /// The innermost entry, if the stack is within what is kept.
    fn top(&self) -> Option<u32> {
        let d = self.depth.get() as usize;
        (1..=DEPTH).contains(&d).then(|| self.stack[d - 1].get() as u32)
    }

    /// The stack entry for `state`.
    fn class(&self, state: State) -> u16 {
        let v = match state {
            State::BarrierFork | State::WorkerLoop => s::IDLE,
            State::BarrierJoin => s::WAIT_BARRIER_IMPLICIT_PARALLEL,
            // Spinning in, or running tasks at, the barrier the thread is in (a worker waiting
            // for work is idle).
            State::BarrierSpinWait | State::BarrierTask
                if self.top().is_some_and(|t| is_barrier(t) || t == s::IDLE) =>
            {
                self.top().unwrap_or(s::WAIT_BARRIER)
            }
            State::BarrierPlain | State::BarrierSpinWait | State::BarrierTask => {
                barrier_state(self.barrier_kind.get()).unwrap_or(s::WAIT_BARRIER)
            }
            State::Taskwait | State::TaskwaitDeps => s::WAIT_TASKWAIT,
            State::Taskgroup => s::WAIT_TASKGROUP,
            State::CriticalAcquiring => s::WAIT_CRITICAL,
            State::TaskRunning
            | State::TaskRunningIf0
            | State::UserMicrotask
            | State::CriticalSection
            | State::Single
            | State::Section
            | State::StaticForChunk
            | State::DynamicForChunk
            | State::Distribute
            | State::Taskyield
            | State::Attached => return WORK,
            State::CriticalReleasing
            | State::DynamicForInit
            | State::TaskAllocation
            | State::TaskCheckDeps
            | State::TaskDuplicating
            | State::TaskReleasingDeps
            | State::TaskScheduling
            | State::ForkCall
            | State::Init
            | State::InternalMicrotask => s::OVERHEAD,
        };
        v as u16
    }
}

/// Whether `state` is one of the barrier waits.
fn is_barrier(state: u32) -> bool {
    (s::WAIT_BARRIER..=s::WAIT_BARRIER_TEAMS).contains(&state)
}

/// The barrier wait of OMPT sync kind `kind`, if it is a barrier.
fn barrier_state(kind: u32) -> Option<u32> {
    Some(match kind {
        sync_kind::BARRIER_EXPLICIT => s::WAIT_BARRIER_EXPLICIT,
        sync_kind::BARRIER_IMPLEMENTATION | sync_kind::REDUCTION => s::WAIT_BARRIER_IMPLEMENTATION,
        sync_kind::BARRIER_IMPLICIT_WORKSHARE => s::WAIT_BARRIER_IMPLICIT_WORKSHARE,
        sync_kind::BARRIER_IMPLICIT_PARALLEL => s::WAIT_BARRIER_IMPLICIT_PARALLEL,
        sync_kind::BARRIER_TEAMS => s::WAIT_BARRIER_TEAMS,
        _ => return None,
    })
}

/// The wait state of a mutex of OMPT kind `kind`.
fn mutex_state(kind: u32) -> u32 {
    match kind {
        mutex_kind::CRITICAL => s::WAIT_CRITICAL,
        mutex_kind::ATOMIC => s::WAIT_ATOMIC,
        mutex_kind::ORDERED => s::WAIT_ORDERED,
        _ => s::WAIT_LOCK,
    }
}

/// Resolves a published work state by the thread's team: parallel inside a parallel region
/// (or a team of more than one thread), serial outside.
pub fn resolve(state: u32, in_parallel: bool) -> u32 {
    match state {
        x if x == WORK as u32 && in_parallel => s::WORK_PARALLEL,
        x if x == WORK as u32 => s::WORK_SERIAL,
        x => x,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_innermost_state_that_says_something_wins() {
        let d = DebugState::new();
        assert_eq!(d.current(7).state, WORK as u32);
        d.enter(State::UserMicrotask);
        d.sync(sync_kind::BARRIER_EXPLICIT, true);
        d.enter(State::BarrierPlain);
        assert_eq!(d.current(7), Published { state: s::WAIT_BARRIER_EXPLICIT, wait_id: 7 });
        // Looking for a task in the barrier is still waiting there.
        d.enter(State::TaskScheduling);
        assert_eq!(d.current(7).state, s::WAIT_BARRIER_EXPLICIT);
        d.leave();
        // Running one is work.
        d.enter(State::TaskRunning);
        assert_eq!(d.current(7).state, WORK as u32);
        d.mutex_wait(Some((mutex_kind::LOCK, 99)));
        assert_eq!(d.current(7), Published { state: s::WAIT_LOCK, wait_id: 99 });
        d.mutex_wait(None);
        d.leave();
        assert_eq!(d.current(7).state, s::WAIT_BARRIER_EXPLICIT);
        d.leave();
        d.sync(sync_kind::BARRIER_EXPLICIT, false);
        assert_eq!(d.current(7).state, WORK as u32);
        d.enter(State::ForkCall);
        assert_eq!(d.current(7).state, s::OVERHEAD);
        assert_eq!(resolve(WORK as u32, true), s::WORK_PARALLEL);
        assert_eq!(resolve(WORK as u32, false), s::WORK_SERIAL);
    }

    #[test]
    fn spinning_keeps_the_wait_it_spins_in() {
        let d = DebugState::new();
        d.enter(State::UserMicrotask);
        d.enter(State::BarrierJoin);
        d.enter(State::BarrierSpinWait);
        assert_eq!(d.current(3).state, s::WAIT_BARRIER_IMPLICIT_PARALLEL);
        let w = DebugState::new();
        w.enter(State::WorkerLoop);
        w.enter(State::BarrierFork);
        w.enter(State::BarrierSpinWait);
        assert_eq!(w.current(0).state, s::IDLE);
    }

    #[test]
    fn a_kind_told_after_the_barrier_began_refines_it() {
        let d = DebugState::new();
        d.enter(State::BarrierPlain);
        assert_eq!(d.current(1).state, s::WAIT_BARRIER);
        d.sync(sync_kind::BARRIER_IMPLICIT_WORKSHARE, true);
        assert_eq!(d.current(1).state, s::WAIT_BARRIER_IMPLICIT_WORKSHARE);
    }

    #[test]
    fn a_stack_deeper_than_kept_comes_back() {
        let d = DebugState::new();
        d.enter(State::Taskwait);
        for _ in 0..DEPTH + 5 {
            d.enter(State::TaskRunning);
        }
        for _ in 0..DEPTH + 5 {
            d.leave();
        }
        assert_eq!(d.current(0).state, s::WAIT_TASKWAIT);
    }
}
