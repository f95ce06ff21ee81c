//! Tasks, their dependences, taskwait, taskyield, taskgroups and taskloops.

use oxiomp_runtime::task::taskloop::{self, TaskloopArgs};

use super::*;

/// `GOMP_task`'s and `GOMP_taskloop`'s flag bits.
mod task_flags {
    pub const UNTIED: u32 = 1;
    pub const FINAL: u32 = 2;
    pub const DEPEND: u32 = 8;
    pub const PRIORITY: u32 = 0x10;
    /// Taskloop: an `unsigned long long` loop counts upward.
    pub const UP: u32 = 0x100;
    /// Taskloop: `num_tasks` is the grainsize.
    pub const GRAINSIZE: u32 = 0x200;
    /// Taskloop: the `if` clause holds (chunks may be deferred).
    pub const IF: u32 = 0x400;
    pub const NOGROUP: u32 = 0x800;
    /// Taskloop: `reduction` (the data block's third word points at gcc's reduction array).
    pub const REDUCTION: u32 = 0x1000;
    pub const DETACH: u32 = 0x2000;
    /// Taskloop: `strict` grainsize or num_tasks.
    pub const STRICT: u32 = 0x4000;
}

/// A gcc task's `kmp_task_t`, then the function and where its copy of the data block lies:
/// an offset from the task, so that a byte copy of the task (a taskloop's chunk) has its own.
#[repr(C)]
struct GompTask {
    kmp: KmpTask,
    func: Outlined,
    args_off: usize,
}

// `CALLS_NEXT_WORD`: the function is the word right after the `kmp_task_t`.
const _: () = assert!(std::mem::offset_of!(GompTask, func) == std::mem::size_of::<KmpTask>());

impl GompTask {
    /// The task's data block.
    ///
    /// # Safety
    /// `g` is a task `GOMP_task` or `GOMP_taskloop` wrote.
    unsafe fn args(g: *const GompTask) -> *mut c_void {
        // SAFETY: the block lies `args_off` bytes into the same allocation.
        unsafe { (g as *mut u8).add((*g).args_off) as *mut c_void }
    }
}

unsafe extern "C" fn run_gomp_task(_gtid: i32, kt: *mut KmpTask) -> i32 {
    // SAFETY: `GOMP_task` wrote a `GompTask` whose data block is in the same allocation.
    unsafe {
        let g = kt as *const GompTask;
        ((*g).func)(GompTask::args(g));
    }
    0
}

/// Allocates a task of `kflags` running `func` on a data block of `size` bytes aligned to
/// `align`, after a header of `head` bytes (a `GompTask` or a structure beginning with one);
/// returns the task and its (uninitialised) data block.
fn alloc_gomp(
    kflags: u32,
    head: usize,
    func: Outlined,
    size: usize,
    align: usize,
) -> (*mut KmpTask, *mut c_void) {
    // The function follows the `kmp_task_t` (`GompTask`): reports name it, not the trampoline.
    let kflags = kflags | task::descriptor::flags::CALLS_NEXT_WORD;
    let kt = task::alloc(kflags, head + size + align, 0, Some(run_gomp_task), 0);
    // SAFETY: the task was allocated with room for the header and `size` bytes aligned to
    // `align` after it; it is not shared yet.
    unsafe {
        let g = kt as *mut GompTask;
        let after = (g as *mut u8).add(head);
        let args = after.add(after.align_offset(align));
        std::ptr::addr_of_mut!((*g).func).write(func);
        std::ptr::addr_of_mut!((*g).args_off).write(args as usize - g as usize);
        (kt, args as *mut c_void)
    }
}

/// The engine's task flags for gcc's `flags`.
fn engine_flags(flags: u32) -> u32 {
    let mut kflags = if flags & task_flags::UNTIED != 0 { 0 } else { task::descriptor::flags::TIED };
    if flags & task_flags::FINAL != 0 {
        kflags |= task::descriptor::flags::FINAL;
    }
    if flags & task_flags::PRIORITY != 0 {
        kflags |= task::descriptor::flags::PRIORITY;
    }
    kflags
}

