//! libgomp's `GOMP_*` entry points, which gcc's code calls: the same engine as the `__kmpc_*`
//! entries, with gcc's arguments converted (an outlined function takes one `void *`, loop
//! bounds are half-open, a section number is 1-based). Each entry is exported under the
//! libgomp version node gcc's binaries name (`abi/gomp.txt`).
//!
//! gcc computes static loops itself (`omp_get_num_threads`, `omp_get_thread_num`) and
//! `master`/`masked` inline; `threadprivate` is TLS. What is here: parallel regions (plain and
//! with a loop or sections set up for every member), barriers, critical sections, the atomic
//! lock, `single` (with copyprivate), dynamically scheduled and ordered loops, sections, tasks
//! with dependences, taskwait, taskyield and taskgroups, the `error` directive and the
//! `allocate` clause's memory. gcc's locks are in `gomp_lock.rs`.

use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, Ordering};

use oxiomp_runtime::icv::ProcBind;
use oxiomp_runtime::lock::CriticalName;
use oxiomp_runtime::task::{self, Access, Dep, KmpTask, Task};
use oxiomp_runtime::worksharing as ws;
use oxiomp_runtime::{ForkRequest, Job, Thread};

/// gcc's outlined function: `void fn(void *data)`.
type Outlined = unsafe extern "C" fn(*mut c_void);
/// A task's copy function: `void cpyfn(void *dst, void *src)`.
type CopyFn = unsafe extern "C" fn(*mut c_void, *mut c_void);

/// libomp's schedule numbers (`sched_type`), as `ws::dispatch_init` takes them.
mod sched {
    pub const STATIC_CHUNKED: i32 = 33;
    pub const STATIC: i32 = 34;
    pub const DYNAMIC: i32 = 35;
    pub const GUIDED: i32 = 36;
    pub const RUNTIME: i32 = 37;
    /// The `nonmonotonic` modifier bit.
    pub const NONMONOTONIC: i32 = 1 << 30;
}

/// What a member runs before the outlined function: nothing, a loop's or sections' setup (the
/// combined `GOMP_parallel_loop_*` / `GOMP_parallel_sections`, whose code starts with
/// `GOMP_loop_*_next` / `GOMP_sections_next`).
#[derive(Clone, Copy)]
enum Setup {
    None,
    Loop { sched: i32, start: i64, end: i64, incr: i64, chunk: i64 },
    Sections(u32),
}

/// A region's function, its data and the members' setup, alive on the forking thread's stack
/// until the join.
struct Region {
    func: Outlined,
    data: *mut c_void,
    setup: Setup,
}

unsafe fn run_region(data: *const (), _gtid: i32, _tid: u32) {
    // SAFETY: `data` is the `Region` on `fork`'s stack, alive until the join.
    let r = unsafe { &*(data as *const Region) };
    let th = Thread::current();
    match r.setup {
        Setup::None => {}
        Setup::Loop { sched, start, end, incr, chunk } => loop_init(th, sched, start, end, incr, chunk),
        Setup::Sections(n) => ws::sections_dispatch_init(th, 0, n as i32),
    }
    // SAFETY: gcc's outlined function takes its data block, alive until the join.
    unsafe { (r.func)(r.data) }
}

/// Forks a team of `num_threads` (0: the ICVs decide) with binding `flags & 7` (gcc's
/// `proc_bind` kind, 0 for none) that runs `func(data)` after `setup`.
fn fork(func: Outlined, data: *mut c_void, num_threads: u32, flags: u32, setup: Setup) {
    let th = Thread::current();
    if num_threads > 0 {
        oxiomp_runtime::team::push_num_threads(th, num_threads);
    }
    if flags & 7 != 0 {
        match ProcBind::from_clause((flags & 7) as i32) {
            Some(b) => oxiomp_runtime::team::push_proc_bind(th, b),
            None => crate::misuse("GOMP_parallel", "unknown proc_bind kind; clause ignored"),
        }
    }
    let r = Region { func, data, setup };
    let job = Job {
        run: run_region,
        data: &r as *const Region as *const (),
        entry: func as usize,
        internal: false,
    };
    let _entered = crate::ompt::frame::enter(th);
    oxiomp_runtime::fork(th, ForkRequest::new(job, std::ptr::null()));
}

