//! What a program did wrong in a call the runtime could not carry out as asked. The engine
//! returns a [`Misuse`]; the ABI layer reports it naming the call (`oxiomp: error: <call>:
//! <what>`) and goes on, or, where the program cannot go on correctly, aborts.

use std::fmt;

/// A misuse of the OpenMP API, as the engine found it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misuse {
    /// `omp_fulfill_event` with a null handle.
    NullEvent,
    /// `omp_fulfill_event` with a handle that is not a detachable task's event.
    NotAnEvent,
    /// `omp_fulfill_event` on an event fulfilled before.
    EventFulfilledTwice,
    /// A task submitted again (not an untied task re-submitting itself).
    TaskSubmittedTwice,
    /// `kmp_set_library` with a mode that is not 1, 2 or 3.
    LibraryMode,
    /// `kmp_set_library` inside a parallel region.
    LibraryInRegion,
    /// `omp_pause_resource` inside a parallel or teams region.
    PauseInRegion,
    /// `omp_destroy_allocator` of a predefined allocator.
    PredefinedAllocator,
    /// `omp_destroy_allocator` of a handle that is no allocator.
    DestroyNotAnAllocator,
    /// `omp_destroy_allocator` of an allocator destroyed before.
    AllocatorDestroyedTwice,
    /// An allocation through a handle that is no allocator.
    NotAnAllocator,
    /// An allocation through an allocator destroyed before.
    AllocatorDestroyed,
    /// An allocation that falls back to an `fb_data` that is no allocator.
    FallbackNotAnAllocator,
    /// An allocation that falls back to an `fb_data` allocator destroyed before.
    FallbackDestroyed,
    /// A lock routine on a lock not initialized (or destroyed).
    LockNotInitialized,
    /// `omp_destroy_lock` of a held lock.
    LockStillHeld,
    /// Setting a simple lock the calling thread holds.
    LockHeldByCaller,
    /// Unsetting a lock nobody holds.
    LockNotHeld,
    /// Unsetting a lock another thread holds.
    LockHeldByOther,
    /// Entering a critical section of a name the calling thread is inside already.
    CriticalReentered,
    /// Leaving a critical section the calling thread is not inside.
    NotInsideCritical,
}

impl fmt::Display for Misuse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Misuse::NullEvent => "the event handle is null",
            Misuse::NotAnEvent => "the handle is not the event of a detachable task",
            Misuse::EventFulfilledTwice => "the event was already fulfilled",
            Misuse::TaskSubmittedTwice => {
                "the task was submitted already (only an untied task may re-submit itself, from its own body)"
            }
            Misuse::LibraryMode => "the mode must be 1 (serial), 2 (turnaround) or 3 (throughput); ignored",
            Misuse::LibraryInRegion => "called inside a parallel region; ignored",
            Misuse::PauseInRegion => "called inside a parallel or teams region; nothing paused",
            Misuse::PredefinedAllocator => "a predefined allocator cannot be destroyed; ignored",
            Misuse::DestroyNotAnAllocator => "not an allocator; ignored",
            Misuse::AllocatorDestroyedTwice => "the allocator was destroyed already; ignored",
            Misuse::NotAnAllocator => "not an allocator",
            Misuse::AllocatorDestroyed => "the allocator was destroyed",
            Misuse::FallbackNotAnAllocator => "its fb_data is not an allocator",
            Misuse::FallbackDestroyed => "its fb_data allocator was destroyed",
            Misuse::LockNotInitialized => "the lock is not initialized (or was destroyed)",
            Misuse::LockStillHeld => "the lock is still held",
            Misuse::LockHeldByCaller => "the calling thread already holds this lock: it would wait forever",
            Misuse::LockNotHeld => "the lock is not held",
            Misuse::LockHeldByOther => "the lock is held by another thread",
            Misuse::CriticalReentered => {
                "the calling thread is already inside a critical section of this name: it would wait forever"
            }
            Misuse::NotInsideCritical => "the calling thread is not inside this critical section",
        })
    }
}

impl std::error::Error for Misuse {}
