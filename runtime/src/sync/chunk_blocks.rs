//! Chunks of a nonmonotonic loop dealt out as one block per thread, with stealing: how
//! `schedule(dynamic)` and `schedule(guided)` hand out chunks without a shared counter
//! (`worksharing/dispatch.rs` uses it). Model-checked with loom (`loom_tests` below).
//!
//! # Protocol
//! Each member's block is one word, `lo | hi << 32`: chunks `lo..hi` not yet handed out.
//! * The owner takes its next chunk with a `fetch_add` of 1 on its own word ([`take_one`]), or
//!   half of what is left with a CAS ([`take_half`], guided sizes). A `fetch_add` on an empty
//!   word (lo >= hi) takes nothing (and moves `lo` one past: room is left for that).
//! * A thread whose block is empty steals the upper half of another member's block with a CAS
//!   of that word, runs the first stolen chunk (or run of chunks) at once and makes the rest its
//!   own block with a plain store ([`keep`]): its word is empty then, thieves skip empty words,
//!   and only the owner takes from its own.
//!
//! # Why every chunk is handed out exactly once
//! Owner and thieves change the same word, each change a read-modify-write of the whole
//! word: a thief's CAS fails if the owner took a chunk meanwhile, an owner's `fetch_add` on a
//! word a thief shrank takes from what is left. At every moment each chunk not yet handed out
//! lies in exactly one block. No ABA: a thief's stale word names a range whose lowest chunk
//! has been handed out since (the owner takes from the bottom, a thief's whole-range steal
//! includes it), while a word installed by [`keep`] starts at a chunk not handed out yet, so
//! the two words differ. The blocks only divide the work: the loop's data is ordered by the
//! construct's barrier and the blocks' initial values by the slot's `ready(k)` (Release /
//! Acquire), so every access here is Relaxed.

// Under loom the task engine is not built: only the models use this module.
#![cfg_attr(loom, allow(dead_code))]

use crossbeam_utils::CachePadded;

use super::atomic::{AtomicU64, Ordering};

/// Chunks of a loop that can be dealt out as blocks (the words, with room for the owner's one
/// increment past an empty block).
pub(crate) const MAX_CHUNKS: u64 = 1 << 31;

/// One member's block word.
pub(crate) type Block = CachePadded<AtomicU64>;

fn word(lo: u64, hi: u64) -> u64 {
    lo | (hi << 32)
}

fn range(w: u64) -> (u64, u64) {
    (w & 0xffff_ffff, w >> 32)
}

/// Deals `chunks` (< [`MAX_CHUNKS`]) out to the first `nth` blocks: member t gets chunks
/// t*C/n .. (t+1)*C/n. Relaxed: the caller publishes the words (a Release store).
pub(crate) fn deal(blocks: &[Block], chunks: u64, nth: u32) {
    let n = nth as u64;
    for (t, b) in blocks.iter().take(nth as usize).enumerate() {
        let t = t as u64;
        b.store(word(t * chunks / n, (t + 1) * chunks / n), Ordering::Relaxed);
    }
}

/// The next chunk for member `tid` of `nth`: from its own block, or the first of a block
/// stolen from another member; None when every block is empty.
#[inline]
pub(crate) fn take_one(blocks: &[Block], tid: u32, nth: u32) -> Option<u64> {
    let (lo, hi) = range(blocks[tid as usize].fetch_add(1, Ordering::Relaxed));
    if lo < hi {
        return Some(lo);
    }
    // The first stolen chunk runs here; the rest becomes our block.
    let (from, hi) = steal(blocks, tid, nth)?;
    keep(blocks, tid, from + 1, hi);
    Some(from)
}

