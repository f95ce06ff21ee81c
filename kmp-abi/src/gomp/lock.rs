//! `omp_*_lock` for gcc-compiled programs, whose `omp_lock_t` (gcc's `omp.h`) is 4 bytes: too
//! small for oxiomp's 8-byte lock word. The program's word holds a lock number (0: not
//! initialised); the lock words themselves live in a table of fixed chunks that never move, so a
//! lock is found with two loads. `abi/omp-versions.txt` names these under libgomp's `OMP_3.0`
//! node (gcc's `omp_nest_lock_t` is 16 bytes: the nestable routines serve it unchanged).

use std::ffi::c_int;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use oxiomp_runtime::lock::LockWord;

use crate::fatal;
use crate::lock::{OmpLock, omp_destroy_lock, omp_init_lock, omp_set_lock, omp_test_lock, omp_unset_lock};

const CHUNK: usize = 1024;
const CHUNKS: usize = 4096;

/// The table: chunk `k` holds locks `k * CHUNK + 1 ..= (k + 1) * CHUNK` (made on first use,
/// never freed).
static TABLE: [AtomicPtr<LockWord>; CHUNKS] = [const { AtomicPtr::new(std::ptr::null_mut()) }; CHUNKS];
/// Lock numbers given out so far.
static NEXT: AtomicU32 = AtomicU32::new(0);
/// Numbers of destroyed locks, given out again first.
static FREE: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// The lock word of lock number `n` (1-based), making its chunk if needed.
fn word(n: u32) -> *mut LockWord {
    let i = (n - 1) as usize;
    let slot = &TABLE[i / CHUNK];
    // Acquire: pairs with the installing CAS (the chunk's zeroed memory is visible).
    let mut chunk = slot.load(Ordering::Acquire);
    if chunk.is_null() {
        let layout = std::alloc::Layout::array::<LockWord>(CHUNK).expect("lock chunk layout");
        // SAFETY: a non-zero size; zeroed memory is a valid (unlocked-looking) LockWord,
        // which omp_init_lock initialises before use.
        let fresh = unsafe { std::alloc::alloc_zeroed(layout) } as *mut LockWord;
        if fresh.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        // AcqRel: publishes our chunk, or sees the one another thread installed.
        chunk = match slot.compare_exchange(std::ptr::null_mut(), fresh, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => fresh,
            Err(theirs) => {
                // SAFETY: ours was never shared; allocated above with this layout.
                unsafe { std::alloc::dealloc(fresh as *mut u8, layout) };
                theirs
            }
        };
    }
    // SAFETY: the chunk holds CHUNK words.
    unsafe { chunk.add(i % CHUNK) }
}

/// The lock behind the program's 4-byte word, or a fatal report naming `call`.
fn lock_of(call: &str, lock: *mut u32) -> *mut OmpLock {
    if lock.is_null() {
        fatal(call, "the lock pointer is null");
    }
    // SAFETY: the program passes its 4-byte, 4-aligned omp_lock_t, which only these routines
    // write; it is shared between threads, so read atomically.
    let n = unsafe { AtomicU32::from_ptr(lock) }.load(Ordering::Acquire);
    if n == 0 {
        fatal(call, "the lock is not initialized (or was destroyed)");
    }
    word(n)
}

/// gcc's `omp_init_lock`.
#[unsafe(no_mangle)]
pub extern "C" fn oxiomp_gomp_init_lock(lock: *mut u32) {
    if lock.is_null() {
        fatal("omp_init_lock", "the lock pointer is null");
    }
    let n = FREE.lock().unwrap_or_else(|e| e.into_inner()).pop().unwrap_or_else(|| {
        // Relaxed: a counter; the number's word is reached through the table's own orderings.
        let n = NEXT.fetch_add(1, Ordering::Relaxed) + 1;
        if n as usize > CHUNK * CHUNKS {
            fatal("omp_init_lock", format_args!("more than {} locks at once", CHUNK * CHUNKS));
        }
        n
    });
    // SAFETY: the lock's own word, not in use (its number was free).
    unsafe { omp_init_lock(word(n)) };
    // SAFETY: as in `lock_of`. Release: the initialised word is seen by whoever reads the
    // number.
    unsafe { AtomicU32::from_ptr(lock) }.store(n, Ordering::Release);
}

/// gcc's `omp_destroy_lock`.
#[unsafe(no_mangle)]
pub extern "C" fn oxiomp_gomp_destroy_lock(lock: *mut u32) {
    let w = lock_of("omp_destroy_lock", lock);
    // SAFETY: the word of an initialised lock.
    unsafe { omp_destroy_lock(w) };
    // SAFETY: as in `lock_of`.
    let n = unsafe { AtomicU32::from_ptr(lock) }.swap(0, Ordering::AcqRel);
    if n != 0 {
        FREE.lock().unwrap_or_else(|e| e.into_inner()).push(n);
    }
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
