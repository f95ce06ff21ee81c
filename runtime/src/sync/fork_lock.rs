//! A small lock for process-wide lists (the runtime's worker pool and retired descriptors,
//! the checks' teams) that survives `fork`: the `pthread_atfork` prepare handler takes it, so that
//! in the child the list is whole and the lock, held by the one thread left, is simply let go.
//! A lock whose waiters park through a process-wide table (parking_lot) could be left locked
//! or half-updated by a thread that does not exist in the child.
//!
//! Waiters spin a little, then yield: the lists are held for a few instructions, and rarely
//! (a team that changes size, a pause, a fork).

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};

use crate::sync::atomic::{AtomicBool, Ordering};

pub struct ForkLock<T> {
    locked: AtomicBool,
    data: UnsafeCell<T>,
}

// SAFETY: the data is reached only through a guard, which exists for one holder at a time.
unsafe impl<T: Send> Sync for ForkLock<T> {}

pub struct Guard<'a, T> {
    lock: &'a ForkLock<T>,
}

impl<T> ForkLock<T> {
    pub const fn new(v: T) -> Self {
        ForkLock { locked: AtomicBool::new(false), data: UnsafeCell::new(v) }
    }

    pub fn lock(&self) -> Guard<'_, T> {
        let mut spins = 0u32;
        // Acquire: pairs with the Release in `Guard::drop`: the previous holder's writes to
        // the data are visible.
        while self.locked.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        Guard { lock: self }
    }

    /// Takes the lock for a `fork` (prepare handler) and keeps it: [`ForkLock::release_held`]
    /// lets it go in both processes afterwards.
    pub fn hold_for_fork(&self) {
        std::mem::forget(self.lock());
    }

    /// Lets go of a lock [`ForkLock::hold_for_fork`] took.
    ///
    /// # Safety
    /// The calling thread took the lock with `hold_for_fork` and holds no guard of it.
    pub unsafe fn release_held(&self) {
        // Release: as in `Guard::drop`.
        self.locked.store(false, Ordering::Release);
    }
}

/// A [`ForkLock`] of any content, for the fork handlers' list.
pub(crate) trait HeldForFork: Sync {
    fn hold_for_fork(&self);
    /// # Safety
    /// As for [`ForkLock::release_held`].
    unsafe fn release_held(&self);
}

impl<T: Send> HeldForFork for ForkLock<T> {
    fn hold_for_fork(&self) {
        ForkLock::hold_for_fork(self);
    }
    unsafe fn release_held(&self) {
        // SAFETY: the same contract.
        unsafe { ForkLock::release_held(self) }
    }
}

impl<T> Deref for Guard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard is the one holder.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for Guard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard is the one holder.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> Drop for Guard<'_, T> {
    fn drop(&mut self) {
        // Release: pairs with the Acquire in `lock`.
        self.lock.locked.store(false, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn counts_under_contention() {
        let l = Arc::new(ForkLock::new(0u64));
        let hs: Vec<_> = (0..4)
            .map(|_| {
                let l = l.clone();
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        *l.lock() += 1;
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(*l.lock(), 40_000);
        l.hold_for_fork();
        // SAFETY: taken just above by this thread.
        unsafe { l.release_held() };
        assert_eq!(*l.lock(), 40_000, "free again after a hold");
    }
}
