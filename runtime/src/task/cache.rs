//! Per-thread caches of task blocks: creating a task takes a block from the creating thread's
//! cache, completing it gives the block back to that cache, from whatever thread. No lock and
//! no system allocator call on the steady-state path.
//!
//! Blocks come in a few size classes. The owner keeps a local free list per class; other
//! threads push freed blocks onto the owner's lock-free remote stack (`sync/remote_stack.rs`:
//! a CAS push, its top word counting the blocks; model-checked with loom), which the owner
//! takes over whole, in one swap, as its local list when that runs dry.
//!
//! The cache stores bytes, but its users keep one invariant on them: a block on a free list
//! (local or remote) holds a task header *at rest* (descriptor.rs, `Rest`), so that a
//! task allocated from the local list ([`BlockCache::try_alloc`]) writes only the fields that
//! differ from task to task. A block from the system ([`BlockCache::alloc`] may return one)
//! is written whole.

use std::alloc::Layout;
use std::cell::UnsafeCell;

use crossbeam_utils::CachePadded;

use crate::sync::remote_stack::{LEN_MAX, Link, RemoteStack};

/// Block sizes of the classes, in bytes. The smallest holds the most common task: a header
/// (320 bytes) and a `kmp_task_t` with a few privates and shareds.
const CLASSES: [usize; 4] = [512, 1024, 2048, 4096];
/// Blocks a local free list keeps per class; beyond that they go back to the system.
const LOCAL_MAX: usize = 4096;

/// A free block, linked through its first word.
type FreeBlock = Link;

/// A free list of one class, owner only: blocks linked through their first word.
struct LocalList {
    head: *mut FreeBlock,
    /// Blocks on the list, exactly (a list adopted from a remote stack is counted, walking
    /// it when the stack's own count saturated): a pop is one decrement, with no test, and
    /// pushes stop at `LOCAL_MAX`.
    len: usize,
}

impl LocalList {
    #[inline]
    fn pop(&mut self) -> Option<*mut u8> {
        let n = self.head;
        if n.is_null() {
            return None;
        }
        // SAFETY: blocks on the list are free blocks owned by this cache.
        self.head = unsafe { (*n).next };
        self.len -= 1;
        Some(n as *mut u8)
    }

    #[inline]
    fn push(&mut self, p: *mut u8) {
        let n = p as *mut FreeBlock;
        // SAFETY: the block is free, ours, and at least pointer-sized and aligned.
        unsafe { (*n).next = self.head };
        self.head = n;
        self.len += 1;
    }
}

/// One size class of a thread's cache: the home a block of that class names, so that giving
/// a block back needs neither its class worked out again nor a table lookup.
pub(crate) struct ClassCache {
    /// Owner only.
    local: UnsafeCell<LocalList>,
    /// The blocks other threads gave back (its own cache line: other threads CAS it while
    /// the owner works on `local`).
    remote: CachePadded<RemoteStack>,
    /// The class's index in `CLASSES`.
    class: usize,
}

/// One thread's cache of task blocks (lives in its descriptor, never freed).
pub(crate) struct BlockCache {
    classes: [ClassCache; CLASSES.len()],
}

// SAFETY: `local` is touched only by the owning thread (`alloc`, and `free` when called by
// the owner, both through `Thread`, which is !Send); `remote` is atomic.
unsafe impl Sync for ClassCache {}
// SAFETY: as above.
unsafe impl Send for ClassCache {}

oxiomp_instrument::thread_slot!(mod own_slot: *const BlockCache = "oxiomp_own_block_cache";);

/// Makes `cache` the calling thread's own cache (its descriptor's, set with the thread's
/// descriptor pointer: `thread::set_current`), or no cache (null): [`free`] without a cache
/// named looks it up here.
#[inline]
pub(crate) fn set_own(cache: *const BlockCache) {
    own_slot::set(cache);
}

/// The class of blocks of `size` bytes (the smallest of `CLASSES` that holds it).
#[inline]
fn class_of(size: usize) -> Option<usize> {
    // Compares, not a bit scan: without `lzcnt` in the target, `leading_zeros` is a dozen
    // instructions, on every allocation.
    match size {
        0..=512 => Some(0),
        513..=1024 => Some(1),
        1025..=2048 => Some(2),
        2049..=4096 => Some(3),
        _ => None,
    }
}

fn class_layout(class: usize) -> Layout {
    // The classes are valid layouts (constant, power-of-two sizes, align 16).
    Layout::from_size_align(CLASSES[class], 16).expect("size class layout")
}

