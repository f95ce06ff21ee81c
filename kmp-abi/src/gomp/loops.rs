//! Worksharing loops and sections as gcc lowers them: `long` loops and `unsigned long long`
//! ones (`_ull`, with the direction given apart, the step of a downward loop negated), with
//! half-open bounds; ordered loops; doacross loops (over logical iteration numbers); the 5.0
//! starts that also take task reductions and a scratch block (`reduction.rs`).
//!
//! Every loop goes through the engine's dispatcher, which computes in 128 bits and hands
//! chunks out as 64-bit patterns: one path serves both types.

use super::reduction::{self, WsShared};
use super::sync::implied_barrier_of;
use super::*;

/// libomp's ordered schedule numbers.
mod ordered_sched {
    pub const STATIC_CHUNKED: i32 = 65;
    pub const STATIC: i32 = 66;
    pub const DYNAMIC: i32 = 67;
    pub const GUIDED: i32 = 68;
    pub const RUNTIME: i32 = 69;
    pub const AUTO: i32 = 70;
}

/// `schedule(static[, chunk])`: blocks when no chunk is given.
pub(super) fn static_sched(chunk: i64) -> i32 {
    if chunk > 0 { sched::STATIC_CHUNKED } else { sched::STATIC }
}

fn ordered_static(chunk: i64) -> i32 {
    if chunk > 0 { ordered_sched::STATIC_CHUNKED } else { ordered_sched::STATIC }
}

/// gcc's schedule numbers (`enum gomp_schedule_type`) as the 5.0 starts pass them: runtime 0,
/// static 1, dynamic 2, guided 3, auto 4, with the `monotonic` modifier in bit 31. Dynamic and
/// guided are nonmonotonic unless the modifier says otherwise (or the loop is ordered).
fn gfs_sched(gfs: i64, chunk: i64, ordered: bool) -> Option<i32> {
    let monotonic = gfs & 0x8000_0000 != 0 || ordered;
    let nonmonotonic = if monotonic { 0 } else { sched::NONMONOTONIC };
    Some(match (gfs & 0x7fff_ffff, ordered) {
        (0, false) => sched::RUNTIME,
        (0, true) => ordered_sched::RUNTIME,
        (1, false) => static_sched(chunk),
        (1, true) => ordered_static(chunk),
        (2, false) => sched::DYNAMIC | nonmonotonic,
        (2, true) => ordered_sched::DYNAMIC,
        (3, false) => sched::GUIDED | nonmonotonic,
        (3, true) => ordered_sched::GUIDED,
        (4, false) => sched::AUTO,
        (4, true) => ordered_sched::AUTO,
        _ => return None,
    })
}

/// A loop as gcc describes it, `start` up to (not including) `end` by `incr`, widened.
#[derive(Clone, Copy)]
pub(super) struct Span {
    start: i128,
    end: i128,
    incr: i128,
}

impl Span {
    pub(super) fn long(start: i64, end: i64, incr: i64) -> Span {
        Span { start: start as i128, end: end as i128, incr: incr as i128 }
    }

    /// An `unsigned long long` loop: `incr` holds the step's bits (negated when `!up`).
    fn ull(up: bool, start: u64, end: u64, incr: u64) -> Span {
        let incr = if up { incr as i128 } else { incr as i64 as i128 };
        Span { start: start as i128, end: end as i128, incr }
    }

    /// The logical iterations `0..n` of a doacross loop's outer dimension.
    fn count(n: i128) -> Span {
        Span { start: 0, end: n, incr: 1 }
    }
}

/// The calling thread joins the team's next loop.
pub(super) fn loop_init(th: Thread, sched: i32, span: Span, chunk: i64) {
    // gcc's end is exclusive, the engine's bound inclusive: one step short of it in the loop's
    // direction is the last value that may run (a zero-trip loop gets an empty range).
    let last = if span.incr > 0 { span.end - 1 } else { span.end + 1 };
    if !ws::dispatch_init(th, 0, sched, span.start, last, span.incr, chunk) {
        crate::misuse("GOMP_loop_*_start", "unknown schedule; the loop runs no iterations");
    }
}

/// A chunk size gcc passes as `unsigned long long`, for the engine.
fn ull_chunk(chunk: u64) -> i64 {
    chunk.min(i64::MAX as u64) as i64
}

