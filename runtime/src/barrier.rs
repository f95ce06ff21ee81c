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
//! Release store (then a SeqCst fence, for the sleep protocol of `sync::wait`) and each wait
//! ends with an Acquire load of the same flag, so all
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
//!
//! # Cancellation (`cancel parallel`)
//! A region with `cancel parallel` calls its barriers through `__kmpc_cancel_barrier` and leaves
//! the region when it returns true; clang also calls one right after a `cancel parallel` or a
//! `cancellation point parallel` that returned true, then leaves whatever it returns. Two
//! requirements follow:
//!
//! 1. **One verdict per episode.** Every member that leaves episode `e` of a cancellation
//!    barrier says the same thing: cancelled or not. (If one member leaves the region and
//!    another goes on to the next barrier, the second waits forever.)
//! 2. **No wait for a member that left.** A member that saw the cancellation may never arrive at
//!    the barrier the others wait in (it went straight to the region's end, which is the join,
//!    not a barrier episode), and the member that cancelled may be the only one in its barrier.
//!
//! The protocol: a request is *stamped* with the requester's episode, the last one it entered
//! ([`Barrier::episode`]); the first request of a region is kept (`cancel`: 0, or
//! `REQUESTED | stamp`; a compare-exchange from 0, Release). The verdict for episode `e` is
//! "cancelled" exactly when a request exists with a stamp before `e`, i.e. made before its
//! requester entered `e`. A member calling a cancellation barrier for episode `e`:
//!
//! ```text
//! if cancelled_before(e):  set all its flags of e at once (no wait)    -> cancelled
//! else:                    the ordinary episode e (wait for everybody)
//!                          then cancelled_before(e)                     -> the verdict
//! ```
//!
//! Proof sketch. Call a flag write *honest* when the writer waited for the partners of the
//! rounds below it (the ordinary barrier) and *forced* when it was set at once (first line).
//! (a) A forced write of episode `e` is made only after its writer read a request with a stamp
//! before `e` (Acquire, pairing with the request's Release), so the request happens-before
//! every write of the writer's flags for `e`. (b) The requester `R` of a request stamped before
//! `e` never writes an honest flag of `e`: when it calls barrier `e` it sees its own request,
//! so it forces. (c) A member `X` that completes episode `e` in the ordinary way has read,
//! along chains of Acquire loads of flags of `e`, flags that together cover every member: an
//! honest flag of `w` carries what `w` read before writing it, a forced one covers nobody but
//! its writer and carries the request its writer read. The chain that covers `R` therefore
//! ends at `R`'s own flag or passes through a forced flag; `R`'s flags of `e` are forced (b),
//! so either way `X`'s reads pass a forced flag, and by (a) the request happens-before `X`'s
//! verdict load, which therefore sees it (coherence): `X` says cancelled. If `R` never calls
//! barrier `e`, only a forced flag can cover it, so likewise. If nobody forces `e` and `R`
//! never calls it, no member completes `e` in the ordinary way, so every member leaving `e`
//! left through the first line: cancelled. If no request is stamped before `e`,
//! nobody says cancelled. Hence requirement 1. For requirement 2: a member forced through `e`
//! waits for nobody; a member that entered `e` before any request waits only until every
//! member has written its flags of `e`, which each does, forced or not, as soon as it calls
//! barrier `e`; a conforming program has every member call it (all members encounter the same
//! barriers unless they leave the region through cancellation, and a member that leaves does
//! so through its next cancellation barrier, which is episode `e`). Forced flags wake sleepers
//! as honest ones do (`EpochFlag::set`), so a waiter parked on a forced flag is woken.
//!
//! After a cancelled region the members' episode counts differ (some forced through an episode
//! that others never entered): the primary thread, alone with the team at the next fork,
//! starts the barrier afresh ([`Barrier::end_cancellation`]). With cancellation enabled the
//! team's plain barriers (copyprivate's, a `__kmpc_barrier`) take the same path and ignore the
//! verdict, so that no member waits in one for a member that left either; a caller whose data
//! depends on every member having arrived asks [`Barrier::cancelled_before`] (copyprivate
//! copies nothing from a cancelled episode). The loom model below checks both requirements for
//! two and three members.
//!
//! Requirement 2 is about barriers: a reduction's combining tree (`worksharing::reduction`)
//! still waits for every member, so a `parallel reduction` region that one member leaves
//! through `cancel parallel` before it reaches the reduction can hang.

use crossbeam_utils::CachePadded;
use oxiomp_instrument::{Event, State};

use crate::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use crate::sync::wait::{EpochFlag, Helper, reached};

/// Rounds supported: teams of up to 2^16 threads.
const MAX_ROUNDS: usize = 16;

