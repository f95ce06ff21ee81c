//! What each thread keeps for worksharing: its place in the current dispatched loop, the
//! constructs its implicit task has met (for `single` and cancellation), its doacross loop,
//! and whether a loop or chunk is open (for the trace). Only the owning thread touches it
//! (through `Thread::ws_state`): plain `Cell`s.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use super::dispatch::Cursor;
use super::doacross::Doacross;

/// A thread's worksharing state.
pub(crate) struct ThreadState {
    /// `single` constructs this implicit task has encountered.
    singles: Cell<u32>,
    /// Position in the current dispatched loop: borrowed only by [`ThreadState::with_cursor`]
    /// (a `RefCell`, so that the loop's code gets it as `&mut`, which the compiler keeps in
    /// registers, at the cost of one flag check).
    cursor: RefCell<Cursor>,
    /// Whether a dynamic-for chunk state is open (for instrumentation).
    chunk_open: Cell<bool>,
    /// A dispatched loop is in progress (for its worksharing begin/end events).
    loop_open: Cell<bool>,
    /// Worksharing constructs (loops, sections) this implicit task has started.
    ws_count: Cell<u32>,
    /// Inside a `__kmpc_sections_init` / `__kmpc_end_sections` construct.
    sections_open: Cell<bool>,
    /// In a static loop that the program's code divides itself and ends through the
    /// dispatcher's leave (gcc's 5.0 loop start without a first chunk).
    static_open: Cell<bool>,
    /// Running a `single` block whose end the compiler's code does not mark (gcc's): it ends,
    /// for the trace and tools, where the thread next meets a barrier or worksharing
    /// construct, or its implicit task ends.
    single_open: Cell<bool>,
    /// The doacross loop the thread is in, with its number (taken while in use).
    doacross: Cell<Option<(u32, Arc<Doacross>)>>,
    /// The compiler layer's state of the construct the thread is in, with its number (see
    /// `worksharing::shared_join`).
    abi: Cell<Option<(u32, super::shared::SharedState)>>,
}

/// What a nested region saves of its encountering thread's worksharing state.
#[derive(Clone, Copy)]
pub(crate) struct Saved {
    singles: u32,
    cursor: Cursor,
    ws_count: u32,
    single_open: bool,
}

impl Default for ThreadState {
    fn default() -> Self {
        ThreadState {
            singles: Cell::new(0),
            cursor: RefCell::new(Cursor::default()),
            chunk_open: Cell::new(false),
            loop_open: Cell::new(false),
            ws_count: Cell::new(0),
            sections_open: Cell::new(false),
            static_open: Cell::new(false),
            single_open: Cell::new(false),
            doacross: Cell::new(None),
            abi: Cell::new(None),
        }
    }
}

impl ThreadState {
    /// A fresh state for the next thread a descriptor serves. `drop_old`: the doacross state
    /// is dropped (false: forgotten, in a fork's child).
    pub(crate) fn restart(&self, drop_old: bool) {
        let old = (self.doacross.take(), self.abi.take());
        if !drop_old {
            std::mem::forget(old);
        }
        self.begin_implicit();
        self.chunk_open.set(false);
        self.loop_open.set(false);
        self.sections_open.set(false);
        self.static_open.set(false);
    }

    /// A new implicit task: its construct counters begin at zero.
    #[inline]
    pub(crate) fn begin_implicit(&self) {
        self.singles.set(0);
        *self.cursor.borrow_mut() = Cursor::default();
        self.ws_count.set(0);
        self.single_open.set(false);
    }

    #[inline]
    pub(crate) fn save(&self) -> Saved {
        Saved {
            singles: self.singles.get(),
            cursor: *self.cursor.borrow(),
            ws_count: self.ws_count.get(),
            single_open: self.single_open.get(),
        }
    }

    #[inline]
    pub(crate) fn restore(&self, s: Saved) {
        self.singles.set(s.singles);
        *self.cursor.borrow_mut() = s.cursor;
        self.ws_count.set(s.ws_count);
        self.single_open.set(s.single_open);
    }

    /// Counts one more `single` construct; returns its number (from 1).
    #[inline]
    pub(crate) fn next_single(&self) -> u32 {
        let k = self.singles.get() + 1;
        self.singles.set(k);
        k
    }

    /// Counts one more loop or sections construct; returns its number (from 1).
    #[inline]
    pub(crate) fn next_construct(&self) -> u32 {
        let k = self.ws_count.get() + 1;
        self.ws_count.set(k);
        k
    }

    /// The number of the latest loop or sections construct (0: none yet).
    #[inline]
    pub(crate) fn constructs(&self) -> u32 {
        self.ws_count.get()
    }

    /// Runs `f` on the cursor of the current dispatched loop (`f` is the loop's own code,
    /// which does not come back here: a nested use would panic, never alias).
    #[inline]
    pub(crate) fn with_cursor<R>(&self, f: impl FnOnce(&mut Cursor) -> R) -> R {
        f(&mut self.cursor.borrow_mut())
    }

    #[inline]
    pub(crate) fn replace_chunk_open(&self, b: bool) -> bool {
        self.chunk_open.replace(b)
    }

    #[inline]
    pub(crate) fn replace_loop_open(&self, b: bool) -> bool {
        self.loop_open.replace(b)
    }

    #[inline]
    pub(crate) fn replace_static_open(&self, b: bool) -> bool {
        self.static_open.replace(b)
    }

    #[inline]
    pub(crate) fn replace_single_open(&self, b: bool) -> bool {
        self.single_open.replace(b)
    }

    #[inline]
    pub(crate) fn sections_open(&self) -> bool {
        self.sections_open.get()
    }

    #[inline]
    pub(crate) fn set_sections_open(&self, b: bool) {
        self.sections_open.set(b);
    }

    /// Enters doacross loop number `key`.
    #[inline]
    pub(crate) fn set_doacross(&self, key: u32, d: Arc<Doacross>) {
        self.doacross.set(Some((key, d)));
    }

    /// Runs `f` on the current doacross loop, if any.
    #[inline]
    pub(crate) fn with_doacross<R>(&self, f: impl FnOnce(&Doacross) -> R) -> Option<R> {
        let d = self.doacross.take();
        let r = d.as_ref().map(|(_, d)| f(d));
        self.doacross.set(d);
        r
    }

    /// Leaves the current doacross loop; returns its number.
    #[inline]
    pub(crate) fn take_doacross(&self) -> Option<u32> {
        self.doacross.take().map(|(k, _)| k)
    }

    /// Enters the compiler layer's state of construct number `key`, leaving the previous
    /// one's (returned with its number).
    #[inline]
    pub(crate) fn replace_abi(
        &self,
        key: u32,
        s: super::shared::SharedState,
    ) -> Option<(u32, super::shared::SharedState)> {
        self.abi.replace(Some((key, s)))
    }

    /// The compiler layer's state of the current construct, if any.
    #[inline]
    pub(crate) fn abi(&self) -> Option<super::shared::SharedState> {
        let s = self.abi.take();
        let r = s.as_ref().map(|(_, x)| x.clone());
        self.abi.set(s);
        r
    }

    /// Leaves the compiler layer's state of the current construct; returns its number.
    #[inline]
    pub(crate) fn take_abi(&self) -> Option<u32> {
        self.abi.take().map(|(k, _)| k)
    }
}
