//! libomp's `kmp_*` extensions that clang's omp.h declares: block time, stack size, library
//! mode, settings before start-up, warnings, memory, and the affinity mask routines.

use std::ffi::{c_char, c_int, c_void};
use std::time::Duration;

use oxiomp_runtime::allocator::{self as al, DEFAULT_MEM_ALLOC};
use oxiomp_runtime::places::{AffinityMask, MaskError};
use oxiomp_runtime::{Runtime, Thread, WaitPolicy};

use crate::memory::{alloc_in, calloc_in, realloc_in};
use crate::misuse;

#[unsafe(no_mangle)]
pub extern "C" fn kmp_get_blocktime() -> c_int {
    // The settings decide the block time: read them first if nothing has yet.
    Runtime::get();
    WaitPolicy::block_time().as_millis().min(i32::MAX as u128) as c_int
}

#[unsafe(no_mangle)]
pub extern "C" fn kmp_set_blocktime(ms: c_int) {
    // Started first, so that the settings do not overwrite the value later.
    Runtime::get();
    if ms < 0 {
        misuse("kmp_set_blocktime", "the block time must not be negative; ignored");
        return;
    }
    WaitPolicy::set_block_time(Duration::from_millis(ms as u64));
}

#[unsafe(no_mangle)]
pub extern "C" fn kmp_get_stacksize() -> c_int {
    Runtime::get().worker_stacksize().min(i32::MAX as usize) as c_int
}

#[unsafe(no_mangle)]
pub extern "C" fn kmp_get_stacksize_s() -> usize {
    Runtime::get().worker_stacksize()
}

/// The stack size of worker threads started from now on.
#[unsafe(no_mangle)]
pub extern "C" fn kmp_set_stacksize(bytes: c_int) {
    match usize::try_from(bytes) {
        Ok(b) if b > 0 => Runtime::get().set_worker_stacksize(b),
        _ => misuse("kmp_set_stacksize", "the size must be positive; ignored"),
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn kmp_set_stacksize_s(bytes: usize) {
    if bytes == 0 {
        misuse("kmp_set_stacksize_s", "the size must be positive; ignored");
        return;
    }
    Runtime::get().set_worker_stacksize(bytes);
}

#[unsafe(no_mangle)]
pub extern "C" fn kmp_get_library() -> c_int {
    Runtime::get().library() as c_int
}

fn set_library(call: &str, mode: c_int) {
    let rt = Runtime::get();
    if let Err(e) = rt.set_library(Thread::current(), u32::try_from(mode).unwrap_or(0)) {
        misuse(call, e);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn kmp_set_library(mode: c_int) {
    set_library("kmp_set_library", mode);
}

#[unsafe(no_mangle)]
pub extern "C" fn kmp_set_library_serial() {
    set_library("kmp_set_library_serial", 1);
}

#[unsafe(no_mangle)]
pub extern "C" fn kmp_set_library_turnaround() {
    set_library("kmp_set_library_turnaround", 2);
}

#[unsafe(no_mangle)]
pub extern "C" fn kmp_set_library_throughput() {
    set_library("kmp_set_library_throughput", 3);
}

/// `NAME=VALUE` settings as if in the environment, before the runtime starts.
///
/// # Safety
/// `text` is null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kmp_set_defaults(text: *const c_char) {
    if text.is_null() {
        return;
    }
    // SAFETY: per the contract.
    let t = unsafe { std::ffi::CStr::from_ptr(text) }.to_string_lossy();
    if let Err(e) = oxiomp_runtime::env::set_defaults(&t) {
        misuse("kmp_set_defaults", &e);
    }
}

/// libomp's number of dispatch buffers: a tuning knob for its ring of loop slots. Ours has a
/// fixed ring of 8 slots per team whose reuse waits safely for stragglers, so any count is
/// accepted and changes nothing.
#[unsafe(no_mangle)]
pub extern "C" fn kmp_set_disp_num_buffers(n: c_int) {
    if n <= 0 {
        misuse("kmp_set_disp_num_buffers", "the count must be positive; ignored");
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn kmp_set_warnings_on() {
    oxiomp_runtime::registry::set_warnings(true);
}

#[unsafe(no_mangle)]
pub extern "C" fn kmp_set_warnings_off() {
    oxiomp_runtime::registry::set_warnings(false);
}

// The kmp_*alloc routines are the omp_* ones on the default memory allocator.

#[unsafe(no_mangle)]
pub extern "C" fn kmp_malloc(size: usize) -> *mut c_void {
    alloc_in("kmp_malloc", DEFAULT_MEM_ALLOC, size, 1, false)
}

#[unsafe(no_mangle)]
pub extern "C" fn kmp_aligned_malloc(size: usize, align: usize) -> *mut c_void {
    if align == 0 {
        misuse("kmp_aligned_malloc", "the alignment must be a power of two; nothing allocated");
        return std::ptr::null_mut();
    }
    alloc_in("kmp_aligned_malloc", DEFAULT_MEM_ALLOC, size, align, false)
}

#[unsafe(no_mangle)]
pub extern "C" fn kmp_calloc(n: usize, size: usize) -> *mut c_void {
    calloc_in("kmp_calloc", DEFAULT_MEM_ALLOC, n, size, 1)
}

/// # Safety
/// `p` is null or a live block from the `kmp_*alloc` routines.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kmp_realloc(p: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: per the contract.
    unsafe { realloc_in("kmp_realloc", p, size, DEFAULT_MEM_ALLOC) }
}

/// # Safety
/// `p` is null or a live block from the `kmp_*alloc` routines.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kmp_free(p: *mut c_void) {
    // SAFETY: per the contract.
    unsafe { al::free(p) }
}

/// `kmp_affinity_mask_t` is a `void *` the program keeps: ours points at an [`AffinityMask`].
type MaskHandle = *mut AffinityMask;

/// The mask behind `m`, or a report naming `call`.
///
/// # Safety
/// `m` is null or points at a handle that is null or from `kmp_create_affinity_mask`.
unsafe fn mask<'a>(call: &str, m: *mut MaskHandle) -> Option<&'a mut AffinityMask> {
    // SAFETY: per the contract.
    let r = unsafe { m.as_ref().and_then(|h| h.as_mut()) };
    if r.is_none() {
        misuse(call, "the mask was not made by kmp_create_affinity_mask");
    }
    r
}

/// # Safety
/// `m` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kmp_create_affinity_mask(m: *mut MaskHandle) {
    // SAFETY: per the contract.
    match unsafe { m.as_mut() } {
        Some(h) => *h = Box::into_raw(AffinityMask::empty()),
        None => misuse("kmp_create_affinity_mask", "the mask pointer is null"),
    }
}

/// # Safety
/// `m` is null or points at a handle that is null or from `kmp_create_affinity_mask`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kmp_destroy_affinity_mask(m: *mut MaskHandle) {
    // SAFETY: per the contract.
    if let Some(h) = unsafe { m.as_mut() }
        && !h.is_null()
    {
        // SAFETY: made by Box::into_raw in kmp_create_affinity_mask, not freed yet.
        drop(unsafe { Box::from_raw(*h) });
        *h = std::ptr::null_mut();
    }
}

fn mask_result(r: Result<(), MaskError>) -> c_int {
    match r {
        Ok(()) => 0,
        Err(MaskError::OutOfRange) => -1,
        Err(MaskError::NotAvailable) => -2,
    }
}

/// 0, or -1 for a number that is no CPU, -2 for a CPU the process may not use.
///
/// # Safety
/// As for [`kmp_destroy_affinity_mask`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kmp_set_affinity_mask_proc(cpu: c_int, m: *mut MaskHandle) -> c_int {
    // SAFETY: per the contract.
    unsafe { mask("kmp_set_affinity_mask_proc", m) }
        .map_or(-1, |k| mask_result(k.set(cpu, &Runtime::get().settings().mask)))
}

