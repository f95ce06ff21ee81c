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
//! W1 sleepers.fetch_add(1)                 S1 value.store(new)           Release
//!    fence(SeqCst)                            fence(SeqCst)
//! W2 v = value.load()                      S2 if sleepers.load() != 0
//! W3 if !reached(v) futex_wait(value, v)   S3     futex_wake(value)
//! W4 sleepers.fetch_sub(1)
//! ```
//! No lost wake-up (the store-buffering pattern, closed by two SeqCst fences): the fences are
//! totally ordered. If the waiter's fence comes first, W1 happens-before S2, so the writer sees
//! a sleeper and wakes the futex; the kernel's futex_wait checks `value == v` atomically with
//! queueing, so a wake-up that comes before the waiter is queued makes futex_wait return at
//! once. If the writer's fence comes first, S1 is visible to W2 and the waiter does not sleep.
//! Spurious returns are harmless: the waiter re-checks.
//!
//! The writer pays one store, one fence and one load of a line it usually holds; the futex
//! syscall only happens when somebody actually sleeps. (The loom model in this file checks the
//! protocol with a modelled futex; loom models fences but not a SeqCst total order of plain
//! accesses, which is why the protocol is written with fences.)

#[cfg(not(loom))]
use std::time::{Duration, Instant};

use super::atomic::{AtomicU32, Ordering, fence};
// The two policy knobs are hints read on every wait, not synchronisation: std atomics even
// under loom, outside the model.
use super::futex;
#[cfg(not(loom))]
use std::sync::atomic::{AtomicBool, AtomicU64};

/// How long a waiter spins before it parks, in nanoseconds (`KMP_BLOCKTIME`).
#[cfg(not(loom))]
static SPIN_NS: AtomicU64 = AtomicU64::new(200_000_000);
/// Whether more threads are busy in teams than there are CPUs (then waiting skips the pure spin).
#[cfg(not(loom))]
static OVERSUBSCRIBED: AtomicBool = AtomicBool::new(false);

/// The process-wide waiting policy (not under loom, whose models do not spin).
#[cfg(not(loom))]
pub struct WaitPolicy;

#[cfg(not(loom))]
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

/// Rounds of the pure-spin phase (2000 polls: about 2 to 5 microseconds).
#[cfg(not(loom))]
const PURE_ROUNDS: u32 = 2000 / Spin::POLLS;

/// The spin schedule of every waiter in the runtime (epochs, locks): the caller polls its
/// condition [`Spin::POLLS`] times per round and reports each fruitless round here.
///
/// Phase 1, a short pure spin (a few microseconds), is where a barrier, a join or a short
/// critical section between running threads completes; it is skipped when the runtime knows
/// it has more busy threads than CPUs (the thread we wait for may need our CPU). Phase 2, until
/// the block time (`KMP_BLOCKTIME`) is used up, yields the CPU between rounds, so that the
/// awaited thread runs even when the machine is oversubscribed by threads we do not know
/// about: every round when the runtime knows it is oversubscribed; otherwise every 8th round,
/// and further apart, up to every [`YIELD_GAP_MAX`]th, while the yields return at once
/// ([`YieldGap`]). A waiter on an idle machine thus costs almost no system time, and one on a
/// machine shared with other programs leaves them the CPU. Then the caller parks.
///
/// Two kinds of wait. A *team wait* ([`Spin::new`]: barriers, fork, join, reductions) waits
/// for whatever the other threads do meanwhile, for as long as the program makes them; with a
/// block time of 0 (`OMP_WAIT_POLICY=passive`, `KMP_BLOCKTIME=0`) it skips both phases and
/// parks at once (after one yield when oversubscribed). A *hand-over* ([`Spin::handover`]: a lock held by another
/// thread, the turn of an ordered region) waits for one thread that holds the turn and is
/// known to be inside a short region of code: parking there turns every hand-over into a
/// wake-up across CPUs, which costs more than the region itself, so a hand-over keeps phase 1
/// and polls and yields for at least [`HANDOVER_NS`] whatever the block time, then parks.
/// Yielding leaves the CPU to runnable threads, so polling costs little when threads
/// outnumber CPUs.
#[cfg(not(loom))]
pub(crate) struct Spin {
    rounds: u32,
    start: Option<Instant>,
    /// The least time phase 2 lasts: 0 for a team wait, [`HANDOVER_NS`] for a hand-over.
    floor_ns: u64,
    /// Polls per round ([`polls`](Self::polls)).
    polls: u32,
    /// When phase 2 yields if the runtime is not known to be oversubscribed: every 8th to
    /// every [`YIELD_GAP_MAX`]th round.
    yields: YieldGap<8, YIELD_GAP_MAX>,
}

