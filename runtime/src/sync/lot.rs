//! A parking lot with a place per thread: threads park on a word of their own, and a notifier
//! wakes exactly the threads an event concerns (one *idle* thread for a new piece of work, the
//! threads waiting under a given *key* for a condition keyed by it), never a herd. The task
//! pool parks its members here (`task/pool.rs`: who parks with which key, and who wakes whom).
//! Model-checked with loom (`loom_tests` below).
//!
//! # Protocol
//! ```text
//! parker (place i, key k)                       notifier (after changing the state)
//! P0 e = word[i].load()                         N1 fence(SeqCst)
//! P1 key[i] = k; parked += 1                    N2 if parked.load() > 0:
//! P2 mask.fetch_or(bit i) (Release)                  for the places the event concerns:
//! P3 fence(SeqCst)                                     claim: mask.fetch_and(!bit) had bit
//! P4 if ready(): leave                                 word += 1; futex_wake(word)
//! P5 futex_wait(word[i], e)
//! P6 mask.fetch_and(!bit); parked -= 1
//! ```
//! The mask is `idle` for a parker that can take any work, `keyed` for one that can take only
//! some (a thread waiting in a task, under the scheduling constraint).
//!
//! # No lost wake-up
//! As in `sleep.rs`: the two fences are totally ordered. If the parker's comes first, its bit
//! (and `parked`) is visible to the notifier's loads after N1, and the key it stored before
//! the Release `fetch_or` is visible through the Acquire load of the mask; the notifier
//! claims the bit and bumps the word, which the parker read (P0) before announcing itself,
//! so `futex_wait` returns at once or is woken. If the notifier's fence comes first, the
//! parker's `ready` sees the new state and does not sleep.
//!
//! A claim is one `fetch_and` on the mask: of several notifiers, exactly one sees the bit set
//! and wakes the place; the others look for another. That is what lets `wake_one` wake one
//! thread per piece of work: a thread woken and not yet running is no longer in the mask, so
//! the next piece of work wakes another. A claim may race with the parker leaving on its own
//! (P4, or a spurious return): then the word's bump makes the parker's next `futex_wait`
//! return once, spuriously, and the caller's loop re-checks; nothing else is affected.
//!
//! The notifier's common case (nobody parked) is one fence and one load, as in `sleep.rs`.

// Under loom the task engine is not built: only the models use this module.
#![cfg_attr(loom, allow(dead_code))]

use crossbeam_utils::CachePadded;

use super::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};
use super::futex;

/// One thread's place.
struct Place {
    /// The futex word: bumped by every wake of this place.
    word: AtomicU32,
    /// What the parked thread waits for (0: nothing in particular), while its bit is set.
    key: AtomicUsize,
    /// What work it can take, for [`Lot::wake_keyed_if`] (the task pool: the address and the
    /// depth of the task the thread waits in).
    tag: AtomicUsize,
    rank: AtomicU32,
}

/// Who parks: the place, what it waits for, and what it can take.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Parker {
    pub(crate) place: usize,
    /// The key of what it waits for ([`Lot::wake_key`]).
    pub(crate) key: usize,
    pub(crate) takes: Takes,
    /// For [`Lot::wake_keyed_if`]'s test.
    pub(crate) tag: usize,
    pub(crate) rank: u32,
}

/// A thread announced in the lot and not parked yet ([`Lot::announce`]).
#[must_use]
pub(crate) struct Announced {
    who: Parker,
    epoch: u32,
}

/// Places for a fixed number of threads, numbered from 0.
pub(crate) struct Lot {
    places: Box<[CachePadded<Place>]>,
    /// Places parked that can take any work, a bit each.
    idle: Box<[AtomicU64]>,
    /// Places parked that can take only some work (or none): woken by their key.
    keyed: Box<[AtomicU64]>,
    /// Threads between P1 and P6.
    parked: CachePadded<AtomicU32>,
}

fn bit(place: usize) -> u64 {
    1 << (place % 64)
}

/// Which threads a parker can be woken for besides its key.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Takes {
    /// Any new work ([`Lot::wake_one`]).
    Any,
    /// Only some work: woken by its key, by [`Lot::wake_all`], and by [`Lot::wake_one`] only
    /// when that is allowed to fall back to such threads.
    Some,
}

impl Lot {
    pub(crate) fn new(n: usize) -> Lot {
        let n = n.max(1);
        let words = n.div_ceil(64);
        let place = || {
            CachePadded::new(Place {
                word: AtomicU32::new(0),
                key: AtomicUsize::new(0),
                tag: AtomicUsize::new(0),
                rank: AtomicU32::new(0),
            })
        };
        Lot {
            places: (0..n).map(|_| place()).collect(),
            idle: (0..words).map(|_| AtomicU64::new(0)).collect(),
            keyed: (0..words).map(|_| AtomicU64::new(0)).collect(),
            parked: CachePadded::new(AtomicU32::new(0)),
        }
    }

