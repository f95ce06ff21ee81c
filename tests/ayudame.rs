//! Ayudame task-graph events: C programs with known task graphs (tests/ayudame/*.c), built with
//! clang-19 `-g`, run on our library with a recording Ayudame library preloaded
//! (`tests/ayudame/mock.c`, one line per event in the order the events happen) at 1, 2, 3, 4 and
//! 16 threads. Each run's events must be exactly the graph's: every task announced once with
//! its function (named by its source line) and priority, every edge with the address its
//! `depend` clauses name (a diamond, a chain, nested tasks, a detached task, mutexinoutset and
//! inoutset groups, a taskloop, a `taskwait depend`), each task's accesses (oxiomp's
//! `oxiomp_ayu_access`), each task queued (when deferred), started, ended and removed once, in
//! that order, and Ayudame's ordering rules: an edge after both of its tasks and their
//! accesses, a task started only after each of its predecessors was removed. Then the library's requests: a blocked task
//! starts only once the others have run, no task starts while the breakpoint is set, a raised
//! priority puts a task first, a requested number of threads is the next region's.

mod common;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{clean_env, lib};

/// The recording library, built once.
fn mock() -> &'static Path {
    static MOCK: OnceLock<PathBuf> = OnceLock::new();
    MOCK.get_or_init(|| {
        let dir = common::profile_dir().join("ayudame-tests");
        std::fs::create_dir_all(&dir).unwrap();
        let so = dir.join("libayumock.so");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ayudame/mock.c");
        common::clang(&src, &so, &["-shared", "-fPIC", "-O2", "-Wall"]);
        so
    })
}

/// One event as the mock library wrote it: `NAME id key=value...`.
#[derive(Debug, Clone)]
struct Ev {
    name: String,
    id: i64,
    fields: HashMap<String, String>,
}

impl Ev {
    fn num(&self, key: &str) -> i64 {
        let v = &self.fields[key];
        match v.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).unwrap() as i64,
            None => v.parse().unwrap(),
        }
    }
}

/// A run: its events, and the `name=value` words of the program's standard output.
struct Run {
    events: Vec<Ev>,
    out: HashMap<String, String>,
    threads: u32,
}

fn run(name: &str, threads: u32) -> Run {
    run_with(name, threads, &[])
}

/// [`run`] with more environment (the mock library's requests).
fn run_with(name: &str, threads: u32, env: &[(&str, &str)]) -> Run {
    run_as(name, name, threads, env)
}

