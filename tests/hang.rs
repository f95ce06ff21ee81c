//! Hang diagnosis (`OXIOMP_HANG_SECONDS`, `SIGQUIT`): C programs that hang (tests/hang/*.c),
//! built with clang-19 with and without `-g`, run on our library at 2, 3, 4 and 16 threads.
//! Each must be reported with every thread's wait and the expected verdict: a barrier that
//! cannot complete because a thread left the region, a cycle of two tasks' locks, a taskwait
//! on a child that waits for a lock its parent holds, a doacross sink on an iteration of its
//! own chunk that never reaches its source, an ordered turn behind a lock its waiter holds
//! (these two also built with gcc), an orphaned barrier named by its call (also built by gcc
//! with `-g`), a named critical section and a lock taken in opposite orders. The report's own
//! clock is not tested: the watchdog's limit is long enough for every thread to reach its
//! wait on a loaded machine, and a run that shows no verdict within a minute fails.

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{clean_env, lib};

/// Builds `tests/hang/<name>.c` (see `common::clang_topic`).
fn build(name: &str, debug: bool) -> PathBuf {
    common::clang_topic(
        "hang",
        name,
        debug,
        &if debug { name.to_string() } else { format!("{name}-nodebug") },
    )
}

/// A running program whose standard error is read line by line.
struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Running {
    fn start(exe: &Path, threads: u32, env: &[(&str, &str)]) -> Running {
        let mut c = Command::new(exe);
        clean_env(&mut c);
        c.env("OMP_NUM_THREADS", threads.to_string()).env("LD_LIBRARY_PATH", &lib().dir);
        for (k, v) in env {
            c.env(k, v);
        }
        // A group of its own: a child it forks is killed with it.
        let mut child = c
            .process_group(0)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run the program");
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Running { child, lines, seen: Vec::new() }
    }

    /// The lines up to the next verdict (a minute at most: then the run has failed).
    fn report(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            match self.lines.recv_timeout(Duration::from_secs(60)) {
                Ok(l) => {
                    self.seen.push(l.clone());
                    let end = l.starts_with("oxiomp: hang: verdict: ");
                    out.push(l);
                    if end {
                        return out;
                    }
                }
                Err(_) => {
                    // SAFETY: as in `kill`.
                    unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
                    panic!("no verdict; the program printed:\n{}", self.seen.join("\n"));
                }
            }
        }
    }

    /// Reads lines until one begins with `prefix` (a minute at most); returns it.
    fn line_starting(&mut self, prefix: &str) -> String {
        loop {
            let Ok(l) = self.lines.recv_timeout(Duration::from_secs(60)) else {
                panic!("no line {prefix:?}; the program printed:\n{}", self.seen.join("\n"))
            };
            self.seen.push(l.clone());
            if l.starts_with(prefix) {
                return l;
            }
        }
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill sends a signal to our own child, which has not been waited for.
        assert_eq!(unsafe { libc::kill(self.child.id() as i32, sig) }, 0);
    }

    /// Waits until the program has a handler for `SIGQUIT` (the runtime installed its own).
    fn await_sigquit_handler(&self) {
        let status = format!("/proc/{}/status", self.child.id());
        for _ in 0..6000 {
            let text = std::fs::read_to_string(&status).unwrap_or_default();
            let caught = text.lines().find_map(|l| l.strip_prefix("SigCgt:")).map(|m| m.trim().to_string());
            if let Some(m) = caught
                && u64::from_str_radix(&m, 16).is_ok_and(|bits| bits & (1 << (libc::SIGQUIT - 1)) != 0)
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the program never caught SIGQUIT");
    }

    /// Kills the program (it hangs) and what it forked, and reaps it.
    fn kill(mut self) {
        // SAFETY: signals the process group our child leads (it has not been waited for).
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// The verdict line's text.
fn verdict(report: &[String]) -> &str {
    report.last().unwrap().strip_prefix("oxiomp: hang: verdict: ").unwrap()
}

/// Runs `name` with the watchdog at 2, 3, 4 and 16 threads, built with and without `-g`, and
/// hands each report to `judge` (threads, with -g, program name), which says what is wrong.
fn each_run(name: &str, judge: impl Fn(u32, bool, &str, &[String]) -> Option<String>) {
    let mut failures = Vec::new();
    for debug in [true, false] {
        let exe = build(name, debug);
        let program = exe.file_name().unwrap().to_str().unwrap().to_string();
        for n in [2, 3, 4, 16] {
            let mut run = Running::start(&exe, n, &[("OXIOMP_HANG_SECONDS", "2")]);
            let report = run.report();
            run.kill();
            let head = " has waited longer than 2.0 s (OXIOMP_HANG_SECONDS); the OpenMP threads:";
            if !report[0].starts_with("oxiomp: hang: gtid ") || !report[0].ends_with(head) {
                failures.push(format!("{name} at {n}: the report begins {:?}", report[0]));
            }
            if let Some(why) = judge(n, debug, &program, &report) {
                failures.push(format!("{name} (-g: {debug}) at {n} threads: {why}\n{}", report.join("\n")));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The lines that say a thread waits, without the time waited.
fn waits(report: &[String]) -> Vec<String> {
    report
        .iter()
        .filter_map(|l| l.strip_prefix("oxiomp: hang:   waits "))
        .map(|l| l.split_once(" s ").map_or(l, |(_, rest)| rest).to_string())
        .collect()
}

#[test]
fn a_barrier_one_thread_never_reaches() {
    each_run("barrier", |n, debug, program, report| {
        let last = n - 1;
        let at =
            if debug { "at barrier.c:10:1".to_string() } else { format!("in the region of {program}+0x") };
        let expect_wait = format!("in 'barrier' {at}");
        let there = format!(": {last} of the team's {n} threads are there");
        let w = waits(report);
        if w.len() != last as usize || !w.iter().all(|l| l.starts_with(&expect_wait) && l.ends_with(&there)) {
            return Some(format!("expected {last} threads waiting {expect_wait}…{there}"));
        }
        let v = verdict(report);
        let tail = format!(" cannot complete: thread {last} of its team has left the region");
        let ok = if debug {
            v == format!("'barrier' {at}{tail}")
        } else {
            v.starts_with(&format!("'barrier' {at}")) && v.ends_with(&tail)
        };
        (!ok).then(|| format!("verdict {v:?}"))
    });
}

/// A child process forked inside a region hangs at a barrier: its own watchdog reports its
/// wait (the parent's threads, waiting at their own barrier when it forked, are not in the
/// child), while the parent ends.
#[test]
fn a_barrier_in_a_forked_child() {
    each_run("fork_child", |_, debug, program, report| {
        let at =
            if debug { "at fork_child.c:14:1".to_string() } else { format!("in the region of {program}+0x") };
        let expect_wait = format!("in 'barrier' {at}");
        let there = ": 1 of the team's 2 threads are there";
        let w = waits(report);
        if w.len() != 1 || !w[0].starts_with(&expect_wait) || !w[0].ends_with(there) {
            return Some(format!("expected the child's one thread waiting {expect_wait}…{there}"));
        }
        // The forking thread is in the child's region only (not still in the parent's team).
        if !report
            .iter()
            .any(|l| l.starts_with("oxiomp: hang: gtid 0 (") && l.contains("): thread 0 of 2 in the region "))
        {
            return Some("expected gtid 0 as thread 0 of the child's team of 2, at level 1".into());
        }
        let v = verdict(report);
        let tail = " cannot complete: thread 1 of its team has left the region";
        (!(v.starts_with(&format!("'barrier' {at}")) && v.ends_with(tail))).then(|| format!("verdict {v:?}"))
    });
}

/// The two steps of a cycle verdict.
fn cycle(report: &[String]) -> Option<(String, String)> {
    let v = verdict(report).strip_prefix("a cycle of waits, which cannot end: ")?;
    let (a, b) = v.split_once("; ")?;
    Some((a.to_string(), b.to_string()))
}

/// "gtid A waits for the lock X, held by gtid B" as (A, X, B).
fn lock_step(s: &str) -> Option<(u32, String, u32)> {
    let rest = s.strip_prefix("gtid ")?;
    let (a, rest) = rest.split_once(" waits for the lock ")?;
    let (x, b) = rest.split_once(", held by gtid ")?;
    Some((a.parse().ok()?, x.to_string(), b.parse().ok()?))
}

#[test]
fn a_lock_cycle_between_two_tasks() {
    each_run("lock_cycle", |_, _, _, report| {
        let Some((s1, s2)) = cycle(report) else { return Some("no cycle verdict".into()) };
        let (Some((a, x, b)), Some((c, y, d))) = (lock_step(&s1), lock_step(&s2)) else {
            return Some("the cycle's steps are not lock waits".into());
        };
        if !(a == d && b == c && a != b && x != y) {
            return Some(format!("not a cycle of two threads and two locks: {a} {x} {b}; {c} {y} {d}"));
        }
        // The locks are the program's static variables `a` and `b`, named from its symbols.
        let mut named = [&x, &y].map(|l| l.split_once(' ').map(|(_, n)| n.to_string()));
        named.sort();
        if named != [Some("(`a`)".to_string()), Some("(`b`)".to_string())] {
            return Some(format!("the locks are not named `a` and `b`: {x}, {y}"));
        }
        let w = waits(report);
        for (t, l, h) in [(a, &x, b), (c, &y, d)] {
            let line = format!("for the lock {l}, held by gtid {h}");
            if !w.contains(&line) {
                return Some(format!("gtid {t}'s wait is not shown as {line:?}"));
            }
        }
        None
    });
}

#[test]
fn a_taskwait_on_a_child_blocked_on_a_lock() {
    each_run("taskwait_lock", |_, _, _, report| {
        let Some((s1, s2)) = cycle(report) else { return Some("no cycle verdict".into()) };
        let (tw, lk) = if s1.contains("'taskwait'") { (s1, s2) } else { (s2, s1) };
        let parse_tw = |s: &str| -> Option<(u32, u32)> {
            let rest = s.strip_prefix("gtid ")?;
            let (a, rest) = rest.split_once(" waits in a 'taskwait' for a child task that gtid ")?;
            Some((a.parse().ok()?, rest.strip_suffix(" runs")?.parse().ok()?))
        };
        let (Some((p, c)), Some((c2, lock, p2))) = (parse_tw(&tw), lock_step(&lk)) else {
            return Some("the cycle's steps are not a taskwait and a lock wait".into());
        };
        if !(p == p2 && c == c2 && p != c) {
            return Some(format!("not the parent's and the child's threads: {p} {c}; {c2} {p2}"));
        }
        if !lock.ends_with(" (`lock`)") {
            return Some(format!("the lock {lock} is not named `lock`"));
        }
        let w = waits(report);
        let parent = format!("in a 'taskwait' of an implicit task; a task of it runs on gtid {c}");
        let child = format!("for the lock {lock}, held by gtid {p}");
        (!w.contains(&parent) || !w.contains(&child))
            .then(|| format!("expected waits {parent:?} and {child:?}"))
    });
}

/// Each thread's number in its innermost team and its gtid, from the report's thread lines
/// (`gtid G (OS thread X): thread T of N in the region at ...`).
fn gtids(report: &[String]) -> std::collections::HashMap<u32, u32> {
    report
        .iter()
        .filter_map(|l| {
            let rest = l.strip_prefix("oxiomp: hang: gtid ")?;
            let (g, rest) = rest.split_once(' ')?;
            let (_, teams) = rest.split_once("): ")?;
            let innermost = teams.split(" in the region at ").next()?.rsplit("thread ").next()?;
            Some((innermost.split_once(" of ")?.0.parse().ok()?, g.parse().ok()?))
        })
        .collect()
}

#[test]
fn a_doacross_sink_on_an_iteration_that_never_posts() {
    each_run("doacross", |n, debug, _, report| {
        let gtid = gtids(report);
        let at = if debug { "at doacross.c:10:21 " } else { "" };
        let sink = |i: u32, whose: String| {
            format!(
                "in 'ordered depend(sink)' {at}for iteration ({i}) of its doacross loop (counted from 0) to reach \
                 'depend(source)', {whose}"
            )
        };
        let w = waits(report);
        // Iteration 6 waits for 5, which never posts and is in its own thread's chunk; each
        // later chunk's first iteration waits for the chunk before, the previous thread's (64
        // iterations in static chunks, the first 64 % n of them one longer); a thread whose
        // chunk ended waits in the loop's barrier.
        let start = |t: u32| t * (64 / n) + t.min(64 % n);
        let stuck = (0..n).rev().find(|&t| start(t) <= 5).unwrap();
        let mut expected = vec![sink(5, "an iteration of its own chunk".into())];
        expected.extend(
            (stuck + 1..n).map(|t| sink(start(t) - 1, format!("in the chunk of gtid {}", gtid[&(t - 1)]))),
        );
        let in_barrier = |l: &String| l.starts_with("in the implicit barrier of a 'for' ");
        let mut sinks: Vec<String> = w.iter().filter(|l| !in_barrier(l)).cloned().collect();
        sinks.sort();
        expected.sort();
        if sinks != expected {
            return Some(format!("expected the sink waits {expected:?}"));
        }
        let v = verdict(report);
        let want = format!(
            "a cycle of waits, which cannot end: gtid {} waits for iteration (5) of its doacross loop, an \
             iteration of its own chunk",
            gtid[&stuck]
        );
        (v != want).then(|| format!("verdict {v:?}, expected {want:?}"))
    });
}

#[test]
fn a_critical_section_and_a_lock_taken_in_opposite_orders() {
    each_run("critical_lock", |_, _, _, report| {
        let gtid = gtids(report);
        let (g0, g1) = (gtid[&0], gtid[&1]);
        let v = verdict(report);
        let Some(rest) = v.strip_prefix(&format!(
            "a cycle of waits, which cannot end: gtid {g0} waits for the critical section 0x"
        )) else {
            return Some(format!("verdict {v:?}"));
        };
        let want = format!(" (named alpha), held by gtid {g1}; gtid {g1} waits for the lock 0x");
        let ok = rest.split_once(' ').is_some_and(|(_, r)| {
            r.starts_with(&want[1..]) && r.ends_with(&format!(" (`lock`), held by gtid {g0}"))
        });
        (!ok).then(|| format!("verdict {v:?}"))
    });
}

/// What the report of `tests/hang/ordered_lock.c` must say: thread 0 (iteration 0) waits for
/// the lock thread 1 (iteration 1) set, which waits for its turn in the ordered region, as
/// does every other thread: the turn is in thread 0's chunk. `region`: how the ordered region
/// is named (the beginning of its name).
fn judge_ordered_lock(n: u32, region: &str, report: &[String]) -> Option<String> {
    let gtid = gtids(report);
    let (g0, g1) = (gtid[&0], gtid[&1]);
    let w = waits(report);
    let Some(lock) =
        w.iter().find_map(|l| l.strip_prefix("for the lock ")?.strip_suffix(&format!(", held by gtid {g1}")))
    else {
        return Some(format!("no thread waits for a lock held by gtid {g1}"));
    };
    if lock.contains(' ') {
        return Some(format!("the lock on main's stack is given a variable's name: {lock}"));
    }
    let head = format!("for its turn in {region}");
    let turn = format!("; the turn is in the chunk of gtid {g0} (iterations 0 to 0, counted from 0)");
    if w.iter().filter(|l| l.starts_with(&head) && l.ends_with(&turn)).count() != n as usize - 1
        || w.len() != n as usize
    {
        return Some(format!("expected {} threads waiting {head:?}…{turn:?}", n - 1));
    }
    let v = verdict(report);
    let want = format!(
        "a cycle of waits, which cannot end: gtid {g0} waits for the lock {lock}, held by gtid {g1}; gtid {g1} \
         waits for its turn in an 'ordered' region, which is in the chunk of gtid {g0}"
    );
    (v != want).then(|| format!("verdict {v:?}, expected {want:?}"))
}

#[test]
fn an_ordered_turn_behind_a_lock_its_waiter_holds() {
    each_run("ordered_lock", |n, debug, program, report| {
        // Without `-g`, by the program's call of the region's entry.
        let region = if debug {
            "the 'ordered' region at ordered_lock.c:25:1".to_string()
        } else {
            format!("the 'ordered' region at {program}+0x")
        };
        judge_ordered_lock(n, &region, report)
    });
}

/// A barrier whose `ident_t` names no place (clang without `-g`) is named by the program's
/// call of it: its address in the binary, without debug information.
#[test]
fn a_barrier_is_named_by_its_call_without_g() {
    each_run("barrier_call", |n, debug, program, report| {
        let at = if debug { "at barrier_call.c:10:1".to_string() } else { format!("at {program}+0x") };
        let v = verdict(report);
        let tail = format!(" cannot complete: thread {} of its team has left the region", n - 1);
        (!(v.starts_with(&format!("'barrier' {at}")) && v.ends_with(&tail))).then(|| format!("verdict {v:?}"))
    });
}

/// gcc's code goes through `GOMP_ordered_start` and `GOMP_doacross_wait`, which name no
/// place: the same waits and verdicts otherwise. Built with `-g`, gcc's barrier is named by
/// its call's line.
#[test]
fn gcc_built_ordered_and_doacross_hangs() {
    let dir = common::profile_dir().join("hang-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hang");
    let mut failures = Vec::new();
    for name in ["ordered_lock", "doacross", "barrier_call"] {
        let exe = dir.join(format!("{name}-gcc"));
        let flags: &[&str] =
            if name == "barrier_call" { &["-fopenmp", "-O2", "-g"] } else { &["-fopenmp", "-O2"] };
        common::gcc(&src.join(format!("{name}.c")), &exe, flags);
        for n in [2, 3] {
            let mut run = Running::start(&exe, n, &[("OXIOMP_HANG_SECONDS", "2")]);
            let report = run.report();
            run.kill();
            let why = if name == "ordered_lock" {
                judge_ordered_lock(n, &format!("the 'ordered' region at {name}-gcc+0x"), &report)
            } else if name == "barrier_call" {
                let v = verdict(&report);
                let want = format!(
                    "a barrier at barrier_call.c:10:9 cannot complete: thread {} of its team has left the region",
                    n - 1
                );
                (v != want).then(|| format!("verdict {v:?}, expected {want:?}"))
            } else {
                let gtid = gtids(&report);
                let want = format!(
                    "a cycle of waits, which cannot end: gtid {} waits for iteration (5) of its doacross loop, an \
                     iteration of its own chunk",
                    gtid[&0]
                );
                let v = verdict(&report);
                (v != want).then(|| format!("verdict {v:?}, expected {want:?}"))
            };
            if let Some(why) = why {
                failures.push(format!("{name} (gcc) at {n} threads: {why}\n{}", report.join("\n")));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// After the watchdog's report, `SIGQUIT` writes the report again (from the signal handler),
/// then ends the program as the signal's default action does.
#[test]
fn sigquit_reports_then_quits() {
    let exe = build("barrier", true);
    let mut run = Running::start(&exe, 4, &[("OXIOMP_HANG_SECONDS", "2")]);
    let first = run.report();
    run.signal(libc::SIGQUIT);
    let second = run.report();
    let status = run.child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGQUIT), "{}", second.join("\n"));
    assert_eq!(second[0], "oxiomp: hang: SIGQUIT; the OpenMP threads:");
    assert_eq!(verdict(&first), verdict(&second));
    assert_eq!(waits(&first), waits(&second));
}

/// A `SIGQUIT` that comes while the watchdog writes its report (here: right after its first
/// line, while it names the places of 16 threads from a binary without `-g`) gets its own
/// report once the watchdog's is whole, then ends the program.
#[test]
fn sigquit_while_the_watchdog_reports() {
    let exe = build("barrier", false);
    let mut run = Running::start(&exe, 16, &[("OXIOMP_HANG_SECONDS", "2")]);
    let head = run.line_starting("oxiomp: hang: gtid ");
    assert!(head.ends_with(" (OXIOMP_HANG_SECONDS); the OpenMP threads:"), "{head}");
    run.signal(libc::SIGQUIT);
    let mut first = vec![head];
    first.extend(run.report());
    let second = run.report();
    let status = run.child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGQUIT), "{}", second.join("\n"));
    // The watchdog's report is whole (no line of the second one inside it), then the second.
    assert!(!first.iter().any(|l| l.contains("SIGQUIT")), "{}", first.join("\n"));
    assert_eq!(second[0], "oxiomp: hang: SIGQUIT; the OpenMP threads:");
    assert_eq!(waits(&first).len(), 15, "{}", first.join("\n"));
    assert_eq!(waits(&first).len(), waits(&second).len(), "{}", second.join("\n"));
    assert!(verdict(&second).contains(" cannot complete: thread 15 of its team has left the region"));
}

/// Without `OXIOMP_HANG_SECONDS` the states are not kept: `SIGQUIT` lists the threads and says
/// how to have them.
#[test]
fn sigquit_without_the_watch_lists_the_threads() {
    let exe = build("barrier", true);
    let mut run = Running::start(&exe, 4, &[]);
    run.await_sigquit_handler();
    run.signal(libc::SIGQUIT);
    let status = run.child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGQUIT));
    // The reader ends at the end of the program's standard error.
    let lines: Vec<String> = run.lines.iter().collect();
    assert_eq!(
        lines.first().map(String::as_str),
        Some("oxiomp: hang: SIGQUIT; the OpenMP threads:"),
        "{lines:?}"
    );
    assert_eq!(
        lines.last().map(String::as_str),
        Some(
            "oxiomp: hang: the threads' states are kept only with OXIOMP_HANG_SECONDS set (0: for SIGQUIT only)"
        ),
    );
    let threads =
        lines.iter().filter(|l| l.starts_with("oxiomp: hang: gtid ") && l.contains(" (OS thread ")).count();
    assert!(threads >= 1, "{lines:?}");
}

/// A program's own `SIGQUIT` handler stays; a bad `OXIOMP_HANG_SECONDS` is one warning.
#[test]
fn own_handler_kept_and_bad_value_warned() {
    let exe = build("own_sigquit", true);
    for (value, warned) in [("5", false), ("0", false), ("soon", true), ("-1", true)] {
        let mut c = Command::new("timeout");
        c.args(["-k", "5", "60"]).arg(&exe);
        clean_env(&mut c);
        c.env("OMP_NUM_THREADS", "3").env("LD_LIBRARY_PATH", &lib().dir).env("OXIOMP_HANG_SECONDS", value);
        let out = c.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{value}: {:?} {stderr}", out.status);
        assert_eq!(stdout, "sum right, handler ran\n", "{value}: {stderr}");
        let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("OXIOMP_HANG_SECONDS")).collect();
        if warned {
            assert_eq!(warnings.len(), 1, "{value}: {stderr}");
            assert!(
                warnings[0]
                    .starts_with(&format!("oxiomp: warning: OXIOMP_HANG_SECONDS='{value}' is not valid"))
            );
        } else {
            assert!(warnings.is_empty(), "{value}: {stderr}");
        }
        assert!(!stderr.contains("oxiomp: hang:"), "{value}: {stderr}");
    }
}
