//! Dispatched loops (`schedule(dynamic|guided|runtime|auto)`, and static or ordered loops that
//! clang sends through `__kmpc_dispatch_*`).
//!
//! # Several loops in flight
//! With `nowait`, a fast thread may start loop k+1 while slow ones are still in loop k. Each
//! team has a ring of [`RING`] slots; loop number k of the region (every implicit task counts its
//! dispatched loops) uses slot `k % RING`. A slot's `state` says which loop it serves and in
//! which phase: `free(k)` (waiting for loop k's first thread), `init(k)`, `ready(k)`. The first
//! thread of loop k CASes `free(k) → init(k)`, writes the loop's parameters and publishes
//! `ready(k)` (Release; the others Acquire it). Each thread leaves the slot once (when `next`
//! finds no more work, or at `__kmpc_dispatch_deinit`, whichever comes first); the last of the
//! team to leave resets the slot to `free(k + RING)`. A thread RING loops ahead of the slowest
//! waits for its slot (the runtime's spin schedule, then parked until the slowest leaves: see
//! `sync/slot_gate.rs`); besides that, only ordered loops wait (for their turn, below).
//!
//! # Handing out chunks
//! Dynamic: one `fetch_add` of the chunk on the slot's iteration counter per chunk: a thread
//! that grabs chunks repeatedly keeps the counter's line in its cache. Nonmonotonic dynamic
//! (`schedule(dynamic)` without `ordered`, which clang marks nonmonotonic): the chunks are
//! dealt out as one contiguous block per thread, each in its own cache line as one word
//! (`lo` in the low half, `hi` in the high half: chunks `lo..hi` not yet handed out). The owner
//! takes its next chunk with a `fetch_add` of 1 on its own word (its line stays in its cache);
//! a thread whose block is empty steals the upper half of another thread's block with a CAS of
//! that word and makes the stolen block its own (`sync/chunk_blocks.rs`: why every chunk is
//! handed out exactly once, and the loom models that check it). A thread leaves the
//! loop when it found every block empty. A thief runs the first chunk it stole at once and
//! publishes only the rest as its block, so a stolen chunk is never passed on unrun. The
//! thread handed the loop's last chunk leaves after it (its own block is
//! empty then: the last chunk is the top of whatever block holds it), so that clang's
//! lastprivate flag, read from the last chunk a thread got, is set on the right thread.
//! Guided: a CAS loop taking max(chunk, remaining / 2n) from the shared counter. Nonmonotonic
//! guided (`schedule(guided)`, which clang marks nonmonotonic) uses the blocks of nonmonotonic
//! dynamic instead: the owner takes half of what is left in its block (at least one chunk; its
//! block holds about remaining / n, so a take is about remaining / 2n, the guided size) with a
//! CAS on its own word, and a thread whose block is empty steals the upper half of another's,
//! as above. No chunk of a guided loop then costs a transfer of a shared line but for steals.
//! Static (through dispatch): each thread walks its own chunks with no shared state at all.
//!
//! # Ordered
//! `ordered_next` is the normalised index of the next iteration allowed into its ordered
//! region. `__kmpc_ordered` waits for the thread's current iteration; `__kmpc_end_ordered`
//! passes the turn on; `__kmpc_dispatch_fini` (which clang calls after every iteration of an
//! ordered loop) passes it on for iterations that skipped the ordered region, then moves the
//! thread to its next iteration.

use crossbeam_utils::CachePadded;
use std::cell::UnsafeCell;

use crate::icv::ScheduleKind;
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::chunk_blocks;
use crate::sync::slot_gate::{Entry, SlotGate};
use crate::sync::wait::EpochFlag;
use crate::worksharing::static_sched::trip_count;

/// A `sched_type` without the monotonic (1 << 29) and nonmonotonic (1 << 30) modifier bits.
pub(crate) fn strip_modifiers(sched: i32) -> i32 {
    sched & !(0x6000_0000)
}

/// Slots per team: loops a thread may run ahead of the slowest one.
pub const RING: u32 = 8;

/// How chunks of a dispatched loop are handed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Round-robin chunks of `chunk` iterations (0: one balanced block per thread).
    Static,
    Dynamic,
    /// Nonmonotonic dynamic: per-thread blocks of chunks with stealing.
    Steal,
    Guided,
    /// Nonmonotonic guided: per-thread blocks of chunks, halves taken, stealing.
    GuidedSteal,
    /// `schedule(simd: static)` called as libomp's kind 47 with a static run-sched-var: one
    /// balanced block per thread, in whole chunks (the simd width).
    StaticSimd,
    /// Guided whose chunks are whole multiples of `chunk` (libomp's simd kinds 46 and 47).
    GuidedSimd,
    /// Trapezoid self-scheduling (Tzen and Ni): chunk `i` is `first - i * step` iterations, no
    /// less than the chunk size; one `fetch_add` on the chunk number per chunk, and the
    /// bounds by formula ([`trapezoid`]).
    Trapezoidal,
}

