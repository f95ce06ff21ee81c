//! Locks that live in the program's own 8 bytes (`omp_lock_t`, and later the 32-byte
//! `kmp_critical_name`): a futex mutex in the first word, the owner's gtid + 1 in the second.
//!
//! The state word carries a marker so that using a lock that was never initialised (or was
//! destroyed) is reported instead of silently misbehaving:
//! `UNLOCKED = MARK`, `LOCKED = MARK | 1`, `CONTENDED = MARK | 2` (someone may sleep).
//!
//! Acquire: CAS UNLOCKED → LOCKED; failing that, spin briefly, then swap in CONTENDED and sleep
//! on the futex while the old value was not UNLOCKED. Release: swap UNLOCKED; if the old value
//! was CONTENDED, wake one sleeper. (The classic three-state futex mutex: a sleeper always
//! leaves CONTENDED behind, so the last unlock before it sleeps cannot miss it.)

use crate::sync::atomic::{AtomicU32, Ordering};
use crate::sync::futex;
use crate::sync::wait::Spin;

const MARK: u32 = 0x6c6f_0000; // "lo"
const UNLOCKED: u32 = MARK;
const LOCKED: u32 = MARK | 1;
const CONTENDED: u32 = MARK | 2;
const DESTROYED: u32 = 0xdead_0000;
/// Misuse of a lock routine: the text says what was wrong.
pub type LockMisuse = &'static str;

const NOT_INIT: LockMisuse = "the lock is not initialized (or was destroyed)";

/// The 8 bytes of an `omp_lock_t` seen as a lock.
#[repr(C, align(8))]
pub struct LockWord {
    state: AtomicU32,
    /// gtid + 1 of the owner, 0 when free.
    owner: AtomicU32,
}

impl LockWord {
    pub fn init(&self) {
        // Relaxed: initialisation precedes any sharing of the lock, which the program
        // publishes by its own synchronisation.
        self.owner.store(0, Ordering::Relaxed);
        self.state.store(UNLOCKED, Ordering::Release);
    }

    pub fn destroy(&self) -> Result<(), LockMisuse> {
        match self.state.load(Ordering::Relaxed) {
            UNLOCKED => {
                self.state.store(DESTROYED, Ordering::Relaxed);
                Ok(())
            }
            LOCKED | CONTENDED => Err("the lock is still held"),
            _ => Err(NOT_INIT),
        }
    }

    /// Acquires the lock for thread `gtid`.
    #[inline]
    pub fn lock(&self, gtid: i32) -> Result<(), LockMisuse> {
        // Acquire: pairs with the Release swap in `unlock`, so the previous holder's critical
        // section happens-before ours.
        if self.state.compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed).is_err() {
            self.lock_slow(gtid)?;
        }
        self.owner.store(gtid as u32 + 1, Ordering::Relaxed);
        Ok(())
    }

    #[cold]
    fn lock_slow(&self, gtid: i32) -> Result<(), LockMisuse> {
        let s = self.state.load(Ordering::Relaxed);
        if s & 0xffff_0000 != MARK {
            return Err(NOT_INIT);
        }
        // Relaxed: only compared with our own gtid, which only we store.
        if self.owner.load(Ordering::Relaxed) == gtid as u32 + 1 {
            return Err("the calling thread already holds this lock: it would wait forever");
        }
        lock_contended(&self.state, UNLOCKED);
        Ok(())
    }

    /// Tries to acquire the lock without waiting.
    pub fn try_lock(&self, gtid: i32) -> Result<bool, LockMisuse> {
        match self.state.compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => {
                self.owner.store(gtid as u32 + 1, Ordering::Relaxed);
                Ok(true)
            }
            Err(s) if s & 0xffff_0000 == MARK => Ok(false),
            Err(_) => Err(NOT_INIT),
        }
    }

    /// Releases the lock held by `gtid`.
    #[inline]
    pub fn unlock(&self, gtid: i32) -> Result<(), LockMisuse> {
        if self.owner.load(Ordering::Relaxed) != gtid as u32 + 1 {
            return Err(match self.state.load(Ordering::Relaxed) {
                LOCKED | CONTENDED => "the lock is held by another thread",
                UNLOCKED => "the lock is not held",
                _ => NOT_INIT,
            });
        }
        self.owner.store(0, Ordering::Relaxed);
        unlock_raw(&self.state, UNLOCKED);
        Ok(())
    }
}

