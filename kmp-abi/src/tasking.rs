//! Explicit tasks: allocation, scheduling, waiting, dependences, taskloop, detach, task
//! reductions, and the memory allocator entries clang uses for `depobj` and `allocate`.

use std::ffi::{c_int, c_void};

use oxiomp_runtime::Thread;
use oxiomp_runtime::task::taskloop::{DupFn, TaskloopArgs};
use oxiomp_runtime::task::{self, Dep, Init, ItemSpec, KmpTask, Routine, Task};

use crate::Ident;

/// `kmp_depend_info` (24 bytes).
#[repr(C)]
pub struct DependInfo {
    pub base_addr: usize,
    pub len: usize,
    pub flags: u8,
}

/// The runtime's task behind a `kmp_task_t` the compiler passes back (a null one ends the
/// program with an error).
///
/// # Safety
/// `kt` is null or a pointer `__kmpc_omp_task_alloc` (or a taskloop) returned, for a task that
/// has not completed (it completes only after the entry hands it over).
unsafe fn task_of(kt: *mut KmpTask) -> &'static Task {
    if kt.is_null() {
        crate::fatal("task entry", "null task");
    }
    // SAFETY: per the contract.
    unsafe { Task::from_kmp(kt) }
}

/// Appends the `n` dependences at `list` to `out`.
fn read_deps(out: &mut Vec<Dep>, n: i32, list: *const DependInfo) {
    if n <= 0 || list.is_null() {
        return;
    }
    // SAFETY: clang passes an array of `n` dependence records.
    let deps = unsafe { std::slice::from_raw_parts(list, n as usize) };
    out.extend(deps.iter().filter_map(|d| Dep::from_record(d.base_addr, d.flags)));
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_omp_task_alloc(
    loc: *const Ident,
    gtid: i32,
    flags: i32,
    sizeof_task: usize,
    sizeof_shareds: usize,
    entry: Option<Routine>,
) -> *mut KmpTask {
    // The task is a child of the calling thread's current task (clang passes that thread's
    // gtid; debug builds check it).
    if cfg!(debug_assertions) {
        Thread::from_gtid(gtid);
    }
    // The compiler's 16 bits only (the runtime's own are not the program's to set).
    task::alloc(flags as u32 & 0xffff, sizeof_task, sizeof_shareds, entry, loc as usize)
}

/// `target nowait` (and `target depend`) on the host: a task the hidden helper threads run
/// (`runtime::hidden`), or an ordinary task when they are off.
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_omp_target_task_alloc(
    loc: *const Ident,
    gtid: i32,
    flags: i32,
    sizeof_task: usize,
    sizeof_shareds: usize,
    entry: Option<Routine>,
    _device_id: i64,
) -> *mut KmpTask {
    match oxiomp_runtime::hidden::team() {
        Some(team) => {
            let flags = flags as u32 & 0xffff;
            task::alloc_hidden(flags, sizeof_task, sizeof_shareds, entry, loc as usize, team)
        }
        None => __kmpc_omp_task_alloc(loc, gtid, flags, sizeof_task, sizeof_shareds, entry),
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_omp_task(_loc: *const Ident, gtid: i32, task: *mut KmpTask) -> i32 {
    // SAFETY: clang passes back the pointer `__kmpc_omp_task_alloc` returned, for a task that
    // has not completed.
    let t = unsafe { task_of(task) };
    let th = Thread::from_gtid(gtid);
    let _entered = crate::ompt::frame::enter(th);
    if let Err(e) = task::submit_task(th, t) {
        crate::misuse("__kmpc_omp_task", e);
    }
    0
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_omp_task_with_deps(
    _loc: *const Ident,
    gtid: i32,
    task: *mut KmpTask,
    ndeps: i32,
    deps: *const DependInfo,
    ndeps_noalias: i32,
    noalias: *const DependInfo,
) -> i32 {
    let th = Thread::from_gtid(gtid);
    let _entered = crate::ompt::frame::enter(th);
    task::with_dep_buffer(th, |v| {
        read_deps(v, ndeps, deps);
        read_deps(v, ndeps_noalias, noalias);
        // SAFETY: clang passes back the pointer `__kmpc_omp_task_alloc` returned, for a task that
        // has not completed.
        task::submit(th, unsafe { task_of(task) }, v)
    })
    .unwrap_or_else(|e| crate::misuse("__kmpc_omp_task_with_deps", e));
    0
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_omp_wait_deps(
    loc: *const Ident,
    gtid: i32,
    ndeps: i32,
    deps: *const DependInfo,
    ndeps_noalias: i32,
    noalias: *const DependInfo,
) {
    __kmpc_omp_taskwait_deps_51(loc, gtid, ndeps, deps, ndeps_noalias, noalias, 0)
}

/// `taskwait depend(...)`; with `nowait` too the encountering task waits (always conforming).
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_omp_taskwait_deps_51(
    _loc: *const Ident,
    gtid: i32,
    ndeps: i32,
    deps: *const DependInfo,
    ndeps_noalias: i32,
    noalias: *const DependInfo,
    _has_no_wait: i32,
) {
    let th = Thread::from_gtid(gtid);
    let _entered = crate::ompt::frame::enter(th);
    task::with_dep_buffer(th, |v| {
        read_deps(v, ndeps, deps);
        read_deps(v, ndeps_noalias, noalias);
        task::wait_deps(th, v)
    });
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_omp_taskwait(_loc: *const Ident, gtid: i32) -> i32 {
    let th = Thread::from_gtid(gtid);
    let _entered = crate::ompt::frame::enter(th);
    task::taskwait(th);
    0
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_omp_taskyield(_loc: *const Ident, gtid: i32, _end_part: i32) -> i32 {
    let th = Thread::from_gtid(gtid);
    let _entered = crate::ompt::frame::enter(th);
    task::taskyield(th);
    0
}

crate::ompt::frame::with_caller_frame!(
    /// `if(0)` task: the program runs its code next, then `__kmpc_omp_task_complete_if0`.
    __kmpc_omp_task_begin_if0(loc: *const Ident, gtid: i32, task: *mut KmpTask) => begin_if0_from, "rcx"
);

/// `__kmpc_omp_task_begin_if0`, called from the program's frame with frame pointer `fp`.
extern "C" fn begin_if0_from(_loc: *const Ident, gtid: i32, task: *mut KmpTask, fp: usize) {
    // SAFETY: clang passes back the pointer `__kmpc_omp_task_alloc` returned, for a task that
    // has not completed.
    let t = unsafe { task_of(task) };
    let th = Thread::from_gtid(gtid);
    let parent = oxiomp_runtime::task::frame::kept().then(|| crate::ompt::frame::program_will_call(th, fp));
    task::begin_if0(th, t);
    if let Some(parent) = parent {
        crate::ompt::frame::program_calls(parent, t, fp);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_omp_task_complete_if0(_loc: *const Ident, gtid: i32, task: *mut KmpTask) {
    // SAFETY: clang passes back the pointer `__kmpc_omp_task_alloc` returned, for a task that
    // has not completed.
    let t = unsafe { task_of(task) };
    let th = Thread::from_gtid(gtid);
    if oxiomp_runtime::task::frame::kept() {
        crate::ompt::frame::if0_returned(t);
    }
    task::complete_if0(th, t)
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_taskgroup(_loc: *const Ident, gtid: i32) {
    task::taskgroup_begin(Thread::from_gtid(gtid))
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_end_taskgroup(_loc: *const Ident, gtid: i32) {
    let th = Thread::from_gtid(gtid);
    let _entered = crate::ompt::frame::enter(th);
    task::taskgroup_end(th)
}

#[allow(clippy::too_many_arguments)]
/// `taskloop`.
///
/// # Safety
/// `task` comes from `__kmpc_omp_task_alloc`; `lb`/`ub` point at its bounds.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_taskloop(
    loc: *const Ident,
    gtid: i32,
    task: *mut KmpTask,
    if_val: i32,
    lb: *mut u64,
    ub: *mut u64,
    st: i64,
    nogroup: i32,
    sched: i32,
    grainsize: u64,
    task_dup: Option<DupFn>,
) {
    // SAFETY: the same contract.
    unsafe { __kmpc_taskloop_5(loc, gtid, task, if_val, lb, ub, st, nogroup, sched, grainsize, 0, task_dup) }
}

/// As `__kmpc_taskloop`, with the `strict` modifier of grainsize/num_tasks (`modifier` 1).
///
/// # Safety
/// As for `__kmpc_taskloop`.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_taskloop_5(
    loc: *const Ident,
    gtid: i32,
    task: *mut KmpTask,
    if_val: i32,
    lb: *mut u64,
    ub: *mut u64,
    st: i64,
    nogroup: i32,
    sched: i32,
    grainsize: u64,
    modifier: i32,
    task_dup: Option<DupFn>,
) {
    if lb.is_null() || ub.is_null() {
        crate::fatal("__kmpc_taskloop", "null loop bounds");
    }
    // SAFETY: clang passes &task->lb and &task->ub, inside the pattern task.
    let (lower, upper) = unsafe { (*lb, *ub) };
    let a = TaskloopArgs {
        if_val: if_val != 0,
        lb: lower,
        ub: upper,
        lb_offset: (lb as usize).wrapping_sub(task as usize),
        ub_offset: (ub as usize).wrapping_sub(task as usize),
        st,
        nogroup: nogroup != 0,
        sched,
        grainsize,
        strict: modifier != 0,
        dup: task_dup,
        ident: loc as usize,
    };
    let th = Thread::from_gtid(gtid);
    let _entered = crate::ompt::frame::enter(th);
    // SAFETY: clang passes back the pointer `__kmpc_omp_task_alloc` returned, for a task that
    // has not completed.
    task::taskloop::taskloop(th, unsafe { task_of(task) }, &a)
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_task_allow_completion_event(
    _loc: *const Ident,
    gtid: i32,
    task: *mut KmpTask,
) -> *mut c_void {
    // SAFETY: clang passes back the pointer `__kmpc_omp_task_alloc` returned, for a task that
    // has not completed.
    task::allow_completion_event(Thread::from_gtid(gtid), unsafe { task_of(task) })
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_fulfill_event(event: usize) {
    // SAFETY: the program passes back a handle `omp_fulfill_event` may take: one the runtime
    // gave for a detachable task whose event is not fulfilled yet (a second fulfilment is a
    // program error, detected while the task is still alive in practice).
    let Some(t) = (unsafe { Task::from_event(event as *mut c_void) }) else {
        return crate::misuse("omp_fulfill_event", oxiomp_runtime::error::Misuse::NullEvent);
    };
    if let Err(e) = task::fulfill_event(t) {
        crate::misuse("omp_fulfill_event", e);
    }
}

/// A proxy task (flag 0x10, made by device runtimes for asynchronous work) completes when
/// its owner says so, after its body has run: the same two halves as a detachable task's
/// completion, so it is one (its allocation marks it detachable).
fn complete_proxy(call: &str, task: *mut KmpTask) {
    // SAFETY: a device runtime passes back the proxy task `__kmpc_omp_task_alloc` returned,
    // whose completion it reports once.
    let t = unsafe { task_of(task) };
    if let Err(e) = task::fulfill_event(t) {
        crate::misuse(call, e);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_proxy_task_completed_ooo(task: *mut KmpTask) {
    complete_proxy("__kmpc_proxy_task_completed_ooo", task);
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_proxy_task_completed(_gtid: i32, task: *mut KmpTask) {
    complete_proxy("__kmpc_proxy_task_completed", task);
}

/// `affinity(...)` is a hint; accepted and ignored (as libomp does).
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_omp_reg_task_with_affinity(
    _loc: *const Ident,
    _gtid: i32,
    _task: *mut KmpTask,
    _naffins: i32,
    _affin_list: *mut c_void,
) -> i32 {
    0
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_in_final() -> c_int {
    task::in_final(Thread::current()) as c_int
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_in_explicit_task() -> c_int {
    task::in_explicit_task(Thread::current()) as c_int
}

/// `kmp_taskred_input_t` (56 bytes).
#[repr(C)]
pub struct TaskredInput {
    pub shar: *mut c_void,
    pub orig: *mut c_void,
    pub size: usize,
    pub init: *mut c_void,
    pub fini: *mut c_void,
    pub comb: *mut c_void,
    pub flags: u32,
}

/// `kmp_task_red_input_t` (48 bytes), the older form without `orig`.
#[repr(C)]
pub struct TaskRedInput {
    pub shar: *mut c_void,
    pub size: usize,
    pub init: *mut c_void,
    pub fini: *mut c_void,
    pub comb: *mut c_void,
    pub flags: u32,
}

/// Reinterprets a compiler-provided function pointer (null: none).
///
/// # Safety
/// `p` is null or a function of type `F`.
unsafe fn func<F: Copy>(p: *mut c_void) -> Option<F> {
    // SAFETY: F is a function pointer type of pointer size, per the contract.
    (!p.is_null()).then(|| unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) })
}

/// The item specs of a compiler array of `num` records of type `R`.
fn specs<R>(num: i32, data: *mut c_void, f: impl Fn(&R) -> ItemSpec) -> Vec<ItemSpec> {
    if num <= 0 || data.is_null() {
        return Vec::new();
    }
    // SAFETY: clang passes an array of `num` records of the entry's record type.
    unsafe { std::slice::from_raw_parts(data as *const R, num as usize) }.iter().map(f).collect()
}

fn specs_new(num: i32, data: *mut c_void) -> Vec<ItemSpec> {
    specs(num, data, |d: &TaskredInput| {
        // SAFETY: (of `func`) the record's function fields have the documented signatures.
        unsafe {
            ItemSpec {
                shar: d.shar,
                orig: if d.orig.is_null() { d.shar } else { d.orig },
                size: d.size,
                init: func(d.init).map_or(Init::Zero, Init::WithOrig),
                fini: func(d.fini),
                comb: func(d.comb),
                lazy: d.flags & 1 != 0,
            }
        }
    })
}

fn specs_old(num: i32, data: *mut c_void) -> Vec<ItemSpec> {
    specs(num, data, |d: &TaskRedInput| {
        // SAFETY: (of `func`) as in `specs_new`, for the older record.
        unsafe {
            ItemSpec {
                shar: d.shar,
                orig: d.shar,
                size: d.size,
                init: func(d.init).map_or(Init::Zero, Init::Plain),
                fini: func(d.fini),
                comb: func(d.comb),
                lazy: d.flags & 1 != 0,
            }
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_taskred_init(gtid: i32, num: i32, data: *mut c_void) -> *mut c_void {
    task::reduction_init(Thread::from_gtid(gtid), &specs_new(num, data))
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_task_reduction_init(gtid: i32, num: i32, data: *mut c_void) -> *mut c_void {
    task::reduction_init(Thread::from_gtid(gtid), &specs_old(num, data))
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_task_reduction_get_th_data(
    gtid: i32,
    handle: *mut c_void,
    item: *mut c_void,
) -> *mut c_void {
    // SAFETY: clang passes null or the handle a task reduction's init returned, a taskgroup
    // that stays open while tasks that use its reduction run.
    let group = unsafe { (handle as *const task::TaskGroup).as_ref() };
    task::reduction_data(Thread::from_gtid(gtid), group, item)
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_taskred_modifier_init(
    _loc: *const Ident,
    gtid: i32,
    _is_ws: i32,
    num: i32,
    data: *mut c_void,
) -> *mut c_void {
    task::reduction_modifier_init(Thread::from_gtid(gtid), &specs_new(num, data))
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_task_reduction_modifier_init(
    _loc: *const Ident,
    gtid: i32,
    _is_ws: i32,
    num: i32,
    data: *mut c_void,
) -> *mut c_void {
    task::reduction_modifier_init(Thread::from_gtid(gtid), &specs_old(num, data))
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_task_reduction_modifier_fini(_loc: *const Ident, gtid: i32, _is_ws: i32) {
    task::reduction_modifier_fini(Thread::from_gtid(gtid))
}

/// The dependence node of a task (libomp's `kmp_base_depnode_t`: its successor list first), for
/// tests and tools that inspect the graph.
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_task_get_depnode(task: *mut KmpTask) -> *mut task::graph::DepnodeView {
    // SAFETY: the caller passes a task `__kmpc_omp_task_alloc` returned that has not
    // completed, as libomp's inquiry requires.
    task::graph::depnode(unsafe { task_of(task) })
}

/// The tasks that wait for `task` now, as libomp's list of dependence nodes (null: none).
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_task_get_successors(task: *mut KmpTask) -> *mut task::graph::DepnodeList {
    // SAFETY: as in `__kmpc_task_get_depnode`.
    task::graph::successors(unsafe { task_of(task) })
}
