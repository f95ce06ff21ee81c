//! `codeptr_ra`, the code address a callback names: the return address of the program's call
//! into the runtime that the event happens in (where a tool attributes the event). Found by
//! unwinding the calling thread's stack to the first frame outside this library: no entry
//! point stores anything for it, so a program without a tool pays nothing. It costs an unwind
//! of the runtime's own frames (a few) per callback that takes the address.

use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

type TraceFn = unsafe extern "C" fn(ctx: *mut c_void, arg: *mut c_void) -> c_int;

unsafe extern "C" {
    /// libgcc's unwinder (linked by the standard library): calls `trace` on each frame from
    /// the caller's outwards until it returns something other than `URC_NO_REASON`.
    fn _Unwind_Backtrace(trace: TraceFn, arg: *mut c_void) -> c_int;
    /// The instruction address of the frame `ctx` (a return address, but for the innermost).
    fn _Unwind_GetIP(ctx: *mut c_void) -> usize;
}

const URC_NO_REASON: c_int = 0;
const URC_END_OF_STACK: c_int = 5;
/// Frames looked at, at most (the runtime's own are far fewer).
const MAX_FRAMES: u32 = 128;

/// The address range of this library's loaded segments.
fn ours() -> (usize, usize) {
    static RANGE: OnceLock<(usize, usize)> = OnceLock::new();
    *RANGE.get_or_init(|| {
        let mut probe = Probe { addr: ours as *const () as usize, range: (0, 0) };
        // SAFETY: the callback reads the `dl_phdr_info` the loader passes, as documented, and
        // writes only `probe`, which outlives the call.
        unsafe { libc::dl_iterate_phdr(Some(segment_range), &mut probe as *mut Probe as *mut c_void) };
        probe.range
    })
}

/// Whether code address `addr` lies in this library.
pub(crate) fn in_this_library(addr: usize) -> bool {
    let (lo, hi) = ours();
    (lo..hi).contains(&addr)
}

struct Probe {
    addr: usize,
    range: (usize, usize),
}

/// `dl_iterate_phdr`'s callback: if `addr` lies in one of the object's loaded segments, the
/// range of all of them.
unsafe extern "C" fn segment_range(info: *mut libc::dl_phdr_info, _size: usize, data: *mut c_void) -> c_int {
    // SAFETY: the loader passes a valid `dl_phdr_info`, and `data` is the `Probe` of `ours`.
    let (info, probe) = unsafe { (&*info, &mut *(data as *mut Probe)) };
    // SAFETY: `dlpi_phdr` points at `dlpi_phnum` program headers.
    let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
    let (mut lo, mut hi, mut inside) = (usize::MAX, 0, false);
    for h in headers.iter().filter(|h| h.p_type == libc::PT_LOAD) {
        let start = info.dlpi_addr as usize + h.p_vaddr as usize;
        let end = start + h.p_memsz as usize;
        inside |= (start..end).contains(&probe.addr);
        (lo, hi) = (lo.min(start), hi.max(end));
    }
    if inside {
        probe.range = (lo, hi);
        return 1;
    }
    0
}

struct Walk {
    range: (usize, usize),
    /// Whether a frame of this library was seen (the first frames are the unwinder's own).
    seen_ours: bool,
    frames: u32,
    found: usize,
    /// Whether the walk goes on past the address found, until it meets this library again:
    /// see [`caller_in_task`].
    confirm: bool,
    /// Whether a frame of this library was met past the address found.
    confirmed: bool,
}

unsafe extern "C" fn step(ctx: *mut c_void, arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `Walk` of `codeptr`, and `ctx` the unwinder's frame context.
    let (w, ip) = unsafe { (&mut *(arg as *mut Walk), _Unwind_GetIP(ctx)) };
    w.frames += 1;
    let mine = (w.range.0..w.range.1).contains(&ip);
    if w.found != 0 {
        if mine {
            w.confirmed = true;
            return URC_END_OF_STACK;
        }
    } else if mine {
        w.seen_ours = true;
    } else if w.seen_ours && ip != 0 {
        w.found = ip;
        if !w.confirm {
            return URC_END_OF_STACK;
        }
    }
    if w.frames >= MAX_FRAMES { URC_END_OF_STACK } else { URC_NO_REASON }
}

fn walk(confirm: bool) -> Walk {
    let mut w = Walk { range: ours(), seen_ours: false, frames: 0, found: 0, confirm, confirmed: false };
    // SAFETY: `step` only reads the frame context and writes `w`, which outlives the walk.
    unsafe { _Unwind_Backtrace(step, &mut w as *mut Walk as *mut c_void) };
    w
}

/// The return address into the program of the runtime call the calling thread is in (null if
/// none is found).
pub(crate) fn codeptr() -> *const c_void {
    walk(false).found as *const c_void
}

/// [`codeptr`] for a call made by code the runtime runs (a region's or a task's): 0 unless
/// this library's frames follow the caller's further out, as the runtime's call of that code
/// does. A call the program made as its function's tail call (`jmp`) left no frame of its
/// own: the first frame outside this library is then one beyond the code the runtime ran (the
/// thread's start, or the function that forked the region), and no place is better than it.
pub(crate) fn caller_in_task() -> usize {
    let w = walk(true);
    if w.confirmed { w.found } else { 0 }
}
