//! The hang report: for every OpenMP thread its numbers in its teams, its trace states, what it
//! waits for and since when; then one verdict: a barrier that cannot complete (a thread of its
//! team has left the region, or waits at its end), a cycle of waits (locks held by
//! threads that wait for each other, a task waiting for a child that waits for it), or none
//! found. It reads the threads' [`Watch`](super::watch::Watch)es.
//!
//! The report allocates nothing and takes no lock (it runs in a `SIGQUIT` handler too): it
//! writes through `fmt::Write` into the caller's sink, and follows the waits with fixed-size
//! arrays on the stack. It reads only the watches (values the threads copied there), never a
//! team or task descriptor, which may go while it reads.

use std::fmt::{self, Write};

use oxiomp_instrument::mutex_kind;

use super::watch::{LoopView, Member, Wait, Watch, now_ns};
use crate::registry::Runtime;
use crate::thread::ThreadDesc;
use crate::worksharing::static_sched::static_owner;

/// How the report names places and barriers (the `extern "C"` layer knows `ident_t`).
pub trait Names {
    /// Writes where the construct of `ident` (0: none) is, or else where code address `code`
    /// (0: none) is.
    fn place(&self, out: &mut dyn Write, ident: u64, code: usize) -> fmt::Result;
    /// What the barrier of `ident` and OMPT sync kind `kind` is, in words ("'barrier'").
    fn barrier(&self, ident: u64, kind: u32) -> &'static str;
    /// Whether `ident` names its location (a program built with `-g`).
    fn known(&self, ident: u64) -> bool;
    /// Writes where the program's call at return address `code` is (not 0).
    fn call_site(&self, out: &mut dyn Write, code: u64) -> fmt::Result;
    /// Writes ` (name)` for the variable at data address `addr` (a lock, a critical
    /// section's), when it has one; nothing by default (a signal handler looks nothing up).
    fn variable(&self, _out: &mut dyn Write, _addr: u64) -> fmt::Result {
        Ok(())
    }
}

/// Writes which barrier `ident` and `kind` are, and where: at the `ident`'s location, or the
/// program's call `code`, or else in the region's function `entry`.
fn barrier_at(
    out: &mut dyn Write,
    names: &dyn Names,
    ident: u64,
    kind: u32,
    entry: u64,
    code: u64,
) -> fmt::Result {
    write!(out, "{}", names.barrier(ident, kind))?;
    if names.known(ident) {
        write!(out, " at ")?;
        return names.place(out, ident, 0);
    }
    if code != 0 {
        write!(out, " at ")?;
        return names.call_site(out, code);
    }
    write!(out, " in the region of ")?;
    names.place(out, 0, entry as usize)
}

/// Why the report is written.
#[derive(Clone, Copy, Debug)]
pub enum Reason {
    /// Thread `gtid` has waited longer than `limit_ms` (`OXIOMP_HANG_SECONDS`).
    Waited { gtid: i32, limit_ms: u64 },
    /// The process was sent `SIGQUIT`.
    Signal,
}

/// The threads followed at most in one chain of waits.
const CHAIN: usize = 64;

/// Every thread on a descriptor now (gtid, descriptor).
fn threads() -> impl Iterator<Item = (i32, &'static ThreadDesc)> {
    let rt = Runtime::get();
    (0..rt.registered_threads() as i32).filter_map(move |g| {
        let d = rt.thread(g)?;
        // Relaxed: a value to show (see `watch`).
        (d.os_tid.load(std::sync::atomic::Ordering::Relaxed) != 0).then_some((g, d))
    })
}

fn watch_of(gtid: i32) -> Option<&'static Watch> {
    Runtime::get().thread(gtid).map(|d| &d.watch)
}

/// One step of a chain of waits: why thread `from` waits for thread `to`.
#[derive(Clone, Copy)]
struct Edge {
    from: i32,
    to: i32,
    wait: Wait,
}

