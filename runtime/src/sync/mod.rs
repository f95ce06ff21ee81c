//! Synchronisation building blocks. Every atomic in the runtime comes in through [`atomic`], so
//! that `RUSTFLAGS="--cfg loom"` swaps in loom's model-checked types for the concurrency cores.

pub(crate) mod arrival_ring;
pub(crate) mod atomic;
pub(crate) mod chunk_blocks;
#[cfg(not(loom))]
pub(crate) mod fork_lock;
pub(crate) mod futex;
pub(crate) mod lot;
pub(crate) mod mutex;
pub(crate) mod owned_mutex;
pub(crate) mod release;
pub(crate) mod remote_stack;
pub(crate) mod retire;
pub(crate) mod sleep;
pub(crate) mod slot_gate;
pub(crate) mod wait;

#[cfg(not(loom))]
pub use wait::WaitPolicy;

/// A busy-wait hint between polls (under loom a yield, so that the model can run another
/// thread).
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(not(loom))]
    std::hint::spin_loop();
    #[cfg(loom)]
    loom::hint::spin_loop();
}

/// Gives up the CPU between polls (under loom, to another thread of the model).
#[inline]
pub(crate) fn yield_now() {
    #[cfg(not(loom))]
    std::thread::yield_now();
    #[cfg(loom)]
    loom::thread::yield_now();
}
