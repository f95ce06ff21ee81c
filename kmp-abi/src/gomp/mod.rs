//! libgomp's `GOMP_*` entry points, which gcc's code calls: the same engine as the `__kmpc_*`
//! entries, with gcc's arguments converted (an outlined function takes one `void *`, loop
//! bounds are half-open, a section number is 1-based). Each entry is exported under the
//! libgomp version node gcc's binaries name (`abi/gomp.txt`).
//!
//! gcc computes static loops itself (`omp_get_num_threads`, `omp_get_thread_num`) and
//! `master`/`masked` inline; `threadprivate` is TLS. Here: parallel regions (plain, and with a
//! loop or sections set up for every member), the `error` directive and the `allocate`
//! clause's memory; `loops` (dynamically scheduled, ordered and doacross loops, sections),
//! `sync` (barriers, `single`, `critical`, the atomic lock, cancellation), `tasks` (tasks,
//! taskloops, taskwait, taskgroups), `lock` (gcc's 4-byte `omp_lock_t`) and `split` (the
//! split fork of gcc before 4.9: `GOMP_parallel_start` ... `GOMP_parallel_end`).

mod lock;
mod loops;
mod offload;
mod reduction;
mod split;
mod sync;
mod tasks;

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
    pub const AUTO: i32 = 38;
    /// The `nonmonotonic` modifier bit.
    pub const NONMONOTONIC: i32 = 1 << 30;
}

/// What a member runs before the outlined function: nothing, a loop's or sections' setup (the
/// combined `GOMP_parallel_loop_*` / `GOMP_parallel_sections`, whose code starts with
/// `GOMP_loop_*_next` / `GOMP_sections_next`).
#[derive(Clone, Copy)]
enum Setup {
    None,
    Loop {
        sched: i32,
        span: loops::Span,
        chunk: i64,
    },
    Sections(u32),
    /// `parallel reduction(task, ...)`: gcc's reduction array, registered for the team in a
    /// taskgroup that every member's implicit task opens.
    Reductions(*mut usize),
}

/// A region's function, its data and the members' setup, alive on the forking thread's stack
/// until the join.
struct Region {
    func: Outlined,
    data: *mut c_void,
    setup: Setup,
    /// The team's size, as its members saw it.
    nthreads: std::sync::atomic::AtomicU32,
}

impl Region {
    fn new(func: Outlined, data: *mut c_void, setup: Setup) -> Region {
        Region { func, data, setup, nthreads: std::sync::atomic::AtomicU32::new(0) }
    }

    /// The fork request that runs this region on every member (it must outlive the fork).
    fn request(&self) -> ForkRequest {
        let job = Job {
            run: run_region,
            data: self as *const Region as *const (),
            entry: self.func as usize,
            internal: false,
        };
        ForkRequest::new(job, std::ptr::null())
    }
}

unsafe fn run_region(data: *const (), _gtid: i32, _tid: u32) {
    // SAFETY: `data` is the `Region` on `fork`'s stack, alive until the join.
    let r = unsafe { &*(data as *const Region) };
    let th = Thread::current();
    r.begin_member(th);
    // SAFETY: gcc's outlined function takes its data block, alive until the join.
    unsafe { (r.func)(r.data) }
    ws::end_unmarked_single(th);
    if let Setup::Reductions(_) = r.setup {
        reduction::parallel_end(th);
    }
}

impl Region {
    /// What a member does before the outlined function: the region's setup.
    fn begin_member(&self, th: Thread) {
        match self.setup {
            Setup::None => {}
            Setup::Loop { sched, span, chunk } => loops::loop_init(th, sched, span, chunk),
            Setup::Sections(n) => ws::sections_dispatch_init(th, 0, n as i32),
            Setup::Reductions(data) => {
                // Relaxed: read by the forking thread after the join.
                self.nthreads.store(th.team().nthreads, std::sync::atomic::Ordering::Relaxed);
                reduction::parallel_begin(th, data);
            }
        }
    }
}

/// Pushes a region's `num_threads` (0: none) and gcc's `proc_bind` kind (`flags & 7`, 0:
/// none) for the next fork, as `call` passed them.
fn push_clauses(th: Thread, call: &str, num_threads: u32, flags: u32) {
    if num_threads > 0 {
        oxiomp_runtime::team::push_num_threads(th, num_threads);
    }
    if flags & 7 != 0 {
        match ProcBind::from_clause((flags & 7) as i32) {
            Some(b) => oxiomp_runtime::team::push_proc_bind(th, b),
            None => crate::misuse(call, "unknown proc_bind kind; clause ignored"),
        }
    }
}

/// Forks a team of `num_threads` (0: the ICVs decide) with binding `flags & 7` (gcc's
/// `proc_bind` kind, 0 for none) that runs `func(data)` after `setup`; returns the team's
/// size when the setup records it (else 0).
fn fork(func: Outlined, data: *mut c_void, num_threads: u32, flags: u32, setup: Setup) -> u32 {
    let th = Thread::current();
    push_clauses(th, "GOMP_parallel", num_threads, flags);
    let r = Region::new(func, data, setup);
    let _entered = crate::ompt::frame::enter(th);
    oxiomp_runtime::fork(th, r.request());
    // Relaxed: written by a member before the join, which orders it before this.
    r.nthreads.load(std::sync::atomic::Ordering::Relaxed)
}

/// `parallel`: the team runs `func(data)`, the calling thread as its primary.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_parallel(func: Outlined, data: *mut c_void, num_threads: u32, flags: u32) {
    fork(func, data, num_threads, flags, Setup::None);
}

/// `parallel reduction(task, ...)`: the data block's first word points at gcc's reduction
/// array, registered for the team before `func` runs on any member; returns the team's size
/// (gcc's code then combines that many blocks and unregisters the array).
///
/// # Safety
/// `data`'s first word is a pointer to gcc's reduction array.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_parallel_reductions(
    func: Outlined,
    data: *mut c_void,
    num_threads: u32,
    flags: u32,
) -> u32 {
    // SAFETY: the caller's contract.
    let rdata = unsafe { *(data as *const *mut usize) };
    fork(func, data, num_threads, flags, Setup::Reductions(rdata))
}

/// Host `teams`: a league of `num_teams` teams (0: the ICVs decide) of at most
/// `thread_limit` threads each, every initial thread running `func(data)`.
#[unsafe(no_mangle)]
pub extern "C" fn GOMP_teams_reg(
    func: Outlined,
    data: *mut c_void,
    num_teams: u32,
    thread_limit: u32,
    _flags: u32,
) {
    let th = Thread::current();
    oxiomp_runtime::team::push_num_teams(th, num_teams, thread_limit);
    let r = Region::new(func, data, Setup::None);
    let _entered = crate::ompt::frame::enter(th);
    oxiomp_runtime::fork_teams(th, r.request());
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
            let span = loops::Span::long(start, end, incr);
            fork(func, data, num_threads, flags, Setup::Loop { sched, span, chunk });
        }
    )*};
}

parallel_loop!(
    GOMP_parallel_loop_static => loops::static_sched,
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
            let span = loops::Span::long(start, end, incr);
            fork(func, data, num_threads, flags, Setup::Loop { sched: sched::RUNTIME, span, chunk: 0 });
        }
    )*};
}

parallel_loop_runtime!(
    GOMP_parallel_loop_runtime,
    GOMP_parallel_loop_nonmonotonic_runtime,
    GOMP_parallel_loop_maybe_nonmonotonic_runtime,
);

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
