//! Tracing end to end: C programs built with clang-19 run on our library with `OMP_OVNI=1`;
//! the trace they leave is decoded and each thread's recorded state sequence is checked
//! exactly, `oxiomp-trace check` rules hold, and hand-made bad traces are rejected with the
//! right message.

#[path = "../common/mod.rs"]
mod common;

mod check;
mod endings;
mod paraver;
mod states;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{clean_env, lib, profile_dir};

use oxiomp_instrument::format::{self, Event, Payload};
use oxiomp_instrument::trace::{self, Trace};
use oxiomp_instrument::{State, Subsystem};

/// Builds `tests/trace/<name>.c` (with gcc when the name ends in `_gcc`: it runs on our
/// `libgomp.so.1`) into a file of its own for this `threads` value; returns it.
fn build(name: &str, threads: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/trace").join(format!("{name}.c"));
    let dir = profile_dir().join("trace-tests");
    std::fs::create_dir_all(&dir).unwrap();
    // One executable per run: tests that run one program in teams of different sizes run
    // in parallel (one compiling over the file the other executes fails with ETXTBSY).
    let exe = dir.join(format!("{name}-{threads}"));
    let build = if name.ends_with("_gcc") { common::gcc } else { common::clang };
    build(&src, &exe, &["-fopenmp", "-O2", "-Wall", "-g"]);
    exe
}

/// `before` (a command and its arguments, or nothing) running `exe` on our library with
/// `threads` threads and tracing on, into `tdir` (None: the default directory).
fn traced_command(before: &[&str], exe: &Path, threads: &str, tdir: Option<&Path>) -> Command {
    let mut c = Command::new(before.first().copied().unwrap_or(exe.to_str().unwrap()));
    if !before.is_empty() {
        c.args(&before[1..]).arg(exe);
    }
    clean_env(&mut c);
    c.env("OMP_OVNI", "1")
        .env("OMP_NUM_THREADS", threads)
        .env("LD_LIBRARY_PATH", &lib().dir)
        .env("LD_BIND_NOW", "1");
    if let Some(t) = tdir {
        c.env("OVNI_TRACEDIR", t);
    }
    c
}

/// Reads the trace in `tdir`, which must pass `check`.
fn read_checked(tdir: &Path, name: &str) -> Trace {
    let t = Trace::read(tdir).unwrap_or_else(|e| panic!("{name}: {e}"));
    let problems = t.check();
    assert!(problems.is_empty(), "{name}: trace check failed:\n{}", problems.join("\n"));
    t
}

/// A fresh trace directory for a run of `name` with `threads`.
fn trace_dir(name: &str, threads: &str) -> PathBuf {
    let tdir = profile_dir().join("trace-tests").join(format!("{name}-{threads}.ovni"));
    let _ = std::fs::remove_dir_all(&tdir);
    tdir
}

/// Builds `tests/trace/<name>.c`, runs it on our library with tracing into a fresh
/// directory, and reads the trace.
fn traced_run(name: &str, threads: &str, expect_ok: bool) -> (Trace, PathBuf) {
    traced_run_in(name, threads, expect_ok, &[])
}

/// `traced_run`, the program started through `before` (e.g. a shell that sets something up
/// and execs it).
fn traced_run_in(name: &str, threads: &str, expect_ok: bool, before: &[&str]) -> (Trace, PathBuf) {
    let exe = build(name, threads);
    let tdir = trace_dir(name, threads);
    let mut guarded = vec!["timeout", "-k", "5", "60"];
    guarded.extend_from_slice(before);
    let st = traced_command(&guarded, &exe, threads, Some(&tdir)).status().unwrap();
    assert_eq!(st.success(), expect_ok, "{name} exit status {st}");
    (read_checked(&tdir, name), tdir)
}

/// The state events of one thread in the given subsystems, as (enter?, state).
fn seq(events: &[Event], subs: &[Subsystem]) -> Vec<(bool, State)> {
    events
        .iter()
        .filter_map(|e| trace::state_of(&e.mcv))
        .filter(|(s, _)| subs.contains(&s.subsystem()))
        .map(|(s, enter)| (enter, s))
        .collect()
}

/// The Critical subsystem's state events of one thread.
fn critical_events(events: &[Event]) -> Vec<&Event> {
    events
        .iter()
        .filter(|e| trace::state_of(&e.mcv).is_some_and(|(s, _)| s.subsystem() == Subsystem::Critical))
        .collect()
}

fn pair(s: State) -> [(bool, State); 2] {
    [(true, s), (false, s)]
}

/// The thread that started the process (on Linux its thread id is the process id).
fn initial_thread(t: &Trace) -> &trace::ThreadStream {
    let initial: Vec<_> = t.threads.iter().filter(|th| th.tid == th.pid).collect();
    assert_eq!(initial.len(), 1, "one initial thread");
    initial[0]
}

/// The labels the trace's types were declared with (`POc`), by type number.
fn type_labels(t: &Trace) -> std::collections::HashMap<u32, String> {
    t.threads
        .iter()
        .flat_map(|th| &th.events)
        .filter(|e| &e.mcv == b"POc")
        .filter_map(|e| match &e.payload {
            Payload::Jumbo(b) if b.len() > 4 => {
                let id = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                let text = &b[4..];
                let end = text.iter().position(|&c| c == 0).unwrap_or(text.len());
                Some((id, String::from_utf8_lossy(&text[..end]).into_owned()))
            }
            _ => None,
        })
        .collect()
}
