//! A team's work records, in the shape of CIVL's OpenMP model: the constructs every thread of
//! the team must meet, in the order they meet them. The first thread to reach its `n`th
//! construct records it for the others; each later thread's `n`th arrival is compared with
//! that record, and the record goes once every thread has arrived. A queue of the records some
//! thread has not reached yet stands for CIVL's queue per thread: a thread's place in it is
//! its count of arrivals.

use std::collections::VecDeque;

use oxiomp_instrument::{Meet, MeetKind};

use super::describe::{Place, same_place};

/// One construct as its first thread reached it.
#[derive(Clone, Copy)]
pub(super) struct Record {
    pub(super) meet: Meet,
    /// Where the first thread called from, when the construct's `ident_t` does not say.
    pub(super) place: Place,
    /// The first thread's number in the team.
    pub(super) first: u32,
    /// How many threads have arrived.
    arrived: u32,
}

/// A mismatch between one thread's arrival and the record of another's.
pub(super) struct Mismatch {
    pub(super) record: Record,
    /// What differs beyond the construct itself (`None`: another construct).
    pub(super) differs: Option<&'static str>,
}

/// A team's records in one region.
#[derive(Default)]
pub(super) struct Records {
    /// The team's size (0 until a member begins).
    pub(super) nthreads: u32,
    /// The arrival number of the queue's first record.
    base: u64,
    queue: VecDeque<Record>,
    /// A mistake was reported (or the region cancelled): nothing more is checked in it.
    pub(super) stopped: bool,
}

impl Records {
    /// The region begins afresh (the team's last region has joined: no thread is in it).
    pub(super) fn reset(&mut self) {
        self.nthreads = 0;
        self.base = 0;
        self.queue.clear();
        self.stopped = false;
    }

    /// Thread `tid` arrives at `meet`, its `seq`th construct in the region (from 0); `place`
    /// names where it called from when asked. A mismatch with the record another thread made
    /// is returned.
    pub(super) fn arrive(
        &mut self,
        tid: u32,
        seq: u64,
        meet: Meet,
        place: impl FnOnce() -> Place,
    ) -> Option<Mismatch> {
        if self.stopped || self.nthreads <= 1 || seq < self.base {
            return None;
        }
        let i = (seq - self.base) as usize;
        if i == self.queue.len() {
            self.queue.push_back(Record { meet, place: place(), first: tid, arrived: 1 });
        } else {
            let r = self.queue.get_mut(i)?;
            r.arrived += 1;
            let record = *r;
            if let Some(m) = compare(&record, &meet) {
                return Some(m);
            }
        }
        while self.queue.front().is_some_and(|r| r.arrived >= self.nthreads) {
            self.queue.pop_front();
            self.base += 1;
        }
        None
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
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn for_loop(upper: i64) -> Meet {
        Meet { lower: 0, upper, stride: 1, sched: 34, ..Meet::plain(MeetKind::Loop, 0) }
    }

    fn team(n: u32) -> Records {
        Records { nthreads: n, ..Records::default() }
    }

    #[test]
    fn the_same_constructs_in_the_same_order_pass_and_are_dropped() {
        let mut t = team(3);
        let seq = [for_loop(99), Meet::plain(MeetKind::Barrier, 0), Meet::plain(MeetKind::RegionEnd, 0)];
        for tid in 0..3 {
            for (n, m) in seq.iter().enumerate() {
                assert!(t.arrive(tid, n as u64, *m, Place::default).is_none());
            }
        }
        assert!(t.queue.is_empty());
        assert_eq!(t.base, 3);
    }

    #[test]
    fn another_construct_or_other_bounds_are_mismatches() {
        let mut t = team(2);
        assert!(t.arrive(0, 0, for_loop(99), Place::default).is_none());
        let m = t.arrive(1, 0, Meet::plain(MeetKind::Single, 0), Place::default).unwrap();
        assert!(m.differs.is_none() && m.record.first == 0 && m.record.meet.kind == MeetKind::Loop);

        let mut t = team(2);
        assert!(t.arrive(1, 0, for_loop(99), Place::default).is_none());
        let m = t.arrive(0, 0, for_loop(49), Place::default).unwrap();
        assert_eq!(m.differs, Some("the loop bounds differ"));
        assert_eq!(m.record.first, 1);
    }

    #[test]
    fn a_thread_ahead_is_compared_when_the_others_catch_up() {
        let mut t = team(2);
        let b = Meet::plain(MeetKind::Barrier, 0);
        assert!(t.arrive(0, 0, for_loop(9), Place::default).is_none());
        assert!(t.arrive(0, 1, for_loop(19), Place::default).is_none());
        assert!(t.arrive(0, 2, b, Place::default).is_none());
        assert!(t.arrive(1, 0, for_loop(9), Place::default).is_none());
        // Thread 1 skips the second loop.
        let m = t.arrive(1, 1, b, Place::default).unwrap();
        assert_eq!(m.record.meet.upper, 19);
    }

    #[test]
    fn a_stopped_team_or_a_lone_thread_checks_nothing() {
        let mut t = team(2);
        t.stopped = true;
        assert!(t.arrive(0, 0, for_loop(9), Place::default).is_none());
        assert!(t.arrive(1, 0, Meet::plain(MeetKind::Single, 0), Place::default).is_none());
        let mut t = team(1);
        assert!(t.arrive(0, 0, for_loop(9), Place::default).is_none());
        assert!(t.queue.is_empty());
    }
}
