//! The inquiry and setter semantics behind the `omp_*` routines: thread numbers, levels,
//! ancestors, team sizes, ICVs, places. Setters validate their argument and return an error
//! text for the ABI layer to report with the routine's name.

use crate::env::SUPPORTED_ACTIVE_LEVELS;
use crate::icv::{ProcBind, Schedule, ScheduleKind};
use crate::registry::Runtime;
use crate::team::Team;
use crate::thread::Thread;

/// Misuse of a routine: the text says what was wrong.
pub type Misuse = &'static str;

#[inline]
pub fn num_threads() -> i32 {
    Thread::current().team().nthreads as i32
}

#[inline]
pub fn thread_num() -> i32 {
    Thread::current().tid() as i32
}

pub fn max_threads() -> i32 {
    Thread::current().icvs().nthreads as i32
}

#[inline]
pub fn in_parallel() -> bool {
    Thread::current().team().active_level > 0
}

pub fn level() -> i32 {
    Thread::current().team().level as i32
}

pub fn active_level() -> i32 {
    Thread::current().team().active_level as i32
}

/// The team at nesting `level` enclosing the calling thread, with the calling thread's
/// ancestor's number in it.
fn ancestor(level: i32) -> Option<(&'static Team, u32)> {
    let th = Thread::current();
    // SAFETY: teams enclosing the current one outlive it; the reference is used immediately
    // by the caller, inside the region.
    let mut team: &'static Team = unsafe { &*(th.team() as *const Team) };
    let mut tid = th.tid();
    if level < 0 || level as u32 > team.level {
        return None;
    }
    while team.level > level as u32 {
        tid = team.parent_tid;
        // SAFETY: as above; a team above level 0 has a parent.
        team = unsafe { team.parent.as_ref()? };
    }
    Some((team, tid))
}

pub fn ancestor_thread_num(level: i32) -> i32 {
    ancestor(level).map_or(-1, |(_, tid)| tid as i32)
}

pub fn team_size(level: i32) -> i32 {
    ancestor(level).map_or(-1, |(t, _)| t.nthreads as i32)
}

pub fn set_num_threads(n: i32) -> Result<(), Misuse> {
    if n <= 0 {
        return Err("the number of threads must be positive; the call is ignored");
    }
    Thread::current().change_icvs(|i| i.nthreads = n as u32);
    Ok(())
}

pub fn set_dynamic(on: bool) {
    Thread::current().change_icvs(|i| i.dynamic = on);
}

pub fn dynamic() -> bool {
    Thread::current().icvs().dynamic
}

pub fn set_nested(on: bool) {
    Thread::current().change_icvs(|i| i.max_active_levels = if on { SUPPORTED_ACTIVE_LEVELS } else { 1 });
}

pub fn nested() -> bool {
    Thread::current().icvs().max_active_levels > 1
}

pub fn set_max_active_levels(n: i32) -> Result<(), Misuse> {
    if n < 0 {
        return Err("the number of levels must not be negative; the call is ignored");
    }
    Thread::current().change_icvs(|i| i.max_active_levels = (n as u32).min(SUPPORTED_ACTIVE_LEVELS));
    Ok(())
}

pub fn max_active_levels() -> i32 {
    Thread::current().icvs().max_active_levels as i32
}

pub fn supported_active_levels() -> i32 {
    SUPPORTED_ACTIVE_LEVELS as i32
}

/// `omp_set_schedule(kind, chunk)`; `kind` may carry the monotonic bit.
pub fn set_schedule(kind: i32, chunk: i32) -> Result<(), Misuse> {
    let monotonic = kind & crate::icv::SCHED_MONOTONIC != 0;
    let Some(k) = ScheduleKind::from_omp(kind & !crate::icv::SCHED_MONOTONIC) else {
        return Err("unknown schedule kind; the call is ignored");
    };
    let chunk = if chunk < 1 || k == ScheduleKind::Auto { 0 } else { chunk };
    Thread::current().change_icvs(|i| i.run_sched = Schedule { kind: k, chunk, monotonic });
    Ok(())
}