/// `task`: `func` runs on a copy of the `arg_size`-byte data block (made by `cpyfn` when
/// given, else a byte copy) aligned to `arg_align`; `if_clause` false makes it undeferred;
/// `depend` is gcc's dependence array (with `DEPEND`); `priority` counts with `PRIORITY`;
/// `detach` receives the completion event (with `DETACH`), also written into the data
/// block's first word, where gcc's code reads it.
///
/// # Safety
/// As gcc calls it: `data` holds `arg_size` bytes, `depend` is its array, `detach` a pointer
/// to an event handle.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn GOMP_task(
    func: Outlined,
    data: *mut c_void,
    cpyfn: Option<CopyFn>,
    arg_size: i64,
    arg_align: i64,
    if_clause: bool,
    flags: u32,
    depend: *const *mut c_void,
    priority: i32,
    detach: *mut *mut c_void,
) {
    let th = Thread::current();
    let _entered = crate::ompt::frame::enter(th);
    let (size, align) = (arg_size.max(0) as usize, arg_align.max(1) as usize);
    let mut kflags = engine_flags(flags);
    if flags & task_flags::DETACH != 0 {
        kflags |= task::descriptor::flags::DETACHABLE;
    }
    let (kt, args) = alloc_gomp(kflags, std::mem::size_of::<GompTask>(), func, size, align);
    // SAFETY: the data block holds `size` bytes (gcc's contract) and `cpyfn` copies it; the
    // task is not shared yet.
    unsafe {
        match cpyfn {
            Some(copy) => copy(args, data),
            None => std::ptr::copy_nonoverlapping(data as *const u8, args as *mut u8, size),
        }
        if flags & task_flags::PRIORITY != 0 {
            (*kt).data2 = priority.max(0) as usize;
        }
    }
    // SAFETY: `kt` is the task just allocated.
    let t: &'static Task = unsafe { Task::from_kmp(kt) };
    if flags & task_flags::DETACH != 0 {
        let event = task::allow_completion_event(th, t);
        // SAFETY: gcc passes the event variable's address, and makes the event the data
        // block's first firstprivate (copied from the variable before the call): the task
        // reads it from the first word of its copy, which is there (gcc's block holds it).
        unsafe {
            *detach = event;
            if size >= std::mem::size_of::<*mut c_void>() {
                *(args as *mut *mut c_void) = event;
            }
        }
    }
    let result = if flags & task_flags::DEPEND == 0 && if_clause {
        // The common case, without the dependence buffer.
        task::submit_task(th, t)
    } else {
        task::with_dep_buffer(th, |v| {
            if flags & task_flags::DEPEND != 0 {
                // SAFETY: gcc's dependence array (the caller's contract).
                unsafe { read_gomp_deps(v, depend) };
            }
            submit_or_run(th, t, kt, if_clause, v)
        })
    };
    if let Err(e) = result {
        crate::misuse("GOMP_task", e);
    }
}

/// Queues task `t` with dependences `v` (`if_clause`), or runs it here once they are met.
fn submit_or_run(
    th: Thread,
    t: &'static Task,
    kt: *mut KmpTask,
    if_clause: bool,
    v: &mut Vec<Dep>,
) -> Result<(), oxiomp_runtime::error::Misuse> {
    if if_clause {
        return task::submit(th, t, v);
    }
    // Undeferred: its dependences are waited for first (as `taskwait depend`), then it runs
    // here.
    if !v.is_empty() {
        task::wait_deps(th, v);
    }
    task::begin_if0(th, t);
    // SAFETY: as in `run_gomp_task`.
    unsafe { run_gomp_task(th.gtid(), kt) };
    task::complete_if0(th, t);
    Ok(())
}

