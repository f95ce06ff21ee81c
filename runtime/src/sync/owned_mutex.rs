//! The mutex under every lock that lives in the program's memory (`omp_lock_t`, the lock of a
//! `kmp_critical_name`): one 64-bit word holding a futex mutex's state in its low half (the
//! futex word) and the owner's gtid + 1 in its high half (0 when free). `lock.rs` builds the
//! OpenMP lock routines on it; why owner and state share one word is said there.
//!
//! # The protocol
//!
//! States, relative to a lock kind's `unlocked` value (the marker that tells an initialised
//! lock from garbage): UNLOCKED = `unlocked`, LOCKED = `unlocked | 1`, CONTENDED =
//! `unlocked | 2` (someone may sleep on the futex).
//!
//! * Acquire: CAS (UNLOCKED, 0) -> (LOCKED, me). Failing that, poll (spin, then yield, for the
//!   block time), then loop on the word: free -> CAS to (CONTENDED, me) and return; LOCKED ->
//!   CAS to (CONTENDED, holder); CONTENDED -> futex-wait while the low half is CONTENDED.
//! * Release: CAS (LOCKED, me) -> (UNLOCKED, 0); if the word is (CONTENDED, me) instead,
//!   swap in (UNLOCKED, 0) and wake one sleeper.
//!
//! # Why no wake-up is lost (proof sketch)
//!
//! Claim: while a thread sleeps on the futex, the word is CONTENDED, or a release has swapped
//! it out and its wake-up is still to come, or some thread is awake in the loop of
//! `acquire_contended` (past its polling). A thread goes to sleep only if the low half is
//! CONTENDED when the kernel checks it, atomically with queueing the thread (under its
//! hash-bucket lock: the mutex of the loom model), so it cannot sleep through a release that
//! came before. The word leaves CONTENDED only by the owner's release swap, which is followed
//! by a wake-up of one sleeper (meanwhile the second case holds; a newcomer may take the free
//! lock as LOCKED by the fast path): the woken thread is awake in the loop. A thread in the loop leaves
//! it only by taking the lock, and takes a free lock as (CONTENDED, me), never LOCKED; before
//! that it may only mark a LOCKED word CONTENDED or sleep on a CONTENDED one. So the claim
//! holds again, and at the next release the word is CONTENDED and the next sleeper is woken.
//! (The classic three-state futex mutex: U. Drepper, "Futexes are tricky", mutex 2. The cost
//! of the argument is a wake-up with nobody asleep after the last sleeper took the lock.)
//!
//! Mutual exclusion: the word moves from a free state to a held one only by a successful CAS
//! from a free value, and back only by its owner's release.
//!
//! Memory ordering: every transition that takes the lock is an Acquire CAS, every release a
//! Release CAS or swap, so the holder's critical section happens-before the next holder's.
//! The loom models below check both properties for two and three threads, with the futex
//! modelled as the kernel does it.

// Under loom the lock routines are not built: only the models use this module.
#![cfg_attr(loom, allow(dead_code))]

use super::atomic::{AtomicU64, Ordering};
use super::futex;

/// The word of `state` held by `owner` (gtid + 1, 0 for none).
#[inline]
pub(crate) fn pack(state: u32, owner: u32) -> u64 {
    state as u64 | (owner as u64) << 32
}

#[inline]
pub(crate) fn state_of(w: u64) -> u32 {
    w as u32
}

#[inline]
pub(crate) fn owner_of(w: u64) -> u32 {
    (w >> 32) as u32
}

/// A mutex whose unlocked state is `unlocked` (locked `unlocked | 1`, contended
/// `unlocked | 2`), with its owner, in one word.
#[repr(transparent)]
pub(crate) struct OwnedMutex(pub(crate) AtomicU64);

impl OwnedMutex {
    /// Tries to take a free lock for `me` (gtid + 1); returns the word seen on failure.
    #[inline]
    pub(crate) fn try_acquire(&self, unlocked: u32, me: u32) -> Result<(), u64> {
        // Acquire: pairs with the Release CAS (or swap) in `release`, so the previous holder's
        // critical section happens-before ours.
        self.0
            .compare_exchange(pack(unlocked, 0), pack(unlocked | 1, me), Ordering::Acquire, Ordering::Relaxed)
            .map(|_| ())
    }