/// `omp_get_schedule`: (kind with the monotonic bit when the modifier was given, chunk), as
/// libomp reports them: a kind other than static without a chunk has chunk 1 (what it uses),
/// and `static_steal` is reported as `dynamic` (it hands out dynamic chunks, stealing or not).
pub fn schedule() -> (i32, i32) {
    let s = Thread::current().icvs().run_sched;
    let kind = if s.kind == ScheduleKind::StaticSteal { ScheduleKind::Dynamic } else { s.kind };
    let chunk = if s.kind != ScheduleKind::Static && s.chunk == 0 { 1 } else { s.chunk };
    (kind as i32 | if s.monotonic { crate::icv::SCHED_MONOTONIC } else { 0 }, chunk)
}

pub fn thread_limit() -> i32 {
    Thread::current().icvs().thread_limit.min(i32::MAX as u32) as i32
}

pub fn proc_bind() -> i32 {
    Thread::current().icvs().bind as i32
}

pub fn num_procs() -> i32 {
    Runtime::get().num_procs() as i32
}

fn places() -> &'static [Vec<u32>] {
    &Runtime::get().settings().places.places
}

pub fn num_places() -> i32 {
    places().len() as i32
}

pub fn place_num_procs(place: i32) -> i32 {
    usize::try_from(place).ok().and_then(|p| places().get(p)).map_or(0, |p| p.len() as i32)
}

/// The CPU ids of `place`; empty for an invalid place.
pub fn place_proc_ids(place: i32) -> &'static [u32] {
    usize::try_from(place).ok().and_then(|p| places().get(p)).map_or(&[], |p| &p[..])
}

pub fn place_num() -> i32 {
    Thread::current().place(Runtime::places).map_or(-1, |p| p as i32)
}

/// The calling task's place partition (place numbers), empty when no binding is in force.
pub fn partition() -> std::ops::Range<i32> {
    let th = Thread::current();
    let i = th.icvs();
    if i.bind == ProcBind::False && th.place(Runtime::places).is_none() {
        return 0..0;
    }
    let start = i.partition_start as i32;
    start..start + i.partition_len as i32
}

pub fn num_teams() -> i32 {
    Thread::current().team().num_teams
}

pub fn team_num() -> i32 {
    Thread::current().team().team_num
}

/// nteams-var and teams-thread-limit-var (device-wide; 0 = unset, then the environment's).
static NTEAMS: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
static TEAMS_THREAD_LIMIT: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

pub fn set_num_teams(n: i32) -> Result<(), Misuse> {
    if n <= 0 {
        return Err("the number of teams must be positive; the call is ignored");
    }
    // Relaxed: a plain setting, read by later teams constructs of the program's own ordering.
    NTEAMS.store(n, std::sync::atomic::Ordering::Relaxed);
    Ok(())
}

pub fn max_teams() -> i32 {
    match NTEAMS.load(std::sync::atomic::Ordering::Relaxed) {
        0 => Runtime::get().settings().globals.nteams.max(1),
        n => n,
    }
}

pub fn set_teams_thread_limit(n: i32) -> Result<(), Misuse> {
    if n <= 0 {
        return Err("the thread limit must be positive; the call is ignored");
    }
    TEAMS_THREAD_LIMIT.store(n, std::sync::atomic::Ordering::Relaxed);
    Ok(())
}

pub fn teams_thread_limit() -> i32 {
    match TEAMS_THREAD_LIMIT.load(std::sync::atomic::Ordering::Relaxed) {
        0 => Runtime::get().settings().globals.teams_thread_limit,
        n => n,
    }
}

pub fn default_device() -> i32 {
    Thread::current().icvs().default_device
}

pub fn set_default_device(d: i32) {
    Thread::current().change_icvs(|i| i.default_device = d);
}

/// def-allocator-var.
pub fn default_allocator() -> crate::allocator::Handle {
    Thread::current().icvs().def_allocator
}

/// `omp_set_default_allocator`; `omp_null_allocator` gives `omp_default_mem_alloc` back (as
/// libomp does).
pub fn set_default_allocator(h: crate::allocator::Handle) -> Result<(), Misuse> {
    use crate::allocator as al;
    let h = if h == al::NULL_ALLOCATOR { al::DEFAULT_MEM_ALLOC } else { h };
    if !al::valid(h) {
        return Err("not an allocator; the default allocator is unchanged");
    }
    Thread::current().change_icvs(|i| i.def_allocator = h);
    Ok(())
}

pub fn cancellation() -> bool {
    Runtime::get().settings().globals.cancellation
}

