//! Locks that live in the program's own memory (the 8-byte `omp_lock_t`, the 32-byte
//! `kmp_critical_name`): one 64-bit word holding a futex mutex's state in its low half (the
//! futex word) and the owner's gtid + 1 in its high half (0 when free).
//!
//! Owner and state share one atomic word because the owner check is what makes misuse
//! reportable, and a separate owner field costs a second write to the lock's cache line on
//! every acquire and release: while another thread polls the line, each of those writes is a
//! cache miss (measured: 20-50 ns per contended critical section, against 3-10 ns for a lock
//! written once per acquire and once per release).
//!
//! The state carries a marker so that using a lock that was never initialised (or was
//! destroyed) is reported instead of silently misbehaving: `UNLOCKED = MARK`,
//! `LOCKED = MARK | 1`, `CONTENDED = MARK | 2` (someone may sleep). A critical section's name
//! is zeroed static storage, so its marker is 0.
//!
//! The mutex itself, its protocol, the argument that no wake-up is lost and its loom models
//! are in `sync/owned_mutex.rs`; this module gives it the OpenMP routines' meaning (lock
//! kinds, misuse reports, critical names, nesting).

use crossbeam_utils::CachePadded;

use crate::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};
use crate::sync::owned_mutex::{OwnedMutex, owner_of, pack, state_of};

const MARK: u32 = 0x6c6f_0000; // "lo"
const UNLOCKED: u32 = MARK;
const DESTROYED: u32 = 0xdead_0000;

/// Misuse of a lock routine.
pub type LockMisuse = crate::error::Misuse;

const NOT_INIT: LockMisuse = LockMisuse::LockNotInitialized;
/// `__kmpc_end_critical` by a thread that is not inside the section.
pub const NOT_INSIDE: LockMisuse = LockMisuse::NotInsideCritical;

/// The 8 bytes of an `omp_lock_t` seen as a lock.
#[repr(C, align(8))]
pub struct LockWord {
    word: OwnedMutex,
}

impl LockWord {
    pub fn init(&self) {
        // Release: initialisation precedes any sharing of the lock, which the program
        // publishes by its own synchronisation.
        self.word.0.store(pack(UNLOCKED, 0), Ordering::Release);
    }

    pub fn destroy(&self) -> Result<(), LockMisuse> {
        let w = self.word.peek();
        match state_of(w) {
            UNLOCKED => {
                self.word.0.store(pack(DESTROYED, 0), Ordering::Relaxed);
                Ok(())
            }
            s if s & 0xffff_0000 == MARK => Err(LockMisuse::LockStillHeld),
            _ => Err(NOT_INIT),
        }
    }

    /// Acquires the lock for thread `gtid`.
    #[inline]
    pub fn lock(&self, gtid: i32) -> Result<(), LockMisuse> {
        let me = gtid as u32 + 1;
        match self.word.try_acquire(UNLOCKED, me) {
            Ok(()) => Ok(()),
            Err(w) => self.lock_slow(w, me),
        }
    }

    #[cold]
    fn lock_slow(&self, w: u64, me: u32) -> Result<(), LockMisuse> {
        if state_of(w) & 0xffff_0000 != MARK {
            return Err(NOT_INIT);
        }
        if owner_of(w) == me {
            return Err(LockMisuse::LockHeldByCaller);
        }
        self.word.acquire_contended(UNLOCKED, me);
        Ok(())
    }

    /// Acquires the lock if it is initialised and free (one CAS): the callers' fast path,
    /// which must need no stack frame (see `__kmpc_critical`). False leaves everything,
    /// waiting and misuse included, to [`LockWord::lock`].
    #[inline(always)]
    pub fn try_lock_free(&self, gtid: i32) -> bool {
        self.word.try_acquire(UNLOCKED, gtid as u32 + 1).is_ok()
    }

    /// Releases the lock if `gtid` holds it and nobody was marked asleep (one CAS). False
    /// leaves everything, waking a sleeper and misuse included, to [`LockWord::unlock`].
    #[inline(always)]
    pub fn try_unlock_uncontended(&self, gtid: i32) -> bool {
        self.word.try_release(UNLOCKED, gtid as u32 + 1)
    }

