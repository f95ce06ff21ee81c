//! `omp_*_lock` and `omp_*_nest_lock`. A simple lock lives inline in the program's 8-byte
//! `omp_lock_t`; a nestable lock is a heap object whose pointer the `omp_nest_lock_t` holds.

use std::ffi::{c_int, c_void};

use oxiomp_runtime::Thread;
use oxiomp_runtime::lock::{LockWord, NestLock};

use oxiomp_instrument::{MutexOp, mutex_kind};

use crate::{fatal, misuse};

/// What a tool is told when a nestable lock's holder reaches nesting `depth` (1: it acquired
/// the lock).
fn nest_acquired(depth: u32) -> MutexOp {
    if depth == 1 { MutexOp::Acquired } else { MutexOp::NestAcquired }
}

/// `omp_lock_t`.
pub type OmpLock = LockWord;
/// `omp_nest_lock_t`: one pointer.
pub type OmpNestLock = *mut NestLock;

/// Valid hint combinations: not both contended and uncontended, not both speculative and
/// nonspeculative.
fn check_hint(call: &str, hint: c_int) {
    let (uncontended, contended, nonspec, spec) = (1, 2, 4, 8);
    if (hint & uncontended != 0 && hint & contended != 0) || (hint & nonspec != 0 && hint & spec != 0) {
        misuse(call, "contradictory synchronization hint; the lock is initialized without it");
    }
}

fn gtid() -> i32 {
    Thread::current().gtid()
}

/// Registers the calling thread (the runtime, and a tool, start at a program's first OpenMP
/// call, a lock's initialisation included: the tool is told of the lock).
fn start() {
    let _ = Thread::current();
}

/// The lock behind a pointer the program passed, or a fatal report naming the call.
fn simple<'a>(call: &str, lock: *mut OmpLock) -> &'a LockWord {
    // SAFETY: the program passes the address of its omp_lock_t: 8 bytes, 8-aligned (omp.h
    // declares it as a struct holding one pointer), which LockWord overlays exactly.
    unsafe { lock.as_ref() }.unwrap_or_else(|| fatal(call, "the lock pointer is null"))
}

fn nest<'a>(call: &str, lock: *mut OmpNestLock) -> &'a NestLock {
    if lock.is_null() {
        fatal(call, "the lock pointer is null");
    }
    // SAFETY: the program passes the address of its omp_nest_lock_t (not null: checked),
    // which holds the pointer omp_init_nest_lock stored (a leaked Box, freed only by
    // omp_destroy_nest_lock).
    let p = unsafe { *lock };
    // SAFETY: as above; null means never initialized (or destroyed).
    unsafe { p.as_ref() }.unwrap_or_else(|| fatal(call, "the lock is not initialized (or was destroyed)"))
}

/// # Safety
/// `lock` points to an `omp_lock_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_init_lock(lock: *mut OmpLock) {
    start();
    simple("omp_init_lock", lock).init();
    oxiomp_instrument::mutex(MutexOp::Init, mutex_kind::LOCK, lock as usize);
}

/// # Safety
/// `lock` points to an `omp_lock_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_init_lock_with_hint(lock: *mut OmpLock, hint: c_int) {
    check_hint("omp_init_lock_with_hint", hint);
    start();
    simple("omp_init_lock_with_hint", lock).init();
    oxiomp_instrument::mutex(MutexOp::Init, mutex_kind::LOCK, lock as usize);
}

/// # Safety
/// `lock` points to an `omp_lock_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_destroy_lock(lock: *mut OmpLock) {
    match simple("omp_destroy_lock", lock).destroy() {
        Ok(()) => oxiomp_instrument::mutex(MutexOp::Destroy, mutex_kind::LOCK, lock as usize),
        Err(e) => misuse("omp_destroy_lock", e),
    }
}

