//! The runtime entry points a tool looks up by name (`ompt_function_lookup_t`): callback
//! registration and the inquiry functions. They are not exported: a tool reaches them only
//! through [`lookup`].

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

use oxiomp_runtime::Thread;
use oxiomp_runtime::task::Task;
use oxiomp_runtime::task::descriptor::Kind;

use super::{CALLBACKS, Data, Frame, cb};

/// `ompt_set_result_t`.
const SET_ERROR: c_int = 0;
const SET_NEVER: c_int = 1;
const SET_SOMETIMES: c_int = 3;
const SET_ALWAYS: c_int = 5;

/// `ompt_interface_fn_t`.
pub(super) type InterfaceFn = Option<unsafe extern "C" fn()>;

/// `ompt_function_lookup_t`.
pub(super) type Lookup = unsafe extern "C" fn(*const c_char) -> InterfaceFn;

/// Erases a function's type for [`lookup`].
macro_rules! erased {
    ($f:expr) => {{
        let f: usize = $f as usize;
        // SAFETY: a function address as a function pointer of another type; the tool casts it
        // back to the type OMPT gives the name it looked up.
        Some(unsafe { std::mem::transmute::<usize, unsafe extern "C" fn()>(f) })
    }};
}

/// `ompt_function_lookup_t`: the entry point named `name`, or null.
pub(super) unsafe extern "C" fn lookup(name: *const c_char) -> InterfaceFn {
    if name.is_null() {
        return None;
    }
    // SAFETY: the tool passes a NUL-terminated name.
    let name = unsafe { CStr::from_ptr(name) };
    match name.to_bytes() {
        b"ompt_set_callback" => erased!(set_callback as unsafe extern "C" fn(c_int, usize) -> c_int),
        b"ompt_get_callback" => erased!(get_callback as unsafe extern "C" fn(c_int, *mut usize) -> c_int),
        b"ompt_get_thread_data" => erased!(get_thread_data as extern "C" fn() -> *mut Data),
        b"ompt_get_parallel_info" => {
            erased!(get_parallel_info as unsafe extern "C" fn(c_int, *mut *mut Data, *mut c_int) -> c_int)
        }
        b"ompt_get_task_info" => erased!(
            get_task_info
                as unsafe extern "C" fn(
                    c_int,
                    *mut c_int,
                    *mut *mut Data,
                    *mut *const Frame,
                    *mut *mut Data,
                    *mut c_int,
                ) -> c_int
        ),
        b"ompt_get_task_memory" => {
            erased!(get_task_memory as unsafe extern "C" fn(*mut *mut c_void, *mut usize, c_int) -> c_int)
        }
        b"ompt_get_target_info" => {
            erased!(get_target_info as unsafe extern "C" fn(*mut u64, *mut u64, *mut u64) -> c_int)
        }
        b"ompt_enumerate_mutex_impls" => {
            erased!(
                enumerate_mutex_impls as unsafe extern "C" fn(c_int, *mut c_int, *mut *const c_char) -> c_int
            )
        }
        b"ompt_get_state" => erased!(get_state as unsafe extern "C" fn(*mut u64) -> c_int),
        b"ompt_enumerate_states" => {
            erased!(enumerate_states as unsafe extern "C" fn(c_int, *mut c_int, *mut *const c_char) -> c_int)
        }
        b"ompt_get_unique_id" => erased!(get_unique_id as extern "C" fn() -> u64),
        b"ompt_get_num_procs" => erased!(get_num_procs as extern "C" fn() -> c_int),
        b"ompt_get_num_places" => erased!(get_num_places as extern "C" fn() -> c_int),
        b"ompt_get_place_proc_ids" => {
            erased!(get_place_proc_ids as unsafe extern "C" fn(c_int, c_int, *mut c_int) -> c_int)
        }
        b"ompt_get_place_num" => erased!(get_place_num as extern "C" fn() -> c_int),
        b"ompt_get_partition_place_nums" => {
            erased!(get_partition_place_nums as unsafe extern "C" fn(c_int, *mut c_int) -> c_int)
        }
        b"ompt_get_proc_id" => erased!(get_proc_id as extern "C" fn() -> c_int),
        b"ompt_get_num_devices" => erased!(get_num_devices as extern "C" fn() -> c_int),
        b"ompt_finalize_tool" => erased!(finalize_tool as extern "C" fn()),
        _ => None,
    }
}

