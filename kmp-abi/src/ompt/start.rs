//! Finding and starting a tool (OpenMP 5.2 §19.2), once, when the first thread registers with
//! the runtime; finalizing it at exit or when it asks (`ompt_finalize_tool`).
//!
//! `OMP_TOOL` (`enabled`, the default, or `disabled`) says whether to look for one. The search
//! takes the first `ompt_start_tool` that returns a tool: one already in the process (the
//! program's, or a library's loaded with it), then that of each library `OMP_TOOL_LIBRARIES`
//! lists (separated by `:`; one that declines is unloaded), then LLVM's Archer (`libarcher.so`)
//! if the dynamic linker finds it. `OMP_TOOL_VERBOSE_INIT` (`stdout`, `stderr` or a file's
//! path) logs the search, in the lines libomp writes (tools and scripts read them). To the
//! standard streams it writes through the C library's, as a tool's own output during the
//! search does, so that the two keep their order.

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, Ordering};

use oxiomp_instrument::ToolEvent;
use oxiomp_runtime::Thread;

use super::{Data, Dispatch, dispatch, entry};

/// `ompt_start_tool_result_t`.
#[repr(C)]
struct StartResult {
    initialize: Option<unsafe extern "C" fn(entry::Lookup, c_int, *mut Data) -> c_int>,
    finalize: Option<unsafe extern "C" fn(*mut Data)>,
    tool_data: Data,
}

type StartTool = unsafe extern "C" fn(u32, *const c_char) -> *mut StartResult;

/// The OpenMP version the runtime tells the tool (`_OPENMP` of OpenMP 5.0's tool interface, as
/// LLVM's runtime passes).
const OMP_VERSION: u32 = 201611;

/// The runtime's name and version, for the tool.
const RUNTIME_VERSION: &CStr = {
    let s = concat!("oxiomp ", env!("CARGO_PKG_VERSION"), "\0");
    match CStr::from_bytes_with_nul(s.as_bytes()) {
        Ok(c) => c,
        Err(_) => panic!("version string"),
    }
};

/// The active tool's start result (null: no tool, or finalized).
static ACTIVE: AtomicPtr<StartResult> = AtomicPtr::new(std::ptr::null_mut());

/// Where the search is logged (`OMP_TOOL_VERBOSE_INIT`).
enum Log {
    Off,
    Stdout,
    Stderr,
    File(std::fs::File),
}

unsafe extern "C" {
    /// The C library's standard streams (glibc's objects).
    static stdout: *mut libc::FILE;
    static stderr: *mut libc::FILE;
}

impl Log {
    fn from_env() -> Log {
        let Some(v) = std::env::var_os("OMP_TOOL_VERBOSE_INIT") else { return Log::Off };
        let text = v.to_string_lossy();
        match text.to_ascii_lowercase().as_str() {
            "" | "disabled" => Log::Off,
            "stdout" => Log::Stdout,
            "stderr" => Log::Stderr,
            _ => match std::fs::File::create(&v) {
                Ok(f) => Log::File(f),
                Err(e) => {
                    oxiomp_runtime::registry::warn(&format!(
                        "oxiomp: warning: OMP_TOOL_VERBOSE_INIT={text}: cannot create the file ({e}); the tool search is not logged"
                    ));
                    Log::Off
                }
            },
        }
    }

    /// Logs `text` and ends the line.
    fn line(&mut self, text: &str) {
        self.part(text);
        self.part("\n");
    }

    /// Logs `text`, the start of a line that goes on after what happens next (a tool's start
    /// function may write to the program's output meanwhile).
    fn part(&mut self, text: &str) {
        let stream = match self {
            Log::Off => return,
            Log::File(f) => {
                let _ = f.write_all(text.as_bytes());
                return;
            }
            // SAFETY: reading the C library's stream pointers, set before any program code runs.
            Log::Stdout => unsafe { stdout },
            // SAFETY: as above.
            Log::Stderr => unsafe { stderr },
        };
        let Ok(c) = CString::new(text) else { return };
        // SAFETY: a NUL-terminated string and an open stream; `fflush` keeps the log in order
        // with other writers of the stream's file (libomp's log is unbuffered too).
        unsafe {
            libc::fputs(c.as_ptr(), stream);
            libc::fflush(stream);
        }
    }
}

/// Whether `OMP_TOOL` lets the runtime look for a tool (a value that is neither `enabled` nor
/// `disabled` gives a warning and counts as `enabled`, the default).
fn tool_enabled() -> bool {
    let Some(v) = std::env::var_os("OMP_TOOL") else { return true };
    let text = v.to_string_lossy();
    match text.trim().to_ascii_lowercase().as_str() {
        "" | "enabled" => true,
        "disabled" => false,
        _ => {
            oxiomp_runtime::registry::warn(&format!(
                "oxiomp: warning: OMP_TOOL={text} is neither 'enabled' nor 'disabled'; using 'enabled'"
            ));
            true
        }
    }
}

/// The last error of the dynamic linker, as text.
fn dl_error() -> String {
    // SAFETY: dlerror has no preconditions; its result is null or a NUL-terminated string.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: as above.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// `ompt_start_tool` in `handle` (a `dlopen` handle, or `RTLD_DEFAULT`), if there is one.
fn find_start_tool(handle: *mut c_void) -> Option<StartTool> {
    // SAFETY: a valid handle and a NUL-terminated name.
    let p = unsafe { libc::dlsym(handle, c"ompt_start_tool".as_ptr()) };
    // SAFETY: `ompt_start_tool`'s type is the one OMPT gives it.
    (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, StartTool>(p) })
}