/// [`run_with`], the program built as `exe` (a test that runs a program another test runs too
/// builds its own: one test's build must not replace a file another is running).
fn run_as(name: &str, exe_name: &str, threads: u32, env: &[(&str, &str)]) -> Run {
    let exe = common::clang_topic("ayudame", name, true, exe_name);
    let log = common::profile_dir().join("ayudame-tests").join(format!("{exe_name}-{threads}.log"));
    let mut c = Command::new(&exe);
    clean_env(&mut c);
    c.env("OMP_NUM_THREADS", threads.to_string())
        .env("OMP_MAX_TASK_PRIORITY", "5")
        .env("LD_LIBRARY_PATH", &lib().dir)
        .env("LD_PRELOAD", mock())
        .env("AYU_MOCK_OUT", &log)
        .envs(env.iter().copied());
    let (o, left) = common::output_reaping(c);
    assert!(!left, "{name} at {threads} threads left a process running");
    assert!(o.status.success(), "{name} at {threads} threads failed: {}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&log).expect("the mock library's log");
    let events = text
        .lines()
        .map(|l| {
            let mut words = l.split(' ');
            let name = words.next().unwrap().to_string();
            let id = words.next().unwrap().parse().unwrap();
            let mut fields: HashMap<String, String> = words
                .filter_map(|w| w.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            // A function's name is the rest of its line (it may hold spaces).
            if let Some((_, n)) = l.split_once(" name=") {
                fields.insert("name".into(), n.to_string());
            }
            Ev { name, id, fields }
        })
        .collect();
    let out = String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Run { events, out, threads }
}

/// The line of the `n`th (from 0) `#pragma omp task` or `taskloop` in
/// `tests/ayudame/<name>.c`, as a function name: `name.c:LINE`.
fn task_line(name: &str, n: usize) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/ayudame/{name}.c"));
    let text = std::fs::read_to_string(src).unwrap();
    let is_task = |l: &str| {
        let l = l.trim_start();
        l.starts_with("#pragma omp task ") || l.starts_with("#pragma omp taskloop ")
    };
    let line = text.lines().enumerate().filter(|(_, l)| is_task(l)).nth(n);
    format!("{name}.c:{}", line.expect("the program has that task").0 + 1)
}

/// What the checks found out about a run's tasks.
struct Graph {
    /// Each task's function name, by task id, in the order the tasks were added.
    tasks: Vec<(i64, String)>,
    /// Each edge: (predecessor, successor, address).
    edges: HashSet<(i64, i64, u64)>,
    /// Each task's priority.
    priority: HashMap<i64, i64>,
    /// Each task's accesses (`oxiomp_ayu_access`): OMPT's dependence type by (task, address).
    access: HashMap<(i64, u64), i64>,
}

impl Graph {
    /// The ids of the tasks of function `f`, in the order they were added.
    fn of(&self, f: &str) -> Vec<i64> {
        self.tasks.iter().filter(|(_, n)| n == f).map(|&(id, _)| id).collect()
    }
}

/// Checks the rules every run must keep and returns its graph.
fn check_rules(r: &Run) -> Graph {
    let ev = &r.events;
    let show = || ev.iter().map(|e| format!("{e:?}")).collect::<Vec<_>>().join("\n");
    assert!(ev.len() >= 3, "too few events:\n{}", show());
    // The runtime's first two events (the mock library's own lines aside).
    let mut runtime = ev.iter().filter(|e| e.name != "BREAKPOINT");
    let (first, second) = (runtime.next().unwrap(), runtime.next().unwrap());
    assert_eq!((first.name.as_str(), first.id, first.num("runtime")), ("PREINIT", 0, 4), "{}", show());
    assert_eq!((second.name.as_str(), second.id), ("INIT", 0), "{}", show());
    let last = ev.last().unwrap();
    assert_eq!((last.name.as_str(), last.id), ("FINISH", 0), "{}", show());
    let mut functions: HashMap<i64, String> = HashMap::new();
    let mut tasks = Vec::new();
    let mut priority = HashMap::new();
    let mut edges = HashSet::new();
    let mut access = HashMap::new();
    // Per task: the index of each of its events.
    let mut at: HashMap<(i64, &str), usize> = HashMap::new();
    for (i, e) in ev.iter().enumerate() {
        let once = |at: &mut HashMap<(i64, &'static str), usize>, name: &'static str| {
            assert!(at.insert((e.id, name), i).is_none(), "{name} {} twice:\n{}", e.id, show());
        };
        match e.name.as_str() {
            "REGISTERFUNCTION" => {
                assert_eq!(e.id, functions.len() as i64 + 1, "function ids count from 1");
                assert!(functions.insert(e.id, e.fields["name"].clone()).is_none());
            }
            "ADDTASK" => {
                assert_ne!(e.id, 0);
                let f = functions.get(&e.num("function")).expect("ADDTASK of a registered function");
                tasks.push((e.id, f.clone()));
                priority.insert(e.id, e.num("priority"));
                once(&mut at, "ADDTASK");
            }
            "ADDDEPENDENCY" => {
                let pred = e.num("predecessor");
                assert!(
                    at.contains_key(&(e.id, "ADDTASK")),
                    "edge before its successor's ADDTASK:\n{}",
                    show()
                );
                assert!(
                    at.contains_key(&(pred, "ADDTASK")),
                    "edge before its predecessor's ADDTASK:\n{}",
                    show()
                );
                assert_eq!(e.fields["address"], e.fields["original"]);
                let a = e.num("address") as u64;
                assert!(edges.insert((pred, e.id, a)), "edge told twice:\n{}", show());
                // Both tasks' accesses were told before it: each named the address, or all
                // memory.
                for t in [pred, e.id] {
                    assert!(
                        access.contains_key(&(t, a)) || access.contains_key(&(t, u64::MAX)),
                        "edge {pred} -> {} through {a:#x} before task {t}'s access:\n{}",
                        e.id,
                        show()
                    );
                }
            }
            "ACCESS" => {
                assert!(at.contains_key(&(e.id, "ADDTASK")), "access before its task's ADDTASK:\n{}", show());
                let a = e.num("address") as u64;
                assert!(access.insert((e.id, a), e.num("type")).is_none(), "access told twice:\n{}", show());
            }
            "ADDTASKTOQUEUE" => {
                assert!((0..r.threads as i64).contains(&e.num("thread")), "{e:?}");
                once(&mut at, "ADDTASKTOQUEUE");
            }
            "PRERUNTASK" => {
                assert!((0..r.threads as i64).contains(&e.num("thread")), "{e:?}");
                once(&mut at, "PRERUNTASK");
            }
            "RUNTASK" => once(&mut at, "RUNTASK"),
            "POSTRUNTASK" => once(&mut at, "POSTRUNTASK"),
            "REMOVETASK" => once(&mut at, "REMOVETASK"),
            "BARRIER" => assert_eq!(e.id, 0),
            // The mock library's own line: its breakpoint set or cleared.
            "BREAKPOINT" => {}
            "PREINIT" | "INIT" | "FINISH" => assert!(i < 3 || i == ev.len() - 1, "{} in the middle", e.name),
            other => panic!("unexpected event {other}:\n{}", show()),
        }
    }
    for &(id, _) in &tasks {
        let order: Vec<usize> = ["ADDTASK", "PRERUNTASK", "RUNTASK", "POSTRUNTASK", "REMOVETASK"]
            .iter()
            .map(|n| *at.get(&(id, *n)).unwrap_or_else(|| panic!("task {id} has no {n}:\n{}", show())))
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "task {id}'s events out of order:\n{}", show());
        if let Some(&q) = at.get(&(id, "ADDTASKTOQUEUE")) {
            assert!(order[0] < q && q < order[1], "task {id} queued out of order:\n{}", show());
        }
    }
    for &(pred, succ, _) in &edges {
        assert!(
            at[&(pred, "REMOVETASK")] < at[&(succ, "PRERUNTASK")],
            "task {succ} started before its predecessor {pred} was removed:\n{}",
            show()
        );
    }
    // The team's barriers wait for its tasks: one ends after every task was removed.
    let removed = tasks.iter().map(|&(id, _)| at[&(id, "REMOVETASK")]).max().unwrap_or(0);
    assert!(ev[removed..].iter().any(|e| e.name == "BARRIER"), "no barrier after the tasks:\n{}", show());
    Graph { tasks, edges, priority, access }
}

/// The one task of each of the first `N` task directives of program `name`, by directive.
fn one_each<const N: usize>(g: &Graph, name: &str, threads: u32) -> [i64; N] {
    std::array::from_fn(|n| {
        let ids = g.of(&task_line(name, n));
        assert_eq!(ids.len(), 1, "task {n} of {name} at {threads} threads: {:?}", g.tasks);
        ids[0]
    })
}

/// The index of task `id`'s event `name` in the run.
fn at(r: &Run, id: i64, name: &str) -> usize {
    r.events.iter().position(|e| e.id == id && e.name == name).unwrap_or_else(|| panic!("no {name} of {id}"))
}

/// The address the program printed for `var`.
fn addr(r: &Run, var: &str) -> u64 {
    u64::from_str_radix(r.out[var].trim_start_matches("0x"), 16).unwrap()
}

const THREADS: [u32; 5] = [1, 2, 3, 4, 16];

#[test]
fn a_diamond_is_told_as_four_tasks_and_four_edges() {
    for threads in THREADS {
        let r = run("diamond", threads);
        let g = check_rules(&r);
        let [top, left, right, bottom] = one_each(&g, "diamond", threads);
        assert_eq!(g.tasks.len(), 4);
        let (a, b, c) = (addr(&r, "a"), addr(&r, "b"), addr(&r, "c"));
        let expected: HashSet<_> = if threads == 1 {
            // A team of one runs each task at once: no task waits for another.
            HashSet::new()
        } else {
            [(top, left, a), (top, right, a), (left, bottom, b), (right, bottom, c)].into()
        };
        assert_eq!(g.edges, expected, "at {threads} threads");
        assert!(g.priority.values().all(|&p| p == 0));
    }
}

#[test]
fn a_chain_is_told_with_each_tasks_priority() {
    for threads in THREADS {
        let r = run("chain", threads);
        let g = check_rules(&r);
        let ids = g.of(&task_line("chain", 0));
        assert_eq!(ids.len(), 10, "at {threads} threads: {:?}", g.tasks);
        let x = addr(&r, "x");
        let expected: HashSet<_> =
            if threads == 1 { HashSet::new() } else { ids.windows(2).map(|w| (w[0], w[1], x)).collect() };
        assert_eq!(g.edges, expected, "at {threads} threads");
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(g.priority[id], i as i64 % 3, "task {i}'s priority at {threads} threads");
        }
        // Queued: every task a team of more than one defers.
        let queued = r.events.iter().filter(|e| e.name == "ADDTASKTOQUEUE").count();
        assert_eq!(queued, if threads == 1 { 0 } else { 10 }, "at {threads} threads");
    }
}

