//! Fork/join and barrier through the C ABI (`__kmpc_fork_call`, `__kmpc_barrier`), the way
//! clang-built programs call them. Side-by-side numbers against libomp and libgomp come from
//! `benches/compare.sh` (one clang-built binary on each runtime); this bench tracks our own
//! cost over time.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

// Link the library's rlib, which carries the ABI entries and the C shim.
use omp as _;

#[repr(C)]
struct Ident {
    r1: i32,
    flags: i32,
    r2: i32,
    r3: i32,
    psource: *const std::ffi::c_char,
}

static LOC: Ident = Ident { r1: 0, flags: 2, r2: 0, r3: 22, psource: c";unknown;unknown;0;0;;".as_ptr() };
// SAFETY: the ident is immutable static data, as clang emits it.
unsafe impl Sync for Ident {}

/// An outlined function as clang makes them (called with gtid, tid and the fork arguments).
type Microtask = unsafe extern "C" fn(*mut i32, *mut i32, *const u64);

unsafe extern "C" {
    fn __kmpc_fork_call(loc: *const Ident, argc: i32, f: Microtask, ...);
    fn __kmpc_barrier(loc: *const Ident, gtid: i32);
    fn __kmpc_push_num_threads(loc: *const Ident, gtid: i32, n: i32);
    fn __kmpc_global_thread_num(loc: *const Ident) -> i32;
}

unsafe extern "C" fn empty(_gtid: *mut i32, _tid: *mut i32, _: *const u64) {}

/// Runs `*iters` barriers on every thread of the team.
unsafe extern "C" fn barriers(gtid: *mut i32, _tid: *mut i32, iters: *const u64) {
    // SAFETY: the fork passes one argument, a pointer to the iteration count.
    let iters = unsafe { *iters };
    for _ in 0..iters {
        // SAFETY: gtid is the runtime's pointer to this thread's gtid.
        unsafe { __kmpc_barrier(&LOC, *gtid) };
    }
}

fn fork(n: i32, f: Microtask, arg: *const u64) {
    // SAFETY: plain ABI calls with valid arguments; `f` takes one pointer argument (or none).
    unsafe {
        let g = __kmpc_global_thread_num(&LOC);
        __kmpc_push_num_threads(&LOC, g, n);
        __kmpc_fork_call(&LOC, 1, f, arg);
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("fork_join");
    for n in [1, 2, 4] {
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            b.iter(|| fork(black_box(n), empty, std::ptr::null()))
        });
    }
    g.finish();
    let mut g = c.benchmark_group("barrier");
    for n in [2, 4] {
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            b.iter_custom(|iters| {
                let t0 = Instant::now();
                fork(n, barriers, &iters);
                t0.elapsed()
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
