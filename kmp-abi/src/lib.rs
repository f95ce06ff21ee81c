//! The `extern "C"` layer of oxiomp: each entry converts its arguments and calls the runtime.
//! Grouped like LLVM's: [`parallel`] (fork/join, teams), [`sync`] (barrier, flush), [`api`]
//! (`omp_*` / `kmp_*` routines), [`lock`] (`omp_*_lock`). The variadic fork entries live in the
//! C shim (`shim/fork.c`), which hands the collected arguments to [`parallel`].
//!
//! A Rust panic never unwinds out of these functions: a panic inside an `extern "C"` function
//! aborts the process (Rust >= 1.81), and release builds use `panic = "abort"` anyway.

#![deny(clippy::undocumented_unsafe_blocks)]
// The entries are safe `extern "C"` functions that take the compiler's raw pointers: turning one
// into a reference is this crate's job, done once at the entry, inside an `unsafe` block that
// states what the compiler guarantees (`undocumented_unsafe_blocks` keeps that so). The
// engine's functions take references and typed handles only.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod api;
mod ayudame;
mod check;
pub mod extensions;
pub mod gomp;
mod hang;
pub mod lock;
pub mod memory;
mod ompd;
mod ompt;
pub mod parallel;
mod symbolize;
pub mod sync;
pub mod tasking;
pub mod threadprivate;
pub mod worksharing;

use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicU32, Ordering};

/// `ident_t`: the source location clang passes to most entries (24 bytes).
#[repr(C)]
pub struct Ident {
    pub reserved_1: i32,
    pub flags: i32,
    pub reserved_2: i32,
    pub reserved_3: i32,
    /// `";file;function;line;column;;"`.
    pub psource: *const c_char,
}

impl Ident {
    pub(crate) fn erased(loc: *const Ident) -> *const c_void {
        loc as *const c_void
    }

    /// `file:line:column` of `loc`, from clang's `";file;function;line;column;;"` (or
    /// `unknown location` for a null or malformed one). For messages: allocates.
    pub(crate) fn location(loc: *const Ident) -> String {
        let mut s = String::new();
        if !matches!(Ident::write_location(loc, &mut s), Ok(true)) {
            s = "unknown location".to_string();
        }
        s
    }

    /// Writes `file:line:column` of `loc` to `out` if it names one (a program built with
    /// `-g`: [`Ident::names_location`]); says whether it did. Allocates nothing (a signal
    /// handler's report uses it).
    pub(crate) fn write_location(
        loc: *const Ident,
        out: &mut dyn std::fmt::Write,
    ) -> Result<bool, std::fmt::Error> {
        if !Ident::names_location(loc) {
            return Ok(false);
        }
        // SAFETY: an ident that names its location is clang's static ident, whose psource is
        // a NUL-terminated static string.
        let src = unsafe { std::ffi::CStr::from_ptr((*loc).psource).to_bytes() };
        let mut f = src.split(|&b| b == b';');
        fn text(b: Option<&[u8]>) -> Option<&str> {
            b.and_then(|b| std::str::from_utf8(b).ok())
        }
        let (empty, file, _func, line, col) =
            (f.next(), text(f.next()), f.next(), text(f.next()), text(f.next()));
        match (empty, file, line, col) {
            (Some(b""), Some(file), Some(line), Some(col)) if !file.is_empty() && file != "unknown" => {
                write!(out, "{file}:{line}:{col}")?
            }
            // Not clang's form (no compiler of ours writes another): the text as it is.
            _ => out.write_str(std::str::from_utf8(src).unwrap_or("an ident_t whose text is not UTF-8"))?,
        }
        Ok(true)
    }

    /// Whether `loc` names its location: its source text is there and is not clang's
    /// `;unknown;unknown;0;0;;` (a program built without `-g`). Cheap (the run-time checks
    /// ask it at each construct): it reads at most the text's first 9 bytes.
    pub(crate) fn names_location(loc: *const Ident) -> bool {
        // SAFETY: clang passes a pointer to its static ident or null; its psource is null or
        // a NUL-terminated static string.
        let src = match unsafe { loc.as_ref() } {
            Some(l) if !l.psource.is_null() => l.psource as *const u8,
            _ => return false,
        };
        let unknown = b";unknown;";
        for (i, &u) in unknown.iter().enumerate() {
            // SAFETY: the bytes up to the text's NUL are readable, and the loop stops at the
            // first byte that differs from `unknown`, which has no NUL: the NUL at the latest.
            if unsafe { *src.add(i) } != u {
                return true;
            }
        }
        false
    }