/// Set in `Barrier::cancel` when a request was made; the low half is its stamp.
const REQUESTED: u64 = 1 << 32;

pub struct Barrier {
    n: u32,
    rounds: u32,
    flags: Box<[CachePadded<[EpochFlag; MAX_ROUNDS]>]>,
    /// The region's cancellation request: 0, or `REQUESTED | stamp` (see the module docs).
    cancel: AtomicU64,
    /// Members parked elsewhere than on a flag (`Helper::park`, see [`Counted`]): a flag's
    /// writer calls `Helper::published` only while this is not 0.
    elsewhere: AtomicU32,
}

/// A member's helper as the barrier hands it to the flags it waits on: the member counts in
/// `elsewhere` while it parks elsewhere.
///
/// No lost wake-up: the member increments the count, then parks, and the park's protocol
/// issues a SeqCst fence before it looks at the flag (`Helper::park`); the writer stores the
/// flag, issues a SeqCst fence (`EpochFlag::set`), then loads the count. Of the two fences,
/// if the member's comes first the writer sees the count and calls `published`, whose own
/// load of the parked threads comes after the same fence; if the writer's comes first the
/// member sees the flag reached and does not sleep.
struct Counted<'a> {
    help: &'a mut dyn Helper,
    elsewhere: &'a AtomicU32,
}

impl Helper for Counted<'_> {
    #[inline]
    fn help(&mut self) -> bool {
        self.help.help()
    }

    fn park(&mut self, ready: &dyn Fn() -> bool) -> bool {
        // Relaxed: ordered by the park's fence (see above).
        self.elsewhere.fetch_add(1, Ordering::Relaxed);
        let parked = self.help.park(ready);
        // Relaxed: a stale count costs one needless `published`.
        self.elsewhere.fetch_sub(1, Ordering::Relaxed);
        parked
    }

    #[inline]
    fn published(&self) {
        self.help.published();
    }
}

