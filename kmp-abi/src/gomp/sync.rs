//! Barriers, `single`, `critical` and the atomic lock.

use super::*;
use crate::Ident;
use oxiomp_instrument::{Meet, MeetKind};

/// A team barrier (an explicit `barrier`, or the end of a worksharing construct).
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_barrier")]
pub extern "C" fn GOMP_barrier() {
    barrier(Thread::current());
}

pub(super) fn barrier(th: Thread) {
    crate::sync::oxiomp_kmpc_barrier(std::ptr::null(), th.gtid());
}

/// An `ident_t` that names no place, with the flags clang gives a construct's implied barrier.
struct ImpliedBarrier(Ident);

// SAFETY: never written; its `psource` points to a static string.
unsafe impl Sync for ImpliedBarrier {}

const fn implied_barrier(flags: i32) -> ImpliedBarrier {
    ImpliedBarrier(Ident {
        reserved_1: 0,
        flags,
        reserved_2: 0,
        reserved_3: 0,
        psource: c";unknown;unknown;0;0;;".as_ptr(),
    })
}

/// The barrier that ends a `for` (clang's flags 0x42): `GOMP_loop_end`'s.
static LOOP_END: ImpliedBarrier = implied_barrier(0x42);
/// The barrier that ends a `sections` construct (0xC2): `GOMP_sections_end`'s.
static SECTIONS_END: ImpliedBarrier = implied_barrier(0xC2);

/// The `ident_t` of the barrier that ends a worksharing loop, or a `sections` construct if
/// `sections`.
fn implied(sections: bool) -> &'static Ident {
    if sections { &SECTIONS_END.0 } else { &LOOP_END.0 }
}

/// The barrier that ends a worksharing loop, or a `sections` construct if `sections`, marked
/// as clang marks it: a tool is told of an implicit worksharing barrier, a hang report names
/// it so.
pub(super) fn implied_barrier_of(th: Thread, sections: bool) {
    crate::sync::oxiomp_kmpc_barrier(implied(sections), th.gtid());
}

/// [`implied_barrier_of`] in a cancellable region: true when the region was cancelled.
pub(super) fn implied_cancel_barrier_of(th: Thread, sections: bool) -> bool {
    crate::sync::__kmpc_cancel_barrier(implied(sections), th.gtid()) != 0
}

/// `single`: true for the one thread that runs the block. gcc's code marks no end of the
/// block: it is traced until the thread's next barrier or worksharing construct (see
/// `ws::single_begin_unmarked`).
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_single_start")]
pub extern "C" fn GOMP_single_start() -> bool {
    let th = Thread::current();
    ws::end_unmarked_single(th);
    oxiomp_instrument::meet(|| Meet::plain(MeetKind::Single, 0));
    let won = oxiomp_runtime::team::single(th);
    if won {
        ws::single_begin_unmarked(th, 0);
    } else {
        crate::sync::single_other();
    }
    won
}

/// `single copyprivate`: null for the thread that runs the block (it then calls
/// [`GOMP_single_copy_end`], which ends the block); the others wait for it and get its data
/// block.
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_single_copy_start")]
pub extern "C" fn GOMP_single_copy_start() -> *mut c_void {
    let th = Thread::current();
    ws::end_unmarked_single(th);
    oxiomp_instrument::meet(|| Meet::plain(MeetKind::Single, 0));
    if oxiomp_runtime::team::single(th) {
        ws::single_begin_unmarked(th, 0);
        return std::ptr::null_mut();
    }
    crate::sync::single_other();
    let _entered = crate::ompt::frame::enter(th);
    ws::copyprivate_light(th, std::ptr::null_mut())
}

/// The thread that ran a `single copyprivate` block hands its data block to the others (gcc's
/// code then brings a barrier that keeps it alive while they copy).
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_single_copy_end(data: *mut c_void) {
    let th = Thread::current();
    ws::end_unmarked_single(th);
    let _entered = crate::ompt::frame::enter(th);
    ws::copyprivate_light(th, data);
}

/// The lock of every unnamed `critical` section.
static UNNAMED: CriticalName = CriticalName::new();

/// An unnamed `critical` section begins.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_critical_start() {
    critical(&UNNAMED, true);
}

#[unsafe(no_mangle)]
pub extern "C" fn GOMP_critical_end() {
    critical(&UNNAMED, false);
}

/// A named `critical` section begins: `slot` is gcc's 8-byte, zero-initialised
/// `.gomp_critical_user_<name>`, shared by every object naming the section. It comes to hold
/// a pointer to the section's lock (made on first use, never freed).
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_critical_name_start(slot: *mut *mut c_void) {
    critical(named(slot), true);
}

#[unsafe(no_mangle)]
pub extern "C" fn GOMP_critical_name_end(slot: *mut *mut c_void) {
    critical(named(slot), false);
}

