//! `taskloop`: the compiler hands over a pattern task whose header holds the (normalised)
//! loop bounds; the runtime cuts the iteration space into chunks, each a byte copy of the
//! pattern with its own bounds, then finishes the pattern without running it.

use super::descriptor::{self, KmpTask, KmpTaskloop, Task};
use crate::sync::atomic::{AtomicU32, Ordering};
use crate::thread::Thread;
use oxiomp_instrument::{ToolEvent, work_kind};

/// `void dup(kmp_task_t *dst, kmp_task_t *src, kmp_int32 lastpriv)`.
pub type DupFn = unsafe extern "C" fn(*mut KmpTask, *mut KmpTask, i32);

/// The arguments of `__kmpc_taskloop(_5)`.
pub struct TaskloopArgs {
    pub if_val: bool,
    /// The bounds, and where they sit in the task (byte offsets from the `kmp_task_t`).
    pub lb: u64,
    pub ub: u64,
    pub lb_offset: usize,
    pub ub_offset: usize,
    pub st: i64,
    pub nogroup: bool,
    /// 0: no clause, 1: grainsize, 2: num_tasks.
    pub sched: i32,
    pub grainsize: u64,
    pub strict: bool,
    pub dup: Option<DupFn>,
    /// The construct's `ident_t` (it names the chunks' task type in a trace), or 0.
    pub ident: usize,
}

/// Iterations of the loop `lb..=ub` by `st` (in the runtime's unsigned arithmetic).
pub fn trip_count(lb: u64, ub: u64, st: i64) -> u64 {
    if st == 0 {
        return 0;
    }
    if st > 0 {
        if (ub as i64) < (lb as i64) {
            return 0;
        }
        ub.wrapping_sub(lb) / st as u64 + 1
    } else {
        if (lb as i64) < (ub as i64) {
            return 0;
        }
        lb.wrapping_sub(ub) / st.unsigned_abs() + 1
    }
}

/// How a loop of `tc` iterations is cut: (number of chunks, base chunk size, chunks that get
/// one more iteration). Strict grainsize: chunks of exactly `grainsize`, the last one shorter
/// (then `extras` is 0 and the caller trims the last chunk).
pub fn plan(tc: u64, nthreads: u32, sched: i32, grainsize: u64, strict: bool) -> (u64, u64, u64) {
    if tc == 0 {
        return (0, 0, 0);
    }
    match sched {
        1 => {
            let g = grainsize.max(1);
            if strict {
                (tc.div_ceil(g), g, 0)
            } else {
                let n = (tc / g).max(1);
                (n, tc / n, tc % n)
            }
        }
        2 => {
            let n = grainsize.clamp(1, tc);
            (n, tc / n, tc % n)
        }
        _ => {
            let n = (nthreads as u64 * 10).clamp(1, tc);
            (n, tc / n, tc % n)
        }
    }
}

/// One taskloop in flight: the pattern task and how its iterations are cut into chunks. Shared
/// by the encountering thread and the range tasks; the last user discards the pattern.
struct Loop {
    pattern: &'static Task,
    lower: u64,
    st: i64,
    tc: u64,
    /// Chunks, their base size, and how many get one more iteration (see [`plan`]).
    n: u64,
    size: u64,
    extras: u64,
    /// Strict grainsize: chunks of exactly `size`, the last one shorter.
    strict: bool,
    lb_off: usize,
    ub_off: usize,
    /// The pattern is laid out as clang's `KmpTaskloop` with the bounds where it puts them
    /// (then a block that ran a chunk is readied for the next by [`descriptor::refresh_chunk`]).
    standard: bool,
    /// Where the pattern's privates lie (when `standard`).
    privates: std::ops::Range<usize>,
    dup: Option<DupFn>,
    /// Chunks a range runs in place rather than splitting further.
    leaf: u64,
    /// The encountering call plus the range tasks not finished.
    users: AtomicU32,
    /// The construct's `ident_t` (see `TaskloopArgs::ident`).
    ident: usize,
}

impl Loop {
    /// Bounds of chunk `k` and whether it is the last one.
    fn chunk(&self, k: u64) -> (u64, u64, i32) {
        let (start, len) = if self.strict {
            let start = k * self.size;
            (start, self.size.min(self.tc - start))
        } else {
            (k * self.size + k.min(self.extras), self.size + (k < self.extras) as u64)
        };
        let lb = self.lower.wrapping_add(start.wrapping_mul(self.st as u64));
        let ub = lb.wrapping_add((len - 1).wrapping_mul(self.st as u64));
        (lb, ub, (k + 1 == self.n) as i32)
    }

