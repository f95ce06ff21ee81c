//! The atomics facade: std's atomics normally, loom's under `--cfg loom` (where only the
//! concurrency cores, `sync` and `barrier`, are compiled and model-checked; see `lib.rs`).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence,
};
