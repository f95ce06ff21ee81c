//! Task reductions as gcc lowers them (`task_reduction` on a taskgroup, `reduction(task, ...)`
//! on `parallel`, worksharing and `scope` constructs, `reduction` on `taskloop`,
//! `in_reduction` on tasks), and the scratch block of gcc's worksharing constructs.
//!
//! gcc describes a construct's reduction items in an array of words it owns and registers it
//! with a taskgroup; the runtime gives each team member a zeroed block holding its private
//! copies of every item, and a task asks for its thread's copies by the items' addresses
//! (`GOMP_task_reduction_remap`). At the end gcc's own code combines the blocks and
//! unregisters the array, which frees them. The array:
//!
//! | word | gcc writes | the runtime makes it |
//! |---|---|---|
//! | 0 | number of items | |
//! | 1 | bytes of one member's block | |
//! | 2 | the blocks' alignment | the address of the blocks, one per member |
//! | 3 | allocator (-1: the default) | |
//! | 4 | the next array of the same construct, or 0 | (last array) the chain registered before |
//! | 5 | | non-zero on the last array of a registration |
//! | 6 | | the end of the blocks |
//! | 7 + 3i | item i's address | |
//! | 8 + 3i | item i's offset in a block (increasing) | |
//! | 9 + 3i | | the array holding item i |
//!
//! A taskgroup keeps the head of its chain (the runtime's word for the group, `task::
//! set_group_word`); the chain goes on (word 4) into the enclosing groups' arrays, so one
//! walk finds every item a task may name.

use std::ffi::c_void;
use std::sync::Arc;

use oxiomp_runtime::Thread;
use oxiomp_runtime::task;
use oxiomp_runtime::worksharing as ws;

/// Word `i` of the array at `d`.
///
/// # Safety
/// `d` is a reduction array of at least `i + 1` words.
unsafe fn word(d: *mut usize, i: usize) -> usize {
    // SAFETY: the caller's contract.
    unsafe { *d.add(i) }
}

/// # Safety
/// As [`word`]; nobody else reads the word meanwhile.
unsafe fn set(d: *mut usize, i: usize, v: usize) {
    // SAFETY: the caller's contract.
    unsafe { *d.add(i) = v }
}

/// Registers the chain of arrays `data` for a team of `nthreads`, after the chain `old`:
/// each array gets its members' blocks (zeroed), or, when `first` is given (a worksharing
/// construct whose first member registered already), shares the first member's blocks.
///
/// # Safety
/// `data` (and `first`) are gcc's chains of reduction arrays, of the same shape.
unsafe fn register(data: *mut usize, old: usize, mut first: *mut usize, nthreads: u32) {
    let mut d = data;
    // SAFETY: walking gcc's chain (the caller's contract).
    unsafe {
        loop {
            if first.is_null() {
                let (size, align) = (word(d, 1), word(d, 2).max(std::mem::size_of::<usize>()));
                let total = size * nthreads as usize;
                let mut p: *mut c_void = std::ptr::null_mut();
                if libc::posix_memalign(&mut p, align.next_power_of_two(), total.max(1)) != 0 {
                    crate::fatal(
                        "GOMP_taskgroup_reduction_register",
                        format_args!("no memory for {total} bytes"),
                    );
                }
                std::ptr::write_bytes(p as *mut u8, 0, total);
                set(d, 2, p as usize);
                set(d, 6, p as usize + total);
            } else {
                set(d, 2, word(first, 2));
                set(d, 6, word(first, 6));
                first = word(first, 4) as *mut usize;
            }
            set(d, 5, 0);
            for i in 0..word(d, 0) {
                set(d, 9 + 3 * i, d as usize);
            }
            let next = word(d, 4);
            if next == 0 {
                set(d, 4, old);
                set(d, 5, 1);
                break;
            }
            d = next as *mut usize;
        }
    }
}

/// Frees the blocks of a registration (the arrays up to the chain registered before it).
///
/// # Safety
/// `data` was registered and not freed since.
unsafe fn free_blocks(data: *mut usize) {
    let mut d = data;
    // SAFETY: a registered chain (the caller's contract); the blocks came from
    // `posix_memalign`.
    unsafe {
        loop {
            libc::free(word(d, 2) as *mut c_void);
            let last = word(d, 5) != 0;
            d = word(d, 4) as *mut usize;
            if last || d.is_null() {
                break;
            }
        }
    }
}

