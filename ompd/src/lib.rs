//! oxiomp's OMPD library (`libompd.so`): what a debugger loads to ask a program on oxiomp
//! about its OpenMP threads, parallel regions, tasks and ICVs (OpenMP 5.2 §20).
//!
//! The library runs inside the debugger. It never links the runtime: it reads the program
//! only through the callbacks the debugger gives it (symbol lookup, memory and string reads,
//! type sizes), starting from two exported symbols of the runtime: `oxiomp_debug_layout`
//! (where each field it reads lies, by name: see `runtime/src/debug/layout.rs`) and
//! `oxiomp_debug_globals` (the runtime's root and process-wide values). So it works on a live
//! process and on a core file alike, and on a runtime without debug information.
//!
//! Handles are the library's own allocations, each with a tag: a null handle or one of
//! another kind gives `ompd_rc_bad_input` / `ompd_rc_stale_handle`, never a crash. Every
//! entry returns an `ompd_rc_t`; nothing panics across the C boundary (no indexing that can
//! fail, no unwrap).

#![deny(clippy::undocumented_unsafe_blocks)]
// The entries are safe `extern "C"` functions that take the debugger's pointers, as the
// `extern "C"` layer of the runtime does: each is checked for null and turned into a
// reference once, inside an `unsafe` block that states what OMPD guarantees.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod icv;
pub mod target;
pub mod types;

use std::ffi::{CString, c_char, c_int, c_void};
use std::sync::RwLock;

use icv::At;
use target::{Result, Target};
use types::{Address, AsContext, Callbacks, FrameInfo, Rc, Size, Word, scope, thread_id};

/// The OMPD version this library implements (`ompd_get_api_version`, and what
/// `ompd_initialize` accepts): OpenMP 5.1's.
pub const API_VERSION: Word = 201811;
/// The OpenMP version oxiomp implements (`_OPENMP`).
const OMP_VERSION: Word = 202011;

static CALLBACKS: RwLock<Option<Callbacks>> = RwLock::new(None);

fn callbacks() -> Result<Callbacks> {
    CALLBACKS.read().map_err(|_| Rc::Error)?.ok_or(Rc::Error)
}

const TAG_SPACE: u64 = u64::from_le_bytes(*b"ompdAS\0\0");
const TAG_THREAD: u64 = u64::from_le_bytes(*b"ompdTH\0\0");
const TAG_PARALLEL: u64 = u64::from_le_bytes(*b"ompdPA\0\0");
const TAG_TASK: u64 = u64::from_le_bytes(*b"ompdTA\0\0");
const TAG_FREED: u64 = u64::from_le_bytes(*b"ompdXX\0\0");

/// An address space handle: one process.
#[repr(C)]
pub struct Space {
    tag: u64,
    target: Target,
    /// The ICV strings given out, each once (`ompd_get_icv_string_from_scope`): they stay
    /// valid while the space's handle does.
    strings: std::sync::Mutex<Vec<CString>>,
}

/// A thread handle: the thread's descriptor.
#[repr(C)]
pub struct ThreadH {
    tag: u64,
    space: *const Space,
    desc: u64,
}

/// A parallel handle: the team of the region.
#[repr(C)]
pub struct ParallelH {
    tag: u64,
    space: *const Space,
    team: u64,
}

/// A task handle: the task's descriptor, and that of the thread it was found running or
/// suspended on (0: not known).
#[repr(C)]
pub struct TaskH {
    tag: u64,
    space: *const Space,
    task: u64,
    thread: u64,
}