    /// Writes chunk `k`'s bounds into `c` (a copy of the pattern) and calls the duplication
    /// callback.
    fn prepare(&self, c: &Task, k: u64) {
        let (lb, ub, last) = self.chunk(k);
        let ckt = c.kmp();
        // SAFETY: the copy has the pattern's layout: lb/ub at the offsets checked in
        // `taskloop`; `liter` is part of the taskloop header when the compiler uses the
        // standard one; `dup` is the compiler's callback for this layout.
        unsafe {
            *((ckt as *mut u8).add(self.lb_off) as *mut u64) = lb;
            *((ckt as *mut u8).add(self.ub_off) as *mut u64) = ub;
            if self.standard {
                (*(ckt as *mut KmpTaskloop)).liter = last;
            }
            if let Some(dup) = self.dup {
                dup(ckt, self.pattern.kmp(), last);
            }
        }
    }

    /// Drops one user; the last one discards the pattern (its destructors run once no chunk
    /// can be copied from it any more) and frees the loop.
    fn release(lp: *const Loop) {
        // SAFETY: the caller is a user, so the loop is alive until the decrement. AcqRel: the
        // last user sees every other user's copies from the pattern before destroying it.
        if unsafe { &*lp }.users.fetch_sub(1, Ordering::AcqRel) == 1 {
            // SAFETY: made by `Box::into_raw` in `taskloop`; no user is left.
            let lp = unsafe { Box::from_raw(lp as *mut Loop) };
            super::discard(lp.pattern);
        }
    }
}

/// `__kmpc_taskloop` / `__kmpc_taskloop_5`.
///
/// Every chunk is a task of its own (its own bounds, `dup` call and lastprivate flag), but
/// chunks are not queued one by one: the iteration space is split in halves, recursively, and
/// each split-off half goes to the deque as one *range task* that idle threads steal; a range
/// of at most `leaf` chunks runs its chunks in place, one after the other in one reused block.
/// A loop of a million one-iteration chunks costs a few queue operations per thread, not a
/// million, and still spreads over the team.
pub fn taskloop(th: Thread, pattern: &'static Task, a: &TaskloopArgs) {
    let (lb_off, ub_off) = (a.lb_offset, a.ub_offset);
    let body = pattern.head.size as usize - descriptor::HEADER;
    if lb_off.max(ub_off) + 8 > body {
        crate::fatal(format_args!("taskloop bounds at offsets {lb_off}/{ub_off} lie outside the task"));
    }
    let standard = lb_off == std::mem::offset_of!(KmpTaskloop, lb)
        && ub_off == std::mem::offset_of!(KmpTaskloop, ub)
        && body >= std::mem::size_of::<KmpTaskloop>();
    let tc = trip_count(a.lb, a.ub, a.st);
    if !a.nogroup {
        super::taskgroup_begin(th);
    }
    oxiomp_instrument::tool(|| ToolEvent::Work { kind: work_kind::TASKLOOP, begin: true, count: tc });
    let nthreads = th.team().nthreads;
    let (n, size, extras) = plan(tc, nthreads, a.sched, a.grainsize, a.strict);
    let lp = Box::into_raw(Box::new(Loop {
        pattern,
        lower: a.lb,
        st: a.st,
        tc,
        n,
        size,
        extras,
        strict: a.strict && a.sched == 1,
        lb_off,
        ub_off,
        standard,
        privates: if standard { descriptor::chunk_privates(pattern) } else { 0..0 },
        dup: a.dup,
        // A few ranges per thread: enough to balance, few enough to cost nothing.
        leaf: (n / (nthreads as u64 * 8)).max(1),
        users: AtomicU32::new(1),
        ident: a.ident,
    }));
    if n > 0 {
        // SAFETY: we are a user: the loop is alive.
        let l = unsafe { &*lp };
        if !a.if_val {
            run_chunks(th, l, 0, n);
        } else if oxiomp_instrument::tasks_followed() {
            spawn_chunks(th, l);
        } else {
            run_range(th, l, 0, n);
        }
    }
    Loop::release(lp);
    oxiomp_instrument::tool(|| ToolEvent::Work { kind: work_kind::TASKLOOP, begin: false, count: tc });
    if !a.nogroup {
        super::taskgroup_end(th);
    }
}

