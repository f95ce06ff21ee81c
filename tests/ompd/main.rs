//! The debugger interface (OMPD) with the real debugger: gdb in batch mode with LLVM's OMPD
//! plugin (Debian's `libomp-19-dev`), which loads our `libompd.so` from the list the runtime
//! publishes with `OMP_DEBUG=enabled`. Each C program of `tests/ompd/` stops at `stop_here`;
//! the test runs the plugin's commands there (`ompd init`, `ompd threads`, `ompd parallel`,
//! `ompd icvs`, `ompd bt on` + `bt`) and asserts their answers against what the program
//! printed from the OpenMP API at that point; the same on a core file written with `gcore`.

#[path = "../common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{clean_env, lib, profile_dir};

const PLUGIN: &str = "/usr/lib/llvm-19/share/gdb/python/ompd/__init__.py";

fn build(name: &str) -> PathBuf {
    let out = profile_dir().join("ompd-tests");
    std::fs::create_dir_all(&out).unwrap();
    let exe = out.join(name);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ompd").join(format!("{name}.c"));
    common::clang(&src, &exe, &["-fopenmp", "-g", "-O0", "-Wall"]);
    exe
}

/// Runs gdb on `exe` (and `core`, if given) with the plugin and `commands`; returns stdout
/// and stderr together.
fn gdb(exe: &Path, core: Option<&Path>, threads: u32, commands: &[&str]) -> String {
    gdb_with(&lib().dir, exe, core, threads, commands)
}

/// [`gdb`] with the runtime taken from `libdir`.
fn gdb_with(libdir: &Path, exe: &Path, core: Option<&Path>, threads: u32, commands: &[&str]) -> String {
    assert!(Path::new(PLUGIN).exists(), "{PLUGIN} is missing (libomp-19-dev: see README)");
    let ompd = profile_dir().join("libompd.so");
    assert!(ompd.exists(), "{} is missing: build it with cargo build --release", ompd.display());
    let mut c = Command::new("gdb");
    clean_env(&mut c);
    c.env("LD_LIBRARY_PATH", libdir)
        .env("OMP_DEBUG", "enabled")
        .env("OMP_NUM_THREADS", threads.to_string())
        .args(["-batch", "-nx", "-ex", "set pagination off", "-ex", "set confirm off"])
        .args(["-ex", &format!("source {PLUGIN}")]);
    for cmd in commands {
        c.args(["-ex", cmd]);
    }
    c.arg(exe);
    if let Some(core) = core {
        c.arg(core);
    }
    let o = c.output().expect("gdb (scripts/setup.sh installs it)");
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    // gdb 13 has been seen to abort on a core file with "Recursive internal problem" once in
    // many runs that passed on the same program. A core session is the same input each time:
    // a crash of gdb that a second reading does not repeat is gdb's, and the second one is
    // judged; one that repeats fails the test.
    if core.is_some() && out.contains("Recursive internal problem") {
        let o = c.output().expect("gdb");
        return format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    }
    out
}

/// The commands that stop a program at `stop_here` under the plugin.
const STOP: &[&str] = &["ompd init", "break stop_here", "continue"];

/// `key=value` pairs of the program's `expect` line.
fn expected(out: &str) -> Vec<(String, String)> {
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("expect "))
        .unwrap_or_else(|| panic!("no expect line:\n{out}"));
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The value `ompd icvs` printed for `name`.
fn icv<'a>(out: &'a str, name: &str) -> Option<&'a str> {
    out.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        (f.next() == Some(name)).then(|| f.nth(1)).flatten()
    })
}

/// No Python error from the plugin.
fn no_traceback(out: &str) {
    assert!(!out.contains("Traceback"), "the plugin failed:\n{out}");
    assert!(out.contains("Loaded OMPD lib successfully!"), "our libompd.so was not loaded:\n{out}");
}

/// `ompd threads` listed at least three OpenMP threads with their states (a thread just
/// created may not have registered yet: the plugin then lists it as no OpenMP thread).
fn openmp_threads_listed(out: &str) {
    let listed = out.matches("is an OpenMP thread; state: ompt_state_").count();
    assert!(listed >= 3, "{out}");
}

