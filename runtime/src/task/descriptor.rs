//! The task descriptor: the runtime's header, with clang's `kmp_task_t` right behind it in the
//! same allocation, and the life of a task from allocation to release.
//!
//! ```text
//! [ Task (HEADER bytes) | kmp_task_t: shareds, routine, part_id, data1, data2 | privates | shareds ]
//!   ^ runtime             ^ what __kmpc_omp_task_alloc returns (16-byte aligned)
//! ```
//!
//! # Counts
//! * `created` / `completed`: the children counted so far (written by the thread running the
//!   task) and those complete (by whoever completes one): `taskwait` waits until they are
//!   equal. A child its creator runs at once is counted only if it ends with children left.
//! * `spawned` / `retired`: for barriers, the children counted for retirement and those
//!   retired (complete with all their descendants; `sync/retire.rs`).
//! * `refs`: holders of the memory: 1 until the task completes, plus 1 per child not yet freed
//!   (a child reads its parent when it completes), plus 1 per dependence-map slot naming it.
//!   The holder that drops it to 0 frees the block and drops its reference on the parent.
//! * `parts`: schedulings not yet finished: `__kmpc_omp_task` sets it to 1 and the end of the
//!   execution takes it back to 0, which completes the task. An untied task's later parts run
//!   in the same execution (`rerun_here`); only an untied if(0) task adds one per part, run
//!   nested.

use std::cell::{Cell, UnsafeCell};
use std::ffi::c_void;
use std::ptr::NonNull;

use super::cache::{self, Block, BlockCache, ClassCache};
use super::deps::DepMap;
use super::group::TaskGroup;
use crate::icv::IcvSave;
use crate::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use crate::sync::release::DepRelease;
use crate::sync::retire::{self, Retiring};
use crate::team::descriptor::Team;

/// The task's entry: `routine(gtid, task)`.
pub type Routine = unsafe extern "C" fn(i32, *mut KmpTask) -> i32;

/// clang's `kmp_task_t` (40 bytes; privates follow).
#[repr(C)]
pub struct KmpTask {
    pub shareds: *mut c_void,
    pub routine: Option<Routine>,
    pub part_id: i32,
    /// The destructors thunk when flag `DESTRUCTORS` is set.
    pub data1: usize,
    /// The priority (as i32) when flag `PRIORITY` is set.
    pub data2: usize,
}

/// A taskloop task's header: `kmp_task_t` then the loop bounds clang reads.
#[repr(C)]
pub struct KmpTaskloop {
    pub task: KmpTask,
    pub lb: u64,
    pub ub: u64,
    pub st: i64,
    pub liter: i32,
    pub reductions: *mut c_void,
}

/// The compiler-owned flag bits of `__kmpc_omp_task_alloc`.
pub mod flags {
    pub const TIED: u32 = 0x01;
    pub const FINAL: u32 = 0x02;
    pub const DESTRUCTORS: u32 = 0x08;
    pub const PROXY: u32 = 0x10;
    pub const PRIORITY: u32 = 0x20;
    pub const DETACHABLE: u32 = 0x40;
    /// The runtime's own bit (above the compiler's 16): a taskloop chunk whose bounds lie in
    /// the `KmpTaskloop` header, told to a tool as a chunk when it starts.
    pub const TASKLOOP_CHUNK: u32 = 0x1_0000;
    /// The runtime's own bit: the routine is a trampoline (a gcc task's) that calls the
    /// program's function whose address is the word right after the `kmp_task_t`, which
    /// [`Task::routine_addr`](super::Task::routine_addr) names instead.
    pub const CALLS_NEXT_WORD: u32 = 0x2_0000;
}

/// The bits of `Task::is_final`.
pub mod final_bits {
    /// The task is final: `omp_in_final` is true in it, and the tasks it generates are
    /// included.
    pub const FINAL: u32 = 0x1;
    /// The task was generated in a final task: included, run at once by its creator.
    pub const INCLUDED: u32 = 0x2;
}

/// What kind of node a `Task` is.
#[repr(u32)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// The implicit task of a team member (lives in the team, never freed).
    Implicit = 0,
    /// A task the program created.
    Explicit = 1,
    /// A dependence join point: completes when its predecessors have.
    Join = 2,
    /// A `taskwait depend(...)`: the waiting thread watches its predecessor count.
    Waiter = 3,
}

/// The life of a task, for debuggers and checks.
#[repr(u32)]
pub enum State {
    Created = 0,
    Queued = 1,
    Running = 2,
    Complete = 3,
}

/// Detach events: the body's end and the fulfilment each set one bit; both complete the task.
pub(crate) const EVENT_BODY_DONE: u32 = 1;
pub(crate) const EVENT_FULFILLED: u32 = 2;

/// The runtime's task descriptor, in three parts: [`Head`], written whole for every new task
/// (the debugger-visible fields first); [`Rest`], the fields a block on a cache's free list
/// holds at the values a new task starts with; and the ICV slot, empty at rest.
#[repr(C)]
pub struct Task {
    pub head: Head,
    pub(crate) rest: Rest,
    /// The task's data-environment ICVs: a copy of its generating task's, taken when the task
    /// is queued; empty for a task its creator runs at once (it borrows the thread's ICVs,
    /// which are the generating task's). An if(0) task uses the slot to save the generating
    /// task's ICVs if its body changes them (`begin_if0`). Implicit tasks keep theirs in the
    /// thread's state. Touched only by the thread that creates or runs the task. Empty at
    /// rest; its contents are left uninitialised when empty (a new task does not write them).
    pub(crate) icvs: IcvSave,
}

