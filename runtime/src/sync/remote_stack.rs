//! A lock-free stack of free blocks that any thread pushes onto and only its owner empties,
//! whole: how a task block freed by another thread goes back to the cache of the thread that
//! allocated it (`task/cache.rs`). Model-checked with loom (`loom_tests` below).
//!
//! The top word holds the top block's address in its low 48 bits and the number of blocks on
//! the stack (saturating) in the high 16, so that the owner adopts a whole stack as a list of
//! known length without walking it (each block it would visit was last written by the thread
//! that freed it: a cache miss per block).
//!
//! # Why it is correct
//! A push links its block to the top it read and publishes it with a Release CAS on the top
//! word, retried on any change; the owner takes the stack with an Acquire swap to empty, so it
//! sees every pushed block's link (and whatever the pusher wrote before). No ABA hazard: no
//! thread pops single blocks, and a pusher never dereferences the top it read (that block
//! may be in use again by the time it looks): the CAS compares the whole word.

// Under loom the task engine is not built: only the models use this module.
#![cfg_attr(loom, allow(dead_code))]

use super::atomic::{AtomicU64, Ordering};

/// A free block's first word: the next block of the list it is on.
#[repr(C)]
pub(crate) struct Link {
    pub(crate) next: *mut Link,
}

/// Bits of the top word holding the block address (x86-64 and AArch64 user addresses fit in
/// 48 bits), and the most blocks its count says.
const ADDR_BITS: u32 = 48;
pub(crate) const LEN_MAX: u64 = (1 << (64 - ADDR_BITS)) - 1;

/// The stack: its top word.
pub(crate) struct RemoteStack {
    top: AtomicU64,
}

impl RemoteStack {
    pub(crate) fn new() -> RemoteStack {
        RemoteStack { top: AtomicU64::new(0) }
    }

    /// Pushes the block at `node`. False, doing nothing, if its address does not fit the top
    /// word (a 57-bit address space): the caller gives the block back another way.
    ///
    /// # Safety
    /// `node` is valid for writes of a `Link` and on no list; after a `true` return the caller
    /// does not use it any more (after `false` it is still the caller's).
    pub(crate) unsafe fn push(&self, node: *mut Link) -> bool {
        if node as u64 >> ADDR_BITS != 0 {
            return false;
        }
        // Relaxed: only a guess for the CAS below, which re-reads on failure.
        let mut top = self.top.load(Ordering::Relaxed);
        loop {
            // SAFETY: per the contract. (The top block is never dereferenced here.)
            unsafe { (*node).next = top_block(top) };
            let new = node as u64 | ((top_len(top) as u64 + 1).min(LEN_MAX) << ADDR_BITS);
            // Release: the owner that takes the stack sees the node's link.
            match self.top.compare_exchange_weak(top, new, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(t) => top = t,
            }
        }
    }

    /// Empties the stack: returns its top block (the others linked through `Link::next`,
    /// null-terminated; null if it was empty) and how many blocks it held (saturated at
    /// [`LEN_MAX`]). The blocks are the caller's now.
    pub(crate) fn take_all(&self) -> (*mut Link, usize) {
        // Acquire: pairs with the pushes' Release (their links are visible).
        let top = self.top.swap(0, Ordering::Acquire);
        (top_block(top), top_len(top))
    }
}

/// The top block of a top word (null: empty).
fn top_block(top: u64) -> *mut Link {
    (top & ((1 << ADDR_BITS) - 1)) as usize as *mut Link
}

/// The number of blocks a top word counts.
fn top_len(top: u64) -> usize {
    (top >> ADDR_BITS) as usize
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;

    /// A block: its link, then what the freeing thread wrote before the push (a loom cell:
    /// a read not ordered after the write is reported as a data race).
    #[repr(C)]
    struct Block {
        link: Link,
        payload: UnsafeCell<u32>,
    }

    struct Blocks(Vec<*mut Block>);
    // SAFETY: each block is handed to exactly one pusher, then to the owner.
    unsafe impl Send for Blocks {}
    // SAFETY: as above.
    unsafe impl Sync for Blocks {}

    /// Walks a taken list: its blocks' payloads (each must be ordered after its write).
    fn drain(top: *mut Link, len: usize, got: &mut Vec<u32>) {
        let mut n = top;
        let mut walked = 0;
        while !n.is_null() {
            let b = n as *mut Block;
            // SAFETY: the block is ours once taken; loom checks the payload's access.
            got.push(unsafe { (*b).payload.with(|v| v.read()) });
            // SAFETY: as above.
            n = unsafe { (*n).next };
            walked += 1;
        }
        assert_eq!(walked, len, "the top word counts the blocks on the stack");
    }

    /// Two threads push three blocks while the owner takes the stack: every block comes back
    /// exactly once, with its payload, in one of the two takes.
    #[test]
    fn pushes_against_a_take() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            let stack = Arc::new(RemoteStack::new());
            let blocks: Arc<Blocks> = Arc::new(Blocks(
                (0..3)
                    .map(|_| {
                        Box::into_raw(Box::new(Block {
                            link: Link { next: std::ptr::null_mut() },
                            payload: UnsafeCell::new(0),
                        }))
                    })
                    .collect(),
            ));
            let pushers: Vec<_> = [vec![0usize, 1], vec![2]]
                .into_iter()
                .map(|mine| {
                    let (stack, blocks) = (stack.clone(), blocks.clone());
                    loom::thread::spawn(move || {
                        for i in mine {
                            let b = blocks.0[i];
                            // SAFETY: block i is this thread's until pushed.
                            unsafe { (*b).payload.with_mut(|v| v.write(i as u32 + 1)) };
                            // SAFETY: as above; not used after.
                            assert!(unsafe { stack.push(b as *mut Link) });
                        }
                    })
                })
                .collect();
            let mut got = Vec::new();
            let (top, len) = stack.take_all();
            drain(top, len, &mut got);
            for p in pushers {
                p.join().unwrap();
            }
            let (top, len) = stack.take_all();
            drain(top, len, &mut got);
            got.sort();
            assert_eq!(got, vec![1, 2, 3]);
            for &b in &blocks.0 {
                // SAFETY: every block was taken back; none is used any more.
                drop(unsafe { Box::from_raw(b) });
            }
        });
    }
}