/// `ompt_set_callback`: `ompt_set_always` for the callbacks this runtime dispatches at every
/// event of their kind, `ompt_set_sometimes` for those it dispatches at some (a null callback
/// unregisters), `ompt_set_never` for the others, `ompt_set_error` for an unknown number.
unsafe extern "C" fn set_callback(which: c_int, callback: usize) -> c_int {
    let Ok(w) = usize::try_from(which) else { return SET_ERROR };
    if w == 0 || w > cb::LAST {
        return SET_ERROR;
    }
    let result = if cb::ALWAYS.contains(&w) {
        SET_ALWAYS
    } else if cb::SOMETIMES.contains(&w) {
        SET_SOMETIMES
    } else {
        return SET_NEVER;
    };
    // Relaxed: see `CALLBACKS`.
    CALLBACKS[w].store(callback, Ordering::Relaxed);
    result
}

/// `ompt_get_callback`: 1 and the callback if one is registered under `which`, else 0.
unsafe extern "C" fn get_callback(which: c_int, callback: *mut usize) -> c_int {
    let Some(slot) = usize::try_from(which).ok().and_then(|w| CALLBACKS.get(w)) else { return 0 };
    // Relaxed: see `CALLBACKS`.
    let f = slot.load(Ordering::Relaxed);
    if f == 0 || callback.is_null() {
        return 0;
    }
    // SAFETY: the tool passes a pointer to a callback variable.
    unsafe { callback.write(f) };
    1
}

/// Whether the calling thread may answer a tool's inquiry about itself: a tool is active and
/// the thread is the runtime's (libomp answers as if there were no region otherwise).
fn inquiring() -> Option<Thread> {
    Thread::peek().filter(|_| oxiomp_instrument::tool_attached())
}

/// `ompt_get_thread_data`: the calling thread's data, or null for a thread the runtime does
/// not know (or with no tool active).
extern "C" fn get_thread_data() -> *mut Data {
    inquiring().map_or(std::ptr::null_mut(), |th| th.desc().tool.as_ptr())
}

/// `ompt_get_parallel_info`: the region `ancestor_level` levels out from the calling thread's
/// innermost one (0: that one; an initial thread outside regions is in its implicit one).
/// Returns 2 (the region exists and its information is available) or 0.
unsafe extern "C" fn get_parallel_info(
    ancestor_level: c_int,
    data: *mut *mut Data,
    size: *mut c_int,
) -> c_int {
    let Some(th) = inquiring() else { return 0 };
    let Ok(mut up) = u32::try_from(ancestor_level) else { return 0 };
    let mut team: *const oxiomp_runtime::team::Team = th.team();
    while up > 0 && !team.is_null() {
        // SAFETY: a team's parent chain leads through the teams enclosing it, alive while the
        // calling thread is inside them (a league team's, through the league's: its initial
        // task is a league member's).
        team = unsafe {
            let initial = (*team).league_initial();
            if initial.is_null() { (*team).parent } else { (*initial).head.team }
        };
        up -= 1;
    }
    // SAFETY: as above (null past the outermost).
    let Some(t) = (unsafe { team.as_ref() }) else { return 0 };
    if !data.is_null() {
        // SAFETY: the tool passes a pointer to a data pointer variable.
        unsafe { data.write(t.tool.as_ptr()) };
    }
    if !size.is_null() {
        // SAFETY: the tool passes a pointer to an int.
        unsafe { size.write(t.nthreads as c_int) };
    }
    2
}

/// `ompt_task_flag_t`.
const TASK_INITIAL: c_int = 1;
const TASK_IMPLICIT: c_int = 2;
const TASK_UNDEFERRED: c_int = 0x0800_0000;