#[test]
fn nested_tasks_are_told_with_their_own_edges() {
    for threads in THREADS {
        let r = run("nested", threads);
        let g = check_rules(&r);
        let [parent, first, second, sibling] = one_each(&g, "nested", threads);
        let (a, p) = (addr(&r, "a"), addr(&r, "p"));
        let expected: HashSet<_> =
            if threads == 1 { HashSet::new() } else { [(parent, sibling, p), (first, second, a)].into() };
        assert_eq!(g.edges, expected, "at {threads} threads");
        // The children are added while their parent runs, and removed before it ends (its
        // taskwait).
        for child in [first, second] {
            assert!(at(&r, parent, "RUNTASK") < at(&r, child, "ADDTASK"));
            assert!(at(&r, child, "REMOVETASK") < at(&r, parent, "POSTRUNTASK"));
        }
    }
}

#[test]
fn a_detached_task_is_removed_when_its_event_is_fulfilled() {
    for threads in THREADS {
        let r = run("detached", threads);
        let g = check_rules(&r);
        let [detached, after, fulfils] = one_each(&g, "detached", threads);
        // The dependent task waits for the detached one's completion, whatever the threads.
        assert_eq!(g.edges, [(detached, after, addr(&r, "a"))].into(), "at {threads} threads");
        // Removed once its event is fulfilled (by the third task) and its body has returned
        // (whichever comes last: the runtime's rules checked its POSTRUNTASK before).
        assert!(at(&r, fulfils, "RUNTASK") < at(&r, detached, "REMOVETASK"), "at {threads} threads");
        if at(&r, detached, "POSTRUNTASK") < at(&r, fulfils, "RUNTASK") {
            assert!(at(&r, detached, "REMOVETASK") < at(&r, fulfils, "POSTRUNTASK"), "at {threads} threads");
        }
    }
}