/// A block: where it came from, for `free`.
#[derive(Clone, Copy)]
pub(crate) struct Block {
    pub(crate) ptr: *mut u8,
    /// The cache class to give it back to (null: a system allocation of `size` bytes).
    pub(crate) home: *const ClassCache,
}

impl BlockCache {
    pub(crate) fn new() -> BlockCache {
        BlockCache {
            classes: std::array::from_fn(|class| ClassCache {
                local: UnsafeCell::new(LocalList { head: std::ptr::null_mut(), len: 0 }),
                remote: CachePadded::new(RemoteStack::new()),
                class,
            }),
        }
    }

    /// In a fork's child, for a descriptor whose thread is gone (it may have been changing a
    /// list): the free lists start empty, their blocks forgotten.
    pub(crate) fn forget_after_fork(&self) {
        for c in &self.classes {
            // SAFETY: in a fork's child only the forking thread exists, and it is not this
            // cache's owner: nobody else touches `local`.
            unsafe { *c.local.get() = LocalList { head: std::ptr::null_mut(), len: 0 } };
            let _ = c.remote.take_all();
        }
    }

    /// Whether `home` is one of this cache's classes.
    #[inline]
    fn owns(&self, home: &ClassCache) -> bool {
        // One subtraction and compare: the classes are an array inside `self`.
        (home as *const ClassCache as usize).wrapping_sub(self as *const BlockCache as usize)
            < std::mem::size_of::<BlockCache>()
    }

    /// A block of at least `size` bytes, 16-aligned. The caller is this cache's owner.
    ///
    /// With a tool attached every block comes from the system allocator and goes back to it:
    /// a block one thread frees and another reuses passes between them through the caches'
    /// atomics, which a tool (ThreadSanitizer under Archer) does not see, and to it the new
    /// task's writes would race with the old task's reads of the same memory.
    #[inline]
    pub(crate) fn alloc(&self, size: usize) -> Block {
        let class = match class_of(size) {
            Some(_) if oxiomp_instrument::tool_attached() => None,
            c => c,
        };
        if class.is_some()
            && let Some(b) = self.try_alloc(size)
        {
            return b;
        }
        match class {
            Some(c) => self.classes[c].refill(),
            None => Block { ptr: system_alloc(layout(size)), home: std::ptr::null() },
        }
    }

    /// [`alloc`](Self::alloc)'s common case: a block from the local list of `size`'s class
    /// (so, at rest: see the module's documentation), or None (no class, or the list is
    /// empty) without calling anything, so that a caller's fast path built on it stays a
    /// leaf. The caller is this cache's owner.
    #[inline]
    pub(crate) fn try_alloc(&self, size: usize) -> Option<Block> {
        // The smallest class, which most tasks use, with one compare and no index arithmetic.
        let home = if size <= CLASSES[0] { &self.classes[0] } else { &self.classes[class_of(size)?] };
        // SAFETY: the owner is the only thread touching `local`.
        let local = unsafe { &mut *home.local.get() };
        local.pop().map(|p| Block { ptr: p, home })
    }
}

impl ClassCache {
    /// The local list is empty: takes the blocks other threads gave back, or a new one from
    /// the system. The caller is the owner.
    #[cold]
    fn refill(&self) -> Block {
        // SAFETY: the owner is the only thread touching `local`.
        let local = unsafe { &mut *self.local.get() };
        // The local list is empty: the stack becomes it as it is (linked through `next`).
        let (head, len) = self.remote.take_all();
        // The stack's count saturates at `LEN_MAX`: then the blocks are counted one by one
        // (rare, and on this cold path), so that `len` stays exact.
        let len = if len as u64 >= LEN_MAX { count_list(head) } else { len };
        (local.head, local.len) = (head, len);
        match local.pop() {
            Some(p) => Block { ptr: p, home: self },
            None => Block { ptr: system_alloc(class_layout(self.class)), home: self },
        }
    }
}

/// The number of blocks on a list linked through `next` (taken whole from a remote stack).
fn count_list(mut p: *mut FreeBlock) -> usize {
    let mut n = 0;
    while !p.is_null() {
        n += 1;
        // SAFETY: a list taken from the remote stack: free blocks, each linked to the next.
        p = unsafe { (*p).next };
    }
    n
}

/// The layout of a system block of `size` bytes.
pub(crate) fn layout(size: usize) -> Layout {
    match Layout::from_size_align(size, 16) {
        Ok(l) => l,
        Err(_) => crate::fatal(format_args!("task of {size} bytes cannot be allocated")),
    }
}

