//! Loops: `__kmpc_for_static_init_*`, `__kmpc_dispatch_*`, ordered, and the
//! `__kmpc_sections_*` entries. Each type variant converts its bounds to the engine's i128
//! arithmetic and back (with the type's wrap-around).

use oxiomp_instrument::{Meet, MeetKind};
use oxiomp_runtime::Thread;
use oxiomp_runtime::worksharing::{self as ws, StaticKind};

use crate::{Ident, misuse};

/// Writes a static chunk back through clang's out-parameters, in the loop's own types.
macro_rules! store_chunk {
    ($c:expr, $plast:expr, $plower:expr, $pupper:expr, $pstride:expr, $t:ty, $st:ty) => {{
        *$plower = $c.lower as $t;
        *$pupper = $c.upper as $t;
        *$pstride = $c.stride as $st;
        if !$plast.is_null() {
            *$plast = $c.last as i32;
        }
    }};
}

/// The static and dispatch loop inits, `single`, `ordered` and the barrier are entered through
/// `shim/caller.c`, which notes the program's return address for the run-time checks, then
/// calls the body here, named `oxiomp_kmpc_...` for `__kmpc_...`.
macro_rules! static_init {
    ($name:ident, $t:ty, $st:ty) => {
        /// The body of the `__kmpc_` entry of the same name (`shim/caller.c`).
        ///
        /// # Safety
        /// The out-pointers are valid, as clang passes them.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            loc: *const Ident,
            gtid: i32,
            sched: i32,
            plast: *mut i32,
            plower: *mut $t,
            pupper: *mut $t,
            pstride: *mut $st,
            incr: $st,
            chunk: $st,
        ) {
            // SAFETY: clang passes valid, initialised out-parameters.
            let (lb, ub) = unsafe { (*plower as i128, *pupper as i128) };
            let what = StaticKind::from_ident_flags(Ident::flags(loc));
            let th = Thread::from_gtid(gtid);
            let c = ws::static_init(th, what, loc as usize, sched, lb, ub, incr as i128, chunk as i128);
            // SAFETY: as above.
            unsafe { store_chunk!(c, plast, plower, pupper, pstride, $t, $st) };
        }
    };
}

static_init!(oxiomp_kmpc_for_static_init_4, i32, i32);
static_init!(oxiomp_kmpc_for_static_init_4u, u32, i32);
static_init!(oxiomp_kmpc_for_static_init_8, i64, i64);
static_init!(oxiomp_kmpc_for_static_init_8u, u64, i64);

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_for_static_fini(loc: *const Ident, gtid: i32) {
    ws::static_fini(Thread::from_gtid(gtid), StaticKind::from_ident_flags(Ident::flags(loc)));
}

macro_rules! dist_for_static_init {
    ($name:ident, $t:ty, $st:ty) => {
        /// # Safety
        /// The out-pointers are valid, as for `__kmpc_for_static_init_*`.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(
            loc: *const Ident,
            gtid: i32,
            sched: i32,
            plast: *mut i32,
            plower: *mut $t,
            pupper: *mut $t,
            pupper_dist: *mut $t,
            pstride: *mut $st,
            incr: $st,
            chunk: $st,
        ) {
            // SAFETY: valid, initialised out-parameters.
            let (lb, ub) = unsafe { (*plower as i128, *pupper as i128) };
            let th = Thread::from_gtid(gtid);
            let (c, team_ub) =
                ws::dist_for_static_init(th, loc as usize, sched, lb, ub, incr as i128, chunk as i128);
            // SAFETY: as above.
            unsafe {
                store_chunk!(c, plast, plower, pupper, pstride, $t, $st);
                if !pupper_dist.is_null() {
                    *pupper_dist = team_ub as $t;
                }
            }
        }
    };
}

dist_for_static_init!(__kmpc_dist_for_static_init_4, i32, i32);
dist_for_static_init!(__kmpc_dist_for_static_init_4u, u32, i32);
dist_for_static_init!(__kmpc_dist_for_static_init_8, i64, i64);
dist_for_static_init!(__kmpc_dist_for_static_init_8u, u64, i64);

macro_rules! team_static_init {
    ($name:ident, $t:ty, $st:ty) => {
        /// # Safety
        /// The out-pointers are valid.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            _loc: *const Ident,
            gtid: i32,
            plast: *mut i32,
            plower: *mut $t,
            pupper: *mut $t,
            pstride: *mut $st,
            incr: $st,
            chunk: $st,
        ) {
            // SAFETY: valid, initialised out-parameters.
            let (lb, ub) = unsafe { (*plower as i128, *pupper as i128) };
            let c = ws::team_static_init(Thread::from_gtid(gtid), lb, ub, incr as i128, chunk as i128);
            // SAFETY: as above.
            unsafe { store_chunk!(c, plast, plower, pupper, pstride, $t, $st) };
        }
    };
}