/// The calling thread's next chunk as gcc takes it, `[*istart, *iend)`, in the bits of the
/// loop's type (`long` or `unsigned long long`); false when the loop has no more for it.
fn loop_next(th: Thread, istart: *mut i64, iend: *mut i64) -> bool {
    match ws::dispatch_next(th) {
        Some(c) => {
            let after = if c.stride > 0 { c.upper.wrapping_add(1) } else { c.upper.wrapping_sub(1) };
            // SAFETY: gcc passes pointers to its two bound variables.
            unsafe {
                *istart = c.lower;
                *iend = after;
            }
            true
        }
        None => false,
    }
}

/// The calling thread's next chunk of an ordered loop, its current chunk done (see
/// `ws::ordered_chunk_done`).
fn ordered_next(th: Thread, istart: *mut i64, iend: *mut i64) -> bool {
    ws::ordered_chunk_done(th);
    loop_next(th, istart, iend)
}

/// [`loop_next`] for an `unsigned long long` loop: the same bits.
fn ull_next(th: Thread, istart: *mut u64, iend: *mut u64) -> bool {
    loop_next(th, istart as *mut i64, iend as *mut i64)
}

fn ull_ordered_next(th: Thread, istart: *mut u64, iend: *mut u64) -> bool {
    ordered_next(th, istart as *mut i64, iend as *mut i64)
}

macro_rules! loop_entries {
    ($($start:ident, $next:ident => $sched:expr, $then:ident;)*) => {$(
        /// The calling thread starts a loop with this schedule and takes its first chunk.
        #[allow(non_snake_case)]
        #[unsafe(export_name = concat!("oxiomp_", stringify!($start)))]
        pub extern "C" fn $start(start: i64, end: i64, incr: i64, chunk: i64, istart: *mut i64, iend: *mut i64) -> bool {
            let th = Thread::current();
            loop_init(th, $sched(chunk), Span::long(start, end, incr), chunk);
            loop_next(th, istart, iend)
        }

        /// The calling thread's next chunk of its loop.
        #[unsafe(no_mangle)]
        pub extern "C" fn $next(istart: *mut i64, iend: *mut i64) -> bool {
            $then(Thread::current(), istart, iend)
        }
    )*};
}

macro_rules! loop_runtime_entries {
    ($($start:ident, $next:ident => $sched:expr, $then:ident;)*) => {$(
        /// The calling thread starts a `schedule(runtime)` loop and takes its first chunk.
        #[allow(non_snake_case)]
        #[unsafe(export_name = concat!("oxiomp_", stringify!($start)))]
        pub extern "C" fn $start(start: i64, end: i64, incr: i64, istart: *mut i64, iend: *mut i64) -> bool {
            let th = Thread::current();
            loop_init(th, $sched, Span::long(start, end, incr), 0);
            loop_next(th, istart, iend)
        }

        /// The calling thread's next chunk of its loop.
        #[unsafe(no_mangle)]
        pub extern "C" fn $next(istart: *mut i64, iend: *mut i64) -> bool {
            $then(Thread::current(), istart, iend)
        }
    )*};
}

macro_rules! ull_loop_entries {
    ($($start:ident, $next:ident => $sched:expr, $then:ident;)*) => {$(
        /// The calling thread starts an `unsigned long long` loop with this schedule and
        /// takes its first chunk.
        #[allow(non_snake_case)]
        #[unsafe(export_name = concat!("oxiomp_", stringify!($start)))]
        pub extern "C" fn $start(
            up: bool, start: u64, end: u64, incr: u64, chunk: u64, istart: *mut u64, iend: *mut u64,
        ) -> bool {
            let th = Thread::current();
            let chunk = ull_chunk(chunk);
            loop_init(th, $sched(chunk), Span::ull(up, start, end, incr), chunk);
            ull_next(th, istart, iend)
        }

        /// The calling thread's next chunk of its `unsigned long long` loop.
        #[unsafe(no_mangle)]
        pub extern "C" fn $next(istart: *mut u64, iend: *mut u64) -> bool {
            $then(Thread::current(), istart, iend)
        }
    )*};
}