/// Calls `start`; the tool's result, if it accepts to start.
fn call(start: StartTool) -> Option<*mut StartResult> {
    // SAFETY: calling the tool's `ompt_start_tool` with the arguments OMPT gives it.
    let r = unsafe { start(OMP_VERSION, RUNTIME_VERSION.as_ptr()) };
    (!r.is_null()).then_some(r)
}

/// Opens library `path` and starts its tool; the library stays loaded if it starts one.
fn try_library(path: &str, log: &mut Log) -> Option<*mut StartResult> {
    log.part(&format!("Opening {path}... "));
    let Ok(c) = CString::new(path) else {
        log.line("Failed: the path holds a NUL byte.");
        return None;
    };
    // SAFETY: a NUL-terminated path.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_LAZY) };
    if h.is_null() {
        log.line(&format!("Failed: {}", dl_error()));
        return None;
    }
    log.line("Success.");
    log.part(&format!("Searching for ompt_start_tool in {path}... "));
    let r = match find_start_tool(h) {
        None => {
            log.line(&format!("Failed: {}", dl_error()));
            None
        }
        Some(start) => {
            let r = call(start);
            match r {
                Some(_) => log.line("Success."),
                None => {
                    log.line("Found but not using the OMPT interface.");
                    log.line("Continuing search...");
                }
            }
            r
        }
    };
    if r.is_none() {
        // SAFETY: a handle this function opened, not used afterwards.
        unsafe { libc::dlclose(h) };
    }
    r
}

/// The tool to start, found as the module docs say.
fn search(log: &mut Log) -> Option<*mut StartResult> {
    log.part("Search for OMP tool in current address space... ");
    if let Some(r) = find_start_tool(libc::RTLD_DEFAULT).and_then(call) {
        log.line("Success.");
        return Some(r);
    }
    log.line("Failed.");
    if let Some(libs) = std::env::var_os("OMP_TOOL_LIBRARIES") {
        let libs = libs.to_string_lossy().into_owned();
        log.line("Searching tool libraries...");
        log.line(&format!("OMP_TOOL_LIBRARIES = {libs}"));
        for path in libs.split(':').filter(|p| !p.is_empty()) {
            if let Some(r) = try_library(path, log) {
                return Some(r);
            }
        }
    } else {
        log.line("No OMP_TOOL_LIBRARIES defined.");
    }
    log.line("...searching tool libraries failed. Using archer tool.");
    try_library("libarcher.so", log)
}

/// Finds a tool and initializes it (the runtime's tool starter: once, when the first thread
/// has registered).
pub(crate) fn start() {
    let mut log = Log::from_env();
    if !tool_enabled() {
        log.line("OMP tool disabled.");
        return;
    }
    log.line("----- START LOGGING OF TOOL REGISTRATION -----");
    let found = search(&mut log);
    match found {
        Some(_) => log.line("Tool was started and is using the OMPT interface."),
        None => log.line("No OMP tool loaded."),
    }
    log.line("----- END LOGGING OF TOOL REGISTRATION -----");
    let Some(r) = found else { return };
    // SAFETY: the tool's result stays valid until its finalizer has run.
    let init = unsafe { (*r).initialize };
    // SAFETY: as above; the data word is the result's.
    let data = unsafe { &raw mut (*r).tool_data };
    // A tool without an initializer, or whose initializer returns 0, is not started (and
    // gets no callbacks).
    let Some(initialize) = init else { return };
    // SAFETY: calling the tool's initializer with the arguments OMPT gives it.
    if unsafe { initialize(entry::lookup, 0, data) } == 0 {
        return;
    }
    static DISPATCH: Dispatch = Dispatch;
    ACTIVE.store(r, Ordering::Release);
    oxiomp_instrument::install(&DISPATCH);
    // SAFETY: registering a plain extern "C" function that does not unwind.
    unsafe { libc::atexit(finalize_at_exit) };
}

/// At exit: the idle workers end first (each tells the tool, on its own thread, that its last
/// region's barrier and implicit task ended, then that it ends, as libomp's workers do when it
/// shuts down), then the tool is finalized.
extern "C" fn finalize_at_exit() {
    if !ACTIVE.load(Ordering::Acquire).is_null() {
        let rt = oxiomp_runtime::registry::Runtime::get();
        match Thread::peek() {
            // Outside every region only (`pause` refuses otherwise: workers are busy then).
            Some(th) => {
                let _ = rt.pause(th);
            }
            // A thread that never used OpenMP (the program's threads did): the idle workers.
            None => rt.retire_idle(),
        }
    }
    finalize();
}

/// Serialises finalization: the first caller finalizes, later ones find nothing to do.
static FINALIZING: Mutex<()> = Mutex::new(());

/// Finalizes the active tool, if any: the calling initial thread's implicit task and the
/// thread itself end (when it is outside every region), then the tool's finalizer runs and
/// the tool hears nothing more.
pub(super) fn finalize() {
    let _g = FINALIZING.lock().unwrap_or_else(|e| e.into_inner());
    // Acquire: pairs with `start`'s Release (the result and the registrations before it).
    let r = ACTIVE.swap(std::ptr::null_mut(), Ordering::Acquire);
    if r.is_null() {
        return;
    }
    if let Some(th) = Thread::peek()
        && th.outside_regions()
    {
        let root = th.team() as *const oxiomp_runtime::team::Team as usize;
        dispatch(ToolEvent::ImplicitTaskEnd { team: root, index: 1, size: 1, initial: true });
        dispatch(ToolEvent::ThreadEnd);
    }
    oxiomp_instrument::uninstall();
    // SAFETY: the tool's result, valid until its finalizer has run.
    if let Some(f) = unsafe { (*r).finalize } {
        // SAFETY: calling the tool's finalizer with its data, as OMPT gives it.
        unsafe { f(&raw mut (*r).tool_data) };
    }
}
