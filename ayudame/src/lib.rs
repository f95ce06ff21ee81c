//! oxiomp's Ayudame library, `libayudame.so`: preload it into a program whose runtime tells
//! Ayudame events (oxiomp does; so do other task runtimes) and it records the task graph,
//! writes it as DOT, JSON and SVG when the program finishes, on `SIGUSR1` and on request, and
//! takes requests from a client over a local socket (`ayudame-ctl`): pause, step, continue,
//! breakpoint, block and unblock a task, raise its priority, the number of threads, dump.
//!
//! ```text
//! LD_PRELOAD=libayudame.so AYU_OUTPUT=graph ./prog     # writes graph.dot, graph.json, graph.svg
//! AYU_PAUSE=1 LD_PRELOAD=libayudame.so ./prog &        # waits for a client before the first task
//! ayudame-ctl --pid $!                                 # step through it
//! ```
//!
//! Environment: `AYU_OUTPUT` (the files' path prefix; `ayudame-<pid>` in the current
//! directory), `AYU_SOCKET` (the socket; `/tmp/ayudame-<pid>.sock`), `AYU_PAUSE=1` (start
//! paused), `AYU_BREAK=1` (start with the breakpoint on: tasks are created and queued, none
//! starts).
//!
//! The library calls no OpenMP routine and nothing of the runtime: a runtime tells it events
//! and asks it the request functions, from any of its threads.

#![deny(clippy::undocumented_unsafe_blocks)]

pub mod control;
pub mod graph;
pub mod output;
pub mod svg;

use std::ffi::{CStr, c_char, c_int, c_void};
use std::path::PathBuf;
use std::sync::{LazyLock, Mutex, MutexGuard, Once};
use std::time::Duration;

use control::Control;
use graph::{Event, Graph};

static GRAPH: LazyLock<Mutex<Graph>> = LazyLock::new(|| Mutex::new(Graph::default()));
static CONTROL: LazyLock<Control> = LazyLock::new(Control::default);

/// The graph recorded so far.
pub(crate) fn graph() -> MutexGuard<'static, Graph> {
    GRAPH.lock().unwrap_or_else(|e| e.into_inner())
}

/// The output files' path prefix.
fn output_prefix() -> PathBuf {
    std::env::var_os("AYU_OUTPUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(format!("ayudame-{}", std::process::id())))
}

/// Writes the graph's files; their prefix, or what went wrong.
pub(crate) fn dump() -> Result<String, String> {
    let prefix = output_prefix();
    let g = graph();
    output::write_all(&g, &prefix).map_err(|e| format!("error: writing {}.*: {e}", prefix.display()))?;
    Ok(prefix.display().to_string())
}

/// Starts the request server and the `SIGUSR1` dump (once, at the runtime's first event).
fn start() {
    static START: Once = Once::new();
    START.call_once(|| {
        if std::env::var_os("AYU_PAUSE").is_some_and(|v| v == "1") {
            CONTROL.lock().paused = true;
        }
        if std::env::var_os("AYU_BREAK").is_some_and(|v| v == "1") {
            CONTROL.lock().breakpoint = true;
        }
        control::serve(&CONTROL, control::socket_path());
        dump_on_signal();
    });
}

/// The write end of the pipe `SIGUSR1`'s handler writes to.
static SIGNAL_PIPE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

extern "C" fn on_sigusr1(_: c_int) {
    // Relaxed: the pipe was made before the handler was installed.
    let fd = SIGNAL_PIPE.load(std::sync::atomic::Ordering::Relaxed);
    // SAFETY: write(2) is async-signal-safe; one byte from a static.
    unsafe { libc::write(fd, b"d".as_ptr() as *const c_void, 1) };
}

/// Dumps the graph whenever the process gets `SIGUSR1` (a thread waits on a pipe the handler
/// writes to), unless the program handles that signal itself.
fn dump_on_signal() {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return;
    }
    // Relaxed: see `on_sigusr1`.
    SIGNAL_PIPE.store(fds[1], std::sync::atomic::Ordering::Relaxed);
    // SAFETY: reads the current action into `old` without changing it.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::sigaction(libc::SIGUSR1, std::ptr::null(), &mut old) } != 0
        || old.sa_sigaction != libc::SIG_DFL
    {
        return;
    }
    let read = fds[0];
    let spawned = std::thread::Builder::new().name("ayudame-dump".into()).spawn(move || {
        let mut byte = 0u8;
        // SAFETY: reads one byte into `byte` from the pipe this thread owns.
        while unsafe { libc::read(read, &mut byte as *mut u8 as *mut c_void, 1) } == 1 {
            if let Err(e) = dump() {
                eprintln!("ayudame: {e}");
            }
        }
    });
    if spawned.is_err() {
        return;
    }
    // SAFETY: a zeroed sigaction with a plain handler and an empty mask is valid.
    let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
    act.sa_sigaction = on_sigusr1 as extern "C" fn(c_int) as usize;
    act.sa_flags = libc::SA_RESTART;
    // SAFETY: installs a handler that only calls write(2).
    unsafe { libc::sigaction(libc::SIGUSR1, &act, std::ptr::null_mut()) };
}

