//! Task-graph events for an Ayudame library (the runtime side of the Temanejo debugger).
//!
//! When the program has an `AYU_event` function when the runtime starts (an Ayudame library
//! preloaded, or linked into the program and exported), the runtime tells it of the task graph
//! its threads build and run; otherwise nothing is installed and nothing costs. The events come
//! from the one event vocabulary (`oxiomp_instrument`): this module is a recorder that turns
//! the runtime's task events into Ayudame's.
//!
//! | Ayudame event | task id | data | told when |
//! |---|---|---|---|
//! | PREINIT | 0 | `ayu_runtime_t` [`RUNTIME_ID`] | the runtime starts |
//! | INIT | 0 | null | right after PREINIT |
//! | REGISTERFUNCTION | function id | its name | the first task of a task function is created |
//! | ADDTASK | task | `int64_t[2]` {function id, priority} | an explicit task is created |
//! | ADDDEPENDENCY | successor | `uintptr_t[3]` {predecessor, address, address} | the runtime adds an edge |
//! | ADDTASKTOQUEUE | task | `intptr_t *` thread | a ready task is queued |
//! | PRERUNTASK, RUNTASK | task | `intptr_t *` thread; null | a thread starts the task |
//! | POSTRUNTASK | task | null | its body returned |
//! | REMOVETASK | task | null | it completed (or was discarded) |
//! | BARRIER | 0 | null | a team's barrier completed (told by its primary thread) |
//! | FINISH | 0 | null | the program exits |
//!
//! Task ids are the tasks' numbers in the runtime's events (`Task::head.trace_id`, the numbers
//! a trace gives them too: unique in the process, never 0, below 2^31 until two billion tasks
//! were created, so that they pass as Ayudame's `int` task ids); a thread is told by its number
//! in its team (`omp_get_thread_num`); function ids count from 1 in the order functions are
//! first seen; a function is named by its source place (`file:line`, from the binary's debug
//! information) or its symbol. An edge is told only while its predecessor has not completed
//! (one that has completed orders nothing), after both tasks' ADDTASK; its address is the
//! storage both tasks name in `depend` clauses (`usize::MAX`: `omp_all_memory`). A task its
//! creator runs at once (undeferred: `if(0)`, included, a team of one, the cut-off) is never
//! queued: its PRERUNTASK follows its ADDTASK. A detachable task's POSTRUNTASK comes when its
//! body returns and its REMOVETASK when its event is fulfilled. Implicit tasks are not tasks of
//! the graph (Ayudame's task 0 stands for the code outside tasks). A `taskwait depend` is told
//! as a task of its own, of the function `taskwait depend`, with an edge from each task it
//! waits for; it starts and ends when the wait is over (as OMPT tells it).
//!
//! With each task's dependences (before its edges) the runtime also calls the library's
//! `void oxiomp_ayu_access(int64_t task_id, uintptr_t address, int type)`, an addition of
//! oxiomp's, where the library defines it: once per address the task names, `type` as OMPT's
//! `ompt_dependence_type_t` (1 in, 2 out, 3 inout, 4 mutexinoutset, 7 inoutset, 34
//! `omp_all_memory`; clang passes `out` as `inout`). Ayudame's edge has no room for what
//! kind of access made it; with this a library tells an edge into or out of a
//! `mutexinoutset` or `inoutset` group from an ordinary one, and sees the members of such a
//! group, between which no edge runs.
//!
//! Requests go the other way: the library's request functions, where it defines them, are
//! asked by the scheduler ([`Requests`], a `Steering`): `AYU_getBreakpoint` and
//! `AYU_isBlocked` before a task starts (a task refused waits where any thread takes it, and
//! one its creator runs at once waits where it is, before its PRERUNTASK), and
//! `AYU_getPriorityLevel` as a ready task is queued, `AYU_getNumThreads` as an outermost
//! parallel region without a `num_threads` clause forks (0: no request).

use std::collections::HashMap;
use std::ffi::{CString, c_int, c_void};
use std::sync::{Mutex, OnceLock};

use oxiomp_instrument::{Event, Recorder, SyncPoint, ToolEvent, cancel_flags, sync_kind, task_status};
use oxiomp_runtime::Thread;
use oxiomp_runtime::task::{Access, Dep, Task};

