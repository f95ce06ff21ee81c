//! The run-time correctness checks (`OXIOMP_CHECK=1`: report a mistake and abort; `warn`:
//! report it and go on). They are one more recorder of the instrument events: the engine
//! tells every construct a whole team must meet ([`Meet`]: a loop with its bounds, schedule
//! and chunk, `sections` with its count, `single`, a barrier, the end of the thread's part
//! of a region) and the checks compare each thread's arrivals with the first thread's
//! ([`records`], CIVL's model of a team). Off, each meeting point costs the engine one load
//! and a branch, as every instrumentation point does.
//!
//! Checked: threads of a team that meet different constructs in the same place of their
//! sequence (another construct, another location, a barrier one of them skips, a thread that
//! leaves the region while others wait at a construct), the same loop with other bounds,
//! schedule or chunk, `sections` with another count, and a worksharing construct nested in
//! another of the same team. A cancelled region is not checked from its cancellation on
//! (its threads skip constructs by design).

mod describe;
mod records;
mod thread;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use oxiomp_instrument::{
    Event, Meet, MeetKind, MutexOp, Recorder, ToolEvent, Worksharing, cancel_flags, mutex_kind, task_status,
};
use oxiomp_runtime::ForkLock;
use oxiomp_runtime::icv::CheckMode;

use describe::{Place, describe, ident_known, implied_by, is_ordered};
use records::{Mismatch, Records, THEN_BARRIER};
use thread::ThreadChecks;

use crate::symbolize::{Code, code_name};

/// Every team's records, by descriptor address, never freed (a team descriptor is reused region
/// after region). A team's entry begins afresh when its next region begins (all threads of
/// the last one have left it: the join waited for them). A [`ForkLock`]: a thread may hold it
/// when another forks, and the child must find it free (see [`after_fork_in_child`]).
static TEAMS: ForkLock<BTreeMap<usize, &'static Records>> = ForkLock::new(BTreeMap::new());

/// What the checks do on a mistake.
static MODE: OnceLock<CheckMode> = OnceLock::new();

/// A region the calling thread is a member of, innermost last.
struct Frame {
    team: &'static Records,
    /// The region's generation in the team's records.
    generation: u64,
    tid: u32,
    nthreads: u32,
    /// Constructs met so far in the region.
    seq: u64,
    /// The worksharing construct the thread is in, in this team.
    open: Option<(Meet, Place)>,
    /// The region's outlined function (0: not known).
    region: usize,
    /// The kind of the construct the thread met last in the region, until it meets another
    /// or a barrier.
    last: Option<MeetKind>,
    /// A gcc `single` the thread met and has not yet arrived at in the team's records, with
    /// its place: it arrives at the thread's next meeting, as one with the barrier if that is
    /// next (see [`THEN_BARRIER`]).
    pending: Option<(Meet, Place)>,
}

/// A lock a task set and has not unset.
#[derive(Clone, Copy)]
struct Held {
    /// The lock's address.
    lock: usize,
    /// The task that set it (its descriptor's address): an explicit task must unset it before
    /// it ends, an implicit one before its region ends.
    task: usize,
    /// Whether that task is explicit (counted in `task_locks_changed`). An explicit task's
    /// entry goes when the task ends (see `task_ends`): while it is here, the task is alive.
    explicit: bool,
    /// How many regions the thread was a member of when the task set it (at least 1): the
    /// innermost of them is the lock's region.
    depth: usize,
}

/// Installs the checks if `OXIOMP_CHECK` asks for them.
pub(crate) fn start() {
    let mode = oxiomp_runtime::Runtime::get().settings().globals.check;
    if mode == CheckMode::Off || MODE.set(mode).is_err() {
        return;
    }
    static CHECKER: Checker = Checker;
    oxiomp_instrument::install_checker(&CHECKER);
    register_fork_handlers();
}

/// Registers the fork handlers of the checks' shared state (once: `MODE` is set once).
fn register_fork_handlers() {
    // SAFETY: registers plain function pointers, run around every fork.
    unsafe { libc::pthread_atfork(Some(before_fork), Some(after_fork_in_parent), Some(after_fork_in_child)) };
}

/// `pthread_atfork` prepare handler: holds the teams' map across the fork, so that the child
/// gets it whole and free.
extern "C" fn before_fork() {
    TEAMS.hold_for_fork();
}