/// Writes the report (`kept`: whether the threads' states are kept; without them only the
/// threads are listed).
pub fn report(reason: Reason, kept: bool, names: &dyn Names, out: &mut dyn Write) -> fmt::Result {
    if !Runtime::started() {
        // Nothing to read, and nothing to start from a signal handler.
        return writeln!(out, "oxiomp: hang: the runtime has not started");
    }
    let now = now_ns();
    match reason {
        Reason::Waited { gtid, limit_ms } => {
            write!(out, "oxiomp: hang: gtid {gtid} has waited longer than ")?;
            secs(out, limit_ms * 1_000_000)?;
            writeln!(out, " (OXIOMP_HANG_SECONDS); the OpenMP threads:")?;
        }
        Reason::Signal => writeln!(out, "oxiomp: hang: SIGQUIT; the OpenMP threads:")?,
    }
    for (g, d) in threads() {
        // Relaxed: as above.
        let os = d.os_tid.load(std::sync::atomic::Ordering::Relaxed);
        write!(out, "oxiomp: hang: gtid {g} (OS thread {os})")?;
        if !kept {
            writeln!(out)?;
            continue;
        }
        thread(out, names, g, &d.watch, now)?;
    }
    if !kept {
        return writeln!(
            out,
            "oxiomp: hang: the threads' states are kept only with OXIOMP_HANG_SECONDS set (0: for SIGQUIT only)"
        );
    }
    verdict(out, names)
}

/// Writes `ns` as seconds with one decimal.
fn secs(out: &mut dyn Write, ns: u64) -> fmt::Result {
    let tenths = ns / 100_000_000;
    write!(out, "{}.{} s", tenths / 10, tenths % 10)
}

/// The lines of one thread (after its gtid).
fn thread(out: &mut dyn Write, names: &dyn Names, g: i32, w: &Watch, now: u64) -> fmt::Result {
    // The members of parallel regions (not of an initial thread's root team).
    let in_region = |m: &Member| m.level > 0;
    let mut first = true;
    for m in w.members().filter(in_region) {
        write!(out, "{}thread {} of {}", if first { ": " } else { ", in it " }, m.tid, m.size)?;
        first = false;
    }
    match w.members().filter(in_region).last() {
        None => write!(out, ": outside parallel regions")?,
        Some(m) => {
            write!(out, " in the region at ")?;
            names.place(out, m.ident, m.entry as usize)?;
        }
    }
    writeln!(out)?;
    let (states, depth) = w.states();
    write!(out, "oxiomp: hang:   states:")?;
    let mut n = 0;
    for (i, s) in states.enumerate() {
        write!(out, "{}{}", if i == 0 { " " } else { " > " }, s.label())?;
        n += 1;
    }
    if n == 0 {
        write!(out, " none")?;
    }
    if depth > n {
        write!(out, " > ({} more)", depth - n)?;
    }
    writeln!(out)?;
    let Some((wait, since)) = w.wait() else { return Ok(()) };
    write!(out, "oxiomp: hang:   waits ")?;
    secs(out, now.saturating_sub(since))?;
    write!(out, " ")?;
    what(out, names, g, wait)?;
    writeln!(out)
}

/// What thread `g` waits for, in words.
fn what(out: &mut dyn Write, names: &dyn Names, g: i32, wait: Wait) -> fmt::Result {
    match wait {
        Wait::Barrier { team, join: true, size, .. } => {
            write!(out, "at the end of its region for its team's other threads: ")?;
            let mut any = false;
            for tid in 1..size {
                if let Some(gt) = member_gtid(team, tid) {
                    write!(out, "{}thread {tid} (gtid {gt}) is still in it", if any { ", " } else { "" })?;
                    any = true;
                }
            }
            if !any {
                write!(out, "none is still in it")?;
            }
            Ok(())
        }
        Wait::Barrier { ident, kind, size, entry, code, .. } => {
            write!(out, "in ")?;
            barrier_at(out, names, ident, kind, entry, code)?;
            let there = threads().filter(|(_, d)| same_barrier(&d.watch, wait)).count();
            write!(out, ": {there} of the team's {size} threads are there")
        }
        Wait::Mutex { kind: mutex_kind::ORDERED, addr } => {
            match loop_of(g).map(|(_, _, lp)| lp) {
                Some(lp) if names.known(lp.ordered) => {
                    write!(out, "for its turn in the 'ordered' region at ")?;
                    names.place(out, lp.ordered, 0)?;
                }
                Some(lp) if lp.ordered_code != 0 => {
                    write!(out, "for its turn in the 'ordered' region at ")?;
                    names.call_site(out, lp.ordered_code)?;
                }
                _ => write!(out, "for its turn in an 'ordered' region")?,
            }
            match turn(g, addr) {
                Some(Turn::Held(h)) => write!(out, ", held by gtid {h}"),
                Some(Turn::Chunk(h, lp)) => write!(
                    out,
                    "; the turn is in the chunk of gtid {h} (iterations {} to {}, counted from 0)",
                    lp.first,
                    lp.end.saturating_sub(1)
                ),
                None => Ok(()),
            }
        }
        Wait::Doacross { iters, n, ident, .. } => {
            write!(out, "in 'ordered depend(sink)' ")?;
            if names.known(ident) {
                write!(out, "at ")?;
                names.place(out, ident, 0)?;
                write!(out, " ")?;
            }
            write!(out, "for ")?;
            iteration(out, iters, n)?;
            write!(out, " of its doacross loop (counted from 0) to reach 'depend(source)'")?;
            match sink_runner(g, wait) {
                Runner::Thread(h) if h == g => write!(out, ", an iteration of its own chunk"),
                Runner::Thread(h) => write!(out, ", in the chunk of gtid {h}"),
                Runner::Nobody => write!(out, ", in no thread's chunk now"),
                Runner::Unknown => Ok(()),
            }
        }
        Wait::Mutex { kind, addr } => {
            write!(out, "for {} {addr:#x}", mutex_words(kind))?;
            names.variable(out, addr)?;
            match holder(addr) {
                Some(h) if h == g => write!(out, ", which it holds itself"),
                Some(h) => write!(out, ", held by gtid {h}"),
                None => write!(out, ", held by no OpenMP thread"),
            }
        }
        Wait::Taskwait { task, routine } | Wait::Taskgroup { task, routine } => {
            if matches!(wait, Wait::Taskwait { .. }) {
                write!(out, "in a 'taskwait' of ")?;
            } else {
                write!(out, "at the end of a 'taskgroup' of ")?;
            }
            task_words(out, names, routine)?;
            let mut any = false;
            for (h, d) in threads() {
                if d.watch.runs_descendant_of(task) {
                    write!(out, "{} gtid {h}", if any { "," } else { "; a task of it runs on" })?;
                    any = true;
                }
            }
            if !any {
                write!(out, "; no thread runs one of its tasks")?;
            }
            Ok(())
        }
    }
}

