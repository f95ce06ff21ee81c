//! Task and worksharing types: their numbers, the labels they are declared with (`POc`), and
//! the declaration itself, once per process.
//!
//! A type's label is what ovni's label view shows, and its colour there (the emulator derives a
//! type's Paraver value from a hash of its label), so it must be the same from run to run: it
//! is the construct's source location, `file:line:column`, from the `ident_t` the compiler
//! passed (`;file;function;line;column;;`, filled when the program is built with `-g`), and
//! without one the name of the task's function. A task type is numbered by its function's
//! address (one per task construct); a worksharing type by its kind and `ident_t` (one per
//! construct), its end taking the number its beginning used (the stream's mark).

use std::cell::RefCell;
use std::ffi::CStr;
use std::sync::Mutex;

use super::stream::Stream;
use super::{Small, append};
use crate::format::Payload;
use crate::{Site, Worksharing, code};

thread_local! {
    /// Task and worksharing types this thread knows are declared in the process.
    static DECLARED: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// The task-created event of task `id` whose code is `site`: its number and its type
/// (declared in the stream if needed).
#[inline]
pub(super) fn created(st: &Stream, id: u32, site: Site) -> Small {
    Small::two(code::TASK_CREATE, id, declared_task_type(st, site))
}

/// The type number of tasks whose code is `site`, declared in the stream if needed.
#[inline]
pub(super) fn declared_task_type(st: &Stream, site: Site) -> u32 {
    let ty = task_type(site.entry);
    declare(st, ty, || task_label(site));
    ty
}

/// The type number of tasks whose code is at `entry`: odd (worksharing types are even).
fn task_type(entry: usize) -> u32 {
    let mut h = (entry as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h ^= h >> 29;
    (h as u32) | 1
}

/// The label of tasks whose code is `site`: its source location, else its function's name.
#[cold]
fn task_label(site: Site) -> String {
    // SAFETY: a nonzero `ident` is the `ident_t` the compiler passed for the construct.
    if let Some(at) = unsafe { source_location(site.ident) } {
        return at;
    }
    // SAFETY: Dl_info is a plain C struct of pointers, valid when zeroed.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address and fills `info`; names point into the loaded
    // objects' string tables.
    unsafe {
        if site.entry != 0
            && libc::dladdr(site.entry as *const libc::c_void, &mut info) != 0
            && !info.dli_sname.is_null()
        {
            return CStr::from_ptr(info.dli_sname).to_string_lossy().into_owned();
        }
    }
    "task".to_string()
}

/// The type number of worksharing constructs of kind `w` at `ident` (an even number), declared
/// in the stream if needed, at a construct's beginning; at its end (`begin` false) the number
/// its beginning used, from the stream's mark (the kind's own number if the mark is gone).
pub(super) fn worksharing_type(st: &Stream, w: Worksharing, ident: usize, begin: bool) -> u32 {
    if !begin && let Some(ty) = st.innermost_worksharing() {
        return ty;
    }
    let ty = if ident == 0 {
        0x5753_0000 | (w as u32) << 1
    } else {
        let mut h = (ident as u64 ^ (w as u64) << 56).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^= h >> 31;
        (h as u32 & !1).max(2)
    };
    declare(st, ty, || {
        // SAFETY: as in `task_label`.
        match unsafe { source_location(ident) } {
            Some(at) => format!("{} {at}", w.label()),
            None => w.label().to_string(),
        }
    });
    ty
}

/// `file:line:column` from the `ident_t` at `ident` (`;file;function;line;column;;`), if it
/// names a file and a line (clang passes `;unknown;unknown;0;0;;` without `-g`).
///
/// # Safety
/// `ident` is 0 or the address of an `ident_t` (LLVM's layout: four `i32`, then the string).
unsafe fn source_location(ident: usize) -> Option<String> {
    if ident == 0 {
        return None;
    }
    // SAFETY: per the contract, the string pointer is at byte 16 of the `ident_t`; it is null
    // or a NUL-terminated string the compiler emitted.
    let text = unsafe {
        let p = *((ident + 16) as *const *const libc::c_char);
        if p.is_null() {
            return None;
        }
        CStr::from_ptr(p).to_string_lossy().into_owned()
    };
    location_of(&text)
}

/// `file:line:column` from an `ident_t` string `;file;function;line;column;;`.
fn location_of(text: &str) -> Option<String> {
    let parts: Vec<&str> = text.split(';').collect();
    let (file, line, col) = (*parts.get(1)?, *parts.get(3)?, parts.get(4).copied().unwrap_or("0"));
    if file.is_empty() || file == "unknown" || line.parse::<u32>().ok()? == 0 {
        return None;
    }
    Some(format!("{file}:{line}:{col}"))
}

/// Declares type `tid` (`POc`) in the stream before its first use; `label` is only computed
/// then. The stream's small cache answers for the types its thread used last; `DECLARED`, the
/// thread's whole list, for the others.
#[inline]
fn declare(st: &Stream, tid: u32, label: impl FnOnce() -> String) {
    if st.knows_type(tid) {
        return;
    }
    let known = DECLARED.try_with(|d| d.borrow().contains(&tid)).unwrap_or(true);
    if !known {
        declare_slow(st, tid, label);
    }
    st.learn_type(tid);
}

/// The types declared in one process's streams (a forked child's start with none).
pub(super) struct Types(Mutex<Vec<u32>>);

impl Types {
    pub(super) const fn new() -> Types {
        Types(Mutex::new(Vec::new()))
    }
}

/// The calling thread forgets which types it knows are declared: it records into the streams
/// of a new process (it is the thread that forked), which declares them anew.
pub(super) fn forget_declared() {
    let _ = DECLARED.try_with(|d| {
        if let Ok(mut d) = d.try_borrow_mut() {
            d.clear();
        }
    });
}

/// ovni's emulator keeps types per process and refuses a second declaration of the same id,
/// so each type is declared once in the whole process: by the first thread to use it, under
/// a lock, before it publishes the id (so every other thread's use comes later in time).
#[cold]
fn declare_slow(st: &Stream, tid: u32, label: impl FnOnce() -> String) {
    // A thread records only while its process has a recorder.
    let Some(o) = super::ovni() else { return };
    if let Ok(mut all) = o.types.0.lock()
        && !all.contains(&tid)
    {
        let label = label();
        let mut b = tid.to_le_bytes().to_vec();
        b.extend_from_slice(&label.as_bytes()[..label.len().min(250)]);
        b.push(0);
        append(st, code::TYPE_CREATE, Payload::Jumbo(b));
        all.push(tid);
    }
    let _ = DECLARED.try_with(|d| d.borrow_mut().push(tid));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_from_ident_strings() {
        assert_eq!(location_of(";t.c;main;12;5;;").as_deref(), Some("t.c:12:5"));
        assert_eq!(location_of(";dir/x.c;f;7;1;;").as_deref(), Some("dir/x.c:7:1"));
        assert_eq!(location_of(";unknown;unknown;0;0;;"), None);
        assert_eq!(location_of(";t.c;main;0;0;;"), None);
        assert_eq!(location_of("garbage"), None);
    }

    #[test]
    fn task_and_worksharing_types_do_not_meet() {
        assert_eq!(task_type(0x1234) & 1, 1);
        assert_eq!(task_type(0) & 1, 1);
    }
}
