//! A task's creation (`__kmpc_omp_task_alloc`): a new child of the calling thread's current
//! task in a block from the thread's cache, and the process-unique task numbers.

use super::current;
use super::descriptor::{self, CreationTrace, KmpTask, NewTask, Routine};
use crate::thread::Thread;

/// `__kmpc_omp_task_alloc`: a new child of the calling thread's current task; returns its
/// `kmp_task_t`. The common case (a known thread, tracing off, a block on the thread's local
/// list) calls nothing, so it needs no stack frame; the rest (a thread the runtime does not
/// know yet, the traced allocation with its state and the task's creation event, a block from
/// elsewhere) is a cold copy. `ident`: the construct's `ident_t` (its source location names
/// the task's type in a trace), or 0.
#[inline]
pub fn alloc(
    flags: u32,
    sizeof_task: usize,
    sizeof_shareds: usize,
    routine: Option<Routine>,
    ident: usize,
) -> *mut KmpTask {
    if !oxiomp_instrument::enabled()
        && let Some(th) = Thread::peek()
        && let Some(block) =
            th.desc().task_cache().try_alloc(descriptor::block_size(sizeof_task, sizeof_shareds))
    {
        let n = new_task(th, flags, sizeof_task, sizeof_shareds, routine, CreationTrace::Off);
        // SAFETY: a block of `block_size` bytes from the thread's own local free list.
        return unsafe { descriptor::init_rested(block, n) }.kmp();
    }
    alloc_slow(flags, sizeof_task, sizeof_shareds, routine, ident)
}

#[cold]
#[inline(never)]
fn alloc_slow(
    flags: u32,
    sizeof_task: usize,
    sizeof_shareds: usize,
    routine: Option<Routine>,
    ident: usize,
) -> *mut KmpTask {
    let th = Thread::current();
    let cache = th.desc().task_cache();
    let mut trace = CreationTrace::Off;
    if oxiomp_instrument::enabled() {
        // A block from the thread's own list is recorded as an instant allocation (see
        // `CreationTrace::Instant`); any other is timed, and its creation event leaves the
        // allocation state (one clock read for both).
        // With a tool attached, no block from a free list (see `BlockCache::alloc`).
        if !oxiomp_instrument::tool_attached()
            && let Some(block) = cache.try_alloc(descriptor::block_size(sizeof_task, sizeof_shareds))
        {
            let n = new_task(th, flags, sizeof_task, sizeof_shareds, routine, CreationTrace::Instant(ident));
            // SAFETY: a block of `block_size` bytes from the thread's own local free list.
            return unsafe { descriptor::init_rested(block, n) }.kmp();
        }
        oxiomp_instrument::task_allocation_enter();
        trace = CreationTrace::Timed(ident);
    }
    descriptor::alloc(new_task(th, flags, sizeof_task, sizeof_shareds, routine, trace), cache).kmp()
}

/// `__kmpc_omp_target_task_alloc` while hidden helper threads serve: a new child of the
/// calling thread's current task that the helpers' `team` runs (see `hidden`), untied as
/// libomp makes a target task. Its counts are its parent's, as any child's: `taskwait`,
/// taskgroups, barriers and dependences treat it as they treat the others.
#[cold]
#[inline(never)]
pub fn alloc_hidden(
    flags: u32,
    sizeof_task: usize,
    sizeof_shareds: usize,
    routine: Option<Routine>,
    ident: usize,
    team: &'static crate::team::Team,
) -> *mut KmpTask {
    let th = Thread::current();
    let mut trace = CreationTrace::Off;
    if oxiomp_instrument::enabled() {
        oxiomp_instrument::task_allocation_enter();
        trace = CreationTrace::Timed(ident);
    }
    let mut n = new_task(th, flags & !descriptor::flags::TIED, sizeof_task, sizeof_shareds, routine, trace);
    n.team = team;
    descriptor::alloc(n, th.desc().task_cache()).kmp()
}

/// The parts of a new child of the calling thread's current task.
#[inline(always)]
fn new_task(
    th: Thread,
    flags: u32,
    sizeof_task: usize,
    sizeof_shareds: usize,
    routine: Option<Routine>,
    trace: CreationTrace,
) -> NewTask<'static> {
    let parent = current(th);
    NewTask {
        parent,
        team: parent.head.team,
        id: next_id(th),
        flags,
        sizeof_task,
        sizeof_shareds,
        routine,
        trace,
    }
}

/// A task number unique in the process: the thread's gtid (bits 40 and up) and its own count
/// (unique until a thread has created 2^40 tasks).
#[inline]
pub(crate) fn next_id(th: Thread) -> u64 {
    th.task_state().next_task_id()
}
