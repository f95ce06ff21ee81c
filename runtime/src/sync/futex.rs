//! The two futex operations the sleep protocol needs (Linux, private futexes).
//!
//! Under loom there is no kernel: waiting becomes a yield, which is a sound model because every
//! caller re-checks its condition in a loop (a futex wait may return spuriously anyway).

use super::atomic::AtomicU32;

/// Blocks while `*word == expected` (returns at once if it differs, on a wake, or spuriously).
#[cfg(not(loom))]
pub(crate) fn wait(word: &AtomicU32, expected: u32) {
    // SAFETY: FUTEX_WAIT only reads the u32 at `word`, which is a live, aligned AtomicU32 for the
    // duration of the call; a null timeout means "no timeout".
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

/// Wakes every thread blocked in [`wait`] on `word`.
#[cfg(not(loom))]
pub(crate) fn wake_all(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE does not access memory; the address only identifies the wait queue.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, i32::MAX);
    }
}

/// Wakes one thread blocked in [`wait`] on `word`.
#[cfg(not(loom))]
pub(crate) fn wake_one(word: &AtomicU32) {
    // SAFETY: as in `wake_all`.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, 1);
    }
}

#[cfg(loom)]
pub(crate) fn wait(_word: &AtomicU32, _expected: u32) {
    loom::thread::yield_now();
}
#[cfg(loom)]
pub(crate) fn wake_all(_word: &AtomicU32) {}
#[cfg(loom)]
pub(crate) fn wake_one(_word: &AtomicU32) {}