macro_rules! ull_loop_runtime_entries {
    ($($start:ident, $next:ident => $sched:expr, $then:ident;)*) => {$(
        /// The calling thread starts an `unsigned long long` `schedule(runtime)` loop and
        /// takes its first chunk.
        #[allow(non_snake_case)]
        #[unsafe(export_name = concat!("oxiomp_", stringify!($start)))]
        pub extern "C" fn $start(
            up: bool, start: u64, end: u64, incr: u64, istart: *mut u64, iend: *mut u64,
        ) -> bool {
            let th = Thread::current();
            loop_init(th, $sched, Span::ull(up, start, end, incr), 0);
            ull_next(th, istart, iend)
        }

        /// The calling thread's next chunk of its `unsigned long long` loop.
        #[unsafe(no_mangle)]
        pub extern "C" fn $next(istart: *mut u64, iend: *mut u64) -> bool {
            $then(Thread::current(), istart, iend)
        }
    )*};
}

loop_entries! {
    GOMP_loop_static_start, GOMP_loop_static_next => static_sched, loop_next;
    GOMP_loop_dynamic_start, GOMP_loop_dynamic_next => |_| sched::DYNAMIC, loop_next;
    GOMP_loop_guided_start, GOMP_loop_guided_next => |_| sched::GUIDED, loop_next;
    GOMP_loop_nonmonotonic_dynamic_start, GOMP_loop_nonmonotonic_dynamic_next =>
        |_| sched::DYNAMIC | sched::NONMONOTONIC, loop_next;
    GOMP_loop_nonmonotonic_guided_start, GOMP_loop_nonmonotonic_guided_next =>
        |_| sched::GUIDED | sched::NONMONOTONIC, loop_next;
    GOMP_loop_ordered_static_start, GOMP_loop_ordered_static_next => ordered_static, ordered_next;
    GOMP_loop_ordered_dynamic_start, GOMP_loop_ordered_dynamic_next => |_| ordered_sched::DYNAMIC, ordered_next;
    GOMP_loop_ordered_guided_start, GOMP_loop_ordered_guided_next => |_| ordered_sched::GUIDED, ordered_next;
}

loop_runtime_entries! {
    GOMP_loop_runtime_start, GOMP_loop_runtime_next => sched::RUNTIME, loop_next;
    GOMP_loop_nonmonotonic_runtime_start, GOMP_loop_nonmonotonic_runtime_next => sched::RUNTIME, loop_next;
    GOMP_loop_maybe_nonmonotonic_runtime_start, GOMP_loop_maybe_nonmonotonic_runtime_next =>
        sched::RUNTIME, loop_next;
    GOMP_loop_ordered_runtime_start, GOMP_loop_ordered_runtime_next => ordered_sched::RUNTIME, ordered_next;
}

ull_loop_entries! {
    GOMP_loop_ull_static_start, GOMP_loop_ull_static_next => static_sched, ull_next;
    GOMP_loop_ull_dynamic_start, GOMP_loop_ull_dynamic_next => |_| sched::DYNAMIC, ull_next;
    GOMP_loop_ull_guided_start, GOMP_loop_ull_guided_next => |_| sched::GUIDED, ull_next;
    GOMP_loop_ull_nonmonotonic_dynamic_start, GOMP_loop_ull_nonmonotonic_dynamic_next =>
        |_| sched::DYNAMIC | sched::NONMONOTONIC, ull_next;
    GOMP_loop_ull_nonmonotonic_guided_start, GOMP_loop_ull_nonmonotonic_guided_next =>
        |_| sched::GUIDED | sched::NONMONOTONIC, ull_next;
    GOMP_loop_ull_ordered_static_start, GOMP_loop_ull_ordered_static_next => ordered_static, ull_ordered_next;
    GOMP_loop_ull_ordered_dynamic_start, GOMP_loop_ull_ordered_dynamic_next =>
        |_| ordered_sched::DYNAMIC, ull_ordered_next;
    GOMP_loop_ull_ordered_guided_start, GOMP_loop_ull_ordered_guided_next =>
        |_| ordered_sched::GUIDED, ull_ordered_next;
}

ull_loop_runtime_entries! {
    GOMP_loop_ull_runtime_start, GOMP_loop_ull_runtime_next => sched::RUNTIME, ull_next;
    GOMP_loop_ull_nonmonotonic_runtime_start, GOMP_loop_ull_nonmonotonic_runtime_next => sched::RUNTIME, ull_next;
    GOMP_loop_ull_maybe_nonmonotonic_runtime_start, GOMP_loop_ull_maybe_nonmonotonic_runtime_next =>
        sched::RUNTIME, ull_next;
    GOMP_loop_ull_ordered_runtime_start, GOMP_loop_ull_ordered_runtime_next =>
        ordered_sched::RUNTIME, ull_ordered_next;
}

