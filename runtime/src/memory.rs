//! The OpenMP memory allocators (`omp_alloc` and friends, `__kmpc_alloc` for `depobj` and
//! `allocate`). Every predefined allocator is served from the system heap (this host has one
//! kind of memory); a block's header records where the underlying allocation starts and how
//! large the user part is, so `omp_free` and `omp_realloc` need no lookup table.

use std::alloc::Layout;
use std::ffi::c_void;

/// Bytes before the user pointer: [allocation start, user size].
const HEADER: usize = 16;

fn layout(size: usize, align: usize) -> Option<(Layout, usize)> {
    let align = align.max(16).checked_next_power_of_two()?;
    let pad = HEADER.div_ceil(align) * align;
    Some((Layout::from_size_align(size.checked_add(pad)?, align).ok()?, pad))
}

/// Allocates `size` bytes aligned to `align` (at least 16); null for size 0 or on failure.
pub fn alloc(size: usize, align: usize, zeroed: bool) -> *mut c_void {
    if size == 0 {
        return std::ptr::null_mut();
    }
    let Some((l, pad)) = layout(size, align) else {
        return std::ptr::null_mut();
    };
    // SAFETY: non-zero size.
    let base = unsafe { if zeroed { std::alloc::alloc_zeroed(l) } else { std::alloc::alloc(l) } };
    if base.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: `pad >= HEADER`, so the header fits before the user part, inside the block;
    // the user pointer is 16-aligned, so the header words are aligned.
    unsafe {
        let user = base.add(pad);
        let h = user.sub(HEADER) as *mut usize;
        *h = l.align();
        *h.add(1) = size;
        user as *mut c_void
    }
}

/// The user size and layout of a block from [`alloc`].
///
/// # Safety
/// `p` came from [`alloc`] and is not freed.
unsafe fn block(p: *mut c_void) -> (usize, *mut u8, Layout) {
    // SAFETY: per the contract the header precedes `p`.
    unsafe {
        let h = (p as *mut u8).sub(HEADER) as *const usize;
        let (align, size) = (*h, *h.add(1));
        let (l, pad) = layout(size, align).expect("layout was valid at allocation");
        (size, (p as *mut u8).sub(pad), l)
    }
}

/// Frees a block from [`alloc`] (null is ignored).
///
/// # Safety
/// `p` is null or came from [`alloc`] and is not freed yet.
pub unsafe fn free(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    // SAFETY: per the contract.
    unsafe {
        let (_, base, l) = block(p);
        std::alloc::dealloc(base, l);
    }
}

/// `omp_realloc`: a new block with the old content (up to the smaller size).
///
/// # Safety
/// As for [`free`].
pub unsafe fn realloc(p: *mut c_void, size: usize) -> *mut c_void {
    if p.is_null() {
        return alloc(size, 16, false);
    }
    if size == 0 {
        // SAFETY: per the contract.
        unsafe { free(p) };
        return std::ptr::null_mut();
    }
    let q = alloc(size, 16, false);
    if !q.is_null() {
        // SAFETY: both blocks are live and hold at least the copied length.
        unsafe {
            let (old, _, _) = block(p);
            std::ptr::copy_nonoverlapping(p as *const u8, q as *mut u8, old.min(size));
            free(p);
        }
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_reallocated() {
        for align in [1usize, 16, 64, 4096] {
            let p = alloc(100, align, true);
            assert_eq!(p as usize % align.max(16), 0);
            // SAFETY: a live block of 100 zeroed bytes.
            unsafe {
                assert!(std::slice::from_raw_parts(p as *const u8, 100).iter().all(|&b| b == 0));
                std::ptr::write_bytes(p as *mut u8, 7, 100);
                let q = realloc(p, 300);
                assert!(std::slice::from_raw_parts(q as *const u8, 100).iter().all(|&b| b == 7));
                free(q);
            }
        }
        assert!(alloc(0, 16, false).is_null());
    }
}