/// Appends the dependences of gcc's array `depend`: either `[n, n_out, addr...]` (the
/// out/inout addresses first, then the in ones) or, when `depend[0]` is 0, `[0, n, n_out,
/// n_mutexinoutset, n_in, addr...]`, then `n - n_out - n_mutexinoutset - n_in` depend objects
/// (each a pointer to `{addr, kind}`: 1 in, 2 out, 3 inout, 4 mutexinoutset, 5 inoutset).
///
/// # Safety
/// `depend` is such an array.
unsafe fn read_gomp_deps(out: &mut Vec<Dep>, depend: *const *mut c_void) {
    if depend.is_null() {
        return;
    }
    // SAFETY: the array's header words and addresses, as described above.
    unsafe {
        let word = |i: usize| *depend.add(i) as usize;
        if word(0) != 0 {
            let (n, n_out) = (word(0), word(1));
            for i in 0..n {
                let kind = if i < n_out { Access::InOut } else { Access::In };
                push_dep(out, word(2 + i), kind);
            }
            return;
        }
        let (n, n_out, n_mutex, n_in) = (word(1), word(2), word(3), word(4));
        let mut i = 0;
        for (count, kind) in [(n_out, Access::InOut), (n_mutex, Access::MutexInOutSet), (n_in, Access::In)] {
            for _ in 0..count {
                push_dep(out, word(5 + i), kind);
                i += 1;
            }
        }
        while i < n {
            let obj = word(5 + i) as *const usize;
            let (addr, k) = (*obj, *obj.add(1));
            let kind = match k {
                1 => Access::In,
                2 => Access::Out,
                4 => Access::MutexInOutSet,
                5 => Access::InOutSet,
                _ => Access::InOut,
            };
            push_dep(out, addr, kind);
            i += 1;
        }
    }
}

fn push_dep(out: &mut Vec<Dep>, addr: usize, kind: Access) {
    // A null address (gcc's `omp_all_memory` among the out ones) is every address.
    let kind = if addr == 0 { Access::AllMemory } else { kind };
    out.push(Dep { addr, kind });
}

/// `taskwait`: the current task's children are complete.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_taskwait() {
    let th = Thread::current();
    let _entered = crate::ompt::frame::enter(th);
    task::taskwait(th);
}

/// `taskwait depend(...)`: the earlier sibling tasks these dependences name are complete.
///
/// # Safety
/// `depend` is gcc's dependence array (see [`GOMP_task`]).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_taskwait_depend(depend: *const *mut c_void) {
    let th = Thread::current();
    let _entered = crate::ompt::frame::enter(th);
    task::with_dep_buffer(th, |v| {
        // SAFETY: the caller's contract.
        unsafe { read_gomp_deps(v, depend) };
        task::wait_deps(th, v);
    });
}

#[unsafe(no_mangle)]
pub extern "C" fn GOMP_taskyield() {
    let th = Thread::current();
    let _entered = crate::ompt::frame::enter(th);
    task::taskyield(th);
}

#[unsafe(no_mangle)]
pub extern "C" fn GOMP_taskgroup_start() {
    task::taskgroup_begin(Thread::current());
}

/// The end of a `taskgroup`: every task generated in it, and their descendants, are complete.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_taskgroup_end() {
    let th = Thread::current();
    let _entered = crate::ompt::frame::enter(th);
    task::taskgroup_end(th);
}

/// A taskloop's pattern task as the engine's taskloop copies it for each chunk: a gcc task,
/// the loop's first value and step, and the chunk's logical iterations `lo..=hi`, which the
/// engine writes into each copy and [`chunk_bounds`] turns into gcc's `[start, end)` in the
/// copy's data block.
#[repr(C)]
struct GompLoopTask {
    task: GompTask,
    start: u64,
    step: u64,
    lo: u64,
    hi: u64,
}

/// The engine's duplication callback for a chunk `dst` of a gcc taskloop: the data block's
/// first two words get the chunk's bounds in the loop's type.
unsafe extern "C" fn chunk_bounds(dst: *mut KmpTask, _src: *mut KmpTask, _last: i32) {
    // SAFETY: `dst` is a byte copy of a `GompLoopTask` pattern, its logical bounds written;
    // its data block begins with gcc's two bound words.
    unsafe {
        let g = dst as *mut GompLoopTask;
        let (start, step) = ((*g).start, (*g).step);
        let args = GompTask::args(g as *const GompTask) as *mut u64;
        *args = start.wrapping_add((*g).lo.wrapping_mul(step));
        *args.add(1) = start.wrapping_add((*g).hi.wrapping_add(1).wrapping_mul(step));
    }
}

