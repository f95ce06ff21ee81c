//! gcc-compiled programs on oxiomp: each C program of `tests/gomp/` is built with `gcc -fopenmp`
//! and run on our library in both ways a user can: as `libgomp.so.1` found in a directory on
//! `LD_LIBRARY_PATH`, and with the build's `libgomp.so.1` in `LD_PRELOAD` (the system's libgomp
//! on the path); the loader's own trace must show ours as the only libgomp each way. Each also
//! runs on Debian's libgomp as the reference, at several thread counts. A program checks its
//! results itself and exits 0 when they hold; a test may also name text its output must contain.

#[path = "../common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{clean_env, lib, profile_dir};

fn build(name: &str) -> PathBuf {
    build_as(name, name)
}

/// Builds `tests/gomp/<name>.c` into `<exe>` (tests that run the same program build their own
/// copy: one test's build must not replace the file another test is running).
fn build_as(name: &str, exe: &str) -> PathBuf {
    let out = profile_dir().join("gomp-tests");
    std::fs::create_dir_all(&out).unwrap();
    let exe = out.join(exe);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gomp").join(format!("{name}.c"));
    common::gcc(&src, &exe, &["-fopenmp", "-O2", "-Wall", "-g"]);
    exe
}

/// Which runtime a program runs on.
#[derive(Clone, Copy, Debug)]
enum On {
    /// Ours, as `libgomp.so.1` in a directory on `LD_LIBRARY_PATH`.
    Directory,
    /// Ours, through `LD_PRELOAD` of the build's `libgomp.so.1`.
    Preload,
    /// Debian's libgomp.
    Libgomp,
}

/// The build's `libgomp.so.1` for `LD_PRELOAD` (beside our library).
fn preload() -> PathBuf {
    lib().so.with_file_name("libgomp.so.1")
}

/// Runs `exe` with `threads` and `env` on `on`, returning (success, output).
fn run(exe: &Path, threads: u32, on: On, trace: bool, env: &[(&str, &str)]) -> (bool, String) {
    let mut c = Command::new(exe);
    clean_env(&mut c);
    c.env("OMP_NUM_THREADS", threads.to_string());
    c.envs(env.iter().copied());
    match on {
        On::Directory => {
            c.env("LD_LIBRARY_PATH", &lib().dir);
        }
        On::Preload => {
            c.env("LD_PRELOAD", preload());
        }
        On::Libgomp => {}
    }
    if trace {
        c.env("LD_TRACE_LOADED_OBJECTS", "1");
    }
    let o = c.output().expect("run the program");
    (
        o.status.success(),
        format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)),
    )
}

fn check(name: &str, output: Option<&str>) {
    check_with(name, output, &[]);
}

fn check_with(name: &str, output: Option<&str>, env: &[(&str, &str)]) {
    let exe = build(name);
    // Either way, the loader maps our library for the program's libgomp.so.1, and no other
    // libgomp.
    for (on, ours) in [(On::Directory, lib().dir.join("libgomp.so.1")), (On::Preload, preload())] {
        let (_, trace) = run(&exe, 1, on, true, &[]);
        let gomp: Vec<&str> = trace.lines().filter(|l| l.contains("libgomp")).collect();
        assert!(
            gomp.len() == 1 && gomp[0].contains(ours.to_str().unwrap()),
            "{name} ({on:?}): the loader does not map our library as the only libgomp:\n{trace}"
        );
        if let On::Preload = on {
            // The preloaded library's need for libomp.so.5 is met by ours (beside it), not by
            // Debian's libomp.
            let dir = lib().so.parent().unwrap().to_str().unwrap().to_string();
            let so5: Vec<&str> = trace.lines().filter(|l| l.contains("libomp.so.5")).collect();
            assert!(so5.len() == 1 && so5[0].contains(&format!("=> {dir}/")), "{name}: {trace}");
        }
    }
    let mut failed = Vec::new();
    for threads in [1, 2, 4, 16] {
        for on in [On::Directory, On::Preload, On::Libgomp] {
            let (ok, out) = run(&exe, threads, on, false, env);
            if !ok || output.is_some_and(|o| !out.contains(o)) {
                failed.push(format!("{name} on {on:?}, OMP_NUM_THREADS={threads}:\n{out}"));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn worksharing() {
    check("worksharing", None);
}

#[test]
fn tasks() {
    check("tasks", None);
}

#[test]
fn ordered() {
    check("ordered", None);
}

#[test]
fn locks() {
    // The error directive's warning goes on (both runtimes print its message).
    check("locks", Some("gomp locks: a warning"));
}

#[test]
fn loops() {
    check("loops", None);
}

#[test]
fn taskloop() {
    check("taskloop", None);
}

#[test]
fn reductions() {
    check("reductions", None);
}

#[test]
fn cancel() {
    check_with("cancel", None, &[("OMP_CANCELLATION", "true")]);
}

#[test]
fn teams() {
    check("teams", None);
}

#[test]
fn old_locks() {
    check("old_locks", Some("gomp OMP_1.0 locks: ok"));
}

#[test]
fn split_fork() {
    check("split_fork", Some("gomp split fork: ok"));
}

/// `GOMP_parallel_end` with no region begun: one error naming the call, and the program goes
/// on.
#[test]
fn split_fork_end_without_start() {
    let exe = build_as("split_fork", "split_fork-unopened");
    let mut c = Command::new(&exe);
    clean_env(&mut c);
    let o = c.arg("unopened").env("LD_LIBRARY_PATH", &lib().dir).output().expect("run the program");
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("oxiomp: error: GOMP_parallel_end: the calling thread is not the primary thread")
            && out.contains("after the unopened end"),
        "{out}"
    );
}

/// Offloading is not provided: a `target` region ends the program with an error naming
/// gcc's entry, never a silent result.
#[test]
fn offload_is_refused() {
    let exe = build("offload");
    let (ok, out) = run(&exe, 2, On::Directory, false, &[]);
    assert!(!ok, "the target region ran:\n{out}");
    assert!(
        out.contains("GOMP_target_ext") && out.contains("not supported") && !out.contains("x = "),
        "no clear error naming the entry:\n{out}"
    );
}
