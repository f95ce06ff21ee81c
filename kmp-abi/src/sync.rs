//! Barriers, flushes, single/master/masked, critical, reductions, copyprivate, cancellation.

use std::ffi::c_void;

use oxiomp_instrument::{Meet, MeetKind, MutexOp, State, ToolEvent, cancel_flags, mutex_kind, work_kind};
use oxiomp_runtime::Thread;
use oxiomp_runtime::lock::CriticalName;
use oxiomp_runtime::worksharing::{self as ws, ReduceFn};

use crate::Ident;

/// The body of `__kmpc_barrier` (entered through `shim/caller.c`, which notes the program's
/// return address for the run-time checks).
#[unsafe(no_mangle)]
pub extern "C" fn oxiomp_kmpc_barrier(loc: *const Ident, gtid: i32) {
    oxiomp_instrument::meet(|| Meet::plain(MeetKind::Barrier, loc as usize));
    let th = Thread::from_gtid(gtid);
    let _entered = crate::ompt::frame::enter(th);
    th.team().barrier_as(th, Ident::barrier_kind(loc));
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_flush(_loc: *const Ident) {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    oxiomp_instrument::tool(|| ToolEvent::Flush);
}

/// `single`: 1 for the one thread that executes the block. The body of `__kmpc_single`
/// (`shim/caller.c`).
#[unsafe(no_mangle)]
pub extern "C" fn oxiomp_kmpc_single(loc: *const Ident, gtid: i32) -> i32 {
    oxiomp_instrument::meet(|| Meet::plain(MeetKind::Single, loc as usize));
    let won = oxiomp_runtime::team::single(Thread::from_gtid(gtid));
    if won {
        oxiomp_instrument::worksharing_enter(
            oxiomp_instrument::Worksharing::Single,
            loc as usize,
            State::Single,
        );
    } else {
        single_other();
    }
    won as i32
}

/// The part of a `single` construct of a thread that does not run the block (the trace has
/// none): a tool sees it begin and end.
#[inline]
pub(crate) fn single_other() {
    oxiomp_instrument::tool(|| ToolEvent::Work { kind: work_kind::SINGLE_OTHER, begin: true, count: 1 });
    oxiomp_instrument::tool(|| ToolEvent::Work { kind: work_kind::SINGLE_OTHER, begin: false, count: 1 });
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_end_single(_loc: *const Ident, _gtid: i32) {
    oxiomp_instrument::worksharing_leave(State::Single, oxiomp_instrument::Worksharing::Single);
}

/// `master`: 1 on the primary thread.
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_master(_loc: *const Ident, gtid: i32) -> i32 {
    let mine = Thread::from_gtid(gtid).tid() == 0;
    if mine {
        oxiomp_instrument::tool(|| ToolEvent::Masked { begin: true });
    }
    mine as i32
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_end_master(_loc: *const Ident, _gtid: i32) {
    oxiomp_instrument::tool(|| ToolEvent::Masked { begin: false });
}

/// `scope` (libomp's entry; clang 19 does not compile the construct yet): a worksharing
/// construct whose block every thread runs, which a tool sees begin.
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_scope(_loc: *const Ident, _gtid: i32, _reserved: *mut c_void) {
    oxiomp_instrument::tool(|| ToolEvent::Work { kind: work_kind::SCOPE, begin: true, count: 1 });
}

/// The end of [`__kmpc_scope`]'s block (its barrier, unless `nowait`, is a call of its own).
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_end_scope(_loc: *const Ident, _gtid: i32, _reserved: *mut c_void) {
    oxiomp_instrument::tool(|| ToolEvent::Work { kind: work_kind::SCOPE, begin: false, count: 1 });
}

/// `masked filter(f)`: 1 on thread `f`.
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_masked(_loc: *const Ident, gtid: i32, filter: i32) -> i32 {
    let mine = Thread::from_gtid(gtid).tid() as i32 == filter;
    if mine {
        oxiomp_instrument::tool(|| ToolEvent::Masked { begin: true });
    }
    mine as i32
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_end_masked(_loc: *const Ident, _gtid: i32) {
    oxiomp_instrument::tool(|| ToolEvent::Masked { begin: false });
}

/// # Safety
/// `crit` points to the compiler's zero-initialised 32-byte `kmp_critical_name`.
///
/// The common case (tracing off, the section free) needs no stack frame: one flag load, one
/// pointer load and a CAS, then a return; everything else is a tail call to the cold path.
/// (With the slow path inlined, the entry saved and restored four registers around the
/// CAS: single-threaded, a section around a 0.1 us body cost ~10 ns more than the same
/// lock code without them.)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_critical(_loc: *const Ident, gtid: i32, crit: *mut CriticalName) {
    // The gtid clang passes is the one this runtime gave the calling thread (from
    // __kmpc_global_thread_num or the microtask's argument), so no thread-local lookup.
    // SAFETY: the compiler passes its static, 8-aligned, zeroed 32-byte name object.
    if !oxiomp_instrument::enabled() && unsafe { &*crit }.try_enter(gtid) {
        return;
    }
    // SAFETY: forwarded.
    unsafe { critical_slow(gtid, crit) }
}

/// `__kmpc_critical` when tracing, on first use of the name, under contention or misuse.
#[cold]
#[inline(never)]
unsafe fn critical_slow(gtid: i32, crit: *mut CriticalName) {
    // SAFETY: as in `__kmpc_critical`.
    let name = unsafe { &*crit };
    // Traced and taken at once: the acquisition is an instant in the trace (one clock read
    // after the lock was taken, for its three events). Untraced, the fast path tried already.
    oxiomp_instrument::mutex(MutexOp::Acquire, mutex_kind::CRITICAL, crit as usize);
    if oxiomp_instrument::enabled() && name.try_enter(gtid) {
        oxiomp_instrument::pass_into(State::CriticalAcquiring, State::CriticalSection);
        oxiomp_instrument::mutex(MutexOp::Acquired, mutex_kind::CRITICAL, crit as usize);
        return;
    }
    oxiomp_instrument::critical_acquiring_enter();
    let r = name.enter(gtid);
    if let Err(e) = r {
        crate::fatal("__kmpc_critical", e);
    }
    oxiomp_instrument::switch(State::CriticalAcquiring, State::CriticalSection);
    oxiomp_instrument::mutex(MutexOp::Acquired, mutex_kind::CRITICAL, crit as usize);
}

/// # Safety
/// As for [`__kmpc_critical`]; the hint only states the expected contention.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_critical_with_hint(
    loc: *const Ident,
    gtid: i32,
    crit: *mut CriticalName,
    _hint: u32,
) {
    // SAFETY: forwarded.
    unsafe { __kmpc_critical(loc, gtid, crit) }
}

/// # Safety
/// As for [`__kmpc_critical`], whose fast path this mirrors.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_end_critical(_loc: *const Ident, gtid: i32, crit: *mut CriticalName) {
    // SAFETY: as in __kmpc_critical.
    if !oxiomp_instrument::enabled() && unsafe { &*crit }.try_exit(gtid) {
        return;
    }
    // SAFETY: forwarded.
    unsafe { end_critical_slow(gtid, crit) }
}

/// `__kmpc_end_critical` when tracing, with a sleeping waiter to wake, or on misuse.
#[cold]
#[inline(never)]
unsafe fn end_critical_slow(gtid: i32, crit: *mut CriticalName) {
    // SAFETY: as in __kmpc_critical.
    let name = unsafe { &*crit };
    // Traced, with nobody asleep on the lock: the release is an instant in the trace,
    // stamped while the lock is still held (stamped after, the next holder's section could
    // begin in the trace before this one ends).
    if oxiomp_instrument::enabled() && name.held_uncontended_by(gtid) {
        oxiomp_instrument::pass_out(State::CriticalSection, State::CriticalReleasing);
        if !name.try_exit(gtid)
            && let Err(e) = name.exit(gtid)
        {
            // A waiter went to sleep meanwhile: `exit` wakes it.
            crate::misuse("__kmpc_end_critical", e);
        }
        oxiomp_instrument::mutex(MutexOp::Released, mutex_kind::CRITICAL, crit as usize);
        return;
    }
    // A thread that is not inside records nothing: it never entered the section's state.
    if !name.held_by(gtid) {
        return crate::misuse("__kmpc_end_critical", oxiomp_runtime::lock::NOT_INSIDE);
    }
    oxiomp_instrument::switch(State::CriticalSection, State::CriticalReleasing);
    if let Err(e) = name.exit(gtid) {
        crate::misuse("__kmpc_end_critical", e);
    }
    oxiomp_instrument::mutex(MutexOp::Released, mutex_kind::CRITICAL, crit as usize);
    oxiomp_instrument::critical_releasing_exit();
}

/// The lock of a reduction: the name object the compiler passed (clang always passes one),
/// or one of the runtime's for a null pointer.
fn reduce_lock<'a>(lck: *mut CriticalName) -> &'a CriticalName {
    static NONE_GIVEN: CriticalName = CriticalName::new();
    // SAFETY: the compiler passes its static, 8-aligned, zeroed 32-byte name object, or null.
    unsafe { lck.as_ref() }.unwrap_or(&NONE_GIVEN)
}

/// # Safety
/// `data` is this thread's reduce list for `func`, as clang builds them.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_reduce_nowait(
    loc: *const Ident,
    gtid: i32,
    _num_vars: i32,
    _size: usize,
    data: *mut c_void,
    func: ReduceFn,
    lck: *mut CriticalName,
) -> i32 {
    let th = Thread::from_gtid(gtid);
    let _entered = crate::ompt::frame::enter(th);
    // SAFETY: forwarded from the caller.
    let r = unsafe { ws::reduce(th, Ident::flags(loc), data, func, reduce_lock(lck)) };
    r.unwrap_or_else(|e| crate::fatal("__kmpc_reduce", e)) as i32
}