/// The `ompd parallel` rows: (thread number, state, wait id, function).
fn parallel_rows(out: &str) -> Vec<(u32, String, u64, String)> {
    out.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().filter(|w| *w != "(master)").collect();
            let n = f.first()?.parse().ok()?;
            let state = f.get(1)?.strip_prefix("ompt_state_")?.to_string();
            Some((n, state, f.get(2)?.parse().ok()?, f.get(4)?.to_string()))
        })
        .collect()
}

#[test]
fn nested_regions_icvs_and_a_core_file() {
    let exe = build("nested");
    let core = profile_dir().join("ompd-tests/nested.core");
    let _ = std::fs::remove_file(&core);
    let gcore = format!("gcore {}", core.display());
    let mut cmds = STOP.to_vec();
    cmds.extend(["ompd threads", "ompd parallel", "ompd icvs", "ompd bt on", "bt", &gcore]);
    let out = gdb(&exe, None, 2, &cmds);
    no_traceback(&out);
    // The OpenMP threads, each in a state: the initial thread and the workers that have
    // started (at least the stopped team's two; the other inner team's may be forking).
    openmp_threads_listed(&out);
    assert!(out.contains("state: ompt_state_work_parallel"), "{out}");
    // Both levels, innermost first, each with its two threads and its outlined function.
    let l2 = out.find("Parallel Region: Nesting Level 2: Team Size: 2").unwrap_or_else(|| panic!("{out}"));
    let l1 = out.find("Parallel Region: Nesting Level 1: Team Size: 2").unwrap_or_else(|| panic!("{out}"));
    assert!(l2 < l1, "{out}");
    let rows = parallel_rows(&out);
    assert_eq!(rows.len(), 4, "{out}");
    assert_eq!((rows[1].0, rows[1].1.as_str()), (1, "work_parallel"), "the stopped thread: {out}");
    assert!(rows[..2].iter().all(|r| r.3.starts_with("main.omp_outlined_debug__")), "{out}");
    assert!(rows[2..].iter().all(|r| r.3 == "main.omp_outlined"), "{out}");
    // The ICVs are what the OpenMP API answered there.
    for (k, v) in expected(&out) {
        assert_eq!(icv(&out, &k), Some(v.as_str()), "{k}: {out}");
    }
    assert_eq!(icv(&out, "debug-var"), Some("1"), "{out}");
    assert_eq!(icv(&out, "run-sched-var"), Some("static,0"), "{out}");
    // The filtered backtrace: the program's frames of the task, none of the runtime's.
    let bt = &out[out.find("Enabled filter").unwrap_or_else(|| panic!("{out}"))..];
    assert!(bt.contains("stop_here \"#pragma omp parallel\""), "{bt}");
    assert!(!bt.contains("oxiomp") && !bt.contains("libomp") && !bt.contains("start_thread"), "{bt}");

    // The same regions from the core file.
    assert!(core.exists(), "gcore wrote no core: {out}");
    // LLVM's plugin lists the threads it saw start, or was asked about: on a core, those
    // each command selected (`thread apply all` selects them all).
    let cmds = [
        "ompd init",
        "ompd parallel",
        "ompd icvs",
        "thread apply all ompd icvs",
        "ompd threads",
        "ompd bt on",
        "bt",
    ];
    let out = gdb(&exe, Some(&core), 2, &cmds);
    no_traceback(&out);
    openmp_threads_listed(&out);
    assert!(out.contains("state: ompt_state_work_parallel"), "{out}");
    let bt = &out[out.find("Enabled filter").unwrap_or_else(|| panic!("{out}"))..];
    assert!(bt.contains("stop_here \"#pragma omp parallel\""), "{bt}");
    assert!(!bt.contains("oxiomp") && !bt.contains("start_thread"), "{bt}");
    assert!(out.contains("Parallel Region: Nesting Level 2: Team Size: 2"), "{out}");
    assert!(out.contains("Parallel Region: Nesting Level 1: Team Size: 2"), "{out}");
    assert_eq!(parallel_rows(&out).len(), 4, "{out}");
    assert_eq!(icv(&out, "levels-var"), Some("2"), "{out}");
    let _ = std::fs::remove_file(&core);
}

