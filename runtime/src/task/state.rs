//! What each thread keeps for tasking: the task it runs, its scheduling constraint, where the
//! ICVs it borrows must be saved, its victim selection, and a few reusable buffers. Only the
//! owning thread touches it (through `Thread::task_state`): plain `Cell`s, no atomics.

use std::cell::Cell;

use super::deps::Dep;
use super::descriptor::Task;
use super::prio::HeapRefused;
use crate::icv::IcvSave;

/// A thread's tasking state. `#[repr(C)]`: a debugger reads `task` (docs/architecture.md,
/// *Descriptor layout*).
#[repr(C)]
pub(crate) struct ThreadState {
    /// The task the thread is executing (an implicit task of its team, or an explicit task).
    task: Cell<*const Task>,
    /// The task scheduling constraint: the innermost task suspended on this thread (only its
    /// descendants may start here), or null.
    tsc: Cell<*const Task>,
    /// The thread's implicit task waits in a barrier (or the region's end), where it runs any
    /// task of its team until every one has completed.
    at_barrier: Cell<bool>,
    /// An untied task that re-submitted itself for its next part, to run on this thread as soon
    /// as its current part returns (`descriptor::rerun_here`), or null.
    rerun: Cell<*const Task>,
    /// Victim selection for stealing (xorshift state, never 0).
    rng: Cell<u32>,
    /// The thread's memo of its last fruitless search of its team's priority heap.
    heap_refused: Cell<HeapRefused>,
    /// Reused buffer for dependence lists (taken while in use).
    dep_scratch: Cell<Vec<Dep>>,
    /// A detachable task given its event and not submitted yet (see [`PendingDetach`]).
    detach: PendingDetach,
    /// The last task number this thread gave out: its gtid in bits 40 and up (set when the
    /// gtid is), the count of tasks it created below (`descriptor::next_id`).
    last_task_id: Cell<u64>,
    /// Where the ICVs must be saved before their first change, or null: a task run at once by
    /// the thread that created it runs on the thread's own ICVs, which it inherits, and they
    /// are copied only if its body changes them (see `descriptor::run_body`; if(0) tasks likewise,
    /// with the slot in their header: `descriptor::begin_if0`).
    icv_save: Cell<*const IcvSave>,
    /// The thread's current task is in a `taskyield`, and has not been left for another task
    /// since (a tool is told that first switch as a yield).
    yielding: Cell<bool>,
}

/// What a nested region saves of its encountering thread's tasking state.
#[derive(Clone, Copy)]
pub(crate) struct Saved {
    task: *const Task,
    tsc: *const Task,
    at_barrier: bool,
    icv_save: *const IcvSave,
}

impl ThreadState {
    /// Where `task` lies in the state (for the debugger's layout table).
    pub(crate) const TASK_OFFSET: usize = std::mem::offset_of!(ThreadState, task);

    /// The state of a new descriptor for `gtid`: its task numbers start at the gtid's base.
    pub(crate) fn new(gtid: i32) -> ThreadState {
        ThreadState {
            task: Cell::new(std::ptr::null()),
            tsc: Cell::new(std::ptr::null()),
            at_barrier: Cell::new(false),
            rerun: Cell::new(std::ptr::null()),
            rng: Cell::new(0x9e37_79b9),
            heap_refused: Cell::new(HeapRefused::default()),
            dep_scratch: Cell::new(Vec::new()),
            detach: PendingDetach::default(),
            last_task_id: Cell::new((gtid as u64) << 40),
            icv_save: Cell::new(std::ptr::null()),
            yielding: Cell::new(false),
        }
    }

    /// A fresh state for the next thread a descriptor serves, but for what outlives a thread:
    /// the task numbers given out and the victim selection. `drop_old`: the old buffers are
    /// dropped (false: forgotten, in a fork's child, where a vanished thread may have left
    /// them half-written).
    pub(crate) fn restart(&self, drop_old: bool) {
        let old = (self.dep_scratch.take(), self.detach.deps.take());
        if !drop_old {
            std::mem::forget(old);
        }
        self.task.set(std::ptr::null());
        self.tsc.set(std::ptr::null());
        self.at_barrier.set(false);
        self.rerun.set(std::ptr::null());
        self.heap_refused.set(HeapRefused::default());
        self.detach.task.set(std::ptr::null());
        self.detach.deps_for.set(std::ptr::null());
        self.icv_save.set(std::ptr::null());
    }

    /// A new OS thread on the descriptor: its victim selection is stirred with the gtid.
    #[inline]
    pub(crate) fn stir_rng(&self, gtid: i32) {
        self.rng.set((self.rng.get() ^ gtid as u32).max(1));
    }

    /// The thread starts implicit task `task` (of a new region, or its root team's): no
    /// constraint, not at a barrier, and the task has ICVs of its own (changes to them are not
    /// the enclosing task's).
    #[inline]
    pub(crate) fn begin_implicit(&self, task: *const Task) {
        self.task.set(task);
        self.tsc.set(std::ptr::null());
        self.at_barrier.set(false);
        self.icv_save.set(std::ptr::null());
    }

    #[inline]
    pub(crate) fn save(&self) -> Saved {
        Saved {
            task: self.task.get(),
            tsc: self.tsc.get(),
            at_barrier: self.at_barrier.get(),
            icv_save: self.icv_save.get(),
        }
    }

    #[inline]
    pub(crate) fn restore(&self, s: Saved) {
        self.task.set(s.task);
        self.tsc.set(s.tsc);
        self.at_barrier.set(s.at_barrier);
        self.icv_save.set(s.icv_save);
    }

    /// The task the thread runs.
    #[inline]
    pub(crate) fn task(&self) -> *const Task {
        self.task.get()
    }