/// A taskloop gcc describes: `n` logical iterations from `start` by `step` (the bits of the
/// loop's type).
struct GompLoop {
    func: Outlined,
    data: *mut c_void,
    cpyfn: Option<CopyFn>,
    size: usize,
    align: usize,
    flags: u32,
    num_tasks: u64,
    priority: i32,
    start: u64,
    step: u64,
    n: u64,
}

impl GompLoop {
    /// The loop with gcc's data block size and alignment, first value and step.
    fn with(self, arg_size: i64, arg_align: i64, start: u64, step: u64) -> GompLoop {
        GompLoop { size: arg_size.max(0) as usize, align: arg_align.max(1) as usize, start, step, ..self }
    }
}

/// `taskloop`: the loop's iterations cut into chunks (by `num_tasks`, or by a grainsize with
/// `GRAINSIZE`; `STRICT` for exact sizes), each a task running `func` on a copy of the data
/// block whose first two words hold the chunk's `[start, end)`.
fn taskloop(th: Thread, l: &GompLoop) {
    let _entered = crate::ompt::frame::enter(th);
    let reduction = l.flags & (task_flags::NOGROUP | task_flags::REDUCTION) == task_flags::REDUCTION;
    let rdata = if reduction {
        // SAFETY: gcc's data block begins `{ TYPE start, end; uintptr_t *reductions; }` with
        // REDUCTION.
        unsafe { *(l.data as *const *mut usize).add(2) }
    } else {
        std::ptr::null_mut()
    };
    if l.n == 0 {
        if !rdata.is_null() {
            // SAFETY: gcc's reduction array: its third word 0 tells gcc's code nothing was
            // registered.
            unsafe { *rdata.add(2) = 0 };
        }
        return;
    }
    let group = l.flags & task_flags::NOGROUP == 0;
    if group {
        task::taskgroup_begin(th);
        if !rdata.is_null() {
            // SAFETY: gcc's reduction array (the block's contract).
            unsafe { super::reduction::GOMP_taskgroup_reduction_register(rdata) };
        }
    }
    let (sched, grainsize) = match (l.flags & task_flags::GRAINSIZE != 0, l.num_tasks) {
        (true, g) => (1, g),
        (false, 0) => (0, 0),
        (false, k) => (2, k),
    };
    let strict = l.flags & task_flags::STRICT != 0;
    let if_val = l.flags & task_flags::IF != 0;
    match l.cpyfn {
        None => pattern_taskloop(th, l, sched, grainsize, strict, if_val),
        Some(copy) => copied_taskloop(th, l, copy, sched, grainsize, strict, if_val),
    }
    if group {
        task::taskgroup_end(th);
    }
}

/// A taskloop whose data block is copied bytewise: one pattern task the engine's taskloop
/// copies for each chunk (splitting the chunks among the team through range tasks).
fn pattern_taskloop(th: Thread, l: &GompLoop, sched: i32, grainsize: u64, strict: bool, if_val: bool) {
    let head = std::mem::size_of::<GompLoopTask>();
    let (kt, args) = alloc_gomp(engine_flags(l.flags), head, l.func, l.size, l.align);
    // SAFETY: a fresh task with room for a `GompLoopTask` and the data block; not shared.
    unsafe {
        std::ptr::copy_nonoverlapping(l.data as *const u8, args as *mut u8, l.size);
        let g = kt as *mut GompLoopTask;
        (*g).start = l.start;
        (*g).step = l.step;
        if l.flags & task_flags::PRIORITY != 0 {
            (*kt).data2 = l.priority.max(0) as usize;
        }
    }
    let a = TaskloopArgs {
        if_val,
        lb: 0,
        ub: l.n - 1,
        lb_offset: std::mem::offset_of!(GompLoopTask, lo),
        ub_offset: std::mem::offset_of!(GompLoopTask, hi),
        st: 1,
        nogroup: true,
        sched,
        grainsize,
        strict,
        dup: Some(chunk_bounds),
        ident: 0,
    };
    // SAFETY: `kt` is the task just allocated.
    taskloop::taskloop(th, unsafe { Task::from_kmp(kt) }, &a);
}