/// The task descriptor's fields a debugger reads (`crate::debug::layout`); `task.routine` is
/// the routine pointer of an explicit task's `kmp_task_t`, after the header.
pub(crate) const DEBUG_FIELDS: [crate::debug::layout::Field; 14] = [
    crate::debug_field!("task.kind", Task, head.kind),
    crate::debug_field!("task.flags", Task, head.flags),
    crate::debug_field!("task.state", Task, head.state),
    crate::debug_field!("task.id", Task, head.id),
    crate::debug_field!("task.parent", Task, head.parent),
    crate::debug_field!("task.root", Task, head.root),
    crate::debug_field!("task.team", Task, head.team),
    crate::debug_field!("task.depth", Task, head.depth),
    crate::debug_field!("task.final", Task, head.is_final),
    crate::debug_field!("task.frame", Task, head.frame),
    crate::debug_field!("task.tool", Task, head.tool),
    crate::debug::layout::Field::new(
        "task.routine",
        HEADER + std::mem::size_of::<usize>(),
        std::mem::size_of::<usize>(),
    ),
    crate::debug_field!("toolframe.frame", ToolFrame, frame),
    crate::debug_field!("toolframe.scheduler", ToolFrame, scheduler),
];

/// What a tool or debugger reads of a task that is running or suspended on a thread: kept
/// outside the task's block, where the code running the task has it (`Head::frame`).
#[repr(C)]
pub struct ToolFrame {
    pub frame: super::frame::Frame,
    /// The task the thread ran before this one started there (null: see
    /// `Task::scheduling_parent`).
    scheduler: Cell<*const Task>,
}

impl ToolFrame {
    pub const fn new() -> ToolFrame {
        ToolFrame { frame: super::frame::Frame::new(), scheduler: Cell::new(std::ptr::null()) }
    }

    /// The task begins (or goes on, a later part) on this thread, after `prev`.
    #[inline]
    pub fn scheduled_after(&self, prev: *const Task) {
        self.scheduler.set(prev);
    }

    /// The task recorded by [`scheduled_after`](Self::scheduled_after).
    #[inline]
    pub(crate) fn scheduler(&self) -> *const Task {
        self.scheduler.get()
    }
}

impl Default for ToolFrame {
    fn default() -> Self {
        ToolFrame::new()
    }
}

/// What differs from task to task: written whole for each new task ([`Head::new`]).
#[repr(C)]
pub struct Head {
    pub kind: Kind,
    /// `kmp_tasking_flags_t` low bits as the compiler passed them.
    pub flags: u32,
    pub state: AtomicU32,
    /// The task's priority (0 unless clang set the flag; fixed when the task is submitted).
    pub priority: Cell<i32>,
    /// A process-unique number (0 for implicit tasks): the creating thread's gtid in bits 40
    /// and up, its count of tasks below (unique until one thread has created 2^40 tasks).
    pub id: u64,
    /// The task's number in the trace (0: not traced).
    pub trace_id: u32,
    /// Allocation size in bytes (0: not heap-allocated; at most `u32::MAX`, see [`alloc`]).
    pub size: u32,
    /// The generating task (null for implicit tasks).
    pub parent: *const Task,
    /// The implicit task this task descends from (itself for an implicit task).
    pub root: *const Task,
    /// The team whose threads run the task.
    pub team: *const Team,
    /// The taskgroup the task was generated in (counted there), or null.
    pub group: *const TaskGroup,
    /// Nesting depth: implicit tasks 0, their children 1, ...
    pub depth: u32,
    /// Finality, two bits: `final_bits::FINAL`, the task is final (its `final` clause held, or
    /// it was generated in a final task); `final_bits::INCLUDED`, it was generated in a final
    /// task, so it is included (its creator runs it at once).
    pub is_final: u32,
    /// The task's frames and scheduling parent while it runs or is suspended with frames
    /// kept (a tool is attached: `frame.rs`), else null. Written by the thread running the
    /// task: an implicit task's point at its team's, an explicit task's at the frame of the
    /// runtime code running it, an if(0) task's at what the `extern "C"` layer keeps.
    pub frame: Cell<*const ToolFrame>,
    /// The innermost taskgroup open in this task (starts as `group`). Touched only by the
    /// thread executing the task.
    pub(crate) cur_group: Cell<*const TaskGroup>,
    /// A tool's word for the task (OMPT's task data: see `crate::tool`).
    pub tool: crate::tool::ToolData,
}