/// # Safety
/// As for [`kmp_destroy_affinity_mask`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kmp_unset_affinity_mask_proc(cpu: c_int, m: *mut MaskHandle) -> c_int {
    // SAFETY: per the contract.
    unsafe { mask("kmp_unset_affinity_mask_proc", m) }.map_or(-1, |k| mask_result(k.unset(cpu)))
}

/// 1 if `cpu` is in the mask, 0 if not, -1 for a number that is no CPU.
///
/// # Safety
/// As for [`kmp_destroy_affinity_mask`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kmp_get_affinity_mask_proc(cpu: c_int, m: *mut MaskHandle) -> c_int {
    // SAFETY: per the contract.
    unsafe { mask("kmp_get_affinity_mask_proc", m) }.map_or(-1, |k| k.contains(cpu).map_or(-1, c_int::from))
}

/// Binds the calling thread to the mask: 0, or the OS error number (an empty mask).
///
/// # Safety
/// As for [`kmp_destroy_affinity_mask`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kmp_set_affinity(m: *mut MaskHandle) -> c_int {
    // SAFETY: per the contract.
    let Some(k) = (unsafe { mask("kmp_set_affinity", m) }) else { return -1 };
    match k.apply() {
        Ok(()) => {
            Thread::current().forget_place();
            0
        }
        Err(e) => e.raw_os_error().unwrap_or(-1),
    }
}

/// Reads the calling thread's binding into the mask: 0, or the OS error number.
///
/// # Safety
/// As for [`kmp_destroy_affinity_mask`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kmp_get_affinity(m: *mut MaskHandle) -> c_int {
    // SAFETY: per the contract.
    let Some(k) = (unsafe { mask("kmp_get_affinity", m) }) else { return -1 };
    k.read_current().map_or_else(|e| e.raw_os_error().unwrap_or(-1), |()| 0)
}

#[unsafe(no_mangle)]
pub extern "C" fn kmp_get_affinity_max_proc() -> c_int {
    AffinityMask::max_proc()
}