    /// Parks until woken, unless `ready` holds once the thread is announced (P0-P6). May
    /// return spuriously: the caller re-checks its condition. One thread per place at a time.
    pub(crate) fn park(&self, who: Parker, ready: &dyn Fn() -> bool) {
        let a = self.announce(who);
        if ready() {
            self.leave(a);
        } else {
            self.sleep(a);
        }
    }

    /// P0-P3: from here on, a notifier whose event concerns the thread wakes it (its next
    /// [`sleep`](Self::sleep) returns at once). The caller then looks at what it waits for
    /// and either [`leave`](Self::leave)s or sleeps.
    pub(crate) fn announce(&self, who: Parker) -> Announced {
        let p = &self.places[who.place];
        let epoch = p.word.load(Ordering::Relaxed);
        // Relaxed: published by the Release `fetch_or` below.
        p.key.store(who.key, Ordering::Relaxed);
        p.tag.store(who.tag, Ordering::Relaxed);
        p.rank.store(who.rank, Ordering::Relaxed);
        // Relaxed + fence: the count only lets notifiers skip their slow path (module docs).
        self.parked.fetch_add(1, Ordering::Relaxed);
        self.mask(who.takes, who.place).fetch_or(bit(who.place), Ordering::Release);
        fence(Ordering::SeqCst);
        Announced { who, epoch }
    }

    /// P5-P6: sleeps until woken (or spuriously), then leaves.
    pub(crate) fn sleep(&self, a: Announced) {
        futex::wait(&self.places[a.who.place].word, a.epoch);
        self.leave(a);
    }

    /// P6: no longer announced.
    pub(crate) fn leave(&self, a: Announced) {
        // Relaxed: a notifier that still sees the bit claims a place that left, which costs
        // one spurious return of its next park.
        self.mask(a.who.takes, a.who.place).fetch_and(!bit(a.who.place), Ordering::Relaxed);
        self.parked.fetch_sub(1, Ordering::Relaxed);
    }

    /// Whether any thread may be parked (N2's first load), after the caller's SeqCst fence.
    #[inline]
    pub(crate) fn any_parked(&self) -> bool {
        // Relaxed: ordered by the caller's fence, which pairs with the parker's (module docs).
        self.parked.load(Ordering::Relaxed) != 0
    }

    /// Wakes one parked thread that takes any work; failing that, when `or_some`, one that
    /// takes some. For a new piece of work, after the caller's fence. True if one was woken.
    #[cold]
    pub(crate) fn wake_one(&self, or_some: bool) -> bool {
        let masks: &[&[AtomicU64]] = if or_some { &[&self.idle, &self.keyed] } else { &[&self.idle] };
        for mask in masks {
            for (w, word) in mask.iter().enumerate() {
                // Acquire: pairs with the parker's Release `fetch_or`.
                let mut m = word.load(Ordering::Acquire);
                while m != 0 {
                    let bit = m & m.wrapping_neg();
                    let was = word.fetch_and(!bit, Ordering::AcqRel);
                    if was & bit != 0 {
                        self.kick(w * 64 + bit.trailing_zeros() as usize);
                        return true;
                    }
                    m = was & !bit;
                }
            }
        }
        false
    }

    /// Wakes every parked thread that takes only some work and waits under `key`; after the
    /// caller's fence.
    #[cold]
    pub(crate) fn wake_key(&self, key: usize) {
        self.wake_keyed_if(|k, _, _| k == key);
    }

    /// Wakes every parked thread that takes only some work and for whose key, tag and rank
    /// `concerned` holds; after the caller's fence. (The test may see a place that left and
    /// was announced again since: that wakes it spuriously at worst.)
    #[cold]
    pub(crate) fn wake_keyed_if(&self, concerned: impl Fn(usize, usize, u32) -> bool) {
        for (w, word) in self.keyed.iter().enumerate() {
            // Acquire: pairs with the parker's Release `fetch_or` (its key and tag are
            // visible).
            let mut m = word.load(Ordering::Acquire);
            while m != 0 {
                let bit = m & m.wrapping_neg();
                m &= !bit;
                let i = w * 64 + bit.trailing_zeros() as usize;
                let p = &self.places[i];
                // Relaxed: see the Acquire above.
                let (k, t, r) = (
                    p.key.load(Ordering::Relaxed),
                    p.tag.load(Ordering::Relaxed),
                    p.rank.load(Ordering::Relaxed),
                );
                if concerned(k, t, r) && word.fetch_and(!bit, Ordering::AcqRel) & bit != 0 {
                    self.kick(i);
                }
            }
        }
    }