/// What a free block rests with: the fields that hold, on a cache's free list, the values a
/// new task starts with ([`Rest::new`]), so that a task allocated from the list writes only its
/// [`Head`] (slab allocation with objects kept in their constructed state). A task's life
/// leaves them as it found them when it ends the common way (run at once and retired quietly,
/// see `retire_quietly`), but for one such an end changes and [`free_unshared`] puts back
/// (`parts`; an if(0) task's `if0` and `outer_save` are put back by `complete_if0`); the other
/// freeing path, [`release_ref_from`], writes them all.
#[repr(C)]
pub(crate) struct Rest {
    /// The block cache class the memory goes back to (null: the system allocator).
    pub(crate) home: *const ClassCache,
    /// Children generated so far (counted ones: not if0). Written only by the thread running
    /// the task (Relaxed load + store, no read-modify-write).
    pub(crate) created: AtomicU32,
    /// Children generated so far that count for retirement: `created` plus undeferred ones
    /// (taskloop chunks run in place, from their start; if0 tasks and tasks run at once, at
    /// their end) that had children of their own. Owner-written.
    pub(crate) spawned: AtomicU32,
    /// How the task is counted in its parent (`Counted`).
    pub(crate) counted: Cell<Counted>,
    /// Whether the task holds a reference on its parent (see [`hold_ancestors`]).
    pub(crate) parent_ref: Cell<bool>,
    /// Whether the task ever entered a dependence map (only those can have dependants).
    pub(crate) dep_tracked: AtomicBool,
    /// Whether the task runs as an if(0) task (`begin_if0`): all its parts run on its
    /// creator's stack, on borrowed ICVs, and `icvs` is the creator's save slot.
    pub(crate) if0: Cell<bool>,
    pub(crate) refs: AtomicU32,
    pub(crate) parts: AtomicU32,
    /// Detach state (bits `EVENT_*`).
    pub(crate) event: AtomicU32,
    /// What the task waits for among its siblings, and its dependants (`sync/release.rs`).
    pub(crate) dep: DepRelease<NonNull<Task>>,
    /// The dependence map of this task's children (created on first use). Only the thread
    /// executing the task touches it.
    pub(crate) child_deps: UnsafeCell<Option<Box<DepMap>>>,
    /// An if(0) task: the thread's `icv_save` when it began, restored at its end.
    pub(crate) outer_save: Cell<*const IcvSave>,
    /// mutexinoutset locks the task holds while it runs (sorted), if any.
    pub(crate) mutexes: UnsafeCell<Option<Box<[std::sync::Arc<super::deps::MutexSlot>]>>>,
    /// Children completed, incremented by whoever completes one (`taskwait` waits until it
    /// equals `created`). Last, away from `created`'s cache line.
    pub(crate) completed: AtomicU32,
    /// Children retired (complete with all their descendants), modulo 2^31, and bit
    /// `SELF_DONE` once this task itself has completed. Barriers wait until an implicit task's
    /// count equals `spawned`; see `sync/retire.rs` and README.md.
    pub(crate) retired: AtomicU32,
}

/// How a task is counted in its parent.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Counted {
    /// Not yet: a task its creator runs at once (the cut-off, if(0)), or a block that never
    /// runs (a taskloop pattern, dependence nodes). Such a task completes on its creator's
    /// thread, where its parent is suspended beneath it, so it is counted only if it ends with
    /// children outstanding: then, for retirement (`uncount`). While it runs, nothing can
    /// tell: its parent neither completes nor waits for its tree meanwhile.
    Lazy,
    /// Only for retirement (`spawned`): a taskloop chunk run in place (from its start), a
    /// task run at once that ended with children left (from its end); both complete before
    /// their parent goes on.
    Retire,
    /// As a child (`created`, taskgroup) and for retirement.
    Full,
}

/// Adds one to an owner-written counter (only the thread running the task writes it).
#[inline]
pub(crate) fn bump(c: &AtomicU32, delta: u32) {
    c.store(c.load(Ordering::Relaxed).wrapping_add(delta), Ordering::Relaxed);
}

/// A task is a node of its implicit task's retirement tree (`sync/retire.rs`).
impl Retiring for Task {
    #[inline]
    fn spawned(&self) -> &AtomicU32 {
        &self.rest.spawned
    }
    #[inline]
    fn retired(&self) -> &AtomicU32 {
        &self.rest.retired
    }
    #[inline]
    fn parent(&self) -> Option<&Task> {
        // SAFETY: null for implicit tasks; an explicit task holds a reference on its parent
        // until it is freed (or its parent is suspended beneath it, or implicit and alive in
        // the team), and a retiring task is kept alive by the child (or the completion) that
        // retires it.
        unsafe { self.head.parent.as_ref() }
    }
    #[inline]
    fn is_root(&self) -> bool {
        self.head.kind == Kind::Implicit
    }
}

/// Bytes reserved for the header: `kmp_task_t` starts 16-byte aligned after it.
pub(crate) const HEADER: usize = (std::mem::size_of::<Task>() + 15) & !15;

impl Head {
    /// The head of a new task of `kind`: a child of `parent` (inheriting its root, depth,
    /// finality and open taskgroup), or with no parent (an implicit task, a dependence node),
    /// with what it gets besides (`c`).
    #[inline(always)]
    fn new(kind: Kind, parent: Option<&Task>, c: ChildHead) -> Head {
        let (parent, root, group, depth) = match parent {
            Some(p) => (p as *const Task, p.head.root, p.head.cur_group.get(), p.head.depth + 1),
            None => (std::ptr::null(), std::ptr::null(), std::ptr::null(), 0),
        };
        Head {
            kind,
            flags: c.flags,
            state: AtomicU32::new(State::Created as u32),
            priority: Cell::new(c.priority),
            id: c.id,
            trace_id: c.trace_id,
            parent,
            root,
            team: c.team,
            group,
            depth,
            is_final: c.is_final,
            size: c.size,
            frame: Cell::new(std::ptr::null()),
            cur_group: Cell::new(group),
            tool: crate::tool::ToolData::new(),
        }
    }
}

impl Rest {
    /// The fields at rest, the block's memory going back to `home`.
    #[inline(always)]
    fn new(home: *const ClassCache) -> Rest {
        Rest {
            home,
            created: AtomicU32::new(0),
            spawned: AtomicU32::new(0),
            counted: Cell::new(Counted::Lazy),
            parent_ref: Cell::new(false),
            dep_tracked: AtomicBool::new(false),
            refs: AtomicU32::new(1),
            parts: AtomicU32::new(0),
            event: AtomicU32::new(0),
            dep: DepRelease::new(),
            child_deps: UnsafeCell::new(None),
            outer_save: Cell::new(std::ptr::null()),
            if0: Cell::new(false),
            mutexes: UnsafeCell::new(None),
            completed: AtomicU32::new(0),
            retired: AtomicU32::new(0),
        }
    }