/// # Safety
/// As for [`__kmpc_reduce_nowait`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_reduce(
    loc: *const Ident,
    gtid: i32,
    num_vars: i32,
    size: usize,
    data: *mut c_void,
    func: ReduceFn,
    lck: *mut CriticalName,
) -> i32 {
    // The construct's own barrier follows in clang's code, so the blocking form needs no more.
    // SAFETY: forwarded.
    unsafe { __kmpc_reduce_nowait(loc, gtid, num_vars, size, data, func, lck) }
}

/// # Safety
/// `lck` is the name object the compiler passed to `__kmpc_reduce_nowait`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_end_reduce_nowait(_loc: *const Ident, gtid: i32, lck: *mut CriticalName) {
    let th = Thread::from_gtid(gtid);
    let _entered = crate::ompt::frame::enter(th);
    if let Err(e) = ws::end_reduce(th, reduce_lock(lck)) {
        crate::misuse("__kmpc_end_reduce_nowait", e);
    }
}

/// # Safety
/// `lck` is the name object the compiler passed to `__kmpc_reduce`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_end_reduce(_loc: *const Ident, gtid: i32, lck: *mut CriticalName) {
    let th = Thread::from_gtid(gtid);
    let _entered = crate::ompt::frame::enter(th);
    if let Err(e) = ws::end_reduce(th, reduce_lock(lck)) {
        crate::misuse("__kmpc_end_reduce", e);
    }
}

