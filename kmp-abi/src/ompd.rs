//! The runtime's side of OMPD, the debugger interface (OpenMP 5.2 §20): what a debugger's
//! OMPD library finds in the process by symbol. With `OMP_DEBUG=enabled` the runtime names
//! its library (`ompd_dll_locations`, then calls `ompd_dll_locations_valid`, where a debugger
//! waits for them), keeps each thread's state in its descriptor (the state keeper, a
//! recorder of the instrumentation calls: `oxiomp_runtime::debug`) and calls the `ompd_bp_*`
//! breakpoint functions as threads, parallel regions and tasks begin and end. The layout
//! table (`oxiomp_debug_layout`) and the process-wide values (`oxiomp_debug_globals`) are
//! always there; the keeper also runs while an OMPT tool is attached (`ompt_get_state`).
//! Without either, none of this costs anything: the instrumentation calls stay one load and
//! a branch.

use std::ffi::{CString, c_char, c_void};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use oxiomp_instrument::{Event, Recorder};
use oxiomp_runtime::debug::{self, Breakpoint, Globals, Table};

/// The layout of the structs an OMPD library reads (`oxiomp_runtime::debug::layout`).
#[unsafe(no_mangle)]
pub static oxiomp_debug_layout: Table = debug::LAYOUT;

/// The root and the process-wide values an OMPD library reads, filled in at start-up.
#[unsafe(no_mangle)]
pub static oxiomp_debug_globals: Globals = Globals::new();

/// OMPD's list of the libraries a debugger may load for this runtime: a NULL-terminated
/// array of paths, set with `OMP_DEBUG=enabled` before `ompd_dll_locations_valid` is called
/// (a `const char **` to the debugger).
#[unsafe(no_mangle)]
pub static ompd_dll_locations: AtomicPtr<*const c_char> = AtomicPtr::new(std::ptr::null_mut());

// The breakpoint functions: each its own code (a `nop` and a `ret`), so that no two share
// an address (identical Rust functions may be merged), never inlined, and called from Rust
// through the declarations below.
std::arch::global_asm!(
    ".pushsection .text.ompd_bp,\"ax\",@progbits",
    ".macro ompd_bp name",
    ".globl \\name",
    ".type \\name,@function",
    ".p2align 4",
    "\\name:",
    ".cfi_startproc",
    "nop",
    "ret",
    ".cfi_endproc",
    ".size \\name, .-\\name",
    ".endm",
    "ompd_bp ompd_dll_locations_valid",
    "ompd_bp ompd_bp_thread_begin",
    "ompd_bp ompd_bp_thread_end",
    "ompd_bp ompd_bp_parallel_begin",
    "ompd_bp ompd_bp_parallel_end",
    "ompd_bp ompd_bp_task_begin",
    "ompd_bp ompd_bp_task_end",
    "ompd_bp ompd_bp_device_begin",
    "ompd_bp ompd_bp_device_end",
    ".purgem ompd_bp",
    ".popsection",
);

unsafe extern "C" {
    fn ompd_dll_locations_valid();
    fn ompd_bp_thread_begin();
    fn ompd_bp_thread_end();
    fn ompd_bp_parallel_begin();
    fn ompd_bp_parallel_end();
    fn ompd_bp_task_begin();
    fn ompd_bp_task_end();
}

/// Whether the breakpoint functions are called (`OMP_DEBUG=enabled`).
static BREAKPOINTS: AtomicBool = AtomicBool::new(false);

/// The state keeper: hands each group of events to the runtime's, which keeps the calling
/// thread's state, and calls the breakpoint functions the group reaches.
struct Keeper;

impl Recorder for Keeper {
    fn record(&self, events: &[Event]) {
        // Relaxed: set once before the keeper is installed (whose Release publishes it).
        let bps = BREAKPOINTS.load(Ordering::Relaxed);
        debug::observe(events, |bp| {
            if bps {
                call(bp)
            }
        });
    }
}

/// Calls the breakpoint function of `bp`.
#[inline(never)]
fn call(bp: Breakpoint) {
    // SAFETY: the functions take nothing, do nothing and return (the assembly above).
    unsafe {
        match bp {
            Breakpoint::ThreadBegin => ompd_bp_thread_begin(),
            Breakpoint::ThreadEnd => ompd_bp_thread_end(),
            Breakpoint::ParallelBegin => ompd_bp_parallel_begin(),
            Breakpoint::ParallelEnd => ompd_bp_parallel_end(),
            Breakpoint::TaskBegin => ompd_bp_task_begin(),
            Breakpoint::TaskEnd => ompd_bp_task_end(),
        }
    }
}

/// Starts OMPD's side at the runtime's start (after the tool search: `tool` says whether a
/// tool is attached): publishes the values, and with `OMP_DEBUG=enabled` or a tool installs
/// the state keeper; with `OMP_DEBUG=enabled`, names the OMPD library and tells the debugger.
pub(crate) fn start(tool: bool) {
    let rt = oxiomp_runtime::Runtime::get();
    let enabled = rt.settings().globals.debug;
    oxiomp_debug_globals.publish(rt, tool);
    if !enabled && !tool {
        return;
    }
    // Relaxed: see `Keeper::record`.
    BREAKPOINTS.store(enabled, Ordering::Relaxed);
    static KEEPER: Keeper = Keeper;
    oxiomp_instrument::install_keeper(&KEEPER);
    if enabled {
        let list: Vec<*const c_char> = library_paths()
            .into_iter()
            .filter_map(|p| CString::new(p).ok())
            .map(|c| c.into_raw() as *const c_char)
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        // The list lives as long as the process.
        let list = Box::leak(list.into_boxed_slice());
        ompd_dll_locations.store(list.as_mut_ptr(), Ordering::Release);
        // SAFETY: as for the breakpoint functions.
        unsafe { ompd_dll_locations_valid() };
    }
}

/// Where the OMPD library is: `libompd.so` beside this library's file, as loaded (a symlink
/// such as `libomp.so.5`) and as resolved, then the bare name for the dynamic linker.
fn library_paths() -> Vec<String> {
    let mut out = Vec::new();
    let mut info: libc::Dl_info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    let here = library_paths as fn() -> Vec<String> as *const c_void;
    // SAFETY: dladdr reads the address and fills `info`; `dli_fname` is a NUL-terminated
    // string the dynamic linker keeps while the library is loaded.
    let name = unsafe {
        (libc::dladdr(here, &mut info) != 0 && !info.dli_fname.is_null())
            .then(|| std::ffi::CStr::from_ptr(info.dli_fname).to_string_lossy().into_owned())
    };
    if let Some(name) = name {
        let file = std::path::PathBuf::from(name);
        for f in [Some(file.clone()), std::fs::canonicalize(&file).ok()].into_iter().flatten() {
            if let Some(dir) = f.parent() {
                let p = dir.join("libompd.so").to_string_lossy().into_owned();
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    out.push("libompd.so".to_string());
    out
}