/// "the implicit task" or "the task of <place>".
fn task_words(out: &mut dyn Write, names: &dyn Names, routine: u64) -> fmt::Result {
    match routine {
        0 => write!(out, "an implicit task"),
        r => {
            write!(out, "the task at ")?;
            names.place(out, 0, r as usize)
        }
    }
}

fn mutex_words(kind: u32) -> &'static str {
    match kind {
        mutex_kind::CRITICAL => "the critical section",
        mutex_kind::NEST_LOCK => "the nestable lock",
        mutex_kind::ATOMIC => "the atomic",
        _ => "the lock",
    }
}

/// `iteration (5, 2)`.
fn iteration(out: &mut dyn Write, iters: [u64; super::watch::DOACROSS], n: u32) -> fmt::Result {
    write!(out, "iteration (")?;
    for (i, v) in iters[..(n as usize).min(iters.len())].iter().enumerate() {
        write!(out, "{}{v}", if i == 0 { "" } else { ", " })?;
    }
    write!(out, ")")
}

/// The innermost region thread `g` is in (team, size) and the loop it is in there.
fn loop_of(g: i32) -> Option<(u64, u32, LoopView)> {
    let w = watch_of(g)?;
    let m = w.member()?;
    Some((m.team, m.size, w.loop_in(m.team)?))
}

/// Who has an iteration another thread waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Runner {
    /// The thread (gtid) whose chunk of the loop holds it.
    Thread(i32),
    /// No thread's current chunk holds it (not handed out yet, or its chunk is done).
    Nobody,
    /// Not known.
    Unknown,
}

/// Which thread's chunk of loop `lp` (of `team`'s region, `size` threads) holds iteration
/// `index` (from 0). A static loop's chunks follow from its schedule; a dispatched loop's are
/// the chunks its threads were handed last.
fn runner(team: u64, size: u32, lp: LoopView, index: u64) -> Runner {
    if lp.is_static {
        let chunked = crate::worksharing::is_chunked(lp.sched);
        return match static_owner(lp.count() as u128, chunked, lp.chunk as i128, size, index as u128) {
            Some(tid) => member_gtid(team, tid).map_or(Runner::Unknown, Runner::Thread),
            None => Runner::Unknown,
        };
    }
    threads()
        .find(|(_, d)| {
            d.watch.loop_in(team).is_some_and(|l| l.seq == lp.seq && (l.first..l.end).contains(&index))
        })
        .map_or(Runner::Nobody, |(h, _)| Runner::Thread(h))
}

/// Who has the iteration thread `g`'s doacross wait `wait` waits for: known when the
/// worksharing loop is the doacross loop's first dimension (not collapsed with others).
fn sink_runner(g: i32, wait: Wait) -> Runner {
    let Wait::Doacross { iters, n, count, .. } = wait else { return Runner::Unknown };
    match loop_of(g) {
        Some((team, size, lp)) if n > 0 && lp.count() == count => runner(team, size, lp, iters[0]),
        _ => Runner::Unknown,
    }
}