/// The contended path of the three-state mutex whose unlocked value is `unlocked` (locked is
/// `unlocked | 1`, contended `unlocked | 2`): spin, then yield, for the block time (the
/// runtime's one spin schedule, [`Spin`]), then sleep on the futex. Sleeping is what makes a
/// lock slow: a sleeper leaves CONTENDED behind, and every later release pays a futex
/// wake-up; a waiter that spins costs the holder nothing but the cache line.
#[cold]
fn lock_contended(state: &AtomicU32, unlocked: u32) {
    let mut spin = Spin::new();
    loop {
        for _ in 0..Spin::POLLS {
            if state.load(Ordering::Relaxed) == unlocked
                && state
                    .compare_exchange(unlocked, unlocked | 1, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return;
            }
            std::hint::spin_loop();
        }
        if !spin.idle_round() {
            break;
        }
    }
    // Acquire: pairs with the Release swap in `unlock_raw`; CONTENDED tells the holder to wake us.
    while state.swap(unlocked | 2, Ordering::Acquire) != unlocked {
        futex::wait(state, unlocked | 2);
    }
}

/// Releases the three-state mutex; wakes one sleeper if there may be one.
#[inline]
fn unlock_raw(state: &AtomicU32, unlocked: u32) {
    // Release: publishes the critical section to the next acquirer.
    if state.swap(unlocked, Ordering::Release) == unlocked | 2 {
        futex::wake_one(state);
    }
}

/// The compiler's 32-byte `kmp_critical_name`, zero-initialised static storage, seen as a lock:
/// the mutex in the first word (0 = unlocked, so no initialisation is needed), the owner's
/// gtid + 1 in the second.
#[repr(C, align(8))]
pub struct CriticalName {
    state: AtomicU32,
    owner: AtomicU32,
    _unused: [u32; 6],
}

impl CriticalName {
    /// Enters the critical section named by `self` for thread `gtid`.
    #[inline]
    pub fn enter(&self, gtid: i32) -> Result<(), LockMisuse> {
        if self.state.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_err() {
            // Relaxed: only compared with our own gtid, which only we store.
            if self.owner.load(Ordering::Relaxed) == gtid as u32 + 1 {
                return Err(
                    "the calling thread is already inside a critical section of this name: it would wait forever",
                );
            }
            lock_contended(&self.state, 0);
        }
        self.owner.store(gtid as u32 + 1, Ordering::Relaxed);
        Ok(())
    }

    /// Leaves the critical section.
    #[inline]
    pub fn exit(&self, gtid: i32) -> Result<(), LockMisuse> {
        if self.owner.load(Ordering::Relaxed) != gtid as u32 + 1 {
            return Err("the calling thread is not inside this critical section");
        }
        self.owner.store(0, Ordering::Relaxed);
        unlock_raw(&self.state, 0);
        Ok(())
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
        let n = NestLock {
            word: LockWord { state: AtomicU32::new(0), owner: AtomicU32::new(0) },
            depth: AtomicU32::new(0),
        };
        n.word.init();
        n
    }

    fn owned_by(&self, gtid: i32) -> bool {
        self.word.owner.load(Ordering::Relaxed) == gtid as u32 + 1
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
                "the lock is not held"
            } else {
                "the lock is held by another thread"
            });
        }
        let d = self.depth.fetch_sub(1, Ordering::Relaxed) - 1;
        if d == 0 {
            self.word.unlock(gtid)?;
        }
        Ok(d)
    }

    pub fn is_held(&self) -> bool {
        self.word.state.load(Ordering::Relaxed) != UNLOCKED
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn word() -> LockWord {
        LockWord { state: AtomicU32::new(0), owner: AtomicU32::new(0) }
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