impl Barrier {
    pub fn new(n: u32) -> Barrier {
        let n = n.max(1);
        let rounds = 32 - (n - 1).leading_zeros();
        assert!(rounds as usize <= MAX_ROUNDS, "team of {n} threads is too large");
        let flags = (0..n).map(|_| CachePadded::new(std::array::from_fn(|_| EpochFlag::new(0)))).collect();
        Barrier { n, rounds, flags, cancel: AtomicU64::new(0), elsewhere: AtomicU32::new(0) }
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

    /// As [`wait`](Self::wait), calling `help` while waiting (to run tasks; see `Helper`:
    /// every member of an episode must use the same kind). Returns whether
    /// "Barrier: spin wait" is open (the thread waited, awake at the end: the caller leaves
    /// it with its barrier's state, `trace_end`).
    pub(crate) fn wait_helping(&self, tid: u32, help: &mut dyn Helper) -> bool {
        let n = self.n;
        let mut spinning = false;
        if n == 1 {
            return spinning;
        }
        let mine = &self.flags[tid as usize];
        // Only this thread writes its flags, so its own last value is the episode count.
        let e = mine[0].load().wrapping_add(1);
        let mut help = Counted { help, elsewhere: &self.elsewhere };
        for r in 0..self.rounds {
            mine[r as usize].set(e);
            self.published(&help);
            let from = (tid + n - (1u32 << r) % n) % n;
            self.flags[from as usize][r as usize].wait_reach_helping(e, &mut help, &mut spinning);
        }
        spinning
    }

    /// After a flag's `set` (its SeqCst fence): wakes the members parked elsewhere, if any
    /// (see [`Counted`]).
    #[inline]
    fn published(&self, help: &dyn Helper) {
        // Relaxed: after `set`'s fence (see `Counted`).
        if self.elsewhere.load(Ordering::Relaxed) != 0 {
            help.published();
        }
    }

    /// The last episode member `tid` entered (0 before its first).
    #[inline]
    pub fn episode(&self, tid: u32) -> u32 {
        // Only member `tid` writes its flags (and the primary thread, alone with the team, in
        // `end_cancellation`), so its round-0 flag is the last episode it entered.
        self.flags[tid as usize][0].load()
    }

    /// Member `tid` cancels the region (`cancel parallel`): the request is stamped with its
    /// episode; the first request of the region is kept. Its next cancellation barrier is the
    /// first episode the request cancels.
    pub fn cancel(&self, tid: u32) {
        let stamp = self.episode(tid);
        // Release: a member that reads the request (Acquire) and then forces its flags passes
        // the request on to whoever acquires those flags (proof step (a)). A failed exchange
        // means an earlier request, which the caller's next barrier sees as well: its stamp
        // is not later than this one (the requester that made it had entered no episode this
        // member has not).
        let _ =
            self.cancel.compare_exchange(0, REQUESTED | stamp as u64, Ordering::Release, Ordering::Relaxed);
    }

    /// Whether the region was cancelled before episode `e`: a request exists whose requester
    /// made it before it entered `e`.
    #[inline]
    pub fn cancelled_before(&self, e: u32) -> bool {
        // Acquire: pairs with the request's Release (proof step (a)).
        let c = self.cancel.load(Ordering::Acquire);
        c != 0 && !reached(c as u32, e)
    }

    /// Whether the region was cancelled at all (tasks of a cancelled region do not start).
    #[inline]
    pub fn cancel_requested(&self) -> bool {
        // Relaxed: a task that starts although a request was just made is allowed (the
        // request is checked again at the task's cancellation points).
        self.cancel.load(Ordering::Relaxed) != 0
    }

    /// Whether a member that is now at a cancellation point (between episodes) must leave the
    /// region: its next cancellation barrier will say so.
    #[inline]
    pub fn cancelled_for(&self, tid: u32) -> bool {
        self.cancelled_before(self.episode(tid).wrapping_add(1))
    }

    /// A cancellation barrier (`__kmpc_cancel_barrier`): [`wait_helping`](Self::wait_helping)
    /// unless the region was cancelled before this episode, in which case the member writes
    /// its flags of the episode at once and leaves (see the module docs). Returns whether the
    /// region was cancelled (the same answer on every member leaving this episode) and whether
    /// "Barrier: spin wait" is open.
    pub(crate) fn wait_cancellable(&self, tid: u32, help: &mut dyn Helper) -> (bool, bool) {
        let e = self.episode(tid).wrapping_add(1);
        if self.cancelled_before(e) {
            if self.n > 1 {
                for flag in &self.flags[tid as usize][..self.rounds as usize] {
                    flag.set(e);
                }
                self.published(help);
            }
            return (true, false);
        }
        let spinning = self.wait_helping(tid, help);
        (self.cancelled_before(e), spinning)
    }

    /// At the fork of the team's next region (the primary thread alone with the team): forgets
    /// the previous region's request and, if there was one, starts every member's episodes
    /// afresh (they may differ after a cancelled region).
    pub fn end_cancellation(&mut self) {
        // Relaxed: `&mut self`, no other thread looks at the barrier now.
        if self.cancel.load(Ordering::Relaxed) != 0 {
            *self = Barrier::new(self.n);
        }
    }
}

/// Records the end of a wait in barrier state `state` (fork, join, plain) that returned
/// `spinning` ([`Barrier::wait_helping`]): "Barrier: spin wait", if open, and `state` are left
/// at one instant.
#[inline(always)]
#[cfg_attr(loom, allow(dead_code))] // the loom models leave out the teams that call it
pub(crate) fn trace_end(state: State, spinning: bool) {
    if spinning {
        oxiomp_instrument::record_with(|| [Event::Leave(State::BarrierSpinWait), Event::Leave(state)]);
    } else {
        oxiomp_instrument::record_with(|| [Event::Leave(state)]);
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

    /// The issue's program, many times over: two members pass a barrier, one cancels, both
    /// reach the next barrier; the one that cancelled then calls its cancellation barrier
    /// too. Every episode's verdict agrees, nobody hangs, and the barrier starts afresh.
    #[test]
    fn cancellation_verdicts_agree() {
        for n in [2u32, 3, 4] {
            let mut b = Barrier::new(n);
            for rep in 0..300u32 {
                let canceller = rep % n;
                let verdicts: Vec<AtomicUsize> = (0..2 * n).map(|_| AtomicUsize::new(0)).collect();
                std::thread::scope(|s| {
                    for tid in 0..n {
                        let (b, verdicts) = (&b, &verdicts);
                        s.spawn(move || {
                            let v1 = b.wait_cancellable(tid, &mut || false).0;
                            verdicts[tid as usize].store(1 + v1 as usize, Ordering::Relaxed);
                            if v1 {
                                return;
                            }
                            if tid == canceller {
                                b.cancel(tid);
                            }
                            let v2 = b.wait_cancellable(tid, &mut || false).0;
                            verdicts[(n + tid) as usize].store(1 + v2 as usize, Ordering::Relaxed);
                        });
                    }
                });
                let v: Vec<usize> = verdicts.iter().map(|v| v.load(Ordering::Relaxed)).collect();
                assert!(v[..n as usize].iter().all(|&x| x == 1), "n={n}: first barrier cancelled: {v:?}");
                assert!(v[n as usize..].iter().all(|&x| x == 2), "n={n}: second barrier verdicts {v:?}");
                assert!(b.cancel_requested());
                b.end_cancellation();
                assert!(!b.cancel_requested());
                assert!((0..n).all(|t| b.episode(t) == 0), "episodes start afresh");
            }
        }
    }

    /// A member that cancels while the others never reach a barrier (they are at the region's
    /// end) does not wait in its cancellation barrier; with cancellation before a barrier the
    /// others reach, they leave it cancelled too.
    #[test]
    fn a_cancelling_member_waits_for_nobody() {
        let b = Barrier::new(3);
        b.cancel(1);
        assert_eq!(b.wait_cancellable(1, &mut || false), (true, false));
        assert!(b.cancelled_for(0) && b.cancelled_for(2));
        std::thread::scope(|s| {
            s.spawn(|| assert!(b.wait_cancellable(0, &mut || false).0));
            s.spawn(|| assert!(b.wait_cancellable(2, &mut || false).0));
        });
    }

    /// A request made after a member entered episode e does not cancel e, for anybody.
    #[test]
    fn a_late_request_cancels_the_next_episode() {
        let b = Barrier::new(2);
        std::thread::scope(|s| {
            s.spawn(|| assert!(!b.wait_cancellable(0, &mut || false).0));
            s.spawn(|| assert!(!b.wait_cancellable(1, &mut || false).0));
        });
        assert!(!b.cancelled_for(0));
        b.cancel(0);
        assert!(!b.cancelled_before(1) && b.cancelled_before(2));
        assert!(b.cancelled_for(0) && b.cancelled_for(1));
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

    /// Members that park on a `Sleep` of their own (`Helper::park`, as a team's members do
    /// on its task pool) and wake through `Helper::published`:
    /// two members, two episodes, nobody sleeps through its flag (a lost wake-up would
    /// deadlock the model).
    #[test]
    fn members_parked_elsewhere_are_woken() {
        use crate::sync::sleep::Sleep;
        struct Elsewhere(Arc<Sleep>);
        impl Helper for Elsewhere {
            fn help(&mut self) -> bool {
                false
            }
            fn park(&mut self, ready: &dyn Fn() -> bool) -> bool {
                self.0.park(ready);
                true
            }
            fn published(&self) {
                self.0.notify_fenced();
            }
        }
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            let b = Arc::new(Barrier::new(2));
            let room = Arc::new(Sleep::new());
            let (b2, r2) = (b.clone(), room.clone());
            let t = loom::thread::spawn(move || {
                for _ in 0..2 {
                    b2.wait_helping(1, &mut Elsewhere(r2.clone()));
                }
            });
            for _ in 0..2 {
                b.wait_helping(0, &mut Elsewhere(room.clone()));
            }
            t.join().unwrap();
        });
    }

    /// The cancellation protocol with two members: both pass a barrier; member 1 cancels
    /// and calls its cancellation barrier; member 0 calls the next barrier. In every
    /// interleaving both leave the first barrier not cancelled, both leave the second
    /// cancelled, and nobody waits forever (a lost wake-up or a missing flag would deadlock
    /// the model).
    #[test]
    fn cancel_between_barriers() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            let b = Arc::new(Barrier::new(2));
            let b1 = b.clone();
            let t = loom::thread::spawn(move || {
                let v1 = b1.wait_cancellable(1, &mut || false).0;
                b1.cancel(1);
                let v2 = b1.wait_cancellable(1, &mut || false).0;
                (v1, v2)
            });
            let v1 = b.wait_cancellable(0, &mut || false).0;
            let v2 = b.wait_cancellable(0, &mut || false).0;
            assert_eq!(t.join().unwrap(), (false, true));
            assert_eq!((v1, v2), (false, true));
        });
    }

    /// Three members: member 2 cancels before the first barrier's episode and leaves through
    /// its cancellation barrier; members 0 and 1 are in that barrier (or reach it later).
    /// Everyone says cancelled; nobody waits for a flag that never comes.
    #[test]
    fn cancel_with_three_members() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(2);
        model.check(|| {
            let b = Arc::new(Barrier::new(3));
            let hs: Vec<_> = (1..3u32)
                .map(|tid| {
                    let b = b.clone();
                    loom::thread::spawn(move || {
                        if tid == 2 {
                            b.cancel(2);
                        }
                        b.wait_cancellable(tid, &mut || false).0
                    })
                })
                .collect();
            let v0 = b.wait_cancellable(0, &mut || false).0;
            assert!(v0);
            for h in hs {
                assert!(h.join().unwrap());
            }
        });
    }

    /// A member that cancels while the other never comes to a barrier (it went to the
    /// region's end): the cancelling member's barrier does not wait.
    #[test]
    fn cancel_alone() {
        loom::model(|| {
            let b = Arc::new(Barrier::new(2));
            let b1 = b.clone();
            let t = loom::thread::spawn(move || {
                b1.cancel(1);
                b1.wait_cancellable(1, &mut || false).0
            });
            assert!(t.join().unwrap());
            assert!(b.cancelled_for(0));
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
