//! Synchronisation building blocks. Every atomic in the runtime comes in through [`atomic`], so
//! that `RUSTFLAGS="--cfg loom"` swaps in loom's model-checked types for the concurrency cores.

pub(crate) mod atomic;
pub(crate) mod chunk_blocks;
#[cfg(not(loom))]
pub(crate) mod fork_lock;
pub(crate) mod futex;
pub(crate) mod mutex;
pub(crate) mod release;
pub(crate) mod remote_stack;
pub(crate) mod retire;
pub(crate) mod sleep;
pub(crate) mod wait;

#[cfg(not(loom))]
pub use wait::WaitPolicy;
