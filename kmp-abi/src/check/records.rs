//! A team's work records, in the shape of CIVL's OpenMP model: the constructs every thread of
//! the team must meet, in the order they meet them. The first thread to reach its `n`th
//! construct records it for the others; each later thread's `n`th arrival is compared with
//! that record, and the record goes once every thread has arrived. CIVL's queue per thread is
//! the runtime's ring of arrivals ([`ArrivalRing`]): a thread's place in it is its count of
//! arrivals, and a record is read without a lock (but for a thread 8 constructs ahead of
//! another: the ring then keeps the record in a map under a mutex).

use oxiomp_instrument::{Meet, MeetKind};
use oxiomp_runtime::{Arrival, ArrivalRing};

use super::describe::{Place, same_place};

/// The `chunk` of a gcc `single`'s [`Meet`] that the thread's next meeting, a barrier, joins
/// (0: another meeting came next, or none). gcc's code ends a `single` with a plain
/// `GOMP_barrier` call, as it would a `single nowait` followed by an explicit barrier, and
/// passes no `ident_t` (its barriers are not told apart by place either), so the pair is one
/// arrival: compared as a whole, it costs the team one cache-line round trip where two would
/// cost two, and a thread that meets the `single` without the barrier after it, or the
/// barrier without the `single`, still differs from the others.
pub(super) const THEN_BARRIER: i64 = 1;

/// The words of a [`Record`] in the ring.
const WORDS: usize = 10;

/// One construct as its first thread reached it.
#[derive(Clone, Copy)]
pub(super) struct Record {
    pub(super) meet: Meet,
    /// Where the first thread called from, when the construct's `ident_t` does not say.
    pub(super) place: Place,
    /// The first thread's number in the team.
    pub(super) first: u32,
}

const KINDS: [MeetKind; 6] = [
    MeetKind::Loop,
    MeetKind::Sections,
    MeetKind::Single,
    MeetKind::Barrier,
    MeetKind::RegionEnd,
    MeetKind::Ordered,
];

impl Record {
    fn words(&self) -> [u64; WORDS] {
        let m = &self.meet;
        let kind = KINDS.iter().position(|k| *k == m.kind).unwrap_or(0) as u64;
        [
            kind | (self.first as u64) << 8,
            m.ident as u64,
            m.lower as u64,
            m.upper as u64,
            m.stride as u64,
            m.sched as u32 as u64,
            m.chunk as u64,
            m.code as u64,
            self.place.code as u64,
            self.place.region as u64,
        ]
    }

    fn from_words(w: [u64; WORDS]) -> Record {
        Record {
            meet: Meet {
                kind: KINDS[(w[0] & 0xff) as usize % KINDS.len()],
                ident: w[1] as usize,
                lower: w[2] as i64,
                upper: w[3] as i64,
                stride: w[4] as i64,
                sched: w[5] as u32 as i32,
                chunk: w[6] as i64,
                code: w[7] as usize,
            },
            place: Place { code: w[8] as usize, region: w[9] as usize },
            first: (w[0] >> 8) as u32,
        }
    }
}

/// A mismatch between one thread's arrival and the record of another's.
pub(super) struct Mismatch {
    pub(super) record: Record,
    /// What differs beyond the construct itself (`None`: another construct).
    pub(super) differs: Option<&'static str>,
}

/// A team's records. Halting its ring stops the checks of the region: a mistake was
/// reported (or the region cancelled, or a thread ran too far ahead of another for the ring).
#[derive(Default)]
pub(super) struct Records {
    ring: ArrivalRing<WORDS>,
}

impl Records {
    /// A region of the team begins (on its primary thread, before any member runs): returns
    /// its generation, which the members pass to [`Records::arrive`].
    pub(super) fn begin(&self) -> u64 {
        self.ring.begin()
    }

    /// The generation of the region the team runs.
    pub(super) fn generation(&self) -> u64 {
        self.ring.generation()
    }

    /// Whether the team's region is checked no further.
    pub(super) fn stopped(&self) -> bool {
        self.ring.halted()
    }

    /// Stops checking the region; false if it was already stopped.
    pub(super) fn stop(&self) -> bool {
        self.ring.halt()
    }

    /// Thread `tid` of `nthreads` arrives at `meet`, its `seq`th construct in region
    /// `generation` (from 0); `place` names where it called from when asked. A mismatch with
    /// the record another thread made is returned.
    pub(super) fn arrive(
        &self,
        generation: u64,
        (tid, nthreads): (u32, u32),
        seq: u64,
        meet: Meet,
        place: impl FnOnce() -> Place,
    ) -> Option<Mismatch> {
        if nthreads <= 1 || nthreads > ArrivalRing::<WORDS>::MAX_THREADS || self.stopped() {
            return None;
        }
        let mine = || Record { meet, place: place(), first: tid }.words();
        match self.ring.arrive(generation, seq, nthreads, mine) {
            Arrival::First => None,
            Arrival::Later(words) => compare(&Record::from_words(words), &meet),
            Arrival::Unknown => {
                self.stop();
                None
            }
        }
    }
}