    /// Whether every field holds its value of [`Rest::new`]`(home)`. The block is not in use
    /// (nobody else touches it).
    fn is_at_rest(&self, home: *const ClassCache) -> bool {
        // Every field named (no `..`): a new field must be added here too.
        let Rest {
            home: h,
            created,
            spawned,
            counted,
            parent_ref,
            dep_tracked,
            refs,
            parts,
            event,
            dep,
            child_deps,
            outer_save,
            if0,
            mutexes,
            completed,
            retired,
        } = self;
        std::ptr::eq(*h, home)
            && created.load(Ordering::Relaxed) == 0
            && spawned.load(Ordering::Relaxed) == 0
            && counted.get() == Counted::Lazy
            && !parent_ref.get()
            && !dep_tracked.load(Ordering::Relaxed)
            && refs.load(Ordering::Relaxed) == 1
            && parts.load(Ordering::Relaxed) == 0
            && event.load(Ordering::Relaxed) == 0
            && dep.is_new()
            // SAFETY: the block is not in use: nobody else touches these.
            && unsafe { (*child_deps.get()).is_none() }
            && outer_save.get().is_null()
            && !if0.get()
            // SAFETY: as above.
            && unsafe { (*mutexes.get()).is_none() }
            && completed.load(Ordering::Relaxed) == 0
            && retired.load(Ordering::Relaxed) == 0
    }
}

impl Task {
    fn blank(kind: Kind) -> Task {
        Task {
            head: Head::new(kind, None, ChildHead::NONE),
            rest: Rest::new(std::ptr::null()),
            icvs: IcvSave::new(),
        }
    }