use crate::symbolize::{Code, code_name};

/// `ayu_event_t` values.
mod event {
    pub const PREINIT: i32 = 1;
    pub const INIT: i32 = 2;
    pub const FINISH: i32 = 3;
    pub const REGISTERFUNCTION: i32 = 4;
    pub const ADDTASK: i32 = 5;
    pub const ADDDEPENDENCY: i32 = 7;
    pub const ADDTASKTOQUEUE: i32 = 8;
    pub const PRERUNTASK: i32 = 10;
    pub const RUNTASK: i32 = 11;
    pub const POSTRUNTASK: i32 = 12;
    pub const REMOVETASK: i32 = 14;
    pub const BARRIER: i32 = 16;
}

/// The `ayu_runtime_t` told at PREINIT: `AYU_RT_GOMP`, the one OpenMP runtime of Ayudame's
/// list (its others are StarSs runtimes and Cilk).
pub const RUNTIME_ID: c_int = 4;

/// `void AYU_event(ayu_event_t, const int64_t task_id, void *data)`.
type EventFn = unsafe extern "C" fn(c_int, i64, *mut c_void);

/// The program's `AYU_event`, found when the runtime started.
static AYU_EVENT: OnceLock<EventFn> = OnceLock::new();

/// `void oxiomp_ayu_access(int64_t task_id, uintptr_t address, int type)`.
type AccessFn = unsafe extern "C" fn(i64, usize, c_int);

/// The library's `oxiomp_ayu_access`, if it defines one.
static AYU_ACCESS: OnceLock<Option<AccessFn>> = OnceLock::new();

/// The library's request functions, each where it defines it.
struct Requests {
    /// `int AYU_getBreakpoint(void)`: 1 while no new task may start.
    breakpoint: Option<unsafe extern "C" fn() -> c_int>,
    /// `bool AYU_isBlocked(const int task_id)`.
    is_blocked: Option<unsafe extern "C" fn(c_int) -> bool>,
    /// `int AYU_getPriorityLevel(int task_id)`: -1 unchanged.
    priority_level: Option<unsafe extern "C" fn(c_int) -> c_int>,
    /// `unsigned int AYU_getNumThreads(void)`: 0 no request.
    num_threads: Option<unsafe extern "C" fn() -> u32>,
}

static REQUESTS: OnceLock<Requests> = OnceLock::new();

/// The program's function `name`, if it has one, as a pointer of type `F`.
///
/// # Safety
/// `F` is a function pointer type of the function's signature.
unsafe fn function<F: Copy>(name: &std::ffi::CStr) -> Option<F> {
    const { assert!(std::mem::size_of::<F>() == std::mem::size_of::<*mut c_void>()) };
    // SAFETY: `F` is a function pointer (the caller's word), as wide as the address.
    lookup(name).map(|p| unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) })
}

/// The address of the program's function `name`, if it has one.
fn lookup(name: &std::ffi::CStr) -> Option<*mut c_void> {
    // SAFETY: a lookup in the global scope with a NUL-terminated name.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!p.is_null()).then_some(p)
}

/// Looks for `AYU_event` and, if the program has one, tells it PREINIT and INIT, installs the
/// recorder and tells FINISH at exit.
pub(crate) fn start() {
    let Some(sym) = lookup(c"AYU_event") else { return };
    // SAFETY: `AYU_event` has Ayudame's signature, `EventFn`.
    let f = unsafe { std::mem::transmute::<*mut c_void, EventFn>(sym) };
    if AYU_EVENT.set(f).is_err() {
        return;
    }
    let mut runtime = RUNTIME_ID;
    tell(event::PREINIT, 0, &mut runtime as *mut c_int as *mut c_void);
    tell(event::INIT, 0, std::ptr::null_mut());
    // SAFETY: the function's signature is `AccessFn` (this module's documentation).
    let _ = AYU_ACCESS.set(unsafe { function(c"oxiomp_ayu_access") });
    static AYUDAME: Ayudame = Ayudame;
    oxiomp_instrument::install_ayudame(&AYUDAME);
    // SAFETY: each field's type is the seed's signature of the function of its name.
    let requests = REQUESTS.get_or_init(|| unsafe {
        Requests {
            breakpoint: function(c"AYU_getBreakpoint"),
            is_blocked: function(c"AYU_isBlocked"),
            priority_level: function(c"AYU_getPriorityLevel"),
            num_threads: function(c"AYU_getNumThreads"),
        }
    });
    if requests.breakpoint.is_some()
        || requests.is_blocked.is_some()
        || requests.priority_level.is_some()
        || requests.num_threads.is_some()
    {
        oxiomp_runtime::task::steer::install(requests);
    }
    // SAFETY: registers a plain function, run once at exit.
    unsafe { libc::atexit(finish) };
}