/// How `meet` differs from `record`, if it does.
fn compare(record: &Record, meet: &Meet) -> Option<Mismatch> {
    let r = &record.meet;
    let other = |differs| Some(Mismatch { record: *record, differs });
    if r.kind != meet.kind || !same_place(r, meet) {
        return other(None);
    }
    match meet.kind {
        MeetKind::Loop => {
            if (r.lower, r.upper, r.stride) != (meet.lower, meet.upper, meet.stride) {
                other(Some("the loop bounds differ"))
            } else if r.sched != meet.sched {
                other(Some("the schedules differ"))
            } else if r.chunk != meet.chunk {
                other(Some("the chunk sizes differ"))
            } else {
                None
            }
        }
        MeetKind::Sections if r.upper != meet.upper => other(Some("the section counts differ")),
        MeetKind::Single if r.chunk != meet.chunk => {
            other(Some("one of the two threads reached a barrier right after it, the other did not"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn for_loop(upper: i64) -> Meet {
        Meet { lower: 0, upper, stride: 1, sched: 34, ..Meet::plain(MeetKind::Loop, 0) }
    }

    #[test]
    fn records_round_trip_through_the_ring_words() {
        let r = Record {
            meet: Meet {
                lower: -5,
                upper: i64::MAX,
                stride: -2,
                sched: -1,
                chunk: 7,
                code: 9,
                ..for_loop(0)
            },
            place: Place { code: 11, region: 13 },
            first: 15,
        };
        let back = Record::from_words(r.words());
        assert_eq!(back.words(), r.words());
        assert_eq!(
            (back.meet.kind, back.meet.sched, back.first, back.place.region),
            (MeetKind::Loop, -1, 15, 13)
        );
        for k in KINDS {
            assert_eq!(Record::from_words(Record { meet: Meet::plain(k, 1), ..r }.words()).meet.kind, k);
        }
    }

    #[test]
    fn the_same_constructs_in_the_same_order_pass() {
        let t = Records::default();
        let g = t.begin();
        let seq = [for_loop(99), Meet::plain(MeetKind::Barrier, 0), Meet::plain(MeetKind::RegionEnd, 0)];
        for tid in 0..3 {
            for (n, m) in seq.iter().enumerate() {
                assert!(t.arrive(g, (tid, 3), n as u64, *m, Place::default).is_none());
            }
        }
    }

    #[test]
    fn another_construct_or_other_bounds_are_mismatches() {
        let t = Records::default();
        let g = t.begin();
        assert!(t.arrive(g, (0, 2), 0, for_loop(99), Place::default).is_none());
        let m = t.arrive(g, (1, 2), 0, Meet::plain(MeetKind::Single, 0), Place::default).unwrap();
        assert!(m.differs.is_none() && m.record.first == 0 && m.record.meet.kind == MeetKind::Loop);

        let g = t.begin();
        assert!(t.arrive(g, (1, 2), 0, for_loop(99), Place::default).is_none());
        let m = t.arrive(g, (0, 2), 0, for_loop(49), Place::default).unwrap();
        assert_eq!(m.differs, Some("the loop bounds differ"));
        assert_eq!(m.record.first, 1);
    }

    #[test]
    fn a_gcc_single_with_its_barrier_differs_from_one_without() {
        let t = Records::default();
        let g = t.begin();
        let single = Meet::plain(MeetKind::Single, 0);
        let with_barrier = Meet { chunk: THEN_BARRIER, ..single };
        assert!(t.arrive(g, (0, 3), 0, with_barrier, Place::default).is_none());
        assert!(t.arrive(g, (1, 3), 0, with_barrier, Place::default).is_none());
        let m = t.arrive(g, (2, 3), 0, single, Place::default).unwrap();
        assert_eq!(
            m.differs,
            Some("one of the two threads reached a barrier right after it, the other did not")
        );
        assert_eq!((m.record.first, m.record.meet.chunk), (0, THEN_BARRIER));
    }

    #[test]
    fn a_thread_ahead_is_compared_when_the_others_catch_up() {
        let t = Records::default();
        let g = t.begin();
        let b = Meet::plain(MeetKind::Barrier, 0);
        // Thread 0 runs far ahead (through the ring's slow path), then thread 1 skips a loop.
        for n in 0..20 {
            assert!(t.arrive(g, (0, 2), n, for_loop(n as i64), Place::default).is_none());
        }
        assert!(t.arrive(g, (0, 2), 20, b, Place::default).is_none());
        for n in 0..19 {
            assert!(t.arrive(g, (1, 2), n, for_loop(n as i64), Place::default).is_none());
        }
        let m = t.arrive(g, (1, 2), 19, b, Place::default).unwrap();
        assert_eq!(m.record.meet.upper, 19);
    }

    #[test]
    fn a_stopped_team_or_a_lone_thread_checks_nothing() {
        let t = Records::default();
        let g = t.begin();
        assert!(t.stop() && !t.stop());
        assert!(t.arrive(g, (0, 2), 0, for_loop(9), Place::default).is_none());
        assert!(t.arrive(g, (1, 2), 0, Meet::plain(MeetKind::Single, 0), Place::default).is_none());
        let g = t.begin();
        assert!(!t.stopped());
        assert!(t.arrive(g, (0, 1), 0, for_loop(9), Place::default).is_none());
        assert!(t.arrive(g, (0, 1), 0, Meet::plain(MeetKind::Single, 0), Place::default).is_none());
    }
}