    /// The contended path: poll, then sleep until the lock is ours.
    #[cold]
    pub(crate) fn acquire_contended(&self, unlocked: u32, me: u32) {
        if self.poll_for(unlocked, me) {
            return;
        }
        let mut w = self.0.load(Ordering::Relaxed);
        loop {
            let next = if state_of(w) == unlocked {
                // Free: take it, leaving CONTENDED behind for sleepers that may remain.
                pack(unlocked | 2, me)
            } else if state_of(w) == unlocked | 1 {
                // Held, nobody marked asleep yet: mark it CONTENDED (keeping the holder as
                // owner) so that the release wakes us.
                pack(unlocked | 2, owner_of(w))
            } else {
                // CONTENDED already: sleep while it stays so (the kernel compares the low
                // half, the state, atomically with queueing us).
                futex::wait_low(&self.0, unlocked | 2);
                w = self.0.load(Ordering::Relaxed);
                continue;
            };
            // Acquire: when we take the lock, pairs with the holder's Release swap.
            match self.0.compare_exchange(w, next, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) if state_of(w) == unlocked => return,
                Ok(_) => w = next,
                Err(now) => w = now,
            }
        }
    }

    /// Polls for the lock as a hand-over (`Spin::handover`: spin, then yield, for the block
    /// time or a little longer); true if it was taken.
    #[cfg(not(loom))]
    fn poll_for(&self, unlocked: u32, me: u32) -> bool {
        use super::wait::Spin;
        let mut spin = Spin::handover();
        // Exponential backoff between looks at the word: each look pulls the holder's cache
        // line over, and a holder that releases and re-acquires at once (a loop around a
        // critical section) then pays a cache-line transfer per acquisition; looking less
        // often lets it keep the line while its critical sections are short. A round spends
        // the same `Spin::POLLS` spin hints as other waiters' rounds, so the phases of the
        // spin schedule last as long as theirs; only the looks get rarer (down to one per
        // round).
        let mut backoff = 1u32;
        loop {
            let mut hints = Spin::POLLS;
            while hints > 0 {
                if state_of(self.0.load(Ordering::Relaxed)) == unlocked
                    && self.try_acquire(unlocked, me).is_ok()
                {
                    return true;
                }
                let n = backoff.min(hints);
                for _ in 0..n {
                    std::hint::spin_loop();
                }
                hints -= n;
                backoff = (backoff * 2).min(Spin::POLLS);
            }
            if !spin.idle_round() {
                return false;
            }
        }
    }

    /// Under loom: straight to the sleep protocol (the model would explore every poll, and
    /// polling only makes the protocol's start later).
    #[cfg(loom)]
    fn poll_for(&self, _unlocked: u32, _me: u32) -> bool {
        false
    }

    /// Releases the lock if `me` holds it and nobody was marked asleep (one CAS, no load
    /// before it: a load would be a second access to a line another thread is polling).
    #[inline(always)]
    pub(crate) fn try_release(&self, unlocked: u32, me: u32) -> bool {
        // Release: publishes the critical section to the next acquirer.
        self.0
            .compare_exchange(pack(unlocked | 1, me), pack(unlocked, 0), Ordering::Release, Ordering::Relaxed)
            .is_ok()
    }

    /// Releases the lock if `me` holds it (see `try_release`); otherwise returns the word
    /// seen. Wakes one sleeper if there may be one.
    #[inline]
    pub(crate) fn release(&self, unlocked: u32, me: u32) -> Result<(), u64> {
        // Release: publishes the critical section to the next acquirer.
        match self.0.compare_exchange(
            pack(unlocked | 1, me),
            pack(unlocked, 0),
            Ordering::Release,
            Ordering::Relaxed,
        ) {
            Ok(_) => Ok(()),
            Err(w) if owner_of(w) == me && state_of(w) == unlocked | 2 => {
                // Ours, and someone may sleep: nobody else changes the word now (waiters
                // only set the CONTENDED bit, already set, or take a free lock).
                self.0.swap(pack(unlocked, 0), Ordering::Release);
                futex::wake_one_low(&self.0);
                Ok(())
            }
            Err(w) => Err(w),
        }
    }

    /// The current word (for checks; Relaxed: the owner half is only compared with the
    /// caller's own gtid, which only the caller stores).
    #[inline]
    pub(crate) fn peek(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;

    const UNLOCKED: u32 = 0x10;

    /// A lock and a counter it protects (a plain cell: loom reports a data race if two
    /// sections are not ordered by the lock).
    struct Guarded {
        m: OwnedMutex,
        n: UnsafeCell<u32>,
    }

    // SAFETY: `n` is only touched inside the lock (what the models check).
    unsafe impl Sync for Guarded {}
    // SAFETY: as above.
    unsafe impl Send for Guarded {}

    fn section(g: &Guarded, me: u32) {
        if g.m.try_acquire(UNLOCKED, me).is_err() {
            g.m.acquire_contended(UNLOCKED, me);
        }
        // SAFETY: inside the lock.
        g.n.with_mut(|n| unsafe { *n += 1 });
        assert_eq!(g.m.release(UNLOCKED, me), Ok(()));
    }

    fn run(threads: u32, preemption: usize) {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(preemption);
        model.check(move || {
            let g =
                Arc::new(Guarded { m: OwnedMutex(AtomicU64::new(pack(UNLOCKED, 0))), n: UnsafeCell::new(0) });
            let hs: Vec<_> = (2..=threads)
                .map(|me| {
                    let g = g.clone();
                    loom::thread::spawn(move || section(&g, me))
                })
                .collect();
            section(&g, 1);
            for h in hs {
                h.join().unwrap();
            }
            // SAFETY: every other thread has ended.
            assert_eq!(g.n.with(|n| unsafe { *n }), threads);
            assert_eq!(g.m.peek(), pack(UNLOCKED, 0), "the lock ends free");
        });
    }

    /// Two threads: mutual exclusion (no data race on the counter), and the one that sleeps
    /// is woken (a lost wake-up leaves the model deadlocked, which loom reports).
    #[test]
    fn two_threads_exclude_and_wake() {
        run(2, 3);
    }

    /// Three threads: the sleeper woken while another still sleeps must leave CONTENDED
    /// behind, or the last one is never woken.
    #[test]
    fn three_threads_exclude_and_wake() {
        run(3, 2);
    }
}