    /// Writes the header of a new explicit task, a child of `parent`, at the start of `block`:
    /// its [`Head`], and the rest at rest ([`Task::write_rest`]). The parts are written in
    /// place: building a `Task` value and moving it there would cost a second pass over its 300
    /// bytes (and the ICV slot's uninitialised bytes would be copied on the way).
    ///
    /// # Safety
    /// `block.ptr` is valid for writes of `HEADER` bytes, 16-aligned, and not in use.
    #[inline]
    unsafe fn write_child(block: Block, parent: &Task, head: ChildHead) -> &'static Task {
        let p = block.ptr as *mut Task;
        // SAFETY: per the contract.
        unsafe {
            Task::write_rest(p, block.home);
            Task::write_fresh(p, parent, head)
        }
    }

    /// Writes the [`Head`] of a new task, a child of `parent`, in a block whose other fields
    /// are at rest (see [`Rest`]): a block from a cache's free list.
    ///
    /// # Safety
    /// `p` is valid for writes of `HEADER` bytes, 16-aligned, not in use, and at rest (or put
    /// at rest by the caller next).
    #[inline]
    unsafe fn write_fresh(p: *mut Task, parent: &Task, head: ChildHead) -> &'static Task {
        // SAFETY: per the contract, the head lies inside the block; the write does not read or
        // drop the old contents (plain data).
        unsafe {
            std::ptr::addr_of_mut!((*p).head).write(Head::new(Kind::Explicit, Some(parent), head));
            &*p
        }
    }

    /// Puts the header at `p` at rest: [`Rest::new`]`(home)` and an empty ICV slot (whose
    /// contents are not written).
    ///
    /// # Safety
    /// `p` is valid for writes of `HEADER` bytes, 16-aligned, not in use, and its fields own
    /// nothing (never initialised, or dropped).
    #[inline]
    unsafe fn write_rest(p: *mut Task, home: *const ClassCache) {
        // SAFETY: per the contract, the parts lie inside the block; the writes do not read or
        // drop the old contents.
        unsafe {
            std::ptr::addr_of_mut!((*p).rest).write(Rest::new(home));
            IcvSave::init_empty(std::ptr::addr_of_mut!((*p).icvs));
        }
    }

    /// Whether the header is at rest (see [`Rest`]), `home` being its cache: what a block
    /// taken from a free list must satisfy. For tests and debug builds.
    pub(crate) fn is_at_rest(&self, home: *const ClassCache) -> bool {
        self.rest.is_at_rest(home) && !self.icvs.is_full()
    }

    /// An implicit task for a team member.
    pub(crate) fn implicit() -> Task {
        Task::blank(Kind::Implicit)
    }

    /// Resets an implicit task for a new region of `team`. The task is idle (no children, no
    /// open taskgroup): its previous region ended with all tasks complete.
    ///
    /// Each field is stored only when it changed: the task of a member that created no task
    /// keeps its line clean, valid in the caches of the threads that read it.
    pub(crate) fn reset_implicit(&mut self, team: *const Team) {
        use crate::team::descriptor::set;
        set(&mut self.head.team, team);
        let me: *const Task = self;
        set(&mut self.head.root, me);
        set(self.rest.created.get_mut(), 0);
        set(self.rest.spawned.get_mut(), 0);
        set(self.rest.completed.get_mut(), 0);
        set(self.rest.retired.get_mut(), 0);
        set(self.head.cur_group.get_mut(), std::ptr::null());
        if self.rest.child_deps.get_mut().is_some() {
            *self.rest.child_deps.get_mut() = None;
        }
    }

    /// The task a thread left to run this one (its scheduling parent), while this one runs
    /// or is suspended: for an explicit task the task it was started after (its generating
    /// task when nothing recorded one: no tool was attached), for an implicit task the task
    /// that encountered its region (null for an initial task; for the implicit task of a
    /// league team, the league member's implicit task, the team's initial task to a tool).
    pub fn scheduling_parent(&self) -> *const Task {
        if self.head.kind == Kind::Implicit {
            // SAFETY: an implicit task's team is alive while the task runs or is suspended.
            let team = unsafe { &*self.head.team };
            let initial = team.league_initial();
            return if initial.is_null() { team.encountering } else { initial };
        }
        match self.tool_frame().map(ToolFrame::scheduler) {
            Some(s) if !s.is_null() => s,
            _ => self.head.parent,
        }
    }

    /// The task's frames, while it runs or is suspended with frames kept (see `Head::frame`).
    #[inline]
    pub fn tool_frame(&self) -> Option<&ToolFrame> {
        // SAFETY: a non-null pointer is set by the code running the task, to a frame that
        // outlives its use: it is reset before that frame goes (see `Head::frame`).
        unsafe { self.head.frame.get().as_ref() }
    }

    /// The `kmp_task_t` behind an explicit task's header.
    #[inline]
    pub fn kmp(&self) -> *mut KmpTask {
        (self as *const Task as *mut u8).wrapping_add(HEADER) as *mut KmpTask
    }

    /// The address of the program's code an explicit task runs (0 for other tasks), for a
    /// report: its routine, or the function its trampoline calls ([`flags::CALLS_NEXT_WORD`]).
    pub fn routine_addr(&self) -> usize {
        if self.head.kind != Kind::Explicit {
            return 0;
        }
        if self.head.flags & flags::CALLS_NEXT_WORD != 0 {
            // SAFETY: a task with this flag was allocated with the function's address in the
            // word after its `kmp_task_t`, written before the task was handed to the runtime.
            return unsafe { *(self.kmp().add(1) as *const usize) };
        }
        // SAFETY: an explicit task's block holds its `kmp_task_t` after the header, whose
        // routine clang wrote before the task was handed to the runtime.
        unsafe { (*self.kmp()).routine.map_or(0, |r| r as usize) }
    }

    /// The header of the task whose `kmp_task_t` is at `kt`.
    ///
    /// # Safety
    /// `kt` was returned by [`alloc`] and the task is not freed.
    #[inline]
    pub unsafe fn from_kmp<'a>(kt: *const KmpTask) -> &'a Task {
        // SAFETY: per the contract, the header sits HEADER bytes before, in the same block.
        unsafe { &*((kt as *const u8).sub(HEADER) as *const Task) }
    }

    /// The task an event handle names (see `descriptor::completion_event`), or None for null.
    ///
    /// # Safety
    /// `ev` is null or a handle `completion_event` gave for a task whose event has not been
    /// fulfilled yet: such a task stays allocated until both its body has finished and its
    /// event is fulfilled.
    pub unsafe fn from_event<'a>(ev: *mut std::ffi::c_void) -> Option<&'a Task> {
        // SAFETY: per the contract.
        unsafe { (ev as *const Task).as_ref() }
    }

    pub fn is_tied(&self) -> bool {
        self.head.flags & flags::TIED != 0
    }

    pub fn is_explicit(&self) -> bool {
        self.head.kind == Kind::Explicit
    }

    pub(crate) fn team(&self) -> &Team {
        // SAFETY: a task's team outlives it: the region's end waits for all its tasks.
        unsafe { &*self.head.team }
    }

    /// Whether every child generated so far has completed. Acquire: pairs with the
    /// completers' AcqRel increments (their effects are visible to the waiter).
    #[inline]
    pub(crate) fn children_done(&self) -> bool {
        self.rest.completed.load(Ordering::Acquire) == self.rest.created.load(Ordering::Relaxed)
    }

    /// Implicit tasks: whether every descendant has completed (every child retired).
    /// Acquire: pairs with the retirers' SeqCst updates (`sync/retire.rs`).
    #[inline]
    pub(crate) fn descendants_done(&self) -> bool {
        retire::tree_done(self)
    }

    /// Whether the task carries its own copy of the ICVs (an if(0) task's slot holds its
    /// creator's, saved for its end: not its own).
    #[inline]
    pub(crate) fn has_icvs(&self) -> bool {
        self.icvs.is_full() && !self.rest.if0.get()
    }

    /// Whether `self` descends from the task at address `anc`, of depth `depth`, by addresses
    /// alone (`anc` need not be alive: a parked thread's anchor as a waker last saw it).
    pub(crate) fn descends_from_addr(&self, anc: usize, depth: u32) -> bool {
        let mut p = self.head.parent;
        // SAFETY: each ancestor is kept alive by the reference its child holds.
        while let Some(t) = unsafe { p.as_ref() } {
            if t.head.depth < depth {
                return false;
            }
            if std::ptr::eq(t, anc as *const Task) {
                return true;
            }
            p = t.head.parent;
        }
        false
    }

    /// Whether `self` descends from `anc` (walking parents, which children keep alive).
    pub(crate) fn descends_from(&self, anc: &Task) -> bool {
        let mut p = self.head.parent;
        // SAFETY: each ancestor is kept alive by the reference its child holds.
        while let Some(t) = unsafe { p.as_ref() } {
            if std::ptr::eq(t, anc) {
                return true;
            }
            if t.head.depth <= anc.head.depth {
                return false;
            }
            p = t.head.parent;
        }
        false
    }
}