team_static_init!(__kmpc_team_static_init_4, i32, i32);
team_static_init!(__kmpc_team_static_init_4u, u32, i32);
team_static_init!(__kmpc_team_static_init_8, i64, i64);
team_static_init!(__kmpc_team_static_init_8u, u64, i64);

macro_rules! dispatch {
    ($init:ident, $entry:literal, $next:ident, $fini:ident, $t:ty, $st:ty) => {
        /// The body of `__kmpc_dispatch_init_*` (`shim/caller.c`).
        #[unsafe(no_mangle)]
        pub extern "C" fn $init(
            loc: *const Ident,
            gtid: i32,
            sched: i32,
            lb: $t,
            ub: $t,
            st: $st,
            chunk: $st,
        ) {
            if !ws::dispatch_init(
                Thread::from_gtid(gtid),
                loc as usize,
                sched,
                lb as i128,
                ub as i128,
                st as i128,
                chunk as i64,
            ) {
                misuse($entry, "unknown schedule type; the loop runs no iterations");
            }
        }

        /// # Safety
        /// The out-pointers are valid, as clang passes them.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $next(
            _loc: *const Ident,
            gtid: i32,
            plast: *mut i32,
            plower: *mut $t,
            pupper: *mut $t,
            pstride: *mut $st,
        ) -> i32 {
            match ws::dispatch_next(Thread::from_gtid(gtid)) {
                Some(c) => {
                    // SAFETY: clang passes valid out-parameters.
                    unsafe {
                        *plower = c.lower as $t;
                        *pupper = c.upper as $t;
                        if !pstride.is_null() {
                            *pstride = c.stride as $st;
                        }
                        if !plast.is_null() {
                            *plast = c.last as i32;
                        }
                    }
                    1
                }
                None => 0,
            }
        }

        #[unsafe(no_mangle)]
        pub extern "C" fn $fini(_loc: *const Ident, gtid: i32) {
            ws::dispatch_fini(Thread::from_gtid(gtid));
        }
    };
}

dispatch!(
    oxiomp_kmpc_dispatch_init_4,
    "__kmpc_dispatch_init_4",
    __kmpc_dispatch_next_4,
    __kmpc_dispatch_fini_4,
    i32,
    i32
);
dispatch!(
    oxiomp_kmpc_dispatch_init_4u,
    "__kmpc_dispatch_init_4u",
    __kmpc_dispatch_next_4u,
    __kmpc_dispatch_fini_4u,
    u32,
    i32
);
dispatch!(
    oxiomp_kmpc_dispatch_init_8,
    "__kmpc_dispatch_init_8",
    __kmpc_dispatch_next_8,
    __kmpc_dispatch_fini_8,
    i64,
    i64
);
dispatch!(
    oxiomp_kmpc_dispatch_init_8u,
    "__kmpc_dispatch_init_8u",
    __kmpc_dispatch_next_8u,
    __kmpc_dispatch_fini_8u,
    u64,
    i64
);

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_dispatch_deinit(_loc: *const Ident, gtid: i32) {
    ws::dispatch_deinit(Thread::from_gtid(gtid));
}

/// The body of `__kmpc_ordered` (`shim/caller.c`).
#[unsafe(no_mangle)]
pub extern "C" fn oxiomp_kmpc_ordered(loc: *const Ident, gtid: i32) {
    oxiomp_instrument::meet(|| Meet::plain(MeetKind::Ordered, loc as usize));
    ws::ordered_enter(Thread::from_gtid(gtid));
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_end_ordered(_loc: *const Ident, gtid: i32) {
    ws::ordered_exit(Thread::from_gtid(gtid));
}

/// The `sections` entries of libomp's newer interface (clang-19 lowers `sections` to a static
/// loop instead): `init`, then `next_section(n)` until it returns `n`, then `end_sections`.
/// The sections are handed out like a `dynamic,1` loop over `0..n`, which starts at the first
/// `next_section` (the count is only known there).
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_sections_init(_loc: *const Ident, gtid: i32) -> i32 {
    Thread::from_gtid(gtid).set_sections_open(false);
    0
}

/// The next section for this thread, `n` when there is none left.
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_next_section(loc: *const Ident, gtid: i32, n: i32) -> i32 {
    let th = Thread::from_gtid(gtid);
    if !th.sections_open() {
        ws::sections_dispatch_init(th, loc as usize, n);
    }
    match ws::dispatch_next(th) {
        Some(c) => c.lower as i32,
        None => n,
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_end_sections(_loc: *const Ident, gtid: i32) {
    let th = Thread::from_gtid(gtid);
    if th.sections_open() {
        ws::dispatch_deinit(th);
        th.set_sections_open(false);
    }
}