/// The handle behind `p`, if it is one of this kind and alive.
///
/// # Safety
/// `p` is null or a pointer the library returned (of any handle kind, possibly released:
/// released handles keep their memory with a tag that says so, see `release`).
unsafe fn handle<'a, T>(p: *const T, tag: u64) -> Result<&'a T> {
    if p.is_null() {
        return Err(Rc::BadInput);
    }
    // SAFETY: per the contract every handle starts with its tag (all are `repr(C)` with
    // `tag` first), so the first word can be read whatever the kind.
    let t = unsafe { *(p as *const u64) };
    if t != tag {
        return Err(if t == TAG_FREED { Rc::StaleHandle } else { Rc::BadInput });
    }
    // SAFETY: the tag says it is a live `T`.
    Ok(unsafe { &*p })
}

/// The space a handle belongs to.
fn space<'a>(s: *const Space) -> Result<&'a Target> {
    // SAFETY: handles hold the space they were made from, which the debugger releases only
    // after them (OMPD's rule); `handle` checks its tag.
    Ok(&unsafe { handle(s, TAG_SPACE) }?.target)
}

/// Gives the debugger a new handle.
fn give<T>(out: *mut *mut T, h: T) -> Result<()> {
    if out.is_null() {
        return Err(Rc::BadInput);
    }
    // SAFETY: the debugger passes a place for the handle pointer.
    unsafe { out.write(Box::into_raw(Box::new(h))) };
    Ok(())
}

/// Releases a handle: its memory is kept (a few words per handle) with a tag that marks it
/// released, so that a handle used after its release is reported stale, not read freed.
fn release<T>(p: *mut T, tag: u64) -> Result<()> {
    // SAFETY: `handle`'s contract is OMPD's: the debugger passes what the library gave.
    unsafe { handle(p as *const T, tag) }?;
    // SAFETY: a live handle of this kind: its first word is the tag.
    unsafe { (p as *mut u64).write(TAG_FREED) };
    Ok(())
}

/// Runs an entry's body, turning its result into an `ompd_rc_t`.
fn rc(f: impl FnOnce() -> Result<()>) -> Rc {
    match f() {
        Ok(()) => Rc::Ok,
        Err(e) => e,
    }
}

/// Writes `v` where the debugger asked.
fn put<T>(out: *mut T, v: T) -> Result<()> {
    if out.is_null() {
        return Err(Rc::BadInput);
    }
    // SAFETY: the debugger passes a place of the type the API gives.
    unsafe { out.write(v) };
    Ok(())
}

// ---- Initialisation and versions -------------------------------------------------------

