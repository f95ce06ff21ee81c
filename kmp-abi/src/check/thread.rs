//! What the checks keep per thread: the regions it is a member of and the locks its tasks
//! hold, reached in one load (an initial-exec TLS slot: a lock's set and unset ask for it,
//! and a `thread_local!` of this library costs a `__tls_get_addr` call per access).

use std::cell::{Cell, RefCell};

use super::records::Records;
use super::{Frame, Held};

/// One thread's state of the checks. Touched only by its thread.
pub(super) struct ThreadChecks {
    /// The regions the thread is a member of, innermost last.
    pub(super) frames: RefCell<Vec<Frame>>,
    /// How many regions the thread is a member of: `frames`' length, kept apart so that a
    /// lock's set reads it without the `RefCell`'s borrow.
    pub(super) depth: Cell<usize>,
    /// The locks the thread's tasks set inside a region and have not unset.
    pub(super) held: RefCell<Vec<Held>>,
    /// The team this thread looked up last (a hot team is met region after region): found
    /// again without the lock of the teams' map.
    pub(super) last_team: Cell<Option<(usize, &'static Records)>>,
    /// The noted return address the checks took at the construct met last (see
    /// [`super::meet_caller`]).
    pub(super) taken: Cell<usize>,
}

oxiomp_instrument::thread_slot!(mod slot: *const ThreadChecks = "oxiomp_check_thread";);

/// Owns the calling thread's [`ThreadChecks`]: frees it, and empties the slot, when the
/// thread ends.
struct Owner(Cell<*const ThreadChecks>);

impl Drop for Owner {
    fn drop(&mut self) {
        let p = self.0.replace(std::ptr::null());
        if !p.is_null() {
            slot::set(std::ptr::null());
            // SAFETY: `p` came from `Box::into_raw` in `get` and was handed out only as a
            // shared reference to the thread's own code, none of which runs any more (this
            // is the thread's end; the slot is empty from here on).
            drop(unsafe { Box::from_raw(p as *mut ThreadChecks) });
        }
    }
}

thread_local! {
    static OWNER: Owner = const { Owner(Cell::new(std::ptr::null())) };
}

impl ThreadChecks {
    /// The calling thread's state (made at its first use), or `None` while the thread ends.
    #[inline]
    pub(super) fn get() -> Option<&'static ThreadChecks> {
        let p = slot::get();
        if p.is_null() {
            return Self::make();
        }
        // SAFETY: the slot holds the calling thread's own state, alive until its `Owner` is
        // dropped at the thread's end, which empties the slot first. The reference cannot
        // leave the thread (`ThreadChecks` is not `Sync`), and the thread's code that holds
        // one runs within an event, never in its thread-local destructors after `Owner`'s.
        Some(unsafe { &*p })
    }

    /// The calling thread's state if it was made (`None` also while the thread ends).
    #[inline(always)]
    pub(super) fn peek() -> Option<&'static ThreadChecks> {
        let p = slot::get();
        // SAFETY: as in `get`.
        (!p.is_null()).then(|| unsafe { &*p })
    }

    #[cold]
    fn make() -> Option<&'static ThreadChecks> {
        OWNER
            .try_with(|owner| {
                let fresh = Box::new(ThreadChecks {
                    frames: RefCell::new(Vec::new()),
                    depth: Cell::new(0),
                    held: RefCell::new(Vec::new()),
                    last_team: Cell::new(None),
                    taken: Cell::new(0),
                });
                let p = Box::into_raw(fresh) as *const ThreadChecks;
                owner.0.set(p);
                slot::set(p);
                // SAFETY: just made, owned by `OWNER` until the thread ends (see `get`).
                unsafe { &*p }
            })
            .ok()
    }
}