/// `ompt_get_task_info`: the task `ancestor_level` levels out from the calling thread's
/// current one (0: that one; an explicit task's is the task that generated it, an implicit
/// task's the implicit task of the enclosing region that encountered the region), with its
/// flags, data, frames, region's data and thread number; 2 if there is one, else 0. Each level
/// out is the task the thread ran before (the scheduling parent: see
/// `Task::scheduling_parent`), as libomp walks them.
unsafe extern "C" fn get_task_info(
    ancestor_level: c_int,
    flags: *mut c_int,
    task_data: *mut *mut Data,
    task_frame: *mut *const Frame,
    parallel_data: *mut *mut Data,
    thread_num: *mut c_int,
) -> c_int {
    let Some(th) = inquiring() else { return 0 };
    let Ok(mut up) = u32::try_from(ancestor_level) else { return 0 };
    let mut task: *const Task = oxiomp_runtime::task::current(th);
    let mut tid = th.tid();
    while up > 0 && !task.is_null() {
        // SAFETY: the current task and its scheduling ancestors are alive while it runs (each
        // is suspended beneath the next on this thread, or encountered the region of the
        // implicit task below it and waits for its end).
        let t = unsafe { &*task };
        task = t.scheduling_parent();
        if t.head.kind == Kind::Implicit {
            // SAFETY: an implicit task's team is alive while the task runs.
            let team = unsafe { &*t.head.team };
            tid = if team.league_initial().is_null() {
                team.parent_tid
            } else {
                // A league team's initial task: the implicit task of a league member.
                // SAFETY: that task runs the team on this thread, beneath it.
                let league = unsafe { &*(*task).head.team };
                (0..league.nthreads).find(|&i| std::ptr::eq(league.implicit_task(i), task)).unwrap_or(0)
            };
        }
        up -= 1;
    }
    // SAFETY: as above (null past the outermost).
    let Some(t) = (unsafe { task.as_ref() }) else { return 0 };
    // SAFETY: as above.
    let team = unsafe { &*t.head.team };
    let f = match t.head.kind {
        // A league member's task is a team's initial task; the team's code runs in a region
        // of one thread (see `Team::league_initial`).
        Kind::Implicit if team.is_league() => TASK_INITIAL,
        Kind::Implicit if !team.league_initial().is_null() => TASK_IMPLICIT | TASK_UNDEFERRED,
        Kind::Implicit if team.parent.is_null() => TASK_INITIAL,
        // A region of one thread runs its implicit task at once (as libomp flags it).
        Kind::Implicit if team.nthreads == 1 => TASK_IMPLICIT | TASK_UNDEFERRED,
        Kind::Implicit => TASK_IMPLICIT,
        _ => oxiomp_runtime::task::tool_flags(t) as c_int,
    };
    // SAFETY: the tool passes null or pointers to variables of these types.
    unsafe {
        if !flags.is_null() {
            flags.write(f);
        }
        if !task_data.is_null() {
            task_data.write(t.head.tool.as_ptr());
        }
        if !task_frame.is_null() {
            task_frame.write(super::frame::of(t));
        }
        if !parallel_data.is_null() {
            parallel_data.write(team.tool.as_ptr());
        }
        if !thread_num.is_null() {
            thread_num.write(tid as c_int);
        }
    }
    2
}

/// `ompt_get_task_memory`: no memory blocks are reported (0).
unsafe extern "C" fn get_task_memory(addr: *mut *mut c_void, size: *mut usize, _block: c_int) -> c_int {
    // SAFETY: the tool passes null or pointers to variables of these types.
    unsafe {
        if !addr.is_null() {
            addr.write(std::ptr::null_mut());
        }
        if !size.is_null() {
            size.write(0);
        }
    }
    0
}

/// `ompt_get_target_info`: the thread is in no target region (0).
unsafe extern "C" fn get_target_info(_device: *mut u64, _target: *mut u64, _host_op: *mut u64) -> c_int {
    0
}

/// `ompt_enumerate_mutex_impls`: the one kind of lock this runtime has, a futex word
/// (`ompt_mutex_impl_none`, 0, starts the list); 1 if there is a next one, else 0.
unsafe extern "C" fn enumerate_mutex_impls(
    current: c_int,
    next: *mut c_int,
    name: *mut *const c_char,
) -> c_int {
    if current != 0 || next.is_null() || name.is_null() {
        return 0;
    }
    // SAFETY: the tool passes pointers to an int and a string pointer variable.
    unsafe {
        next.write(1);
        name.write(c"oxiomp_mutex_impl_futex".as_ptr());
    }
    1
}

/// `ompt_state_t` values and names (`ompt_enumerate_states`).
const STATES: &[(u32, &CStr)] = oxiomp_runtime::debug::state::ompt_state::ALL;

/// `ompt_state_undefined`: the state of a thread the runtime does not know.
const STATE_UNDEFINED: c_int = 0x102;