/// The loop a slot serves (written by the initialising thread before `ready`).
#[derive(Clone, Copy, Debug)]
struct Params {
    lb: i128,
    st: i128,
    tc: u64,
    chunk: u64,
    kind: Kind,
    nth: u32,
    /// The trapezoid's shape (trapezoidal loops only).
    trapezoid: Trapezoid,
}

pub(crate) struct Slot {
    /// Which loop the slot serves, its initialiser, its last leaver (`sync/slot_gate.rs`).
    gate: SlotGate,
    params: UnsafeCell<Params>,
    /// Next unassigned iteration index (dynamic, guided).
    next: CachePadded<AtomicU64>,
    /// Index (mod 2^32) of the next iteration allowed into its ordered region.
    ordered_next: CachePadded<EpochFlag>,
    /// Steal, GuidedSteal: each member's block of chunks (`sync/chunk_blocks.rs`).
    blocks: Box<[chunk_blocks::Block]>,
}

// SAFETY: `params` is written only by the one thread the gate lets initialise loop k, before
// it publishes `ready(k)` with Release; readers read it only after an Acquire load of
// `ready(k)`, and nobody writes it again until every reader has left (`sync/slot_gate.rs`).
unsafe impl Sync for Slot {}

impl Params {
    /// One balanced block per thread, in whole units of `unit` iterations (1, or the simd
    /// width): the calling thread's, the first time it asks.
    #[inline]
    fn static_block(&self, cur: &mut Cursor, tid: u32, unit: u64) -> Option<(u64, u64)> {
        if cur.next_chunk != tid as u64 {
            return None;
        }
        cur.next_chunk += self.nth as u64;
        let (first_unit, units) = balanced_block(self.tc.div_ceil(unit), self.nth, tid);
        let first = first_unit.saturating_mul(unit);
        (units > 0 && first < self.tc)
            .then(|| (first, first.saturating_add(units.saturating_mul(unit)).min(self.tc)))
    }

    /// Round-robin chunks of `chunk` iterations: the calling thread's next one.
    #[inline]
    fn static_chunk(&self, cur: &mut Cursor) -> Option<(u64, u64)> {
        let c = cur.next_chunk;
        cur.next_chunk += self.nth as u64;
        let first = c.saturating_mul(self.chunk);
        (first < self.tc).then(|| (first, first.saturating_add(self.chunk).min(self.tc)))
    }
}

impl Slot {
    /// Monotonic dynamic: the next `chunk` iterations of the shared counter.
    #[inline]
    fn dynamic_chunk(&self, p: &Params) -> Option<(u64, u64)> {
        // Relaxed: the counter only divides the work; the loop's data is ordered by the
        // construct's barrier, and the parameters by the Acquire in `init`.
        let first = self.next.fetch_add(p.chunk, Ordering::Relaxed);
        (first < p.tc).then(|| (first, first.saturating_add(p.chunk).min(p.tc)))
    }

    /// Nonmonotonic dynamic: a chunk of the thread's own block, or one stolen.
    #[inline]
    fn stolen_chunk(&self, p: &Params, tid: u32) -> Option<(u64, u64)> {
        chunk_blocks::take_one(&self.blocks, tid, p.nth).map(|c| {
            let first = c * p.chunk;
            (first, first.saturating_add(p.chunk).min(p.tc))
        })
    }

    /// Nonmonotonic guided: half of the thread's own block, or half of one stolen.
    #[inline]
    fn stolen_half(&self, p: &Params, tid: u32) -> Option<(u64, u64)> {
        chunk_blocks::take_half(&self.blocks, tid, p.nth)
            .map(|(c, e)| (c * p.chunk, e.saturating_mul(p.chunk).min(p.tc)))
    }

    /// Trapezoidal: the next chunk number of the shared counter, its bounds by formula.
    #[inline]
    fn trapezoid_chunk(&self, p: &Params) -> Option<(u64, u64)> {
        // Relaxed: as for dynamic (here the counter numbers chunks).
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        let first = p.trapezoid.start(i);
        (first < p.tc).then(|| (first, p.trapezoid.start(i + 1).min(p.tc)))
    }