/// The next run of chunks `lo..end` for member `tid` of `nth`: half of what is left in its
/// own block (at least one chunk), or the first half of a block stolen from another member;
/// None when every block is empty.
#[inline]
pub(crate) fn take_half(blocks: &[Block], tid: u32, nth: u32) -> Option<(u64, u64)> {
    let half = |lo: u64, hi: u64| lo + ((hi - lo) / 2).max(1);
    let mine = &blocks[tid as usize];
    let mut w = mine.load(Ordering::Relaxed);
    loop {
        let (lo, hi) = range(w);
        if lo >= hi {
            break;
        }
        let end = half(lo, hi);
        // A thief may take the upper half meanwhile: then the CAS fails and we look again.
        match mine.compare_exchange_weak(w, word(end, hi), Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return Some((lo, end)),
            Err(now) => w = now,
        }
    }
    // The first run of the stolen chunks runs here; the rest becomes our block.
    let (from, hi) = steal(blocks, tid, nth)?;
    let end = half(from, hi);
    keep(blocks, tid, end, hi);
    Some((from, end))
}

/// Takes the upper half of another member's block (chunks `from..hi`, returned); None when
/// every block is empty. The caller runs some first and keeps the rest ([`keep`]): nothing it
/// runs was ever visible to other thieves.
#[cold]
fn steal(blocks: &[Block], tid: u32, nth: u32) -> Option<(u64, u64)> {
    for i in 1..nth {
        let victim = &blocks[((tid + i) % nth) as usize];
        let mut w = victim.load(Ordering::Relaxed);
        loop {
            let (lo, hi) = range(w);
            if lo >= hi {
                break;
            }
            let from = hi - (hi - lo).div_ceil(2);
            match victim.compare_exchange_weak(w, word(lo, from), Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some((from, hi)),
                Err(now) => w = now,
            }
        }
    }
    None
}

/// Makes chunks `lo..hi` (possibly none) member `tid`'s block. Nobody else changes its word
/// meanwhile: it is empty (thieves skip empty blocks, and only the owner takes from its own).
#[inline]
fn keep(blocks: &[Block], tid: u32, lo: u64, hi: u64) {
    blocks[tid as usize].store(word(lo, hi), Ordering::Relaxed);
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    /// Runs `nth` members taking chunks of a loop of `chunks` chunks with `take`, each on its
    /// own thread (member 0 on the model's main thread); returns every chunk handed out, sorted.
    fn run(nth: u32, chunks: u64, take: fn(&[Block], u32, u32) -> Vec<u64>) -> Vec<u64> {
        let blocks: Arc<Vec<Block>> =
            Arc::new((0..nth).map(|_| CachePadded::new(AtomicU64::new(0))).collect());
        deal(&blocks, chunks, nth);
        let hs: Vec<_> = (1..nth)
            .map(|tid| {
                let b = blocks.clone();
                loom::thread::spawn(move || take(&b, tid, nth))
            })
            .collect();
        let mut got = take(&blocks, 0, nth);
        for h in hs {
            got.extend(h.join().unwrap());
        }
        got.sort();
        got
    }

    fn ones(b: &[Block], tid: u32, nth: u32) -> Vec<u64> {
        std::iter::from_fn(|| take_one(b, tid, nth)).collect()
    }

    fn halves(b: &[Block], tid: u32, nth: u32) -> Vec<u64> {
        std::iter::from_fn(|| take_half(b, tid, nth)).flat_map(|(lo, end)| lo..end).collect()
    }

    /// Two members, dynamic: every chunk exactly once, whatever the owners' and thieves'
    /// interleaving.
    #[test]
    fn dynamic_two_members() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| assert_eq!(run(2, 5, ones), (0..5).collect::<Vec<_>>()));
    }

    /// Three members (a thief picks among two victims), dynamic; few preemptions keep the
    /// model small enough for CI.
    #[test]
    fn dynamic_three_members() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(1);
        model.check(|| assert_eq!(run(3, 5, ones), (0..5).collect::<Vec<_>>()));
    }

    /// Two members, guided: halves of own blocks and of stolen ones, every chunk once.
    #[test]
    fn guided_two_members() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| assert_eq!(run(2, 6, halves), (0..6).collect::<Vec<_>>()));
    }
}