/// `parallel`: the team runs `func(data)`, the calling thread as its primary.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_parallel(func: Outlined, data: *mut c_void, num_threads: u32, flags: u32) {
    fork(func, data, num_threads, flags, Setup::None);
}

/// `parallel sections` of `count` sections.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_parallel_sections(
    func: Outlined,
    data: *mut c_void,
    num_threads: u32,
    count: u32,
    flags: u32,
) {
    fork(func, data, num_threads, flags, Setup::Sections(count));
}

macro_rules! parallel_loop {
    ($($name:ident => $sched:expr),* $(,)?) => {$(
        /// `parallel for` with this schedule: every member starts the loop, then runs `func`.
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
            flags: u32,
        ) {
            let sched = $sched(chunk);
            fork(func, data, num_threads, flags, Setup::Loop { sched, start, end, incr, chunk });
        }
    )*};
}

parallel_loop!(
    GOMP_parallel_loop_static => static_sched,
    GOMP_parallel_loop_dynamic => |_| sched::DYNAMIC,
    GOMP_parallel_loop_guided => |_| sched::GUIDED,
    GOMP_parallel_loop_nonmonotonic_dynamic => |_| sched::DYNAMIC | sched::NONMONOTONIC,
    GOMP_parallel_loop_nonmonotonic_guided => |_| sched::GUIDED | sched::NONMONOTONIC,
);

macro_rules! parallel_loop_runtime {
    ($($name:ident),* $(,)?) => {$(
        /// `parallel for schedule(runtime)`: every member starts the loop, then runs `func`.
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(
            func: Outlined,
            data: *mut c_void,
            num_threads: u32,
            start: i64,
            end: i64,
            incr: i64,
            flags: u32,
        ) {
            let setup = Setup::Loop { sched: sched::RUNTIME, start, end, incr, chunk: 0 };
            fork(func, data, num_threads, flags, setup);
        }
    )*};
}

parallel_loop_runtime!(
    GOMP_parallel_loop_runtime,
    GOMP_parallel_loop_nonmonotonic_runtime,
    GOMP_parallel_loop_maybe_nonmonotonic_runtime,
);

/// `schedule(static[, chunk])`: blocks when no chunk is given.
fn static_sched(chunk: i64) -> i32 {
    if chunk > 0 { sched::STATIC_CHUNKED } else { sched::STATIC }
}

/// The calling thread joins the team's next loop, `start` up to (not including) `end` by
/// `incr`.
fn loop_init(th: Thread, sched: i32, start: i64, end: i64, incr: i64, chunk: i64) {
    // gcc's end is exclusive, the engine's bound inclusive: one step short of it in the loop's
    // direction is the last value that may run (a zero-trip loop gets an empty range).
    let last = if incr > 0 { end as i128 - 1 } else { end as i128 + 1 };
    if !ws::dispatch_init(th, 0, sched, start as i128, last, incr as i128, chunk) {
        crate::misuse("GOMP_loop_*_start", "unknown schedule; the loop runs no iterations");
    }
}

