//! Locks that a signal handler may also need (the streams' files, the registry): a thread holds
//! one with SIGINT and SIGTERM blocked (the recorder's handler then runs once the lock is given
//! back, so it never finds its own thread inside a write: it would have to skip that stream,
//! which would end without the thread's end), and marks the lock it is taking or holds, so
//! that a handler that interrupted it anyway (another signal's handler calling `exit`) never
//! waits for that lock (it would wait for itself); it waits a bounded time for any other.

use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard};

// The lock the calling thread is taking or holds (its address; null: none). The recorder
// never holds two of these locks at once.
crate::thread_slot!(mod taking: *const u8 = "oxiomp_trace_lock_taken";);

fn addr<T>(m: &Mutex<T>) -> *const u8 {
    m as *const Mutex<T> as *const u8
}

/// A lock taken with [`lock`]: unmarked after it is released, and the thread's signal mask
/// restored.
pub(super) struct Marked<'a, T> {
    guard: Option<MutexGuard<'a, T>>,
    marked: bool,
    /// The signal mask to restore (None: taken in a signal handler, mask left alone).
    mask: Option<libc::sigset_t>,
}

impl<T> Deref for Marked<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.guard.as_deref().expect("held until dropped")
    }
}

impl<T> DerefMut for Marked<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.guard.as_deref_mut().expect("held until dropped")
    }
}

impl<T> Drop for Marked<'_, T> {
    fn drop(&mut self) {
        // Release first, then unmark: a signal in between sees a mark and skips the lock
        // (rather than waiting for a lock its thread is about to give back forever).
        drop(self.guard.take());
        if self.marked {
            taking::set(std::ptr::null());
        }
        if let Some(old) = self.mask {
            // SAFETY: restoring the mask saved by `lock` (a signal that came meanwhile is
            // delivered now, with the lock free).
            unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
        }
    }
}

/// Blocks SIGINT and SIGTERM on the calling thread; returns the mask before.
fn block_signals() -> libc::sigset_t {
    // SAFETY: sigset_t is a plain C struct, filled by sigemptyset/sigaddset; pthread_sigmask
    // writes the old mask into `old`. All three are async-signal-safe.
    unsafe {
        let (mut set, mut old): (libc::sigset_t, libc::sigset_t) = (std::mem::zeroed(), std::mem::zeroed());
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        old
    }
}

/// Takes `m`, waiting for it, with SIGINT and SIGTERM blocked until it is released; marked
/// from before the wait until after the release.
pub(super) fn lock<T>(m: &Mutex<T>) -> Option<Marked<'_, T>> {
    let old = block_signals();
    // The mark's store and the lock are ordered for this thread's own signal handler: the
    // slot is written by an `asm!` block that may touch memory, so the compiler keeps it
    // before the lock.
    taking::set(addr(m));
    // On failure the guard-less Marked unmarks and restores the mask as it drops.
    let mut held = Marked { guard: None, marked: true, mask: Some(old) };
    held.guard = Some(m.lock().ok()?);
    Some(held)
}

/// Takes `m` from a signal handler: not at all if the interrupted thread is taking or holds
/// it, else trying for about `ms` milliseconds (its other holders keep it for the time of
/// one write at most).
pub(super) fn lock_in_signal<T>(m: &Mutex<T>, ms: u32) -> Option<Marked<'_, T>> {
    if taking::get() == addr(m) {
        return None;
    }
    for _ in 0..ms {
        if let Ok(g) = m.try_lock() {
            return Some(Marked { guard: Some(g), marked: false, mask: None });
        }
        let ts = libc::timespec { tv_sec: 0, tv_nsec: 1_000_000 };
        // SAFETY: nanosleep reads `ts`; it is async-signal-safe.
        unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
    }
    None
}