/// `pthread_atfork` parent handler: lets the map go.
extern "C" fn after_fork_in_parent() {
    // SAFETY: `before_fork` took it on this thread for this fork.
    unsafe { TEAMS.release_held() };
}

/// `pthread_atfork` child handler. The child's one thread starts afresh at level 0 (the
/// runtime forgets every team the parent's threads were in), so the checks forget them too:
/// the teams' records (whose rings and maps other threads of the parent may have been in the
/// middle of changing: left as they are, never freed) and this thread's frames. Constructs of
/// a region the child finishes from the parent's are not checked (it has no frame there).
extern "C" fn after_fork_in_child() {
    let mut teams = {
        // SAFETY: as in `after_fork_in_parent`.
        unsafe { TEAMS.release_held() };
        TEAMS.lock()
    };
    teams.clear();
    drop(teams);
    if let Some(tc) = ThreadChecks::get() {
        tc.last_team.set(None);
        if let (Ok(mut frames), Ok(mut held)) = (tc.frames.try_borrow_mut(), tc.held.try_borrow_mut()) {
            frames.clear();
            held.clear();
            tc.depth.set(0);
        }
    }
}

struct Checker;

impl Recorder for Checker {
    fn record(&self, events: &[Event]) {
        for e in events {
            match *e {
                Event::Meet(m) if m.kind == MeetKind::Ordered => ordered(m),
                Event::Meet(m) => arrive(m),
                Event::WorksharingBegin { kind: Worksharing::Single, ident } => {
                    let single = Meet::plain(MeetKind::Single, ident);
                    with_frame(|f| f.open = Some((single, Place::default())));
                }
                Event::WorksharingEnd(_) => with_frame(|f| f.open = None),
                Event::Tool(ToolEvent::ParallelBegin { team, .. }) => region_begins(team),
                Event::Tool(ToolEvent::ImplicitTaskBegin { team, index, size, initial: false }) => {
                    member_begins(team, index, size)
                }
                Event::Tool(ToolEvent::Mutex { op: MutexOp::Acquired, kind, wait_id }) if is_lock(kind) => {
                    acquired(wait_id)
                }
                Event::Tool(ToolEvent::Mutex { op: MutexOp::Released, kind, wait_id }) if is_lock(kind) => {
                    released(wait_id)
                }
                Event::Tool(ToolEvent::TaskSchedule {
                    prior,
                    status: task_status::COMPLETE | task_status::CANCEL | task_status::DETACH,
                    ..
                }) => task_ends(prior),
                Event::Tool(ToolEvent::Cancel { flags, .. })
                    if flags & (cancel_flags::PARALLEL | cancel_flags::LOOP | cancel_flags::SECTIONS)
                        != 0 =>
                {
                    with_frame(|f| {
                        f.team.stop();
                    })
                }
                _ => {}
            }
        }
    }

    fn mutex(&self, op: MutexOp, kind: u32, wait_id: usize) {
        match op {
            MutexOp::Acquired => self.lock_acquired(kind, wait_id),
            MutexOp::Released => self.lock_released(kind, wait_id),
            _ => {}
        }
    }

    fn lock_acquired(&self, kind: u32, lock: usize) {
        if is_lock(kind) {
            acquired(lock)
        }
    }

    fn lock_released(&self, kind: u32, lock: usize) {
        if is_lock(kind) {
            released(lock)
        }
    }
}

/// The records of `team`.
fn team_check(team: usize) -> &'static Records {
    let tc = ThreadChecks::get();
    if let Some((_, c)) = tc.and_then(|tc| tc.last_team.get()).filter(|(t, _)| *t == team) {
        return c;
    }
    let c = *TEAMS.lock().entry(team).or_insert_with(|| Box::leak(Box::default()));
    if let Some(tc) = tc {
        tc.last_team.set(Some((team, c)));
    }
    c
}

/// Runs `f` on the calling thread's innermost region, if it is in one.
fn with_frame(f: impl FnOnce(&mut Frame)) {
    if let Some(tc) = ThreadChecks::get()
        && let Ok(mut frames) = tc.frames.try_borrow_mut()
        && let Some(top) = frames.last_mut()
    {
        f(top)
    }
}

