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

    /// The number of a new task of the calling thread (0: none; the task is not traced).
    fn task_number(&self) -> u32 {
        crate::next_task_number()
    }
}