/// With a tool attached or an Ayudame library listening: every chunk is a task created here, in order, and queued for any
/// thread to run, the tasks a tool expects of a taskloop (and libomp's shape). The range
/// tasks of [`run_range`] would show it tasks the program never asked for, and chunks created
/// on whichever thread runs a range.
#[cold]
fn spawn_chunks(th: Thread, l: &Loop) {
    let parent = super::current(th);
    let group = parent.head.cur_group.get();
    let team = parent.team();
    // A chunk's iterations are read from its header when it starts (`tool::started`).
    let more_flags = if l.standard { descriptor::flags::TASKLOOP_CHUNK } else { 0 };
    // SAFETY: the pattern's own kmp_task_t.
    let entry = unsafe { (*l.pattern.kmp()).routine }.map_or(0, |r| r as usize);
    for k in 0..l.n {
        if super::cancelled_in(group, team) {
            break;
        }
        let c = duplicating::<true, _>(|| {
            let site = oxiomp_instrument::Site { entry, ident: l.ident };
            let (id, trace_id) = (super::next_id(th), oxiomp_instrument::task_created(site));
            let c =
                descriptor::duplicate(l.pattern, parent, th.desc().task_cache(), id, more_flags, trace_id);
            l.prepare(c, k);
            c
        });
        // A new task: never refused.
        let _ = super::submit(th, c, &mut Vec::new());
    }
}

/// Runs chunks `k0..k1` of the loop: splits off upper halves as range tasks while the range is
/// longer than a leaf and tasks may be deferred, then runs the rest in place.
fn run_range(th: Thread, l: &Loop, k0: u64, mut k1: u64) {
    while k1 - k0 > l.leaf && super::may_defer(th, l.pattern) {
        let mid = k0 + (k1 - k0) / 2;
        spawn_range(th, l, mid, k1);
        k1 = mid;
    }
    run_chunks(th, l, k0, k1);
}

/// Runs chunks `k0..k1` on this thread, each as an included task of the current task, in one
/// block copied afresh from the pattern for each chunk (a new block after a chunk that left
/// children). A chunk does not start once the taskgroup or region is cancelled.
fn run_chunks(th: Thread, l: &Loop, k0: u64, k1: u64) {
    // One test of the tracing flag for the run, not three per chunk.
    if oxiomp_instrument::enabled() {
        run_chunks_as::<true>(th, l, k0, k1)
    } else {
        run_chunks_as::<false>(th, l, k0, k1)
    }
}

/// [`run_chunks`], recording the duplicating state and each chunk's creation when `TRACED`.
#[inline(always)]
fn run_chunks_as<const TRACED: bool>(th: Thread, l: &Loop, k0: u64, k1: u64) {
    let parent = super::current(th);
    let group = parent.head.cur_group.get();
    let team = parent.team();
    let mut k = k0;
    while k < k1 && !super::cancelled_in(group, team) {
        let c = duplicating::<TRACED, _>(|| {
            let more_flags = if l.standard { descriptor::flags::TASKLOOP_CHUNK } else { 0 };
            let id = super::next_id(th);
            // Not a task of the trace itself: each chunk that runs in the block is created
            // there as it starts (`run_in_place`).
            let c = descriptor::duplicate(l.pattern, parent, th.desc().task_cache(), id, more_flags, 0);
            super::begin_in_place(c);
            l.prepare(c, k);
            c
        });
        // The block's first chunk is ready; each later one is copied from the pattern again.
        let mut first = true;
        super::run_in_place::<TRACED>(th, c, l.ident, || {
            if !std::mem::replace(&mut first, false) {
                if k == k1 || super::cancelled_in(group, team) {
                    return false;
                }
                duplicating::<TRACED, _>(|| {
                    if l.standard {
                        descriptor::refresh_chunk(l.pattern, c, &l.privates);
                    } else {
                        descriptor::copy_body(l.pattern, c);
                    }
                    l.prepare(c, k);
                });
            }
            k += 1;
            true
        });
        super::discard_after_run(c);
    }
}

