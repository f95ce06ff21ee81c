//! Worksharing constructs: static and dispatched loops, ordered, and the bookkeeping that lets
//! several `nowait` loops be in flight in one team.

pub mod cancel;
pub mod dispatch;
pub mod doacross;
pub mod reduction;
pub mod shared;
pub(crate) mod state;
pub mod static_sched;

use std::any::Any;
use std::ffi::c_void;
use std::sync::Arc;

pub use shared::{Shared, SharedState};

use crate::lock::CriticalName;
use crate::thread::Thread;
pub use dispatch::Chunk;
pub(crate) use dispatch::strip_modifiers;
use oxiomp_instrument::{
    ChunkOf, Event, Meet, MeetKind, MutexOp, SyncPoint, ToolEvent, mutex_kind, sync_kind,
};
pub use reduction::{Method, ReduceFn};
pub use static_sched::StaticChunk;

/// `sched_type` values of `distribute` (dist_schedule static chunked / unchunked).
const DISTRIBUTE_CHUNKED: i32 = 91;
const DISTRIBUTE: i32 = 92;
/// `kmp_sch_static`, a static loop in blocks.
const STATIC: i32 = 34;

/// What a static worksharing construct is, for the state it records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StaticKind {
    Loop,
    Sections,
    Distribute,
}

impl StaticKind {
    /// From the `ident_t` flags clang passes to static init/fini (0x400 sections, 0x800
    /// distribute).
    pub fn from_ident_flags(flags: i32) -> StaticKind {
        if flags & 0x400 != 0 {
            StaticKind::Sections
        } else if flags & 0x800 != 0 {
            StaticKind::Distribute
        } else {
            StaticKind::Loop
        }
    }
}

/// `__kmpc_for_static_init_*`: the calling thread's part of a static loop. `distribute`
/// schedules split the loop over the teams of the league instead of the threads of the team.
/// `ident`: the construct's `ident_t` (its source location names it in a trace), or 0.
#[allow(clippy::too_many_arguments)]
pub fn static_init(
    th: Thread,
    what: StaticKind,
    ident: usize,
    sched: i32,
    lb: i128,
    ub: i128,
    incr: i128,
    chunk: i128,
) -> StaticChunk {
    let base = strip_modifiers(sched);
    let (tid, nth) = match base {
        DISTRIBUTE | DISTRIBUTE_CHUNKED => (th.team().team_num as u32, th.team().num_teams.max(1) as u32),
        _ => (th.tid(), th.team().nthreads),
    };
    let chunked = is_chunked(sched);
    th.ws_state().next_construct();
    let c = static_sched::static_chunk(lb, ub, incr, chunked, chunk, tid, nth);
    end_left_loop(th);
    if let Some(kind) = what.meet_kind() {
        oxiomp_instrument::meet(|| loop_meet(kind, ident, sched, lb, ub, incr, chunk as i64));
    }
    oxiomp_instrument::worksharing_enter(what.worksharing(), ident, what.state());
    if oxiomp_instrument::tool_attached() {
        tell_static(what, &c, lb, ub, incr);
    }
    c
}

/// Whether static schedule `sched` (`sched_type`, modifiers included) deals out chunks of
/// the size the loop gives (rather than one balanced block per thread).
pub fn is_chunked(sched: i32) -> bool {
    matches!(strip_modifiers(sched), 33 | 65 | DISTRIBUTE_CHUNKED | 45)
}

/// What a tool is told as the calling thread begins its part `c` of a static construct from
/// `lb` to `ub` by steps of `incr`: the construct with its iteration count, then (when it has
/// iterations) its first chunk, or for `sections` the dispatch of its sections.
#[cold]
#[inline(never)]
fn tell_static(what: StaticKind, c: &StaticChunk, lb: i128, ub: i128, incr: i128) {
    use oxiomp_instrument::work_kind;
    let count = static_sched::trip_count(lb, ub, incr).min(u64::MAX as u128) as u64;
    let kind = match what {
        StaticKind::Loop => work_kind::LOOP_STATIC,
        StaticKind::Sections => work_kind::SECTIONS,
        StaticKind::Distribute => work_kind::DISTRIBUTE,
    };
    oxiomp_instrument::tool(|| ToolEvent::Work { kind, begin: true, count });
    if count == 0 {
        return;
    }
    if what == StaticKind::Sections {
        oxiomp_instrument::tool(|| ToolEvent::Section);
    } else {
        let of = if what == StaticKind::Distribute { ChunkOf::Distribute } else { ChunkOf::Loop };
        oxiomp_instrument::tool(|| static_chunk_event(c, ub, incr, of));
    }
}