/// The most rounds between yields of a waiter not known to be oversubscribed: about 50 to 100
/// microseconds of polling, so that a thread of another program that becomes runnable on this
/// CPU waits no longer than that for it.
#[cfg(not(loom))]
const YIELD_GAP_MAX: u32 = 256;

/// When a polling waiter that the runtime does not know to be oversubscribed yields: every
/// `gap`th round, the gap doubling from its least to its most while each yield returns at
/// once (no other thread wanted the CPU, so the system call bought nothing), and back to its
/// least after a yield that gave the CPU away (it took longer). The gap describes the
/// machine, not one wait: a waiter keeps it when it starts over.
#[cfg(not(loom))]
#[derive(Clone, Copy, Debug)]
pub(crate) struct YieldGap<const MIN: u32, const MAX: u32> {
    gap: u32,
}

#[cfg(not(loom))]
impl<const MIN: u32, const MAX: u32> YieldGap<MIN, MAX> {
    /// Yields every `MIN`th round at first, every `MAX`th at the widest (powers of two).
    pub(crate) const fn new() -> Self {
        assert!(MIN.is_power_of_two() && MAX.is_power_of_two() && MIN <= MAX);
        YieldGap { gap: MIN }
    }

    /// Whether the waiter yields at round `round`.
    #[inline]
    pub(crate) fn due(&self, round: u32) -> bool {
        round.is_multiple_of(self.gap)
    }

    /// Yields the CPU and widens or closes the gap by how long that took; returns the instant
    /// after the yield (the caller's look at the clock).
    pub(crate) fn yield_now(&mut self) -> Instant {
        let before = Instant::now();
        std::thread::yield_now();
        let after = Instant::now();
        self.yielded(after - before);
        after
    }

    /// A yield took `took`.
    fn yielded(&mut self, took: Duration) {
        self.gap = if took < IDLE_YIELD { (self.gap * 2).min(MAX) } else { MIN };
    }
}

#[cfg(not(loom))]
const IDLE_YIELD: Duration = Duration::from_micros(3);

/// The least time a hand-over polls and yields before it parks (see [`Spin`]): longer than
/// the critical sections and ordered regions whose hand-over it waits for, short enough that a
/// lock held for long is waited for asleep.
#[cfg(not(loom))]
pub(crate) const HANDOVER_NS: u64 = 100_000;

#[cfg(not(loom))]
impl Spin {
    /// Polls of the condition per round.
    pub(crate) const POLLS: u32 = 16;

    /// Phase 2's yields when not known to be oversubscribed.
    const YIELDS: YieldGap<8, YIELD_GAP_MAX> = YieldGap::new();

    /// A team wait's schedule.
    #[inline]
    pub(crate) fn new() -> Self {
        Spin { rounds: 0, start: None, floor_ns: 0, polls: Self::polls_now(), yields: Self::YIELDS }
    }

    /// A hand-over's schedule.
    #[inline]
    pub(crate) fn handover() -> Self {
        Spin { rounds: 0, start: None, floor_ns: HANDOVER_NS, polls: Self::polls_now(), yields: Self::YIELDS }
    }

    /// Polls of the condition per round for this wait: [`POLLS`](Self::POLLS), or one when the
    /// runtime has more busy threads than CPUs. Then every round ends in a yield, and spinning
    /// before it only delays the thread waited for, which may be waiting for this CPU (a round
    /// of 16 spin hints is about 0.3 us: on one CPU, a fork/join of 2 threads cost that much
    /// more than libomp's).
    #[inline]
    pub(crate) fn polls(&self) -> u32 {
        self.polls
    }

    #[inline]
    fn polls_now() -> u32 {
        if WaitPolicy::oversubscribed() { 1 } else { Self::POLLS }
    }