fn system_alloc(l: Layout) -> *mut u8 {
    // SAFETY: layouts here have a non-zero size.
    let p = unsafe { std::alloc::alloc(l) };
    if p.is_null() {
        std::alloc::handle_alloc_error(l);
    }
    p
}

/// Gives back a block of `size` requested bytes, from any thread; `mine` is the calling
/// thread's cache when the caller knows it (else it is looked up).
///
/// # Safety
/// `b` came from [`BlockCache::alloc`] with this `size` and is no longer used (and, if its
/// `home` is a cache, holds a task header at rest); `mine`, if given, is the calling thread's
/// own cache.
#[inline]
pub(crate) unsafe fn free(b: Block, size: usize, mine: Option<&BlockCache>) {
    // SAFETY: per the contract, the block is ours to give back.
    let Some(home) = (unsafe { home_or_dealloc(b, size) }) else {
        return;
    };
    let mine = match mine {
        Some(c) => c.owns(home),
        // SAFETY: the slot holds null or the cache of the calling thread's descriptor, which
        // is never freed (`set_own`).
        None => unsafe { own_slot::get().as_ref() }.is_some_and(|c| c.owns(home)),
    };
    // SAFETY: as above; `mine` says whether `home` is the calling thread's own cache.
    unsafe { give_back(b, home, mine) }
}

/// [`free`] of a block the calling thread took from its own cache `mine` (or from the
/// system): no ownership test.
///
/// # Safety
/// As for [`free`], and `b` came from `mine.alloc`.
#[inline(always)]
pub(crate) unsafe fn free_own(b: Block, size: usize, mine: &BlockCache) {
    // SAFETY: per the contract, the block is ours to give back.
    let Some(home) = (unsafe { home_or_dealloc(b, size) }) else {
        return;
    };
    debug_assert!(mine.owns(home), "free_own: the block is another thread's");
    // SAFETY: as above; per the contract, `home` is the calling thread's own cache.
    unsafe { give_back(b, home, true) }
}

/// The cache class a freed block goes back to; a block from the system (no home) is given
/// back to it here (None).
///
/// # Safety
/// As for [`free`].
#[inline(always)]
unsafe fn home_or_dealloc<'a>(b: Block, size: usize) -> Option<&'a ClassCache> {
    // SAFETY: a block's home is a class of a cache that is never freed, or null.
    let home = unsafe { b.home.as_ref() };
    if home.is_none() {
        // SAFETY: per the contract, a system block of `size` bytes that is no longer used.
        unsafe { std::alloc::dealloc(b.ptr, layout(size)) };
    }
    home
}

/// Puts a block back on its home's local list if the caller is the home's owner (`mine`)
/// and the list is not full; otherwise [`free_slow`].
///
/// # Safety
/// As for [`free`]; `mine` says whether the calling thread owns `home`.
#[inline(always)]
unsafe fn give_back(b: Block, home: &ClassCache, mine: bool) {
    if mine {
        // SAFETY: we are the owner: the only thread touching `local`.
        let local = unsafe { &mut *home.local.get() };
        if local.len < LOCAL_MAX {
            local.push(b.ptr);
            return;
        }
    }
    // SAFETY: per the contract.
    unsafe { free_slow(b, home, mine) }
}