/// cancel-var (`OMP_CANCELLATION`), copied out of the settings when the runtime starts, for
/// the tests at every task start, cancellation point and cancellable barrier: one load, no
/// runtime lookup. False before the runtime has started, when nothing can have been
/// cancelled yet (those callers are threads of a team, which exist only once it started).
// A std atomic even under loom (like the other settings copies here): not part of any model.
static CANCELLATION_ON: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether cancellation is enabled (see [`CANCELLATION_ON`]); without it no construct is
/// ever cancelled, so every other cancellation test can be skipped.
#[inline]
pub(crate) fn cancellation_on() -> bool {
    // Relaxed: written once, while the runtime starts, before any thread can request or
    // test a cancellation (both go through `Runtime::get`, which waits for the start).
    CANCELLATION_ON.load(std::sync::atomic::Ordering::Relaxed)
}

/// Called once by the runtime's start with the settings' cancel-var.
pub(crate) fn set_cancellation_on(v: bool) {
    // Relaxed: see `cancellation_on`.
    CANCELLATION_ON.store(v, std::sync::atomic::Ordering::Relaxed);
}

/// target-offload-var: set when the runtime starts, and by `kmp_set_defaults` afterwards.
static TARGET_OFFLOAD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(1);

/// target-offload-var (0 disabled, 1 default, 2 mandatory), the runtime started first.
pub fn target_offload() -> i32 {
    Runtime::get();
    // Relaxed: a setting, read on its own.
    TARGET_OFFLOAD.load(std::sync::atomic::Ordering::Relaxed)
}

pub(crate) fn set_target_offload(v: i32) {
    // Relaxed: see `target_offload`.
    TARGET_OFFLOAD.store(v, std::sync::atomic::Ordering::Relaxed);
}

pub fn max_task_priority() -> i32 {
    Runtime::get().settings().globals.max_task_priority
}

/// Seconds on a monotonic clock.
pub fn wtime() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The clock's resolution in seconds.
pub fn wtick() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9).max(1e-9)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::team::parallel;

    #[test]
    fn levels_and_ancestors() {
        // Runs in its own thread: a fresh initial thread with its own ICVs.
        std::thread::spawn(|| {
            set_max_active_levels(3).unwrap();
            assert_eq!(level(), 0);
            assert_eq!(team_size(0), 1);
            assert_eq!(ancestor_thread_num(1), -1);
            parallel(Some(2), |t1| {
                parallel(Some(3), |t2| {
                    assert_eq!(level(), 2);
                    assert_eq!(active_level(), 2);
                    assert_eq!(ancestor_thread_num(0), 0);
                    assert_eq!(ancestor_thread_num(1), t1 as i32);
                    assert_eq!(ancestor_thread_num(2), t2 as i32);
                    assert_eq!((team_size(0), team_size(1), team_size(2)), (1, 2, 3));
                    assert_eq!(team_size(3), -1);
                });
            });
            set_max_active_levels(1).unwrap();
            parallel(Some(2), |_| {
                parallel(Some(2), |_| {
                    assert_eq!((level(), active_level(), num_threads()), (2, 1, 1));
                });
            });
            assert!(set_num_threads(0).is_err());
            assert!(set_schedule(9, 1).is_err());
            set_schedule(2 | crate::icv::SCHED_MONOTONIC, 5).unwrap();
            assert_eq!(schedule(), (2 | crate::icv::SCHED_MONOTONIC, 5));
            // The monotonic bit of static is reported when it was given, not otherwise.
            set_schedule(1 | crate::icv::SCHED_MONOTONIC, 0).unwrap();
            assert_eq!(schedule(), (1 | crate::icv::SCHED_MONOTONIC, 0));
            set_schedule(1, 0).unwrap();
            assert_eq!(schedule(), (1, 0));
            // Kinds other than static report chunk 1 when none was given; static_steal as
            // dynamic.
            for kind in [2, 3, 4, 101] {
                set_schedule(kind, 0).unwrap();
                assert_eq!(schedule(), (kind, 1), "kind {kind}");
            }
            set_schedule(102, 0).unwrap();
            assert_eq!(schedule(), (2, 1));
            set_schedule(102, 14).unwrap();
            assert_eq!(schedule(), (2, 14));
        })
        .join()
        .unwrap();
    }
}
