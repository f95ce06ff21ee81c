//! A team's ring of arrivals: the `k`th rendezvous point of `n` threads (the `k`th construct
//! every member of a team meets), where the first thread to arrive publishes a record of
//! `W` words and each later one reads it, without a lock. The run-time checks compare each
//! thread's construct with the first thread's this way (`kmp-abi/src/check`). Model-checked
//! with loom (`loom_tests` below).
//!
//! # Protocol
//! Point `k` uses slot `k % RING`. The slot's tag word holds, for the point it serves: the
//! region's generation, the point's lap `k / RING` (which point of the slot it is), a phase,
//! the count of arrivals, and `ahead`: how many of the slot's next laps are *diverted* to the
//! slow path, a mutex-guarded map (*overflow*):
//! * `free(k)`: no thread has arrived at `k`. The first arriver CASes it to `filling(k)`
//!   (Acquire), stores the words and publishes `ready(k, 1)` (Release). Every arriver's
//!   first look at the tag is that CAS, from the `free(k)` it expects: a failed one returns
//!   the tag as an Acquire load would, and takes the line for the CAS that follows.
//! * `filling(k)`: the first arriver is storing a few words: the others spin, then yield.
//! * `ready(k, c)`: a later arriver loads the tag (Acquire), reads the words, then CASes the
//!   count to `c + 1` (AcqRel); the one that makes it `n` frees the slot in the same CAS: to
//!   `free(k + RING)`, or `diverted(k + RING)` with `ahead - 1` when `ahead > 0`.
//! * A thread at `k` that finds the slot still serving an earlier lap `k - j * RING` (a thread
//!   of the team has not arrived there yet: this one is `j` rings ahead) does not wait for it,
//!   which could hang a program whose slow thread waits for the fast one: it raises `ahead`
//!   to at least `j` (CAS) and takes the slow path.
//! * `diverted(k)`: point `k`'s record lives in the map; every arriver goes there. The
//!   arrival that completes `k` in the map frees the slot as the ring's last arrival does. It
//!   always finds the tag at `diverted(k)`: all `n` arrived at `k` only after all arrived at
//!   `k - RING`, whose last arrival moved the tag on.
//!
//! A region starts a new generation ([`ArrivalRing::begin`]): a tag of another generation is
//! `free(k)` for the region's first lap (`k < RING`), so nothing is reset slot by slot.
//! Generations are 16 bits; when they wrap, every tag is set back to generation 0, which no
//! region has, so a tag left untouched for 2^16 regions is never taken for a new one's. Laps
//! are 16 bits and `ahead` at most 2^15 - 1: a thread further ahead of another in one region
//! gets [`Arrival::Unknown`] (the caller stops checking the region).
//!
//! # Why it is correct
//! Exactly one thread fills point `k`'s record: `free(k)` (or a stale tag in lap 0) is CASed
//! to `filling(k)` once, and `free(k)` is stored once (by `k - RING`'s last arrival). Every
//! reader loads `ready(k, _)` with Acquire after the filler's Release, so it reads the
//! filler's words; the words are overwritten only after a later lap's filler Acquires a
//! `free` tag, which the last arrival's AcqRel CAS released after acquiring every earlier
//! count CAS (a release sequence of RMWs), each made after its reader's loads. A
//! point is in the ring or in the map, never both: the laps after the tag's that `ahead`
//! covers are in the map, and no thread arrives at a lap beyond them without first raising
//! `ahead`, in a CAS on the same word as the count, so the arrival that moves the tag on
//! either sees the raised value or makes that CAS fail and be retried on the moved tag. The
//! filler publishes `ready(k)` with a plain store, which would erase a raise made while it
//! fills: none is, since a thread past `k` has arrived at `k`, which takes `ready(k)`.

// Under loom the task engine is not built: only the models use this module.
#![cfg_attr(loom, allow(dead_code))]

use std::collections::BTreeMap;

use crossbeam_utils::CachePadded;

use super::atomic::{AtomicU64, Ordering};
use super::mutex::Mutex;

/// Slots in a ring: how far (in points) a thread can run ahead of the slowest one before it
/// takes the slow path (2 in the loom models, so that they go round it in a few points).
pub const RING: u64 = if cfg!(loom) { 2 } else { 8 };