/// `atexit` handler: FINISH.
extern "C" fn finish() {
    tell(event::FINISH, 0, std::ptr::null_mut());
}

/// Calls `AYU_event(event, task, data)`; `data` lives for the call.
fn tell(event: i32, task: i64, data: *mut c_void) {
    if let Some(f) = AYU_EVENT.get() {
        // SAFETY: the library's function, given what its event's data says.
        unsafe { f(event, task, data) };
    }
}

/// Tells `event` with the calling thread's number in its team (`omp_get_thread_num`) as its
/// data (`intptr_t *`).
fn tell_thread(event: i32, task: i64) {
    let mut thread = Thread::peek().map_or(-1, |th| th.tid() as isize);
    tell(event, task, &mut thread as *mut isize as *mut c_void);
}

/// The task descriptor at `addr` (an event's task: alive while the event is dispatched).
fn task_at<'a>(addr: usize) -> Option<&'a Task> {
    // SAFETY: the runtime names live tasks in its events (null: none).
    unsafe { (addr as *const Task).as_ref() }
}

/// The Ayudame id of task `t` (0: none, an implicit task or the runtime's own node).
fn id(t: &Task) -> i64 {
    t.head.trace_id as i64
}

/// The Ayudame id of the explicit task at `addr` (None: not an explicit task).
fn id_of(addr: usize) -> Option<i64> {
    task_at(addr).map(id).filter(|&id| id != 0)
}

/// Function ids by code address. Written once per task function (the first task of each):
/// a lock and an allocation there, not per task.
static FUNCTIONS: Mutex<Option<HashMap<usize, i64>>> = Mutex::new(None);

/// The id of the task function at `code`, told (REGISTERFUNCTION) the first time.
fn function_id(code: usize) -> i64 {
    registered(code, || {
        let name = code_name(code, Code::Entry).map_or_else(|| format!("{code:#x}"), without_column);
        CString::new(name).unwrap_or_default()
    })
}

/// The id of the function at `key` (a task's code; 0: the `taskwait depend` waits), told
/// (REGISTERFUNCTION) with the name `name()` gives the first time.
fn registered(key: usize, name: impl FnOnce() -> CString) -> i64 {
    let mut functions = FUNCTIONS.lock().unwrap_or_else(|e| e.into_inner());
    let map = functions.get_or_insert_with(HashMap::new);
    if let Some(&id) = map.get(&key) {
        return id;
    }
    let id = map.len() as i64 + 1;
    map.insert(key, id);
    let name = name();
    // Told under the lock: no task of the function is announced before its name.
    tell(event::REGISTERFUNCTION, id, name.as_ptr() as *mut c_void);
    id
}

/// `file:line` of a function's place `file:line:column` (the column of a function's first
/// instruction says nothing of the task: the line is its directive's); other names as they
/// are.
fn without_column(name: String) -> String {
    let mut parts = name.rsplitn(3, ':');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(col), Some(line), Some(file))
            if [col, line].iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) =>
        {
            format!("{file}:{line}")
        }
        _ => name,
    }
}

/// The function id of the `taskwait depend` waits (told as tasks of their own).
fn wait_function_id() -> i64 {
    // Key 0: no task's code is at address 0.
    registered(0, || c"taskwait depend".to_owned())
}