/// Where the turn of an `ordered` region (mutex `addr`) that thread `g` waits for is.
enum Turn {
    /// A thread inside the region.
    Held(i32),
    /// The loop's lowest chunk being run, below `g`'s: the thread and its chunk.
    Chunk(i32, LoopView),
}

/// Where the turn thread `g` waits for in its loop's `ordered` region is: the thread inside
/// the region, or else the thread of the loop's lowest chunk not done, below `g`'s own (the
/// chunks are run in order: every iteration below that chunk has passed its turn).
fn turn(g: i32, addr: u64) -> Option<Turn> {
    if let Some(h) = holder(addr) {
        return Some(Turn::Held(h));
    }
    let (team, _, mine) = loop_of(g)?;
    threads()
        .filter(|&(h, _)| h != g)
        .filter_map(|(h, d)| Some((h, d.watch.loop_in(team)?)))
        .filter(|(_, l)| l.seq == mine.seq && !l.is_static && l.first < l.end && l.first < mine.first)
        .min_by_key(|(_, l)| l.first)
        .map(|(h, l)| Turn::Chunk(h, l))
}

/// The thread that holds the lock at `addr`.
fn holder(addr: u64) -> Option<i32> {
    threads().find(|(_, d)| d.watch.holds(addr)).map(|(g, _)| g)
}

/// The thread that is thread `tid` of `team`'s region.
fn member_gtid(team: u64, tid: u32) -> Option<i32> {
    threads().find(|(_, d)| d.watch.member_of(team).is_some_and(|m| m.tid == tid)).map(|(g, _)| g)
}

/// Whether the thread of `w` waits in barrier `b` (the same team, construct and kind; for the
/// runtime, threads at different calls of one construct are at one barrier).
fn same_barrier(w: &Watch, b: Wait) -> bool {
    let code0 = |w: Wait| match w {
        Wait::Barrier { team, ident, kind, join, size, entry, .. } => {
            Some(Wait::Barrier { team, ident, kind, join, size, entry, code: 0 })
        }
        _ => None,
    };
    matches!(w.wait(), Some((x, _)) if code0(x).is_some() && code0(x) == code0(b))
}

/// The first thread `g` (waiting for `wait`) waits for, preferring one that waits too.
fn blocker(g: i32, wait: Wait) -> Option<i32> {
    let mut any = None;
    let mut pick = |h: i32| -> bool {
        let waits = watch_of(h).and_then(|w| w.wait()).is_some();
        if any.is_none() || waits {
            any = Some(h);
        }
        waits
    };
    match wait {
        Wait::Mutex { kind: mutex_kind::ORDERED, addr } => match turn(g, addr) {
            Some(Turn::Held(h) | Turn::Chunk(h, _)) => {
                pick(h);
            }
            None => {}
        },
        Wait::Doacross { .. } => {
            if let Runner::Thread(h) = sink_runner(g, wait) {
                pick(h);
            }
        }
        Wait::Mutex { addr, .. } => {
            if let Some(h) = holder(addr) {
                pick(h);
            }
        }
        Wait::Barrier { team, join: true, .. } => {
            for (h, d) in threads() {
                if h != g && d.watch.member_of(team).is_some() && pick(h) {
                    break;
                }
            }
        }
        Wait::Barrier { team, .. } => {
            for (h, d) in threads() {
                if d.watch.member_of(team).is_some() && !same_barrier(&d.watch, wait) && pick(h) {
                    break;
                }
            }
        }
        Wait::Taskwait { task, .. } | Wait::Taskgroup { task, .. } => {
            for (h, d) in threads() {
                if d.watch.runs_descendant_of(task) && pick(h) {
                    break;
                }
            }
        }
    }
    any
}

