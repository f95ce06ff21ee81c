//! Fork/join and teams: `__kmpc_fork_call` (via the C shim), serialized regions, pushed
//! clauses, host `teams`.

use std::ffi::c_void;

use oxiomp_runtime::icv::ProcBind;
use oxiomp_runtime::team::Strict;
use oxiomp_runtime::{ForkRequest, Job, Outlined, Thread};

use crate::Ident;

/// The outlined function clang generates: `void fn(int32 *gtid, int32 *btid, ...)`.
pub type Microtask = usize;

unsafe extern "C" {
    /// The asm invoker (shim/invoke.S): `fn(gtid, tid, argv[0..argc])`.
    fn oxiomp_invoke_microtask(
        func: Microtask,
        gtid: *mut i32,
        tid: *mut i32,
        argc: i64,
        argv: *const *mut c_void,
        exit_frame: *mut usize,
    );
}

unsafe fn run_outlined(data: *const (), gtid: i32, tid: u32) {
    // SAFETY: `data` is an `Outlined` alive until the join: `fork_outlined`'s, or the team's
    // copy of it (`ForkRequest::outlined`).
    let o = unsafe { &*(data as *const Outlined) };
    // Each thread's own copies: the microtask may keep the pointers for the whole region.
    let mut g = gtid;
    let mut t = tid as i32;
    let exit = crate::ompt::frame::exit_slot();
    // SAFETY: `func` is clang's outlined function taking (gtid*, tid*, argc pointer-sized
    // arguments), and `argv` holds argc of them; `exit` is null or the implicit task's slot.
    unsafe { oxiomp_invoke_microtask(o.func, &mut g, &mut t, o.argc as i64, o.argv, exit) };
    crate::ompt::frame::implicit_code_ended(exit);
}

fn outlined_job(o: &Outlined) -> Job {
    Job { run: run_outlined, data: o as *const Outlined as *const (), entry: o.func, internal: false }
}

/// Called by the shim's `__kmpc_fork_call` with the variadic arguments collected.
///
/// # Safety
/// `argv` holds `argc` arguments for `func`, as clang passes them.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn oxiomp_fork_call_args(
    loc: *const Ident,
    argc: i32,
    func: Microtask,
    argv: *const *mut c_void,
) {
    let o = Outlined { func, argc: argc.max(0) as usize, argv };
    // SAFETY: `o` and `argv` (argc arguments, the caller's contract) outlive the fork, and
    // `run_outlined` runs any copy of them.
    let req = unsafe { ForkRequest::outlined(outlined_job(&o), Ident::erased(loc)) };
    let th = Thread::current();
    let _entered = crate::ompt::frame::enter(th);
    oxiomp_runtime::fork(th, req);
}

/// Called by the shim's `__kmpc_fork_teams`.
///
/// # Safety
/// As for [`oxiomp_fork_call_args`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn oxiomp_fork_teams_args(
    loc: *const Ident,
    argc: i32,
    func: Microtask,
    argv: *const *mut c_void,
) {
    let o = Outlined { func, argc: argc.max(0) as usize, argv };
    let th = Thread::current();
    let _entered = crate::ompt::frame::enter(th);
    oxiomp_runtime::fork_teams(th, ForkRequest::new(outlined_job(&o), Ident::erased(loc)));
}

/// `parallel if(cond)` as clang's OpenMPIRBuilder emits it: `args` is the one argument.
///
/// # Safety
/// `func` takes `argc` (0 or 1) arguments, the first being `args`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_fork_call_if(
    loc: *const Ident,
    argc: i32,
    func: Microtask,
    cond: i32,
    args: *mut c_void,
) {
    let argv = [args];
    let argc = argc.clamp(0, 1);
    if cond != 0 {
        // SAFETY: argv holds argc (<= 1) arguments.
        unsafe { oxiomp_fork_call_args(loc, argc, func, argv.as_ptr()) };
        return;
    }
    let th = Thread::current();
    let _entered = crate::ompt::frame::enter(th);
    oxiomp_runtime::serialized_begin(th, Ident::erased(loc));
    let mut g = th.gtid();
    let mut zero = 0;
    let exit = crate::ompt::frame::exit_slot();
    // SAFETY: as above; the region runs on this thread alone; `exit` is null or the slot of
    // its implicit task.
    unsafe { oxiomp_invoke_microtask(func, &mut g, &mut zero, argc as i64, argv.as_ptr(), exit) };
    crate::ompt::frame::implicit_code_ended(exit);
    oxiomp_runtime::serialized_end(th);
}