/// `free` of a block to another thread's cache (its remote stack), or beyond the local
/// list's bound (to the system).
///
/// # Safety
/// As for [`free`]; `home` is the block's cache class, `mine` whether that is the calling
/// thread's.
#[cold]
unsafe fn free_slow(b: Block, home: &ClassCache, mine: bool) {
    if mine {
        // SAFETY: the block came from the system with this class's layout.
        unsafe { std::alloc::dealloc(b.ptr, class_layout(home.class)) };
        return;
    }
    // SAFETY: the block is free, at least pointer-sized, ours to give back.
    if !unsafe { home.remote.push(b.ptr as *mut FreeBlock) } {
        // An address beyond 48 bits (a 57-bit address space) does not fit the top word: the
        // block goes back to the system instead.
        // SAFETY: the block came from the system with this class's layout.
        unsafe { std::alloc::dealloc(b.ptr, class_layout(home.class)) };
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn classes_are_the_smallest_that_fit() {
        for size in 0..=5000usize {
            let want = CLASSES.iter().position(|&c| size <= c);
            assert_eq!(class_of(size), want, "size {size}");
        }
    }

    #[test]
    fn a_cache_owns_its_classes_only() {
        let a = Box::leak(Box::new(BlockCache::new()));
        let b = Box::leak(Box::new(BlockCache::new()));
        for c in &a.classes {
            assert!(a.owns(c) && !b.owns(c));
        }
        // A block of `a` freed by the owner of `b` goes to `a`'s remote stack, not to `b`'s
        // lists, and comes back to `a` when its local list runs dry.
        let x = a.alloc(300);
        // SAFETY: an unused block of `a`; the caller claims to own `b` (it is this thread).
        unsafe { free(x, 300, Some(b)) };
        let c = class_of(300).unwrap();
        // SAFETY: this thread is the owner of both caches in this test.
        assert!(unsafe { &*b.classes[c].local.get() }.head.is_null(), "not on b's list");
        // SAFETY: as above.
        assert!(unsafe { &*a.classes[c].local.get() }.head.is_null(), "not on a's local list");
        assert_eq!(a.alloc(300).ptr, x.ptr, "back to a through its remote stack");
    }

    /// Gives back `blocks` (of 300 bytes, from `cache`) from a thread that is not its owner.
    fn free_300_elsewhere(cache: &BlockCache, blocks: Vec<usize>) {
        let home = &cache.classes[class_of(300).unwrap()] as *const ClassCache as usize;
        std::thread::spawn(move || {
            for &p in &blocks {
                let b = Block { ptr: p as *mut u8, home: home as *const ClassCache };
                // SAFETY: unused blocks of the cache, freed by a thread that is not its owner
                // (no `mine`, no descriptor: the remote path).
                unsafe { free(b, 300, None) };
            }
        })
        .join()
        .unwrap();
    }

    /// More blocks given back remotely than the remote stack's count can hold: the adopted
    /// list is counted exactly, so the local bound still holds afterwards.
    #[test]
    fn a_list_adopted_past_the_remote_count_is_counted_exactly() {
        let cache = Box::leak(Box::new(BlockCache::new()));
        let n = LEN_MAX as usize + 10;
        let blocks: Vec<usize> = (0..n).map(|_| cache.alloc(300).ptr as usize).collect();
        free_300_elsewhere(cache, blocks);
        cache.alloc(300);
        // SAFETY: this thread is the cache's owner in this test.
        let len = unsafe { &*cache.classes[class_of(300).unwrap()].local.get() }.len;
        assert_eq!(len, n - 1, "every adopted block is counted");
    }

    #[test]
    fn blocks_are_reused_last_in_first_out_and_come_back_from_other_threads() {
        let cache = Box::leak(Box::new(BlockCache::new()));
        let a = cache.alloc(300);
        let b = cache.alloc(300);
        assert_ne!(a.ptr, b.ptr);
        // SAFETY: both came from this cache with this size and are unused.
        unsafe {
            free(a, 300, Some(cache));
            free(b, 300, Some(cache));
        }
        assert_eq!(cache.alloc(400).ptr, b.ptr, "the block freed last is reused first");
        assert_eq!(cache.alloc(512).ptr, a.ptr);
        // A block freed by another thread goes to the remote stack, then back to the owner.
        let c = cache.alloc(300);
        let (addr, home) = (c.ptr as usize, c.home as usize);
        std::thread::spawn(move || {
            let c = Block { ptr: addr as *mut u8, home: home as *const ClassCache };
            // SAFETY: the block is unused; this thread is not the owner (no `mine`, no
            // descriptor: the remote path).
            unsafe { free(c, 300, None) };
        })
        .join()
        .unwrap();
        assert_eq!(cache.alloc(300).ptr as usize, addr);
        // Five blocks freed remotely come back as a list of five, counted without a walk.
        let blocks: Vec<usize> = (0..5).map(|_| cache.alloc(300).ptr as usize).collect();
        free_300_elsewhere(cache, blocks.clone());
        let got = cache.alloc(300).ptr as usize;
        assert_eq!(got, blocks[4], "the last block pushed is on top");
        let local = cache.classes[class_of(300).unwrap()].local.get();
        // SAFETY: this thread is the cache's owner in this test.
        assert_eq!(unsafe { &*local }.len, 4, "the adopted list counts the rest");
        let mut rest: Vec<usize> = (0..4).map(|_| cache.alloc(300).ptr as usize).collect();
        rest.reverse();
        assert_eq!(rest, blocks[..4], "then the others, newest first");
    }
}