/// What a tool is told of the calling thread's first chunk `c` of a static loop ending at `ub`
/// by steps of `incr` (none if the thread has no iteration: zero iterations).
fn static_chunk_event(c: &StaticChunk, ub: i128, incr: i128, of: ChunkOf) -> ToolEvent {
    let last = if incr > 0 { c.upper.min(ub) } else { c.upper.max(ub) };
    let n = if incr == 0 { 1 } else { ((last - c.lower) / incr + 1).max(0) };
    ToolEvent::Chunk { start: c.lower as u64, iterations: n as u64, of }
}

/// The meeting of a loop (or sections handed out as one) from `lb` to `ub` by `incr`, as the
/// run-time checks compare it.
fn loop_meet(kind: MeetKind, ident: usize, sched: i32, lb: i128, ub: i128, incr: i128, chunk: i64) -> Meet {
    Meet { kind, ident, lower: lb as i64, upper: ub as i64, stride: incr as i64, sched, chunk, code: 0 }
}

/// A static loop whose iterations the program's own code divides among the team, of which
/// the runtime knows neither bounds nor schedule (gcc's 5.0 loop start without a first
/// chunk, for the loop's task reductions or scratch block): the calling thread enters its
/// part as for any static loop (a tool is told the loop with a count of 0, unknown), and
/// leaves it through [`dispatch_deinit`]. The threads meet it, for the run-time checks, as a
/// loop over `lb..=ub` by `incr` (what the program passed).
pub fn static_init_unbounded(th: Thread, ident: usize, lb: i128, ub: i128, incr: i128) {
    end_left_loop(th);
    let ws = th.ws_state();
    ws.next_construct();
    ws.replace_static_open(true);
    oxiomp_instrument::meet(|| loop_meet(MeetKind::Loop, ident, STATIC, lb, ub, incr, 0));
    oxiomp_instrument::worksharing_enter(
        oxiomp_instrument::Worksharing::ForStatic,
        ident,
        oxiomp_instrument::State::StaticForChunk,
    );
    oxiomp_instrument::tool(|| ToolEvent::Work {
        kind: oxiomp_instrument::work_kind::LOOP_STATIC,
        begin: true,
        count: 0,
    });
}

/// The calling thread won a `single` whose block's end the compiler's code does not mark
/// (gcc's: no call follows the block but the construct's barrier, if any): the block is
/// traced, and told to a tool, from here until the thread next meets a barrier or a
/// worksharing construct or its implicit task ends ([`end_unmarked_single`]), which is the
/// block's end exactly unless the construct is `nowait`. The caller has ended the thread's
/// previous unmarked block before the construct's meeting.
pub fn single_begin_unmarked(th: Thread, ident: usize) {
    th.ws_state().replace_single_open(true);
    oxiomp_instrument::worksharing_enter(
        oxiomp_instrument::Worksharing::Single,
        ident,
        oxiomp_instrument::State::Single,
    );
}

/// Ends the calling thread's unmarked `single` block, if one is open (see
/// [`single_begin_unmarked`]).
#[inline]
pub fn end_unmarked_single(th: Thread) {
    if th.ws_state().replace_single_open(false) {
        oxiomp_instrument::worksharing_leave(
            oxiomp_instrument::State::Single,
            oxiomp_instrument::Worksharing::Single,
        );
    }
}

/// `__kmpc_for_static_fini`.
pub fn static_fini(_th: Thread, what: StaticKind) {
    oxiomp_instrument::worksharing_leave(what.state(), what.worksharing());
}

impl StaticKind {
    /// The thread's state in its part of the construct.
    fn state(self) -> oxiomp_instrument::State {
        match self {
            StaticKind::Loop => oxiomp_instrument::State::StaticForChunk,
            StaticKind::Sections => oxiomp_instrument::State::Section,
            StaticKind::Distribute => oxiomp_instrument::State::Distribute,
        }
    }

    /// What the run-time checks compare threads' arrivals as (a `distribute` is the league's,
    /// not a team's).
    fn meet_kind(self) -> Option<MeetKind> {
        match self {
            StaticKind::Loop => Some(MeetKind::Loop),
            StaticKind::Sections => Some(MeetKind::Sections),
            StaticKind::Distribute => None,
        }
    }