/// `taskgroup task_reduction(...)`: the arrays' items get a private copy per team member, for
/// the tasks of the calling thread's innermost taskgroup.
///
/// # Safety
/// `data` is gcc's chain of reduction arrays.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_taskgroup_reduction_register(data: *mut usize) {
    let th = Thread::current();
    let old = task::group_word(th);
    // SAFETY: the caller's contract.
    unsafe { register(data, old, std::ptr::null_mut(), th.team().nthreads) };
    if !task::set_group_word(th, data as usize) {
        crate::fatal("GOMP_taskgroup_reduction_register", "no taskgroup is open");
    }
}

/// The end of a registration: its blocks are freed (gcc combined them into the items).
///
/// # Safety
/// `data` was registered by [`GOMP_taskgroup_reduction_register`] (or a construct's start)
/// and not unregistered since.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_taskgroup_reduction_unregister(data: *mut usize) {
    // SAFETY: the caller's contract.
    unsafe { free_blocks(data) }
}

/// The calling thread's private copy of the item at `addr` (an item's address, or the
/// address of any member's copy of it), and the item's own address; None when no taskgroup
/// of the current task registered it.
fn remap(th: Thread, addr: usize) -> Option<(usize, usize)> {
    let tid = th.tid() as usize;
    let head = task::group_word(th) as *mut usize;
    // SAFETY: registered chains stay alive while their taskgroups are open, and the tasks
    // that remap run inside them.
    unsafe {
        let mut d = head;
        while !d.is_null() {
            for i in 0..word(d, 0) {
                if word(d, 7 + 3 * i) == addr {
                    let copy = word(d, 2) + tid * word(d, 1) + word(d, 8 + 3 * i);
                    return Some((copy, addr));
                }
            }
            d = word(d, 4) as *mut usize;
        }
        let mut d = head;
        while !d.is_null() {
            let (base, end, size) = (word(d, 2), word(d, 6), word(d, 1));
            if (base..end).contains(&addr) && size > 0 {
                let off = (addr - base) % size;
                let item = (0..word(d, 0)).find(|&i| word(d, 8 + 3 * i) == off).map(|i| word(d, 7 + 3 * i));
                return Some((base + tid * size + off, item.unwrap_or(0)));
            }
            d = word(d, 4) as *mut usize;
        }
    }
    None
}

/// `in_reduction`: each of the `cnt` addresses in `ptrs` becomes the calling thread's private
/// copy of that item; for the first `cntorig`, `ptrs[cnt + i]` also gets the item's own
/// address.
///
/// # Safety
/// `ptrs` holds `cnt + cntorig` pointers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_task_reduction_remap(cnt: usize, cntorig: usize, ptrs: *mut *mut c_void) {
    let th = Thread::current();
    for i in 0..cnt {
        // SAFETY: the caller's contract.
        let p = unsafe { ptrs.add(i) };
        // SAFETY: as above.
        let addr = unsafe { *p } as usize;
        let Some((copy, item)) = remap(th, addr) else {
            crate::fatal(
                "GOMP_task_reduction_remap",
                format_args!("{addr:#x} is no item of a task reduction around this task"),
            );
        };
        // SAFETY: as above.
        unsafe {
            *p = copy as *mut c_void;
            if i < cntorig {
                *ptrs.add(cnt + i) = item as *mut c_void;
            }
        }
    }
}

/// A worksharing construct with task reductions begins: the calling thread opens the
/// taskgroup that holds them (before the construct, as gcc's code expects).
pub(super) fn workshare_taskgroup_begin(th: Thread) {
    task::taskgroup_begin(th);
}