/// Whether OMPT mutex kind `kind` is a lock's (simple or nestable, set or tested).
fn is_lock(kind: u32) -> bool {
    matches!(
        kind,
        mutex_kind::LOCK | mutex_kind::TEST_LOCK | mutex_kind::NEST_LOCK | mutex_kind::TEST_NEST_LOCK
    )
}

/// The calling thread's current task set the lock at `lock`. A lock an untied task sets is
/// not followed: the task may go on, and unset it, on another thread.
///
/// The common case (an implicit task sets a lock inside a region) is a few loads and a push
/// that call nothing, so that the function saves no register: an uncontended lock's set and
/// unset cost a few nanoseconds, which the checks should not multiply. Anything else is a
/// tail call to [`acquired_slow`].
#[inline]
fn acquired(lock: usize) {
    if !try_hold(lock) {
        acquired_slow(lock)
    }
}

/// [`acquired`]'s common case: whether it was that case (and is done).
#[inline(always)]
fn try_hold(lock: usize) -> bool {
    let Some(tc) = ThreadChecks::peek() else { return false };
    let depth = tc.depth.get();
    if depth == 0 {
        return true;
    }
    let Some(th) = oxiomp_runtime::Thread::peek() else { return false };
    let task = oxiomp_runtime::task::current(th);
    if task.is_explicit() {
        return false;
    }
    let Ok(mut held) = tc.held.try_borrow_mut() else { return false };
    if held.len() == held.capacity() {
        return false;
    }
    held.push(Held {
        lock,
        task: task as *const oxiomp_runtime::task::Task as usize,
        explicit: false,
        depth,
    });
    true
}

/// [`acquired`] in full.
#[cold]
#[inline(never)]
fn acquired_slow(lock: usize) {
    let Some(tc) = ThreadChecks::get() else { return };
    let depth = tc.depth.get();
    if depth == 0 {
        return;
    }
    let task = oxiomp_runtime::task::current(oxiomp_runtime::Thread::current());
    let explicit = task.is_explicit();
    if explicit && !task.is_tied() {
        return;
    }
    let task = task as *const oxiomp_runtime::task::Task as usize;
    if let Ok(mut held) = tc.held.try_borrow_mut() {
        held.push(Held { lock, task, explicit, depth });
        if explicit {
            oxiomp_instrument::task_locks_changed(true);
        }
    }
}

/// The calling thread unset the lock at `lock`: by the task that set it, or else a mistake
/// (another task of the thread: the runtime refuses an unset on another thread). The common
/// case, the lock the thread's implicit task set last, unset by that task, calls nothing (as
/// in [`acquired`]); anything else is a tail call to [`released_slow`].
#[inline]
fn released(lock: usize) {
    if !try_unhold(lock) {
        released_slow(lock)
    }
}

/// [`released`]'s common case: whether it was that case (and is done).
#[inline(always)]
fn try_unhold(lock: usize) -> bool {
    let Some(tc) = ThreadChecks::peek() else { return false };
    let Some(th) = oxiomp_runtime::Thread::peek() else { return false };
    let task = oxiomp_runtime::task::current(th) as *const oxiomp_runtime::task::Task as usize;
    let Ok(mut held) = tc.held.try_borrow_mut() else { return false };
    match held.last() {
        Some(h) if h.lock == lock && h.task == task && !h.explicit => {
            held.pop();
            true
        }
        _ => false,
    }
}

/// [`released`] in full.
#[cold]
#[inline(never)]
fn released_slow(lock: usize) {
    let Some(tc) = ThreadChecks::get() else { return };
    let h = {
        let Ok(mut held) = tc.held.try_borrow_mut() else { return };
        let Some(i) = held.iter().rposition(|h| h.lock == lock) else { return };
        held.remove(i)
    };
    if h.explicit {
        oxiomp_instrument::task_locks_changed(false);
    }
    let current = oxiomp_runtime::task::current(oxiomp_runtime::Thread::current());
    if h.task != current as *const oxiomp_runtime::task::Task as usize {
        unset_by_another(tc, h, current.routine_addr());
    }
}

