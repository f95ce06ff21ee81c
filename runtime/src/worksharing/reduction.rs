//! Reductions (`__kmpc_reduce*`) and `copyprivate`: the data exchanges inside a team.
//!
//! # Tree reduction
//! Thread t combines the partial results of its children t + 2^r (for every r with
//! t % 2^(r+1) == 0 and t + 2^r < n) into its own, with the compiler's `reduce_func`, then
//! publishes its partial result (`data`, then its `ready` epoch with Release). A child waits for
//! its parent's `ready` before it returns: the parent has then finished reading the child's
//! data, which lives on the child's stack. The root (the primary thread) ends up with the whole
//! team's result and returns 1 so that clang's code combines it into the original variables;
//! the others return 0. No lock: 16 threads take 4 levels.
//!
//! For small teams (at most [`ATOMIC_MAX_THREADS`]) when the compiler says an atomic update is
//! available, every thread returns 2 and updates the originals atomically, which costs less
//! than the tree's waits.

use std::ffi::c_void;

use crossbeam_utils::CachePadded;

use crate::sync::atomic::{AtomicPtr, Ordering};
use crate::sync::wait::EpochFlag;

/// Largest team for which the atomic method is chosen.
pub const ATOMIC_MAX_THREADS: u32 = 4;

/// `ident_t` flag: the compiler generated the atomic method (2).
pub const IDENT_ATOMIC_REDUCE: i32 = 0x10;

/// The combiner clang generates: `reduce_func(lhs, rhs)` folds `rhs` into `lhs`.
pub type ReduceFn = unsafe extern "C" fn(lhs: *mut c_void, rhs: *mut c_void);

/// What the thread does next (clang's return protocol).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// 1: combine your values into the originals (the whole team's, if a tree ran).
    Combine = 1,
    /// 2: update the originals atomically.
    Atomic = 2,
    /// 0: nothing left to do.
    Done = 0,
}

/// One member's exchange slot.
pub(crate) struct Slot {
    ready: EpochFlag,
    data: AtomicPtr<c_void>,
}

pub(crate) struct Exchange {
    slots: Box<[CachePadded<Slot>]>,
    /// `copyprivate`: the source thread's data list.
    cpy: CachePadded<AtomicPtr<c_void>>,
}

impl Exchange {
    pub(crate) fn new(n: u32) -> Exchange {
        let slots = (0..n.max(1))
            .map(|_| {
                CachePadded::new(Slot {
                    ready: EpochFlag::new(0),
                    data: AtomicPtr::new(std::ptr::null_mut()),
                })
            })
            .collect();
        Exchange { slots, cpy: CachePadded::new(AtomicPtr::new(std::ptr::null_mut())) }
    }

    pub(crate) fn size(&self) -> u32 {
        self.slots.len() as u32
    }

    /// Chooses the method and, for the tree, runs it.
    ///
    /// # Safety
    /// `data` is the calling thread's reduce list, valid until this returns, and `func` is the
    /// combiner for lists of that shape (the same on every member).
    pub(crate) unsafe fn reduce(&self, tid: u32, flags: i32, data: *mut c_void, func: ReduceFn) -> Method {
        let n = self.size();
        if n == 1 {
            return Method::Combine;
        }
        if flags & IDENT_ATOMIC_REDUCE != 0 && n <= ATOMIC_MAX_THREADS {
            return Method::Atomic;
        }
        let mine = &self.slots[tid as usize];
        // Only this thread writes its slot: its last epoch + 1 is this reduction's.
        let e = mine.ready.load().wrapping_add(1);
        let mut r = 0;
        while tid.is_multiple_of(2 << r) {
            let child = tid + (1 << r);
            if child >= n {
                break;
            }
            let c = &self.slots[child as usize];
            c.ready.wait_reach(e);
            // Relaxed: ordered after the child's Release of `ready`, which we acquired.
            let rhs = c.data.load(Ordering::Relaxed);
            // SAFETY: the child published its list and waits for our `ready` before it
            // returns, so the list is alive; the caller guarantees `func` fits the lists.
            unsafe { func(data, rhs) };
            r += 1;
        }
        // Relaxed: published by the Release inside `set`.
        mine.data.store(data, Ordering::Relaxed);
        mine.ready.set(e);
        if tid == 0 {
            return Method::Combine;
        }
        // Our parent has read our list once its own `ready` reaches e.
        let parent = tid & (tid - 1);
        self.slots[parent as usize].ready.wait_reach(e);
        Method::Done
    }

    /// `copyprivate`, part one: the thread that executed the single publishes its list.
    pub(crate) fn publish_copy(&self, data: *mut c_void) {
        // Relaxed: the barrier that follows orders it before the readers.
        self.cpy.store(data, Ordering::Relaxed);
    }

    /// `copyprivate`, part two (after a barrier): the published list.
    pub(crate) fn copy_source(&self) -> *mut c_void {
        self.cpy.load(Ordering::Relaxed)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    unsafe extern "C" fn add(lhs: *mut c_void, rhs: *mut c_void) {
        // SAFETY: the test passes pointers to u64.
        unsafe { *(lhs as *mut u64) += *(rhs as *const u64) };
    }

    #[test]
    fn tree_sums_every_member_once() {
        for n in [2u32, 3, 5, 8, 13, 16] {
            let ex = Arc::new(Exchange::new(n));
            let total = Arc::new(std::sync::atomic::AtomicU64::new(0));
            let hs: Vec<_> = (0..n)
                .map(|tid| {
                    let (ex, total) = (ex.clone(), total.clone());
                    std::thread::spawn(move || {
                        for round in 1..=50u64 {
                            let mut v = (tid as u64 + 1) * round;
                            // SAFETY: `v` outlives the call; `add` fits.
                            let m = unsafe { ex.reduce(tid, 0, &mut v as *mut u64 as *mut c_void, add) };
                            assert_eq!(m == Method::Combine, tid == 0);
                            if tid == 0 {
                                assert_eq!(v, round * (n as u64) * (n as u64 + 1) / 2, "n={n}");
                                total.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
            assert_eq!(total.load(Ordering::Relaxed), 50);
        }
    }
}
