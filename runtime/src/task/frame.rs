//! Where a task's code and the runtime's meet on a thread's stack: OMPT's `ompt_frame_t`
//! for each task, and the task that was running on the thread before it (its *scheduling
//! parent*), so that a tool or debugger can tell the runtime's frames from the program's and
//! walk the tasks a thread has suspended.
//!
//! A task's **exit frame** is the frame of the runtime procedure that called the task's code:
//! its frame pointer, stored by the procedure itself (`run::call_task`; the microtask invoker
//! of the `extern "C"` layer for implicit tasks), zero once the code has returned.
//! Its **enter frame** is a stack address inside the frame of the runtime entry the task's
//! code called and is now in (a parallel region's fork, a barrier, a taskwait ...), zero while
//! the code runs: the `extern "C"` layer sets it when an entry begins and clears it when the
//! entry returns. Every frame below the enter frame is the runtime's; every frame between an
//! exit frame and the next enter frame up is the program's.
//!
//! A task's frames (with its scheduling parent: `descriptor::ToolFrame`) are not in its block:
//! `Head::frame` points at them while the task runs or is suspended with frames kept (a tool is
//! attached: [`kept`]). An implicit task's are its team's (`team::descriptor::Implicit`), an
//! explicit task's on the stack of the runtime code running it (`run::call_traced`), an if(0)
//! task's kept by the `extern "C"` layer until its code returns. They are written by the thread
//! running the task; other threads read them only while the task is suspended beneath a region
//! they belong to (the fork that made the region wrote them before its threads started, and
//! clears them only after they joined).

use std::cell::Cell;

/// `ompt_frame_flag_t`: who owns the frame and what kind of address it is.
pub mod frame_flags {
    pub const RUNTIME: i32 = 0x00;
    pub const APPLICATION: i32 = 0x01;
    pub const CFA: i32 = 0x10;
    pub const FRAMEPOINTER: i32 = 0x20;
    pub const STACKADDRESS: i32 = 0x30;
}

/// A task's frames, laid out as `ompt_frame_t` (two 8-byte `ompt_data_t`, two `int` flags),
/// so a tool reads it in place.
#[repr(C)]
pub struct Frame {
    exit: Cell<usize>,
    enter: Cell<usize>,
    exit_flags: Cell<i32>,
    enter_flags: Cell<i32>,
}

/// A frame record's fields a debugger reads (`crate::debug::layout`).
pub(crate) const DEBUG_FIELDS: [crate::debug::layout::Field; 4] = [
    crate::debug_field!("frame.exit", Frame, exit),
    crate::debug_field!("frame.enter", Frame, enter),
    crate::debug_field!("frame.exit_flags", Frame, exit_flags),
    crate::debug_field!("frame.enter_flags", Frame, enter_flags),
];

impl Frame {
    pub const fn new() -> Frame {
        Frame { exit: Cell::new(0), enter: Cell::new(0), exit_flags: Cell::new(0), enter_flags: Cell::new(0) }
    }

    /// The exit frame (0: none).
    #[inline]
    pub fn exit(&self) -> usize {
        self.exit.get()
    }

    /// The enter frame (0: none).
    #[inline]
    pub fn enter(&self) -> usize {
        self.enter.get()
    }

    /// The word a procedure calling the task's code stores its frame pointer in.
    #[inline]
    pub fn exit_slot(&self) -> *mut usize {
        self.exit.as_ptr()
    }

    #[inline]
    fn set_exit(&self, addr: usize, flags: i32) {
        self.exit.set(addr);
        self.exit_flags.set(flags);
    }

    #[inline]
    fn set_enter(&self, addr: usize, flags: i32) {
        self.enter.set(addr);
        self.enter_flags.set(flags);
    }

    /// The task's code is about to be called by a runtime procedure that stores its frame
    /// pointer in [`exit_slot`](Self::exit_slot): no enter frame, the exit frame a frame
    /// pointer (written by that procedure).
    #[inline]
    pub fn code_begins(&self) {
        self.left();
        self.exit_flags.set(frame_flags::RUNTIME | frame_flags::FRAMEPOINTER);
    }

    /// The task's code returned to the runtime for good.
    #[inline]
    pub fn code_ended(&self) {
        self.set_exit(0, 0);
    }

    /// The task's code is called by the program itself, from its frame with frame pointer
    /// `fp` (an if(0) task, the implicit task of a serialized region).
    #[inline]
    pub fn code_begins_at(&self, fp: usize) {
        self.left();
        self.set_exit(fp, frame_flags::APPLICATION | frame_flags::FRAMEPOINTER);
    }

    /// The task's code, in its frame with frame pointer `fp`, called a runtime entry that
    /// begins a task the program then calls itself ([`code_begins_at`](Self::code_begins_at)).
    #[inline]
    pub fn entered_from(&self, fp: usize) {
        self.set_enter(fp, frame_flags::APPLICATION | frame_flags::FRAMEPOINTER);
    }

    /// The task's code called the runtime entry whose frame holds stack address `addr`.
    #[inline]
    pub fn entered(&self, addr: usize) {
        self.set_enter(addr, frame_flags::RUNTIME | frame_flags::STACKADDRESS);
    }

    /// The runtime entry returns to the task's code.
    #[inline]
    pub fn left(&self) {
        self.set_enter(0, 0);
    }

    /// The address a tool is given (`ompt_frame_t *`).
    #[inline]
    pub fn as_ptr(&self) -> *const Frame {
        self
    }
}

impl Default for Frame {
    fn default() -> Self {
        Frame::new()
    }
}

/// Whether frames are kept (a tool is attached, or a debugger may read them).
#[inline(always)]
pub fn kept() -> bool {
    oxiomp_instrument::frames_wanted()
}