    fn worksharing(self) -> oxiomp_instrument::Worksharing {
        match self {
            StaticKind::Loop => oxiomp_instrument::Worksharing::ForStatic,
            StaticKind::Sections => oxiomp_instrument::Worksharing::Sections,
            StaticKind::Distribute => oxiomp_instrument::Worksharing::Distribute,
        }
    }
}

/// `__kmpc_dist_for_static_init_*` (`distribute parallel for` in one call): the league's
/// teams split the loop (balanced blocks), then the team's threads split their team's block
/// by `sched`. Returns the thread's chunk and the upper bound of the team's block.
pub fn dist_for_static_init(
    th: Thread,
    ident: usize,
    sched: i32,
    lb: i128,
    ub: i128,
    incr: i128,
    chunk: i128,
) -> (StaticChunk, i128) {
    let team = th.team();
    let t = static_sched::static_chunk(
        lb,
        ub,
        incr,
        false,
        0,
        team.team_num as u32,
        team.num_teams.max(1) as u32,
    );
    // Also for a team whose block is empty: the thread is in the loop (its state entered)
    // until the `__kmpc_for_static_fini` that follows, as for any static loop.
    let mut c = static_init(th, StaticKind::Loop, ident, sched, t.lower, t.upper, incr, chunk);
    c.last &= t.last;
    (c, t.upper)
}

/// `__kmpc_team_static_init_*`: chunks of the loop dealt round-robin to the league's teams.
pub fn team_static_init(th: Thread, lb: i128, ub: i128, incr: i128, chunk: i128) -> StaticChunk {
    let team = th.team();
    static_sched::static_chunk(
        lb,
        ub,
        incr,
        true,
        chunk.max(1),
        team.team_num as u32,
        team.num_teams.max(1) as u32,
    )
}

/// `__kmpc_dispatch_init_*`. Returns false (and starts nothing) for an unknown schedule.
/// `ident`: as for [`static_init`].
pub fn dispatch_init(th: Thread, ident: usize, sched: i32, lb: i128, ub: i128, st: i128, chunk: i64) -> bool {
    end_left_loop(th);
    let ws = th.ws_state();
    ws.replace_loop_open(true);
    // Sections handed out as a loop have no initialisation state (ovni's model has none).
    let sections = ws.sections_open();
    oxiomp_instrument::meet(|| {
        let kind = if sections { MeetKind::Sections } else { MeetKind::Loop };
        loop_meet(kind, ident, sched, lb, ub, st, chunk)
    });
    if sections {
        oxiomp_instrument::worksharing_begin(oxiomp_instrument::Worksharing::Sections, ident);
    } else {
        oxiomp_instrument::worksharing_enter(
            oxiomp_instrument::Worksharing::ForDynamic,
            ident,
            oxiomp_instrument::State::DynamicForInit,
        );
    }
    let ok = match dispatch::kind_of(sched, th.icvs().run_sched) {
        Some((kind, over)) => {
            // The loop's schedule and count, which the trace's event does not carry.
            oxiomp_instrument::tool(|| ToolEvent::Work {
                kind: if sections {
                    oxiomp_instrument::work_kind::SECTIONS
                } else {
                    dispatch::work_kind(kind, th.team().nthreads)
                },
                begin: true,
                count: static_sched::trip_count(lb, ub, if st == 0 { 1 } else { st }) as u64,
            });
            let team = th.team();
            let (tid, nth) = (th.tid(), team.nthreads);
            let (kind, chunk) = dispatch::simd_adjust(sched, kind, over, chunk);
            ws.next_construct();
            ws.with_cursor(|c| {
                team.ring().init(c, kind, lb, ub, if st == 0 { 1 } else { st }, chunk, tid, nth)
            });
            true
        }
        None => false,
    };
    if !sections {
        oxiomp_instrument::dynamic_for_init_exit();
    }
    ok
}

/// The first `__kmpc_next_section` of a sections construct of `n` sections: they are handed
/// out like a `dynamic,1` loop over `0..n`, traced as sections.
pub fn sections_dispatch_init(th: Thread, ident: usize, n: i32) {
    end_left_loop(th);
    th.set_sections_open(true);
    dispatch_init(th, ident, 35, 0, n as i128 - 1, 1, 1);
}

/// How the thread's dispatched loop is traced: its construct and the state of each chunk
/// (sections handed out by `__kmpc_next_section` are chunks of such a loop).
#[inline(always)]
fn loop_trace(ws: &state::ThreadState) -> (oxiomp_instrument::Worksharing, oxiomp_instrument::State) {
    use oxiomp_instrument::{State, Worksharing};
    if ws.sections_open() {
        (Worksharing::Sections, State::Section)
    } else {
        (Worksharing::ForDynamic, State::DynamicForChunk)
    }
}

