//! Spin-then-park waiting on an epoch counter.
//!
//! # The sleep protocol
//! An [`EpochFlag`] is a `u32` epoch that only its writer advances, plus a count of threads
//! parked on it. A waiter wants the epoch to *reach* a target (wrapping comparison, so epochs
//! may wrap around). It spins for the block time (`KMP_BLOCKTIME`, yielding the CPU on every
//! round when the runtime has more busy threads than CPUs), then parks on a futex:
//!
//! ```text
//! waiter                                   writer
//! W1 sleepers.fetch_add(1)      SeqCst     S1 value.swap(new)            SeqCst
//! W2 v = value.load()           SeqCst     S2 if sleepers.load() != 0    SeqCst
//! W3 if !reached(v) futex_wait(value, v)   S3     futex_wake(value)
//! W4 sleepers.fetch_sub(1)
//! ```
//! No lost wake-up: all four of W1, W2, S1, S2 are SeqCst, so they are totally ordered. If W1
//! precedes S2, the writer sees a sleeper and wakes the futex; the kernel's futex_wait checks
//! `value == v` atomically with queueing, so a wake-up that comes before the waiter is queued
//! makes futex_wait return at once. If S2 precedes W1, then S1 precedes W2 and the waiter reads
//! the new value and does not sleep. Spurious returns are harmless: the waiter re-checks.
//!
//! The writer pays one `xchg` and one load of a line it usually holds; the futex syscall only
//! happens when somebody actually sleeps.

use std::time::{Duration, Instant};

use super::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use super::futex;

/// How long a waiter spins before it parks, in nanoseconds (`KMP_BLOCKTIME`).
static SPIN_NS: AtomicU64 = AtomicU64::new(200_000_000);
/// Whether more threads are busy in teams than there are CPUs (then spinning yields each round).
static OVERSUBSCRIBED: AtomicBool = AtomicBool::new(false);

/// The process-wide waiting policy.
pub struct WaitPolicy;

impl WaitPolicy {
    /// Sets the block time: how long a waiting thread spins before it sleeps.
    pub fn set_block_time(d: Duration) {
        // Relaxed: a waiter that reads the old value merely spins a little longer or shorter.
        SPIN_NS.store(d.as_nanos().min(u64::MAX as u128) as u64, Ordering::Relaxed);
    }

    /// The current block time.
    pub fn block_time() -> Duration {
        Duration::from_nanos(SPIN_NS.load(Ordering::Relaxed))
    }

    /// Tells waiters whether the machine is oversubscribed.
    pub(crate) fn set_oversubscribed(v: bool) {
        // Relaxed: a hint for how to spin, not a synchronisation.
        OVERSUBSCRIBED.store(v, Ordering::Relaxed);
    }

    pub(crate) fn oversubscribed() -> bool {
        OVERSUBSCRIBED.load(Ordering::Relaxed)
    }
}

/// `value` has reached `target` in wrapping epoch order.
#[inline(always)]
pub(crate) fn reached(value: u32, target: u32) -> bool {
    value.wrapping_sub(target) as i32 >= 0
}

/// A monotonically advancing epoch that threads can wait on (see the module docs).
#[repr(C)]
pub(crate) struct EpochFlag {
    value: AtomicU32,
    sleepers: AtomicU32,
}

impl Default for EpochFlag {
    fn default() -> Self {
        Self::new(0)
    }
}

impl EpochFlag {
    pub(crate) fn new(v: u32) -> Self {
        EpochFlag { value: AtomicU32::new(v), sleepers: AtomicU32::new(0) }
    }

    /// The current epoch. Acquire: pairs with the Release half of `set`'s swap, so everything
    /// the writer did before publishing the epoch is visible to a reader that sees it.
    #[inline(always)]
    pub(crate) fn load(&self) -> u32 {
        self.value.load(Ordering::Acquire)
    }

    /// Publishes epoch `v` and wakes the sleepers.
    #[inline]
    pub(crate) fn set(&self, v: u32) {
        // SeqCst (S1, S2 of the protocol): must be ordered with the waiter's W1/W2.
        self.value.swap(v, Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) != 0 {
            self.wake();
        }
    }

    #[cold]
    fn wake(&self) {
        futex::wake_all(&self.value);
    }

    /// Waits until the epoch reaches `target`.
    #[inline]
    pub(crate) fn wait_reach(&self, target: u32) {
        if !reached(self.load(), target) {
            self.wait_slow(target, &mut || false);
        }
    }

    /// Waits until the epoch reaches `target`, calling `help` between polls; `help` returns
    /// true when it did useful work (the spin budget then starts over).
    #[inline]
    pub(crate) fn wait_reach_helping(&self, target: u32, help: &mut dyn FnMut() -> bool) {
        if !reached(self.load(), target) {
            self.wait_slow(target, help);
        }
    }

    #[cold]
    fn wait_slow(&self, target: u32, help: &mut dyn FnMut() -> bool) {
        let budget = Duration::from_nanos(SPIN_NS.load(Ordering::Relaxed));
        let mut start: Option<Instant> = None;
        loop {
            for _ in 0..64 {
                if reached(self.load(), target) {
                    return;
                }
                if WaitPolicy::oversubscribed() {
                    std::thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
            }
            if help() {
                start = None;
                continue;
            }
            let now = Instant::now();
            let t0 = *start.get_or_insert(now);
            if now.duration_since(t0) >= budget {
                self.park(target);
                if reached(self.load(), target) {
                    return;
                }
                start = None;
            }
        }
    }

    /// Sleeps until woken (W1..W4 of the protocol).
    fn park(&self, target: u32) {
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        let v = self.value.load(Ordering::SeqCst);
        if !reached(v, target) {
            futex::wait(&self.value, v);
        }
        // Release is enough: the count is only a hint that a writer must issue a wake-up.
        self.sleepers.fetch_sub(1, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn reached_wraps() {
        assert!(reached(5, 5));
        assert!(reached(6, 5));
        assert!(!reached(4, 5));
        assert!(reached(1, u32::MAX));
        assert!(!reached(u32::MAX, 1));
    }

    #[test]
    fn parked_waiter_is_woken() {
        WaitPolicy::set_block_time(Duration::from_millis(0));
        let f = Arc::new(EpochFlag::new(0));
        let mut hs = Vec::new();
        for _ in 0..4 {
            let f = f.clone();
            hs.push(std::thread::spawn(move || {
                for e in 1..=200u32 {
                    f.wait_reach(e);
                }
            }));
        }
        for e in 1..=200u32 {
            if e % 50 == 0 {
                std::thread::sleep(Duration::from_millis(2));
            }
            f.set(e);
        }
        for h in hs {
            h.join().unwrap();
        }
        WaitPolicy::set_block_time(Duration::from_millis(200));
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    #[test]
    fn no_lost_wakeup() {
        loom::model(|| {
            let f = Arc::new(EpochFlag::new(0));
            let g = f.clone();
            let t = loom::thread::spawn(move || g.set(1));
            // park directly: the model's futex is a yield, so this loop must terminate
            while !reached(f.load(), 1) {
                f.park(1);
            }
            t.join().unwrap();
        });
    }
}