fn named(slot: *mut *mut c_void) -> &'static CriticalName {
    // SAFETY: gcc passes its pointer-sized, pointer-aligned common symbol, which only this
    // runtime writes; it lives as long as the program.
    let slot = unsafe { AtomicPtr::from_ptr(slot as *mut *mut CriticalName) };
    // Acquire: pairs with the installing CAS below (the name's zeroed state is visible).
    let p = slot.load(Ordering::Acquire);
    if !p.is_null() {
        // SAFETY: installed below, never freed.
        return unsafe { &*p };
    }
    let mine = Box::into_raw(Box::new(CriticalName::new()));
    // AcqRel: publishes our name, or sees the one another thread installed first.
    match slot.compare_exchange(std::ptr::null_mut(), mine, Ordering::AcqRel, Ordering::Acquire) {
        // SAFETY: just installed; never freed.
        Ok(_) => unsafe { &*mine },
        Err(theirs) => {
            // SAFETY: ours was never shared.
            drop(unsafe { Box::from_raw(mine) });
            // SAFETY: installed by the winner, never freed.
            unsafe { &*theirs }
        }
    }
}

fn critical(name: &'static CriticalName, enter: bool) {
    let gtid = Thread::current().gtid();
    let p = name as *const CriticalName as *mut CriticalName;
    // SAFETY: a name that lives as long as the program, zero-initialised, as the entries take.
    unsafe {
        if enter {
            crate::sync::__kmpc_critical(std::ptr::null(), gtid, p);
        } else {
            crate::sync::__kmpc_end_critical(std::ptr::null(), gtid, p);
        }
    }
}

unsafe extern "C" {
    fn __kmpc_atomic_start();
    fn __kmpc_atomic_end();
}

/// An `atomic` construct gcc cannot do lock-free (and its multi-variable reductions): one
/// lock for the whole process, the one libomp's `__kmpc_atomic_start` takes.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_atomic_start() {
    // SAFETY: the shim's lock entry, no arguments.
    unsafe { __kmpc_atomic_start() }
}

#[unsafe(no_mangle)]
pub extern "C" fn GOMP_atomic_end() {
    // SAFETY: as above.
    unsafe { __kmpc_atomic_end() }
}

/// A barrier of a cancellable region: true on every thread when the region was cancelled.
pub(super) fn cancel_barrier(th: Thread) -> bool {
    crate::sync::__kmpc_cancel_barrier(std::ptr::null(), th.gtid()) != 0
}

/// An explicit barrier in a cancellable region: true when the region was cancelled.
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_barrier_cancel")]
pub extern "C" fn GOMP_barrier_cancel() -> bool {
    cancel_barrier(Thread::current())
}

/// gcc's construct bits (`GOMP_CANCEL_*`) as libomp's cancel kinds; None for another value.
fn cancel_kind(which: i32) -> Option<i32> {
    match which {
        1 => Some(ws::cancel::PARALLEL),
        2 => Some(ws::cancel::LOOP),
        4 => Some(ws::cancel::SECTIONS),
        8 => Some(ws::cancel::TASKGROUP),
        _ => None,
    }
}

/// `cancel` of the innermost construct of kind `which` (`do_cancel` false: the `if` clause
/// was false, and this is a cancellation point): true when it is cancelled, and the calling
/// thread then leaves it.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_cancel(which: i32, do_cancel: bool) -> bool {
    let Some(kind) = cancel_kind(which) else {
        crate::misuse("GOMP_cancel", format_args!("unknown construct {which}; ignored"));
        return false;
    };
    let th = Thread::current();
    let cancelled = if do_cancel {
        crate::sync::__kmpc_cancel(std::ptr::null(), th.gtid(), kind) != 0
    } else {
        crate::sync::__kmpc_cancellationpoint(std::ptr::null(), th.gtid(), kind) != 0
    };
    leaving(th, kind, cancelled)
}

/// A thread leaving a cancelled region passes the region's cancellation barrier, as clang's
/// code does on that path (gcc's code leaves the region at once): the team's other threads,
/// waiting in a cancellation barrier, count on it.
fn leaving(th: Thread, kind: i32, cancelled: bool) -> bool {
    if cancelled && kind == ws::cancel::PARALLEL {
        cancel_barrier(th);
    }
    cancelled
}

/// `cancellation point` for constructs of kind `which`: true when such a construct was
/// cancelled.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_cancellation_point(which: i32) -> bool {
    let Some(kind) = cancel_kind(which) else {
        crate::misuse("GOMP_cancellation_point", format_args!("unknown construct {which}; ignored"));
        return false;
    };
    let th = Thread::current();
    let cancelled = crate::sync::__kmpc_cancellationpoint(std::ptr::null(), th.gtid(), kind) != 0;
    leaving(th, kind, cancelled)
}