/// A taskloop whose data block gcc's `copy` function copies (C++ objects): each chunk is a task
/// made here, its block copied from the caller's, as libgomp does.
#[allow(clippy::too_many_arguments)]
fn copied_taskloop(
    th: Thread,
    l: &GompLoop,
    copy: CopyFn,
    sched: i32,
    grainsize: u64,
    strict: bool,
    if_val: bool,
) {
    let (n, size, extras) = taskloop::plan(l.n, th.team().nthreads, sched, grainsize, strict);
    let mut first = 0u64;
    for k in 0..n {
        if task::taskgroup_cancelled(th) {
            break;
        }
        let len = if strict && sched == 1 { size.min(l.n - first) } else { size + (k < extras) as u64 };
        let (kt, args) =
            alloc_gomp(engine_flags(l.flags), std::mem::size_of::<GompTask>(), l.func, l.size, l.align);
        // SAFETY: a fresh task with room for the data block, which `copy` fills from the
        // caller's; its first two words are gcc's bounds.
        unsafe {
            copy(args, l.data);
            let b = args as *mut u64;
            *b = l.start.wrapping_add(first.wrapping_mul(l.step));
            *b.add(1) = l.start.wrapping_add((first + len).wrapping_mul(l.step));
            if l.flags & task_flags::PRIORITY != 0 {
                (*kt).data2 = l.priority.max(0) as usize;
            }
        }
        first += len;
        // SAFETY: `kt` is the task just allocated.
        let t: &'static Task = unsafe { Task::from_kmp(kt) };
        if if_val {
            // A new task without dependences: never refused.
            let _ = task::submit(th, t, &mut Vec::new());
        } else {
            task::begin_if0(th, t);
            // SAFETY: as in `run_gomp_task`.
            unsafe { run_gomp_task(th.gtid(), kt) };
            task::complete_if0(th, t);
        }
    }
}

/// `taskloop` over a `long` loop `start` up to (not including) `end` by `step`.
///
/// # Safety
/// As gcc calls it: `data` holds `arg_size` bytes beginning with the two bound words.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn GOMP_taskloop(
    func: Outlined,
    data: *mut c_void,
    cpyfn: Option<CopyFn>,
    arg_size: i64,
    arg_align: i64,
    flags: u32,
    num_tasks: u64,
    priority: i32,
    start: i64,
    end: i64,
    step: i64,
) {
    let (s, e, st) = (start as i128, end as i128, step as i128);
    let n = match st {
        0 => 0,
        st if st > 0 && s < e => (e - s + st - 1) / st,
        st if st < 0 && s > e => (e - s + st + 1) / st,
        _ => 0,
    };
    let n = n.clamp(0, u64::MAX as i128) as u64;
    let l =
        GompLoop { func, data, cpyfn, size: 0, align: 1, flags, num_tasks, priority, start: 0, step: 0, n };
    taskloop(Thread::current(), &l.with(arg_size, arg_align, start as u64, step as u64));
}

/// `taskloop` over an `unsigned long long` loop: upward with `UP` in `flags`, else downward
/// by the step's negated bits.
///
/// # Safety
/// As [`GOMP_taskloop`].
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn GOMP_taskloop_ull(
    func: Outlined,
    data: *mut c_void,
    cpyfn: Option<CopyFn>,
    arg_size: i64,
    arg_align: i64,
    flags: u32,
    num_tasks: u64,
    priority: i32,
    start: u64,
    end: u64,
    step: u64,
) {
    let n = if step == 0 {
        0
    } else if flags & task_flags::UP != 0 {
        if start < end { (end - start).div_ceil(step) } else { 0 }
    } else {
        let down = step.wrapping_neg();
        if start > end && down != 0 { (start - end).div_ceil(down) } else { 0 }
    };
    let l =
        GompLoop { func, data, cpyfn, size: 0, align: 1, flags, num_tasks, priority, start: 0, step: 0, n };
    taskloop(Thread::current(), &l.with(arg_size, arg_align, start, step));
}