    /// The waiter found work to do: the budget starts over.
    pub(crate) fn restart(&mut self) {
        *self = Spin { rounds: 0, start: None, ..*self };
    }

    /// The waiter woke from parking without its condition: spin again, without phase 1.
    pub(crate) fn restart_parked(&mut self) {
        *self = Spin { rounds: PURE_ROUNDS, start: None, ..*self };
    }

    /// One round of polls found nothing; spins, yields or says (false) that the caller should
    /// park now.
    pub(crate) fn idle_round(&mut self) -> bool {
        // Relaxed: a hint (see `WaitPolicy::set_block_time`).
        self.idle_round_with(SPIN_NS.load(Ordering::Relaxed), WaitPolicy::oversubscribed())
    }

    /// `idle_round` under the block time `block_ns` and the oversubscription hint given.
    fn idle_round_with(&mut self, block_ns: u64, oversubscribed: bool) -> bool {
        // Saturating at a multiple of every yield gap: a waiter that has spun that long still
        // yields and looks at the clock every round.
        self.rounds = self.rounds.saturating_add(1).min(!(YIELD_GAP_MAX - 1));
        let budget = Duration::from_nanos(block_ns.max(self.floor_ns));
        if budget.is_zero() {
            // Passive: park now; but when threads outnumber CPUs, the thread waited for may be
            // waiting for this CPU: leave it the CPU once first (a yield is no wake-up away
            // from it, a park is), and park if the wait outlasts that.
            if oversubscribed && self.rounds == 1 {
                std::thread::yield_now();
                return true;
            }
            return false;
        }
        if self.rounds <= PURE_ROUNDS && !oversubscribed {
            return true;
        }
        let start = *self.start.get_or_insert_with(Instant::now);
        if oversubscribed {
            std::thread::yield_now();
            return start.elapsed() < budget;
        }
        if self.yields.due(self.rounds) {
            // The clock is read only around the yields (a read costs as much as a round of
            // polls here): the spin budget is kept to within one gap of rounds.
            return self.yields.yield_now() - start < budget;
        }
        true
    }
}

/// What a thread waiting on an epoch in a barrier does meanwhile, and where it sleeps.
pub(crate) trait Helper {
    /// Does one piece of useful work (runs a task); true if it did (the spin schedule then
    /// starts over).
    fn help(&mut self) -> bool;

    /// Parks where this helper's work arrives instead of on the epoch, until `ready` (the
    /// epoch reached) holds or work may be there; false, without parking, when there is no
    /// such place now (the waiter then parks on the epoch). A park issues a SeqCst fence
    /// before it looks at `ready` (the waiter's half of a sleep protocol, as `Sleep::park`).
    /// Whoever advances an epoch a waiter may have parked on this way calls
    /// [`published`](Self::published) after it.
    fn park(&mut self, _ready: &dyn Fn() -> bool) -> bool {
        false
    }

    /// Called after [`EpochFlag::set`] of an epoch others wait on with the same kind of
    /// helper: wakes those parked by [`park`](Self::park). `set`'s fence comes before it.
    fn published(&self) {}
}

/// A plain function as a helper that never parks elsewhere.
impl<F: FnMut() -> bool> Helper for F {
    #[inline]
    fn help(&mut self) -> bool {
        self()
    }
}

/// What a waiter records of the time it waits awake (spinning, yielding, or running tasks
/// between polls), as opposed to parked: `awake` when it starts waiting or wakes without its
/// condition, `asleep` when it parks. `open` says whether the awake state is open; the waiter
/// leaves it open when its condition holds (its caller ends it, with its own state).
#[cfg_attr(loom, allow(dead_code))] // the loom models' waits record nothing
pub(crate) trait WaitNote {
    fn awake(open: &mut bool);
    fn asleep(open: &mut bool);
}

/// Nothing recorded (an ordered hand-over, a reduction's tree).
pub(crate) struct Quiet;

impl WaitNote for Quiet {
    #[inline(always)]
    fn awake(_: &mut bool) {}
    #[inline(always)]
    fn asleep(_: &mut bool) {}
}

/// A barrier's waiter: "Barrier: spin wait", inside the barrier's own state.
pub(crate) struct BarrierSpin;