/// # Safety
/// `data` is this thread's list of pointers for `func`, as clang builds them.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_copyprivate(
    _loc: *const Ident,
    gtid: i32,
    _size: usize,
    data: *mut c_void,
    func: ReduceFn,
    didit: i32,
) {
    let th = Thread::from_gtid(gtid);
    let _entered = crate::ompt::frame::enter(th);
    // SAFETY: forwarded.
    unsafe { ws::copyprivate(th, data, func, didit != 0) }
}

/// The light copyprivate: returns the single thread's `data` to every thread after a barrier.
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_copyprivate_light(_loc: *const Ident, gtid: i32, data: *mut c_void) -> *mut c_void {
    let th = Thread::from_gtid(gtid);
    let _entered = crate::ompt::frame::enter(th);
    ws::copyprivate_light(th, data)
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_cancel(_loc: *const Ident, gtid: i32, kind: i32) -> i32 {
    let activated = ws::cancel(Thread::from_gtid(gtid), kind);
    if activated {
        cancel_tool(cancel_flags::ACTIVATED, kind);
    }
    activated as i32
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_cancellationpoint(_loc: *const Ident, gtid: i32, kind: i32) -> i32 {
    let detected = ws::cancellation_point(Thread::from_gtid(gtid), kind);
    if detected {
        cancel_tool(cancel_flags::DETECTED, kind);
    }
    detected as i32
}

/// Tells a tool of a cancellation (`how`: activated or detected) of construct `kind` (clang's
/// `kmp_cancel_kind_t`: 1 parallel, 2 loop, 3 sections, 4 taskgroup).
fn cancel_tool(how: u32, kind: i32) {
    let what = match kind {
        1 => cancel_flags::PARALLEL,
        2 => cancel_flags::LOOP,
        3 => cancel_flags::SECTIONS,
        _ => cancel_flags::TASKGROUP,
    };
    oxiomp_instrument::tool_checked(|| ToolEvent::Cancel { flags: how | what, task: 0 });
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_cancel_barrier(loc: *const Ident, gtid: i32) -> i32 {
    let th = Thread::from_gtid(gtid);
    let _entered = crate::ompt::frame::enter(th);
    let cancelled = ws::cancel_barrier(th, Ident::barrier_kind(loc));
    if cancelled {
        cancel_tool(cancel_flags::DETECTED, 1);
    }
    cancelled as i32
}

/// A split barrier: everybody arrives; the primary thread returns 1 at once and runs its block,
/// the others return 0 only when it calls `__kmpc_end_barrier_master`.
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_barrier_master(loc: *const Ident, gtid: i32) -> i32 {
    let th = Thread::from_gtid(gtid);
    let _entered = crate::ompt::frame::enter(th);
    let (team, tid) = (th.team(), th.tid());
    team.barrier_as(th, Ident::barrier_kind(loc));
    if tid == 0 {
        return 1;
    }
    team.barrier_as(th, Ident::barrier_kind(loc));
    0
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_end_barrier_master(loc: *const Ident, gtid: i32) {
    let th = Thread::from_gtid(gtid);
    let _entered = crate::ompt::frame::enter(th);
    th.team().barrier_as(th, Ident::barrier_kind(loc));
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_barrier_master_nowait(loc: *const Ident, gtid: i32) -> i32 {
    let th = Thread::from_gtid(gtid);
    let _entered = crate::ompt::frame::enter(th);
    th.team().barrier_as(th, Ident::barrier_kind(loc));
    (th.tid() == 0) as i32
}

/// `#pragma omp error at(execution)`: severity 1 (`warning`) reports and goes on; anything
/// else (2, `fatal`, clang's default) reports and ends the program (`user_error`).
///
/// # Safety
/// `message` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_error(loc: *const Ident, severity: i32, message: *const std::ffi::c_char) {
    // SAFETY: per the contract.
    let msg = unsafe { crate::c_message(message) };
    error_directive(Ident::location(loc), severity == 1, &msg);
}

/// An `error` directive at `at` with `msg`: a tool is told, then a warning goes on, an error
/// ends the program.
pub(crate) fn error_directive(at: impl std::fmt::Display, warning: bool, msg: &str) {
    oxiomp_instrument::tool(|| ToolEvent::Error {
        severity: if warning { 1 } else { 2 },
        message: msg.as_ptr() as usize,
        len: msg.len(),
    });
    if warning {
        oxiomp_runtime::stderr_line(format_args!("oxiomp: warning: {at}: user-directed warning: {msg}"));
        return;
    }
    oxiomp_runtime::user_error(format_args!("{at}: user-directed error: {msg}"))
}
