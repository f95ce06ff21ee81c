//! The two futex operations the sleep protocol needs (Linux, private futexes).
//!
//! Under loom there is no kernel: see `model` below.

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

/// [`wait`] on a raw futex word (a half of a 64-bit atomic, which has no `AtomicU32` of its
/// own).
///
/// # Safety
/// `word` points to a live, 4-aligned u32 for the duration of the call.
#[cfg(not(loom))]
pub(crate) unsafe fn wait_raw(word: *const u32, expected: u32) {
    // SAFETY: per the contract; FUTEX_WAIT only reads the word.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word,
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

/// Wakes one thread blocked in [`wait_raw`] on `word`.
///
/// # Safety
/// As for [`wait_raw`] (the address only identifies the wait queue).
#[cfg(not(loom))]
pub(crate) unsafe fn wake_one_raw(word: *const u32) {
    // SAFETY: FUTEX_WAKE does not access memory.
    unsafe {
        libc::syscall(libc::SYS_futex, word, libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, 1);
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

/// Under loom the kernel's futex is modelled by one mutex and condition variable: the value
/// check and the sleep happen under the lock, as the kernel does them under its hash-bucket
/// lock, so a lost wake-up shows up as a deadlock the model checker reports.
#[cfg(loom)]
mod model {
    loom::lazy_static! {
        pub(super) static ref BUCKET: (loom::sync::Mutex<()>, loom::sync::Condvar) =
            (loom::sync::Mutex::new(()), loom::sync::Condvar::new());
    }
}

#[cfg(loom)]
pub(crate) fn wait(word: &AtomicU32, expected: u32) {
    let (m, cv) = &*model::BUCKET;
    let g = m.lock().unwrap();
    if word.load(super::atomic::Ordering::SeqCst) == expected {
        drop(cv.wait(g).unwrap());
    }
}

#[cfg(loom)]
pub(crate) fn wake_all(_word: &AtomicU32) {
    let (m, cv) = &*model::BUCKET;
    let _g = m.lock().unwrap();
    cv.notify_all();
}