const COUNT_BITS: u32 = 14;
const PHASE_SHIFT: u32 = COUNT_BITS;
const AHEAD_SHIFT: u32 = PHASE_SHIFT + 2;
/// `ahead`'s field (its values stay below 2^15: [`MAX_AHEAD`]).
const AHEAD_BITS: u32 = 16;
const LAP_SHIFT: u32 = AHEAD_SHIFT + AHEAD_BITS;
const LAP_MASK: u64 = 0xffff;
const GEN_SHIFT: u32 = LAP_SHIFT + 16;
const GEN_MASK: u64 = 0xffff;
/// In the generation word: the region's arrivals are no longer followed.
const HALTED: u64 = 1 << 62;
/// In the generation word: a point of the region went through the overflow map.
const OVERFLOWED: u64 = 1 << 63;
/// The most laps a thread may run ahead of the slowest: below half the laps' 16 bits, so
/// that a lap further ahead is never taken for the tag's own.
const MAX_AHEAD: u64 = (1 << 15) - 1;

const FREE: u64 = 0;
const FILLING: u64 = 1;
const READY: u64 = 2;
const DIVERTED: u64 = 3;

/// A tag's fields.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Tag {
    generation: u64,
    /// The point's lap (`k / RING`), modulo 2^16.
    lap: u64,
    phase: u64,
    /// How many of the slot's laps after this one are diverted to the overflow map.
    ahead: u64,
    count: u32,
}

impl Tag {
    fn decode(x: u64) -> Tag {
        Tag {
            generation: x >> GEN_SHIFT,
            lap: (x >> LAP_SHIFT) & LAP_MASK,
            phase: (x >> PHASE_SHIFT) & 3,
            ahead: (x >> AHEAD_SHIFT) & ((1 << AHEAD_BITS) - 1),
            count: (x & ((1 << COUNT_BITS) - 1)) as u32,
        }
    }

    fn encode(self) -> u64 {
        (self.generation << GEN_SHIFT)
            | (self.lap << LAP_SHIFT)
            | (self.ahead << AHEAD_SHIFT)
            | (self.phase << PHASE_SHIFT)
            | self.count as u64
    }
}

/// What a thread found at a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival<const W: usize> {
    /// It was the first: its record is the point's.
    First,
    /// Another thread was first, with this record.
    Later([u64; W]),
    /// The ring cannot say (a thread more than 2^15 laps ahead of another): not checked.
    Unknown,
}

/// A point's slot: the tag first, so that it shares its cache line with the record's first
/// words (a barrier's or a `single`'s record changes only there).
#[repr(C)]
struct Slot<const W: usize> {
    tag: AtomicU64,
    words: [AtomicU64; W],
}

/// A diverted point's record and its count of arrivals.
struct Overflowed<const W: usize> {
    words: [u64; W],
    count: u32,
}

/// The ring of one team.
pub struct ArrivalRing<const W: usize> {
    slots: [CachePadded<Slot<W>>; RING as usize],
    overflow: Mutex<BTreeMap<u64, Overflowed<W>>>,
    /// The current region's generation, with the [`HALTED`] and [`OVERFLOWED`] bits: written
    /// by the region's primary thread when it begins, and by [`ArrivalRing::halt`] and the
    /// slow path, so read-shared by the members the rest of the time.
    generation: CachePadded<AtomicU64>,
}

impl<const W: usize> Default for ArrivalRing<W> {
    fn default() -> Self {
        ArrivalRing {
            slots: std::array::from_fn(|_| {
                CachePadded::new(Slot {
                    tag: AtomicU64::new(0),
                    words: std::array::from_fn(|_| AtomicU64::new(0)),
                })
            }),
            overflow: Mutex::new(BTreeMap::new()),
            generation: CachePadded::new(AtomicU64::new(0)),
        }
    }
}

impl<const W: usize> ArrivalRing<W> {
    /// The most threads a ring counts (the count's bits).
    pub const MAX_THREADS: u32 = (1 << COUNT_BITS) - 1;

    /// The generation of the region the team runs (as [`ArrivalRing::begin`] returned it).
    pub fn generation(&self) -> u64 {
        // Relaxed: read by a member, to which the fork published the primary's store.
        self.generation.load(Ordering::Relaxed) & GEN_MASK
    }

    /// Stops following the region's arrivals (a mistake was found): returns whether it was
    /// the first to.
    pub fn halt(&self) -> bool {
        // Relaxed: a flag for the caller to test before arriving ([`ArrivalRing::halted`]);
        // one that misses a fresh halt arrives as before.
        self.generation.fetch_or(HALTED, Ordering::Relaxed) & HALTED == 0
    }

    /// Whether the region's arrivals are no longer followed.
    #[inline]
    pub fn halted(&self) -> bool {
        // Relaxed: as in `halt`.
        self.generation.load(Ordering::Relaxed) & HALTED != 0
    }