    /// Wakes every parked thread that takes any work; after the caller's fence.
    #[cold]
    pub(crate) fn wake_idle(&self) {
        Self::wake_mask(&self.idle, |i| self.kick(i));
    }

    /// Wakes every parked thread; after the caller's fence.
    #[cold]
    pub(crate) fn wake_all(&self) {
        Self::wake_mask(&self.idle, |i| self.kick(i));
        Self::wake_mask(&self.keyed, |i| self.kick(i));
    }

    fn wake_mask(mask: &[AtomicU64], mut kick: impl FnMut(usize)) {
        for (w, word) in mask.iter().enumerate() {
            // Relaxed first look: the claim below is the one that counts.
            if word.load(Ordering::Relaxed) == 0 {
                continue;
            }
            // AcqRel: claims every place set (pairs with the parkers' Release).
            let mut m = word.swap(0, Ordering::AcqRel);
            while m != 0 {
                let bit = m & m.wrapping_neg();
                m &= !bit;
                kick(w * 64 + bit.trailing_zeros() as usize);
            }
        }
    }

    fn mask(&self, takes: Takes, i: usize) -> &AtomicU64 {
        debug_assert!(i < self.places.len());
        match takes {
            Takes::Any => &self.idle[i / 64],
            Takes::Some => &self.keyed[i / 64],
        }
    }