/// The calling thread's next chunk as gcc takes it, `[*istart, *iend)`; false when the loop
/// has no more for it.
fn loop_next(th: Thread, istart: *mut i64, iend: *mut i64) -> bool {
    match ws::dispatch_next(th) {
        Some(c) => {
            let after = if c.stride > 0 { c.upper + 1 } else { c.upper - 1 };
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

macro_rules! loop_entries {
    ($($start:ident, $next:ident => $sched:expr, $then:ident;)*) => {$(
        /// The calling thread starts a loop with this schedule and takes its first chunk.
        #[unsafe(no_mangle)]
        pub extern "C" fn $start(start: i64, end: i64, incr: i64, chunk: i64, istart: *mut i64, iend: *mut i64) -> bool {
            let th = Thread::current();
            loop_init(th, $sched(chunk), start, end, incr, chunk);
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
        #[unsafe(no_mangle)]
        pub extern "C" fn $start(start: i64, end: i64, incr: i64, istart: *mut i64, iend: *mut i64) -> bool {
            let th = Thread::current();
            loop_init(th, $sched, start, end, incr, 0);
            loop_next(th, istart, iend)
        }

        /// The calling thread's next chunk of its loop.
        #[unsafe(no_mangle)]
        pub extern "C" fn $next(istart: *mut i64, iend: *mut i64) -> bool {
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

/// libomp's ordered schedule numbers.
mod ordered_sched {
    pub const STATIC_CHUNKED: i32 = 65;
    pub const STATIC: i32 = 66;
    pub const DYNAMIC: i32 = 67;
    pub const GUIDED: i32 = 68;
    pub const RUNTIME: i32 = 69;
}

fn ordered_static(chunk: i64) -> i32 {
    if chunk > 0 { ordered_sched::STATIC_CHUNKED } else { ordered_sched::STATIC }
}

/// The calling thread's next chunk of an ordered loop, its current chunk done (see
/// `ws::ordered_chunk_done`).
fn ordered_next(th: Thread, istart: *mut i64, iend: *mut i64) -> bool {
    ws::ordered_chunk_done(th);
    loop_next(th, istart, iend)
}

/// An `ordered` region of the calling thread's current iteration begins: it waits for the
/// iterations before it.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_ordered_start() {
    ws::ordered_enter_in_chunk(Thread::current());
}

#[unsafe(no_mangle)]
pub extern "C" fn GOMP_ordered_end() {
    ws::ordered_exit(Thread::current());
}

/// The end of a loop: the calling thread leaves it, then waits for the team.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_loop_end() {
    let th = Thread::current();
    ws::dispatch_deinit(th);
    barrier(th);
}

/// The end of a `nowait` loop: the calling thread leaves it.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_loop_end_nowait() {
    ws::dispatch_deinit(Thread::current());
}

/// A `sections` construct of `count` sections: the number (from 1) of the calling thread's
/// first section, 0 for none.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_sections_start(count: u32) -> u32 {
    let th = Thread::current();
    ws::sections_dispatch_init(th, 0, count as i32);
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
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_sections_end() {
    let th = Thread::current();
    sections_leave(th);
    barrier(th);
}

/// The end of a `nowait` `sections` construct.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_sections_end_nowait() {
    sections_leave(Thread::current());
}

fn sections_leave(th: Thread) {
    ws::dispatch_deinit(th);
    th.set_sections_open(false);
}

/// A team barrier (an explicit `barrier`, or the end of a worksharing construct).
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_barrier() {
    barrier(Thread::current());
}

fn barrier(th: Thread) {
    crate::sync::__kmpc_barrier(std::ptr::null(), th.gtid());
}

/// `single`: true for the one thread that runs the block.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_single_start() -> bool {
    oxiomp_runtime::team::single(Thread::current())
}

/// `single copyprivate`: null for the thread that runs the block (it then calls
/// [`GOMP_single_copy_end`]); the others wait for it and get its data block.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_single_copy_start() -> *mut c_void {
    let th = Thread::current();
    if oxiomp_runtime::team::single(th) {
        return std::ptr::null_mut();
    }
    let _entered = crate::ompt::frame::enter(th);
    ws::copyprivate_light(th, std::ptr::null_mut())
}

/// The thread that ran a `single copyprivate` block hands its data block to the others (gcc's
/// code then brings a barrier that keeps it alive while they copy).
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_single_copy_end(data: *mut c_void) {
    let th = Thread::current();
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

/// `GOMP_task`'s flag bits.
mod task_flags {
    pub const UNTIED: u32 = 1;
    pub const FINAL: u32 = 2;
    pub const DEPEND: u32 = 8;
    pub const PRIORITY: u32 = 0x10;
    pub const DETACH: u32 = 0x2000;
}

/// A gcc task's `kmp_task_t`, then the function and where its copy of the data block lies
/// (in the same allocation, after this).
#[repr(C)]
struct GompTask {
    kmp: KmpTask,
    func: Outlined,
    args: *mut c_void,
}

unsafe extern "C" fn run_gomp_task(_gtid: i32, kt: *mut KmpTask) -> i32 {
    // SAFETY: `GOMP_task` wrote a `GompTask` whose data block is in the same allocation.
    unsafe {
        let g = kt as *const GompTask;
        ((*g).func)((*g).args);
    }
    0
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
    let mut kflags = if flags & task_flags::UNTIED != 0 { 0 } else { task::descriptor::flags::TIED };
    if flags & task_flags::FINAL != 0 {
        kflags |= task::descriptor::flags::FINAL;
    }
    if flags & task_flags::PRIORITY != 0 {
        kflags |= task::descriptor::flags::PRIORITY;
    }
    if flags & task_flags::DETACH != 0 {
        kflags |= task::descriptor::flags::DETACHABLE;
    }
    let sizeof_task = std::mem::size_of::<GompTask>() + size + align;
    let kt = task::alloc(kflags, sizeof_task, 0, Some(run_gomp_task), 0);
    // SAFETY: the task was allocated with room for a `GompTask` and `size` bytes aligned to
    // `align` after it; it is not shared yet. The data block holds `size` bytes (gcc's
    // contract) and `cpyfn` copies it.
    unsafe {
        let g = kt as *mut GompTask;
        let after = (g as *mut u8).add(std::mem::size_of::<GompTask>());
        let args = after.add(after.align_offset(align)) as *mut c_void;
        std::ptr::addr_of_mut!((*g).func).write(func);
        std::ptr::addr_of_mut!((*g).args).write(args);
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
                *((*(kt as *const GompTask)).args as *mut *mut c_void) = event;
            }
        }
    }
    let result = task::with_dep_buffer(th, |v| {
        if flags & task_flags::DEPEND != 0 {
            // SAFETY: gcc's dependence array (the caller's contract).
            unsafe { read_gomp_deps(v, depend) };
        }
        if if_clause {
            task::submit(th, t, v)
        } else {
            // Undeferred: its dependences are waited for first (as `taskwait depend`), then
            // it runs here.
            if !v.is_empty() {
                task::wait_deps(th, v);
            }
            task::begin_if0(th, t);
            // SAFETY: as in `run_gomp_task`.
            unsafe { run_gomp_task(th.gtid(), kt) };
            task::complete_if0(th, t);
            Ok(())
        }
    });
    if let Err(e) = result {
        crate::misuse("GOMP_task", e);
    }
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

/// gcc's message of an `error` directive: `len` bytes at `msg`, or up to a NUL when `len` is
/// `usize::MAX` (what C code passes); null for none.
///
/// # Safety
/// As gcc passes them.
unsafe fn gomp_message<'a>(msg: *const std::ffi::c_char, len: usize) -> std::borrow::Cow<'a, str> {
    if msg.is_null() || len == usize::MAX {
        // SAFETY: null or NUL-terminated (the caller's contract).
        return unsafe { crate::c_message(msg) };
    }
    // SAFETY: `len` bytes at `msg` (the caller's contract).
    String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(msg as *const u8, len) })
}

