//! A waiting room for threads that wait for a condition other threads change (in a team's task
//! pool: a ready task pushed, a count of children reaching 0; a doacross sink's iteration
//! posted; a loop slot freed by the last thread of the loop a ring behind): they park here once
//! they have spun for the block time; whoever changes such a state notifies.
//! Model-checked with loom (`loom_tests` below).
//!
//! # Protocol
//! ```text
//! waiter (park)                               notifier (after changing the state)
//! W0 e = epoch.load()                         N1 fence(SeqCst)
//! W1 sleepers.fetch_add(1); fence(SeqCst)     N2 if sleepers.load() > 0:
//! W2 if the condition holds: return                epoch += 1; futex_wake_all(epoch)
//! W3 futex_wait(epoch, e)
//!    sleepers.fetch_sub(1)
//! ```
//!
//! # No lost wake-up
//! The state change comes before N1 on the notifier's side; the two fences are totally
//! ordered. If the waiter's fence comes first, its increment of `sleepers` is visible to N2,
//! so the notifier bumps the epoch; the waiter read `e` (W0) before its fence, hence before the
//! bump, so `futex_wait` either finds the epoch changed (the kernel compares it atomically with
//! queueing the waiter) or is woken by the wake that follows the bump. If the notifier's fence
//! comes first, the state change is visible to W2 and the waiter does not sleep. A stale
//! `sleepers` only costs a spurious wake-up; a waiter woken spuriously re-checks its condition
//! in its caller's loop.
//!
//! The notifier's common case (nobody parked) is one fence and one load of a line it usually
//! holds; the store buffering pattern needs the fences (loom models them, not a total order of
//! SeqCst accesses).

// Under loom the task engine is not built: only the models use this module.
#![cfg_attr(loom, allow(dead_code))]

use crossbeam_utils::CachePadded;

use super::atomic::{AtomicU32, Ordering, fence};
use super::futex;

/// Threads parked on one condition variable, futex-based.
pub(crate) struct Sleep {
    /// The futex word: bumped by every wake.
    epoch: CachePadded<AtomicU32>,
    /// Threads between W1 and the end of their park.
    sleepers: AtomicU32,
}

impl Sleep {
    pub(crate) fn new() -> Sleep {
        Sleep { epoch: CachePadded::new(AtomicU32::new(0)), sleepers: AtomicU32::new(0) }
    }

    /// Wakes the parked threads, if any (N1, N2): called after changing a state a waiter may
    /// be waiting for.
    #[inline]
    pub(crate) fn notify(&self) {
        fence(Ordering::SeqCst);
        self.notify_fenced();
    }

    /// [`notify`](Self::notify) without its fence (N2 alone), for a notifier that issued a
    /// SeqCst fence after its state change and before this call.
    #[inline]
    pub(crate) fn notify_fenced(&self) {
        // Relaxed: ordered by the caller's fence, which pairs with the waiter's (module docs).
        if self.sleepers.load(Ordering::Relaxed) != 0 {
            self.wake();
        }
    }

    #[cold]
    fn wake(&self) {
        self.epoch.fetch_add(1, Ordering::Relaxed); // Relaxed: the futex word only.
        futex::wake_all(&self.epoch);
    }

    /// Waits until `cond` holds, for a condition whose changers call [`notify`](Self::notify):
    /// the runtime's spin schedule (`wait.rs`'s `Spin`: spin, then poll and yield for the
    /// block time), then parked here until woken.
    #[cfg(not(loom))]
    #[cold]
    pub(crate) fn wait_until(&self, cond: &dyn Fn() -> bool) {
        use super::wait::Spin;
        let mut spin = Spin::new();
        loop {
            for _ in 0..spin.polls() {
                if cond() {
                    return;
                }
                super::spin_hint();
            }
            if !spin.idle_round() {
                self.park(cond);
                if cond() {
                    return;
                }
                spin.restart_parked();
            }
        }
    }

    /// Under loom: straight to the sleep protocol (the model would explore every poll).
    #[cfg(loom)]
    pub(crate) fn wait_until(&self, cond: &dyn Fn() -> bool) {
        while !cond() {
            self.park(cond);
        }
    }

    /// Parks until notified, unless `ready` holds once the caller is announced (W0-W3). May
    /// return spuriously: the caller re-checks its condition.
    pub(crate) fn park(&self, ready: &dyn Fn() -> bool) {
        let e = self.epoch.load(Ordering::Relaxed);
        // Relaxed + fence: the waiter's half of the protocol.
        self.sleepers.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if !ready() {
            futex::wait(&self.epoch, e);
        }
        // Relaxed: the count only tells notifiers whether to wake; a stale non-zero value
        // costs one spurious wake-up.
        self.sleepers.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicU32 as StdU32;

    /// A parked thread is woken by a notification that follows the state change, many times
    /// over with real threads (the loom models below check every interleaving).
    #[test]
    fn parked_waiters_are_woken() {
        for _ in 0..500 {
            let s = Arc::new((Sleep::new(), StdU32::new(0)));
            let waiters: Vec<_> = (0..2)
                .map(|_| {
                    let s = s.clone();
                    std::thread::spawn(move || {
                        while s.1.load(std::sync::atomic::Ordering::Relaxed) == 0 {
                            s.0.park(&|| s.1.load(std::sync::atomic::Ordering::Relaxed) != 0);
                        }
                    })
                })
                .collect();
            s.1.store(1, std::sync::atomic::Ordering::Relaxed);
            s.0.notify();
            for w in waiters {
                w.join().unwrap();
            }
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    /// One waiter, one notifier: the waiter never sleeps through the change (a lost wake-up
    /// would leave the model deadlocked, which loom reports).
    #[test]
    fn no_lost_wakeup() {
        loom::model(|| {
            let s = Arc::new((Sleep::new(), AtomicU32::new(0)));
            let n = s.clone();
            let t = loom::thread::spawn(move || {
                n.1.store(1, Ordering::Relaxed);
                n.0.notify();
            });
            while s.1.load(Ordering::Relaxed) == 0 {
                s.0.park(&|| s.1.load(Ordering::Relaxed) != 0);
            }
            t.join().unwrap();
        });
    }

    /// Two waiters, one notification: both wake.
    #[test]
    fn every_waiter_wakes() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            let s = Arc::new((Sleep::new(), AtomicU32::new(0)));
            let w = s.clone();
            let t = loom::thread::spawn(move || {
                while w.1.load(Ordering::Relaxed) == 0 {
                    w.0.park(&|| w.1.load(Ordering::Relaxed) != 0);
                }
            });
            let n = s.clone();
            let u = loom::thread::spawn(move || {
                n.1.store(1, Ordering::Relaxed);
                n.0.notify();
            });
            while s.1.load(Ordering::Relaxed) == 0 {
                s.0.park(&|| s.1.load(Ordering::Relaxed) != 0);
            }
            t.join().unwrap();
            u.join().unwrap();
        });
    }
}
