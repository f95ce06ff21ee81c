//! The OMPT tool search and start-up (`OMP_TOOL`, `OMP_TOOL_LIBRARIES`,
//! `OMP_TOOL_VERBOSE_INIT`): a tool in a library of its own (`tests/ompt/tool.c`) and a
//! program without one (`prog.c`), built with clang-19, run on our library and on Debian's
//! libomp, which must agree on what the tool sees. The tool protocol itself, with a tool in
//! the program, is `tests/c/ompt_parallel.c`'s.

#[path = "../common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use common::{clean_env, lib, profile_dir};

struct Built {
    tool: PathBuf,
    prog: PathBuf,
}

fn built() -> &'static Built {
    static B: OnceLock<Built> = OnceLock::new();
    B.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ompt");
        let out = profile_dir().join("ompt-tests");
        std::fs::create_dir_all(&out).unwrap();
        let tool = out.join("libtesttool.so");
        let prog = out.join("prog");
        for (args, what) in [
            (vec!["-shared", "-fPIC", "-O2", "-Wall"], ("tool.c", &tool)),
            (vec!["-fopenmp", "-O2", "-Wall"], ("prog.c", &prog)),
        ] {
            common::clang(&src.join(what.0), what.1, &args);
        }
        Built { tool, prog }
    })
}

