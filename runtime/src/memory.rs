//! Memory blocks for the OpenMP allocators (`omp_alloc` and friends, `__kmpc_alloc` for
//! `depobj` and `allocate`; the allocators themselves are in `allocator.rs`). Every block
//! comes from the system heap; its header records where the underlying allocation starts, how
//! large the user part is, the allocator that served it and the one the program asked (they
//! differ after a fallback), so a free needs no lookup table.

use std::alloc::Layout;
use std::ffi::c_void;

/// Bytes before the user pointer: [alignment, user size, serving allocator, requested one].
const HEADER: usize = 32;

/// Who a block belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    /// The allocator that served the block (its pool counts the bytes).
    pub served: usize,
    /// The allocator the program asked for (a fallback may have served it).
    pub requested: usize,
}

fn layout(size: usize, align: usize) -> Option<(Layout, usize)> {
    let align = align.max(16).checked_next_power_of_two()?;
    let pad = HEADER.div_ceil(align) * align;
    Some((Layout::from_size_align(size.checked_add(pad)?, align).ok()?, pad))
}

/// Allocates `size` bytes aligned to `align` (at least 16) for `owner`; null for size 0 or on
/// failure.
pub fn alloc(size: usize, align: usize, zeroed: bool, owner: Owner) -> *mut c_void {
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
        *h.add(2) = owner.served;
        *h.add(3) = owner.requested;
        user as *mut c_void
    }
}

/// The user size and the owner of a block from [`alloc`].
///
/// # Safety
/// `p` came from [`alloc`] and is not freed.
pub unsafe fn block_info(p: *mut c_void) -> (usize, Owner) {
    // SAFETY: per the contract the header precedes `p`.
    unsafe {
        let h = (p as *mut u8).sub(HEADER) as *const usize;
        (*h.add(1), Owner { served: *h.add(2), requested: *h.add(3) })
    }
}

/// The bytes a block of `size` bytes aligned to `align` takes from the system heap: the user
/// part, the header and the padding before it (what an allocator's pool counts). None if no
/// such block can be made.
pub fn footprint(size: usize, align: usize) -> Option<usize> {
    layout(size, align).map(|(l, _)| l.size())
}

/// The [`footprint`] of a block from [`alloc`].
///
/// # Safety
/// `p` came from [`alloc`] and is not freed.
pub unsafe fn block_footprint(p: *mut c_void) -> usize {
    // SAFETY: per the contract the header precedes `p`.
    let (align, size) = unsafe {
        let h = (p as *mut u8).sub(HEADER) as *const usize;
        (*h, *h.add(1))
    };
    footprint(size, align).expect("layout was valid at allocation")
}

/// The size of a memory page.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 { n as usize } else { 4096 }
}

/// Frees a block from [`alloc`] (its owner's accounting is the caller's).
///
/// # Safety
/// `p` came from [`alloc`] and is not freed yet.
pub unsafe fn free_raw(p: *mut c_void) {
    // SAFETY: per the contract the header precedes `p`.
    unsafe {
        let h = (p as *mut u8).sub(HEADER) as *const usize;
        let (align, size) = (*h, *h.add(1));
        let (l, pad) = layout(size, align).expect("layout was valid at allocation");
        std::alloc::dealloc((p as *mut u8).sub(pad), l);
    }
}

/// Locks `size` bytes at `p` in memory; false if the system refuses (RLIMIT_MEMLOCK). The
/// kernel locks whole pages and keeps no count: the caller gives each pinned block pages of its
/// own, so that unpinning one block cannot unlock another's memory.
pub(crate) fn pin(p: *mut c_void, size: usize) -> bool {
    // SAFETY: mlock only reads the range's mapping; the block is ours.
    unsafe { libc::mlock(p, size) == 0 }
}

/// Undoes [`pin`] (before the block is freed).
pub(crate) fn unpin(p: *mut c_void, size: usize) {
    // SAFETY: as in `pin`.
    unsafe { libc::munlock(p, size) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_owned() {
        for align in [1usize, 16, 64, 4096] {
            let owner = Owner { served: 7, requested: 9 };
            let p = alloc(100, align, true, owner);
            assert_eq!(p as usize % align.max(16), 0);
            // SAFETY: a live block of 100 zeroed bytes.
            unsafe {
                assert!(std::slice::from_raw_parts(p as *const u8, 100).iter().all(|&b| b == 0));
                assert_eq!(block_info(p), (100, owner));
                free_raw(p);
            }
        }
        assert!(alloc(0, 16, false, Owner { served: 1, requested: 1 }).is_null());
    }
}