/// `ompt_enumerate_states`: the state after `current` (`ompt_state_undefined` starts the
/// list); 1 if there is one, else 0.
unsafe extern "C" fn enumerate_states(current: c_int, next: *mut c_int, name: *mut *const c_char) -> c_int {
    let at = if current == STATE_UNDEFINED {
        Some(0)
    } else {
        STATES.iter().position(|(v, _)| *v as c_int == current).map(|i| i + 1)
    };
    let Some(&(v, n)) = at.and_then(|i| STATES.get(i)).filter(|(v, _)| *v as c_int != STATE_UNDEFINED) else {
        return 0;
    };
    if next.is_null() || name.is_null() {
        return 0;
    }
    // SAFETY: the tool passes pointers to an int and a string pointer variable.
    unsafe {
        next.write(v as c_int);
        name.write(n.as_ptr());
    }
    1
}

/// `ompt_get_state`: what the calling thread is doing and what it waits for (the lock,
/// critical section or ordered region's wait id, its team's for a barrier), as the state
/// keeper (installed with the tool: `crate::ompd`) keeps it in the thread's descriptor. A
/// thread that is not the runtime's works serially (as libomp answers:
/// `ompt_state_work_serial`).
unsafe extern "C" fn get_state(wait_id: *mut u64) -> c_int {
    let (state, id) = match Thread::peek() {
        // Relaxed: values for display, written by this thread itself.
        Some(th) => (th.desc().state.load(Ordering::Relaxed), th.desc().wait_id.load(Ordering::Relaxed)),
        None => (0x000, 0),
    };
    if !wait_id.is_null() {
        // SAFETY: the tool passes a pointer to a wait id variable.
        unsafe { wait_id.write(id) };
    }
    state as c_int
}

/// `ompt_get_unique_id`: a number no other call returns (never 0).
extern "C" fn get_unique_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    // Relaxed: uniqueness is all that is asked.
    NEXT.fetch_add(1, Ordering::Relaxed)
}

extern "C" fn get_num_procs() -> c_int {
    crate::api::omp_get_num_procs()
}

extern "C" fn get_num_places() -> c_int {
    oxiomp_runtime::query::num_places()
}

/// `ompt_get_place_proc_ids`: the number of CPUs in `place`, and the first `n` of them in
/// `ids`.
unsafe extern "C" fn get_place_proc_ids(place: c_int, n: c_int, ids: *mut c_int) -> c_int {
    let procs = oxiomp_runtime::query::place_proc_ids(place);
    if !ids.is_null() {
        for (i, p) in procs.iter().take(n.max(0) as usize).enumerate() {
            // SAFETY: the tool passes room for `n` ints.
            unsafe { ids.add(i).write(*p as c_int) };
        }
    }
    procs.len() as c_int
}

extern "C" fn get_place_num() -> c_int {
    if Thread::peek().is_none() {
        return -1;
    }
    oxiomp_runtime::query::place_num()
}

/// `ompt_get_partition_place_nums`: the number of places in the calling task's partition, and
/// the first `n` of them in `nums`.
unsafe extern "C" fn get_partition_place_nums(n: c_int, nums: *mut c_int) -> c_int {
    if Thread::peek().is_none() {
        return 0;
    }
    let part = oxiomp_runtime::query::partition();
    if !nums.is_null() {
        for (i, p) in part.clone().take(n.max(0) as usize).enumerate() {
            // SAFETY: the tool passes room for `n` ints.
            unsafe { nums.add(i).write(p) };
        }
    }
    part.len() as c_int
}

/// `ompt_get_proc_id`: the CPU the calling thread runs on (-1 if unknown).
/// `ompt_get_proc_id`: the CPU the calling thread runs on, or -1 on a thread that is not the
/// runtime's or with no tool active.
extern "C" fn get_proc_id() -> c_int {
    if !oxiomp_instrument::tool_attached() || Thread::peek().is_none() {
        return -1;
    }
    // SAFETY: sched_getcpu has no preconditions.
    unsafe { libc::sched_getcpu() }
}

/// `ompt_get_num_devices`: no offload devices.
extern "C" fn get_num_devices() -> c_int {
    0
}

/// `ompt_finalize_tool`: finalizes the tool now (as at exit; once).
extern "C" fn finalize_tool() {
    super::start::finalize();
}