/// Reports lock `h` unset by another task of the thread that set it, whose routine is
/// `routine` (0: its implicit task).
#[cold]
fn unset_by_another(tc: &ThreadChecks, h: Held, routine: usize) {
    let Ok(frames) = tc.frames.try_borrow() else { return };
    let Some(f) = frames.get(h.depth - 1) else { return };
    let text = format!(
        "thread {} unset the lock {:#x} in {}, which {} set: a lock must be unset by the task that set it",
        f.tid,
        h.lock,
        task_words(routine, "its implicit task"),
        task_words(setter_routine(&h), "its implicit task")
    );
    report(f.team, text);
}

/// The routine of the task that set `h` (0: an implicit task).
fn setter_routine(h: &Held) -> usize {
    if !h.explicit {
        return 0;
    }
    // SAFETY: an explicit task's entry is removed when the task ends (`task_ends`, told of
    // every task's end while an explicit task holds a lock: `task_locks_changed`), so the
    // task of an entry still held is alive.
    unsafe { (*(h.task as *const oxiomp_runtime::task::Task)).routine_addr() }
}

/// "a task at <place>" for an explicit task's routine, `implicit` for 0.
fn task_words(routine: usize, implicit: &str) -> String {
    match routine {
        0 => implicit.to_string(),
        r => format!("a task at {}", routine_place(r)),
    }
}

/// Where an explicit task's routine is.
fn routine_place(routine: usize) -> String {
    code_name(routine, Code::Entry)
        .unwrap_or_else(|| "an unknown location (build with -g for file and line)".to_string())
}

/// A team's region begins (on its primary thread, before any member runs).
fn region_begins(team: usize) {
    team_check(team).begin();
}

/// Thread `tid` of a team of `size` begins its part of the team's region.
fn member_begins(team: usize, tid: u32, size: u32) {
    // SAFETY: the event names the team the calling thread begins its part of, alive until
    // every member has left the region.
    let region = unsafe { (*(team as *const oxiomp_runtime::Team)).entry };
    let team = team_check(team);
    let generation = team.generation();
    if let Some(tc) = ThreadChecks::get()
        && let Ok(mut frames) = tc.frames.try_borrow_mut()
    {
        frames.push(Frame {
            team,
            generation,
            tid,
            nthreads: size,
            seq: 0,
            open: None,
            region,
            last: None,
            pending: None,
        });
        tc.depth.set(frames.len());
    }
}

unsafe extern "C" {
    /// `shim/caller.c`: the return address the calling thread's last noted entry (a barrier,
    /// a loop's start, `single`, `ordered`) was called from, 0 if none since the last take;
    /// cleared.
    fn oxiomp_take_caller() -> usize;
}

/// The noted return address of the entry whose construct the calling thread meets (0: none
/// noted). Taken at every construct met, so that an address never outlives its entry's
/// construct (an entry that notes none then finds 0); kept for the hang watch, which sees the
/// meeting after the checks ([`meet_caller`]).
fn noted_caller() -> usize {
    // SAFETY: reads and clears a word of the calling thread's own TLS.
    let noted = unsafe { oxiomp_take_caller() };
    if let Some(tc) = ThreadChecks::get() {
        tc.taken.set(noted);
    }
    noted
}

/// The noted return address of the construct the calling thread meets now (the checks took
/// it if they are on, for this meeting: they see every meeting before the hang watch does),
/// 0 if none or if it lies in this library (the program's call was a tail call: its
/// region's function names the place).
pub(crate) fn meet_caller() -> usize {
    let noted = match MODE.get() {
        Some(_) => ThreadChecks::get().map_or(0, |tc| tc.taken.replace(0)),
        // SAFETY: as in `noted_caller`.
        None => unsafe { oxiomp_take_caller() },
    };
    if crate::ompt::in_this_library(noted) { 0 } else { noted }
}

/// The code address a construct's place is named by when its `ident_t` has no location: the
/// noted return address (0 if it lies in this library: the program's call was a tail call,
/// and the region's function names the place), or else one found by unwinding.
fn caller_code(noted: usize) -> usize {
    match noted {
        0 => crate::ompt::caller_in_task(),
        a if crate::ompt::in_this_library(a) => 0,
        a => a,
    }
}

