//! The memory allocator routines (`omp_alloc` and friends, `omp_init_allocator`, the default
//! allocator) and the `__kmpc_*` allocation entries clang calls for `allocate` clauses and
//! `depobj`. The allocators are in `oxiomp_runtime::allocator`.

use std::ffi::{c_int, c_void};

use oxiomp_runtime::allocator::{self as al, Handle};
use oxiomp_runtime::query as q;

use crate::misuse;

/// `omp_alloctrait_t`.
#[repr(C)]
pub struct AllocTrait {
    pub key: c_int,
    pub value: usize,
}

/// The allocator an allocation uses: `h`, or def-allocator-var for `omp_null_allocator`.
fn resolve(h: Handle) -> Handle {
    if h == al::NULL_ALLOCATOR { q::default_allocator() } else { h }
}

/// An allocation through `h`; a handle that is not an allocator is reported, naming `call`.
pub(crate) fn alloc_in(call: &str, h: Handle, size: usize, align: usize, zeroed: bool) -> *mut c_void {
    if align != 0 && !align.is_power_of_two() {
        misuse(call, "the alignment must be a power of two; nothing allocated");
        return std::ptr::null_mut();
    }
    al::alloc(resolve(h), size, align.max(1), zeroed).unwrap_or_else(|e| {
        misuse(call, e);
        std::ptr::null_mut()
    })
}

pub(crate) fn calloc_in(call: &str, h: Handle, n: usize, size: usize, align: usize) -> *mut c_void {
    match n.checked_mul(size) {
        Some(total) => alloc_in(call, h, total, align, true),
        None => std::ptr::null_mut(),
    }
}

/// # Safety
/// `p` is null or a live block from these allocators.
pub(crate) unsafe fn realloc_in(call: &str, p: *mut c_void, size: usize, h: Handle) -> *mut c_void {
    // With no allocator named, the block's own (OpenMP: free_allocator, else the one that
    // allocated it; each block records its allocator, so the entries' free_allocator adds
    // nothing and is not passed on).
    let h = if h == al::NULL_ALLOCATOR && p.is_null() { q::default_allocator() } else { h };
    // SAFETY: per the contract.
    unsafe { al::realloc(p, size, h) }.unwrap_or_else(|e| {
        misuse(call, e);
        std::ptr::null_mut()
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_alloc(size: usize, allocator: Handle) -> *mut c_void {
    alloc_in("omp_alloc", allocator, size, 1, false)
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_aligned_alloc(align: usize, size: usize, allocator: Handle) -> *mut c_void {
    alloc_in("omp_aligned_alloc", allocator, size, align, false)
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_calloc(n: usize, size: usize, allocator: Handle) -> *mut c_void {
    calloc_in("omp_calloc", allocator, n, size, 1)
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_aligned_calloc(align: usize, n: usize, size: usize, allocator: Handle) -> *mut c_void {
    calloc_in("omp_aligned_calloc", allocator, n, size, align)
}

/// # Safety
/// `p` is null or a live block from these allocators.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_realloc(
    p: *mut c_void,
    size: usize,
    allocator: Handle,
    _free_allocator: Handle,
) -> *mut c_void {
    // SAFETY: the same contract.
    unsafe { realloc_in("omp_realloc", p, size, allocator) }
}

/// # Safety
/// `p` is null or a live block from these allocators.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_free(p: *mut c_void, _allocator: Handle) {
    // SAFETY: the same contract; the block records its allocator.
    unsafe { al::free(p) }
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_alloc(_gtid: i32, size: usize, allocator: Handle) -> *mut c_void {
    alloc_in("__kmpc_alloc", allocator, size, 1, false)
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_aligned_alloc(
    _gtid: i32,
    align: usize,
    size: usize,
    allocator: Handle,
) -> *mut c_void {
    alloc_in("__kmpc_aligned_alloc", allocator, size, align, false)
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_calloc(_gtid: i32, n: usize, size: usize, allocator: Handle) -> *mut c_void {
    calloc_in("__kmpc_calloc", allocator, n, size, 1)
}

/// # Safety
/// `p` is null or a live block from these allocators.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_realloc(
    _gtid: i32,
    p: *mut c_void,
    size: usize,
    allocator: Handle,
    _free_allocator: Handle,
) -> *mut c_void {
    // SAFETY: the same contract.
    unsafe { realloc_in("__kmpc_realloc", p, size, allocator) }
}

/// # Safety
/// `p` is null or a live block from these allocators.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_free(_gtid: i32, p: *mut c_void, _allocator: Handle) {
    // SAFETY: the same contract.
    unsafe { al::free(p) }
}

/// `omp_init_allocator`: `omp_null_allocator` when the memory space or a trait is not
/// supported (reported, naming what).
///
/// # Safety
/// `traits` points to `ntraits` traits (or is null with `ntraits` 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_init_allocator(
    memspace: usize,
    ntraits: c_int,
    traits: *const AllocTrait,
) -> Handle {
    // SAFETY: the same contract.
    unsafe { init_allocator("omp_init_allocator", memspace, ntraits, traits) }
}

/// # Safety
/// As for [`omp_init_allocator`].
unsafe fn init_allocator(call: &str, memspace: usize, ntraits: c_int, traits: *const AllocTrait) -> Handle {
    if ntraits > 0 && traits.is_null() {
        misuse(call, "ntraits is positive but traits is null; returning omp_null_allocator");
        return al::NULL_ALLOCATOR;
    }
    let list: Vec<(usize, usize)> = if ntraits <= 0 {
        Vec::new()
    } else {
        // SAFETY: per the contract.
        unsafe { std::slice::from_raw_parts(traits, ntraits as usize) }
            .iter()
            .map(|t| (t.key as usize, t.value))
            .collect()
    };
    al::init(memspace, &list).unwrap_or_else(|e| {
        misuse(call, format!("{e}; returning omp_null_allocator"));
        al::NULL_ALLOCATOR
    })
}

/// `uses_allocators` on `target` (also for the host): as `omp_init_allocator`.
///
/// # Safety
/// As for [`omp_init_allocator`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_init_allocator(
    _gtid: i32,
    memspace: usize,
    ntraits: c_int,
    traits: *const AllocTrait,
) -> Handle {
    // SAFETY: the same contract.
    unsafe { init_allocator("__kmpc_init_allocator", memspace, ntraits, traits) }
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_destroy_allocator(_gtid: i32, allocator: Handle) {
    if let Err(e) = al::destroy(allocator) {
        misuse("__kmpc_destroy_allocator", e);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_set_default_allocator(_gtid: i32, allocator: Handle) {
    if let Err(e) = q::set_default_allocator(allocator) {
        misuse("__kmpc_set_default_allocator", e);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_get_default_allocator(_gtid: i32) -> Handle {
    q::default_allocator()
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_destroy_allocator(allocator: Handle) {
    if let Err(e) = al::destroy(allocator) {
        misuse("omp_destroy_allocator", e);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_set_default_allocator(allocator: Handle) {
    if let Err(e) = q::set_default_allocator(allocator) {
        misuse("omp_set_default_allocator", e);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_default_allocator() -> Handle {
    q::default_allocator()
}