/// Runs the program on our library (`ours`) or on Debian's libomp, with `env`.
fn run(ours: bool, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(&built().prog);
    clean_env(&mut c);
    if ours {
        c.env("LD_LIBRARY_PATH", &lib().dir);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "the program failed ({}): {}", o.status, String::from_utf8_lossy(&o.stderr));
    o
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn tool_path() -> String {
    built().tool.to_str().unwrap().to_string()
}

/// A library that cannot be opened is passed over; the next one's tool starts, sees both
/// threads begin, and is finalized at exit; the search is logged on stderr, in the same lines
/// by both runtimes.
#[test]
fn the_first_library_whose_tool_starts_wins() {
    let libs = format!("/nonexistent/libnotatool.so:{}", tool_path());
    for ours in [true, false] {
        let o = run(ours, &[("OMP_TOOL_LIBRARIES", &libs), ("OMP_TOOL_VERBOSE_INIT", "stderr")]);
        let out = text(&o.stdout);
        assert_eq!(
            out.lines().filter(|l| l.starts_with("tool:")).collect::<Vec<_>>(),
            ["tool: start", "tool: initialize", "tool: finalize after 2 thread(s)"],
            "ours: {ours}; stdout:\n{out}"
        );
        // The log's lines are libomp's.
        let err = text(&o.stderr);
        for want in [
            "----- START LOGGING OF TOOL REGISTRATION -----\nSearch for OMP tool in current address space... Failed.",
            &format!("Searching tool libraries...\nOMP_TOOL_LIBRARIES = {libs}\n"),
            "Opening /nonexistent/libnotatool.so... Failed: /nonexistent/libnotatool.so: cannot open shared object file",
            &format!("Opening {}... Success.", tool_path()),
            &format!("Searching for ompt_start_tool in {}... Success.", tool_path()),
            "Tool was started and is using the OMPT interface.\n----- END LOGGING OF TOOL REGISTRATION -----",
        ] {
            assert!(err.contains(want), "ours: {ours}: log lacks {want:?}:\n{err}");
        }
    }
}

/// A tool that declines is not initialized, and nothing is finalized.
#[test]
fn a_tool_that_declines_is_not_started() {
    for ours in [true, false] {
        let o = run(ours, &[("OMP_TOOL_LIBRARIES", &tool_path()), ("TOOL_DECLINE", "1")]);
        let out = text(&o.stdout);
        assert!(out.contains("tool: start"), "ours: {ours}: {out}");
        assert!(!out.contains("tool: initialize") && !out.contains("finalize"), "ours: {ours}: {out}");
    }
}

/// `OMP_TOOL=disabled` looks for no tool; a value that is neither `enabled` nor `disabled`
/// gives one warning and looks for one.
#[test]
fn omp_tool_disables_the_search() {
    for ours in [true, false] {
        let o = run(ours, &[("OMP_TOOL_LIBRARIES", &tool_path()), ("OMP_TOOL", "disabled")]);
        assert!(!text(&o.stdout).contains("tool:"), "ours: {ours}: {}", text(&o.stdout));
    }
    let o = run(true, &[("OMP_TOOL_LIBRARIES", &tool_path()), ("OMP_TOOL", "maybe")]);
    assert!(text(&o.stdout).contains("tool: initialize"), "{}", text(&o.stdout));
    let err = text(&o.stderr);
    assert_eq!(err.matches("OMP_TOOL=maybe").count(), 1, "{err}");
}

/// `OMP_TOOL_VERBOSE_INIT` with a path logs to that file (and not to the program's output).
#[test]
fn the_search_is_logged_to_a_file() {
    let log = profile_dir().join("ompt-tests").join("search.log");
    let _ = std::fs::remove_file(&log);
    let o =
        run(true, &[("OMP_TOOL_LIBRARIES", &tool_path()), ("OMP_TOOL_VERBOSE_INIT", log.to_str().unwrap())]);
    let text_log = std::fs::read_to_string(&log).expect("the log file");
    assert!(text_log.contains("----- START LOGGING OF TOOL REGISTRATION -----"), "{text_log}");
    assert!(text_log.contains("Tool was started and is using the OMPT interface."), "{text_log}");
    assert!(!text(&o.stdout).contains("LOGGING") && !text(&o.stderr).contains("LOGGING"));
}

/// A gcc-built program's worksharing as a tool sees it (`tests/trace/trace_ws_gcc.c`): each
/// `single` has one executor, whose block ends before the thread's next barrier (gcc's code
/// marks no end: the `nowait` one ends at the barrier of the loop gcc divides itself), and a
/// loop begun without a first chunk is a static loop of unknown count (0).
#[test]
fn a_gcc_programs_single_and_self_divided_loop_are_told() {
    let out = profile_dir().join("ompt-tests");
    std::fs::create_dir_all(&out).unwrap();
    let tool = out.join("libworktool.so");
    let prog = out.join("trace_ws_gcc");
    let src = Path::new(env!("CARGO_MANIFEST_DIR"));
    common::clang(&src.join("tests/ompt/work_tool.c"), &tool, &["-shared", "-fPIC", "-O2", "-Wall"]);
    common::gcc(&src.join("tests/trace/trace_ws_gcc.c"), &prog, &["-fopenmp", "-O2", "-Wall"]);
    for threads in [1, 2, 3, 16] {
        let mut c = Command::new(&prog);
        clean_env(&mut c);
        c.env("LD_LIBRARY_PATH", &lib().dir)
            .env("OMP_NUM_THREADS", threads.to_string())
            .env("OMP_TOOL_LIBRARIES", &tool);
        let o = c.output().unwrap();
        let stdout = text(&o.stdout);
        assert!(o.status.success(), "{threads} threads: {}{stdout}", text(&o.stderr));
        let mut executors = 0;
        let mut members = 0;
        for line in stdout.lines().filter_map(|l| l.strip_prefix("work: ")) {
            if !line.contains("L+") {
                continue;
            }
            members += 1;
            let toks: Vec<&str> = line.split(' ').collect();
            // Each single's part is a begin directly followed by its end (no barrier inside).
            let work: Vec<&str> = toks.iter().copied().filter(|&t| t != "B").collect();
            assert_eq!(work.len(), 8, "{threads} threads: {line}");
            for k in [0, 2, 6] {
                let pair = (work[k], work[k + 1]);
                assert!(pair == ("S+", "S-") || pair == ("s+", "s-"), "{threads} threads: {line}");
                executors += (pair.0 == "S+") as usize;
            }
            assert_eq!(&work[4..6], ["L+0", "L-"], "{threads} threads: {line}");
            for w in toks.windows(2) {
                if w[0] == "S+" {
                    assert_eq!(w[1], "S-", "{threads} threads: a single's block holds a barrier: {line}");
                }
            }
        }
        assert_eq!(members, threads, "{threads} threads: {stdout}");
        assert_eq!(executors, 3, "{threads} threads: {stdout}");
    }
}
