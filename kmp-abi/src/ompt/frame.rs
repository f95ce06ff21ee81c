//! The frames a tool is shown (`ompt_frame_t`, kept in each task: `oxiomp_runtime::task::frame`)
//! where the program's code and this library's meet: each entry through which a task's code
//! calls into the runtime and may be suspended or see a callback (a fork, a barrier, a
//! taskwait, a task's creation ...) marks the calling task's enter frame while it runs
//! ([`enter`]); an implicit task's exit frame is the microtask invoker's frame pointer
//! ([`exit_slot`]); an if(0) task and a serialized region, whose code the program calls
//! itself between two entries, get the frame of the program's function that calls them (the
//! frame pointer it had when it called the entry that begins them: [`with_caller_frame`]).
//!
//! With no tool attached each of these is one load and branch.

use oxiomp_runtime::Thread;
use oxiomp_runtime::task::descriptor::{Kind, ToolFrame};
use oxiomp_runtime::task::frame::Frame;
use oxiomp_runtime::task::{self, Task, frame};

std::thread_local! {
    /// The frames given for a task that has none kept (zero: unknown).
    static NO_FRAME: Frame = const { Frame::new() };
}

/// The frames of task `t` for a tool (`ompt_frame_t *`).
pub(crate) fn of(t: &Task) -> *const Frame {
    match t.tool_frame() {
        Some(f) => f.frame.as_ptr(),
        None => NO_FRAME.with(|f| f as *const Frame),
    }
}

/// The mark of an entry a task's code called: while it lives, the task's enter frame is a
/// stack address of the entry's frame. Dropping it, as the entry returns, clears it.
#[must_use]
pub(crate) struct Entered(Option<&'static Task>);

/// Marks the calling thread's current task as having entered the runtime through the entry
/// this is inlined into (the outermost entry counts: one called by another leaves the mark).
#[inline(always)]
pub(crate) fn enter(th: Thread) -> Entered {
    if !frame::kept() {
        return Entered(None);
    }
    enter_at(th, here())
}

/// [`enter`] for an entry a thread the runtime does not know may call (which is marked by
/// nothing).
#[inline(always)]
pub(crate) fn enter_if_known() -> Entered {
    match Thread::peek() {
        Some(th) => enter(th),
        None => Entered(None),
    }
}

#[cold]
#[inline(never)]
fn enter_at(th: Thread, addr: usize) -> Entered {
    let t = task::current(th);
    match t.tool_frame() {
        Some(f) if f.frame.enter() == 0 => f.frame.entered(addr),
        _ => return Entered(None),
    }
    Entered(Some(t))
}

impl Drop for Entered {
    #[inline]
    fn drop(&mut self) {
        if let Some(f) = self.0.and_then(Task::tool_frame) {
            f.frame.left();
        }
    }
}

/// Where the microtask invoker stores the exit frame of the implicit task the calling thread
/// is about to run (null when frames are not kept).
#[inline(always)]
pub(crate) fn exit_slot() -> *mut usize {
    if !frame::kept() {
        return std::ptr::null_mut();
    }
    implicit_code_begins()
}

#[cold]
#[inline(never)]
fn implicit_code_begins() -> *mut usize {
    // An implicit task's frames are its team's: always there.
    let Some(f) = task::current(Thread::current()).tool_frame() else { return std::ptr::null_mut() };
    f.frame.code_begins();
    f.frame.exit_slot()
}

/// The implicit task whose exit frame was at `slot` ([`exit_slot`]) has returned from its code.
#[inline(always)]
pub(crate) fn implicit_code_ended(slot: *mut usize) {
    if !slot.is_null()
        && let Some(f) = task::current(Thread::current()).tool_frame()
    {
        f.frame.code_ended();
    }
}

/// An entry that begins a task whose code the program calls itself (an if(0) task, the
/// implicit task of a serialized region) is about to begin it, called from the program's frame
/// with frame pointer `fp`: the calling thread's current task (returned) stays entered there
/// until [`code_returned`].
#[cold]
#[inline(never)]
pub(crate) fn program_will_call(th: Thread, fp: usize) -> &'static Task {
    let parent = task::current(th);
    if let Some(f) = parent.tool_frame() {
        f.frame.entered_from(fp);
    }
    parent
}

/// The entry of [`program_will_call`] began `child`, whose code the program calls from its
/// frame `fp`. An implicit task's frames are its team's; an if(0) task's are kept here, on the
/// heap, until [`code_returned`].
#[cold]
#[inline(never)]
pub(crate) fn program_calls(parent: &Task, child: &Task, fp: usize) {
    let f = match child.tool_frame() {
        Some(f) => f,
        None => {
            let f = Box::into_raw(Box::new(ToolFrame::new()));
            child.head.frame.set(f);
            // SAFETY: just allocated, freed only by `code_returned`.
            unsafe { &*f }
        }
    };
    f.scheduled_after(parent);
    f.frame.code_begins_at(fp);
}

/// The code of a task begun by [`program_calls`] returned: its parent's code goes on.
#[cold]
#[inline(never)]
pub(crate) fn code_returned(parent: &Task, child: &Task) {
    if let Some(f) = child.tool_frame() {
        f.frame.code_ended();
    }
    if child.head.kind != Kind::Implicit {
        let f = child.head.frame.replace(std::ptr::null());
        if !f.is_null() {
            // SAFETY: an explicit task's frames come from `program_calls`'s `Box::into_raw`;
            // no one holds their address any more (the task's pointer is cleared).
            drop(unsafe { Box::from_raw(f as *mut ToolFrame) });
        }
    }
    if let Some(f) = parent.tool_frame() {
        f.frame.left();
    }
}

/// [`code_returned`] for if(0) task `t`.
#[cold]
#[inline(never)]
pub(crate) fn if0_returned(t: &Task) {
    // SAFETY: an if(0) task's generating task is suspended beneath it, alive.
    if let Some(parent) = unsafe { t.head.parent.as_ref() } {
        code_returned(parent, t);
    }
}

/// A stack address of the frame of the entry this is inlined into (a byte of it: the slot
/// belongs to that frame for as long as the entry runs).
#[inline(always)]
pub(crate) fn here() -> usize {
    let mark = 0u8;
    std::hint::black_box(&mark) as *const u8 as usize
}

/// Defines `extern "C" fn name(args)` as a jump to `target(args, fp)`, `fp` being the
/// caller's frame pointer (rbp, untouched on entry to a function without a prologue), passed
/// in `reg`, the register of the argument after `args`: what `__builtin_frame_address(1)`
/// gives in libomp's entries, and in the code the program then calls itself.
macro_rules! with_caller_frame {
    ($(#[$m:meta])* $name:ident($($a:ident: $t:ty),*) => $target:path, $reg:literal) => {
        $(#[$m])*
        #[unsafe(naked)]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name($($a: $t),*) {
            // The call frame information says what holds at entry (the return address at the
            // stack pointer), so that an unwinder stopping here finds the caller.
            core::arch::naked_asm!(
                ".cfi_startproc",
                concat!("mov ", $reg, ", rbp"),
                "jmp {target}",
                ".cfi_endproc",
                target = sym $target
            )
        }
    };
}
pub(crate) use with_caller_frame;
