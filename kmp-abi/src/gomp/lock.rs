//! `omp_*_lock` for gcc-compiled programs, whose `omp_lock_t` (gcc's `omp.h`) is 4 bytes: too
//! small for oxiomp's 8-byte lock word. The program's word holds a lock number (0: not
//! initialised); the lock words themselves live in a table of fixed chunks that never move, so a
//! lock is found with two loads. `abi/omp-versions.txt` names these under libgomp's `OMP_3.0`
//! node (gcc's `omp_nest_lock_t` is 16 bytes: the nestable routines serve it unchanged), and
//! under `OMP_1.0`, with the nestable locks of gcc before 4.4, whose `omp_nest_lock_t` is 8
//! bytes aligned to 4 (too little for oxiomp's pointer): their first word holds a number in a
//! table of nestable locks likewise.

use std::ffi::c_int;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use oxiomp_runtime::lock::LockWord;

use crate::fatal;
use crate::lock::{
    OmpLock, OmpNestLock, omp_destroy_lock, omp_init_lock, omp_set_lock, omp_test_lock, omp_unset_lock,
};
use crate::lock::{
    omp_destroy_nest_lock, omp_init_nest_lock, omp_set_nest_lock, omp_test_nest_lock, omp_unset_nest_lock,
};

const CHUNK: usize = 1024;
const CHUNKS: usize = 4096;

/// Lock objects numbered from 1: chunk `k` holds numbers `k * CHUNK + 1 ..= (k + 1) * CHUNK`
/// (made on first use, zeroed, never freed), so an object never moves.
struct Table<T> {
    chunks: [AtomicPtr<T>; CHUNKS],
    /// Numbers given out so far.
    next: AtomicU32,
    /// Numbers of destroyed locks, given out again first.
    free: std::sync::Mutex<Vec<u32>>,
}

