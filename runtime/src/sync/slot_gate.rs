//! The gate of one slot of a team's ring of dispatched loops: which loop the slot serves, who
//! initialises it, and when the last thread of the team has left it so that it can serve the
//! loop one ring later (`worksharing/dispatch.rs` keeps the loop's parameters and counters
//! beside it). Model-checked with loom (`loom_tests` below).
//!
//! # Protocol
//! The state word is `k << 2 | phase` for loop number k: `free(k)` (waiting for loop k's first
//! thread), `init(k)` (being initialised), `ready(k)`.
//! * A thread entering loop k ([`SlotGate::enter`]) that finds `free(k)` CASes it to `init(k)`
//!   (Acquire) and initialises the slot, then publishes `ready(k)` with a Release store
//!   ([`SlotGate::publish`]); one that finds `ready(k)` (Acquire) goes on at once; one that finds
//!   anything else waits: another thread is initialising loop k (a few stores: it spins and
//!   yields), or the slot still serves loop k - ring, whose slowest thread has not left yet,
//!   which may take as long as that thread's iterations: it spins and yields for the block
//!   time, then parks in the gate's [`Sleep`].
//! * Each thread leaves once ([`SlotGate::leave`]); the leaver that brings the count to the team
//!   size resets the count, stores `free(k + ring)` (Release) and notifies the parked.
//!
//! # Why it is correct
//! Exactly one thread initialises loop k: the CAS from `free(k)` succeeds once, and `free(k)`
//! is stored only once (by loop k - ring's last leaver). Every other thread reads the slot
//! only after its Acquire load of `ready(k)`, which follows the initialiser's writes. The
//! slot is recycled only when every member has left (the count's AcqRel increments: the last
//! leaver has acquired every other leaver's use of the slot), and the next initialiser
//! acquires that through `free(k + ring)`; the count is reset before that store, so the next
//! loop's leavers count from 0.

// Under loom the task engine is not built: only the models use this module.
#![cfg_attr(loom, allow(dead_code))]

use super::atomic::{AtomicU32, AtomicU64, Ordering};
use super::sleep::Sleep;

const FREE: u64 = 0;
const INIT: u64 = 1;
const READY: u64 = 2;

fn state(k: u32, phase: u64) -> u64 {
    ((k as u64) << 2) | phase
}

/// Polls of a slot that another thread is initialising before the waiter yields its CPU
/// (initialising takes a few hundred nanoseconds at most; a yield costs about a microsecond).
const INIT_SPINS: u32 = 256;

/// Whether a thread may wait long for state `s` to become `free(k)` or `ready(k)`: the slot
/// serves an earlier loop (not `init(k)`, which a few stores end).
fn serves_earlier(s: u64, k: u32) -> bool {
    s >> 2 != k as u64
}

/// What a thread entering a loop's slot must do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    /// Initialise the slot, then [`SlotGate::publish`].
    Initialise,
    /// The slot is ready for the loop.
    Ready,
}

/// One slot's gate.
pub(crate) struct SlotGate {
    state: AtomicU64,
    left: AtomicU32,
    /// Threads a ring ahead, parked until the slot is freed for their loop.
    sleep: Sleep,
}

impl SlotGate {
    /// The gate of slot `j`: free for loop `j`.
    pub(crate) fn new(j: u32) -> SlotGate {
        SlotGate { state: AtomicU64::new(state(j, FREE)), left: AtomicU32::new(0), sleep: Sleep::new() }
    }

    /// Makes the slot free for loop `j` again (the team is idle: a new region). Relaxed:
    /// published to the members by the fork's release.
    pub(crate) fn reset(&self, j: u32) {
        // Stored only when changed: a slot no loop used keeps its line clean, valid in the
        // caches of the threads that read it (the caller is alone on the team: Relaxed).
        if self.state.load(Ordering::Relaxed) != state(j, FREE) {
            self.state.store(state(j, FREE), Ordering::Relaxed);
        }
        if self.left.load(Ordering::Relaxed) != 0 {
            self.left.store(0, Ordering::Relaxed);
        }
    }

    /// Enters the slot for loop `k`, waiting while it serves an earlier loop or another thread
    /// initialises it.
    pub(crate) fn enter(&self, k: u32) -> Entry {
        let mut spins = 0;
        loop {
            // Acquire: pairs with the Release publishing `ready(k)` or `free(k)`.
            let s = self.state.load(Ordering::Acquire);
            if s == state(k, READY) {
                return Entry::Ready;
            }
            if s == state(k, FREE)
                && self
                    .state
                    .compare_exchange(s, state(k, INIT), Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return Entry::Initialise;
            }
            if serves_earlier(s, k) {
                // A member a ring behind has not left loop k - ring yet.
                self.wait_freed(k);
            } else if spins < INIT_SPINS {
                // Another thread is initialising the slot: a few stores.
                spins += 1;
                super::spin_hint();
            } else {
                super::yield_now();
            }
        }
    }

    /// Waits until the slot no longer serves an earlier loop than `k` (woken by the last
    /// leaver of that loop).
    #[cold]
    fn wait_freed(&self, k: u32) {
        self.sleep.wait_until(&|| !serves_earlier(self.state.load(Ordering::Acquire), k));
    }

    /// The initialiser of loop `k` has written the slot: the others may use it.
    pub(crate) fn publish(&self, k: u32) {
        // Release: the slot's contents are visible to whoever Acquires ready(k).
        self.state.store(state(k, READY), Ordering::Release);
    }

    /// The calling thread leaves loop `k` (once); the last of the team's `nth` frees the slot
    /// for loop `k + ring`.
    pub(crate) fn leave(&self, k: u32, nth: u32, ring: u32) {
        // AcqRel: the last leaver must see every other leaver's use of the slot before it
        // recycles it (Acquire), and its own use must precede the recycling (Release).
        if self.left.fetch_add(1, Ordering::AcqRel) + 1 == nth {
            self.left.store(0, Ordering::Relaxed);
            self.state.store(state(k.wrapping_add(ring), FREE), Ordering::Release);
            self.sleep.notify();
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;

    /// A ring of one slot (the runtime's has 8): its gate and the loop parameter the
    /// initialiser writes (a loom cell: a read not ordered after the write is a data race).
    struct Slot {
        gate: SlotGate,
        param: UnsafeCell<u32>,
    }

    // SAFETY: the cell is only touched through loom's checked accessors.
    unsafe impl Sync for Slot {}
    // SAFETY: as above.
    unsafe impl Send for Slot {}

    /// One member running `loops` consecutive loops through the one slot.
    fn member(s: &Slot, loops: u32, nth: u32) {
        for k in 0..loops {
            if s.gate.enter(k) == Entry::Initialise {
                // SAFETY: the initialiser owns the slot until it publishes.
                s.param.with_mut(|p| unsafe { *p = k + 100 });
                s.gate.publish(k);
            }
            // SAFETY: read after ready(k); loom checks the order.
            assert_eq!(s.param.with(|p| unsafe { *p }), k + 100, "loop {k} saw another loop's slot");
            s.gate.leave(k, nth, 1);
        }
    }

    /// Two members, three loops through one slot: a member a loop ahead waits for the other
    /// to leave; each loop is initialised once and read only as its own.
    #[test]
    fn two_members_three_loops_one_slot() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(2);
        model.check(|| {
            let s = Arc::new(Slot { gate: SlotGate::new(0), param: UnsafeCell::new(0) });
            let t = {
                let s = s.clone();
                loom::thread::spawn(move || member(&s, 3, 2))
            };
            member(&s, 3, 2);
            t.join().unwrap();
        });
    }
}