/// The first chunk of a loop begun by a 5.0 start, if gcc asks for one (a null `istart`:
/// gcc divides a static loop itself and wanted the reductions or the scratch block only).
fn first_chunk(th: Thread, istart: *mut i64, iend: *mut i64) -> bool {
    istart.is_null() || loop_next(th, istart, iend)
}

/// The 5.0 start of a loop (`GOMP_loop_start` and its ordered and `ull` variants): `sched`
/// in gcc's numbers; with `reductions` every thread opens a taskgroup that holds the loop's
/// task reductions; with `mem` the team shares a zeroed block of `*mem` bytes (its address
/// returned in `*mem`). `divided_by_caller` (a null `istart`): gcc's code divides a static
/// loop itself, passing placeholder bounds, and ends it with `GOMP_loop_end*`.
#[allow(clippy::too_many_arguments)]
fn start_5(
    th: Thread,
    what: &str,
    span: Span,
    sched: i64,
    chunk: i64,
    ordered: bool,
    divided_by_caller: bool,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) {
    let kind = gfs_sched(sched, chunk, ordered).unwrap_or_else(|| {
        crate::misuse(what, format_args!("unknown schedule {sched:#x}; the loop is scheduled statically"));
        static_sched(chunk)
    });
    ws::end_unmarked_single(th);
    if !reductions.is_null() {
        reduction::workshare_taskgroup_begin(th);
    }
    if divided_by_caller {
        // gcc's placeholder bounds (the same on every thread) are what the checks compare.
        let last = if span.incr > 0 { span.end - 1 } else { span.end + 1 };
        ws::static_init_unbounded(th, 0, span.start, last, span.incr);
    } else {
        loop_init(th, kind, span, chunk);
    }
    WsShared::join(th, reductions, mem);
}

/// `for` with task reductions or a scratch block (gcc 9 and later): starts the loop, then
/// takes the first chunk when `istart` is not null.
///
/// # Safety
/// `reductions` is null or gcc's reduction array, `mem` null or its scratch size word.
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_loop_start")]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn GOMP_loop_start(
    start: i64,
    end: i64,
    incr: i64,
    sched: i64,
    chunk: i64,
    istart: *mut i64,
    iend: *mut i64,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    let th = Thread::current();
    let span = Span::long(start, end, incr);
    start_5(th, "GOMP_loop_start", span, sched, chunk, false, istart.is_null(), reductions, mem);
    first_chunk(th, istart, iend)
}

/// [`GOMP_loop_start`] for an ordered loop.
///
/// # Safety
/// As [`GOMP_loop_start`].
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_loop_ordered_start")]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn GOMP_loop_ordered_start(
    start: i64,
    end: i64,
    incr: i64,
    sched: i64,
    chunk: i64,
    istart: *mut i64,
    iend: *mut i64,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    let th = Thread::current();
    let span = Span::long(start, end, incr);
    start_5(th, "GOMP_loop_ordered_start", span, sched, chunk, true, istart.is_null(), reductions, mem);
    first_chunk(th, istart, iend)
}

/// [`GOMP_loop_start`] for an `unsigned long long` loop.
///
/// # Safety
/// As [`GOMP_loop_start`].
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_loop_ull_start")]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn GOMP_loop_ull_start(
    up: bool,
    start: u64,
    end: u64,
    incr: u64,
    sched: i64,
    chunk: u64,
    istart: *mut u64,
    iend: *mut u64,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    let th = Thread::current();
    let span = Span::ull(up, start, end, incr);
    let chunk = ull_chunk(chunk);
    start_5(th, "GOMP_loop_ull_start", span, sched, chunk, false, istart.is_null(), reductions, mem);
    first_chunk(th, istart as *mut i64, iend as *mut i64)
}

