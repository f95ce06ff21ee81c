//! Taskgroups and task reductions.
//!
//! A taskgroup counts the tasks generated in it that have not completed; a task generated
//! inside a task of the group (and not inside a nested taskgroup) belongs to the group too, so
//! the end of the taskgroup waits for all descendants. The counter is decremented with SeqCst
//! by each completing task, followed by the pool's wake-up check (see `pool`).
//!
//! Task reductions (`task_reduction` on a taskgroup, `reduction(task, ...)` on a parallel or
//! worksharing construct) keep one private copy of each item per team member, made at the
//! start (or on first use when the compiler asks for lazy copies); tasks find the executing
//! thread's copy by the address of the original item, and the end of the taskgroup combines
//! the copies into the item.

use std::ffi::c_void;

use crate::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};

/// A taskgroup region.
#[repr(C)]
pub struct TaskGroup {
    /// Tasks generated in the group and not complete.
    pub(crate) count: AtomicU32,
    /// Set by `cancel taskgroup`.
    pub(crate) cancelled: AtomicU32,
    /// The enclosing taskgroup of the same task.
    pub(crate) parent: *const TaskGroup,
    /// Task reductions of the group.
    pub(crate) reduction: Option<Box<Reduction>>,
    /// The compiler layer's word for the group (gcc's chain of registered task reductions),
    /// 0 for none.
    pub(crate) foreign: AtomicUsize,
}

impl TaskGroup {
    pub(crate) fn new(parent: *const TaskGroup) -> TaskGroup {
        TaskGroup {
            count: AtomicU32::new(0),
            cancelled: AtomicU32::new(0),
            parent,
            reduction: None,
            foreign: AtomicUsize::new(0),
        }
    }

    /// Whether the group or an enclosing one was cancelled.
    pub(crate) fn is_cancelled(&self) -> bool {
        // Relaxed: cancellation is a request polled at scheduling points.
        let mut g: *const TaskGroup = self;
        // SAFETY: enclosing groups outlive the groups nested in them.
        while let Some(x) = unsafe { g.as_ref() } {
            if x.cancelled.load(Ordering::Relaxed) != 0 {
                return true;
            }
            g = x.parent;
        }
        false
    }
}

pub type InitFn = unsafe extern "C" fn(*mut c_void, *mut c_void);
pub type Init1Fn = unsafe extern "C" fn(*mut c_void);
pub type CombFn = unsafe extern "C" fn(*mut c_void, *mut c_void);

/// How a reduction item's private copies are initialised.
#[derive(Clone, Copy)]
pub enum Init {
    /// Zero-filled.
    Zero,
    /// `init(priv, orig)` (`kmp_taskred_input_t`).
    WithOrig(InitFn),
    /// `init(priv)` (the older `kmp_task_red_input_t`).
    Plain(Init1Fn),
}

/// One reduction item, as the compiler describes it.
#[derive(Clone, Copy)]
pub struct ItemSpec {
    pub shar: *mut c_void,
    pub orig: *mut c_void,
    pub size: usize,
    pub init: Init,
    pub fini: Option<Init1Fn>,
    pub comb: Option<CombFn>,
    pub lazy: bool,
}

struct Item {
    spec: ItemSpec,
    /// Per team member: its private copy (null until made, for lazy items).
    copies: Box<[AtomicPtr<u8>]>,
}

/// The reductions of one taskgroup.
pub(crate) struct Reduction {
    items: Vec<Item>,
}

fn copy_layout(size: usize) -> std::alloc::Layout {
    std::alloc::Layout::from_size_align(size.max(1), 64).unwrap_or_else(|_| {
        crate::fatal(format_args!("task reduction item of {size} bytes cannot be allocated"))
    })
}

fn make_copy(spec: &ItemSpec) -> *mut u8 {
    let l = copy_layout(spec.size);
    // SAFETY: non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(l) };
    if p.is_null() {
        std::alloc::handle_alloc_error(l);
    }
    // SAFETY: the compiler's initialiser writes `size` bytes at `p`; `orig` is what it gave us.
    unsafe {
        match spec.init {
            Init::Zero => {}
            Init::WithOrig(f) => f(p as *mut c_void, spec.orig),
            Init::Plain(f) => f(p as *mut c_void),
        }
    }
    p
}

impl Reduction {
    pub(crate) fn new(specs: &[ItemSpec], nthreads: u32) -> Reduction {
        let items = specs
            .iter()
            .map(|s| Item {
                spec: *s,
                copies: (0..nthreads)
                    .map(|_| AtomicPtr::new(if s.lazy { std::ptr::null_mut() } else { make_copy(s) }))
                    .collect(),
            })
            .collect();
        Reduction { items }
    }

    /// The copy of the item at (or inside a copy of) `addr` for member `tid`, if the item is
    /// one of this reduction's.
    pub(crate) fn lookup(&self, addr: *const c_void, tid: u32) -> Option<*mut c_void> {
        let a = addr as usize;
        for it in &self.items {
            let found = it.spec.shar as usize == a
                || it.spec.orig as usize == a
                || it.copies.iter().any(|c| {
                    // Acquire: pairs with the Release store of a lazily made copy.
                    let p = c.load(Ordering::Acquire) as usize;
                    p != 0 && a >= p && a < p + it.spec.size.max(1)
                });
            if !found {
                continue;
            }
            let slot = &it.copies[(tid as usize).min(it.copies.len() - 1)];
            // Acquire: as above.
            let p = slot.load(Ordering::Acquire);
            if !p.is_null() {
                return Some(p as *mut c_void);
            }
            // Lazy: only member `tid` creates its own copy, so no race on the slot.
            let p = make_copy(&it.spec);
            // Release: other members that scan copies (above) see an initialised copy.
            slot.store(p, Ordering::Release);
            return Some(p as *mut c_void);
        }
        None
    }

    /// Combines every copy into its item and frees the copies (all tasks are complete).
    pub(crate) fn finish(self) {
        for it in self.items {
            for c in it.copies.iter() {
                let p = c.load(Ordering::Acquire);
                if p.is_null() {
                    continue;
                }
                // SAFETY: the compiler's combiner and finaliser take (item, copy) and (copy).
                unsafe {
                    if let Some(comb) = it.spec.comb {
                        comb(it.spec.shar, p as *mut c_void);
                    }
                    if let Some(fini) = it.spec.fini {
                        fini(p as *mut c_void);
                    }
                    std::alloc::dealloc(p, copy_layout(it.spec.size));
                }
            }
        }
    }
}
