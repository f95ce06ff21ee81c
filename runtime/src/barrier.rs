//! The team barrier: a dissemination barrier over per-thread epoch flags.
//!
//! # Algorithm
//! With `n` threads there are `R = ceil(log2 n)` rounds. Every thread owns one cache line of
//! flags, one per round, which only it writes. Barrier episode `e` (counted per thread; all
//! members pass the same episodes in the same order) is:
//!
//! ```text
//! for r in 0..R:  flag[me][r] := e;   wait until flag[(me - 2^r) mod n][r] >= e
//! ```
//!
//! After round r a thread has heard, directly or transitively, from the 2^(r+1) threads before
//! it, so after R rounds from all n: nobody leaves before everybody arrived. Each publish is a
//! SeqCst swap (a release) and each wait ends with an Acquire load of the same flag, so all
//! writes made before the barrier by any member happen-before everything after it in every
//! member (happens-before is transitive along the chain of rounds).
//!
//! Flags only grow (wrapping epoch order), so no sense reversal and no reset is needed, and a
//! fast thread that runs ahead into episode e+1 cannot confuse a slow one still in episode e: it
//! only raises its own flags to e+1, which still satisfy ">= e".
//!
//! Why dissemination: on two cores, the critical path of a centralised counter barrier is two
//! cache-line transfers after the last arrival (its RMW, then every waiter's re-read); here the
//! last arrival's write and its read of the partner's (already written) flag overlap, so one
//! transfer suffices. Waiting spins, yields when oversubscribed, then parks (see `sync::wait`).

use crossbeam_utils::CachePadded;

use crate::sync::wait::EpochFlag;

/// Rounds supported: teams of up to 2^16 threads.
const MAX_ROUNDS: usize = 16;

pub struct Barrier {
    n: u32,
    rounds: u32,
    flags: Box<[CachePadded<[EpochFlag; MAX_ROUNDS]>]>,
}

impl Barrier {
    pub fn new(n: u32) -> Barrier {
        let n = n.max(1);
        let rounds = 32 - (n - 1).leading_zeros();
        assert!(rounds as usize <= MAX_ROUNDS, "team of {n} threads is too large");
        let flags = (0..n).map(|_| CachePadded::new(std::array::from_fn(|_| EpochFlag::new(0)))).collect();
        Barrier { n, rounds, flags }
    }

    pub fn size(&self) -> u32 {
        self.n
    }

    /// Waits until all `n` members have called `wait` for this episode. `tid` < n, and each
    /// member calls with its own tid only.
    #[inline]
    pub fn wait(&self, tid: u32) {
        if self.wait_helping(tid, &mut || false) {
            oxiomp_instrument::barrier_spin_wait_exit();
        }
    }

    /// As [`wait`](Self::wait), calling `help` while waiting (to run tasks). Returns whether
    /// "Barrier: spin wait" is open (the thread waited, awake at the end: the caller leaves
    /// it with its barrier's state, `oxiomp_instrument::barrier_leave`).
    pub fn wait_helping(&self, tid: u32, help: &mut dyn FnMut() -> bool) -> bool {
        let n = self.n;
        let mut spinning = false;
        if n == 1 {
            return spinning;
        }
        let mine = &self.flags[tid as usize];
        // Only this thread writes its flags, so its own last value is the episode count.
        let e = mine[0].load().wrapping_add(1);
        for r in 0..self.rounds {
            mine[r as usize].set(e);
            let from = (tid + n - (1u32 << r) % n) % n;
            self.flags[from as usize][r as usize].wait_reach_helping(e, help, &mut spinning);
        }
        spinning
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Exhaustive-by-stress: for many team sizes, every thread writes its slot of a phase, passes
    /// the barrier, and checks that it sees every other thread's write of that phase.
    #[test]
    fn no_thread_leaves_early() {
        for n in [1u32, 2, 3, 4, 5, 7, 8, 13, 16] {
            let b = Arc::new(Barrier::new(n));
            let slots: Arc<Vec<AtomicUsize>> = Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
            let hs: Vec<_> = (0..n)
                .map(|tid| {
                    let b = b.clone();
                    let slots = slots.clone();
                    std::thread::spawn(move || {
                        for phase in 1..=300usize {
                            slots[tid as usize].store(phase, Ordering::Relaxed);
                            b.wait(tid);
                            for (j, s) in slots.iter().enumerate() {
                                let v = s.load(Ordering::Relaxed);
                                assert!(
                                    v == phase || v == phase + 1,
                                    "n={n} tid={tid} saw {j}={v} in {phase}"
                                );
                            }
                            b.wait(tid);
                        }
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
        }
    }

    #[test]
    fn rounds() {
        assert_eq!(Barrier::new(1).rounds, 0);
        assert_eq!(Barrier::new(2).rounds, 1);
        assert_eq!(Barrier::new(5).rounds, 3);
        assert_eq!(Barrier::new(16).rounds, 4);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;
    use loom::sync::atomic::{AtomicUsize, Ordering};

    /// Two threads, two episodes: after each barrier, each sees the other's write of that
    /// phase, in every interleaving the model explores.
    #[test]
    fn two_threads_two_episodes() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            let b = Arc::new(Barrier::new(2));
            let slots = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
            let (b2, s2) = (b.clone(), slots.clone());
            let t = loom::thread::spawn(move || {
                for phase in 1..=2 {
                    s2[1].store(phase, Ordering::Relaxed);
                    b2.wait(1);
                    assert!(s2[0].load(Ordering::Relaxed) >= phase);
                }
            });
            for phase in 1..=2 {
                slots[0].store(phase, Ordering::Relaxed);
                b.wait(0);
                assert!(slots[1].load(Ordering::Relaxed) >= phase);
            }
            t.join().unwrap();
        });
    }

    /// Three threads (two rounds, non-power-of-two partner arithmetic), one episode; the
    /// preemption bound keeps the state space small enough for CI.
    #[test]
    fn three_threads() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(2);
        model.check(|| {
            let b = Arc::new(Barrier::new(3));
            let slots = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0)]);
            let hs: Vec<_> = (1..3)
                .map(|tid| {
                    let (b, s) = (b.clone(), slots.clone());
                    loom::thread::spawn(move || {
                        s[tid].store(1, Ordering::Relaxed);
                        b.wait(tid as u32);
                        assert!(s.iter().all(|x| x.load(Ordering::Relaxed) == 1));
                    })
                })
                .collect();
            slots[0].store(1, Ordering::Relaxed);
            b.wait(0);
            assert!(slots.iter().all(|x| x.load(Ordering::Relaxed) == 1));
            for h in hs {
                h.join().unwrap();
            }
        });
    }
}