/// A dispatched loop this thread left without draining it (cancellation skips the drain and
/// `__kmpc_dispatch_deinit`) ends, for the trace, where the next worksharing construct begins;
/// so does a `single` block whose end the compiler's code does not mark.
#[inline]
pub(crate) fn end_left_loop(th: Thread) {
    let ws = th.ws_state();
    end_unmarked_single(th);
    if ws.replace_static_open(false) {
        static_fini(th, StaticKind::Loop);
    }
    if ws.replace_chunk_open(false) {
        oxiomp_instrument::leave_with(|| loop_trace(ws).1);
    }
    if ws.replace_loop_open(false) {
        oxiomp_instrument::worksharing_end(loop_trace(ws).0);
    }
}

/// `__kmpc_dispatch_next_*`: the next chunk, or None when the thread is done with the loop.
#[inline]
pub fn dispatch_next(th: Thread) -> Option<Chunk> {
    let ws = th.ws_state();
    let was_open = ws.replace_chunk_open(false);
    let c = ws.with_cursor(|cur| th.team().ring().next(cur, th.tid()));
    // The previous chunk ends where the next begins (or the thread's part of the loop ends),
    // at one clock read taken once the next chunk is fetched: the fetch (an atomic add) is
    // in the previous chunk's state.
    if let Some(c) = &c {
        oxiomp_instrument::tool(|| ToolEvent::Chunk {
            start: c.lower as u64,
            iterations: c.iterations(),
            of: ChunkOf::Loop,
        });
        ws.replace_chunk_open(true);
        if was_open {
            oxiomp_instrument::record_with(|| {
                let s = loop_trace(ws).1;
                [Event::Leave(s), Event::Enter(s)]
            });
        } else {
            oxiomp_instrument::record_with(|| [Event::Enter(loop_trace(ws).1)]);
        }
    } else {
        let ending = ws.replace_loop_open(false);
        match (was_open, ending) {
            (true, true) => oxiomp_instrument::record_checked_with(|| {
                let (w, s) = loop_trace(ws);
                [Event::Leave(s), Event::WorksharingEnd(w)]
            }),
            (true, false) => oxiomp_instrument::record_with(|| [Event::Leave(loop_trace(ws).1)]),
            (false, true) => {
                oxiomp_instrument::record_checked_with(|| [Event::WorksharingEnd(loop_trace(ws).0)])
            }
            (false, false) => {}
        }
    }
    c
}

/// `__kmpc_dispatch_deinit`: the thread is done with its loop (also after a cancellation).
pub fn dispatch_deinit(th: Thread) {
    end_left_loop(th);
    th.ws_state().with_cursor(|c| th.team().ring().leave(c));
}

/// `__kmpc_ordered`. A tool is told of a mutex named by the team (the loop's ordered
/// sections exclude each other).
pub fn ordered_enter(th: Thread) {
    let id = th.team() as *const crate::team::Team as usize;
    oxiomp_instrument::mutex(MutexOp::Acquire, mutex_kind::ORDERED, id);
    th.ws_state().with_cursor(|c| th.team().ring().ordered_enter(c));
    oxiomp_instrument::mutex(MutexOp::Acquired, mutex_kind::ORDERED, id);
}

/// gcc's `GOMP_ordered_start` (see `Ring::ordered_enter_in_chunk`). A tool is told as for
/// [`ordered_enter`].
pub fn ordered_enter_in_chunk(th: Thread) {
    let id = th.team() as *const crate::team::Team as usize;
    oxiomp_instrument::mutex(MutexOp::Acquire, mutex_kind::ORDERED, id);
    th.ws_state().with_cursor(|c| th.team().ring().ordered_enter_in_chunk(c));
    oxiomp_instrument::mutex(MutexOp::Acquired, mutex_kind::ORDERED, id);
}

/// The thread is done with its chunk of an ordered loop that gcc's code runs (see
/// `Ring::ordered_chunk_done`).
pub fn ordered_chunk_done(th: Thread) {
    th.ws_state().with_cursor(|c| th.team().ring().ordered_chunk_done(c));
}

/// `__kmpc_end_ordered`.
pub fn ordered_exit(th: Thread) {
    th.ws_state().with_cursor(|c| th.team().ring().ordered_exit(c));
    let id = th.team() as *const crate::team::Team as usize;
    oxiomp_instrument::mutex(MutexOp::Released, mutex_kind::ORDERED, id);
}