/// [`GOMP_loop_ordered_start`] for an `unsigned long long` loop.
///
/// # Safety
/// As [`GOMP_loop_start`].
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_loop_ull_ordered_start")]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn GOMP_loop_ull_ordered_start(
    up: bool,
    start: u64,
    end: u64,
    incr: u64,
    sched: i64,
    chunk: u64,
    istart: *mut u64,
    iend: *mut u64,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    let th = Thread::current();
    let span = Span::ull(up, start, end, incr);
    let chunk = ull_chunk(chunk);
    start_5(th, "GOMP_loop_ull_ordered_start", span, sched, chunk, true, istart.is_null(), reductions, mem);
    first_chunk(th, istart as *mut i64, iend as *mut i64)
}

/// An `ordered` region of the calling thread's current iteration begins: it waits for the
/// iterations before it.
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_ordered_start")]
pub extern "C" fn GOMP_ordered_start() {
    oxiomp_instrument::meet(|| oxiomp_instrument::Meet::plain(oxiomp_instrument::MeetKind::Ordered, 0));
    ws::ordered_enter_in_chunk(Thread::current());
}

#[unsafe(no_mangle)]
pub extern "C" fn GOMP_ordered_end() {
    ws::ordered_exit(Thread::current());
}

/// The calling thread joins a doacross loop whose dimensions have `counts` logical
/// iterations each, then the loop over the outer dimension's iterations.
fn doacross_init(th: Thread, counts: &[i64], sched: i32, chunk: i64) {
    let dims: Vec<ws::doacross::Dim> =
        counts.iter().map(|&n| ws::doacross::Dim { lo: 0, up: n, st: 1 }).collect();
    ws::doacross_init(th, &dims);
    loop_init(th, sched, Span::count(counts.first().map_or(0, |&n| n as i128)), chunk);
}

/// gcc's array of `n` iteration counts (or numbers), as the engine's signed ones (a count
/// beyond `i64::MAX`, which no loop of bits can hold, saturates).
///
/// # Safety
/// `counts` points at `n` words.
unsafe fn counts_of(counts: *const u64, n: usize, ull: bool) -> Vec<i64> {
    if counts.is_null() || n == 0 {
        return Vec::new();
    }
    // SAFETY: the caller's contract.
    let c = unsafe { std::slice::from_raw_parts(counts, n) };
    c.iter().map(|&x| if ull { x.min(i64::MAX as u64) as i64 } else { x as i64 }).collect()
}

macro_rules! doacross_entries {
    ($($name:ident => $sched:expr, $ty:ty, $ull:expr;)*) => {$(
        /// The calling thread starts a doacross loop (`ordered(n)` with `depend(sink)` /
        /// `depend(source)`) of `ncounts` dimensions and takes its first chunk of logical
        /// iterations of the outer one.
        ///
        /// # Safety
        /// `counts` holds `ncounts` iteration counts.
        #[allow(non_snake_case)]
        #[unsafe(export_name = concat!("oxiomp_", stringify!($name)))]
        pub unsafe extern "C" fn $name(
            ncounts: u32, counts: *const $ty, chunk: $ty, istart: *mut $ty, iend: *mut $ty,
        ) -> bool {
            let th = Thread::current();
            // SAFETY: the caller's contract.
            let c = unsafe { counts_of(counts as *const u64, ncounts as usize, $ull) };
            let chunk = (chunk as u64).min(i64::MAX as u64) as i64;
            doacross_init(th, &c, $sched(chunk), chunk);
            loop_next(th, istart as *mut i64, iend as *mut i64)
        }
    )*};
}

doacross_entries! {
    GOMP_loop_doacross_static_start => static_sched, i64, false;
    GOMP_loop_doacross_dynamic_start => |_| sched::DYNAMIC, i64, false;
    GOMP_loop_doacross_guided_start => |_| sched::GUIDED, i64, false;
    GOMP_loop_ull_doacross_static_start => static_sched, u64, true;
    GOMP_loop_ull_doacross_dynamic_start => |_| sched::DYNAMIC, u64, true;
    GOMP_loop_ull_doacross_guided_start => |_| sched::GUIDED, u64, true;
}

/// A doacross loop with `schedule(runtime)`.
///
/// # Safety
/// `counts` holds `ncounts` iteration counts.
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_loop_doacross_runtime_start")]
pub unsafe extern "C" fn GOMP_loop_doacross_runtime_start(
    ncounts: u32,
    counts: *const i64,
    istart: *mut i64,
    iend: *mut i64,
) -> bool {
    let th = Thread::current();
    // SAFETY: the caller's contract.
    let c = unsafe { counts_of(counts as *const u64, ncounts as usize, false) };
    doacross_init(th, &c, sched::RUNTIME, 0);
    loop_next(th, istart, iend)
}