/// # Safety
/// `lock` points to an initialized `omp_lock_t`.
///
/// The common case (no tracing or tool, a registered thread, the lock free) needs no stack
/// frame: a flag load, a thread-local load, a CAS and a return; everything else (a tool told
/// of the lock included) is a tail call to the cold path. (Registers
/// saved around the CAS and restored after it cost several nanoseconds per lock: see
/// `__kmpc_critical`.)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_set_lock(lock: *mut OmpLock) {
    if !oxiomp_instrument::enabled()
        // SAFETY: as in `simple`; null goes to the slow path, which reports it.
        && let (Some(l), Some(th)) = (unsafe { lock.as_ref() }, Thread::peek())
        && l.try_lock_free(th.gtid())
    {
        // The run-time checks follow the lock (one load and a branch without them).
        oxiomp_instrument::mutex_checked(MutexOp::Acquired, mutex_kind::LOCK, lock as usize);
        return;
    }
    // SAFETY: forwarded.
    unsafe { set_lock_slow(lock) }
}

/// `omp_set_lock` for a held (or uninitialised) lock, a null pointer or an unregistered
/// thread, or with a tool told.
#[cold]
#[inline(never)]
unsafe fn set_lock_slow(lock: *mut OmpLock) {
    let l = simple("omp_set_lock", lock);
    oxiomp_instrument::mutex(MutexOp::Acquire, mutex_kind::LOCK, lock as usize);
    if let Err(e) = l.lock(gtid()) {
        fatal("omp_set_lock", e);
    }
    oxiomp_instrument::mutex_checked(MutexOp::Acquired, mutex_kind::LOCK, lock as usize);
}

/// # Safety
/// `lock` points to an initialized `omp_lock_t`.
///
/// A frame-less fast path, as `omp_set_lock`'s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_unset_lock(lock: *mut OmpLock) {
    if !oxiomp_instrument::enabled()
        // SAFETY: as in `simple`.
        && let (Some(l), Some(th)) = (unsafe { lock.as_ref() }, Thread::peek())
        && l.try_unlock_uncontended(th.gtid())
    {
        // As in `omp_set_lock`.
        oxiomp_instrument::mutex_checked(MutexOp::Released, mutex_kind::LOCK, lock as usize);
        return;
    }
    // SAFETY: forwarded.
    unsafe { unset_lock_slow(lock) }
}

/// `omp_unset_lock` with a sleeper to wake, on misuse, or with a tool told.
#[cold]
#[inline(never)]
unsafe fn unset_lock_slow(lock: *mut OmpLock) {
    match simple("omp_unset_lock", lock).unlock(gtid()) {
        Ok(()) => oxiomp_instrument::mutex_checked(MutexOp::Released, mutex_kind::LOCK, lock as usize),
        Err(e) => misuse("omp_unset_lock", e),
    }
}

/// # Safety
/// `lock` points to an initialized `omp_lock_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_test_lock(lock: *mut OmpLock) -> c_int {
    let l = simple("omp_test_lock", lock);
    oxiomp_instrument::mutex(MutexOp::Acquire, mutex_kind::TEST_LOCK, lock as usize);
    match l.try_lock(gtid()) {
        Ok(got) => {
            if got {
                oxiomp_instrument::mutex_checked(MutexOp::Acquired, mutex_kind::TEST_LOCK, lock as usize);
            }
            got as c_int
        }
        Err(e) => {
            misuse("omp_test_lock", e);
            0
        }
    }
}

/// # Safety
/// `lock` points to an `omp_nest_lock_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_init_nest_lock(lock: *mut OmpNestLock) {
    if lock.is_null() {
        fatal("omp_init_nest_lock", "the lock pointer is null");
    }
    start();
    let n = Box::into_raw(Box::new(NestLock::new()));
    // SAFETY: `lock` points to the program's omp_nest_lock_t (one pointer).
    unsafe { *lock = n };
    oxiomp_instrument::mutex(MutexOp::Init, mutex_kind::NEST_LOCK, n as usize);
}

/// # Safety
/// `lock` points to an `omp_nest_lock_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_init_nest_lock_with_hint(lock: *mut OmpNestLock, hint: c_int) {
    check_hint("omp_init_nest_lock_with_hint", hint);
    // SAFETY: as for omp_init_nest_lock.
    unsafe { omp_init_nest_lock(lock) };
}

/// # Safety
/// `lock` points to an initialized `omp_nest_lock_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_destroy_nest_lock(lock: *mut OmpNestLock) {
    let n = nest("omp_destroy_nest_lock", lock);
    if n.is_held() {
        misuse("omp_destroy_nest_lock", "the lock is still held; not destroyed");
        return;
    }
    oxiomp_instrument::mutex(MutexOp::Destroy, mutex_kind::NEST_LOCK, n as *const NestLock as usize);
    // SAFETY: the pointer came from Box::into_raw in omp_init_nest_lock and the program no
    // longer uses the lock (it is destroying it); we clear the slot so reuse is detected.
    unsafe {
        drop(Box::from_raw(*lock));
        *lock = std::ptr::null_mut();
    }
}

