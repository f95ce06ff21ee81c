//! Archer, LLVM's data-race detector (ThreadSanitizer driven through the OMPT tool interface),
//! on our library: the programs of `tests/archer/`, built with `clang-19 -fsanitize=thread`,
//! run with Debian's `libarcher.so` as the tool at 2 and 4 threads, on our library and on
//! Debian's libomp (the reference). A program's first line says what Archer must find on our
//! library (`// archer: race` or `// archer: clean`); `// archer-libomp:` gives libomp's
//! verdict where it differs, and the program's comment says why. A clean program also checks
//! its own results (exit status 0).

#[path = "../common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{clean_env, lib, profile_dir};

const ARCHER: &str = "/usr/lib/llvm-19/lib/libarcher.so";
/// ThreadSanitizer's exit status when it reported something.
const TSAN_EXIT: i32 = 66;
const RACE: &str = "WARNING: ThreadSanitizer: data race";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Verdict {
    Race,
    Clean,
}

fn src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/archer").join(format!("{name}.c"))
}

/// The verdict a `// <key>: race|clean` line of the program gives, if it has one.
fn verdict(text: &str, key: &str) -> Option<Verdict> {
    let line = text.lines().find_map(|l| l.strip_prefix(&format!("// {key}: ")))?;
    match line.trim() {
        "race" => Some(Verdict::Race),
        "clean" => Some(Verdict::Clean),
        v => panic!("unknown verdict {v:?}"),
    }
}

/// Builds `name.c` with ThreadSanitizer (once per test: each program is one test).
fn build(name: &str) -> PathBuf {
    let out = profile_dir().join("archer-tests");
    std::fs::create_dir_all(&out).unwrap();
    let exe = out.join(name);
    common::clang(&src(name), &exe, &["-fopenmp", "-fsanitize=thread", "-g", "-O1", "-Wall"]);
    exe
}

/// Runs `exe` under Archer with `threads` threads, on our library (`ours`) or libomp.
fn run(exe: &Path, threads: u32, ours: bool, extra: &[(&str, &str)]) -> Output {
    assert!(Path::new(ARCHER).exists(), "{ARCHER} is missing (libomp-19-dev: see README)");
    let mut c = Command::new(exe);
    clean_env(&mut c);
    if ours {
        c.env("LD_LIBRARY_PATH", &lib().dir);
    }
    c.env("OMP_NUM_THREADS", threads.to_string())
        .env("OMP_TOOL_LIBRARIES", ARCHER)
        .env("TSAN_OPTIONS", "ignore_noninstrumented_modules=1")
        .env("ARCHER_OPTIONS", "");
    for (k, v) in extra {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// What Archer found in a run, checked against `want`.
fn check(name: &str, o: &Output, want: Verdict, on: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    let races = err.matches(RACE).count();
    match want {
        Verdict::Race => assert!(
            o.status.code() == Some(TSAN_EXIT) && races > 0,
            "{name} on {on}: Archer found no race ({}):\n{err}",
            o.status
        ),
        Verdict::Clean => assert!(
            o.status.success() && !err.contains("ThreadSanitizer"),
            "{name} on {on}: {} race report(s) or a wrong result ({}):\n{err}",
            races,
            o.status
        ),
    }
}

fn archer(name: &str) {
    let text = std::fs::read_to_string(src(name)).unwrap();
    let ours = verdict(&text, "archer").expect("a `// archer:` line");
    let reference = verdict(&text, "archer-libomp").unwrap_or(ours);
    let exe = build(name);
    for threads in [2, 4] {
        check(name, &run(&exe, threads, true, &[]), ours, &format!("oxiomp, {threads} threads"));
        check(name, &run(&exe, threads, false, &[]), reference, &format!("libomp, {threads} threads"));
    }
}

macro_rules! archer_tests {
    ($($name:ident),* $(,)?) => {
        $( #[test] fn $name() { archer(stringify!($name)); } )*

        /// Every program of the directory is in the list.
        #[test]
        fn every_program_is_listed() {
            let listed = [$(stringify!($name)),*];
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/archer");
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.extension().is_some_and(|x| x == "c") {
                    let stem = p.file_stem().unwrap().to_str().unwrap().to_string();
                    assert!(listed.contains(&stem.as_str()), "{stem}.c is not in archer_tests!");
                }
            }
        }
    };
}

archer_tests! {
    barriers,
    mutexes,
    race_missing_dependence,
    race_missing_taskwait,
    race_nowait,
    race_parallel_for,
    task_reductions,
    taskloop_detach,
    tasks,
}

/// Without the tool, ThreadSanitizer sees none of the runtime's synchronisation and reports
/// races in a correct program: what Archer needs from the tool interface, and gets.
#[test]
fn without_the_tool_thread_sanitizer_reports_false_races() {
    let exe = build("barriers");
    let o = run(&exe, 2, true, &[("OMP_TOOL", "disabled")]);
    check("barriers (OMP_TOOL=disabled)", &o, Verdict::Race, "oxiomp, 2 threads");
}
