//! oxiomp's own Ayudame library (`ayudame/`: `libayudame.so` and `ayudame-ctl`), preloaded
//! into C programs of `tests/ayudame/` on our runtime: the graph files it writes at the end (DOT,
//! JSON, SVG) hold the program's tasks, edges and critical path, and mark the edges into and
//! out of `mutexinoutset` and `inoutset` groups; a queued task a client raises starts first;
//! a client steps through a 20-task chain one task at a time; a bad request gets an error and
//! the program goes on; a client that goes away leaves the program running; a 1e5-task graph
//! is written.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{clean_env, lib, profile_dir};

/// The built library and client (`cargo build` makes them beside ours).
fn library() -> PathBuf {
    let so = profile_dir().join("libayudame.so");
    assert!(so.exists(), "{} is missing: build the workspace first", so.display());
    so
}

fn client() -> PathBuf {
    profile_dir().join("ayudame-ctl")
}

/// A scratch directory of the test's own.
fn scratch(name: &str) -> PathBuf {
    let d = profile_dir().join("ayudame-library-tests").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `tests/ayudame/<name>.c` built with `-g` (as the executable of the scratch directory `dir`:
/// each test builds its own), run with the library preloaded, at `threads`.
fn command(name: &str, threads: u32, dir: &Path, env: &[(&str, &str)]) -> Command {
    let tag = dir.file_name().unwrap().to_string_lossy();
    let exe = common::clang_topic("ayudame", name, true, &format!("lib-{tag}"));
    let mut c = Command::new(exe);
    clean_env(&mut c);
    c.env("OMP_NUM_THREADS", threads.to_string())
        .env("LD_LIBRARY_PATH", &lib().dir)
        .env("LD_PRELOAD", library())
        .env("AYU_OUTPUT", dir.join("graph"))
        .env("AYU_SOCKET", dir.join("socket"))
        .envs(env.iter().copied());
    c
}

fn json(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("graph.json")).expect("the graph's JSON");
    serde_json::from_str(&text).expect("valid JSON")
}

#[test]
fn the_graph_files_hold_the_diamond() {
    for threads in [1, 2, 4] {
        let dir = scratch(&format!("diamond-{threads}"));
        let (o, left) = common::output_reaping(command("diamond", threads, &dir, &[]));
        assert!(!left && o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8_lossy(&o.stdout);
        let j = json(&dir);
        let tasks = j["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), 4, "at {threads} threads");
        let names: Vec<&str> =
            j["functions"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["diamond.c:13", "diamond.c:15", "diamond.c:17", "diamond.c:19"]);
        for t in tasks {
            assert!((0..threads as i64).contains(&t["thread"].as_i64().unwrap()), "{t}");
            assert!(t["start_ns"].as_u64().unwrap() <= t["end_ns"].as_u64().unwrap(), "{t}");
        }
        let ids: Vec<i64> = tasks.iter().map(|t| t["id"].as_i64().unwrap()).collect();
        let edges = j["edges"].as_array().unwrap();
        // The program prints the addresses: a=0x.. b=0x.. c=0x..
        let addr = |v: &str| {
            out.split_whitespace().find_map(|w| w.strip_prefix(&format!("{v}="))).unwrap().to_string()
        };
        let expected: Vec<(i64, i64, String)> = if threads == 1 {
            Vec::new()
        } else {
            vec![
                (ids[0], ids[1], addr("a")),
                (ids[0], ids[2], addr("a")),
                (ids[1], ids[3], addr("b")),
                (ids[2], ids[3], addr("c")),
            ]
        };
        let mut got: Vec<(i64, i64, String)> = edges
            .iter()
            .map(|e| {
                (
                    e["from"].as_i64().unwrap(),
                    e["to"].as_i64().unwrap(),
                    e["address"].as_str().unwrap().into(),
                )
            })
            .collect();
        got.sort();
        // The diamond's edges hold only while the top task runs late enough: the gate in the
        // program holds every task until all four exist.
        assert_eq!(got, expected, "at {threads} threads");
        let path: Vec<i64> =
            j["critical_path"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
        if threads == 1 {
            assert_eq!(path.len(), 1);
        } else {
            assert_eq!((path.len(), path[0], path[2]), (3, ids[0], ids[3]), "{path:?}");
        }
        let dot = std::fs::read_to_string(dir.join("graph.dot")).unwrap();
        assert_eq!(dot.matches(" -> ").count(), expected.len());
        assert_eq!(dot.matches("fillcolor").count(), 4);
        let svg = std::fs::read_to_string(dir.join("graph.svg")).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("class=\"task\"").count(), 4);
        assert_eq!(svg.matches("class=\"edge\"").count(), expected.len());
        assert_eq!(
            svg.matches("stroke=\"#d00\" stroke-width=\"3\"").count(),
            path.len(),
            "the critical path's tasks"
        );
    }
}

/// A program started with the library waiting for a client before its first task.
struct Paused {
    child: Child,
    socket: PathBuf,
}

impl Paused {
    fn start(name: &str, threads: u32, dir: &Path) -> Paused {
        let mut c = command(name, threads, dir, &[("AYU_PAUSE", "1")]);
        let child = c.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        let socket = dir.join("socket");
        // The socket appears at the runtime's first event: a minute at most.
        let deadline = Instant::now() + Duration::from_secs(60);
        while !socket.exists() {
            assert!(Instant::now() < deadline, "no socket at {}", socket.display());
            std::thread::sleep(Duration::from_millis(20));
        }
        Paused { child, socket }
    }

    /// Waits for the program's end (two minutes at most), killing it then.
    fn finish(mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the program did not end");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The groups of `tests/ayudame/groups.c` (a writer, two `mutexinoutset` members, a reader,
/// two `inoutset` members, a writer): each edge's ends name their accesses, the edges into
/// and out of the groups are marked, dashed or dotted in the DOT and SVG files.
#[test]
fn edges_into_and_out_of_groups_are_marked_in_the_files() {
    for threads in [2, 4] {
        let dir = scratch(&format!("groups-{threads}"));
        let (o, left) = common::output_reaping(command("groups", threads, &dir, &[]));
        assert!(!left && o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let j = json(&dir);
        let tasks = j["tasks"].as_array().unwrap();
        let types: Vec<&str> = tasks.iter().map(|t| t["accesses"][0]["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["inout", "mutexinoutset", "mutexinoutset", "in", "inoutset", "inoutset", "inout"]);
        let ids: Vec<i64> = tasks.iter().map(|t| t["id"].as_i64().unwrap()).collect();
        let mut got: Vec<(usize, usize, &str, &str)> = j["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                let pos = |k: &str| ids.iter().position(|&id| id == e[k].as_i64().unwrap()).unwrap();
                (pos("from"), pos("to"), e["from_access"].as_str().unwrap(), e["to_access"].as_str().unwrap())
            })
            .collect();
        got.sort();
        let m = "mutexinoutset";
        let s = "inoutset";
        assert_eq!(
            got,
            [
                (0, 1, "inout", m),
                (0, 2, "inout", m),
                (1, 3, m, "in"),
                (2, 3, m, "in"),
                (3, 4, "in", s),
                (3, 5, "in", s),
                (4, 6, s, "inout"),
                (5, 6, s, "inout")
            ],
            "at {threads} threads"
        );
        let dot = std::fs::read_to_string(dir.join("graph.dot")).unwrap();
        assert_eq!(
            (dot.matches("style=dashed").count(), dot.matches("style=dotted").count()),
            (4, 4),
            "{dot}"
        );
        let svg = std::fs::read_to_string(dir.join("graph.svg")).unwrap();
        assert_eq!(svg.matches(" mutexinoutset</title>").count(), 4, "{svg}");
        assert_eq!(svg.matches(" inoutset</title>").count(), 4, "{svg}");
    }
}

#[test]
fn a_client_steps_through_a_chain_one_task_at_a_time() {
    for threads in [1, 2, 4] {
        let dir = scratch(&format!("chain20-{threads}"));
        let p = Paused::start("chain20", threads, &dir);
        let mut ctl = Command::new(client())
            .arg(&p.socket)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut to = ctl.stdin.take().unwrap();
        let mut from = BufReader::new(ctl.stdout.take().unwrap()).lines();
        let mut ask = |request: &str| {
            writeln!(to, "{request}").unwrap();
            from.next().expect("an answer").unwrap()
        };
        assert_eq!(ask("frob"), "error: unknown request 'frob' (help lists them)");
        let mut started = Vec::new();
        for k in 1..=20 {
            let a = ask("step");
            let id: i64 = a
                .strip_prefix("ok: task ")
                .and_then(|r| r.strip_suffix(" started"))
                .unwrap_or_else(|| panic!("{a}"))
                .parse()
                .unwrap();
            started.push(id);
            let status = ask("status");
            assert!(
                status.contains(&format!(" started={k} ")),
                "after step {k} at {threads} threads: {status}"
            );
            assert!(status.contains("paused=yes"), "{status}");
        }
        let mut order = started.clone();
        order.sort();
        assert_eq!(started, order, "the chain's tasks start in their order");
        order.dedup();
        assert_eq!(order.len(), 20);
        // The checking task after the chain has not started: the run goes on from here.
        assert!(ask("continue").starts_with("ok"));
        drop(to);
        assert!(ctl.wait().unwrap().success());
        assert!(p.finish().success());
        assert_eq!(json(&dir)["tasks"].as_array().unwrap().len(), 21);
    }
}

/// Twenty independent tasks, all queued under a breakpoint set from the start
/// (`AYU_BREAK=1`): a client raises the fifteenth, then clears the breakpoint; the raised task
/// starts first (its PRERUNTASK before any other's: the library records a start as it is
/// told, and holds the others back until then).
#[test]
fn a_task_raised_while_queued_starts_first() {
    for threads in [2, 4] {
        let dir = scratch(&format!("flat-{threads}"));
        let mut c = command("flat", threads, &dir, &[("AYU_BREAK", "1")]);
        let child = c.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let socket = dir.join("socket");
        while !socket.exists() {
            assert!(Instant::now() < deadline, "no socket at {}", socket.display());
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut s = UnixStream::connect(&socket).unwrap();
        let mut answers = BufReader::new(s.try_clone().unwrap()).lines();
        let mut ask = |request: &str| {
            writeln!(s, "{request}").unwrap();
            answers.next().expect("an answer").unwrap()
        };
        // Every task created and queued, none started.
        let ids = loop {
            assert!(ask("dump").starts_with("ok"));
            let j = json(&dir);
            let tasks = j["tasks"].as_array().unwrap().clone();
            if tasks.len() == 20 && tasks.iter().all(|t| !t["queued_ns"].is_null()) {
                assert!(tasks.iter().all(|t| t["start_ns"].is_null()), "a task started under the breakpoint");
                break tasks.iter().map(|t| t["id"].as_i64().unwrap()).collect::<Vec<_>>();
            }
            assert!(Instant::now() < deadline, "the tasks were not queued: {j}");
            std::thread::sleep(Duration::from_millis(20));
        };
        let a = ask(&format!("prioritise {} 5", ids[14]));
        assert_eq!(a, format!("ok: task {} is queued: it starts before the other queued tasks", ids[14]));
        assert!(ask("break off").starts_with("ok"));
        drop(s);
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success());
        let j = json(&dir);
        let tasks = j["tasks"].as_array().unwrap();
        let first = tasks.iter().min_by_key(|t| t["start_ns"].as_u64().unwrap()).unwrap();
        assert_eq!(first["id"].as_i64().unwrap(), ids[14], "at {threads} threads: {j}");
    }
}

#[test]
fn a_client_that_goes_away_leaves_the_program_running() {
    let dir = scratch("chain20-gone");
    let p = Paused::start("chain20", 2, &dir);
    {
        let s = UnixStream::connect(&p.socket).unwrap();
        let mut answers = BufReader::new(s.try_clone().unwrap()).lines();
        writeln!(&s, "pause").unwrap();
        assert!(answers.next().unwrap().unwrap().starts_with("ok: paused"));
        // A one-shot client meanwhile: answered, and its leaving changes nothing.
        let o = Command::new(client()).arg(&p.socket).args(["break", "maybe"]).output().unwrap();
        assert!(!o.status.success());
        assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "error: 'break' takes on or off");
        writeln!(&s, "status").unwrap();
        let status = answers.next().unwrap().unwrap();
        assert!(status.contains("paused=yes") && status.contains(" started=0 "), "{status}");
    }
    // The paused program runs to its end once its last client has gone.
    assert!(p.finish().success());
}

#[test]
fn a_graph_of_1e5_tasks_is_written() {
    let dir = scratch("many");
    let mut c = command("many", 2, &dir, &[]);
    // Waited for with wait4 below, for the resources the program itself used.
    #[allow(clippy::zombie_processes)]
    let child = c.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let (mut status, mut usage) = (0, unsafe_zeroed_rusage());
    // SAFETY: waits for our own child, filling `status` and `usage`.
    let r = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(r, child.id() as libc::pid_t);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "status {status:#x}");
    let j = json(&dir);
    assert_eq!(j["tasks"].as_array().unwrap().len(), 100_000);
    // Each chain's 99 edges, unless a predecessor had completed when its successor came.
    assert!(j["edges"].as_array().unwrap().len() <= 99_000);
    // The picture wraps its widest layer: its width stays that of 32 tasks.
    let svg = std::fs::read_to_string(dir.join("graph.svg")).unwrap();
    assert_eq!(svg.matches("class=\"task\"").count(), 100_000);
    let width: usize = svg.split("width=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
    assert!(width < 10_000, "{width}");
    // The memory the run took stays within a bound of the graph's size (about two kilobytes
    // a task, the runtime and the files' text included).
    assert!(usage.ru_maxrss < 200 * 1024, "peak resident set {} kB", usage.ru_maxrss);
}

fn unsafe_zeroed_rusage() -> libc::rusage {
    // SAFETY: rusage is plain integers, valid when zeroed.
    unsafe { std::mem::zeroed() }
}