/// # Safety
/// `lock` points to an initialized `omp_nest_lock_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_set_nest_lock(lock: *mut OmpNestLock) {
    let n = nest("omp_set_nest_lock", lock);
    let id = n as *const NestLock as usize;
    oxiomp_instrument::mutex(MutexOp::Acquire, mutex_kind::NEST_LOCK, id);
    match n.lock(gtid()) {
        Ok(depth) => oxiomp_instrument::mutex_checked(nest_acquired(depth), mutex_kind::NEST_LOCK, id),
        Err(e) => fatal("omp_set_nest_lock", e),
    }
}

/// # Safety
/// `lock` points to an initialized `omp_nest_lock_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_unset_nest_lock(lock: *mut OmpNestLock) {
    let n = nest("omp_unset_nest_lock", lock);
    match n.unlock(gtid()) {
        Ok(depth) => {
            let op = if depth == 0 { MutexOp::Released } else { MutexOp::NestReleased };
            oxiomp_instrument::mutex_checked(op, mutex_kind::NEST_LOCK, n as *const NestLock as usize);
        }
        Err(e) => misuse("omp_unset_nest_lock", e),
    }
}

/// # Safety
/// `lock` points to an initialized `omp_nest_lock_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_test_nest_lock(lock: *mut OmpNestLock) -> c_int {
    let n = nest("omp_test_nest_lock", lock);
    let id = n as *const NestLock as usize;
    oxiomp_instrument::mutex(MutexOp::Acquire, mutex_kind::TEST_NEST_LOCK, id);
    match n.try_lock(gtid()) {
        Ok(depth) => {
            if depth != 0 {
                oxiomp_instrument::mutex_checked(nest_acquired(depth), mutex_kind::TEST_NEST_LOCK, id);
            }
            depth as c_int
        }
        Err(e) => {
            misuse("omp_test_nest_lock", e);
            0
        }
    }
}

/// The `__kmpc_*_lock` entry points: the same locks, with the (location, gtid) prefix of the
/// kmpc interface and the user's storage passed as `void **`.
macro_rules! kmpc_lock {
    ($( $name:ident => $omp:ident ( $($ret:ty)? ) ; )*) => {
        $(
            /// # Safety
            /// `lock` points to the program's lock storage, as for the `omp_*` routine.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn $name(_loc: *const crate::Ident, _gtid: i32, lock: *mut *mut c_void) $(-> $ret)? {
                // SAFETY: the storage layouts are those of omp_lock_t / omp_nest_lock_t.
                unsafe { $omp(lock as _) }
            }
        )*
    };
}

kmpc_lock! {
    __kmpc_init_lock => omp_init_lock();
    __kmpc_destroy_lock => omp_destroy_lock();
    __kmpc_set_lock => omp_set_lock();
    __kmpc_unset_lock => omp_unset_lock();
    __kmpc_test_lock => omp_test_lock(c_int);
    __kmpc_init_nest_lock => omp_init_nest_lock();
    __kmpc_destroy_nest_lock => omp_destroy_nest_lock();
    __kmpc_set_nest_lock => omp_set_nest_lock();
    __kmpc_unset_nest_lock => omp_unset_nest_lock();
    __kmpc_test_nest_lock => omp_test_nest_lock(c_int);
}

/// # Safety
/// As for `omp_init_lock_with_hint`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_init_lock_with_hint(
    _loc: *const crate::Ident,
    _gtid: i32,
    lock: *mut *mut c_void,
    hint: u32,
) {
    // SAFETY: as above.
    unsafe { omp_init_lock_with_hint(lock as _, hint as c_int) }
}

/// # Safety
/// As for `omp_init_nest_lock_with_hint`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_init_nest_lock_with_hint(
    _loc: *const crate::Ident,
    _gtid: i32,
    lock: *mut *mut c_void,
    hint: u32,
) {
    // SAFETY: as above.
    unsafe { omp_init_nest_lock_with_hint(lock as _, hint as c_int) }
}