/// The calling thread arrives at `meet`.
fn arrive(meet: Meet) {
    let noted = noted_caller();
    let Some(tc) = ThreadChecks::get() else { return };
    {
        let Ok(mut frames) = tc.frames.try_borrow_mut() else { return };
        let depth = frames.len();
        let Some(f) = frames.last_mut() else { return };
        // A construct of gcc's code (no `ident_t`) implies no barrier here: whether a gcc loop
        // or `sections` ends with one is not part of its meeting (the `nowait` form meets the
        // same), so the barrier after it is compared on its own. (A gcc `single` and the
        // barrier after it are joined below instead.)
        let last = std::mem::replace(&mut f.last, (meet.ident != 0).then_some(meet.kind));
        if meet.kind == MeetKind::Barrier && last.is_some() && implied_by(meet.ident) == last {
            // The implied barrier of the construct the thread met last: every thread that met
            // that construct (checked there) meets this barrier next, so the barrier is not
            // a point of its own (one arrival less per `for`, `sections` or `single`).
            f.last = None;
            return;
        }
        let region = f.region;
        // A region's end is named by the region's function (`describe`), not by a caller.
        let place = || {
            let named = ident_known(meet.ident) || meet.kind == MeetKind::RegionEnd;
            Place { code: if named { 0 } else { caller_code(noted) }, region }
        };
        if matches!(meet.kind, MeetKind::Loop | MeetKind::Sections | MeetKind::Single) {
            if let Some((outer, outer_place)) = f.open {
                let text = format!(
                    "thread {} reached {} inside {} of the same team: worksharing constructs may not be \
                     nested in one team",
                    f.tid,
                    describe(&meet, place()),
                    describe(&outer, outer_place)
                );
                report(f.team, text);
            }
            if meet.kind != MeetKind::Single {
                f.open = Some((meet, place()));
            }
        }
        if let Some((single, at)) = f.pending.take() {
            if meet.kind == MeetKind::Barrier && meet.ident == 0 {
                team_arrive(f, Meet { chunk: THEN_BARRIER, ..single }, || at);
                return;
            }
            team_arrive(f, single, || at);
        }
        if meet.kind == MeetKind::Single && meet.ident == 0 {
            // gcc's `single`: its implied barrier is a plain `GOMP_barrier` call, which may
            // come next; the two are then one arrival (see `THEN_BARRIER`).
            f.pending = Some((meet, place()));
            return;
        }
        team_arrive(f, meet, place);
        if meet.kind == MeetKind::RegionEnd {
            if let Ok(mut held) = tc.held.try_borrow_mut() {
                if let Some(&Held { lock, .. }) = held.iter().find(|h| h.depth == depth) {
                    let text = format!(
                        "thread {} reached {} holding the lock {lock:#x}, which it set in the region: a lock \
                         must be unset by the task that set it",
                        f.tid,
                        describe(&meet, place())
                    );
                    report(f.team, text);
                }
                held.retain(|h| {
                    if h.depth >= depth && h.explicit {
                        oxiomp_instrument::task_locks_changed(false);
                    }
                    h.depth < depth
                });
            }
            frames.pop();
            tc.depth.set(frames.len());
        }
    }
}

/// Thread `f` arrives at `meet` in its team's records (its place, where its ident does not
/// say, from `place`), and reports a mismatch with the record of the first thread there.
fn team_arrive(f: &mut Frame, meet: Meet, place: impl Fn() -> Place) {
    let mismatch = f.team.arrive(f.generation, (f.tid, f.nthreads), f.seq, meet, &place);
    f.seq += 1;
    if let Some(Mismatch { record, differs }) = mismatch {
        let text = format!(
            "thread {} reached {} where thread {} reached {}{}",
            f.tid,
            describe(&meet, place()),
            record.first,
            describe(&record.meet, record.place),
            differs.map(|d| format!(": {d}")).unwrap_or_default()
        );
        report(f.team, text);
    }
}