/// `ompd_initialize`: keeps the debugger's callbacks.
///
/// # Safety
/// `callbacks` points at the debugger's callback table, valid until `ompd_finalize`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ompd_initialize(api_version: Word, callbacks: *const Callbacks) -> Rc {
    rc(|| {
        if api_version > API_VERSION || api_version < 201811 {
            return Err(Rc::Unsupported);
        }
        // SAFETY: per the contract.
        let cb = unsafe { callbacks.as_ref() }.ok_or(Rc::BadInput)?;
        *CALLBACKS.write().map_err(|_| Rc::Error)? = Some(*cb);
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_api_version(version: *mut Word) -> Rc {
    rc(|| put(version, API_VERSION))
}

const VERSION_STRING: &std::ffi::CStr = {
    let s = concat!("oxiomp OMPD ", env!("CARGO_PKG_VERSION"), " (OpenMP 5.1 API)\0");
    match std::ffi::CStr::from_bytes_with_nul(s.as_bytes()) {
        Ok(c) => c,
        Err(_) => panic!("version string"),
    }
};

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_version_string(string: *mut *const c_char) -> Rc {
    rc(|| put(string, VERSION_STRING.as_ptr()))
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_finalize() -> Rc {
    rc(|| {
        let mut cb = CALLBACKS.write().map_err(|_| Rc::Error)?;
        cb.take().map(|_| ()).ok_or(Rc::Unsupported)
    })
}

/// `ompd_process_initialize`: a handle on the process behind `context`, if it runs oxiomp
/// (`ompd_rc_incompatible` otherwise).
#[unsafe(no_mangle)]
pub extern "C" fn ompd_process_initialize(context: *mut AsContext, handle: *mut *mut Space) -> Rc {
    rc(|| {
        if context.is_null() {
            return Err(Rc::BadInput);
        }
        let target = Target::open(callbacks()?, context)?;
        give(handle, Space { tag: TAG_SPACE, target, strings: Default::default() })
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_device_initialize(
    _process: *mut Space,
    _context: *mut AsContext,
    _kind: u64,
    _sizeof_id: Size,
    _id: *mut c_void,
    _device: *mut *mut Space,
) -> Rc {
    Rc::Unsupported
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_rel_address_space_handle(handle: *mut Space) -> Rc {
    rc(|| release(handle, TAG_SPACE))
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_omp_version(space_h: *mut Space, version: *mut Word) -> Rc {
    rc(|| {
        space(space_h)?;
        put(version, OMP_VERSION)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_omp_version_string(space_h: *mut Space, string: *mut *const c_char) -> Rc {
    rc(|| {
        space(space_h)?;
        put(string, c"OpenMP 5.1 (oxiomp)".as_ptr())
    })
}

// ---- Threads -------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_thread_handle(
    space_h: *mut Space,
    kind: u64,
    sizeof_id: Size,
    id: *const c_void,
    out: *mut *mut ThreadH,
) -> Rc {
    rc(|| {
        let t = space(space_h)?;
        let field = id_field(kind)?;
        if id.is_null() {
            return Err(Rc::BadInput);
        }
        let tid = match sizeof_id {
            // SAFETY: the debugger passes an id of `sizeof_id` bytes (a `pthread_t` or an LWP id).
            4 => u64::from(unsafe { (id as *const u32).read_unaligned() }),
            // SAFETY: as above.
            8 => unsafe { (id as *const u64).read_unaligned() },
            _ => return Err(Rc::BadInput),
        };
        if tid == 0 {
            return Err(Rc::Unavailable);
        }
        for d in t.threads()? {
            if t.get(d, field)? == tid {
                return give(out, ThreadH { tag: TAG_THREAD, space: space_h, desc: d });
            }
        }
        Err(Rc::Unavailable)
    })
}

/// The thread descriptor's field that holds an id of `kind`: the LWP id or the `pthread_t`.
fn id_field(kind: u64) -> Result<&'static str> {
    match kind {
        thread_id::LWP => Ok("thread.os_tid"),
        thread_id::PTHREAD => Ok("thread.pthread"),
        _ => Err(Rc::Unsupported),
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_rel_thread_handle(h: *mut ThreadH) -> Rc {
    rc(|| release(h, TAG_THREAD))
}

fn thread<'a>(h: *const ThreadH) -> Result<(&'a ThreadH, &'a Target)> {
    // SAFETY: OMPD's contract: the debugger passes what the library gave.
    let th = unsafe { handle(h, TAG_THREAD) }?;
    Ok((th, space(th.space)?))
}

fn parallel<'a>(h: *const ParallelH) -> Result<(&'a ParallelH, &'a Target)> {
    // SAFETY: as in `thread`.
    let p = unsafe { handle(h, TAG_PARALLEL) }?;
    Ok((p, space(p.space)?))
}

fn task<'a>(h: *const TaskH) -> Result<(&'a TaskH, &'a Target)> {
    // SAFETY: as in `thread`.
    let p = unsafe { handle(h, TAG_TASK) }?;
    Ok((p, space(p.space)?))
}

/// Orders two handles by what they stand for.
fn compare(a: u64, b: u64, out: *mut c_int) -> Result<()> {
    put(out, a.cmp(&b) as c_int)
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_thread_handle_compare(a: *mut ThreadH, b: *mut ThreadH, cmp: *mut c_int) -> Rc {
    rc(|| compare(thread(a)?.0.desc, thread(b)?.0.desc, cmp))
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_thread_id(h: *mut ThreadH, kind: u64, sizeof_id: Size, id: *mut c_void) -> Rc {
    rc(|| {
        let (th, t) = thread(h)?;
        let tid = t.get(th.desc, id_field(kind)?)?;
        if id.is_null() {
            return Err(Rc::BadInput);
        }
        match sizeof_id {
            // SAFETY: the debugger passes a place of `sizeof_id` bytes.
            4 => unsafe { (id as *mut u32).write_unaligned(tid as u32) },
            // SAFETY: as above.
            8 => unsafe { (id as *mut u64).write_unaligned(tid) },
            _ => return Err(Rc::BadInput),
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_state(h: *mut ThreadH, state: *mut Word, wait_id: *mut u64) -> Rc {
    rc(|| {
        let (th, t) = thread(h)?;
        put(state, t.get(th.desc, "thread.state")? as Word)?;
        if !wait_id.is_null() {
            put(wait_id, t.get(th.desc, "thread.wait_id").unwrap_or(0))?;
        }
        Ok(())
    })
}

/// The states, in OMPT's order.
const STATES: &[(Word, &std::ffi::CStr)] = &[
    (0x000, c"ompt_state_work_serial"),
    (0x001, c"ompt_state_work_parallel"),
    (0x002, c"ompt_state_work_reduction"),
    (0x010, c"ompt_state_wait_barrier"),
    (0x011, c"ompt_state_wait_barrier_implicit_parallel"),
    (0x012, c"ompt_state_wait_barrier_implicit_workshare"),
    (0x013, c"ompt_state_wait_barrier_implicit"),
    (0x014, c"ompt_state_wait_barrier_explicit"),
    (0x015, c"ompt_state_wait_barrier_implementation"),
    (0x016, c"ompt_state_wait_barrier_teams"),
    (0x020, c"ompt_state_wait_taskwait"),
    (0x021, c"ompt_state_wait_taskgroup"),
    (0x040, c"ompt_state_wait_mutex"),
    (0x041, c"ompt_state_wait_lock"),
    (0x042, c"ompt_state_wait_critical"),
    (0x043, c"ompt_state_wait_atomic"),
    (0x044, c"ompt_state_wait_ordered"),
    (0x080, c"ompt_state_wait_target"),
    (0x081, c"ompt_state_wait_target_map"),
    (0x082, c"ompt_state_wait_target_update"),
    (0x100, c"ompt_state_idle"),
    (0x101, c"ompt_state_overhead"),
];
/// `ompt_state_undefined`: where the enumeration starts.
const STATE_UNDEFINED: Word = 0x102;

#[unsafe(no_mangle)]
pub extern "C" fn ompd_enumerate_states(
    space_h: *mut Space,
    current: Word,
    next: *mut Word,
    name: *mut *const c_char,
    more: *mut Word,
) -> Rc {
    rc(|| {
        space(space_h)?;
        let i = match current {
            STATE_UNDEFINED => 0,
            c => STATES.iter().position(|(v, _)| *v == c).ok_or(Rc::BadInput)? + 1,
        };
        let (v, n) = STATES.get(i).ok_or(Rc::BadInput)?;
        put(next, *v)?;
        put(name, n.as_ptr())?;
        put(more, (i + 1 < STATES.len()) as Word)
    })
}

// ---- Parallel regions ---------------------------------------------------------------------

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_curr_parallel_handle(h: *mut ThreadH, out: *mut *mut ParallelH) -> Rc {
    rc(|| {
        let (th, t) = thread(h)?;
        match t.get(th.desc, "thread.team")? {
            0 => Err(Rc::Unavailable),
            team => give(out, ParallelH { tag: TAG_PARALLEL, space: th.space, team }),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_enclosing_parallel_handle(h: *mut ParallelH, out: *mut *mut ParallelH) -> Rc {
    rc(|| {
        let (p, t) = parallel(h)?;
        match t.get(p.team, "team.parent")? {
            0 => Err(Rc::Unavailable),
            team => give(out, ParallelH { tag: TAG_PARALLEL, space: p.space, team }),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_task_parallel_handle(h: *mut TaskH, out: *mut *mut ParallelH) -> Rc {
    rc(|| {
        let (k, t) = task(h)?;
        match t.get(k.task, "task.team")? {
            0 => Err(Rc::Unavailable),
            team => give(out, ParallelH { tag: TAG_PARALLEL, space: k.space, team }),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_rel_parallel_handle(h: *mut ParallelH) -> Rc {
    rc(|| release(h, TAG_PARALLEL))
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_parallel_handle_compare(a: *mut ParallelH, b: *mut ParallelH, cmp: *mut c_int) -> Rc {
    rc(|| compare(parallel(a)?.0.team, parallel(b)?.0.team, cmp))
}

/// The descriptor of the thread whose number in `team` is `n`: a thread is in `team` when
/// its current team is `team`, or when it is the primary thread of a team nested in it
/// (its number in `team` is then the nested team's `parent_tid`).
fn member(t: &Target, team: u64, n: u64) -> Result<u64> {
    for d in t.threads()? {
        let (mut x, mut tid) = (t.get(d, "thread.team")?, t.get(d, "thread.tid")?);
        let mut hops = 0;
        while x != 0 && hops < 64 {
            if x == team {
                if tid == n {
                    return Ok(d);
                }
                break;
            }
            if tid != 0 {
                break;
            }
            tid = t.get(x, "team.parent_tid")?;
            x = t.get(x, "team.parent")?;
            hops += 1;
        }
    }
    Err(Rc::Unavailable)
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_thread_in_parallel(h: *mut ParallelH, n: c_int, out: *mut *mut ThreadH) -> Rc {
    rc(|| {
        let (p, t) = parallel(h)?;
        if n < 0 || n as u64 >= t.get(p.team, "team.nthreads")? {
            return Err(Rc::BadInput);
        }
        let desc = member(t, p.team, n as u64)?;
        give(out, ThreadH { tag: TAG_THREAD, space: p.space, desc })
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_task_in_parallel(h: *mut ParallelH, n: c_int, out: *mut *mut TaskH) -> Rc {
    rc(|| {
        let (p, t) = parallel(h)?;
        if n < 0 || n as u64 >= t.get(p.team, "team.nthreads")? {
            return Err(Rc::BadInput);
        }
        let base = t.get(p.team, "team.implicit_tasks")?;
        if base == 0 {
            return Err(Rc::Unavailable);
        }
        let stride = t.field("team.implicit_stride")?.size;
        let task = base + n as u64 * stride + t.field("implicit.task")?.offset;
        let thread = member(t, p.team, n as u64).unwrap_or(0);
        give(out, TaskH { tag: TAG_TASK, space: p.space, task, thread })
    })
}

// ---- Tasks ---------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_curr_task_handle(h: *mut ThreadH, out: *mut *mut TaskH) -> Rc {
    rc(|| {
        let (th, t) = thread(h)?;
        match t.get(th.desc, "thread.task")? {
            0 => Err(Rc::Unavailable),
            task => give(out, TaskH { tag: TAG_TASK, space: th.space, task, thread: th.desc }),
        }
    })
}

/// Whether `task` is an implicit task.
fn implicit(t: &Target, task: u64) -> Result<bool> {
    Ok(t.get(task, "task.kind")? == 0)
}

/// The task that encountered the region of implicit task `task` (0 for an initial thread's):
/// both its generating and its scheduling task.
fn encountering(t: &Target, task: u64) -> Result<u64> {
    t.get(t.get(task, "task.team")?, "team.encountering")
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_generating_task_handle(h: *mut TaskH, out: *mut *mut TaskH) -> Rc {
    rc(|| {
        let (k, t) = task(h)?;
        // An implicit task's generating task is the one that encountered its region.
        let parent =
            if implicit(t, k.task)? { encountering(t, k.task)? } else { t.get(k.task, "task.parent")? };
        match parent {
            0 => Err(Rc::Unavailable),
            task => give(out, TaskH { tag: TAG_TASK, space: k.space, task, thread: 0 }),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_scheduling_task_handle(h: *mut TaskH, out: *mut *mut TaskH) -> Rc {
    rc(|| {
        let (k, t) = task(h)?;
        // An implicit task's is the task that encountered its region; an explicit task's is
        // the one its thread ran before it (kept with its frames while it runs).
        let sched = if implicit(t, k.task)? {
            encountering(t, k.task)?
        } else {
            match t.get(k.task, "task.frame")? {
                0 => 0,
                f => t.get(f, "toolframe.scheduler")?,
            }
        };
        match sched {
            0 => Err(Rc::Unavailable),
            task => give(out, TaskH { tag: TAG_TASK, space: k.space, task, thread: k.thread }),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_rel_task_handle(h: *mut TaskH) -> Rc {
    rc(|| release(h, TAG_TASK))
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_task_handle_compare(a: *mut TaskH, b: *mut TaskH, cmp: *mut c_int) -> Rc {
    rc(|| compare(task(a)?.0.task, task(b)?.0.task, cmp))
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_task_function(h: *mut TaskH, entry: *mut Address) -> Rc {
    rc(|| {
        let (k, t) = task(h)?;
        let f = if implicit(t, k.task)? {
            t.get(t.get(k.task, "task.team")?, "team.entry")?
        } else {
            t.read_ptr(k.task + t.field("task.routine")?.offset)?
        };
        put(entry, Address { segment: 0, address: f })
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_task_frame(h: *mut TaskH, exit: *mut FrameInfo, enter: *mut FrameInfo) -> Rc {
    rc(|| {
        let (k, t) = task(h)?;
        let (mut x, mut e) = (FrameInfo::default(), FrameInfo::default());
        let tf = t.get(k.task, "task.frame")?;
        if tf != 0 {
            let f = t.addr_of(tf, "toolframe.frame")?;
            x.frame_address.address = t.get(f, "frame.exit")?;
            e.frame_address.address = t.get(f, "frame.enter")?;
            x.frame_flag = t.get(f, "frame.exit_flags")? as i32 as Word;
            e.frame_flag = t.get(f, "frame.enter_flags")? as i32 as Word;
        }
        put(exit, x)?;
        put(enter, e)
    })
}

// ---- ICVs, tool data, display --------------------------------------------------------------

#[unsafe(no_mangle)]
pub extern "C" fn ompd_enumerate_icvs(
    space_h: *mut Space,
    current: u64,
    next: *mut u64,
    name: *mut *const c_char,
    scope_out: *mut c_int,
    more: *mut c_int,
) -> Rc {
    rc(|| {
        space(space_h)?;
        let i = current as usize;
        let icv = icv::ICVS.get(i).ok_or(Rc::BadInput)?;
        put(next, i as u64 + 1)?;
        put(name, icv_name(i)?)?;
        put(scope_out, icv.scope)?;
        put(more, (i + 1 < icv::ICVS.len()) as c_int)
    })
}

/// The NUL-terminated name of ICV index `i` (made once, kept for the library's life).
fn icv_name(i: usize) -> Result<*const c_char> {
    static NAMES: std::sync::OnceLock<Vec<CString>> = std::sync::OnceLock::new();
    let names =
        NAMES.get_or_init(|| icv::ICVS.iter().map(|v| CString::new(v.name).unwrap_or_default()).collect());
    names.get(i).map(|c| c.as_ptr()).ok_or(Rc::BadInput)
}

/// Where an ICV of `scope` is read for `handle` (whose kind the scope gives), and the space
/// the handle belongs to.
fn at<'a>(handle: *mut c_void, sc: c_int) -> Result<(&'a Target, At, *const Space)> {
    Ok(match sc {
        scope::ADDRESS_SPACE => (space(handle as *const Space)?, At::Process, handle as *const Space),
        scope::THREAD => {
            let (th, t) = thread(handle as *const ThreadH)?;
            (t, At::Thread(th.desc), th.space)
        }
        scope::PARALLEL => {
            let (p, t) = parallel(handle as *const ParallelH)?;
            (t, At::Team(p.team), p.space)
        }
        scope::TASK | scope::IMPLICIT_TASK => {
            let (k, t) = task(handle as *const TaskH)?;
            (t, At::Task { task: k.task, thread: k.thread }, k.space)
        }
        _ => return Err(Rc::BadInput),
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_icv_from_scope(handle: *mut c_void, sc: c_int, id: u64, value: *mut Word) -> Rc {
    rc(|| {
        let icv = icv::by_id(id)?;
        if icv.scope != sc {
            return Err(Rc::BadInput);
        }
        let (t, at, _) = at(handle, sc)?;
        put(value, icv::value(t, icv, at)?)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_icv_string_from_scope(
    handle: *mut c_void,
    sc: c_int,
    id: u64,
    string: *mut *const c_char,
) -> Rc {
    rc(|| {
        let icv = icv::by_id(id)?;
        if icv.scope != sc {
            return Err(Rc::BadInput);
        }
        let (t, at, sp) = at(handle, sc)?;
        let s = CString::new(icv::string(t, icv, at)?).map_err(|_| Rc::Error)?;
        // SAFETY: `at` checked the handle, whose space outlives it (OMPD's rule).
        let sp = unsafe { self::handle(sp, TAG_SPACE) }?;
        let mut kept = sp.strings.lock().map_err(|_| Rc::Error)?;
        let i = match kept.iter().position(|k| *k == s) {
            Some(i) => i,
            None => {
                kept.push(s);
                kept.len() - 1
            }
        };
        // A `CString`'s bytes do not move when the vector does.
        put(string, kept.get(i).ok_or(Rc::Error)?.as_ptr())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_tool_data(
    handle: *mut c_void,
    sc: c_int,
    value: *mut Word,
    ptr: *mut Address,
) -> Rc {
    rc(|| {
        let (t, at, _) = at(handle, sc)?;
        let addr = match at {
            At::Thread(d) => t.addr_of(d, "thread.tool")?,
            At::Team(x) => t.addr_of(x, "team.tool")?,
            At::Task { task, .. } => t.addr_of(task, "task.tool")?,
            At::Process => return Err(Rc::BadInput),
        };
        put(value, t.read_uint(addr, 8)? as Word)?;
        if !ptr.is_null() {
            put(ptr, Address { segment: 0, address: addr })?;
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn ompd_get_display_control_vars(space_h: *mut Space, vars: *mut *const *const c_char) -> Rc {
    rc(|| {
        let t = space(space_h)?;
        let text = t.read_string(t.global("globals.display_env")?, 16384)?;
        let list: Vec<*const c_char> = text
            .lines()
            .filter_map(|l| CString::new(l).ok())
            .map(|c| c.into_raw() as *const c_char)
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        put(vars, Box::into_raw(list.into_boxed_slice()) as *const *const c_char)
    })
}

/// # Safety
/// `vars` points at a list `ompd_get_display_control_vars` gave, not released yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ompd_rel_display_control_vars(vars: *mut *const *const c_char) -> Rc {
    rc(|| {
        // SAFETY: per the contract.
        let list = unsafe { vars.as_ref() }.copied().ok_or(Rc::BadInput)?;
        if list.is_null() {
            return Err(Rc::BadInput);
        }
        let mut n = 0;
        // SAFETY: the list is NULL-terminated, each entry a `CString` made by the library.
        unsafe {
            while !(*list.add(n)).is_null() {
                drop(CString::from_raw(*list.add(n) as *mut c_char));
                n += 1;
            }
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(list as *mut *const c_char, n + 1)));
            vars.write(std::ptr::null());
        }
        Ok(())
    })
}
