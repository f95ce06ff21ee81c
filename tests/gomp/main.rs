//! gcc-compiled programs on oxiomp: each C program of `tests/gomp/` is built with `gcc -fopenmp`
//! and run with our library as `libgomp.so.1` (a directory on `LD_LIBRARY_PATH` holding that
//! name), where the loader's own trace must show ours as the only libgomp, and on Debian's
//! libgomp as the reference, at several thread counts. A program checks its results itself
//! and exits 0 when they hold; a test may also name text its output must contain.

#[path = "../common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{clean_env, lib, profile_dir};

fn build(name: &str) -> PathBuf {
    let out = profile_dir().join("gomp-tests");
    std::fs::create_dir_all(&out).unwrap();
    let exe = out.join(name);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gomp").join(format!("{name}.c"));
    common::gcc(&src, &exe, &["-fopenmp", "-O2", "-Wall", "-g"]);
    exe
}

/// Runs `exe` with `threads` (on ours when `ours`), returning (success, output).
fn run(exe: &Path, threads: u32, ours: bool, trace: bool) -> (bool, String) {
    let mut c = Command::new(exe);
    clean_env(&mut c);
    c.env("OMP_NUM_THREADS", threads.to_string());
    if ours {
        c.env("LD_LIBRARY_PATH", &lib().dir);
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
    let exe = build(name);
    // The loader maps our library for the program's libgomp.so.1, and no other libgomp.
    let (_, trace) = run(&exe, 1, true, true);
    let gomp: Vec<&str> = trace.lines().filter(|l| l.contains("libgomp")).collect();
    let ours = lib().dir.join("libgomp.so.1");
    assert!(
        gomp.len() == 1 && gomp[0].contains(ours.to_str().unwrap()),
        "{name}: the loader does not map our library as the only libgomp:\n{trace}"
    );
    let mut failed = Vec::new();
    for threads in [1, 2, 4, 16] {
        for ours in [true, false] {
            let (ok, out) = run(&exe, threads, ours, false);
            if !ok || output.is_some_and(|o| !out.contains(o)) {
                let on = if ours { "oxiomp" } else { "libgomp" };
                failed.push(format!("{name} on {on}, OMP_NUM_THREADS={threads}:\n{out}"));
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