    /// Makes `t` the task the thread runs; returns the previous one.
    #[inline]
    pub(crate) fn replace_task(&self, t: *const Task) -> *const Task {
        self.task.replace(t)
    }

    #[inline]
    pub(crate) fn tsc(&self) -> *const Task {
        self.tsc.get()
    }

    #[inline]
    pub(crate) fn replace_tsc(&self, t: *const Task) -> *const Task {
        self.tsc.replace(t)
    }

    #[inline]
    pub(crate) fn at_barrier(&self) -> bool {
        self.at_barrier.get()
    }

    #[inline]
    pub(crate) fn replace_at_barrier(&self, b: bool) -> bool {
        self.at_barrier.replace(b)
    }

    #[inline]
    pub(crate) fn rerun(&self) -> *const Task {
        self.rerun.get()
    }

    #[inline]
    pub(crate) fn set_rerun(&self, t: *const Task) {
        self.rerun.set(t);
    }

    /// The victim selection state and the heap memo, for a search (given back with
    /// [`ThreadState::end_search`]).
    #[inline]
    pub(crate) fn search(&self) -> (u32, HeapRefused) {
        (self.rng.get(), self.heap_refused.get())
    }

    #[inline]
    pub(crate) fn end_search(&self, rng: u32, refused: HeapRefused) {
        self.rng.set(rng);
        self.heap_refused.set(refused);
    }

    #[inline]
    pub(crate) fn heap_refused(&self) -> HeapRefused {
        self.heap_refused.get()
    }

    /// The reusable dependence buffer, taken (give it back with [`ThreadState::put_dep_buffer`]).
    #[inline]
    pub(crate) fn take_dep_buffer(&self) -> Vec<Dep> {
        self.dep_scratch.take()
    }

    #[inline]
    pub(crate) fn put_dep_buffer(&self, v: Vec<Dep>) {
        self.dep_scratch.set(v);
    }

    /// The next task number.
    #[inline]
    pub(crate) fn next_task_id(&self) -> u64 {
        let id = self.last_task_id.get() + 1;
        self.last_task_id.set(id);
        id
    }

    /// Marks the current task as in a `taskyield` (`on`), or as out of it.
    #[inline]
    pub(crate) fn set_yielding(&self, on: bool) {
        self.yielding.set(on);
    }

    /// Whether the current task is in a `taskyield` it has not been left in yet; it no longer
    /// is afterwards.
    #[inline]
    pub(crate) fn take_yielding(&self) -> bool {
        self.yielding.replace(false)
    }

    #[inline]
    pub(crate) fn icv_save(&self) -> *const IcvSave {
        self.icv_save.get()
    }

    #[inline]
    pub(crate) fn replace_icv_save(&self, p: *const IcvSave) -> *const IcvSave {
        self.icv_save.replace(p)
    }

    /// The pending detachable task (see [`PendingDetach`]).
    #[inline]
    pub(crate) fn detach(&self) -> &PendingDetach {
        &self.detach
    }
}

/// A detachable task between its `__kmpc_task_allow_completion_event` and its submission (or
/// its `__kmpc_omp_task_begin_if0`), and the dependences of a `taskwait depend` in between.
/// An if(0) task's dependences reach the runtime only as such a wait, which returns once its
/// predecessors have completed; but a detachable task completes only when its event is
/// fulfilled, and its successors must wait until then: so `begin_if0` enters it in the
/// dependence map with them (its predecessors are complete: it is ready at once).
pub(crate) struct PendingDetach {
    /// The task given its event (null: none pending). It is not freed before it is submitted
    /// or begun, which clear this.
    task: Cell<*const Task>,
    /// The task the saved dependences are for (null: none).
    deps_for: Cell<*const Task>,
    deps: Cell<Vec<Dep>>,
}

impl Default for PendingDetach {
    fn default() -> Self {
        PendingDetach {
            task: Cell::new(std::ptr::null()),
            deps_for: Cell::new(std::ptr::null()),
            deps: Cell::new(Vec::new()),
        }
    }
}

impl PendingDetach {
    /// `t` was given its event: remembered until it is submitted or begun.
    #[inline]
    pub(crate) fn given_event(&self, t: &Task) {
        self.task.set(t);
        self.deps_for.set(std::ptr::null());
    }

    /// The task was submitted (deferred) or begun: nothing to remember for it.
    #[inline]
    pub(crate) fn forget(&self, t: &Task) {
        if std::ptr::eq(self.task.get(), t) {
            self.task.set(std::ptr::null());
        }
    }

    /// A `taskwait depend` on `deps`: with a task pending, the wait clang emits for a
    /// detachable if(0) task's dependences, right before `begin_if0`; they are kept for it.
    #[inline]
    pub(crate) fn wait(&self, deps: &[Dep]) {
        if !self.task.get().is_null() {
            self.deps_for.set(self.task.replace(std::ptr::null()));
            let mut kept = self.deps.take();
            kept.clear();
            kept.extend_from_slice(deps);
            self.deps.set(kept);
        }
    }

    /// `t` begins as an if(0) task: the dependences kept for it, if any (the caller gives the
    /// buffer back with `restore`).
    #[inline]
    pub(crate) fn begin(&self, t: &Task) -> Option<Vec<Dep>> {
        self.forget(t);
        if !std::ptr::eq(self.deps_for.get(), t) {
            return None;
        }
        self.deps_for.set(std::ptr::null());
        Some(self.deps.take())
    }

    /// The buffer `begin` lent out, for reuse.
    #[inline]
    pub(crate) fn restore(&self, mut deps: Vec<Dep>) {
        deps.clear();
        self.deps.set(deps);
    }
}
