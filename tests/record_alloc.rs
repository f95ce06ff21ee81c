//! Recording events allocates nothing once a thread's stream is open, also across buffer
//! flushes (a process of its own: it installs the recorder and a counting allocator).
//!
//! Only the recording thread's allocations count: the trace's writer thread starts with the
//! first stream and std allocates while setting a new thread up (its handle, its TLS
//! destructor list), at a moment of the scheduler's choosing: counting every thread made the
//! test fail when the writer started late (seen once in CI).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Set on the thread whose allocations count (a const initialiser: reading it allocates
    /// nothing and registers no destructor).
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: forwards to the system allocator, counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if COUNTED.with(Cell::get) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as ours.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static A: Counting = Counting;

#[test]
fn recording_allocates_nothing() {
    let dir = std::env::temp_dir().join(format!("oxiomp-record-alloc-{}", std::process::id()));
    oxiomp_instrument::ovni::start(&dir).expect("trace directory");
    oxiomp_instrument::barrier_plain_enter(); // opens the stream
    oxiomp_instrument::barrier_plain_exit();
    COUNTED.with(|c| c.set(true));
    let before = ALLOCS.load(Ordering::Relaxed);
    // 200k events of 12 bytes: more than two 1 MiB buffers, so flushes happen too.
    for _ in 0..100_000 {
        oxiomp_instrument::barrier_plain_enter();
        oxiomp_instrument::barrier_plain_exit();
    }
    let after = ALLOCS.load(Ordering::Relaxed);
    COUNTED.with(|c| c.set(false));
    assert_eq!(after - before, 0, "allocations while recording");
    let bytes = std::fs::read_dir(&dir).unwrap().count();
    assert!(bytes > 0);
    let _ = std::fs::remove_dir_all(dir);
}