impl WaitNote for BarrierSpin {
    #[inline]
    fn awake(open: &mut bool) {
        if !std::mem::replace(open, true) {
            oxiomp_instrument::barrier_spin_wait_enter();
        }
    }
    #[inline]
    fn asleep(open: &mut bool) {
        if std::mem::replace(open, false) {
            oxiomp_instrument::barrier_spin_wait_exit();
        }
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
        // S1: Release publishes what the writer did before, for readers that Acquire the epoch.
        self.value.store(v, Ordering::Release);
        // S1/S2 of the protocol: the fence orders the store before the sleeper check.
        fence(Ordering::SeqCst);
        // Relaxed: the fence pairs with the waiter's fence (see the module docs).
        if self.sleepers.load(Ordering::Relaxed) != 0 {
            self.wake();
        }
    }

    #[cold]
    fn wake(&self) {
        futex::wake_all(&self.value);
    }

    /// Waits until the epoch reaches `target` (a team wait, see [`Spin`]).
    #[inline]
    #[cfg_attr(loom, allow(dead_code))] // the loom models wait through `wait_reach_helping`
    pub(crate) fn wait_reach(&self, target: u32) {
        if !reached(self.load(), target) {
            self.wait_slow::<Quiet>(target, &mut || false, &mut false, false);
        }
    }

    /// Waits until the epoch reaches `target`, where one thread passes the turn on after a
    /// short region (a hand-over, see [`Spin`]: the turn of an ordered region).
    #[inline]
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn wait_turn(&self, target: u32) {
        if !reached(self.load(), target) {
            self.wait_slow::<Quiet>(target, &mut || false, &mut false, true);
        }
    }

    /// Waits in a barrier (plain, fork or join) until the epoch reaches `target`, calling
    /// `help` between polls (`Helper::help`: true when it did useful work, the spin budget
    /// then starts over) and parking where `help` says (`Helper::park`). The time spent waiting awake is recorded as "Barrier: spin wait":
    /// `spinning` says whether that state is open (it stays open when the wait ends, for the
    /// barrier's next wait or its end, `barrier::trace_end`).
    #[inline]
    pub(crate) fn wait_reach_helping(&self, target: u32, help: &mut dyn Helper, spinning: &mut bool) {
        if !reached(self.load(), target) {
            self.wait_slow::<BarrierSpin>(target, help, spinning, false);
        }
    }

    /// Under loom: no spinning (the model would explore every poll), straight to the sleep
    /// protocol, whose futex the model implements.
    #[cfg(loom)]
    fn wait_slow<N: WaitNote>(&self, target: u32, help: &mut dyn Helper, _awake: &mut bool, _handover: bool) {
        while !reached(self.load(), target) {
            if !help.help() && !help.park(&|| reached(self.load(), target)) {
                self.park(target);
            }
        }
    }

    #[cfg(not(loom))]
    #[cold]
    fn wait_slow<N: WaitNote>(&self, target: u32, help: &mut dyn Helper, awake: &mut bool, handover: bool) {
        let mut spin = if handover { Spin::handover() } else { Spin::new() };
        N::awake(awake);
        loop {
            for _ in 0..spin.polls() {
                if reached(self.load(), target) {
                    return;
                }
                std::hint::spin_loop();
            }
            if help.help() {
                spin.restart();
            } else if !spin.idle_round() {
                N::asleep(awake);
                if !help.park(&|| reached(self.load(), target)) {
                    self.park(target);
                }
                if reached(self.load(), target) {
                    return;
                }
                N::awake(awake);
                spin.restart_parked();
            }
        }
    }