/// Reads `AYU_event`'s data for `event`.
///
/// # Safety
/// `data` is what Ayudame's event `event` passes (see the table in the runtime's docs), valid
/// for the call.
unsafe fn decode(event: c_int, id: i64, data: *mut c_void) -> Event {
    let words = |n: usize| -> Option<&[i64]> {
        // SAFETY: the caller's: the event's data is an array of `n` 8-byte words.
        (!data.is_null()).then(|| unsafe { std::slice::from_raw_parts(data as *const i64, n) })
    };
    match event {
        1 => Event::PreInit {
            // SAFETY: PREINIT's data is an `ayu_runtime_t *`.
            runtime: if data.is_null() { 0 } else { unsafe { *(data as *const c_int) } },
        },
        2 => Event::Init,
        3 => Event::Finish,
        4 => Event::RegisterFunction {
            id,
            name: if data.is_null() {
                format!("function {id}")
            } else {
                // SAFETY: REGISTERFUNCTION's data is a NUL-terminated name.
                unsafe { CStr::from_ptr(data as *const c_char) }.to_string_lossy().into_owned()
            },
        },
        5 => words(2).map_or(Event::Other, |d| Event::AddTask { id, function: d[0], priority: d[1] }),
        7 => words(3).map_or(Event::Other, |d| Event::AddDependency {
            succ: id,
            pred: d[0],
            addr: d[1] as u64,
        }),
        8 => Event::Queued { id, thread: words(1).map_or(-1, |d| d[0]) },
        10 => Event::PreRun { id, thread: words(1).map_or(-1, |d| d[0]) },
        11 => Event::Run { id },
        12 => Event::PostRun { id },
        14 => Event::Remove { id },
        16 => Event::Barrier,
        _ => Event::Other,
    }
}

/// Ayudame's event callback: records the event; before a task starts, waits while the run is
/// paused; at FINISH writes the graph's files.
///
/// # Safety
/// `data` is what the event's entry in Ayudame's table says, valid for the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn AYU_event(event: c_int, id: i64, data: *mut c_void) {
    start();
    // SAFETY: the caller's.
    let e = unsafe { decode(event, id, data) };
    if let Event::PreRun { id, .. } = e {
        CONTROL.before_start(id);
    }
    let finish = e == Event::Finish;
    // A raised task holds the others back until its start is recorded (see `Control::is_blocked`).
    let begun = match e {
        Event::PreRun { id, .. } | Event::Remove { id } => Some(id),
        _ => None,
    };
    graph().apply(e);
    if let Some(id) = begun {
        CONTROL.started(id);
    }
    if finish {
        CONTROL.drain(Duration::from_secs(1));
        match dump() {
            Ok(prefix) => eprintln!("ayudame: the task graph is in {prefix}.dot, .json and .svg"),
            Err(e) => eprintln!("ayudame: {e}"),
        }
        let _ = std::fs::remove_file(control::socket_path());
    }
}

/// oxiomp's addition to the events: task `id` names `address` in a `depend` clause with
/// access `kind` (OMPT's `ompt_dependence_type_t`), told before the task's edges; the files
/// mark the edges into and out of `mutexinoutset` and `inoutset` groups with it.
#[unsafe(no_mangle)]
pub extern "C" fn oxiomp_ayu_access(id: i64, address: usize, kind: c_int) {
    start();
    graph().apply(Event::Access { id, addr: address as u64, kind });
}

/// 1 while the breakpoint is set: the runtime starts no new task.
#[unsafe(no_mangle)]
pub extern "C" fn AYU_getBreakpoint() -> c_int {
    CONTROL.lock().breakpoint as c_int
}

/// Whether task `id` may not start now: it is blocked, or a task raised while queued goes
/// first.
#[unsafe(no_mangle)]
pub extern "C" fn AYU_isBlocked(id: c_int) -> bool {
    CONTROL.is_blocked(id as i64)
}

/// The priority asked for task `id`, or -1.
#[unsafe(no_mangle)]
pub extern "C" fn AYU_getPriorityLevel(id: c_int) -> c_int {
    CONTROL.lock().priorities.get(&(id as i64)).copied().unwrap_or(-1)
}

/// The number of threads asked for (0: none).
#[unsafe(no_mangle)]
pub extern "C" fn AYU_getNumThreads() -> u32 {
    CONTROL.lock().threads
}
