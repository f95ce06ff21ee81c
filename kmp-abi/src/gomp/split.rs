//! The split fork gcc emitted before 4.9 (libgomp's first version node): `GOMP_parallel_start`
//! (or a `GOMP_parallel_loop_*_start` / `GOMP_parallel_sections_start`) starts the team, the
//! calling thread then runs the outlined function itself, and `GOMP_parallel_end` joins. The
//! region's description is boxed: it outlives the start, and the join hands it back.

use std::ffi::c_void;

use oxiomp_runtime::Thread;

use super::{Outlined, Region, Setup, loops, push_clauses, sched};

/// Starts the region as `call`: the workers run `func(data)` after `setup`; the calling
/// thread returns as the primary thread, its own setup done.
fn start(call: &str, func: Outlined, data: *mut c_void, num_threads: u32, setup: Setup) {
    let th = Thread::current();
    push_clauses(th, call, num_threads, 0);
    let r = Box::new(Region::new(func, data, setup));
    let req = r.request();
    // The region now belongs to the open fork; `GOMP_parallel_end` takes it back.
    let r = Box::leak(r);
    {
        let _entered = crate::ompt::frame::enter(th);
        oxiomp_runtime::fork_open(th, req);
    }
    r.begin_member(th);
}

/// `parallel` begins: the team runs `func(data)`; the caller runs it next, as the primary
/// thread, then calls [`GOMP_parallel_end`].
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_parallel_start(func: Outlined, data: *mut c_void, num_threads: u32) {
    start("GOMP_parallel_start", func, data, num_threads, Setup::None);
}

/// The region [`GOMP_parallel_start`] (or a combined start) began ends: the calling thread's
/// part has returned; the team joins.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_parallel_end() {
    let th = Thread::current();
    // The primary's part of the region ran in gcc's code: a `single nowait` it won ends here.
    oxiomp_runtime::worksharing::end_unmarked_single(th);
    match oxiomp_runtime::fork_close(th) {
        Some(data) => {
            // SAFETY: the only regions opened with `fork_open` are `start`'s, whose job data
            // is the leaked `Region` box; the close hands it back once, after the join, when
            // no member reads it any more.
            drop(unsafe { Box::from_raw(data as *mut Region) });
        }
        None => crate::misuse(
            "GOMP_parallel_end",
            "the calling thread is not the primary thread of a region GOMP_parallel_start began; \
             call ignored",
        ),
    }
}

/// `parallel sections` of `count` sections begins (ends with [`GOMP_parallel_end`]).
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_parallel_sections_start(
    func: Outlined,
    data: *mut c_void,
    num_threads: u32,
    count: u32,
) {
    start("GOMP_parallel_sections_start", func, data, num_threads, Setup::Sections(count));
}

macro_rules! parallel_loop_start {
    ($($name:ident => $sched:expr),* $(,)?) => {$(
        /// `parallel for` with this schedule begins: every member starts the loop (ends with
        /// [`GOMP_parallel_end`]).
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub extern "C" fn $name(
            func: Outlined,
            data: *mut c_void,
            num_threads: u32,
            start: i64,
            end: i64,
            incr: i64,
            chunk: i64,
        ) {
            let sched = $sched(chunk);
            let span = loops::Span::long(start, end, incr);
            self::start(stringify!($name), func, data, num_threads, Setup::Loop { sched, span, chunk });
        }
    )*};
}

parallel_loop_start!(
    GOMP_parallel_loop_static_start => loops::static_sched,
    GOMP_parallel_loop_dynamic_start => |_| sched::DYNAMIC,
    GOMP_parallel_loop_guided_start => |_| sched::GUIDED,
);

/// `parallel for schedule(runtime)` begins (ends with [`GOMP_parallel_end`]).
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_parallel_loop_runtime_start(
    func: Outlined,
    data: *mut c_void,
    num_threads: u32,
    start: i64,
    end: i64,
    incr: i64,
) {
    let span = loops::Span::long(start, end, incr);
    let setup = Setup::Loop { sched: sched::RUNTIME, span, chunk: 0 };
    self::start("GOMP_parallel_loop_runtime_start", func, data, num_threads, setup);
}