    /// Tries to acquire the lock without waiting.
    pub fn try_lock(&self, gtid: i32) -> Result<bool, LockMisuse> {
        match self.word.try_acquire(UNLOCKED, gtid as u32 + 1) {
            Ok(()) => Ok(true),
            Err(w) if state_of(w) & 0xffff_0000 == MARK => Ok(false),
            Err(_) => Err(NOT_INIT),
        }
    }

    /// Releases the lock held by `gtid`.
    #[inline]
    pub fn unlock(&self, gtid: i32) -> Result<(), LockMisuse> {
        self.word.release(UNLOCKED, gtid as u32 + 1).map_err(|w| match state_of(w) {
            UNLOCKED => LockMisuse::LockNotHeld,
            s if s & 0xffff_0000 == MARK => LockMisuse::LockHeldByOther,
            _ => NOT_INIT,
        })
    }

    /// gtid + 1 of the holder, 0 when free.
    fn owner(&self) -> u32 {
        owner_of(self.word.peek())
    }

    fn is_locked(&self) -> bool {
        state_of(self.word.peek()) != UNLOCKED
    }
}

/// The compiler's 32-byte `kmp_critical_name`, zero-initialised static storage: the first 8
/// bytes point at the section's lock, allocated on first use (null until then).
///
/// The lock does not live in the name itself: clang places the name in the program's `.bss`,
/// next to whatever globals the program has (in the EPCC benchmark, the delay length every
/// thread reads inside the section), and a lock word there makes every acquisition invalidate
/// that line in the other cores' caches. On a cache line of its own, reached through a pointer
/// that is only ever read after its first store, it does not. (libomp does the same; gcc's
/// unnamed critical uses a lock inside libgomp.) Locks are never freed, as critical names live
/// as long as the program.
#[repr(C, align(8))]
pub struct CriticalName {
    lock: AtomicPtr<CachePadded<OwnedMutex>>,
    _unused: [u64; 3],
}

impl CriticalName {
    /// A name as the compiler provides it: all zero.
    pub const fn new() -> CriticalName {
        CriticalName { lock: AtomicPtr::new(std::ptr::null_mut()), _unused: [0; 3] }
    }

    /// The section's lock, if a thread has used the name yet.
    #[inline(always)]
    fn installed(&self) -> Option<&OwnedMutex> {
        // Acquire: pairs with the installing CAS (AcqRel), so the lock's initial state is
        // visible.
        let p = self.lock.load(Ordering::Acquire);
        // SAFETY: a non-null pointer was installed by `install` and is never freed.
        unsafe { p.as_ref() }.map(|l| &**l)
    }

    /// The section's lock (installed on first use).
    #[inline]
    fn word(&self) -> &OwnedMutex {
        self.installed().unwrap_or_else(|| self.install())
    }

    /// First use: allocates the lock and installs it, unless another thread was first.
    #[cold]
    fn install(&self) -> &OwnedMutex {
        let mine = Box::into_raw(Box::new(CachePadded::new(OwnedMutex(AtomicU64::new(0)))));
        // AcqRel: publishes our lock's initial state (Release), or sees the winner's (Acquire).
        match self.lock.compare_exchange(std::ptr::null_mut(), mine, Ordering::AcqRel, Ordering::Acquire) {
            // SAFETY: just installed; never freed.
            Ok(_) => unsafe { &*mine },
            Err(theirs) => {
                // SAFETY: ours was never shared; theirs is installed and never freed.
                unsafe {
                    drop(Box::from_raw(mine));
                    &*theirs
                }
            }
        }
    }

    /// Enters the critical section if its lock is installed and free: one load and one CAS,
    /// nothing else (the callers' fast path, which must need no stack frame: see
    /// `__kmpc_critical`). False leaves everything to [`CriticalName::enter`].
    #[inline(always)]
    pub fn try_enter(&self, gtid: i32) -> bool {
        self.installed().is_some_and(|l| l.try_acquire(0, gtid as u32 + 1).is_ok())
    }

    /// Leaves the critical section if the caller holds it and nobody sleeps on it (one load,
    /// one CAS). False leaves everything to [`CriticalName::exit`], which wakes a sleeper or
    /// reports a misuse.
    #[inline(always)]
    pub fn try_exit(&self, gtid: i32) -> bool {
        self.installed().is_some_and(|l| l.try_release(0, gtid as u32 + 1))
    }