#[test]
fn edges_through_groups_are_told_from_the_groups_members() {
    for threads in THREADS {
        let r = run("groups", threads);
        let g = check_rules(&r);
        let [w, m1, m2, rd, s1, s2, o] = one_each(&g, "groups", threads);
        let x = addr(&r, "x");
        let expected: HashSet<_> = if threads == 1 {
            HashSet::new()
        } else {
            [(w, m1), (w, m2), (m1, rd), (m2, rd), (rd, s1), (rd, s2), (s1, o), (s2, o)]
                .map(|(p, s)| (p, s, x))
                .into()
        };
        assert_eq!(g.edges, expected, "at {threads} threads");
        // Each task's access to x (OMPT's types: clang passes `out` as `inout`, 3), from which
        // a reader tells the edges into and out of each group, and the groups' members.
        let types: Vec<i64> = [w, m1, m2, rd, s1, s2, o].iter().map(|&t| g.access[&(t, x)]).collect();
        assert_eq!(types, [3, 4, 4, 1, 7, 7, 3], "at {threads} threads");
        assert_eq!(g.access.len(), 7, "at {threads} threads: {:?}", g.access);
        // The mutexinoutset members never run at once.
        assert!(
            at(&r, m1, "POSTRUNTASK") < at(&r, m2, "PRERUNTASK")
                || at(&r, m2, "POSTRUNTASK") < at(&r, m1, "PRERUNTASK"),
            "at {threads} threads"
        );
    }
}

#[test]
fn a_taskloops_chunks_are_tasks_of_its_function() {
    for threads in THREADS {
        let r = run("taskloop", threads);
        let g = check_rules(&r);
        let chunks = g.of(&task_line("taskloop", 0));
        assert_eq!(chunks.len(), 4, "at {threads} threads: {:?}", g.tasks);
        let after = g.of(&task_line("taskloop", 1));
        assert_eq!(after.len(), 1, "at {threads} threads: {:?}", g.tasks);
        let after = after[0];
        // The task after the taskloop (its implicit taskgroup) finds every chunk complete.
        assert!(g.edges.is_empty(), "at {threads} threads: {:?}", g.edges);
        for c in chunks {
            assert!(at(&r, c, "REMOVETASK") < at(&r, after, "ADDTASK"), "at {threads} threads");
        }
    }
}

/// The team sizes at which a task's creator queues its tasks (a team of one runs each at once:
/// a request holds such a task, and its creator, where it is).
const QUEUEING: [u32; 4] = [2, 3, 4, 16];