    /// Wakes place `i`, claimed by the caller.
    fn kick(&self, i: usize) {
        let p = &self.places[i];
        p.word.fetch_add(1, Ordering::Relaxed); // Relaxed: the futex word only.
        futex::wake_all(&p.word);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicU32 as StdU32;
    use std::sync::atomic::Ordering::Relaxed;

    /// Parks place `i` until `flag` is non-zero.
    fn park_until(lot: &Lot, i: usize, key: usize, takes: Takes, flag: &StdU32) {
        let who = Parker { place: i, key, takes, tag: key, rank: 0 };
        while flag.load(Relaxed) == 0 {
            lot.park(who, &|| flag.load(Relaxed) != 0);
        }
    }

    /// Waits until `n` threads are parked (announced) in `lot`.
    fn until_parked(lot: &Lot, n: u32) {
        while lot.parked.load(Relaxed) != n {
            std::thread::yield_now();
        }
    }

    /// A key wakes its own waiters and no other; `wake_one` wakes one idle thread per call,
    /// and keyed threads only when allowed to fall back on them; `wake_all` wakes the rest.
    #[test]
    fn wakes_reach_only_the_threads_they_concern() {
        for _ in 0..50 {
            // Places 0-1 idle, 2 keyed by 7, 3 keyed by 9; each with its own flag.
            let s = Arc::new((Lot::new(4), [StdU32::new(0), StdU32::new(0), StdU32::new(0), StdU32::new(0)]));
            let spec = [(0, Takes::Any), (0, Takes::Any), (7, Takes::Some), (9, Takes::Some)];
            let hs: Vec<_> = spec
                .iter()
                .enumerate()
                .map(|(i, &(key, takes))| {
                    let s = s.clone();
                    std::thread::spawn(move || park_until(&s.0, i, key, takes, &s.1[i]))
                })
                .collect();
            until_parked(&s.0, 4);
            // Every flag set: whoever is woken leaves; whoever is not stays parked.
            for f in &s.1 {
                f.store(1, Relaxed);
            }
            fence(Ordering::SeqCst);
            s.0.wake_key(7);
            until_parked(&s.0, 3);
            assert!(s.0.keyed[0].load(Relaxed) & 0b1000 != 0, "key 9 was not woken by key 7");
            assert!(s.0.wake_one(false));
            assert!(s.0.wake_one(false));
            assert!(!s.0.wake_one(false), "a third idle thread was woken");
            until_parked(&s.0, 1);
            assert!(s.0.wake_one(true), "falls back on the keyed thread");
            for h in hs {
                h.join().unwrap();
            }
            assert_eq!(s.0.parked.load(Relaxed), 0);
            assert_eq!((s.0.idle[0].load(Relaxed), s.0.keyed[0].load(Relaxed)), (0, 0));
        }
    }

    /// More places than one mask word holds: every one is woken by `wake_all`.
    #[test]
    fn wake_all_reaches_every_place() {
        let n = 70;
        let s = Arc::new((Lot::new(n), StdU32::new(0)));
        let hs: Vec<_> = (0..n)
            .map(|i| {
                let s = s.clone();
                let takes = if i % 2 == 0 { Takes::Any } else { Takes::Some };
                std::thread::spawn(move || park_until(&s.0, i, i, takes, &s.1))
            })
            .collect();
        until_parked(&s.0, n as u32);
        s.1.store(1, Relaxed);
        fence(Ordering::SeqCst);
        s.0.wake_all();
        for h in hs {
            h.join().unwrap();
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    /// A keyed waiter and the notifier of its key: the waiter never sleeps through the change
    /// (a lost wake-up leaves the model deadlocked, which loom reports).
    #[test]
    fn keyed_waiter_is_woken() {
        loom::model(|| {
            let s = Arc::new((Lot::new(1), AtomicU32::new(0)));
            let n = s.clone();
            let t = loom::thread::spawn(move || {
                n.1.store(1, Ordering::Relaxed);
                fence(Ordering::SeqCst);
                if n.0.any_parked() {
                    n.0.wake_key(5);
                }
            });
            let who = Parker { place: 0, key: 5, takes: Takes::Some, tag: 0, rank: 0 };
            while s.1.load(Ordering::Relaxed) == 0 {
                s.0.park(who, &|| s.1.load(Ordering::Relaxed) != 0);
            }
            t.join().unwrap();
        });
    }

    /// A thread announces itself, then looks for an item it may take (the task pool's waiter
    /// in a task on an oversubscribed team); another thread, meanwhile, queues such an item
    /// and wakes the threads it concerns. The waiter never sleeps with the item queued; a
    /// thread the item does not concern (another tag) is not woken by it.
    #[test]
    fn announced_before_looking_is_woken_by_what_it_may_take() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            // The queue: the tag of the item queued (0: empty).
            let s = Arc::new((Lot::new(2), loom::sync::Mutex::new(0usize), AtomicU32::new(0)));
            let q = s.clone();
            let t = loom::thread::spawn(move || {
                *q.1.lock().unwrap() = 7;
                fence(Ordering::SeqCst);
                if q.0.any_parked() {
                    q.0.wake_keyed_if(|_, tag, _| tag == 7);
                }
            });
            // Place 1: a thread that may take only items tagged 9, asleep until told to go.
            let o = s.clone();
            let other = loom::thread::spawn(move || {
                let who = Parker { place: 1, key: 0, takes: Takes::Some, tag: 9, rank: 0 };
                while o.2.load(Ordering::Relaxed) == 0 {
                    o.0.park(who, &|| o.2.load(Ordering::Relaxed) != 0);
                }
            });
            let who = Parker { place: 0, key: 0, takes: Takes::Some, tag: 7, rank: 0 };
            loop {
                let a = s.0.announce(who);
                if std::mem::take(&mut *s.1.lock().unwrap()) == 7 {
                    s.0.leave(a);
                    break;
                }
                s.0.sleep(a);
            }
            t.join().unwrap();
            s.2.store(1, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            s.0.wake_all();
            other.join().unwrap();
        });
    }

    /// Two idle threads, two pieces of work each announced by one `wake_one`: each thread
    /// takes one piece, however the claims and parks interleave (a wake spent on a thread
    /// that was leaving anyway, or two wakes landing on one thread, would leave a piece
    /// untaken and its thread asleep: a deadlock).
    #[test]
    fn one_wake_per_piece_of_work_suffices() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            // The work: a count of pieces available.
            let s = Arc::new((Lot::new(2), AtomicU32::new(0)));
            let take = |s: &(Lot, AtomicU32)| {
                let mut v = s.1.load(Ordering::Relaxed);
                while v != 0 {
                    match s.1.compare_exchange(v, v - 1, Ordering::Relaxed, Ordering::Relaxed) {
                        Ok(_) => return true,
                        Err(x) => v = x,
                    }
                }
                false
            };
            let workers: Vec<_> = (0..2)
                .map(|i| {
                    let s = s.clone();
                    loom::thread::spawn(move || {
                        let who = Parker { place: i, key: 0, takes: Takes::Any, tag: 0, rank: 0 };
                        while !take(&s) {
                            s.0.park(who, &|| s.1.load(Ordering::Relaxed) != 0);
                        }
                    })
                })
                .collect();
            for _ in 0..2 {
                s.1.fetch_add(1, Ordering::Relaxed);
                fence(Ordering::SeqCst);
                if s.0.any_parked() {
                    s.0.wake_one(false);
                }
            }
            for w in workers {
                w.join().unwrap();
            }
        });
    }
}