    /// Whether thread `gtid` is inside the section and nobody sleeps on it (its release would
    /// be one CAS, unless a waiter goes to sleep meanwhile).
    pub fn held_uncontended_by(&self, gtid: i32) -> bool {
        self.installed().is_some_and(|l| l.peek() == pack(1, gtid as u32 + 1))
    }

    /// Whether thread `gtid` is inside the section (stable for that thread: only the holder
    /// releases it).
    pub fn held_by(&self, gtid: i32) -> bool {
        self.installed().is_some_and(|l| {
            let w = l.peek();
            owner_of(w) == gtid as u32 + 1 && state_of(w) != 0
        })
    }

    /// Enters the critical section named by `self` for thread `gtid`.
    #[inline]
    pub fn enter(&self, gtid: i32) -> Result<(), LockMisuse> {
        let me = gtid as u32 + 1;
        let word = self.word();
        if let Err(w) = word.try_acquire(0, me) {
            if owner_of(w) == me {
                return Err(LockMisuse::CriticalReentered);
            }
            word.acquire_contended(0, me);
        }
        Ok(())
    }

    /// Leaves the critical section.
    #[inline]
    pub fn exit(&self, gtid: i32) -> Result<(), LockMisuse> {
        self.word().release(0, gtid as u32 + 1).map_err(|_| NOT_INSIDE)
    }
}

impl Default for CriticalName {
    fn default() -> Self {
        Self::new()
    }
}

/// A nestable lock: the same mutex plus a nesting count; it lives on the heap and the
/// program's 8 bytes hold the pointer.
pub struct NestLock {
    word: LockWord,
    /// Nesting depth; only the owner touches it.
    depth: AtomicU32,
}

impl Default for NestLock {
    fn default() -> Self {
        Self::new()
    }
}

impl NestLock {
    pub fn new() -> NestLock {
        let n = NestLock { word: LockWord { word: OwnedMutex(AtomicU64::new(0)) }, depth: AtomicU32::new(0) };
        n.word.init();
        n
    }

    fn owned_by(&self, gtid: i32) -> bool {
        self.word.owner() == gtid as u32 + 1
    }