    /// Monotonic guided: a share of what is left (at least `chunk`; whole multiples of it for
    /// the simd kind), taken from the shared counter.
    #[inline]
    fn guided_chunk(&self, p: &Params) -> Option<(u64, u64)> {
        let mut first = self.next.load(Ordering::Relaxed);
        loop {
            if first >= p.tc {
                return None;
            }
            let rem = p.tc - first;
            let size = (rem / (2 * p.nth as u64)).max(p.chunk);
            let size = if p.kind == Kind::GuidedSimd { size.next_multiple_of(p.chunk) } else { size };
            let size = size.min(rem);
            // Relaxed: as for dynamic.
            match self.next.compare_exchange_weak(first, first + size, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some((first, first + size)),
                Err(now) => first = now,
            }
        }
    }
}

/// One team's ring of slots.
pub(crate) struct Ring {
    slots: Box<[Slot]>,
}

impl Ring {
    /// The ring of a team of `nth` threads.
    pub(crate) fn new(nth: u32) -> Ring {
        let slots = (0..RING)
            .map(|j| Slot {
                blocks: (0..nth.max(1)).map(|_| CachePadded::new(AtomicU64::new(0))).collect(),
                gate: SlotGate::new(j),
                params: UnsafeCell::new(Params {
                    lb: 0,
                    st: 1,
                    tc: 0,
                    chunk: 1,
                    kind: Kind::Static,
                    nth: 1,
                    trapezoid: Trapezoid::default(),
                }),
                next: CachePadded::new(AtomicU64::new(0)),
                ordered_next: CachePadded::new(EpochFlag::new(0)),
            })
            .collect();
        Ring { slots }
    }

    /// Makes every slot free for the first RING loops of a new region (the team is idle).
    pub(crate) fn reset(&self) {
        for (j, s) in self.slots.iter().enumerate() {
            s.gate.reset(j as u32);
        }
    }
}

/// One thread's position in its current dispatched loop (part of its implicit task's state).
#[derive(Clone, Copy, Debug, Default)]
pub struct Cursor {
    /// Number of dispatched loops this implicit task has started.
    pub loops: u32,
    /// The current loop's number (loops - 1) while `active`.
    active: bool,
    /// Whether this thread already left the current loop's slot.
    left: bool,
    /// Static-through-dispatch: the next chunk number of this thread.
    next_chunk: u64,
    /// The thread was handed the loop's last chunk: it gets no more (clang reads the
    /// lastprivate flag of the last chunk a thread got; with stealing, chunks of lower
    /// iterations may otherwise still come after it).
    took_last: bool,
    /// Ordered: this thread's current iteration index, the end of its chunk, and whether it
    /// has already passed the turn on for that iteration.
    ord_cur: u64,
    ord_end: u64,
    ord_passed: bool,
}

impl Cursor {
    /// Iterations `first..end` of loop `p` go to this thread: the ordered state follows them,
    /// and the chunk is given in the loop's own values.
    #[inline]
    fn hand_out(&mut self, p: &Params, first: u64, end: u64) -> Chunk {
        self.ord_cur = first;
        self.ord_end = end;
        self.ord_passed = false;
        self.took_last = end == p.tc;
        // `as i64` keeps the low 64 bits (see `Chunk`).
        let (lb, st) = (p.lb as i64, p.st as i64);
        let lower = lb.wrapping_add((first as i64).wrapping_mul(st));
        let upper = lb.wrapping_add(((end - 1) as i64).wrapping_mul(st));
        Chunk { lower, upper, stride: st, last: end == p.tc }
    }
}

/// A chunk handed out: iteration values `lower..=upper` and the step, in the loop's own
/// type as 64-bit two's complement (the bits of an unsigned 64-bit value; a narrower type's
/// value is the low bits). Computed with wrapping 64-bit arithmetic, which gives the same low
/// bits as exact arithmetic: the caller truncates to the loop's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub lower: i64,
    pub upper: i64,
    pub stride: i64,
    pub last: bool,
}

/// OMPT's work type of a loop dispatched with `kind` by a team of `nthreads`.
pub(crate) fn work_kind(kind: Kind, nthreads: u32) -> u32 {
    use oxiomp_instrument::work_kind as w;
    match kind {
        // A guided schedule on one thread is one chunk after another from the start: a static
        // one (as libomp tells it).
        Kind::Guided | Kind::GuidedSteal | Kind::GuidedSimd if nthreads == 1 => w::LOOP_STATIC,
        Kind::Static | Kind::StaticSimd => w::LOOP_STATIC,
        Kind::Dynamic | Kind::Steal => w::LOOP_DYNAMIC,
        Kind::Guided | Kind::GuidedSteal | Kind::GuidedSimd => w::LOOP_GUIDED,
        Kind::Trapezoidal => w::LOOP_OTHER,
    }
}