/// What a new task's head gets besides what it inherits from its parent.
struct ChildHead {
    /// The team whose threads run the task: its parent's, or the hidden helpers' (`hidden`).
    team: *const Team,
    flags: u32,
    id: u64,
    size: u32,
    trace_id: u32,
    is_final: u32,
    priority: i32,
}

impl ChildHead {
    /// What a task with no parent gets (an implicit task, a dependence node): tied, nothing
    /// else.
    const NONE: ChildHead = ChildHead {
        team: std::ptr::null(),
        flags: flags::TIED,
        id: 0,
        size: 0,
        trace_id: 0,
        is_final: 0,
        priority: 0,
    };
}

/// Where the parts of a new explicit task come from.
pub(crate) struct NewTask<'a> {
    pub parent: &'a Task,
    /// The team whose threads run it: the parent's, but for a hidden task (`hidden`).
    pub team: *const Team,
    /// A task number unique in the process.
    pub id: u64,
    pub flags: u32,
    pub sizeof_task: usize,
    pub sizeof_shareds: usize,
    pub routine: Option<Routine>,
    /// How the task's creation is recorded.
    pub trace: CreationTrace,
}

/// How a new task's creation is recorded (the caller looked at the tracing flag once).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum CreationTrace {
    /// Tracing is off: no trace number, nothing recorded.
    Off,
    /// The caller entered the allocation state and timed it (the block did not come from the
    /// thread's own list): the creation event leaves it. With the construct's `ident_t`
    /// (the task type's label), as for `Instant`.
    Timed(usize),
    /// The block came from the thread's own list (a few loads and stores, less than the clock
    /// read that would time them): the allocation state is entered and left at the instant of
    /// the creation, and that instant is the thread's next event (the task's submission,
    /// right after clang's code fills it in; see `oxiomp_instrument::task_created_later`): a
    /// task run at once reads the clock twice in all.
    Instant(usize),
}

impl NewTask<'_> {
    #[inline]
    fn size(&self) -> usize {
        block_size(self.sizeof_task, self.sizeof_shareds)
    }
}

/// The bytes of a task's block: header, `kmp_task_t` with privates (8-aligned), shareds.
#[inline]
pub(crate) fn block_size(sizeof_task: usize, sizeof_shareds: usize) -> usize {
    HEADER + body_size(sizeof_task) + sizeof_shareds
}

/// The bytes of `kmp_task_t` and privates, as laid out after the header.
#[inline]
fn body_size(sizeof_task: usize) -> usize {
    (sizeof_task.max(std::mem::size_of::<KmpTask>()) + 7) & !7
}

/// Allocates an explicit task (header, `kmp_task_t` with privates, shareds) as a child of
/// `n.parent` from `cache`, and returns its header.
#[inline]
pub(crate) fn alloc(n: NewTask, cache: &BlockCache) -> &'static Task {
    if n.size() > u32::MAX as usize {
        crate::fatal(format_args!(
            "__kmpc_omp_task_alloc: a task of {} bytes is larger than 4 GiB",
            n.size()
        ));
    }
    let block = cache.alloc(n.size());
    // SAFETY: a block of `n.size()` bytes from `alloc`.
    unsafe { init(block, n) }
}

/// Writes a new explicit task (see [`alloc`]) into `block` and returns its header.
///
/// # Safety
/// `block` came from [`BlockCache::alloc`] (or `try_alloc`) with at least [`block_size`]
/// bytes for `n` and is not in use.
#[inline]
pub(crate) unsafe fn init(block: Block, n: NewTask) -> &'static Task {
    // SAFETY: per the contract.
    unsafe { init_with(block, n, false) }
}

/// [`init`] for a block taken from a cache's local free list ([`BlockCache::try_alloc`]),
/// whose resting fields need no writing (see [`Task::write_rest`]).
///
/// # Safety
/// As for [`init`], and the block came from `try_alloc` (so it is at rest).
#[inline]
pub(crate) unsafe fn init_rested(block: Block, n: NewTask) -> &'static Task {
    // SAFETY: per the contract.
    let t = unsafe { init_with(block, n, true) };
    if cfg!(any(test, debug_assertions)) {
        // Checked once the fresh fields are written (on the list, `kind` and `flags` held the
        // link, not a valid header); `write_fresh` touches no resting field.
        assert!(t.is_at_rest(block.home), "a task block on a free list is not at rest");
    }
    t
}