/// Explicit task `task` ends on the calling thread (its body returned): it must hold no lock.
fn task_ends(task: usize) {
    let Some(tc) = ThreadChecks::get() else { return };
    let (Ok(frames), Ok(mut held)) = (tc.frames.try_borrow(), tc.held.try_borrow_mut()) else { return };
    let Some(&Held { lock, depth, .. }) = held.iter().find(|h| h.task == task) else { return };
    held.retain(|h| {
        if h.task == task {
            oxiomp_instrument::task_locks_changed(false);
        }
        h.task != task
    });
    drop(held);
    let Some(f) = frames.get(depth - 1) else { return };
    // SAFETY: the event names the task whose body just returned on this thread; its
    // descriptor is freed only after the event is dispatched.
    let routine = unsafe { (*(task as *const oxiomp_runtime::task::Task)).routine_addr() };
    let at = routine_place(routine);
    let text = format!(
        "thread {} ended a task at {at} holding the lock {lock:#x}, which the task set: a lock must be unset by \
         the task that set it",
        f.tid
    );
    report(f.team, text);
}

/// The calling thread begins an `ordered` region: the loop it is in must have the `ordered`
/// clause (clang refuses one closely nested in a loop without it; one in a function the
/// loop calls, or gcc's code, comes here).
fn ordered(meet: Meet) {
    let noted = noted_caller();
    with_frame(|f| {
        let loop_in = f.open.filter(|(m, _)| m.kind == MeetKind::Loop);
        if loop_in.is_some_and(|(m, _)| is_ordered(m.sched)) {
            return;
        }
        let code = if ident_known(meet.ident) { 0 } else { caller_code(noted) };
        let here = describe(&meet, Place { code, region: f.region });
        let text = match loop_in {
            Some((m, place)) => {
                format!(
                    "thread {} reached {here} within {}, which has no 'ordered' clause",
                    f.tid,
                    describe(&m, place)
                )
            }
            None => format!("thread {} reached {here} outside a worksharing loop", f.tid),
        };
        report(f.team, text);
    });
}

/// Reports a mistake in `team`'s region: one line; then the program aborts, or (`warn`) the
/// region is checked no further.
#[cold]
fn report(team: &Records, text: String) {
    if !team.stop() {
        return;
    }
    if MODE.get() == Some(&CheckMode::Warn) {
        oxiomp_runtime::stderr_line(format_args!("oxiomp: check: {text}"));
        return;
    }
    oxiomp_runtime::stderr_line(format_args!("oxiomp: check: {text}; aborting (OXIOMP_CHECK=1)"));
    std::process::abort();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    /// Waits up to 20 seconds for child `pid`; its exit status, or `None` if it was still
    /// running (it is then killed).
    fn wait_child(pid: libc::pid_t) -> Option<i32> {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut status = 0;
        while Instant::now() < deadline {
            // SAFETY: waits for our own child, writing its status into a local.
            let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if r == pid {
                return Some(if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { 128 });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        // SAFETY: kills and reaps our own child.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, &mut status, 0);
        }
        None
    }

    /// A fork while another thread holds the teams' map: the prepare handler waits for it, so
    /// the child finds the map free and can look teams up (with the lock left held, the
    /// child's first lookup would wait forever for a thread it does not have).
    #[test]
    fn a_fork_while_another_thread_holds_the_teams_map_leaves_the_child_a_free_map() {
        register_fork_handlers();
        let known = team_check(0x1000) as *const Records as usize;
        let (held, holding) = mpsc::channel();
        let holder = std::thread::spawn(move || {
            let g = TEAMS.lock();
            held.send(()).unwrap();
            // Long enough for the fork below to begin while the map is held.
            std::thread::sleep(Duration::from_millis(200));
            drop(g);
        });
        holding.recv().unwrap();
        // SAFETY: the child only looks teams up (allocating: glibc's malloc is fork-safe) and
        // leaves with `_exit`.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // Another team first: a lookup the thread's last-team cache cannot answer.
            let other = team_check(0x2000) as *const Records as usize;
            let fresh = team_check(0x1000) as *const Records as usize;
            let again = team_check(0x1000) as *const Records as usize;
            let (fresh, again) = (fresh != known && fresh != other, again == fresh);
            // SAFETY: ends the child without running the test harness's exit path.
            unsafe { libc::_exit(if fresh && again { 0 } else { 1 }) };
        }
        assert!(pid > 0, "fork failed");
        holder.join().unwrap();
        assert_eq!(
            wait_child(pid),
            Some(0),
            "the child hung on the teams' map, or kept the parent's records of a team"
        );
        assert_eq!(team_check(0x1000) as *const Records as usize, known, "the parent keeps its records");
    }
}