    /// Acquires (or re-acquires) the lock; returns the new nesting depth.
    pub fn lock(&self, gtid: i32) -> Result<u32, LockMisuse> {
        if !self.owned_by(gtid) {
            self.word.lock(gtid)?;
        }
        Ok(self.depth.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// Returns the new nesting depth, or 0 if another thread holds the lock.
    pub fn try_lock(&self, gtid: i32) -> Result<u32, LockMisuse> {
        if !self.owned_by(gtid) && !self.word.try_lock(gtid)? {
            return Ok(0);
        }
        Ok(self.depth.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// Releases one level; returns the remaining depth.
    pub fn unlock(&self, gtid: i32) -> Result<u32, LockMisuse> {
        if !self.owned_by(gtid) {
            return Err(if self.depth.load(Ordering::Relaxed) == 0 {
                LockMisuse::LockNotHeld
            } else {
                LockMisuse::LockHeldByOther
            });
        }
        let d = self.depth.fetch_sub(1, Ordering::Relaxed) - 1;
        if d == 0 {
            self.word.unlock(gtid)?;
        }
        Ok(d)
    }

    pub fn is_held(&self) -> bool {
        self.word.is_locked()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn word() -> LockWord {
        LockWord { word: OwnedMutex(AtomicU64::new(0)) }
    }

    #[test]
    fn mutual_exclusion_under_contention() {
        let l = Arc::new(word());
        l.init();
        let counter = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let hs: Vec<_> = (0..6)
            .map(|g| {
                let (l, c) = (l.clone(), counter.clone());
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        l.lock(g).unwrap();
                        // a non-atomic read-modify-write made safe by the lock
                        let v = c.load(std::sync::atomic::Ordering::Relaxed);
                        c.store(v + 1, std::sync::atomic::Ordering::Relaxed);
                        l.unlock(g).unwrap();
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(counter.load(std::sync::atomic::Ordering::Relaxed), 120_000);
    }

    /// The section's lock lives outside the compiler's name object: after the first entry
    /// the name holds one pointer that never changes, and its other bytes stay zero, so
    /// entering and leaving writes nothing near the program's own globals.
    #[test]
    fn critical_lock_lives_outside_the_name() {
        assert_eq!(std::mem::size_of::<CriticalName>(), 32);
        let crit = CriticalName::new();
        let bytes = |c: &CriticalName| {
            // SAFETY: 32 bytes of plain data, read while no other thread touches them.
            unsafe { std::ptr::read(c as *const CriticalName as *const [u64; 4]) }
        };
        crit.enter(3).unwrap();
        let after_first = bytes(&crit);
        assert_ne!(after_first[0], 0, "the lock was installed");
        assert_eq!(&after_first[1..], &[0, 0, 0]);
        assert!(crit.enter(3).is_err(), "re-entry by the holder is reported");
        crit.exit(3).unwrap();
        for g in 0..100 {
            crit.enter(g).unwrap();
            crit.exit(g).unwrap();
        }
        assert_eq!(bytes(&crit), after_first, "entering and leaving do not write the name");
        assert!(crit.exit(5).is_err(), "leaving a section not held is reported");
    }

    /// The sleeping path (block time 0: a waiter parks once its hand-over poll, `Spin::handover`,
    /// is over; some holders keep the lock longer than that): every release by the holder
    /// succeeds, for omp locks and critical names, and the counter shows mutual exclusion.
    #[test]
    fn mutual_exclusion_with_sleeping_waiters() {
        let saved = crate::sync::WaitPolicy::block_time();
        crate::sync::WaitPolicy::set_block_time(std::time::Duration::ZERO);
        let l = Arc::new(word());
        l.init();
        let crit = Arc::new(CriticalName::new());
        // One counter per lock: each is changed only under its lock.
        let counters = Arc::new([std::sync::atomic::AtomicU64::new(0), std::sync::atomic::AtomicU64::new(0)]);
        let hs: Vec<_> = (0..8)
            .map(|g| {
                let (l, crit, counters) = (l.clone(), crit.clone(), counters.clone());
                std::thread::spawn(move || {
                    for i in 0..5_000 {
                        let c = &counters[(g % 2) as usize];
                        let bump = || {
                            let v = c.load(std::sync::atomic::Ordering::Relaxed);
                            if i % 64 == 0 {
                                std::thread::yield_now(); // let waiters go to sleep
                            }
                            if i % 1000 == 0 {
                                // Past the hand-over poll: waiters park.
                                std::thread::sleep(std::time::Duration::from_nanos(
                                    2 * crate::sync::wait::HANDOVER_NS,
                                ));
                            }
                            c.store(v + 1, std::sync::atomic::Ordering::Relaxed);
                        };
                        if g % 2 == 0 {
                            l.lock(g).unwrap();
                            bump();
                            l.unlock(g).unwrap();
                        } else {
                            crit.enter(g).unwrap();
                            bump();
                            crit.exit(g).unwrap();
                        }
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        crate::sync::WaitPolicy::set_block_time(saved);
        for c in counters.iter() {
            assert_eq!(c.load(std::sync::atomic::Ordering::Relaxed), 4 * 5_000);
        }
        assert!(!l.is_locked());
        assert_eq!(crit.word().peek(), 0);
    }

    #[test]
    fn misuse_is_reported() {
        let l = word();
        assert_eq!(l.lock(0), Err(NOT_INIT));
        l.init();
        assert!(l.unlock(0).is_err());
        l.lock(0).unwrap();
        assert!(l.lock(0).is_err(), "self-deadlock detected");
        assert!(l.unlock(1).is_err());
        assert_eq!(l.try_lock(1), Ok(false));
        assert!(l.destroy().is_err());
        l.unlock(0).unwrap();
        l.destroy().unwrap();
        assert!(l.try_lock(0).is_err());
    }

    #[test]
    fn nesting() {
        let n = NestLock::new();
        assert_eq!(n.lock(3), Ok(1));
        assert_eq!(n.try_lock(3), Ok(2));
        assert_eq!(n.try_lock(4), Ok(0));
        assert_eq!(n.unlock(3), Ok(1));
        assert!(n.unlock(4).is_err());
        assert_eq!(n.unlock(3), Ok(0));
        assert!(!n.is_held());
        assert_eq!(n.try_lock(4), Ok(1));
    }
}