/// [`init`], writing only the fields that differ from task to task when `rested`.
///
/// # Safety
/// As for [`init`]; when `rested`, the block is at rest.
#[inline]
unsafe fn init_with(block: Block, n: NewTask, rested: bool) -> &'static Task {
    let body = body_size(n.sizeof_task);
    let size = n.size();
    let p = block.ptr;
    let parent = n.parent;
    // A proxy task completes as a detachable one does: its body, then its owner's word.
    let proxy = if n.flags & flags::PROXY != 0 { flags::DETACHABLE } else { 0 };
    let head = ChildHead {
        team: n.team,
        // The compiler's 16 bits, and the one runtime bit a task is allocated with.
        flags: (n.flags & (0xffff | flags::CALLS_NEXT_WORD)) | proxy,
        id: n.id,
        // At most `u32::MAX`: `alloc` refuses more, and `try_alloc` serves small blocks only.
        size: size as u32,
        trace_id: match n.trace {
            CreationTrace::Off => 0,
            CreationTrace::Timed(ident) => oxiomp_instrument::task_created_leaving(
                oxiomp_instrument::Site { entry: n.routine.map_or(0, |r| r as usize), ident },
                oxiomp_instrument::State::TaskAllocation,
            ),
            CreationTrace::Instant(ident) => oxiomp_instrument::task_created_later(
                oxiomp_instrument::Site { entry: n.routine.map_or(0, |r| r as usize), ident },
                oxiomp_instrument::State::TaskAllocation,
            ),
        },
        // Branch-free: the parent's FINAL bit makes this task final and included.
        is_final: (n.flags & flags::FINAL != 0) as u32
            | ((parent.head.is_final & final_bits::FINAL) * (final_bits::FINAL | final_bits::INCLUDED)),
        priority: 0,
    };
    // SAFETY: `p` is a fresh block of `size` bytes, 16-aligned; the header and the
    // `kmp_task_t` fit (HEADER + 40 <= size); a rested block's other fields are at rest.
    let t = unsafe {
        if rested {
            Task::write_fresh(p as *mut Task, parent, head)
        } else {
            Task::write_child(block, parent, head)
        }
    };
    // SAFETY: as above.
    unsafe {
        let kt = p.add(HEADER) as *mut KmpTask;
        std::ptr::write(
            kt,
            KmpTask {
                shareds: if n.sizeof_shareds > 0 {
                    p.add(HEADER + body) as *mut c_void
                } else {
                    std::ptr::null_mut()
                },
                routine: n.routine,
                part_id: 0,
                data1: 0,
                data2: 0,
            },
        );
    }
    t
}

/// Allocates a byte copy of explicit task `src` (a taskloop chunk) as a child of `parent` (the
/// task running on the calling thread): same size and body, its shareds pointer moved into the
/// copy, fresh runtime state, `src`'s flags plus `more_flags`, and `trace_id`.
pub(crate) fn duplicate(
    src: &Task,
    parent: &Task,
    cache: &BlockCache,
    id: u64,
    more_flags: u32,
    trace_id: u32,
) -> &'static Task {
    let size = src.head.size as usize;
    let block = cache.alloc(size);
    // No ICVs: the pattern (from `alloc`, never submitted) has none; a chunk takes its
    // creator's when it is queued, or borrows them when it runs in place.
    let head = ChildHead {
        team: parent.head.team,
        flags: src.head.flags | more_flags,
        id,
        size: src.head.size,
        trace_id,
        is_final: src.head.is_final,
        priority: src.head.priority.get(),
    };
    // SAFETY: a fresh block of `size` bytes, 16-aligned.
    let t = unsafe { Task::write_child(block, parent, head) };
    // Chunks run in place, before the parent goes on: like any task run at once, the block
    // holds its parent only once a descendant is queued (`hold_ancestors`).
    copy_body(src, t);
    t
}

/// Copies the compiler's part of `src` (kmp_task_t, privates, shareds) over `dst`'s, moving
/// the shareds pointer into `dst`. Both are explicit tasks of the same size; `dst` is not
/// running.
pub(crate) fn copy_body(src: &Task, dst: &Task) {
    debug_assert_eq!(src.head.size, dst.head.size);
    let src_base = src as *const Task as *const u8;
    let p = dst as *const Task as *mut u8;
    // SAFETY: both blocks are `size` bytes; the body after the header is plain data clang
    // laid out, which nobody else touches now; shareds, if any, keep their offset from the
    // block start.
    unsafe {
        std::ptr::copy_nonoverlapping(src_base.add(HEADER), p.add(HEADER), src.head.size as usize - HEADER);
        let kt = p.add(HEADER) as *mut KmpTask;
        let sh = (*kt).shareds as *const u8;
        if !sh.is_null() {
            (*kt).shareds = p.add(sh.offset_from(src_base) as usize) as *mut c_void;
        }
    }
}

/// Where the privates of taskloop pattern `src` lie in its block (byte offsets): after the
/// `KmpTaskloop` header, up to the shareds block (or the block's end). For
/// [`refresh_chunk`]; the pattern is laid out as clang lays out a taskloop task.
pub(crate) fn chunk_privates(src: &Task) -> std::ops::Range<usize> {
    let fixed = HEADER + std::mem::size_of::<KmpTaskloop>();
    // SAFETY: the source is an allocated task: its kmp_task_t follows its header.
    let sh = unsafe { (*src.kmp()).shareds } as usize;
    let end = if sh == 0 { src.head.size as usize } else { sh - src as *const Task as usize };
    fixed..end.max(fixed)
}

/// Readies block `dst`, which ran a chunk of the taskloop whose pattern is `src`, for the
/// next chunk. Clang's code for a chunk writes only the chunk's privates (`privates`, from
/// [`chunk_privates`]) and `part_id` (an untied chunk's progress): those are copied again.
/// The rest is still the pattern's: routine, shareds pointer, step, reductions, and the shareds
/// block (pointers the body only reads); the bounds and the last-chunk flag are the caller's
/// to write. Both are explicit tasks of the same size.
#[inline]
pub(crate) fn refresh_chunk(src: &Task, dst: &Task, privates: &std::ops::Range<usize>) {
    debug_assert_eq!(src.head.size, dst.head.size);
    debug_assert!(privates.end <= src.head.size as usize);
    // SAFETY: `privates` lies inside both blocks (it ends at most at `size`); the body is
    // plain data clang laid out, which nobody else touches now.
    unsafe {
        if !privates.is_empty() {
            let from = (src as *const Task as *const u8).add(privates.start);
            let to = (dst as *const Task as *mut u8).add(privates.start);
            std::ptr::copy_nonoverlapping(from, to, privates.len());
        }
        (*dst.kmp()).part_id = 0;
    }
}