impl Chunk {
    /// How many iterations the chunk holds.
    pub fn iterations(&self) -> u64 {
        if self.stride == 0 {
            return 1;
        }
        let n = (self.upper as i128 - self.lower as i128) / self.stride as i128 + 1;
        n.clamp(0, u64::MAX as i128) as u64
    }
}

impl Ring {
    fn slot(&self, k: u32) -> &Slot {
        &self.slots[(k % RING) as usize]
    }

    /// Starts a dispatched loop for the calling thread (`tid` of `nth`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn init(
        &self,
        cur: &mut Cursor,
        kind: Kind,
        lb: i128,
        ub: i128,
        st: i128,
        chunk: i64,
        tid: u32,
        nth: u32,
    ) {
        // A loop left without draining it (cancelled: clang then jumps past `next` and
        // `deinit`) is left now, so its slot can be recycled.
        self.leave(cur);
        let k = cur.loops;
        cur.loops = cur.loops.wrapping_add(1);
        cur.active = true;
        cur.left = false;
        cur.next_chunk = tid as u64;
        cur.took_last = false;
        cur.ord_passed = false;
        let slot = self.slot(k);
        if slot.gate.enter(k) == Entry::Ready {
            return;
        }
        let tc = trip_count(lb, ub, st).min(u64::MAX as u128) as u64;
        let chunk = chunk.max(if kind == Kind::Static { 0 } else { 1 }) as u64;
        let chunks = tc.div_ceil(chunk.max(1));
        let blocks_fit = chunks < chunk_blocks::MAX_CHUNKS && nth as usize <= slot.blocks.len();
        let kind = match kind {
            Kind::Steal if !blocks_fit => Kind::Dynamic,
            Kind::GuidedSteal if !blocks_fit => Kind::Guided,
            k => k,
        };
        if matches!(kind, Kind::Steal | Kind::GuidedSteal) {
            // Published with ready(k).
            chunk_blocks::deal(&slot.blocks, chunks, nth);
        }
        // (Divisions: only for the loops that use it.)
        let trapezoid =
            if kind == Kind::Trapezoidal { Trapezoid::new(tc, nth, chunk) } else { Trapezoid::default() };
        // SAFETY: the gate let us initialise loop k (see the Sync impl).
        unsafe { *slot.params.get() = Params { lb, st, tc, chunk, kind, nth, trapezoid } };
        // Relaxed: published by `publish` (ready(k), Release) below.
        slot.next.store(0, Ordering::Relaxed);
        slot.ordered_next.set(0);
        slot.gate.publish(k);
    }

    /// The calling thread's next chunk of its current loop, or None when it has none left (it
    /// then leaves the loop). Each schedule kind finds the chunk's iteration range
    /// (`first..end`, as indices from 0) in a method of its own on the slot.
    #[inline]
    pub(crate) fn next(&self, cur: &mut Cursor, tid: u32) -> Option<Chunk> {
        if !cur.active || cur.left {
            return None;
        }
        if cur.took_last {
            self.leave(cur);
            return None;
        }
        let slot = self.slot(cur.loops.wrapping_sub(1));
        // SAFETY: the slot is ready(k) (we saw it in `init`) and we have not left it, so the
        // parameters are stable.
        let p = unsafe { &*slot.params.get() };
        let range = match p.kind {
            Kind::Static if p.chunk == 0 => p.static_block(cur, tid, 1),
            Kind::StaticSimd => p.static_block(cur, tid, p.chunk),
            Kind::Static => p.static_chunk(cur),
            Kind::Dynamic => slot.dynamic_chunk(p),
            Kind::Steal => slot.stolen_chunk(p, tid),
            Kind::GuidedSteal => slot.stolen_half(p, tid),
            Kind::Trapezoidal => slot.trapezoid_chunk(p),
            Kind::Guided | Kind::GuidedSimd => slot.guided_chunk(p),
        };
        match range {
            Some((first, end)) => Some(cur.hand_out(p, first, end)),
            None => {
                self.leave(cur);
                None
            }
        }
    }

    /// Leaves the current loop's slot (once); the team's last thread frees it for loop k+RING.
    pub(crate) fn leave(&self, cur: &mut Cursor) {
        if !cur.active || cur.left {
            return;
        }
        cur.left = true;
        cur.active = false;
        let k = cur.loops.wrapping_sub(1);
        let slot = self.slot(k);
        // SAFETY: as in `next`.
        let nth = unsafe { (*slot.params.get()).nth };
        slot.gate.leave(k, nth, RING);
    }

    /// `__kmpc_ordered`: waits until the thread's current iteration may enter.
    pub(crate) fn ordered_enter(&self, cur: &Cursor) {
        if !cur.active {
            return;
        }
        let slot = self.slot(cur.loops.wrapping_sub(1));
        slot.ordered_next.wait_turn(cur.ord_cur as u32);
    }

    /// `__kmpc_end_ordered`: the next iteration may enter.
    pub(crate) fn ordered_exit(&self, cur: &mut Cursor) {
        if !cur.active {
            return;
        }
        let slot = self.slot(cur.loops.wrapping_sub(1));
        slot.ordered_next.set((cur.ord_cur + 1) as u32);
        cur.ord_passed = true;
    }

    /// gcc's `GOMP_ordered_start`: gcc tells no iteration's end, so the ordered regions a
    /// thread runs within its chunk take the chunk's iterations in turn (it runs them in
    /// order itself): a region after an earlier one of the chunk belongs to the next
    /// iteration. The chunk's first region waits for the chunk's turn.
    pub(crate) fn ordered_enter_in_chunk(&self, cur: &mut Cursor) {
        if cur.active && cur.ord_passed {
            self.iteration_done(cur);
        }
        self.ordered_enter(cur);
    }

    /// The thread is done with its chunk of an ordered loop (gcc's code asks for the next
    /// chunk, or leaves the loop): the chunk's iterations whose region did not run pass their
    /// turn on, so the turn goes to the iteration after the chunk.
    pub(crate) fn ordered_chunk_done(&self, cur: &mut Cursor) {
        while cur.active {
            let last = cur.ord_cur + 1 >= cur.ord_end;
            self.iteration_done(cur);
            if last {
                break;
            }
        }
    }

    /// `__kmpc_dispatch_fini_*`: the end of one iteration of an ordered loop.
    pub(crate) fn iteration_done(&self, cur: &mut Cursor) {
        if !cur.active {
            return;
        }
        if !cur.ord_passed {
            // The iteration skipped its ordered region: wait for its turn and pass it on.
            self.ordered_enter(cur);
            self.ordered_exit(cur);
        }
        if cur.ord_cur + 1 < cur.ord_end {
            cur.ord_cur += 1;
            cur.ord_passed = false;
        }
    }
}