    /// What the barrier of `loc` is, in words, by its flags: explicit, or the implicit one of
    /// which construct (None for another).
    pub(crate) fn barrier_words(loc: *const Ident) -> Option<&'static str> {
        Some(match Ident::flags(loc) & 0x1e0 {
            f if f & 0x20 != 0 => "'barrier'",
            0x40 => "the implicit barrier of a 'for'",
            0xc0 => "the implicit barrier of a 'sections'",
            0x140 => "the implicit barrier of a 'single'",
            0x1c0 => "the implicit barrier of a 'workshare'",
            _ => return None,
        })
    }

    /// The flags of `loc` (0 for a null ident, which clang never passes).
    pub(crate) fn flags(loc: *const Ident) -> i32 {
        // SAFETY: clang passes a pointer to its static ident or null.
        unsafe { loc.as_ref() }.map_or(0, |l| l.flags)
    }

    /// The kind of barrier `loc` names, as OMPT's `ompt_sync_region_t`: explicit (flag
    /// `KMP_IDENT_BARRIER_EXPL`), implicit at a worksharing construct's end
    /// (`KMP_IDENT_BARRIER_IMPL`) or one of the implementation's own.
    #[inline]
    pub(crate) fn barrier_kind(loc: *const Ident) -> u32 {
        use oxiomp_instrument::sync_kind;
        let f = Ident::flags(loc);
        if f & 0x20 != 0 {
            sync_kind::BARRIER_EXPLICIT
        } else if f & 0x40 != 0 {
            sync_kind::BARRIER_IMPLICIT_WORKSHARE
        } else {
            sync_kind::BARRIER_IMPLEMENTATION
        }
    }
}

/// The text of a message a directive passes (`error`, `strict` clauses): "(no message)" for null.
///
/// # Safety
/// `message` is null or a NUL-terminated string.
pub(crate) unsafe fn c_message<'a>(message: *const std::ffi::c_char) -> std::borrow::Cow<'a, str> {
    if message.is_null() {
        return "(no message)".into();
    }
    // SAFETY: per the contract.
    unsafe { std::ffi::CStr::from_ptr(message) }.to_string_lossy()
}

/// How many misuse reports are printed before the rest are suppressed.
const MAX_REPORTS: u32 = 20;
static REPORTS: AtomicU32 = AtomicU32::new(0);

/// Reports a misuse of the API, naming the routine: one line on stderr.
#[cold]
pub(crate) fn misuse(call: &str, what: impl std::fmt::Display) {
    // Relaxed: a plain counter.
    let n = REPORTS.fetch_add(1, Ordering::Relaxed);
    if n < MAX_REPORTS {
        oxiomp_runtime::stderr_line(format_args!("oxiomp: error: {call}: {what}"));
    } else if n == MAX_REPORTS {
        oxiomp_runtime::stderr_line(format_args!("oxiomp: error: further API misuse reports suppressed"));
    }
}

/// Reports a misuse after which the program cannot go on correctly, and aborts.
#[cold]
pub(crate) fn fatal(call: &str, what: impl std::fmt::Display) -> ! {
    oxiomp_runtime::stderr_line(format_args!("oxiomp: error: {call}: {what}; aborting"));
    std::process::abort()
}

/// The exported root a debugger starts from: the address of the runtime's descriptor table.
#[unsafe(no_mangle)]
pub extern "C" fn oxiomp_debug_root() -> *const c_void {
    oxiomp_runtime::Runtime::root_ptr()
}

/// Run when the library is loaded (`.init_array`), before any thread can register: makes the
/// OMPT start-up the runtime's tool starter.
extern "C" fn register_tool_starter() {
    oxiomp_runtime::tool::set_starter(start_tools);
}

/// Starts a tool (OMPT), then the debugger's side (OMPD), which keeps thread states for both,
/// then the run-time checks (`OXIOMP_CHECK`), the hang watch (`OXIOMP_HANG_SECONDS`) and
/// the task-graph events of an Ayudame library (when the program has `AYU_event`).
fn start_tools() {
    ompt::start();
    ompd::start(oxiomp_instrument::tool_attached());
    check::start();
    hang::start();
    ayudame::start();
}

#[used]
#[unsafe(link_section = ".init_array")]
static REGISTER_TOOL_STARTER: extern "C" fn() = register_tool_starter;