#[test]
fn a_blocked_task_starts_after_the_others_have_run() {
    for threads in QUEUEING {
        let block = format!("{}:6", task_line("blocked", 0));
        let r = run_with("blocked", threads, &[("AYU_MOCK_BLOCK", &block)]);
        let g = check_rules(&r);
        let [blocked] = one_each(&g, "blocked", threads);
        let others = g.of(&task_line("blocked", 1));
        assert_eq!(others.len(), 6, "at {threads} threads: {:?}", g.tasks);
        for o in others {
            assert!(at(&r, o, "REMOVETASK") < at(&r, blocked, "PRERUNTASK"), "at {threads} threads");
        }
    }
}

#[test]
fn no_task_starts_while_the_breakpoint_is_set() {
    for threads in QUEUEING {
        // Set from the start until the last of the 7 tasks is added: the other threads look
        // for tasks meanwhile, and must leave them.
        let r = run_with("blocked", threads, &[("AYU_MOCK_BREAK", "7")]);
        let g = check_rules(&r);
        assert_eq!(g.tasks.len(), 7);
        let off = r.events.iter().position(|e| e.name == "BREAKPOINT" && e.fields["state"] == "off");
        let off = off.expect("the breakpoint cleared");
        let started = r.events[..off].iter().filter(|e| e.name == "PRERUNTASK").count();
        assert_eq!(started, 0, "a task started under the breakpoint at {threads} threads");
    }
}

#[test]
fn a_raised_task_goes_first() {
    for threads in QUEUEING {
        let raise = format!("{}:5", task_line("prio", 0));
        let r = run_with("prio", threads, &[("AYU_MOCK_PRIORITY", &raise)]);
        let g = check_rules(&r);
        let raised = g.of(&task_line("prio", 0));
        assert_eq!(raised.len(), 1, "at {threads} threads: {:?}", g.tasks);
        assert_eq!(g.priority[&raised[0]], 0, "created without a priority");
        let first = r.events.iter().find(|e| e.name == "PRERUNTASK").unwrap();
        assert_eq!(first.id, raised[0], "at {threads} threads");
    }
}

#[test]
fn the_requested_number_of_threads_is_the_next_regions() {
    for (threads, requested, expected) in [(2, "3", 3), (4, "1", 1), (2, "0", 2)] {
        let r = run_with("threads", threads, &[("AYU_MOCK_THREADS", requested)]);
        let sizes: Vec<&str> = ["first", "second", "clause"].iter().map(|k| r.out[*k].as_str()).collect();
        let want = expected.to_string();
        assert_eq!(
            sizes,
            [want.as_str(), want.as_str(), "2"],
            "OMP_NUM_THREADS={threads}, request {requested}"
        );
    }
}

#[test]
fn a_taskwait_depend_is_a_task_with_an_edge_from_what_it_waits_for() {
    for threads in QUEUEING {
        // No task starts until the first edge is told (the wait's: the two tasks have none),
        // so the task the wait names cannot have completed before it.
        let r = run_with("twdep", threads, &[("AYU_MOCK_BREAK", "edge")]);
        let g = check_rules(&r);
        let [first, _second] = one_each(&g, "twdep", threads);
        let wait = g.of("taskwait depend");
        assert_eq!(wait.len(), 1, "at {threads} threads: {:?}", g.tasks);
        let x = addr(&r, "x");
        assert_eq!(g.edges, [(first, wait[0], x)].into(), "at {threads} threads");
        // The wait's access is its clause's (`in`), the writer's `inout` (clang's `out`).
        assert_eq!((g.access[&(wait[0], x)], g.access[&(first, x)]), (1, 3), "at {threads} threads");
    }
}

#[test]
fn a_library_that_blocks_in_every_event_only_slows_the_run() {
    // Each event's thread sleeps inside AYU_event: every path that tells an event must let
    // it (a library pausing there), and the graph must come out the same.
    for threads in [2, 16] {
        let programs =
            [("diamond", 4), ("nested", 4), ("detached", 3), ("groups", 7), ("taskloop", 5), ("twdep", 3)];
        for (name, tasks) in programs {
            let r = run_as(name, &format!("{name}-delay"), threads, &[("AYU_MOCK_DELAY_US", "300")]);
            let g = check_rules(&r);
            assert_eq!(g.tasks.len(), tasks, "{name} at {threads} threads");
        }
    }
}