/// `__kmpc_dispatch_fini_*`: one iteration of an ordered loop is done.
pub fn dispatch_fini(th: Thread) {
    th.ws_state().with_cursor(|c| th.team().ring().iteration_done(c));
}

/// `__kmpc_reduce[_nowait]`: see [`reduction`]. With a tool attached, every thread combines
/// its own values into the originals under `lock` (the compiler's lock for the reduction),
/// which a tool sees as a critical section around a reduction region (the tree reads other
/// threads' partial results, and the atomic method updates them, ordered by nothing a tool
/// is told of).
///
/// # Safety
/// `data` is the calling thread's reduce list for `func`, valid until this returns.
pub unsafe fn reduce(
    th: Thread,
    flags: i32,
    data: *mut c_void,
    func: ReduceFn,
    lock: &CriticalName,
) -> Result<Method, crate::error::Misuse> {
    if oxiomp_instrument::tool_attached() {
        return reduce_told(th, lock);
    }
    // SAFETY: forwarded from the caller.
    Ok(unsafe { th.team().exchange().reduce(th.tid(), flags, data, func) })
}

/// [`reduce`] with a tool attached: the thread combines under `lock`, released by
/// [`end_reduce`].
#[cold]
#[inline(never)]
fn reduce_told(th: Thread, lock: &CriticalName) -> Result<Method, crate::error::Misuse> {
    let id = lock as *const CriticalName as usize;
    oxiomp_instrument::mutex(MutexOp::Acquire, mutex_kind::CRITICAL, id);
    lock.enter(th.gtid())?;
    oxiomp_instrument::mutex(MutexOp::Acquired, mutex_kind::CRITICAL, id);
    oxiomp_instrument::tool(|| ToolEvent::Sync { kind: sync_kind::REDUCTION, point: SyncPoint::Begin });
    Ok(Method::Combine)
}