/// A dependence node with no body (join point or taskwait-depend waiter).
pub(crate) fn alloc_node(kind: Kind, team: *const Team) -> &'static Task {
    let mut t = Task::blank(kind);
    t.head.team = team;
    t.head.size = HEADER as u32;
    let l = cache::layout(HEADER);
    // SAFETY: non-zero size.
    let p = unsafe { std::alloc::alloc(l) };
    if p.is_null() {
        std::alloc::handle_alloc_error(l);
    }
    // SAFETY: fresh block large enough for the header.
    unsafe {
        std::ptr::write(p as *mut Task, t);
        &*(p as *const Task)
    }
}

/// `t` may now outlive the suspension of its parent on the calling thread (it is queued, waits
/// for dependences or for its detach event): it holds a reference on its parent, and so does
/// each ancestor that may now end before `t` retires through it, up to the first that already
/// holds its own. Tasks run at once (the cut-off, if(0), taskloop chunks in place) hold none
/// until a descendant of theirs is counted this way: their parent is suspended beneath them on
/// this thread until they end, and if nothing they generated is left, nothing walks up
/// through them afterwards. A queued task takes its reference here when it is queued, so the
/// walk stops at it: a task holding its parent has every ancestor up to the next queued one
/// (or implicit task) holding theirs. Called by the thread running `t`'s parent, while the
/// ancestors are alive (suspended beneath on this thread, or held).
pub(crate) fn hold_ancestors(t: &Task) {
    let mut x = t;
    while !x.rest.parent_ref.get() {
        x.rest.parent_ref.set(true);
        // SAFETY: the parent is alive (see above).
        let Some(parent) = (unsafe { x.head.parent.as_ref() }) else {
            return;
        };
        if parent.head.kind != Kind::Explicit {
            return; // Implicit tasks live in their team: not counted.
        }
        // Relaxed: the parent is running on this thread or suspended beneath it; the
        // reference is released with AcqRel in `release_ref`.
        parent.rest.refs.fetch_add(1, Ordering::Relaxed);
        x = parent;
    }
}

/// Drops one reference on `t`; the last one frees it and drops its reference on its parent
/// (if it holds one).
pub(crate) fn release_ref(t: *const Task) {
    release_ref_from(t, None)
}

/// As [`release_ref`], from a thread whose block cache is `mine` (saves looking it up).
pub(crate) fn release_ref_from(t: *const Task, mine: Option<&BlockCache>) {
    let mut t = t;
    // SAFETY: the caller holds one of the references, so `t` is alive until the decrement.
    while let Some(task) = unsafe { t.as_ref() } {
        if task.head.kind == Kind::Implicit {
            return;
        }
        // The only holder left (nobody can take a reference without holding one): no
        // read-modify-write. Acquire: pairs with the other holders' AcqRel decrements, so we
        // see their last use of the block. Otherwise AcqRel: the freeing thread must see every
        // other holder's last use.
        if task.rest.refs.load(Ordering::Acquire) != 1 && task.rest.refs.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        let parent = if task.rest.parent_ref.get() { task.head.parent } else { std::ptr::null() };
        let (size, home) = (task.head.size as usize, task.rest.home);
        // SAFETY: the last reference is gone: nobody can reach the block any more. It came
        // from `alloc`/`duplicate` (a cache block of `size` bytes) or `alloc_node` (a system
        // block, home null). A cache block goes back at rest (what its free list requires).
        unsafe {
            std::ptr::drop_in_place(t as *mut Task);
            if !home.is_null() {
                Task::write_rest(t as *mut Task, home);
            }
            cache::free(Block { ptr: t as *mut u8, home }, size, mine);
        }
        t = parent;
    }
}

/// Frees an explicit task whose fields own nothing (see `retire_quietly`): no drop, and the
/// block goes back to `mine`, the calling thread's cache.
///
/// # Safety
/// The calling thread holds the only reference to `t` (from `alloc`) and does not use it
/// again; `mine` is its own cache, the one `t` was allocated from (a task that ends quietly
/// ran where it was created); `t` ended quietly (`retire_quietly`): of its resting
/// fields (see [`Task::write_rest`]) only those put back here differ from their resting values.
#[inline]
pub(crate) unsafe fn free_unshared(t: &Task, mine: &BlockCache) {
    let (p, size, home) = (t as *const Task as *mut u8, t.head.size as usize, t.rest.home);
    // Nothing to drop: the child map and the mutexinoutset locks are empty (no child, no
    // dependence), the successor list was never pushed to (the task was never in a map).
    // What a quiet end changed goes back to rest: a task run at once ran one part and was
    // never counted (`Counted::Lazy`; an if(0) task's own fields, and the ICV slot it lent
    // its creator, `complete_if0` put back). Its counts are back at 0 (nothing it generated
    // is left: `spawned` is 0, and `created`, `completed` and `retired` only move for
    // counted children, which would have kept `spawned` above 0), `refs` is 1, and nothing
    // else was touched (no dependences, no event, no parent reference). Relaxed: only this
    // thread ever saw the task.
    t.rest.parts.store(0, Ordering::Relaxed);
    // SAFETY: per the contract, the block is unreferenced; it came from `alloc` with `size`
    // bytes.
    unsafe { cache::free_own(Block { ptr: p, home }, size, mine) };
}

/// A task pointer that can travel between threads in queues.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct TaskRef(pub *const Task);

// SAFETY: a queued task is owned by the queue until a thread takes it; tasks are designed to be
// run by any member of their team.
unsafe impl Send for TaskRef {}