/// Trapezoid self-scheduling of a loop: chunk sizes fall linearly by `step` from `first`
/// (tc / 2nth, at least the smallest chunk `min`) towards `min` over about
/// 2 tc / (first + min) chunks, then stay at `min`. When the fall rounds to no step at all
/// (a short loop on many threads), every chunk is `first` iterations.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Trapezoid {
    first: u64,
    step: u64,
    /// Chunks before this one follow `first - i * step`; later ones are `min`.
    shrinking: u64,
    min: u64,
}

impl Trapezoid {
    pub(crate) fn new(tc: u64, nth: u32, min: u64) -> Trapezoid {
        let min = min.max(1);
        let first = (tc / (2 * nth.max(1) as u64)).max(min);
        let chunks = ((2 * tc as u128).div_ceil(first as u128 + min as u128)).max(1) as u64;
        let step = if chunks > 1 { (first - min) / (chunks - 1) } else { 0 };
        let shrinking = if step > 0 {
            (first - min).div_ceil(step)
        } else if first > min {
            tc.div_ceil(first)
        } else {
            0
        };
        Trapezoid { first, step, shrinking, min }
    }

    /// The first iteration of chunk `i`.
    pub(crate) fn start(&self, i: u64) -> u64 {
        let (first, step, min) = (self.first as u128, self.step as u128, self.min as u128);
        let i = i as u128;
        let k = i.min(self.shrinking as u128);
        let start = k * first - step * k * k.saturating_sub(1) / 2 + (i - k) * min;
        start.min(u64::MAX as u128) as u64
    }
}

/// Thread `tid`'s block when `n` items are split into `nth` balanced blocks: (first, count).
#[inline]
fn balanced_block(n: u64, nth: u32, tid: u32) -> (u64, u64) {
    let (q, r) = (n / nth as u64, n % nth as u64);
    let t = tid as u64;
    (t * q + t.min(r), q + u64::from(t < r))
}

/// libomp's simd kinds (46 guided, 47 runtime) pass the simd width as the chunk: chunks are
/// then whole multiples of (the run-sched-var chunk times) the width. Adjusts the kind and
/// chunk `kind_of` gave; other kinds pass through.
pub fn simd_adjust(sched: i32, kind: Kind, over: Option<i64>, chunk: i64) -> (Kind, i64) {
    if !matches!(strip_modifiers(sched), 46 | 47) {
        return (kind, over.unwrap_or(chunk));
    }
    let w = chunk.max(1);
    match (kind, over) {
        (Kind::Static, Some(0)) => (Kind::StaticSimd, w),
        (Kind::Guided | Kind::Trapezoidal, c) => (Kind::GuidedSimd, c.unwrap_or(1).max(1).saturating_mul(w)),
        (k, c) => (k, c.unwrap_or(1).max(1).saturating_mul(w)),
    }
}

