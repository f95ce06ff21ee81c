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

#[cfg(loom)]
pub(crate) fn wake_one(word: &AtomicU32) {
    wake_all(word);
}