/// A doacross loop of `unsigned long long` counts with `schedule(runtime)`.
///
/// # Safety
/// `counts` holds `ncounts` iteration counts.
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_loop_ull_doacross_runtime_start")]
pub unsafe extern "C" fn GOMP_loop_ull_doacross_runtime_start(
    ncounts: u32,
    counts: *const u64,
    istart: *mut u64,
    iend: *mut u64,
) -> bool {
    let th = Thread::current();
    // SAFETY: the caller's contract.
    let c = unsafe { counts_of(counts, ncounts as usize, true) };
    doacross_init(th, &c, sched::RUNTIME, 0);
    ull_next(th, istart, iend)
}

/// The 5.0 doacross start, with gcc's schedule number, task reductions and scratch block.
#[allow(clippy::too_many_arguments)]
fn doacross_start_5(
    th: Thread,
    what: &str,
    counts: &[i64],
    sched: i64,
    chunk: i64,
    istart: *mut i64,
    iend: *mut i64,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    let kind = gfs_sched(sched, chunk, false).unwrap_or_else(|| {
        crate::misuse(what, format_args!("unknown schedule {sched:#x}; the loop is scheduled statically"));
        static_sched(chunk)
    });
    ws::end_unmarked_single(th);
    if !reductions.is_null() {
        reduction::workshare_taskgroup_begin(th);
    }
    doacross_init(th, counts, kind, chunk);
    WsShared::join(th, reductions, mem);
    first_chunk(th, istart, iend)
}

/// `GOMP_loop_doacross_start`: a doacross loop with gcc's schedule number, task reductions
/// and scratch block (see [`GOMP_loop_start`]).
///
/// # Safety
/// `counts` holds `ncounts` iteration counts; `reductions` and `mem` as for
/// [`GOMP_loop_start`].
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_loop_doacross_start")]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn GOMP_loop_doacross_start(
    ncounts: u32,
    counts: *const i64,
    sched: i64,
    chunk: i64,
    istart: *mut i64,
    iend: *mut i64,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    let th = Thread::current();
    // SAFETY: the caller's contract.
    let c = unsafe { counts_of(counts as *const u64, ncounts as usize, false) };
    doacross_start_5(th, "GOMP_loop_doacross_start", &c, sched, chunk, istart, iend, reductions, mem)
}

/// [`GOMP_loop_doacross_start`] with `unsigned long long` counts.
///
/// # Safety
/// As [`GOMP_loop_doacross_start`].
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_loop_ull_doacross_start")]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn GOMP_loop_ull_doacross_start(
    ncounts: u32,
    counts: *const u64,
    sched: i64,
    chunk: u64,
    istart: *mut u64,
    iend: *mut u64,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    let th = Thread::current();
    // SAFETY: the caller's contract.
    let c = unsafe { counts_of(counts, ncounts as usize, true) };
    let (s, e) = (istart as *mut i64, iend as *mut i64);
    doacross_start_5(th, "GOMP_loop_ull_doacross_start", &c, sched, ull_chunk(chunk), s, e, reductions, mem)
}

/// `depend(source)`: the calling thread's current iteration, as logical numbers per
/// dimension, is done.
///
/// # Safety
/// `counts` holds one number per dimension of the loop.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_doacross_post(counts: *const i64) {
    let th = Thread::current();
    // SAFETY: the caller's contract.
    let v = unsafe { counts_of(counts as *const u64, ws::doacross_dims(th), false) };
    ws::doacross_post(th, &v);
}

/// [`GOMP_doacross_post`] for a loop of `unsigned long long` counts.
///
/// # Safety
/// As [`GOMP_doacross_post`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_doacross_ull_post(counts: *const u64) {
    let th = Thread::current();
    // SAFETY: the caller's contract.
    let v = unsafe { counts_of(counts, ws::doacross_dims(th), true) };
    ws::doacross_post(th, &v);
}

/// The dimensions of the calling thread's doacross loop, for the variadic
/// `GOMP_doacross_wait` of the C shim (which then passes them as an array).
#[unsafe(no_mangle)]
pub extern "C" fn oxiomp_gomp_doacross_dims() -> usize {
    let n = ws::doacross_dims(Thread::current());
    if n == 0 {
        crate::misuse("GOMP_doacross_wait", "not in a doacross loop; depend(sink) ignored");
    }
    n
}