#[test]
fn task_frames_cut_the_runtime_out_of_the_backtrace() {
    let exe = build("tasks");
    let mut cmds = STOP.to_vec();
    cmds.extend(["ompd bt on", "bt", "ompd bt off", "bt"]);
    let out = gdb(&exe, None, 1, &cmds);
    no_traceback(&out);
    let on = &out[out.find("Enabled filter").unwrap_or_else(|| panic!("{out}"))..];
    let (on, off) = on.split_at(on.find("Disabled filter").unwrap_or_else(|| panic!("{out}")));
    // Unfiltered, the runtime's frames that run a task are between the tasks' frames;
    // filtered, they are cut (the entries the program called stay, as on libomp: a task's
    // enter frame lies in the entry), and each task's frames are told by their task kind.
    for runtime in ["call_task", "call_traced"] {
        assert!(off.contains(runtime), "{off}");
        assert!(!on.contains(runtime), "{on}");
    }
    assert!(on.contains("stop_here \"#pragma omp task\""), "{on}");
    for d in 1..=3 {
        assert!(on.contains(&format!("level \"#pragma omp task\" (d={d})")), "task {d}: {on}");
    }
    assert!(on.contains("level \"#pragma omp parallel\" (d=0)"), "the implicit task: {on}");
}

#[test]
fn a_thread_waiting_for_a_lock_shows_the_lock() {
    let exe = build("lock");
    let mut cmds = STOP.to_vec();
    cmds.extend(["ompd threads", "ompd parallel"]);
    let out = gdb(&exe, None, 2, &cmds);
    no_traceback(&out);
    let line =
        out.lines().find_map(|l| l.strip_prefix("expect wait_lock ")).unwrap_or_else(|| panic!("{out}"));
    let want: u64 = line.trim().parse().unwrap();
    assert!(out.contains("state: ompt_state_wait_lock"), "{out}");
    let rows = parallel_rows(&out);
    assert!(rows.iter().any(|r| r.0 == 1 && r.1 == "wait_lock" && r.2 == want), "lock at {want}: {out}");
    assert!(rows.iter().any(|r| r.0 == 0 && r.1 == "work_parallel"), "{out}");
}

#[test]
fn a_runtime_without_symbols_or_debug_information_is_read_too() {
    // The runtime stripped (only its exported symbols left), with the OMPD library beside it,
    // where the runtime says it is.
    let dir = profile_dir().join("ompd-tests/stripped");
    std::fs::create_dir_all(&dir).unwrap();
    let so = dir.join("libomp.so.5");
    let st = Command::new("strip").arg("-o").arg(&so).arg(&lib().so).status().expect("strip (binutils)");
    assert!(st.success());
    std::fs::copy(profile_dir().join("libompd.so"), dir.join("libompd.so")).unwrap();
    let exe = build("lock");
    let mut cmds = STOP.to_vec();
    cmds.extend(["ompd parallel", "ompd icvs"]);
    let out = gdb_with(&dir, &exe, None, 2, &cmds);
    no_traceback(&out);
    assert!(out.contains(&format!("from {}", so.display())), "the stripped runtime: {out}");
    let rows = parallel_rows(&out);
    assert!(rows.iter().any(|r| r.0 == 1 && r.1 == "wait_lock"), "{out}");
    assert_eq!(icv(&out, "team-size-var"), Some("2"), "{out}");
}

#[test]
fn threads_waiting_in_a_barrier_show_it() {
    let exe = build("barrier");
    let mut cmds = STOP.to_vec();
    cmds.extend(["ompd threads", "ompd parallel"]);
    let out = gdb(&exe, None, 3, &cmds);
    no_traceback(&out);
    let rows = parallel_rows(&out);
    assert_eq!(rows.len(), 3, "{out}");
    assert_eq!(rows[0].1, "work_parallel", "{out}");
    for r in &rows[1..] {
        assert_eq!(r.1, "wait_barrier_explicit", "{out}");
        // The wait id names the barrier: the team's, the same for both.
        assert!(r.2 != 0 && r.2 == rows[1].2, "{out}");
    }
}