crate::ompt::frame::with_caller_frame!(
    /// A serialized `parallel` (`if(false)`): the program runs the region's code next, then
    /// `__kmpc_end_serialized_parallel`.
    __kmpc_serialized_parallel(loc: *const Ident, gtid: i32) => serialized_parallel_from, "rdx"
);

/// `__kmpc_serialized_parallel`, called from the program's frame with frame pointer `fp`.
extern "C" fn serialized_parallel_from(loc: *const Ident, _gtid: i32, fp: usize) {
    let th = Thread::current();
    let parent = oxiomp_runtime::task::frame::kept().then(|| crate::ompt::frame::program_will_call(th, fp));
    oxiomp_runtime::serialized_begin(th, Ident::erased(loc));
    if let Some(parent) = parent {
        crate::ompt::frame::program_calls(parent, oxiomp_runtime::task::current(th), fp);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_end_serialized_parallel(_loc: *const Ident, _gtid: i32) {
    let th = Thread::current();
    if oxiomp_runtime::task::frame::kept() {
        let region = oxiomp_runtime::task::current(th);
        // SAFETY: the encountering task is suspended beneath the region, alive.
        if let Some(parent) = unsafe { region.head.team.as_ref().and_then(|t| t.encountering.as_ref()) } {
            crate::ompt::frame::code_returned(parent, region);
        }
    }
    if !oxiomp_runtime::serialized_end(th) {
        crate::misuse("__kmpc_end_serialized_parallel", "no serialized parallel region is open; ignored");
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_push_num_threads(_loc: *const Ident, _gtid: i32, nth: i32) {
    if nth > 0 {
        oxiomp_runtime::team::push_num_threads(Thread::current(), nth as u32);
    } else {
        crate::misuse("__kmpc_push_num_threads", "num_threads must be positive; clause ignored");
    }
}

/// `num_threads(n1, n2, ...)`: n1 threads for the next region, nthreads-var n2, ... inside it.
///
/// # Safety
/// `list` points at `len` integers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_push_num_threads_list(
    _loc: *const Ident,
    _gtid: i32,
    len: u32,
    list: *const i32,
) {
    // SAFETY: per the contract.
    if let Some(list) = unsafe { thread_counts("__kmpc_push_num_threads_list", len, list) } {
        oxiomp_runtime::team::push_num_threads_list(Thread::current(), &list);
    }
}

/// The thread counts of a `num_threads` list, each positive, or None (after a report) when the
/// list is empty or holds a count that is not.
///
/// # Safety
/// `list` points at `len` integers (or `len` is 0).
unsafe fn thread_counts(call: &str, len: u32, list: *const i32) -> Option<Vec<u32>> {
    if len == 0 || list.is_null() {
        crate::misuse(call, "an empty num_threads list; clause ignored");
        return None;
    }
    // SAFETY: per the contract.
    let list = unsafe { std::slice::from_raw_parts(list, len as usize) };
    if list.iter().any(|&n| n <= 0) {
        crate::misuse(call, "num_threads values must be positive; clause ignored");
        return None;
    }
    Some(list.iter().map(|&n| n as u32).collect())
}

/// `num_threads(strict: n)` (OpenMP 6): the region must get n threads; when it cannot,
/// `severity` 1 warns and the region runs with what it got, 2 (fatal) ends the program; both
/// name the clause's location and print `message`.
///
/// # Safety
/// `message` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_push_num_threads_strict(
    loc: *const Ident,
    gtid: i32,
    nth: i32,
    severity: i32,
    message: *const std::ffi::c_char,
) {
    __kmpc_push_num_threads(loc, gtid, nth);
    if nth > 0 {
        // SAFETY: per the contract.
        unsafe { push_strict(loc, severity, message) };
    }
}

/// `num_threads(strict: n1, n2, ...)`: as `__kmpc_push_num_threads_list`, the first count
/// strict as in `__kmpc_push_num_threads_strict`.
///
/// # Safety
/// `list` points at `len` integers; `message` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_push_num_threads_list_strict(
    loc: *const Ident,
    _gtid: i32,
    len: u32,
    list: *const i32,
    severity: i32,
    message: *const std::ffi::c_char,
) {
    // SAFETY: per the contract.
    if let Some(list) = unsafe { thread_counts("__kmpc_push_num_threads_list_strict", len, list) } {
        oxiomp_runtime::team::push_num_threads_list(Thread::current(), &list);
        // SAFETY: per the contract.
        unsafe { push_strict(loc, severity, message) };
    }
}

/// # Safety
/// `message` is null or a NUL-terminated string.
unsafe fn push_strict(loc: *const Ident, severity: i32, message: *const std::ffi::c_char) {
    // SAFETY: per the contract.
    let msg = unsafe { crate::c_message(message) };
    let text = format!("{}: {msg}", Ident::location(loc));
    oxiomp_runtime::team::push_strict(Thread::current(), Strict { fatal: severity != 1, text });
}

/// No-op: pushed clauses are consumed by the fork they precede.
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_pop_num_threads(_loc: *const Ident, _gtid: i32) {}

/// `thread_limit(n)` on a `target` construct run on the host: thread-limit-var of the current
/// task (n > 0; otherwise nothing changes).
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_set_thread_limit(_loc: *const Ident, _gtid: i32, n: i32) {
    if n > 0 {
        Thread::current().change_icvs(|i| i.thread_limit = n as u32);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_push_proc_bind(_loc: *const Ident, _gtid: i32, bind: i32) {
    match ProcBind::from_clause(bind) {
        Some(b) => oxiomp_runtime::team::push_proc_bind(Thread::current(), b),
        None => crate::misuse("__kmpc_push_proc_bind", "unknown proc_bind value; clause ignored"),
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_push_num_teams(_loc: *const Ident, _gtid: i32, num_teams: i32, thread_limit: i32) {
    oxiomp_runtime::team::push_num_teams(
        Thread::current(),
        num_teams.max(0) as u32,
        thread_limit.max(0) as u32,
    );
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_push_num_teams_51(
    _loc: *const Ident,
    _gtid: i32,
    _lb: i32,
    ub: i32,
    thread_limit: i32,
) {
    oxiomp_runtime::team::push_num_teams(Thread::current(), ub.max(0) as u32, thread_limit.max(0) as u32);
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_global_thread_num(_loc: *const Ident) -> i32 {
    // A known thread: two loads and a return (clang calls this in every function that
    // creates tasks outside an outlined body); a new one registers in a tail call.
    match Thread::peek() {
        Some(th) => th.gtid(),
        None => gtid_of_new_thread(),
    }
}

#[cold]
#[inline(never)]
fn gtid_of_new_thread() -> i32 {
    Thread::current().gtid()
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_global_num_threads(_loc: *const Ident) -> i32 {
    oxiomp_runtime::Runtime::get().registered_threads() as i32
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_bound_thread_num(_loc: *const Ident) -> i32 {
    oxiomp_runtime::query::thread_num()
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_bound_num_threads(_loc: *const Ident) -> i32 {
    oxiomp_runtime::query::num_threads()
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_in_parallel(_loc: *const Ident) -> i32 {
    oxiomp_runtime::query::in_parallel() as i32
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_ok_to_fork(_loc: *const Ident) -> i32 {
    1
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_begin(_loc: *const Ident, _flags: i32) {
    oxiomp_runtime::Runtime::get();
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_end(_loc: *const Ident) {}

/// target-offload-var: 0 (`disabled`), 1 (`default`) or 2 (`mandatory`). Device runtimes ask
/// for it; the host is the only device here.
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_get_target_offload() -> i32 {
    oxiomp_runtime::query::target_offload()
}