/// `__kmpc_end_reduce[_nowait]`: after the combination [`reduce`] asked for; releases the
/// lock if `reduce` took it (a tool is attached).
pub fn end_reduce(th: Thread, lock: &CriticalName) -> Result<(), crate::error::Misuse> {
    if oxiomp_instrument::tool_attached() && lock.held_by(th.gtid()) {
        return end_reduce_told(th, lock);
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn end_reduce_told(th: Thread, lock: &CriticalName) -> Result<(), crate::error::Misuse> {
    oxiomp_instrument::tool(|| ToolEvent::Sync { kind: sync_kind::REDUCTION, point: SyncPoint::End });
    lock.exit(th.gtid())?;
    let id = lock as *const CriticalName as usize;
    oxiomp_instrument::mutex(MutexOp::Released, mutex_kind::CRITICAL, id);
    Ok(())
}

/// `__kmpc_copyprivate_light`: the thread that ran the single passes a non-null `data`; after
/// one barrier every thread gets that pointer back (the caller copies, and brings its own
/// barrier before the source may go away).
pub fn copyprivate_light(th: Thread, data: *mut c_void) -> *mut c_void {
    let team = th.team();
    if !data.is_null() {
        team.exchange().publish_copy(data);
    }
    team.barrier(th);
    // In a cancelled region the barrier may have completed without the thread that ran the
    // single: the caller copies from its own list then (nothing changes).
    if crate::query::cancellation_on() && team.last_barrier_cancelled(th) {
        return data;
    }
    team.exchange().copy_source()
}

/// `__kmpc_copyprivate`: the thread that ran the single (`didit`) hands its list to the others,
/// who copy from it with `func(own, source)`; two barriers keep the source alive.
///
/// # Safety
/// `data` is the calling thread's list, `func` copies between lists of that shape.
pub unsafe fn copyprivate(th: Thread, data: *mut c_void, func: ReduceFn, didit: bool) {
    let team = th.team();
    if didit {
        team.exchange().publish_copy(data);
    }
    team.barrier(th);
    // In a cancelled region the barrier may have completed without the thread that ran the
    // single (it left the region): there is nothing to copy then.
    let cancelled = crate::query::cancellation_on() && team.last_barrier_cancelled(th);
    if !didit && !cancelled {
        // SAFETY: the source list stays alive until the second barrier.
        unsafe { func(data, team.exchange().copy_source()) };
    }
    team.barrier(th);
}

/// `__kmpc_cancel`: true if the construct of `kind` is now cancelled (cancellation enabled).
pub fn cancel(th: Thread, kind: i32) -> bool {
    if !crate::query::cancellation_on() {
        return false;
    }
    match kind {
        cancel::PARALLEL => th.team().cancel_region(th),
        cancel::LOOP | cancel::SECTIONS => th.team().cancel_worksharing(th.ws_state().constructs()),
        cancel::TASKGROUP => return crate::task::cancel_taskgroup(th),
        _ => return false,
    }
    true
}

/// `__kmpc_cancellationpoint`: whether the construct of `kind` was cancelled.
pub fn cancellation_point(th: Thread, kind: i32) -> bool {
    if !crate::query::cancellation_on() {
        return false;
    }
    match kind {
        cancel::PARALLEL => th.team().region_cancelled_for(th),
        cancel::LOOP | cancel::SECTIONS => th.team().worksharing_cancelled(th.ws_state().constructs()),
        cancel::TASKGROUP => crate::task::taskgroup_cancelled(th),
        _ => false,
    }
}

/// `__kmpc_cancel_barrier`: a barrier (a tool told it is one of `kind`); true on every thread
/// leaving it if the region was cancelled (see `barrier`'s cancellation protocol).
pub fn cancel_barrier(th: Thread, kind: u32) -> bool {
    if !crate::query::cancellation_on() {
        th.team().barrier_as(th, kind);
        return false;
    }
    th.team().cancel_barrier_as(th, kind)
}

/// `__kmpc_doacross_init`: joins (or, first of the team, creates) the doacross state of the
/// loop about to start.
pub fn doacross_init(th: Thread, dims: &[doacross::Dim]) {
    let key = th.ws_state().constructs();
    let made = th.team().shared_join(key, Shared::Doacross, || doacross::Doacross::new(dims));
    // Made above as a `Doacross`, the only state of this kind.
    let d = Arc::downcast::<doacross::Doacross>(made).unwrap_or_else(|_| unreachable!());
    th.ws_state().set_doacross(key, d);
}

/// `__kmpc_doacross_wait`, at `ident_t` `ident` (0: none).
pub fn doacross_wait(th: Thread, vec: &[i64], ident: usize) {
    th.ws_state().with_doacross(|d| d.wait(vec, ident));
}

/// `__kmpc_doacross_post`.
pub fn doacross_post(th: Thread, vec: &[i64]) {
    th.ws_state().with_doacross(|d| d.post(vec));
}

/// The number of dimensions of the thread's current doacross loop.
pub fn doacross_dims(th: Thread) -> usize {
    th.ws_state().with_doacross(|d| d.ndims()).unwrap_or(0)
}

/// `__kmpc_doacross_fini`.
pub fn doacross_fini(th: Thread) {
    if let Some(key) = th.ws_state().take_doacross() {
        th.team().shared_leave(key, Shared::Doacross);
    }
}

/// State the compiler layer shares among the members of the calling thread's latest
/// worksharing construct (gcc's task reductions and scratch memory): the first member to
/// arrive makes it with `make`, under the team's lock, so every other one gets it made. The
/// thread holds it until [`shared_leave`] (or until it joins another's).
pub fn shared_join<T: Any + Send + Sync>(th: Thread, make: impl FnOnce() -> T) -> Arc<T> {
    let key = th.ws_state().constructs();
    let made = th.team().shared_join(key, Shared::Abi, || Arc::new(make()));
    if let Some((k, _)) = th.ws_state().replace_abi(key, made.clone()) {
        th.team().shared_leave(k, Shared::Abi);
    }
    Arc::downcast::<T>(made).unwrap_or_else(|_| {
        crate::fatal(format_args!("worksharing construct {key}: its members disagree on its kind"))
    })
}

/// The compiler layer's state of the calling thread's current construct, if it joined one
/// of type `T`.
pub fn shared_state<T: Any + Send + Sync>(th: Thread) -> Option<Arc<T>> {
    th.ws_state().abi().and_then(|s| Arc::downcast::<T>(s).ok())
}

/// The calling thread is done with its construct's shared state; the last member drops it.
pub fn shared_leave(th: Thread) {
    if let Some(key) = th.ws_state().take_abi() {
        th.team().shared_leave(key, Shared::Abi);
    }
}

/// A worksharing construct that hands out no work (gcc's `scope` with reductions) begins:
/// it counts as one of the implicit task's constructs, so its members agree on its number.
pub fn begin_construct(th: Thread) {
    th.ws_state().next_construct();
}