/// `depend(sink: vec)` for the shim's `GOMP_doacross_wait` / `GOMP_doacross_ull_wait`: `n`
/// logical iteration numbers (`ull`: read as unsigned).
///
/// # Safety
/// `vec` holds `n` numbers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn oxiomp_gomp_doacross_wait(vec: *const u64, n: usize, ull: bool) {
    let th = Thread::current();
    // SAFETY: the caller's contract.
    let v = unsafe { counts_of(vec, n, ull) };
    // A number beyond `i64::MAX` lies outside every loop: satisfied at once.
    if ull && v.contains(&i64::MAX) {
        return;
    }
    ws::doacross_wait(th, &v, 0);
}

/// The calling thread leaves its loop (and its doacross state, and the shared state of a 5.0
/// start).
fn loop_leave(th: Thread) {
    ws::dispatch_deinit(th);
    ws::doacross_fini(th);
    ws::shared_leave(th);
}

/// The end of a loop: the calling thread leaves it, then waits for the team.
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_loop_end")]
pub extern "C" fn GOMP_loop_end() {
    let th = Thread::current();
    loop_leave(th);
    implied_barrier_of(th, false);
}

/// The end of a `nowait` loop: the calling thread leaves it.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_loop_end_nowait() {
    loop_leave(Thread::current());
}

/// The end of a loop in a cancellable region: true when the region was cancelled.
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_loop_end_cancel")]
pub extern "C" fn GOMP_loop_end_cancel() -> bool {
    let th = Thread::current();
    loop_leave(th);
    super::sync::implied_cancel_barrier_of(th, false)
}

/// A `sections` construct of `count` sections: the number (from 1) of the calling thread's
/// first section, 0 for none.
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_sections_start")]
pub extern "C" fn GOMP_sections_start(count: u32) -> u32 {
    let th = Thread::current();
    ws::sections_dispatch_init(th, 0, count as i32);
    next_section(th)
}

/// `sections` with task reductions or a scratch block (gcc 9 and later; see
/// [`GOMP_loop_start`]).
///
/// # Safety
/// `reductions` is null or gcc's reduction array, `mem` null or its scratch size word.
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_sections2_start")]
pub unsafe extern "C" fn GOMP_sections2_start(
    count: u32,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> u32 {
    let th = Thread::current();
    ws::end_unmarked_single(th);
    if !reductions.is_null() {
        reduction::workshare_taskgroup_begin(th);
    }
    ws::sections_dispatch_init(th, 0, count as i32);
    WsShared::join(th, reductions, mem);
    next_section(th)
}

/// The number of the calling thread's next section, 0 when none is left.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_sections_next() -> u32 {
    next_section(Thread::current())
}

fn next_section(th: Thread) -> u32 {
    ws::dispatch_next(th).map_or(0, |c| c.lower as u32 + 1)
}

/// The end of a `sections` construct, with its barrier.
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_sections_end")]
pub extern "C" fn GOMP_sections_end() {
    let th = Thread::current();
    sections_leave(th);
    implied_barrier_of(th, true);
}

/// The end of a `nowait` `sections` construct.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_sections_end_nowait() {
    sections_leave(Thread::current());
}

/// The end of a `sections` construct in a cancellable region: true when the region was
/// cancelled.
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_sections_end_cancel")]
pub extern "C" fn GOMP_sections_end_cancel() -> bool {
    let th = Thread::current();
    sections_leave(th);
    super::sync::implied_cancel_barrier_of(th, true)
}

fn sections_leave(th: Thread) {
    ws::dispatch_deinit(th);
    th.set_sections_open(false);
    ws::shared_leave(th);
}

/// `scope` with task reductions (gcc calls nothing for one without): every member opens the
/// taskgroup of the reductions; gcc ends it with `GOMP_workshare_task_reduction_unregister`.
///
/// # Safety
/// `reductions` is null or gcc's reduction array.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_scope_start(reductions: *mut usize) {
    let th = Thread::current();
    ws::end_unmarked_single(th);
    if reductions.is_null() {
        return;
    }
    reduction::workshare_taskgroup_begin(th);
    ws::begin_construct(th);
    WsShared::join(th, reductions, std::ptr::null_mut());
}
