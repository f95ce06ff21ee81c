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

use super::watch::{Member, Wait, Watch, now_ns};
use crate::registry::Runtime;
use crate::thread::ThreadDesc;

/// How the report names places and barriers (the `extern "C"` layer knows `ident_t`).
pub trait Names {
    /// Writes where the construct of `ident` (0: none) is, or else where code address `code`
    /// (0: none) is.
    fn place(&self, out: &mut dyn Write, ident: u64, code: usize) -> fmt::Result;
    /// What the barrier of `ident` and OMPT sync kind `kind` is, in words ("'barrier'").
    fn barrier(&self, ident: u64, kind: u32) -> &'static str;
    /// Whether `ident` names its location (a program built with `-g`).
    fn known(&self, ident: u64) -> bool;
}

/// Writes which barrier `ident` and `kind` are, and where: at the `ident`'s location, or else
/// in the region's function `entry`.
fn barrier_at(out: &mut dyn Write, names: &dyn Names, ident: u64, kind: u32, entry: u64) -> fmt::Result {
    write!(out, "{}", names.barrier(ident, kind))?;
    if names.known(ident) {
        write!(out, " at ")?;
        return names.place(out, ident, 0);
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
        Wait::Barrier { ident, kind, size, entry, .. } => {
            write!(out, "in ")?;
            barrier_at(out, names, ident, kind, entry)?;
            let there = threads().filter(|(_, d)| same_barrier(&d.watch, wait)).count();
            write!(out, ": {there} of the team's {size} threads are there")
        }
        Wait::Mutex { kind: mutex_kind::ORDERED, .. } => write!(out, "for its turn in an 'ordered' region"),
        Wait::Doacross { iters, n } => {
            write!(out, "in 'ordered depend(sink)' for iteration (")?;
            for (i, v) in iters[..n as usize].iter().enumerate() {
                write!(out, "{}{v}", if i == 0 { "" } else { ", " })?;
            }
            write!(out, ") of its doacross loop (counted from 0) to reach 'depend(source)'")
        }
        Wait::Mutex { kind, addr } => {
            write!(out, "for {} {addr:#x}", mutex_words(kind))?;
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

/// The thread that holds the lock at `addr`.
fn holder(addr: u64) -> Option<i32> {
    threads().find(|(_, d)| d.watch.holds(addr)).map(|(g, _)| g)
}

/// The thread that is thread `tid` of `team`'s region.
fn member_gtid(team: u64, tid: u32) -> Option<i32> {
    threads().find(|(_, d)| d.watch.member_of(team).is_some_and(|m| m.tid == tid)).map(|(g, _)| g)
}

/// Whether the thread of `w` waits in barrier `b` (the same team, construct and kind).
fn same_barrier(w: &Watch, b: Wait) -> bool {
    matches!((w.wait(), b), (Some((x @ Wait::Barrier { .. }, _)), y) if x == y)
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
        // Which thread runs the iteration a sink waits for is not kept.
        Wait::Mutex { kind: mutex_kind::ORDERED, .. } | Wait::Doacross { .. } => {}
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
                    edge(out, *e)?;
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
fn edge(out: &mut dyn Write, e: Edge) -> fmt::Result {
    let Edge { from, to, wait } = e;
    match wait {
        Wait::Mutex { kind, addr } => {
            write!(out, "gtid {from} waits for {} {addr:#x}, held by gtid {to}", mutex_words(kind))
        }
        Wait::Barrier { .. } => write!(out, "gtid {from} waits in a barrier for gtid {to}"),
        Wait::Taskwait { .. } => {
            write!(out, "gtid {from} waits in a 'taskwait' for a child task that gtid {to} runs")
        }
        Wait::Taskgroup { .. } => {
            write!(out, "gtid {from} waits at the end of a 'taskgroup' for a task that gtid {to} runs")
        }
        Wait::Doacross { .. } => write!(out, "gtid {from} waits for an iteration that gtid {to} runs"),
    }
}

/// Writes the verdict if a barrier some thread waits in cannot complete (a thread of its team
/// has ended its part of the region); says whether it did. (Threads of one team in barriers of
/// different constructs are in one barrier for the runtime: they pass it together.)
fn stuck_barrier(out: &mut dyn Write, names: &dyn Names) -> Result<bool, fmt::Error> {
    for (_, d) in threads() {
        let Some((Wait::Barrier { team, ident, kind, join: false, size, entry }, _)) = d.watch.wait() else {
            continue;
        };
        let Some(tid) = (0..size).find(|&tid| member_gtid(team, tid).is_none()) else { continue };
        write!(out, "oxiomp: hang: verdict: ")?;
        barrier_at(out, names, ident, kind, entry)?;
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