    /// Sleeps until woken (W1..W4 of the protocol).
    fn park(&self, target: u32) {
        // W1, fence, W2 of the protocol; Relaxed accesses ordered by the fence.
        self.sleepers.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        let v = self.value.load(Ordering::Relaxed);
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

    /// A waiter whose round count has saturated still yields and gives up when its time is
    /// over (any block time under 10 s: other tests change the process-wide one).
    #[test]
    #[cfg(not(loom))]
    fn a_saturated_spin_still_gives_up() {
        let Some(long_ago) = Instant::now().checked_sub(Duration::from_secs(10)) else { return };
        for mut s in [Spin::new(), Spin::handover()] {
            s.rounds = u32::MAX - 3;
            s.start = Some(long_ago);
            assert!((0..16).any(|_| !s.idle_round_with(200_000_000, false)), "spun on past its time");
            assert_eq!(s.rounds % YIELD_GAP_MAX, 0);
        }
    }

    /// Yields that return at once space out to one every `max` rounds; one that gave the CPU
    /// away brings them back to every `min`th.
    #[test]
    #[cfg(not(loom))]
    fn yields_space_out_while_nobody_takes_the_cpu() {
        let mut y = YieldGap::<8, 256>::new();
        let mut gaps = vec![y.gap];
        while y.gap < 256 {
            y.yielded(Duration::from_nanos(300));
            gaps.push(y.gap);
        }
        assert_eq!(gaps, [8, 16, 32, 64, 128, 256]);
        y.yielded(Duration::from_nanos(300));
        assert_eq!(y.gap, 256, "the gap grew past its bound");
        assert!(y.due(512) && !y.due(264));
        y.yielded(Duration::from_micros(50));
        assert_eq!(y.gap, 8, "a yield that gave the CPU away kept the gap");
        assert!(y.due(264));
    }

    /// Phase 2 yields on the rounds its gap says, and keeps the gap when it starts over.
    #[test]
    #[cfg(not(loom))]
    fn phase_two_yields_where_the_gap_says() {
        // A gap of 16: a yield changes the gap (to 32 or back to 8), so the gap shows where
        // the yields were: none before the first round that is a multiple of 16 after phase
        // 1, one there.
        let mut s = Spin::new();
        s.yields.gap = 16;
        s.restart();
        assert_eq!(s.yields.gap, 16, "a restart forgot the gap");
        s.rounds = PURE_ROUNDS;
        let first_yield = (PURE_ROUNDS + 1).next_multiple_of(16);
        for r in PURE_ROUNDS + 1..first_yield {
            assert!(s.idle_round_with(200_000_000, false), "phase 2 ended at round {r}");
            assert_eq!(s.yields.gap, 16, "a yield at round {r}, not a multiple of the gap");
        }
        assert!(s.idle_round_with(200_000_000, false));
        assert_eq!(s.rounds, first_yield);
        assert_ne!(s.yields.gap, 16, "no yield at round {first_yield}");
    }

    /// With a block time of 0 (passive), a team wait parks at its first fruitless round, also
    /// after a wake-up and after it found work (when oversubscribed: after one yield); a
    /// hand-over spins through phase 1 first, then
    /// polls and yields for its floor, then parks.
    #[test]
    fn passive_team_waits_park_at_once_and_hand_overs_poll_briefly() {
        let mut team = Spin::new();
        assert!(!team.idle_round_with(0, false), "a passive team wait spun");
        team.restart_parked();
        assert!(!team.idle_round_with(0, false), "a woken passive team wait spun");
        team.restart();
        assert!(!team.idle_round_with(0, false), "a helping passive team wait spun");
        // Oversubscribed: one yield, then parked.
        let mut team = Spin::new();
        assert!(team.idle_round_with(0, true), "no yield before parking");
        assert!(!team.idle_round_with(0, true), "an oversubscribed passive team wait polled on");
        team.restart_parked();
        assert!(!team.idle_round_with(0, true), "a woken passive team wait polled");
        let mut h = Spin::handover();
        assert!((0..PURE_ROUNDS).all(|_| h.idle_round_with(0, false)), "phase 1 was cut short");
        assert!(h.start.is_none(), "phase 1 read the clock");
        assert!(h.idle_round_with(0, false), "phase 2 ended before its floor");
        // Its floor used up: the next look at the clock ends it.
        let Some(past) = Instant::now().checked_sub(Duration::from_nanos(2 * HANDOVER_NS)) else { return };
        h.start = Some(past);
        assert!((0..8).any(|_| !h.idle_round_with(0, false)), "a hand-over polled past its floor");
        // Oversubscribed: no phase 1, a yield and a look at the clock each round (its answer
        // depends on how long the yield took).
        let mut h = Spin::handover();
        h.idle_round_with(0, true);
        assert!(h.start.is_some(), "an oversubscribed hand-over spun through phase 1");
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
            // Straight to the sleep protocol: a lost wake-up would deadlock the model.
            while !reached(f.load(), 1) {
                f.park(1);
            }
            t.join().unwrap();
        });
    }
}