    /// A new region of the team begins (on its primary thread, while no member is in the
    /// ring): returns its generation, which each member passes to [`ArrivalRing::arrive`].
    pub fn begin(&self) -> u64 {
        // Relaxed: written here by a thread alone on the team (or, by the slow path and
        // `halt`, by members of the team's last region, which the join ordered before this);
        // the members read it after the fork, which publishes it.
        let word = self.generation.load(Ordering::Relaxed);
        let mut g = ((word & GEN_MASK) + 1) & GEN_MASK;
        if g == 0 {
            // Generations wrapped: no tag of an earlier region may look like a new one's.
            for slot in &self.slots {
                // Relaxed: as the generation.
                slot.tag.store(0, Ordering::Relaxed);
            }
            g = 1;
        }
        self.generation.store(g, Ordering::Relaxed);
        if word & OVERFLOWED != 0 {
            // Points of a region a mistake stopped may be left.
            self.overflow.lock().clear();
        }
        g
    }

    /// The calling thread, one of `n` (2 to [`ArrivalRing::MAX_THREADS`]), arrives at point `k` of region
    /// `generation`; `mine()` is its record, asked for only when it may be the first.
    #[inline]
    pub fn arrive(&self, generation: u64, k: u64, n: u32, mine: impl FnOnce() -> [u64; W]) -> Arrival<W> {
        debug_assert!((2..=Self::MAX_THREADS).contains(&n));
        let slot = &self.slots[(k % RING) as usize];
        let lap = lap_of(k);
        // The first look is a compare-and-swap from `free(k)`, the slot's state when this
        // thread is the first: it takes the tag's line once where a load and then a CAS take
        // it twice, and a later arriver's failed CAS leaves the line with it for the count's
        // CAS. Acquire, also on failure: the value found is read as the load below reads it.
        let free = Tag { generation, lap, phase: FREE, ahead: 0, count: 0 };
        let filling = Tag { phase: FILLING, count: 1, ..free }.encode();
        let mut found =
            match slot.tag.compare_exchange(free.encode(), filling, Ordering::Acquire, Ordering::Acquire) {
                Ok(_) => return Self::fill(slot, filling, mine()),
                Err(found) => Some(found),
            };
        let mut mine = Some(mine);
        let mut spins = 0u32;
        loop {
            // Acquire: pairs with the Release that published `ready(k)` (the words) or
            // `free(k)` (every reader of the slot's last record is done).
            let x = found.take().unwrap_or_else(|| slot.tag.load(Ordering::Acquire));
            let mut t = Tag::decode(x);
            if t.generation != generation {
                if k >= RING {
                    // This thread arrived at `k - RING` in this generation, through this slot.
                    return Arrival::Unknown;
                }
                t = Tag { generation, lap, phase: FREE, ahead: 0, count: 0 };
            }
            if t.lap != lap {
                // The slot serves an earlier lap: this thread is `j` rings ahead of the slowest.
                let j = lap.wrapping_sub(t.lap) & LAP_MASK;
                if j > MAX_AHEAD {
                    return Arrival::Unknown;
                }
                // Relaxed: `ahead` carries no data; the tag's RMWs are totally ordered, so the
                // arrival that moves the tag on either sees it or makes this CAS fail.
                if t.ahead >= j
                    || slot
                        .tag
                        .compare_exchange(
                            x,
                            Tag { ahead: j, ..t }.encode(),
                            Ordering::Relaxed,
                            Ordering::Relaxed,
                        )
                        .is_ok()
                {
                    return self.overflowed(slot, generation, k, n, mine.take());
                }
                continue;
            }
            match t.phase {
                FREE => {
                    let words = (mine.take().expect("a record is built once"))();
                    let filling = Tag { phase: FILLING, count: 1, ..t }.encode();
                    // Acquire: every reader of the slot's previous record has finished (see
                    // the module's proof).
                    if slot.tag.compare_exchange(x, filling, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                        return Self::fill(slot, filling, words);
                    }
                    // Another thread was first: read its record.
                    mine = None;
                }
                FILLING => {
                    // A few stores: spin a little, then let the filler run.
                    if spins < 64 {
                        spins += 1;
                        super::spin_hint();
                    } else {
                        super::yield_now();
                    }
                }
                READY => {
                    // Relaxed: ordered after the Acquire load of `ready(k)`.
                    let words: [u64; W] = std::array::from_fn(|i| slot.words[i].load(Ordering::Relaxed));
                    let after = if t.count + 1 == n { freed(t) } else { Tag { count: t.count + 1, ..t } };
                    // AcqRel: the reads above precede the slot's recycling (Release); the last
                    // arrival acquires every other arrival's reads before freeing it.
                    if slot
                        .tag
                        .compare_exchange(x, after.encode(), Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok()
                    {
                        return Arrival::Later(words);
                    }
                }
                _ => return self.overflowed(slot, generation, k, n, mine.take()),
            }
        }
    }

    /// The calling thread took the slot (its tag is `filling`): stores its record `words` and
    /// publishes it.
    #[inline]
    fn fill(slot: &Slot<W>, filling: u64, words: [u64; W]) -> Arrival<W> {
        for (w, v) in slot.words.iter().zip(words) {
            // A word that holds `v` already is left alone, so that its cache line stays
            // shared with the readers: a record's words that do not change lap after lap (a
            // barrier's, a `single`'s, past the slot's first line) then cost no line
            // transfer. Relaxed: the load sees the word's last store (made by an earlier
            // filler, which happened before the Acquire that took the slot: no store can
            // follow it until this point is done); a store is published by the Release store
            // of `ready` below, and a reader that finds `v` left here reads it as it would a
            // fresh store.
            if w.load(Ordering::Relaxed) != v {
                w.store(v, Ordering::Relaxed);
            }
        }
        slot.tag.store(Tag { phase: READY, ..Tag::decode(filling) }.encode(), Ordering::Release);
        Arrival::First
    }

    /// The slow path: point `k`'s record is in the overflow map.
    #[cold]
    fn overflowed(
        &self,
        slot: &Slot<W>,
        generation: u64,
        k: u64,
        n: u32,
        mine: Option<impl FnOnce() -> [u64; W]>,
    ) -> Arrival<W> {
        let mut overflow = self.overflow.lock();
        let Some(entry) = overflow.get_mut(&k) else {
            let Some(mine) = mine else { return Arrival::Unknown };
            overflow.insert(k, Overflowed { words: mine(), count: 1 });
            // Relaxed: read by the next region's `begin`, after the join.
            self.generation.fetch_or(OVERFLOWED, Ordering::Relaxed);
            return Arrival::First;
        };
        entry.count += 1;
        let words = entry.words;
        if entry.count < n {
            return Arrival::Later(words);
        }
        overflow.remove(&k);
        drop(overflow);
        // Every thread arrived at `k`, so at `k - RING` before: the tag is `diverted(k)`.
        loop {
            let x = slot.tag.load(Ordering::Acquire);
            let t = Tag::decode(x);
            if t.generation != generation || t.phase != DIVERTED || t.lap != lap_of(k) {
                debug_assert!(false, "point {k} completed in the overflow map, its tag is {t:?}");
                return Arrival::Later(words);
            }
            // AcqRel: as the ring's last arrival (the map's mutex ordered the readers).
            if slot.tag.compare_exchange(x, freed(t).encode(), Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                return Arrival::Later(words);
            }
        }
    }
}

/// Point `k`'s lap, as its tag holds it.
fn lap_of(k: u64) -> u64 {
    (k / RING) & LAP_MASK
}

/// The tag a point's last arrival leaves: the slot serves the point a ring later, in the
/// ring, or in the overflow map when it is diverted.
fn freed(t: Tag) -> Tag {
    Tag {
        lap: (t.lap + 1) & LAP_MASK,
        phase: if t.ahead > 0 { DIVERTED } else { FREE },
        ahead: t.ahead.saturating_sub(1),
        count: 0,
        ..t
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip() {
        let t = Tag {
            generation: GEN_MASK,
            lap: LAP_MASK,
            phase: DIVERTED,
            ahead: MAX_AHEAD,
            count: ArrivalRing::<1>::MAX_THREADS,
        };
        assert_eq!(Tag::decode(t.encode()), t);
    }

    #[test]
    fn the_first_arrival_records_and_the_others_read_it() {
        let ring = ArrivalRing::<2>::default();
        let g = ring.begin();
        for k in 0..3 * RING {
            assert_eq!(ring.arrive(g, k, 3, || [k, 1]), Arrival::First);
            assert_eq!(ring.arrive(g, k, 3, || [k, 2]), Arrival::Later([k, 1]));
            assert_eq!(ring.arrive(g, k, 3, || [k, 3]), Arrival::Later([k, 1]));
        }
        assert!(ring.overflow.lock().is_empty());
    }

    #[test]
    fn a_thread_rings_ahead_goes_through_the_overflow_map_and_back() {
        let ring = ArrivalRing::<1>::default();
        let g = ring.begin();
        let points = 3 * RING + 3;
        // Thread A runs every point before thread B arrives at any.
        for k in 0..points {
            assert_eq!(ring.arrive(g, k, 2, || [k]), Arrival::First, "point {k}");
        }
        assert_eq!(ring.overflow.lock().len() as u64, points - RING);
        for k in 0..points {
            assert_eq!(ring.arrive(g, k, 2, || [k + 100]), Arrival::Later([k]), "point {k}");
        }
        assert!(ring.overflow.lock().is_empty());
        // Both go on in step, through the ring again.
        for k in points..points + RING {
            assert_eq!(ring.arrive(g, k, 2, || [k]), Arrival::First);
            assert_eq!(ring.arrive(g, k, 2, || [0]), Arrival::Later([k]));
        }
        assert!(ring.overflow.lock().is_empty());
    }

    #[test]
    fn a_new_region_starts_afresh_after_one_a_mistake_stopped() {
        let ring = ArrivalRing::<1>::default();
        let g = ring.begin();
        for k in 0..2 * RING {
            ring.arrive(g, k, 2, || [k]);
        }
        let g2 = ring.begin();
        assert_ne!(g, g2);
        for k in 0..2 * RING {
            assert_eq!(ring.arrive(g2, k, 2, || [k + 7]), Arrival::First);
            assert_eq!(ring.arrive(g2, k, 2, || [0]), Arrival::Later([k + 7]));
        }
    }

    #[test]
    fn generations_wrap_without_a_stale_tag_passing_for_a_new_one() {
        let ring = ArrivalRing::<1>::default();
        ring.generation.store(GEN_MASK - 1, Ordering::Relaxed);
        let g = ring.begin();
        assert_eq!(g, GEN_MASK);
        assert_eq!(ring.arrive(g, 3, 2, || [1]), Arrival::First);
        let g = ring.begin();
        assert_eq!(g, 1);
        // Slot 3 held generation GEN_MASK's record; the new region's first arrival is first.
        assert_eq!(ring.arrive(g, 3, 2, || [2]), Arrival::First);
        assert_eq!(ring.arrive(g, 3, 2, || [0]), Arrival::Later([2]));
    }

    #[test]
    fn a_thread_too_far_ahead_is_told_the_ring_cannot_say() {
        let ring = ArrivalRing::<1>::default();
        let g = ring.begin();
        let limit = (MAX_AHEAD + 1) * RING;
        for k in 0..limit {
            assert_ne!(ring.arrive(g, k, 2, || [k]), Arrival::Unknown, "point {k}");
        }
        assert_eq!(ring.arrive(g, limit, 2, || [0]), Arrival::Unknown);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    /// One member meeting `points` points, each record naming its point and the member.
    fn member(ring: &ArrivalRing<2>, generation: u64, me: u64, points: u64, n: u32) -> u32 {
        let mut first = 0;
        for k in 0..points {
            match ring.arrive(generation, k, n, || [k, me]) {
                Arrival::First => first += 1,
                Arrival::Later([p, who]) => {
                    assert_eq!(p, k, "point {k} read point {p}'s record");
                    assert_ne!(who, me, "point {k}: its own record read as another's");
                }
                Arrival::Unknown => panic!("point {k} unknown"),
            }
        }
        first
    }

    fn run(points: u64, preemptions: usize) {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(preemptions);
        model.check(move || {
            let ring = Arc::new(ArrivalRing::<2>::default());
            let g = ring.begin();
            let t = {
                let ring = ring.clone();
                loom::thread::spawn(move || member(&ring, g, 1, points, 2))
            };
            let firsts = member(&ring, g, 0, points, 2) + t.join().unwrap();
            assert_eq!(firsts as u64, points, "each point has exactly one first arrival");
            assert!(ring.overflow.lock().is_empty(), "a diverted point left in the map");
            for (j, slot) in ring.slots.iter().enumerate() {
                let t = Tag::decode(slot.tag.load(Ordering::Relaxed));
                let used = (j as u64) < points;
                assert!(!used || (t.phase, t.ahead, t.count) == (FREE, 0, 0), "slot {j} left {t:?}");
            }
        });
    }

    /// Two members through the ring's first points: one record per point, read as its own.
    #[test]
    fn two_members_in_the_ring() {
        run(2, 3);
    }

    /// Two members, two rings of points: a member a ring or two ahead diverts through the
    /// overflow map, and the slot comes back to the ring.
    #[test]
    fn two_members_past_a_ring() {
        run(2 * RING + 1, 3);
    }
}