/// Writes the verdict line.
fn verdict(out: &mut dyn Write, names: &dyn Names) -> fmt::Result {
    if stuck_barrier(out, names)? {
        return Ok(());
    }
    for (start, _) in threads() {
        let mut path = [Edge { from: 0, to: 0, wait: Wait::Taskwait { task: 0, routine: 0 } }; CHAIN];
        let mut len = 0;
        let mut cur = start;
        while len < CHAIN {
            let Some((wait, _)) = watch_of(cur).and_then(|w| w.wait()) else { break };
            let Some(next) = blocker(cur, wait) else { break };
            path[len] = Edge { from: cur, to: next, wait };
            len += 1;
            if let Some(k) = path[..len].iter().position(|e| e.from == next) {
                write!(out, "oxiomp: hang: verdict: a cycle of waits, which cannot end:")?;
                for (i, e) in path[k..len].iter().enumerate() {
                    write!(out, "{}", if i == 0 { " " } else { "; " })?;
                    edge(out, names, *e)?;
                }
                return writeln!(out);
            }
            cur = next;
        }
    }
    let waiting = threads().find(|(_, d)| d.watch.wait().is_some()).map(|(g, _)| g);
    match waiting {
        Some(g) => writeln!(
            out,
            "oxiomp: hang: verdict: no cycle of waits among the OpenMP threads: gtid {g} waits for a thread \
             that still runs, or for something outside OpenMP"
        ),
        None => writeln!(out, "oxiomp: hang: verdict: no OpenMP thread waits"),
    }
}

/// One step of a cycle, in words.
fn edge(out: &mut dyn Write, names: &dyn Names, e: Edge) -> fmt::Result {
    let Edge { from, to, wait } = e;
    match wait {
        Wait::Mutex { kind: mutex_kind::ORDERED, addr } => match holder(addr) {
            Some(h) if h == to => {
                write!(out, "gtid {from} waits for its turn in an 'ordered' region, which gtid {to} holds")
            }
            _ => write!(
                out,
                "gtid {from} waits for its turn in an 'ordered' region, which is in the chunk of gtid {to}"
            ),
        },
        Wait::Mutex { kind, addr } => {
            write!(out, "gtid {from} waits for {} {addr:#x}", mutex_words(kind))?;
            names.variable(out, addr)?;
            write!(out, ", held by gtid {to}")
        }
        Wait::Barrier { .. } => write!(out, "gtid {from} waits in a barrier for gtid {to}"),
        Wait::Taskwait { .. } => {
            write!(out, "gtid {from} waits in a 'taskwait' for a child task that gtid {to} runs")
        }
        Wait::Taskgroup { .. } => {
            write!(out, "gtid {from} waits at the end of a 'taskgroup' for a task that gtid {to} runs")
        }
        Wait::Doacross { iters, n, .. } => {
            write!(out, "gtid {from} waits for ")?;
            iteration(out, iters, n)?;
            if from == to {
                write!(out, " of its doacross loop, an iteration of its own chunk")
            } else {
                write!(out, " of its doacross loop, in the chunk of gtid {to}")
            }
        }
    }
}

/// Writes the verdict if a barrier some thread waits in cannot complete (a thread of its team
/// has ended its part of the region); says whether it did. (Threads of one team in barriers of
/// different constructs are in one barrier for the runtime: they pass it together.)
fn stuck_barrier(out: &mut dyn Write, names: &dyn Names) -> Result<bool, fmt::Error> {
    for (_, d) in threads() {
        let Some((Wait::Barrier { team, ident, kind, join: false, size, entry, code }, _)) = d.watch.wait()
        else {
            continue;
        };
        let Some(tid) = (0..size).find(|&tid| member_gtid(team, tid).is_none()) else { continue };
        write!(out, "oxiomp: hang: verdict: ")?;
        barrier_at(out, names, ident, kind, entry, code)?;
        let at_join = threads().any(|(_, d)| matches!(d.watch.wait(), Some((Wait::Barrier { team: t, join: true, .. }, _)) if t == team));
        let left = threads().any(|(_, d)| d.watch.left() == team && d.watch.member_of(team).is_none());
        if tid == 0 && at_join {
            writeln!(out, " cannot complete: thread 0 of its team waits at the end of the region")?;
        } else if left {
            writeln!(out, " cannot complete: thread {tid} of its team has left the region")?;
        } else {
            writeln!(
                out,
                " cannot complete yet: thread {tid} of its team has not begun its part of the region"
            )?;
        }
        return Ok(true);
    }
    Ok(false)
}

/// The first thread whose wait began after `reported` (`now_ns`) and has lasted `limit_ns` or
/// longer, with the latest start of any thread's wait (what a report then covers).
pub fn overdue(limit_ns: u64, reported: u64) -> Option<(i32, u64)> {
    if !Runtime::started() {
        return None;
    }
    let now = now_ns();
    let mut first = None;
    let mut latest = reported;
    for (g, d) in threads() {
        let Some((_, since)) = d.watch.wait() else { continue };
        latest = latest.max(since);
        if since > reported && now.saturating_sub(since) >= limit_ns && first.is_none() {
            first = Some(g);
        }
    }
    first.map(|g| (g, latest))
}