impl<T> Table<T> {
    const fn new() -> Table<T> {
        Table {
            chunks: [const { AtomicPtr::new(std::ptr::null_mut()) }; CHUNKS],
            next: AtomicU32::new(0),
            free: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Object number `n` (1-based, not 0), making its chunk if needed. All-zero bytes must be
    /// a value of `T` the lock routines may initialise. Inlined, and calling nothing when the
    /// chunk exists: a lock's set and unset look their lock up first.
    #[inline(always)]
    fn object(&self, call: &str, n: u32) -> *mut T {
        let i = (n - 1) as usize;
        let Some(slot) = self.chunks.get(i / CHUNK) else { out_of_range(call) };
        // Acquire: pairs with the installing CAS (the chunk's zeroed memory is visible).
        let chunk = slot.load(Ordering::Acquire);
        let chunk = if chunk.is_null() { Self::make_chunk(slot) } else { chunk };
        // SAFETY: the chunk holds CHUNK objects.
        unsafe { chunk.add(i % CHUNK) }
    }

    /// Installs chunk `slot`'s objects (or finds those another thread installed first).
    #[cold]
    #[inline(never)]
    fn make_chunk(slot: &AtomicPtr<T>) -> *mut T {
        let mut chunk = slot.load(Ordering::Acquire);
        if chunk.is_null() {
            let layout = std::alloc::Layout::array::<T>(CHUNK).expect("lock chunk layout");
            // SAFETY: a non-zero size; zeroed memory is a value of `T` (this method's
            // contract), which the lock's init routine initialises before use.
            let fresh = unsafe { std::alloc::alloc_zeroed(layout) } as *mut T;
            if fresh.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            // AcqRel: publishes our chunk, or sees the one another thread installed.
            chunk =
                match slot.compare_exchange(std::ptr::null_mut(), fresh, Ordering::AcqRel, Ordering::Acquire)
                {
                    Ok(_) => fresh,
                    Err(theirs) => {
                        // SAFETY: ours was never shared; allocated above with this layout.
                        unsafe { std::alloc::dealloc(fresh as *mut u8, layout) };
                        theirs
                    }
                };
        }
        chunk
    }

    /// A number no lock has, for `call` to initialise.
    fn take(&self, call: &str) -> u32 {
        self.free.lock().unwrap_or_else(|e| e.into_inner()).pop().unwrap_or_else(|| {
            // Relaxed: a counter; the number's object is reached through the chunks' own
            // orderings.
            let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
            if n as usize > CHUNK * CHUNKS {
                fatal(call, format_args!("more than {} locks at once", CHUNK * CHUNKS));
            }
            n
        })
    }

    /// Number `n`'s lock was destroyed.
    fn give_back(&self, n: u32) {
        self.free.lock().unwrap_or_else(|e| e.into_inner()).push(n);
    }
}

/// The simple locks.
static LOCKS: Table<LockWord> = Table::new();
/// The nestable locks of libgomp's `OMP_1.0` routines.
static NEST_LOCKS: Table<OmpNestLock> = Table::new();

/// The number the program's 4-byte word holds, or a fatal report naming `call`.
#[inline(always)]
fn number(call: &str, lock: *mut u32) -> u32 {
    if lock.is_null() {
        null_lock(call);
    }
    // SAFETY: the program passes its 4-aligned lock, whose first 4 bytes only these routines
    // write; it is shared between threads, so read atomically. Acquire: pairs with the
    // initialising store (the lock object is initialised).
    let n = unsafe { AtomicU32::from_ptr(lock) }.load(Ordering::Acquire);
    if n == 0 {
        not_initialized(call);
    }
    n
}

#[cold]
#[inline(never)]
fn null_lock(call: &str) -> ! {
    fatal(call, "the lock pointer is null")
}

#[cold]
#[inline(never)]
fn not_initialized(call: &str) -> ! {
    fatal(call, "the lock is not initialized (or was destroyed)")
}

/// A lock word whose number no lock was given (the program wrote into it).
#[cold]
#[inline(never)]
fn out_of_range(call: &str) -> ! {
    fatal(call, "the lock is not initialized (or was destroyed)")
}

/// Gives the program's lock at `lock` a fresh number from `table` and initialises its object
/// with `init`.
fn init_in<T>(call: &str, table: &Table<T>, lock: *mut u32, init: impl FnOnce(*mut T)) {
    if lock.is_null() {
        fatal(call, "the lock pointer is null");
    }
    let n = table.take(call);
    init(table.object(call, n));
    // SAFETY: as in `number`. Release: the initialised object is seen by whoever reads the
    // number.
    unsafe { AtomicU32::from_ptr(lock) }.store(n, Ordering::Release);
}

/// Destroys the program's lock at `lock` (its object with `destroy`), giving its number back.
fn destroy_in<T>(call: &str, table: &Table<T>, lock: *mut u32, destroy: impl FnOnce(*mut T)) {
    destroy(table.object(call, number(call, lock)));
    // SAFETY: as in `number`.
    let n = unsafe { AtomicU32::from_ptr(lock) }.swap(0, Ordering::AcqRel);
    if n != 0 {
        table.give_back(n);
    }
}

/// The lock behind the program's 4-byte word, or a fatal report naming `call`.
#[inline(always)]
fn lock_of(call: &str, lock: *mut u32) -> *mut OmpLock {
    LOCKS.object(call, number(call, lock))
}

/// gcc's `omp_init_lock`.
#[unsafe(no_mangle)]
pub extern "C" fn oxiomp_gomp_init_lock(lock: *mut u32) {
    // SAFETY: a fresh number's word, not in use.
    init_in("omp_init_lock", &LOCKS, lock, |w| unsafe { omp_init_lock(w) });
}

/// gcc's `omp_destroy_lock`.
#[unsafe(no_mangle)]
pub extern "C" fn oxiomp_gomp_destroy_lock(lock: *mut u32) {
    // SAFETY: the word of an initialised lock.
    destroy_in("omp_destroy_lock", &LOCKS, lock, |w| unsafe { omp_destroy_lock(w) });
}

/// gcc's `omp_set_lock`.
#[unsafe(no_mangle)]
pub extern "C" fn oxiomp_gomp_set_lock(lock: *mut u32) {
    // SAFETY: the word of an initialised lock.
    unsafe { omp_set_lock(lock_of("omp_set_lock", lock)) }
}

/// gcc's `omp_unset_lock`.
#[unsafe(no_mangle)]
pub extern "C" fn oxiomp_gomp_unset_lock(lock: *mut u32) {
    // SAFETY: as above.
    unsafe { omp_unset_lock(lock_of("omp_unset_lock", lock)) }
}

/// gcc's `omp_test_lock`.
#[unsafe(no_mangle)]
pub extern "C" fn oxiomp_gomp_test_lock(lock: *mut u32) -> c_int {
    // SAFETY: as above.
    unsafe { omp_test_lock(lock_of("omp_test_lock", lock)) }
}

/// The nestable lock behind an `OMP_1.0` program's 8-byte (4-aligned) `omp_nest_lock_t`,
/// whose first word holds its number.
fn nest_lock_of(call: &str, lock: *mut u32) -> *mut OmpNestLock {
    NEST_LOCKS.object(call, number(call, lock))
}

/// `omp_init_nest_lock@OMP_1.0`.
#[unsafe(no_mangle)]
pub extern "C" fn oxiomp_gomp_init_nest_lock_10(lock: *mut u32) {
    // SAFETY: a fresh number's slot, not in use.
    init_in("omp_init_nest_lock", &NEST_LOCKS, lock, |l| unsafe { omp_init_nest_lock(l) });
}

/// `omp_destroy_nest_lock@OMP_1.0`.
#[unsafe(no_mangle)]
pub extern "C" fn oxiomp_gomp_destroy_nest_lock_10(lock: *mut u32) {
    // SAFETY: the slot of an initialised lock.
    destroy_in("omp_destroy_nest_lock", &NEST_LOCKS, lock, |l| unsafe { omp_destroy_nest_lock(l) });
}

/// `omp_set_nest_lock@OMP_1.0`.
#[unsafe(no_mangle)]
pub extern "C" fn oxiomp_gomp_set_nest_lock_10(lock: *mut u32) {
    // SAFETY: the slot of an initialised lock.
    unsafe { omp_set_nest_lock(nest_lock_of("omp_set_nest_lock", lock)) }
}

/// `omp_unset_nest_lock@OMP_1.0`.
#[unsafe(no_mangle)]
pub extern "C" fn oxiomp_gomp_unset_nest_lock_10(lock: *mut u32) {
    // SAFETY: as above.
    unsafe { omp_unset_nest_lock(nest_lock_of("omp_unset_nest_lock", lock)) }
}

/// `omp_test_nest_lock@OMP_1.0`: the new nesting count, 0 when another thread holds it.
#[unsafe(no_mangle)]
pub extern "C" fn oxiomp_gomp_test_nest_lock_10(lock: *mut u32) -> c_int {
    // SAFETY: as above.
    unsafe { omp_test_nest_lock(nest_lock_of("omp_test_nest_lock", lock)) }
}