/// Runs `f` in the duplicating state (recorded when `TRACED`).
#[inline(always)]
fn duplicating<const TRACED: bool, R>(f: impl FnOnce() -> R) -> R {
    if TRACED {
        oxiomp_instrument::task_duplicating_enter();
    }
    let r = f();
    if TRACED {
        oxiomp_instrument::task_duplicating_exit();
    }
    r
}

/// A range task's `kmp_task_t` and what it runs.
#[repr(C)]
struct RangeTask {
    kmp: KmpTask,
    lp: *const Loop,
    k0: u64,
    k1: u64,
}

/// Queues chunks `k0..k1` as one range task, a child of the current task.
fn spawn_range(th: Thread, l: &Loop, k0: u64, k1: u64) {
    // Relaxed: the encountering call (or the range task calling this) is a user, so the count
    // cannot reach 0 meanwhile; the queue hand-over publishes the loop to the thief.
    l.users.fetch_add(1, Ordering::Relaxed);
    // The loop is released by the destructors thunk, which runs even when the task is
    // cancelled before its body could.
    let flags = descriptor::flags::TIED
        | descriptor::flags::DESTRUCTORS
        | (l.pattern.head.flags & descriptor::flags::PRIORITY);
    let kt = super::alloc(flags, std::mem::size_of::<RangeTask>(), 0, Some(run_range_task), 0);
    // SAFETY: allocated with room for a RangeTask; the task is not shared yet.
    unsafe {
        let r = kt as *mut RangeTask;
        (*r).lp = l;
        (*r).k0 = k0;
        (*r).k1 = k1;
        (*r).kmp.data1 = release_range_task as *const () as usize;
        // The pattern's priority (clang keeps it in data2) applies to its chunks.
        (*r).kmp.data2 = (*l.pattern.kmp()).data2;
    }
    // SAFETY: `kt` is the task just allocated.
    let t = unsafe { Task::from_kmp(kt) };
    // A new task: never refused.
    let _ = super::submit(th, t, &mut Vec::new());
}

unsafe extern "C" fn run_range_task(gtid: i32, kt: *mut KmpTask) -> i32 {
    let th = Thread::from_gtid(gtid);
    // SAFETY: `spawn_range` wrote a RangeTask; the task is a user of the loop until its
    // destructors run (`release_range_task`), after this.
    unsafe {
        let r = kt as *const RangeTask;
        run_range(th, &*(*r).lp, (*r).k0, (*r).k1);
    }
    // The chunks are the encountering task's children: a `taskwait` there (after `nogroup`)
    // must find them all complete, so a range completes only with the ranges it split off.
    super::taskwait(th);
    0
}

unsafe extern "C" fn release_range_task(_gtid: i32, kt: *mut KmpTask) -> i32 {
    // SAFETY: `spawn_range` wrote a RangeTask; destructors run once per task.
    Loop::release(unsafe { (*(kt as *const RangeTask)).lp });
    0
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn trip_counts() {
        assert_eq!(trip_count(0, 9, 1), 10);
        assert_eq!(trip_count(0, 9, 3), 4);
        assert_eq!(trip_count(9, 0, -1), 10);
        assert_eq!(trip_count(5, 4, 1), 0);
        assert_eq!(trip_count(0, u64::MAX, 1), 0); // ub = -1: empty
    }

    #[test]
    fn plans_cover_the_loop() {
        for tc in [1u64, 2, 7, 100, 1001] {
            for (sched, g, strict) in
                [(0, 0, false), (1, 1, false), (1, 7, false), (1, 7, true), (2, 3, false), (2, 5000, false)]
            {
                let (n, size, extras) = plan(tc, 4, sched, g, strict);
                let mut total = 0;
                let mut start = 0;
                for k in 0..n {
                    let len = if strict { size.min(tc - start) } else { size + (k < extras) as u64 };
                    assert!(len >= 1);
                    if sched == 1 && !strict {
                        assert!(len >= g.min(tc) && len < 2 * g.max(1) || n == 1, "tc={tc} g={g} len={len}");
                    }
                    if strict && k + 1 < n {
                        assert_eq!(len, g);
                    }
                    total += len;
                    start += len;
                }
                assert_eq!(total, tc, "tc={tc} sched={sched} g={g}");
                if sched == 2 {
                    assert_eq!(n, g.min(tc));
                }
            }
        }
    }
}