/// The `nonmonotonic` schedule modifier bit.
const NONMONOTONIC: i32 = 1 << 30;

/// The dispatch kind for a `sched_type` value as clang passes it (modifier bits stripped), or
/// None if the value is not a schedule. `runtime` and `auto` resolve through run-sched-var.
pub fn kind_of(sched: i32, run_sched: crate::icv::Schedule) -> Option<(Kind, Option<i64>)> {
    let base = strip_modifiers(sched);
    let base = if (160..=199).contains(&base) { base - 160 + 32 } else { base };
    let base = if (65..=71).contains(&base) { base - 32 } else { base };
    Some(match base {
        // Nonmonotonic dynamic steals; its ordered variant (67, mapped to 35 above) may not.
        35 if sched & NONMONOTONIC != 0 && strip_modifiers(sched) == 35 => (Kind::Steal, None),
        36 if sched & NONMONOTONIC != 0 && strip_modifiers(sched) == 36 => (Kind::GuidedSteal, None),
        33 => (Kind::Static, None),
        34 | 40 | 41 | 45 => (Kind::Static, Some(0)),
        // libomp's static_steal: blocks of chunks per thread, with stealing.
        44 => (Kind::Steal, None),
        35 => (Kind::Dynamic, None),
        36 | 42 | 43 | 46 => (Kind::Guided, None),
        39 => (Kind::Trapezoidal, None),
        37 | 47 => {
            let chunk = if run_sched.chunk > 0 { Some(run_sched.chunk as i64) } else { None };
            match run_sched.kind {
                ScheduleKind::Static => (Kind::Static, chunk.or(Some(0))),
                ScheduleKind::Dynamic => (Kind::Dynamic, chunk.or(Some(1))),
                ScheduleKind::Guided => (Kind::Guided, chunk.or(Some(1))),
                ScheduleKind::Auto => (Kind::Guided, Some(1)),
                ScheduleKind::Trapezoidal => (Kind::Trapezoidal, chunk.or(Some(1))),
                // Stealing hands out chunks out of order: not for the monotonic modifier.
                ScheduleKind::StaticSteal if run_sched.monotonic => (Kind::Dynamic, chunk.or(Some(1))),
                ScheduleKind::StaticSteal => (Kind::Steal, chunk.or(Some(1))),
            }
        }
        38 => (Kind::Guided, Some(1)),
        _ => return None,
    })
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::sync::atomic::AtomicU32;
    use std::sync::Arc;

    fn drain(ring: &Ring, cur: &mut Cursor, tid: u32, hits: &[AtomicU32], lb: i128, st: i128) {
        while let Some(c) = ring.next(cur, tid) {
            let mut i = c.lower as i128;
            loop {
                hits[((i - lb) / st) as usize].fetch_add(1, Ordering::Relaxed);
                if i == c.upper as i128 {
                    break;
                }
                i += st;
            }
        }
    }

    /// Runs `body(tid, ring, loop number, hits of that loop)` for every loop of `sizes` on
    /// `nth` threads sharing one ring, then checks that every iteration ran exactly once.
    fn run_loops(
        nth: u32,
        sizes: impl Iterator<Item = usize>,
        what: &str,
        body: impl Fn(u32, &Ring, &mut Cursor, usize, &[AtomicU32]) + Send + Sync + 'static,
    ) {
        let ring = Arc::new(Ring::new(nth));
        let hits: Arc<Vec<Vec<AtomicU32>>> =
            Arc::new(sizes.map(|n| (0..n).map(|_| AtomicU32::new(0)).collect()).collect());
        let body = Arc::new(body);
        let hs: Vec<_> = (0..nth)
            .map(|tid| {
                let (ring, hits, body) = (ring.clone(), hits.clone(), body.clone());
                std::thread::spawn(move || {
                    let mut cur = Cursor::default();
                    for (l, h) in hits.iter().enumerate() {
                        body(tid, &ring, &mut cur, l, h);
                        ring.leave(&mut cur);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        for (l, h) in hits.iter().enumerate() {
            assert!(h.iter().all(|x| x.load(Ordering::Relaxed) == 1), "{what}: loop {l}");
        }
    }

    /// Threads run 3*RING nowait loops back to back (so slots are recycled while others are
    /// still in earlier loops): every iteration of every loop runs exactly once.
    #[test]
    fn nowait_loops_in_flight() {
        for kind in
            [Kind::Dynamic, Kind::Steal, Kind::Guided, Kind::GuidedSteal, Kind::Static, Kind::Trapezoidal]
        {
            let nth = 4u32;
            let sizes = (0..3 * RING as usize).map(|l| 50 + l * 7);
            run_loops(nth, sizes, &format!("{kind:?}"), move |tid, ring, cur, l, h| {
                let n = h.len() as i128;
                // A negative step: iterations 3n-1 down to 0 by -3.
                ring.init(cur, kind, 3 * n - 1, 0, -3, (l % 3) as i64, tid, nth);
                drain(ring, cur, tid, h, 3 * n - 1, -3);
            });
        }
    }

    /// Nonmonotonic dynamic and guided with late and slow members: the others steal their
    /// blocks; every chunk still runs exactly once, over many rounds and team sizes, and every
    /// chunk but the loop's last is whole chunks (exactly one for dynamic).
    #[test]
    fn steal_hands_out_each_chunk_once() {
        for kind in [Kind::Steal, Kind::GuidedSteal] {
            for nth in [2u32, 3, 5, 16] {
                let sizes = (0..40).map(|r| 1 + r * 37);
                let what = format!("{kind:?}, {nth} threads");
                run_loops(nth, sizes, &what, move |tid, ring, cur, r, h| {
                    if (r as u32 + tid).is_multiple_of(4) {
                        // A late member: its block is stolen meanwhile.
                        std::thread::sleep(std::time::Duration::from_micros(200));
                    }
                    let n = h.len() as i64;
                    let chunk = 1 + (r % 3) as i64;
                    ring.init(cur, kind, 0, n as i128 - 1, 1, chunk, tid, nth);
                    while let Some(c) = ring.next(cur, tid) {
                        for i in c.lower..=c.upper {
                            h[i as usize].fetch_add(1, Ordering::Relaxed);
                            if tid == 1 {
                                std::thread::yield_now(); // a slow member
                            }
                        }
                        assert_eq!(c.last, c.upper == n - 1);
                        if c.last {
                            // clang reads lastprivate from the last chunk a thread got.
                            assert!(ring.next(cur, tid).is_none(), "a chunk after the last");
                        }
                        let len = c.upper - c.lower + 1;
                        if !c.last {
                            assert_eq!(len % chunk, 0, "{kind:?}: a chunk of {len} iterations");
                            if kind == Kind::Steal {
                                assert_eq!(len, chunk);
                            }
                        }
                    }
                });
            }
        }
    }

    /// Guided over blocks takes half of the thread's block at a time: on one thread the sizes
    /// are 50, 25, 12, 6, 3, 2, 1, 1 of a 100-iteration loop (remaining / 2, the guided size
    /// for one thread), and the last chunk says so.
    #[test]
    fn guided_over_blocks_halves() {
        let ring = Ring::new(1);
        let mut cur = Cursor::default();
        ring.init(&mut cur, Kind::GuidedSteal, 0, 99, 1, 1, 0, 1);
        let mut sizes = Vec::new();
        while let Some(c) = ring.next(&mut cur, 0) {
            sizes.push(c.upper - c.lower + 1);
            assert_eq!(c.last, c.upper == 99);
        }
        assert_eq!(sizes, [50, 25, 12, 6, 3, 2, 1, 1]);
    }

    /// Trapezoid chunks on one thread of a 1000-iteration loop over 4 threads: they start at
    /// 1000 / 8 = 125 iterations and shrink by a fixed step to the smallest chunk, cover the
    /// loop once in order, and only the last says so.
    #[test]
    fn trapezoid_chunks_shrink_linearly() {
        let cases = [
            (1000u64, 4u32, 1u64),
            (1000, 4, 10),
            (7, 16, 1),
            (1, 1, 1),
            (100_003, 3, 2),
            (1000, 16, 1),
            (100, 16, 1),
        ];
        for (tc, nth, min) in cases {
            let ring = Ring::new(1);
            let mut cur = Cursor::default();
            ring.init(&mut cur, Kind::Trapezoidal, 0, tc as i128 - 1, 1, min as i64, 0, nth);
            let mut sizes = Vec::new();
            let mut next = 0i64;
            while let Some(c) = ring.next(&mut cur, 0) {
                assert_eq!(c.lower, next, "in order, without gaps");
                next = c.upper + 1;
                sizes.push((c.upper - c.lower + 1) as u64);
                assert_eq!(c.last, c.upper == tc as i64 - 1);
            }
            assert_eq!(next, tc as i64, "{tc} iterations covered");
            assert_eq!(sizes[0], (tc / (2 * nth as u64)).max(min).min(tc));
            assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "non-increasing: {sizes:?}");
            let body = &sizes[..sizes.len() - 1];
            assert!(body.iter().all(|&n| n >= min), "no chunk but the last below {min}");
            // While above the smallest size, the chunks shrink by a fixed step.
            let steps: Vec<u64> = body.windows(2).filter(|w| w[1] > min).map(|w| w[0] - w[1]).collect();
            assert!(steps.windows(2).all(|w| w[0] == w[1]), "a fixed step: {sizes:?}");
        }
        assert_eq!(Trapezoid::new(1000, 4, 1).start(1), 125);
        // No step at this size: chunks of the first size throughout, not of the smallest.
        let flat = Trapezoid::new(1000, 16, 1);
        assert_eq!((flat.start(1), flat.start(2)), (31, 62));
    }

    /// libomp's simd kinds: every chunk but the loop's last is whole multiples of the chunk
    /// (the simd width, times run-sched-var's chunk for kind 47), every iteration once.
    #[test]
    fn simd_kinds_keep_whole_widths() {
        let rs = |kind, chunk| crate::icv::Schedule { kind, chunk, monotonic: false };
        let cases = [
            (46, rs(ScheduleKind::Static, 0), 4, 4),
            (47, rs(ScheduleKind::Static, 0), 4, 4),
            (47, rs(ScheduleKind::Static, 2), 4, 8),
            (47, rs(ScheduleKind::Dynamic, 0), 4, 4),
            (47, rs(ScheduleKind::Dynamic, 3), 4, 12),
            (47, rs(ScheduleKind::Guided, 0), 8, 8),
            (47, rs(ScheduleKind::Guided, 2), 4, 8),
            (47, rs(ScheduleKind::Auto, 0), 4, 4),
        ];
        for (sched, run, width, unit) in cases {
            let (kind, over) = kind_of(sched, run).unwrap();
            let (kind, chunk) = simd_adjust(sched, kind, over, width);
            for nth in [1u32, 3, 4] {
                for tc in [1i64, 27, 100, 1001] {
                    let ring = Ring::new(nth);
                    let mut hits = vec![0u32; tc as usize];
                    for tid in 0..nth {
                        let mut cur = Cursor::default();
                        ring.init(&mut cur, kind, 0, tc as i128 - 1, 1, chunk, tid, nth);
                        let mut sizes = Vec::new();
                        while let Some(c) = ring.next(&mut cur, tid) {
                            (c.lower..=c.upper).for_each(|i| hits[i as usize] += 1);
                            sizes.push(((c.upper - c.lower + 1) as u64, c.last));
                        }
                        for &(n, last) in &sizes {
                            assert!(last || n % unit == 0, "{sched} {run:?}: {n} not whole {unit}s");
                        }
                    }
                    assert!(hits.iter().all(|&h| h == 1), "{sched} {run:?} {nth} {tc}: every iteration once");
                }
            }
        }
    }

    #[test]
    fn sched_kinds() {
        let rs = crate::icv::Schedule { kind: ScheduleKind::Dynamic, chunk: 4, monotonic: false };
        assert_eq!(kind_of(0x4000_0023, rs), Some((Kind::Steal, None)));
        assert_eq!(kind_of(0x2000_0023, rs), Some((Kind::Dynamic, None)));
        assert_eq!(kind_of(35, rs), Some((Kind::Dynamic, None)));
        assert_eq!(kind_of(0x4000_0043, rs), Some((Kind::Dynamic, None)));
        assert_eq!(kind_of(0x4000_0024, rs), Some((Kind::GuidedSteal, None)));
        assert_eq!(kind_of(0x2000_0024, rs), Some((Kind::Guided, None)));
        assert_eq!(kind_of(36, rs), Some((Kind::Guided, None)));
        assert_eq!(kind_of(66, rs), Some((Kind::Static, Some(0))));
        assert_eq!(kind_of(0x4000_0025, rs), Some((Kind::Dynamic, Some(4))));
        assert_eq!(kind_of(39, rs), Some((Kind::Trapezoidal, None)));
        assert_eq!(kind_of(44, rs), Some((Kind::Steal, None)));
        let tz = crate::icv::Schedule { kind: ScheduleKind::Trapezoidal, chunk: 0, monotonic: false };
        assert_eq!(kind_of(37, tz), Some((Kind::Trapezoidal, Some(1))));
        let steal = |monotonic| crate::icv::Schedule { kind: ScheduleKind::StaticSteal, chunk: 2, monotonic };
        assert_eq!(kind_of(37, steal(false)), Some((Kind::Steal, Some(2))));
        assert_eq!(kind_of(37, steal(true)), Some((Kind::Dynamic, Some(2))), "monotonic: no stealing");
        assert_eq!(kind_of(12, rs), None);
    }
}
