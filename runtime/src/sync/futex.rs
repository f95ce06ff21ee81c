//! The futex operations the sleep protocol and the owned mutex need (Linux, private futexes).
//!
//! Under loom there is no kernel: see `model` below.

use super::atomic::{AtomicU32, AtomicU64};

/// FUTEX_WAIT on the u32 at `addr`: blocks while it holds `expected` (returns at once if it
/// differs, on a wake, or spuriously).
///
/// # Safety
/// `addr` points to a live, 4-aligned u32 for the duration of the call.
#[cfg(not(loom))]
unsafe fn sys_wait(addr: *const u32, expected: u32) {
    // SAFETY: per the contract; FUTEX_WAIT only reads the word; a null timeout means "no
    // timeout".
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            addr,
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

/// FUTEX_WAKE of up to `n` threads waiting on `addr`.
#[cfg(not(loom))]
fn sys_wake(addr: *const u32, n: i32) {
    // SAFETY: FUTEX_WAKE does not access memory; the address only identifies the wait queue.
    unsafe {
        libc::syscall(libc::SYS_futex, addr, libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, n);
    }
}

/// Blocks while `*word == expected` (returns at once if it differs, on a wake, or spuriously).
#[cfg(not(loom))]
pub(crate) fn wait(word: &AtomicU32, expected: u32) {
    // The thread sleeps: the trace shows it paused (ovni's thread model) until it runs again.
    oxiomp_instrument::thread_pause();
    // SAFETY: a live, aligned AtomicU32 for the duration of the call.
    unsafe { sys_wait(word.as_ptr(), expected) }
    oxiomp_instrument::thread_resume();
}

/// Wakes every thread blocked in [`wait`] on `word`.
#[cfg(not(loom))]
pub(crate) fn wake_all(word: &AtomicU32) {
    sys_wake(word.as_ptr(), i32::MAX);
}

/// The futex word inside a 64-bit atomic: its low half (the first four bytes on
/// little-endian machines).
#[cfg(not(loom))]
fn low_half(word: &AtomicU64) -> *const u32 {
    let p = word.as_ptr() as *const u32;
    if cfg!(target_endian = "big") { p.wrapping_add(1) } else { p }
}

/// Blocks while the low half of `word` equals `expected` (returns at once if it differs, on a
/// wake, or spuriously). The owned mutex keeps its futex state there.
#[cfg(not(loom))]
pub(crate) fn wait_low(word: &AtomicU64, expected: u32) {
    // As in `wait`.
    oxiomp_instrument::thread_pause();
    // SAFETY: the low half of a live AtomicU64 is a live, 4-aligned u32.
    unsafe { sys_wait(low_half(word), expected) }
    oxiomp_instrument::thread_resume();
}

/// Wakes one thread blocked in [`wait_low`] on `word`.
#[cfg(not(loom))]
pub(crate) fn wake_one_low(word: &AtomicU64) {
    sys_wake(low_half(word), 1);
}

/// Under loom the kernel's futex is modelled by a mutex and condition variable per bucket:
/// the value check and the sleep happen under the lock, as the kernel does them under its
/// hash-bucket lock, so a lost wake-up shows up as a deadlock the model checker reports.
#[cfg(loom)]
mod model {
    use loom::sync::{Condvar, Mutex};

    /// A futex's wait queue: the kernel's hash bucket, its lock, and its sleepers.
    pub(super) type Bucket = (Mutex<()>, Condvar);

    loom::lazy_static! {
        pub(super) static ref BUCKET: Bucket = (Mutex::new(()), Condvar::new());
        /// The owned mutex's futexes (a model uses one lock), apart from `BUCKET` so that
        /// waking one wakes a waiter of this futex, as the kernel does.
        pub(super) static ref LOW_BUCKET: Bucket = (Mutex::new(()), Condvar::new());
    }

    /// Sleeps on `bucket` if `unchanged` holds, checked under the bucket's lock.
    pub(super) fn wait(bucket: &Bucket, unchanged: impl FnOnce() -> bool) {
        let g = bucket.0.lock().unwrap();
        if unchanged() {
            drop(bucket.1.wait(g).unwrap());
        }
    }

    /// Wakes one or every sleeper of `bucket`.
    pub(super) fn wake(bucket: &Bucket, all: bool) {
        let _g = bucket.0.lock().unwrap();
        if all { bucket.1.notify_all() } else { bucket.1.notify_one() }
    }
}

#[cfg(loom)]
pub(crate) fn wait(word: &AtomicU32, expected: u32) {
    model::wait(&model::BUCKET, || word.load(super::atomic::Ordering::SeqCst) == expected);
}

#[cfg(loom)]
pub(crate) fn wake_all(_word: &AtomicU32) {
    model::wake(&model::BUCKET, true);
}

#[cfg(loom)]
pub(crate) fn wait_low(word: &AtomicU64, expected: u32) {
    model::wait(&model::LOW_BUCKET, || word.load(super::atomic::Ordering::SeqCst) as u32 == expected);
}

#[cfg(loom)]
pub(crate) fn wake_one_low(_word: &AtomicU64) {
    model::wake(&model::LOW_BUCKET, false);
}