/// The end of a worksharing construct's task reductions: the taskgroup ends (its tasks
/// complete), the primary thread frees the blocks (gcc's code combined them), and the team
/// waits at a barrier unless the region was `cancelled`.
#[allow(non_snake_case)]
#[unsafe(export_name = "oxiomp_GOMP_workshare_task_reduction_unregister")]
pub extern "C" fn GOMP_workshare_task_reduction_unregister(cancelled: bool) {
    let th = Thread::current();
    let data = task::group_word(th) as *mut usize;
    task::taskgroup_end(th);
    ws::shared_leave(th);
    if th.tid() == 0 && !data.is_null() {
        // SAFETY: registered at the construct's start; every member is past its own use
        // (gcc's code combined after the construct's barrier).
        unsafe { free_blocks(data) };
    }
    if !cancelled {
        super::sync::barrier(th);
    }
}

/// What the members of a gcc worksharing construct share: the first member's reduction
/// array (the others share its blocks) and the scratch block.
pub(super) struct WsShared {
    /// The first member's chain of reduction arrays (0: none).
    reductions: usize,
    /// The zeroed scratch block (null: none) and its layout.
    mem: *mut u8,
    layout: std::alloc::Layout,
}

// SAFETY: the fields are addresses the members only read (the scratch block is gcc's to use,
// by its own rules); the block is freed once, by the last owner's drop.
unsafe impl Send for WsShared {}
// SAFETY: as above.
unsafe impl Sync for WsShared {}

impl Drop for WsShared {
    fn drop(&mut self) {
        if !self.mem.is_null() {
            // SAFETY: allocated with this layout in `join`.
            unsafe { std::alloc::dealloc(self.mem, self.layout) };
        }
    }
}

impl WsShared {
    /// The calling thread, which just started a worksharing construct, registers its task
    /// reductions (`reductions`, in the taskgroup it opened) and gets the team's scratch block
    /// of `*mem` bytes (written back into `*mem`). Nothing when both are null.
    pub(super) fn join(th: Thread, reductions: *mut usize, mem: *mut *mut c_void) {
        if reductions.is_null() && mem.is_null() {
            return;
        }
        let nthreads = th.team().nthreads;
        // SAFETY: gcc's size word.
        let size = if mem.is_null() { 0 } else { unsafe { *mem as usize } };
        let old = task::group_word(th);
        let mut first_here = false;
        let shared: Arc<WsShared> = ws::shared_join(th, || {
            first_here = true;
            if !reductions.is_null() {
                // SAFETY: gcc's chain of reduction arrays.
                unsafe { register(reductions, old, std::ptr::null_mut(), nthreads) };
            }
            let layout = std::alloc::Layout::from_size_align(size.max(1), 64).unwrap_or_else(|_| {
                crate::fatal("GOMP_loop_start", format_args!("a scratch block of {size} bytes"))
            });
            let mem = if mem.is_null() {
                std::ptr::null_mut()
            } else {
                // SAFETY: a non-zero size.
                let p = unsafe { std::alloc::alloc_zeroed(layout) };
                if p.is_null() {
                    std::alloc::handle_alloc_error(layout);
                }
                p
            };
            WsShared { reductions: reductions as usize, mem, layout }
        });
        if !reductions.is_null() {
            if !first_here {
                // SAFETY: the first member's chain has this one's shape (the same construct)
                // and stays alive until the construct's end, after every member's start.
                unsafe { register(reductions, old, shared.reductions as *mut usize, nthreads) };
            }
            task::set_group_word(th, reductions as usize);
        }
        if !mem.is_null() {
            // SAFETY: gcc's word, which receives the block's address.
            unsafe { *mem = shared.mem as *mut c_void };
        }
    }
}

/// The calling member of a `parallel reduction(task, ...)` region begins: its implicit task
/// opens the taskgroup of the region's task reductions, the first member to arrive
/// registering `data` (shared by the whole team) before any member goes on.
pub(super) fn parallel_begin(th: Thread, data: *mut usize) {
    task::taskgroup_begin(th);
    let nthreads = th.team().nthreads;
    let _registered: Arc<()> = ws::shared_join(th, || {
        // SAFETY: gcc's reduction array (`GOMP_parallel_reductions`' contract).
        unsafe { register(data, 0, std::ptr::null_mut(), nthreads) }
    });
    task::set_group_word(th, data as usize);
}

/// The calling member's part of a `parallel reduction(task, ...)` region ends: the tasks of
/// its taskgroup are complete.
pub(super) fn parallel_end(th: Thread) {
    task::taskgroup_end(th);
    ws::shared_leave(th);
}