thread_local! {
    /// The calling thread's `taskwait depend` waits in progress, innermost last (a thread
    /// runs other tasks while it waits, which may wait so too): the runtime's word for each
    /// and its Ayudame id.
    static WAITS: std::cell::RefCell<Vec<(usize, i64)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A `taskwait depend` whose word is `data` begins: told as a task of its own, whose id is
/// returned.
fn wait_begins(data: usize) -> i64 {
    let id = oxiomp_instrument::next_number() as i64;
    let mut info = [wait_function_id(), 0];
    tell(event::ADDTASK, id, info.as_mut_ptr() as *mut c_void);
    let _ = WAITS.try_with(|w| w.borrow_mut().push((data, id)));
    id
}

/// Tells the library's `oxiomp_ayu_access`, if any, the `n` dependences in the runtime's list
/// at `list` of task `id`.
fn accesses(id: i64, list: usize, n: u32) {
    let Some(f) = AYU_ACCESS.get().copied().flatten() else { return };
    // SAFETY: the runtime's list of `n` dependences, alive while its event is dispatched
    // (`ToolEvent::Dependences`, `ToolEvent::TaskwaitDeps`).
    let deps = unsafe { std::slice::from_raw_parts(list as *const Dep, n as usize) };
    for d in deps {
        // `omp_all_memory` by the address its edges are told with.
        let addr = if d.kind == Access::AllMemory { usize::MAX } else { d.addr };
        // SAFETY: the library's function, called as this module's documentation declares it.
        unsafe { f(id, addr, crate::ompt::dependence_type(d.kind)) };
    }
}

/// The calling thread's innermost `taskwait depend` waits for task `src` through `addr`.
fn wait_follows(src: usize, addr: usize) {
    let wait = WAITS.try_with(|w| w.borrow().last().map(|&(_, id)| id)).ok().flatten();
    if let (Some(wait), Some(src)) = (wait, id_of(src)) {
        let mut info = [src as usize, addr, addr];
        tell(event::ADDDEPENDENCY, wait, info.as_mut_ptr() as *mut c_void);
    }
}

/// The `taskwait depend` whose word is `data` is over: it runs and ends at once.
fn wait_ends(data: usize) {
    let wait = WAITS.try_with(|w| {
        let mut w = w.borrow_mut();
        let i = w.iter().rposition(|&(d, _)| d == data)?;
        Some(w.remove(i).1)
    });
    if let Ok(Some(id)) = wait {
        tell_thread(event::PRERUNTASK, id);
        for e in [event::RUNTASK, event::POSTRUNTASK, event::REMOVETASK] {
            tell(e, id, std::ptr::null_mut());
        }
    }
}

thread_local! {
    /// The task the calling thread discarded last (cancelled before it started): its
    /// REMOVETASK is told at the discard, so the switch away from it that follows is not.
    static DISCARDED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Requests {
    /// Whether the library holds back the task with Ayudame id `id`.
    fn holds(&self, id: i64) -> bool {
        // SAFETY: the library's function, called as the seed declares it.
        let breakpoint = || self.breakpoint.is_some_and(|f| unsafe { f() } != 0);
        // SAFETY: as above.
        let blocked = || id != 0 && self.is_blocked.is_some_and(|f| unsafe { f(id as c_int) });
        breakpoint() || blocked()
    }
}

impl oxiomp_runtime::task::steer::Steering for Requests {
    fn may_start(&self, t: &Task) -> bool {
        !self.holds(id(t))
    }

    fn priority(&self, t: &Task) -> Option<i32> {
        let id = id(t);
        // SAFETY: as in `holds`.
        let level = self.priority_level.filter(|_| id != 0).map(|f| unsafe { f(id as c_int) })?;
        (level >= 0).then_some(level)
    }

    fn num_threads(&self) -> Option<u32> {
        // SAFETY: as in `holds`.
        self.num_threads.map(|f| unsafe { f() }).filter(|&n| n > 0)
    }
}

/// Before task `id` starts on the calling thread: waits while the library holds it back (a
/// task its creator runs at once, which the scheduler cannot put aside; a queued one was
/// asked before it was taken, and waits here only if a request came meanwhile).
fn wait_until_released(id: i64) {
    let Some(r) = REQUESTS.get() else { return };
    while r.holds(id) {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Translates the runtime's task events into Ayudame's.
struct Ayudame;

impl Recorder for Ayudame {
    fn record(&self, events: &[Event]) {
        for e in events {
            if let Event::Tool(t) = e {
                tool_event(*t);
            }
        }
    }
}

fn tool_event(e: ToolEvent) {
    match e {
        ToolEvent::TaskCreate { task, .. } => {
            let Some(t) = task_at(task).filter(|t| id(t) != 0) else { return };
            let mut data = [function_id(t.routine_addr()), t.head.priority.get() as i64];
            tell(event::ADDTASK, id(t), data.as_mut_ptr() as *mut c_void);
        }
        ToolEvent::TaskDependence { src, sink, addr } => {
            if let (Some(src), Some(sink)) = (id_of(src), id_of(sink)) {
                let mut data = [src as usize, addr, addr];
                tell(event::ADDDEPENDENCY, sink, data.as_mut_ptr() as *mut c_void);
            }
        }
        ToolEvent::Dependences { task, list, n } => {
            if let Some(id) = id_of(task) {
                accesses(id, list, n);
            }
        }
        ToolEvent::TaskwaitDeps { data, list, n } => {
            let id = wait_begins(data);
            accesses(id, list, n);
        }
        ToolEvent::WaitDependence { src, addr } => wait_follows(src, addr),
        ToolEvent::TaskwaitDepsDone { data } => wait_ends(data),
        ToolEvent::TaskQueued { task } => {
            if let Some(id) = id_of(task) {
                tell_thread(event::ADDTASKTOQUEUE, id);
            }
        }
        ToolEvent::TaskSchedule { prior, status, next } => scheduled(prior, status, next),
        ToolEvent::Cancel { flags, task } if flags & cancel_flags::DISCARDED_TASK != 0 => {
            if let Some(id) = id_of(task) {
                let _ = DISCARDED.try_with(|d| d.set(task));
                tell(event::REMOVETASK, id, std::ptr::null_mut());
            }
        }
        ToolEvent::Sync {
            kind:
                sync_kind::BARRIER_EXPLICIT
                | sync_kind::BARRIER_IMPLEMENTATION
                | sync_kind::BARRIER_IMPLICIT_WORKSHARE,
            point: SyncPoint::WaitDoneEnd | SyncPoint::End | SyncPoint::Whole,
        } if Thread::peek().is_some_and(|th| th.tid() == 0) => tell(event::BARRIER, 0, std::ptr::null_mut()),
        ToolEvent::JoinDone { .. } => tell(event::BARRIER, 0, std::ptr::null_mut()),
        _ => {}
    }
}

/// The calling thread leaves task `prior` for `next` (`status`).
fn scheduled(prior: usize, status: u32, next: usize) {
    match status {
        task_status::SWITCH | task_status::YIELD => {
            if let Some(id) = id_of(next) {
                wait_until_released(id);
                tell_thread(event::PRERUNTASK, id);
                tell(event::RUNTASK, id, std::ptr::null_mut());
            }
        }
        task_status::COMPLETE | task_status::CANCEL => {
            let Some(id) = id_of(prior) else { return };
            if DISCARDED.try_with(|d| d.replace(0)).unwrap_or(0) == prior {
                return;
            }
            tell(event::POSTRUNTASK, id, std::ptr::null_mut());
            tell(event::REMOVETASK, id, std::ptr::null_mut());
        }
        task_status::DETACH => {
            if let Some(id) = id_of(prior) {
                tell(event::POSTRUNTASK, id, std::ptr::null_mut());
            }
        }
        task_status::LATE_FULFILL => {
            if let Some(id) = id_of(prior) {
                tell(event::REMOVETASK, id, std::ptr::null_mut());
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::without_column;

    #[test]
    fn a_functions_name_keeps_its_file_and_line() {
        assert_eq!(without_column("a.c:19:1".into()), "a.c:19");
        assert_eq!(without_column("a.c:19".into()), "a.c:19");
        assert_eq!(without_column("dir:x/a.c:7:3".into()), "dir:x/a.c:7");
        assert_eq!(without_column("f+0x10 in prog".into()), "f+0x10 in prog");
    }
}