/// `error severity(warning)` at execution.
///
/// # Safety
/// See [`gomp_message`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_warning(msg: *const std::ffi::c_char, len: usize) {
    // SAFETY: forwarded.
    let msg = unsafe { gomp_message(msg, len) };
    crate::sync::error_directive("unknown location", true, &msg);
}

/// `error severity(fatal)` at execution: the program ends.
///
/// # Safety
/// See [`gomp_message`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_error(msg: *const std::ffi::c_char, len: usize) {
    // SAFETY: forwarded.
    let msg = unsafe { gomp_message(msg, len) };
    crate::sync::error_directive("unknown location", false, &msg);
}

/// The `allocate` clause's allocation: `omp_aligned_alloc`, where running out of memory ends
/// the program (gcc's code does not test the result).
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_alloc(align: usize, size: usize, allocator: usize) -> *mut c_void {
    let p = crate::memory::omp_aligned_alloc(align, size, allocator as _);
    if p.is_null() && size != 0 {
        crate::fatal("GOMP_alloc", format_args!("no memory for {size} bytes"));
    }
    p
}

/// Frees what [`GOMP_alloc`] allocated.
///
/// # Safety
/// `ptr` is null or from `GOMP_alloc` with `allocator`, not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_free(ptr: *mut c_void, allocator: usize) {
    // SAFETY: per the contract.
    unsafe { crate::memory::omp_free(ptr, allocator as _) }
}
