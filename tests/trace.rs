//! Tracing end to end: C programs built with clang-19 run on our library with `OMP_OVNI=1`;
//! the trace they leave is decoded and each thread's recorded state sequence is checked
//! exactly, `oxiomp-trace check` rules hold, and hand-made bad traces are rejected with the
//! right message.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{clean_env, lib, profile_dir};

use oxiomp_instrument::format::{self, Event, Payload};
use oxiomp_instrument::trace::{self, Trace};
use oxiomp_instrument::{State, Subsystem};

/// Builds `tests/trace/<name>.c` into a file of its own for this `threads` value; returns it.
fn build(name: &str, threads: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/trace").join(format!("{name}.c"));
    let dir = profile_dir().join("trace-tests");
    std::fs::create_dir_all(&dir).unwrap();
    // One executable per run: tests that run one program in teams of different sizes run
    // in parallel (one compiling over the file the other executes fails with ETXTBSY).
    let exe = dir.join(format!("{name}-{threads}"));
    let out = Command::new("clang-19")
        .args(["-fopenmp", "-O2", "-Wall", "-g"])
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("clang-19 (install it: scripts/setup.sh)");
    assert!(out.status.success(), "compiling {name}.c: {}", String::from_utf8_lossy(&out.stderr));
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

#[test]
fn worksharing_states_are_exact() {
    let (t, _) = traced_run("trace_ws", "3", true);
    let labels = type_labels(&t);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/trace/trace_ws.c");
    let mut chunks = 0;
    let mut singles = 0;
    let mut members = 0;
    for th in &t.threads {
        let got = seq(&th.events, &[Subsystem::WorkDistribution, Subsystem::Critical]);
        if got.is_empty() {
            continue;
        }
        members += 1;
        // static loop: one chunk per thread (30 iterations over 3 threads).
        let mut want: Vec<(bool, State)> = pair(State::StaticForChunk).to_vec();
        want.extend(pair(State::DynamicForInit));
        let n = got.iter().filter(|&&(e, s)| e && s == State::DynamicForChunk).count();
        chunks += n;
        for _ in 0..n {
            want.extend(pair(State::DynamicForChunk));
        }
        if got.contains(&(true, State::Single)) {
            singles += 1;
            want.extend(pair(State::Single));
        }
        for _ in 0..2 {
            want.extend([
                (true, State::CriticalAcquiring),
                (false, State::CriticalAcquiring),
                (true, State::CriticalSection),
                (false, State::CriticalSection),
                (true, State::CriticalReleasing),
                (false, State::CriticalReleasing),
            ]);
        }
        assert_eq!(got, want, "thread {}", th.tid);
        // A critical section begins when the lock is acquired and ends when the release
        // begins: each pair is one instant (one clock read for both events).
        for w in critical_events(&th.events).chunks(6) {
            assert_eq!(w[1].clock, w[2].clock, "thread {}: acquired and section begin", th.tid);
            assert_eq!(w[3].clock, w[4].clock, "thread {}: section end and release", th.tid);
        }
        // A dynamic chunk ends where the next begins, and the last where the thread's part of
        // the loop ends: one clock read each.
        let codes =
            [State::DynamicForChunk.ovni_code(true), State::DynamicForChunk.ovni_code(false), *b"PQe"];
        let around: Vec<&Event> = th.events.iter().filter(|e| codes.contains(&e.mcv)).collect();
        for w in around.windows(2).filter(|w| w[0].mcv == codes[1]) {
            assert_eq!(w[0].clock, w[1].clock, "thread {}: a chunk's end and {}", th.tid, w[1].code());
        }
    }
    // Mutual exclusion as the trace shows it: no two threads' critical sections overlap (a
    // section's end is stamped while its lock is still held, its beginning once taken). The
    // clock is the TSC, which the CPU may read a few dozen nanoseconds out of program order:
    // 1 us of slack, far below the overlap a stamp taken after the release shows when the
    // releasing thread is preempted (the bug this checks for).
    let mut sections: Vec<(u64, u64, u32)> = t
        .threads
        .iter()
        .flat_map(|th| {
            critical_events(&th.events)
                .chunks(6)
                .map(|w| (w[2].clock, w[3].clock, th.tid))
                .collect::<Vec<_>>()
        })
        .collect();
    sections.sort();
    for p in sections.windows(2) {
        assert!(p[0].1 <= p[1].0 + 1000, "critical sections overlap in the trace: {:?} and {:?}", p[0], p[1]);
    }
    // Worksharing begin/end events: per thread the static loop, the dynamic loop and, for the
    // thread that ran it, the single, each a PQx/PQe pair of one declared type.
    for th in &t.threads {
        let ws: Vec<(bool, u32)> = th
            .events
            .iter()
            .filter(|e| &e.mcv == b"PQx" || &e.mcv == b"PQe")
            .map(|e| match &e.payload {
                Payload::Raw(b) => (&e.mcv == b"PQx", u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                p => panic!("PQ payload {p:?}"),
            })
            .collect();
        if ws.is_empty() {
            continue;
        }
        // Each construct its own type, labelled with its kind and source location.
        let label = |k: usize| labels.get(&ws[k].1).cloned().unwrap_or_default();
        let kinds: Vec<(bool, String)> = (0..ws.len()).map(|k| (ws[k].0, label(k))).collect();
        let at = |kind: &str| kind.to_string() + " " + &src.display().to_string();
        let mut want = vec![
            (true, at("for (static)")),
            (false, at("for (static)")),
            (true, at("for (dynamic)")),
            (false, at("for (dynamic)")),
        ];
        if ws.len() == 6 {
            want.extend([(true, at("single")), (false, at("single"))]);
        }
        let kinds: Vec<(bool, String)> = kinds
            .into_iter()
            .map(|(b, l)| (b, l.rsplitn(3, ':').last().unwrap_or_default().to_string()))
            .collect();
        assert_eq!(kinds, want, "thread {}", th.tid);
        assert!(
            ws.chunks(2).all(|p| p[0].1 == p[1].1),
            "thread {}: a construct ends with its own type",
            th.tid
        );
        // A thread's part of a construct begins with its first state (static chunk, dynamic
        // loop initialisation, single) at one instant, and a static chunk or single ends
        // with the part (one clock read for both events).
        let ws_type = |e: &Event| e.payload_u32(0).unwrap_or(0);
        for w in th.events.windows(2) {
            if &w[0].mcv == b"PQx" {
                let next = trace::state_of(&w[1].mcv);
                assert!(next.is_some_and(|(_, enter)| enter), "thread {}: {:?} after PQx", th.tid, w[1].mcv);
                assert_eq!(w[0].clock, w[1].clock, "thread {}: PQx and its first state", th.tid);
            }
            if &w[1].mcv == b"PQe" && !labels[&ws_type(&w[1])].starts_with("for (dynamic)") {
                assert_eq!(w[0].clock, w[1].clock, "thread {}: the last state and PQe", th.tid);
            }
        }
    }
    // Each construct type is declared once in the process (check() verified before use).
    let declared = t.threads.iter().flat_map(|th| &th.events).filter(|e| &e.mcv == b"POc").count();
    assert_eq!(declared, 3, "for (static), for (dynamic) and single declared once each");
    assert_eq!(members, 3, "three threads recorded worksharing");
    assert_eq!(chunks, 10, "dynamic,10 over 100 iterations is 10 chunks");
    assert_eq!(singles, 1, "one thread ran the single");
}

#[test]
fn task_states_are_exact() {
    let (t, _) = traced_run("trace_tasks", "2", true);
    let count = |code: &[u8; 3]| -> usize {
        t.threads.iter().flat_map(|th| &th.events).filter(|e| &e.mcv == code).count()
    };
    assert_eq!(count(State::TaskAllocation.ovni_mcv()), 40);
    assert_eq!(count(State::TaskCheckDeps.ovni_mcv()), 20);
    assert_eq!(count(State::TaskRunning.ovni_mcv()), 40);
    assert_eq!(count(State::TaskReleasingDeps.ovni_mcv()), 20);
    // Task life: 40 created, each run and ended once (check() verified the order).
    assert_eq!(count(b"PPc"), 40);
    assert_eq!(count(b"PPx"), 40);
    assert_eq!(count(b"PPe"), 40);
    // A task runs from the instant its thread enters "running task" (one clock read for
    // both events) to the instant it leaves it.
    let (begin, end) = (*State::TaskRunning.ovni_mcv(), *b"PT]");
    for th in &t.threads {
        for w in th.events.windows(2) {
            if &w[1].mcv == b"PPx" {
                assert_eq!((w[0].mcv, w[0].clock), (begin, w[1].clock), "thread {}", th.tid);
            }
            if &w[0].mcv == b"PPe" {
                assert_eq!((w[1].mcv, w[1].clock), (end, w[0].clock), "thread {}", th.tid);
            }
        }
    }
    // A task is created at the instant its allocation ends (one clock read for both).
    for th in &t.threads {
        for w in th.events.windows(2) {
            if &w[0].mcv == b"PPc" {
                let left_alloc = State::TaskAllocation.ovni_code(false);
                assert_eq!((w[1].mcv, w[1].clock), (left_alloc, w[0].clock), "thread {}", th.tid);
            }
        }
    }
    // Two task types (the chain task and the free task) and the single construct, declared
    // once each in the process.
    assert_eq!(count(b"POc"), 3);
    // The creating thread: allocation (and the dependence check for chain tasks) for each
    // task, in creation order, then one taskwait (unless every task was done by then).
    let creator = t
        .threads
        .iter()
        .find(|th| th.events.iter().any(|e| &e.mcv == State::TaskAllocation.ovni_mcv()))
        .expect("a creating thread");
    let creation: Vec<(bool, State)> = seq(&creator.events, &[Subsystem::Task])
        .into_iter()
        .filter(|(_, s)| matches!(s, State::TaskAllocation | State::TaskCheckDeps))
        .collect();
    let mut want = Vec::new();
    for _ in 0..20 {
        want.extend(pair(State::TaskAllocation));
        want.extend(pair(State::TaskCheckDeps));
        want.extend(pair(State::TaskAllocation));
    }
    assert_eq!(creation, want);
    // The taskwait records a state only if it had to wait (the other thread may have run
    // every task by then): if it did, once, after the last creation, balanced.
    let tasks = seq(&creator.events, &[Subsystem::Task]);
    let waits: Vec<usize> =
        tasks.iter().enumerate().filter(|&(_, &(_, s))| s == State::Taskwait).map(|(i, _)| i).collect();
    match waits[..] {
        [] => {}
        [enter, exit] => {
            assert_eq!((tasks[enter].0, tasks[exit].0), (true, false), "{tasks:?}");
            let last_alloc = tasks.iter().rposition(|&(_, s)| s == State::TaskAllocation);
            assert!(last_alloc.is_some_and(|a| a < enter), "taskwait before a creation: {tasks:?}");
        }
        _ => panic!("one taskwait at most: {tasks:?}"),
    }
}

/// The thread that started the process (on Linux its thread id is the process id).
fn initial_thread(t: &Trace) -> &trace::ThreadStream {
    let initial: Vec<_> = t.threads.iter().filter(|th| th.tid == th.pid).collect();
    assert_eq!(initial.len(), 1, "one initial thread");
    initial[0]
}

/// The task numbers of a thread's `PPc` (created) or `PPx` (runs) events, in order.
fn task_ids(th: &trace::ThreadStream, mcv: &[u8; 3]) -> Vec<u32> {
    th.events.iter().filter(|e| &e.mcv == mcv).map(|e| e.payload_u32(0).expect("a task number")).collect()
}

fn count_in(got: &[(bool, State)], s: State) -> (usize, usize) {
    let n = |enter: bool| got.iter().filter(|&&x| x == (enter, s)).count();
    (n(true), n(false))
}

/// Thread 0 creates A (out: x, waits until thread 1 lets it go) and B (in: x), then waits for
/// them; thread 1 stays away from task scheduling points until B has run. So thread 0 runs
/// both inside its taskwait, which has to block until A ends: one taskwait holding A's run,
/// the release of its dependences (which readies B), then B's run and release.
#[test]
fn taskwait_blocks_until_its_children_end() {
    let (t, _) = traced_run("trace_taskwait", "2", true);
    assert_eq!(t.threads.len(), 2);
    let main = initial_thread(&t);
    let got = seq(&main.events, &[Subsystem::Task]);
    let (alloc, check, sched, run, release) = (
        State::TaskAllocation,
        State::TaskCheckDeps,
        State::TaskScheduling,
        State::TaskRunning,
        State::TaskReleasingDeps,
    );
    let mut want = Vec::new();
    // A: allocated, its dependence entered (ready), queued.
    want.extend(pair(alloc));
    want.extend(pair(check));
    want.extend(pair(sched));
    // B: allocated, its dependence entered (it waits for A): not queued.
    want.extend(pair(alloc));
    want.extend(pair(check));
    want.push((true, State::Taskwait));
    for _ in 0..2 {
        want.extend(pair(run));
        want.extend(pair(release));
    }
    want.push((false, State::Taskwait));
    assert_eq!(got, want, "thread {}", main.tid);
    assert_eq!(count_in(&got, State::Taskwait), (1, 1));
    // A then B, each once, here.
    let created = task_ids(main, b"PPc");
    assert_eq!(created.len(), 2);
    assert_eq!(task_ids(main, b"PPx"), created, "tasks run in creation order");
    assert_eq!(task_ids(main, b"PPe"), created);
    let other = t.threads.iter().find(|th| th.tid != main.tid).expect("thread 1");
    assert_eq!(seq(&other.events, &[Subsystem::Task]), vec![], "thread 1 ran no task");
}

/// `trace_task_constructs.c`: the task states of an if(0) task, a taskgroup, taskwait
/// depend, taskyield, a task run by a barrier, and the section state of a sections construct.
fn task_constructs(threads: &str) {
    let (t, _) = traced_run("trace_task_constructs", threads, true);
    let team: usize = threads.parse().unwrap();
    assert_eq!(t.threads.len(), team);
    let main = initial_thread(&t);
    let got = seq(&main.events, &[Subsystem::Task]);
    let (alloc, check, sched, run, release) = (
        State::TaskAllocation,
        State::TaskCheckDeps,
        State::TaskScheduling,
        State::TaskRunning,
        State::TaskReleasingDeps,
    );
    // In a team of 1 every task runs at once (a detachable one too: only its completion
    // waits); in a team of 2 each is queued, and thread 0 runs it at its next scheduling point.
    let queued = team > 1;
    let mut want = Vec::new();
    // 1. task if(0): runs at once, in its own state.
    want.extend(pair(alloc));
    want.extend(pair(State::TaskRunningIf0));
    // 2. taskgroup: its task runs at once, or at the end of the group, which waits for it.
    want.extend(pair(alloc));
    if queued {
        want.extend(pair(sched));
        want.push((true, State::Taskgroup));
        want.extend(pair(run));
        want.push((false, State::Taskgroup));
    } else {
        want.extend(pair(run));
        want.extend(pair(State::Taskgroup));
    }
    // 3. D1 (detached, out: x), B1 (inout: x) waiting for it, a taskyield (which runs D1 when
    // it was queued), D1's event fulfilled: its dependences released (B1 queued), then
    // taskwait depend(in: x) waits for B1, running it.
    // 4. The same with D2 and T, but T is left queued for the barrier.
    for step in [3, 4] {
        want.extend(pair(alloc));
        want.extend(pair(check));
        if queued {
            want.extend(pair(sched));
        } else {
            want.extend(pair(run));
        }
        want.extend(pair(alloc));
        want.extend(pair(check));
        if queued {
            want.push((true, State::Taskyield));
            want.extend(pair(run));
            want.push((false, State::Taskyield));
        } else {
            want.extend(pair(State::Taskyield));
        }
        want.extend(pair(release));
        if step == 3 {
            want.push((true, State::TaskwaitDeps));
        }
        want.extend(pair(run));
        want.extend(pair(release));
        if step == 3 {
            want.push((false, State::TaskwaitDeps));
        }
    }
    assert_eq!(got, want, "thread {} in a team of {team}", main.tid);
    for (s, n) in [
        (State::TaskRunningIf0, 1),
        (State::Taskgroup, 1),
        (State::TaskwaitDeps, 1),
        (State::Taskyield, 2),
        (State::Taskwait, 0),
        (State::TaskScheduling, if queued { 3 } else { 0 }),
    ] {
        assert_eq!(count_in(&got, s), (n, n), "{s:?} in a team of {team}");
    }
    // Six tasks, each run once here, in creation order (B1 and T after their predecessors'
    // release; the if(0) task's run in its own state).
    let created = task_ids(main, b"PPc");
    assert_eq!(created.len(), 6);
    assert_eq!(task_ids(main, b"PPx"), created, "tasks run in creation order");
    assert_eq!(task_ids(main, b"PPe"), created);
    // T, the last task, runs in the barrier's task state: the only one of the thread.
    let barrier_tasks = seq(&main.events, &[Subsystem::Barrier, Subsystem::Task]);
    let bt: Vec<_> = barrier_tasks
        .iter()
        .copied()
        .filter(|&(_, s)| matches!(s, State::BarrierTask | State::TaskRunning))
        .collect();
    assert_eq!(count_in(&bt, State::BarrierTask), (1, 1), "team of {team}");
    assert!(
        bt.ends_with(&[(true, State::BarrierTask), (true, run), (false, run), (false, State::BarrierTask)]),
        "T runs in the barrier: {bt:?}"
    );
    // The sections construct: each thread's part of it, in the section state (one static
    // part per thread: clang-19 lowers sections to a static loop of the sections kind).
    for th in &t.threads {
        let ws = seq(&th.events, &[Subsystem::WorkDistribution]);
        assert_eq!(ws, pair(State::Section), "thread {}", th.tid);
        let kinds: Vec<_> = th
            .events
            .iter()
            .filter(|e| &e.mcv == b"PQx" || &e.mcv == b"PQe")
            .map(|e| (e.code(), e.payload_u32(0)))
            .collect();
        let sections = kinds.first().and_then(|k| k.1);
        assert!(
            sections.is_some_and(|ty| type_labels(&t)[&ty].starts_with("sections ")),
            "thread {}: {kinds:?}",
            th.tid
        );
        assert_eq!(
            kinds,
            [("PQx".to_string(), sections), ("PQe".to_string(), sections)],
            "thread {}",
            th.tid
        );
    }
    // The other thread waited outside any task scheduling point: no task state, no barrier
    // task state.
    for th in t.threads.iter().filter(|th| th.tid != main.tid) {
        assert_eq!(seq(&th.events, &[Subsystem::Task]), vec![], "thread {}", th.tid);
        let b = seq(&th.events, &[Subsystem::Barrier]);
        assert_eq!(count_in(&b, State::BarrierTask), (0, 0), "thread {}", th.tid);
    }
}

#[test]
fn task_constructs_in_a_team_of_one() {
    task_constructs("1");
}

#[test]
fn task_constructs_in_a_team_of_two() {
    task_constructs("2");
}

/// A sections construct run through libomp's dispatch entries (`__kmpc_next_section`) shows as
/// sections, like the one clang-19 lowers to a static loop.
#[test]
fn next_section_records_sections() {
    let (t, _) = traced_run("trace_next_section", "1", true);
    let th = initial_thread(&t);
    let ws = seq(&th.events, &[Subsystem::WorkDistribution]);
    assert!(!ws.is_empty() && ws.iter().all(|&(_, s)| s == State::Section), "{ws:?}");
    let kinds: Vec<_> = th.events.iter().filter(|e| &e.mcv == b"PQx").map(|e| e.payload_u32(0)).collect();
    assert_eq!(kinds.len(), 1, "one sections construct: {kinds:?}");
    // The program passes no ident_t: the kind alone names it.
    let label = &type_labels(&t)[&kinds[0].unwrap()];
    assert_eq!(label, "sections");
}

#[test]
fn allocations_from_the_threads_list_are_instants() {
    let (t, _) = traced_run("trace_task_alloc", "1", true);
    let th =
        t.threads.iter().find(|th| th.events.iter().any(|e| &e.mcv == b"PPc")).expect("the creating thread");
    let (enter, exit) = (State::TaskAllocation.ovni_code(true), State::TaskAllocation.ovni_code(false));
    // Each allocation: its state is entered, the task created as it is left (the first
    // creation also declares the task's type, `POc`).
    let events: Vec<_> = th.events.iter().filter(|e| &e.mcv != b"POc").cloned().collect();
    let running = State::TaskRunning.ovni_code(true);
    let allocs: Vec<(u64, u64, u64, u64)> = events
        .windows(4)
        .filter(|w| w[0].mcv == enter)
        .map(|w| {
            assert_eq!((w[1].mcv, w[2].mcv), (*b"PPc", exit), "allocation events of thread {}", th.tid);
            // Each task runs at once: the next event is its running state.
            assert_eq!(w[3].mcv, running, "after allocation, thread {}", th.tid);
            (w[0].clock, w[1].clock, w[2].clock, w[3].clock)
        })
        .collect();
    assert_eq!(allocs.len(), 10);
    // The first block comes from the system: that allocation is timed (the creation leaves it
    // at a later clock read, and the task starts at another). The nine others take the block
    // the previous task gave back: the three events share one clock read, the one of the
    // thread's next event, the task's start.
    let a = allocs[0];
    assert!(a.0 < a.1 && a.1 == a.2 && a.2 <= a.3, "first allocation {a:?}");
    for (i, a) in allocs.iter().enumerate().skip(1) {
        assert!(
            a.0 == a.1 && a.1 == a.2 && a.2 == a.3,
            "allocation {i} is not one instant with the start: {a:?}"
        );
    }
}

#[test]
fn taskloop_chunks_are_duplicated_then_run() {
    let (t, _) = traced_run("trace_taskloop", "1", true);
    let th = t
        .threads
        .iter()
        .find(|th| th.events.iter().any(|e| &e.mcv == b"PPc"))
        .expect("the encountering thread");
    let count = |code: &[u8; 3]| th.events.iter().filter(|e| &e.mcv == code).count();
    // Two patterns (allocated, never run), 12 + 3 chunks and 3 tasks made by the chunks of
    // the second loop: each created once; the chunks and tasks each run and end once.
    assert_eq!(count(b"PPc"), 2 + 15 + 3);
    assert_eq!(count(b"PPx"), 15 + 3);
    assert_eq!(count(b"PPe"), 15 + 3);
    // Each chunk: copied from the pattern in the duplicating state, then run (the tasks the
    // second loop's chunks create run at once inside them: allocation, then running).
    let states = seq(&th.events, &[Subsystem::Task]);
    let (dup, run, alloc) = (State::TaskDuplicating, State::TaskRunning, State::TaskAllocation);
    let mut want = Vec::new();
    want.extend(pair(alloc));
    for _ in 0..12 {
        want.extend(pair(dup));
        want.extend(pair(run));
    }
    want.extend(pair(alloc));
    for _ in 0..3 {
        want.extend(pair(dup));
        want.push((true, run));
        want.extend(pair(alloc));
        want.extend(pair(run));
        want.push((false, run));
    }
    let got: Vec<(bool, State)> = states
        .into_iter()
        .filter(|(_, s)| matches!(s, State::TaskDuplicating | State::TaskRunning | State::TaskAllocation))
        .collect();
    assert_eq!(got, want);
    // Each execution has a task id of its own, also the chunks that ran one after the other
    // in one block.
    let mut ids: Vec<u32> = th
        .events
        .iter()
        .filter(|e| &e.mcv == b"PPx")
        .map(|e| e.payload_u32(0).expect("PPx carries a task id"))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 18, "task ids of the executions");
}

#[test]
fn nested_regions_are_recorded_per_level() {
    let (t, _) = traced_run("trace_nested", "2", true);
    // 2 outer members fork one inner region each: 3 fork calls (1 outer, 2 inner), and every
    // one of the 4 + 2 implicit tasks runs the user's code once.
    let count = |s: State| -> usize {
        t.threads.iter().flat_map(|th| &th.events).filter(|e| &e.mcv == s.ovni_mcv()).count()
    };
    assert_eq!(count(State::ForkCall), 3);
    assert_eq!(count(State::UserMicrotask), 6);
    assert_eq!(t.threads.len(), 4, "four threads: 2 outer, 2 more for the inner regions");
    // Each thread's `OHx` names the thread that started it: none for the program's initial
    // thread, a thread of the trace for every worker (the initial thread started the first).
    let creator = |th: &trace::ThreadStream| match th.events.first().map(|e| &e.payload) {
        Some(Payload::ThreadExecute { creator, .. }) => *creator,
        other => panic!("thread {}: first event's payload {other:?}", th.tid),
    };
    let initial = initial_thread(&t);
    assert_eq!(creator(initial), -1);
    let tids: Vec<i32> = t.threads.iter().map(|th| th.tid as i32).collect();
    for th in t.threads.iter().filter(|th| th.tid != initial.tid) {
        let c = creator(th);
        assert!(tids.contains(&c) && c != th.tid as i32, "thread {}: creator {c}, threads {tids:?}", th.tid);
    }
    assert!(t.threads.iter().any(|th| creator(th) == initial.tid as i32), "the initial thread started none");
}

#[test]
fn exit_inside_a_region_leaves_a_valid_trace() {
    let (t, _) = traced_run("trace_exit", "3", true);
    assert_eq!(t.threads.len(), 3);
    for th in &t.threads {
        assert_eq!(th.events.last().map(|e| e.mcv), Some(*b"OHe"), "thread {} closed", th.tid);
        let dynamic = seq(&th.events, &[Subsystem::WorkDistribution]);
        assert!(dynamic.starts_with(&pair(State::DynamicForInit)), "thread {}: {dynamic:?}", th.tid);
    }
}

#[test]
fn sigterm_inside_a_region_leaves_a_valid_trace() {
    let (t, _) = traced_run("trace_signal", "3", false);
    assert_eq!(t.threads.len(), 3);
    for th in &t.threads {
        assert_eq!(th.events.last().map(|e| e.mcv), Some(*b"OHe"), "thread {} closed", th.tid);
        let dynamic = seq(&th.events, &[Subsystem::WorkDistribution]);
        assert!(dynamic.starts_with(&pair(State::DynamicForInit)), "thread {}: {dynamic:?}", th.tid);
    }
}

/// `exit()` from the user's code inside an undeferred task inside a static loop's part, while
/// the other thread is inside one too: every stream ends the task it was running (`PPe`), the
/// states around it and the loop's part (`PQe`), innermost first, then the thread (`check`
/// rejects a thread that ends inside anything).
#[test]
fn exit_inside_a_task_ends_the_task_and_the_loop() {
    let (t, _) = traced_run("trace_exit_task", "2", true);
    assert_eq!(t.threads.len(), 2);
    for th in &t.threads {
        let codes: Vec<[u8; 3]> = th.events.iter().map(|e| e.mcv).collect();
        let run = State::TaskRunningIf0;
        let tail = [*b"PPe", run.ovni_code(false), State::StaticForChunk.ovni_code(false), *b"PQe"];
        let at = codes.windows(4).rposition(|w| w == tail);
        assert!(
            at.is_some(),
            "thread {}: no task, chunk and loop end at exit: {:?}",
            th.tid,
            &codes[codes.len().saturating_sub(12)..]
        );
        let at = at.unwrap();
        assert!(
            codes[at + 4..].iter().all(|c| c[0] == b'P' && c[2].is_ascii_uppercase()
                || c == b"PA]"
                || c == b"PH]"
                || c == b"OHe"),
            "thread {}: only ends follow: {:?}",
            th.tid,
            &codes[at..]
        );
    }
}

/// A program started with SIGINT ignored (a background job of a shell script is) keeps it
/// ignored: a SIGINT it gets changes nothing, and its trace goes on to its end (the recorder
/// used to close every stream at the signal and let the program run on untraced).
#[test]
fn an_ignored_sigint_stays_ignored_and_the_trace_goes_on() {
    let (t, _) = traced_run_in("trace_sigint_ignored", "2", true, &["sh", "-c", "trap '' INT; exec \"$0\""]);
    let forks = initial_thread(&t).events.iter().filter(|e| &e.mcv == State::ForkCall.ovni_mcv()).count();
    assert_eq!(forks, 2, "both regions recorded, the one after the signal too");
}

/// SIGINT from outside while every thread records (critical sections and tasks, without end):
/// the process ends with the signal, and every thread's stream ends with what it was in and
/// then the thread, each stream's events up to that point whole.
#[test]
fn sigint_from_outside_while_all_threads_record() {
    use std::io::BufRead;
    use std::os::unix::process::ExitStatusExt;
    let exe = build("trace_sigint", "4");
    let tdir = trace_dir("trace_sigint", "4");
    let mut child =
        traced_command(&[], &exe, "4", Some(&tdir)).stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n", "the program did not start recording");
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    // A hang guard, not a timing assertion: the signal ends the program at once.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let st = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the program did not end at SIGINT");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    assert_eq!(st.signal(), Some(libc_sigint()), "ended by SIGINT: {st}");
    let t = read_checked(&tdir, "trace_sigint");
    assert_eq!(t.threads.len(), 4);
    for th in &t.threads {
        assert_eq!(th.events.last().map(|e| e.mcv), Some(*b"OHe"), "thread {} closed", th.tid);
        let sections = th.events.iter().filter(|e| &e.mcv == State::CriticalSection.ovni_mcv()).count();
        assert!(sections >= 1, "thread {} recorded no critical section", th.tid);
    }
}

/// SIGINT's number (Linux, every architecture).
fn libc_sigint() -> i32 {
    2
}

/// Without `OVNI_TRACEDIR` the trace goes to `./ovni`; an unwritable directory gives exactly
/// one warning (however many threads), and the program runs untraced with its results.
#[test]
fn trace_directory_default_and_unwritable() {
    let exe = build("trace_nested", "2");
    let cwd = trace_dir("default-dir", "2");
    std::fs::create_dir_all(&cwd).unwrap();
    let st =
        traced_command(&["timeout", "-k", "5", "60"], &exe, "2", None).current_dir(&cwd).status().unwrap();
    assert!(st.success());
    let t = read_checked(&cwd.join("ovni"), "default directory");
    assert_eq!(t.threads.len(), 4);

    let cwd = trace_dir("unwritable-dir", "4");
    std::fs::create_dir_all(&cwd).unwrap();
    let out =
        traced_command(&["timeout", "-k", "5", "60"], &exe, "4", Some(Path::new("/proc/oxiomp-no/trace")))
            .current_dir(&cwd)
            .output()
            .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warning =
        "oxiomp: warning: OMP_OVNI=1 but the trace cannot be written (cannot create /proc/oxiomp-no/trace";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line, nothing else: {stderr}");
    assert!(!cwd.join("ovni").exists(), "nothing written in the default directory instead");
}

/// Each process of a traced program records into its own `proc.<pid>` directory, as ovni's
/// layout has it (`tests/trace/trace_fork.c`): children forked outside a region, from a
/// region's user code (on the primary thread and on a worker: the child's thread begins inside
/// the states it forked in, and names no creator) and from such a child before it recorded
/// anything (it passes the same states on), and grandchildren. A child forked inside a task
/// (whose trace would begin inside a task it never created) records nothing, nor does one that
/// only execs (even re-bound to a CPU by the runtime's fork handler); one that ends with
/// `_exit` (closing nothing) leaves its streams unpublished, out of the trace. The parent's
/// trace is untouched. Each process's threads all appear once, every stream ends once, each
/// process declares the types it uses, the CPU claims are the loom's shared file, and ovni's
/// emulator takes the whole trace, with the threads bound to CPUs and not.
#[test]
fn forked_children_write_their_own_process_streams() {
    for bind in [false, true] {
        let exe = build("trace_fork", "2");
        let tdir = trace_dir(&format!("trace_fork-bound-{bind}"), "2");
        let mut c = traced_command(&["timeout", "-k", "5", "60"], &exe, "2", Some(&tdir));
        if bind {
            c.env("OMP_PROC_BIND", "true");
        }
        assert!(c.status().unwrap().success(), "trace_fork, bound: {bind}");
        let what = format!("trace_fork, bound: {bind}");
        let t = read_checked(&tdir, &what);
        assert_eq!(common::ovniemu_rejects(&tdir), None, "{what}");
        let loom = t.threads[0].path.ancestors().nth(3).unwrap().to_path_buf();
        assert!(loom.join("cpus.oxiomp").is_file(), "{what}: the CPU claims are shared through the loom");
        let mut pids: Vec<u32> = t.threads.iter().map(|th| th.pid).collect();
        pids.sort();
        pids.dedup();
        // The child that ended with `_exit`: its two threads' streams, hidden.
        assert_eq!(t.unpublished.len(), 2, "{what}: {:?}", t.unpublished);
        let quick = t.unpublished[0].parent().unwrap();
        assert!(t.unpublished.iter().all(|u| u.parent() == Some(quick)), "{what}: {:?}", t.unpublished);
        let quick_pid: u32 = quick.file_name().unwrap().to_str().unwrap()["proc.".len()..].parse().unwrap();
        assert!(!pids.contains(&quick_pid), "{what}");
        // No other process directory: nothing of the child forked in a task, or of the one
        // that only execs.
        let mut dirs: Vec<u32> = std::fs::read_dir(&loom)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix("proc.")?.parse().ok())
            .collect();
        dirs.sort();
        let mut want = pids.clone();
        want.push(quick_pid);
        want.sort();
        assert_eq!(dirs, want, "{what}: process directories");
        let of = |pid: u32| t.threads.iter().filter(move |th| th.pid == pid);
        let count = |pid: u32, mcv: &[u8; 3]| -> usize {
            of(pid).map(|th| th.events.iter().filter(|e| &e.mcv == mcv).count()).sum()
        };
        let regions = |pid: u32| count(pid, State::ForkCall.ovni_mcv());
        // A process's initial thread's states, in order.
        let states = |pid: u32| -> Vec<(bool, State)> {
            let th = of(pid).find(|th| th.tid == pid).expect("the process's initial thread");
            th.events.iter().filter_map(|e| trace::state_of(&e.mcv)).map(|(s, enter)| (enter, s)).collect()
        };
        let (attached, user, worker) = (State::Attached, State::UserMicrotask, State::WorkerLoop);
        let find = |what: &str, n: usize, f: &dyn Fn(u32) -> bool| -> Vec<u32> {
            let found: Vec<u32> = pids.iter().copied().filter(|&p| f(p)).collect();
            assert_eq!(found.len(), n, "{what}: {found:?} of {pids:?}");
            found
        };
        let parent = find("the parent", 1, &|p| states(p).first() == Some(&(true, State::Init)))[0];
        let child = find("the child with tasks", 1, &|p| count(p, b"PPc") == 4)[0];
        let grandchild = find("the grandchild", 1, &|p| count(p, State::StaticForChunk.ovni_mcv()) > 0)[0];
        // Forked by the primary thread in a region, and that child's own child.
        let in_region =
            find("children forked in a region", 2, &|p| states(p)[..2] == [(true, attached), (true, user)]);
        let from_worker =
            find("the child forked by a worker", 1, &|p| states(p)[..2] == [(true, worker), (true, user)])[0];
        let mut all = vec![parent, child, grandchild, in_region[0], in_region[1], from_worker];
        all.sort();
        all.dedup();
        assert_eq!(all, pids, "{what}: every process is one of these");
        // A child forked in a region begins in the states its parent's thread was in, runs
        // its own region inside them, and ends them.
        for &pid in in_region.iter().chain([&from_worker]) {
            let s = states(pid);
            assert_eq!(s[2], (true, State::ForkCall), "{what}: {pid}");
            assert_eq!(s[s.len() - 2..], [(false, user), (false, s[0].1)], "{what}: {pid}");
            assert_eq!(regions(pid), 1, "{what}: {pid}");
            // No thread of the child started its first thread.
            let first = of(pid).find(|th| th.tid == pid).unwrap();
            let creator = match first.events[0].payload {
                Payload::ThreadExecute { creator, .. } => creator,
                _ => panic!("{what}: {pid} begins without OHx"),
            };
            assert_eq!(creator, -1, "{what}: {pid}");
        }
        for &pid in &pids {
            assert_eq!(of(pid).count(), 2, "{what}: process {pid} has its two threads");
            assert!(of(pid).all(|th| th.events.first().is_some_and(|e| &e.mcv == b"OHx")), "{what}");
            for th in of(pid) {
                assert_eq!(
                    th.events.iter().filter(|e| &e.mcv == b"OHe").count(),
                    1,
                    "{what}: thread {}",
                    th.tid
                );
            }
            // Each process declares its own types (ovni keeps them per process).
            let used = count(pid, b"PPc") + count(pid, b"PQx");
            assert_eq!(used > 0, count(pid, b"POc") > 0, "{what}: process {pid}");
        }
        assert_eq!(regions(parent), 2, "{what}");
        assert_eq!(regions(child), 1, "{what}");
        assert_eq!(regions(grandchild), 1, "{what}");
        // The parent's task (the fork inside it) is the parent's alone.
        assert_eq!(count(parent, b"PPc"), 1, "{what}");
    }
}

/// A trace on a small file system that fills up: the program runs on (exit 0) with one
/// warning naming the trace's directory and the error; every stream that exists ends at a
/// whole event, with what its thread was in ended and the thread's end (`OHe`), and `check`
/// reports each stream cut short as "truncated: the disk was full", with no other problem (not
/// "killed"). Sizes from a few streams' first buffers to several buffers each, so that streams
/// are cut at their first hand-over, later ones, and their close. The file system is a tmpfs
/// mounted in a mount namespace of the test's own (`unshare`: root, or a user namespace).
#[test]
fn a_full_disk_cuts_the_trace_short_consistently() {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let root = status.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"));
    for (size, threads) in [("200k", "2"), ("1m", "2"), ("3m", "4"), ("5m", "3")] {
        let exe = build("trace_fill", threads);
        let base = profile_dir().join("trace-tests").join(format!("full-disk-{size}-{threads}"));
        let _ = std::fs::remove_dir_all(&base);
        let (mnt, out) = (base.join("mnt"), base.join("out"));
        std::fs::create_dir_all(&mnt).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        let (m, o, e) = (mnt.display(), out.display(), exe.display());
        let script = format!(
            "mount -t tmpfs -o size={size} tmpfs {m} || exit 97; \
             timeout -k 5 60 {e} 2> {o}/stderr; echo $? > {o}/rc; cp -a {m}/trace {o}/trace"
        );
        let mut c = Command::new("unshare");
        c.args(if root { &["-m"][..] } else { &["-r", "-m"][..] }).args(["sh", "-c", &script]);
        clean_env(&mut c);
        c.env("OMP_OVNI", "1")
            .env("OVNI_TRACEDIR", mnt.join("trace"))
            .env("OMP_NUM_THREADS", threads)
            .env("LD_LIBRARY_PATH", &lib().dir)
            .env("LD_BIND_NOW", "1");
        let run = c.output().expect("unshare (util-linux)");
        assert!(
            run.status.success(),
            "{size}: could not run the program on a tmpfs of its own (unshare and mount need root or \
             user namespaces): {run:?}"
        );
        let what = format!("trace on a {size} tmpfs, {threads} threads");
        let rc = std::fs::read_to_string(out.join("rc")).unwrap();
        assert_eq!(rc.trim(), "0", "{what}: the program's exit status");
        let stderr = std::fs::read_to_string(out.join("stderr")).unwrap();
        let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
        assert_eq!(warnings.len(), 1, "{what}: one warning:\n{stderr}");
        let trace_dir = mnt.join("trace");
        assert!(
            warnings[0].contains(&format!("the trace in {}", trace_dir.display()))
                && warnings[0].contains("the disk was full (No space left on device)"),
            "{what}: the warning names the directory and the error: {}",
            warnings[0]
        );
        let t = Trace::read(&out.join("trace")).unwrap_or_else(|e| panic!("{what}: {e}"));
        let problems = t.check();
        let cut: Vec<&String> =
            problems.iter().filter(|p| p.contains(": truncated: the disk was full (")).collect();
        assert!(!cut.is_empty(), "{what}: no stream says it was cut short: {problems:#?}");
        assert_eq!(cut.len(), problems.len(), "{what}: problems besides the truncation: {problems:#?}");
        for th in &t.threads {
            assert_eq!(
                th.events.last().map(|e| &e.mcv),
                Some(b"OHe"),
                "{what}: thread {} ends with OHe",
                th.tid
            );
        }
    }
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

fn write_stream(dir: &Path, bytes: &[u8]) -> PathBuf {
    write_stream_with(dir, bytes, "")
}

/// `write_stream`, with `extra` members at the end of `stream.json`'s root object.
fn write_stream_with(dir: &Path, bytes: &[u8], extra: &str) -> PathBuf {
    let p = dir.join("loom.x/proc.1/thread.1");
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join("stream.obs"), bytes).unwrap();
    let json = format!(
        "{{\"version\": 3, \"ovni\": {{\"lib\": {{\"version\": \"1.14.0\", \"commit\": \"x\"}}, \
         \"part\": \"thread\", \"tid\": 1, \"pid\": 1, \"loom\": \"x\", \"app_id\": 1, \
         \"require\": {{\"ovni\": \"1.1.0\", \"openmp\": \"1.2.1\"}}, \
         \"loom_cpus\": [{{\"index\": 0, \"phyid\": 0}}], \"finished\": 1}}{extra}}}"
    );
    std::fs::write(p.join("stream.json"), json).unwrap();
    p.join("stream.obs")
}

/// Streams of threads 1.. of one process in loom `x` with two CPUs, one stream per event list.
fn write_streams(dir: &Path, streams: &[Vec<Event>]) {
    for (k, events) in streams.iter().enumerate() {
        let tid = k + 1;
        let p = dir.join(format!("loom.x/proc.1/thread.{tid}"));
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(p.join("stream.obs"), stream(events)).unwrap();
        let json = format!(
            "{{\"version\": 3, \"ovni\": {{\"lib\": {{\"version\": \"1.14.0\", \"commit\": \"x\"}}, \
             \"part\": \"thread\", \"tid\": {tid}, \"pid\": 1, \"loom\": \"x\", \"app_id\": 1, \
             \"require\": {{\"ovni\": \"1.1.0\", \"openmp\": \"1.2.1\"}}, \
             \"loom_cpus\": [{{\"index\": 0, \"phyid\": 0}}, {{\"index\": 1, \"phyid\": 1}}], \"finished\": 1}}}}"
        );
        std::fs::write(p.join("stream.json"), json).unwrap();
    }
}

/// `OHx` on `cpu`, `OAs` to `cpu`, at `clock`.
fn on_cpu(mcv: &[u8; 3], clock: u64, cpu: i32) -> Event {
    let payload = if mcv == b"OHx" {
        Payload::ThreadExecute { cpu, creator: -1, tag: 0 }
    } else {
        Payload::Raw(cpu.to_le_bytes().to_vec())
    };
    Event { mcv: *mcv, clock, payload }
}

/// `check` enforces ovni's thread and CPU model as its emulator does: nothing while paused,
/// CPU indexes within the loom, one running thread per CPU of the list at a time; and
/// accepts what the model allows (a CPU handed over, paused threads sharing one, any number
/// on the virtual CPU).
#[test]
fn check_enforces_the_cpu_model() {
    let base = profile_dir().join("trace-tests/cpus");
    let _ = std::fs::remove_dir_all(&base);
    let run = |name: &str, streams: Vec<Vec<Event>>| -> Vec<String> {
        let dir = base.join(name);
        write_streams(&dir, &streams);
        Trace::read(&dir).unwrap().check()
    };
    // Valid: two threads on CPU 0 one after the other (the first moves away first), a
    // paused thread on a CPU another then runs on, three on the virtual CPU.
    let ok = run(
        "ok",
        vec![
            vec![on_cpu(b"OHx", 1, 0), on_cpu(b"OAs", 5, -1), ev(b"OHp", 6), ev(b"OHr", 20), ev(b"OHe", 30)],
            vec![on_cpu(b"OHx", 2, 1), ev(b"OHp", 3), ev(b"OHr", 9), ev(b"OHe", 31)],
            vec![on_cpu(b"OHx", 4, -1), on_cpu(b"OAs", 7, 1), ev(b"OHe", 8)],
            vec![on_cpu(b"OHx", 10, -1), on_cpu(b"OAs", 11, 0), ev(b"OHe", 12)],
            vec![on_cpu(b"OHx", 13, -1), ev(b"OHe", 14)],
        ],
    );
    assert!(ok.is_empty(), "{ok:#?}");
    let two = run(
        "two",
        vec![vec![on_cpu(b"OHx", 1, 0), ev(b"OHe", 9)], vec![on_cpu(b"OHx", 2, 0), ev(b"OHe", 8)]],
    );
    assert!(
        two.len() == 1 && two[0].contains("clock 2: thread 2 runs on CPU index 0 while thread 1 runs there"),
        "{two:#?}"
    );
    let resumed = run(
        "resumed",
        vec![
            vec![on_cpu(b"OHx", 1, 1), ev(b"OHp", 2), ev(b"OHr", 6), ev(b"OHe", 9)],
            vec![on_cpu(b"OHx", 3, -1), on_cpu(b"OAs", 4, 1), ev(b"OHe", 8)],
        ],
    );
    assert!(
        resumed.len() == 1 && resumed[0].contains("clock 6: thread 1 runs on CPU index 1 while thread 2"),
        "{resumed:#?}"
    );
    let range = run("range", vec![vec![on_cpu(b"OHx", 1, 2), on_cpu(b"OAs", 2, -2), ev(b"OHe", 3)]]);
    assert!(
        range.iter().any(|p| p.contains("event 0: OHx names CPU 2, not in the loom's 2 CPUs")),
        "{range:#?}"
    );
    assert!(range.iter().any(|p| p.contains("event 1: OAs names CPU -2")), "{range:#?}");
    let paused = run(
        "paused",
        vec![vec![on_cpu(b"OHx", 1, -1), ev(b"OHp", 2), ev(b"PBb", 3), ev(b"PBB", 4), ev(b"OHe", 5)]],
    );
    assert!(
        paused.iter().any(|p| p.contains("event 2: PBb while the thread is paused (OHp at event 1)")),
        "{paused:#?}"
    );
    assert!(paused.iter().any(|p| p.contains("event 4: OHe while the thread is paused")), "{paused:#?}");
    let stray = run("stray", vec![vec![on_cpu(b"OHx", 1, -1), ev(b"OHr", 2), ev(b"OHe", 3)]]);
    assert!(stray.len() == 1 && stray[0].contains("event 1: OHr but the thread is not paused"), "{stray:#?}");
}

/// A stream whose metadata says it was cut short is reported as truncated, with the reason,
/// whether it ends with the thread's end (the usual cut) or not (a file system that could not
/// take even the end): never as a killed process.
#[test]
fn check_reports_a_cut_stream_as_truncated() {
    let base = profile_dir().join("trace-tests/cut");
    let _ = std::fs::remove_dir_all(&base);
    let cut = r#", "oxiomp": {"cut": "the disk was full"}"#;
    for (name, events) in [("ended", &[ev(b"OHx", 1), ev(b"OHe", 2)][..]), ("no-end", &[ev(b"OHx", 1)][..])] {
        let dir = base.join(name);
        write_stream_with(&dir, &stream(events), cut);
        let p = Trace::read(&dir).unwrap().check();
        assert_eq!(p.len(), 1, "{name}: {p:?}");
        assert!(p[0].contains("stream.obs: truncated: the disk was full"), "{name}: {p:?}");
    }
    // Without the note, a stream without its end reads as a killed process.
    let dir = base.join("killed");
    write_stream(&dir, &stream(&[ev(b"OHx", 1)]));
    let p = Trace::read(&dir).unwrap().check();
    assert!(p.len() == 1 && p[0].contains("killed, or it crashed"), "{p:?}");
}

fn stream(events: &[Event]) -> Vec<u8> {
    let mut b = format::STREAM_HEADER.to_vec();
    for e in events {
        let mut buf = [0u8; 64];
        let n = format::encode(e, &mut buf);
        b.extend_from_slice(&buf[..n]);
    }
    b
}

fn ev(mcv: &[u8; 3], clock: u64) -> Event {
    let payload =
        if mcv == b"OHx" { Payload::ThreadExecute { cpu: 0, creator: -1, tag: 0 } } else { Payload::None };
    Event { mcv: *mcv, clock, payload }
}

#[test]
fn bad_traces_are_rejected_with_the_reason() {
    let base = profile_dir().join("trace-tests/bad");
    let _ = std::fs::remove_dir_all(&base);
    let case = |name: &str, bytes: Vec<u8>| -> Result<Vec<String>, String> {
        let dir = base.join(name);
        write_stream(&dir, &bytes);
        Trace::read(&dir).map(|t| t.check())
    };
    // Wrong magic: a read error naming the file and offset 0.
    let e = case("magic", b"OVNI\x01\x00\x00\x00".to_vec()).unwrap_err();
    assert!(e.contains("stream.obs: offset 0: bad magic"), "{e}");
    // An unknown event: its offset.
    let mut b = stream(&[ev(b"OHx", 1)]);
    b.extend_from_slice(&[0, b'X', b'y', b'z', 2, 0, 0, 0, 0, 0, 0, 0]);
    let e = case("unknown", b).unwrap_err();
    assert!(e.contains("offset 36: unknown event \"Xyz\""), "{e}");
    // Truncated: read up to the last whole event, and reported by check.
    let mut b = stream(&[ev(b"OHx", 1), ev(b"PBb", 2), ev(b"PBB", 3)]);
    b.truncate(b.len() - 4);
    let p = case("truncated", b).unwrap();
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("event 2: stream ends inside an event at byte offset 48"), "{p:?}");
    // Clock going back, unbalanced end, events after the end.
    let p =
        case("order", stream(&[ev(b"OHx", 5), ev(b"PBb", 4), ev(b"PIR", 6), ev(b"OHe", 7), ev(b"PBB", 8)]))
            .unwrap();
    assert!(p.iter().any(|m| m.contains("event 1: clock 4 goes back from 5")), "{p:?}");
    assert!(
        p.iter().any(|m| m.contains("event 2: leaves \"Critical: releasing\" while in \"Barrier: plain\"")),
        "{p:?}"
    );
    assert!(p.iter().any(|m| m.contains("event 4: PBB after the thread ended")), "{p:?}");
    // A task run before it was created, and one ended where it does not run.
    let task = |mcv: &[u8; 3], clock: u64, id: u32| Event {
        mcv: *mcv,
        clock,
        payload: if mcv == b"PPc" {
            Payload::Raw([id.to_le_bytes(), 1u32.to_le_bytes()].concat())
        } else {
            Payload::Raw(id.to_le_bytes().to_vec())
        },
    };
    let p =
        case("tasks", stream(&[ev(b"OHx", 1), task(b"PPx", 2, 7), task(b"PPc", 3, 7), task(b"PPe", 4, 8)]))
            .unwrap();
    assert!(p.iter().any(|m| m.contains("event 1: task 7 runs at 2 before it is created at 3")), "{p:?}");
    assert!(p.iter().any(|m| m.contains("event 3: task 8 ends but is not the task running here")), "{p:?}");
    // A type declared twice in one process, and a task of an undeclared type.
    let poc = |clock: u64, ty: u32| Event {
        mcv: *b"POc",
        clock,
        payload: Payload::Jumbo([&ty.to_le_bytes()[..], b"t\0"].concat()),
    };
    let p = case("types", stream(&[ev(b"OHx", 1), poc(2, 5), poc(3, 5), task(b"PPc", 4, 9)])).unwrap();
    assert!(p.iter().any(|m| m.contains("event 2: type 5 declared a second time in process 1")), "{p:?}");
    assert!(p.iter().any(|m| m.contains("event 3: PPc uses type 1, not declared before")), "{p:?}");
    // A valid one passes.
    assert!(
        case("good", stream(&[ev(b"OHx", 1), ev(b"PBb", 2), ev(b"PBB", 3), ev(b"OHe", 4)]))
            .unwrap()
            .is_empty()
    );
}

/// One thread, three critical sections of one name: but for the first (the name's first use
/// installs its lock), each acquisition is one instant (acquiring begins and ends, the section
/// begins: one clock read), and so is every release (the section ends, releasing begins and
/// ends): nobody else ever holds or waits for the lock.
#[test]
fn uncontended_critical_is_an_instant() {
    let (t, _) = traced_run("trace_critical", "1", true);
    let mut sections = 0;
    for th in &t.threads {
        for w in critical_events(&th.events).chunks(6) {
            assert_eq!(w.len(), 6, "a whole critical section");
            if sections > 0 {
                assert!(w[0].clock == w[1].clock && w[1].clock == w[2].clock, "acquisition: {:?}", &w[..3]);
            }
            assert!(w[3].clock == w[4].clock && w[4].clock == w[5].clock, "release: {:?}", &w[3..]);
            sections += 1;
        }
    }
    assert_eq!(sections, 3, "the program's three critical sections");
}

/// The state events of one thread in the Barrier and Runtime subsystems, with their clocks.
fn runtime_seq(events: &[Event]) -> Vec<(bool, State, u64)> {
    events
        .iter()
        .filter_map(|e| trace::state_of(&e.mcv).map(|(s, enter)| (enter, s, e.clock)))
        .filter(|(_, s, _)| matches!(s.subsystem(), Subsystem::Barrier | Subsystem::Runtime))
        .collect()
}

/// Where `want` (enter?, state) occurs in `got` as a contiguous run, if it does.
fn find_run(got: &[(bool, State, u64)], want: &[(bool, State)]) -> Option<usize> {
    got.windows(want.len()).position(|w| w.iter().zip(want).all(|(&(e, s, _), &(we, ws))| e == we && s == ws))
}

#[test]
fn runtime_states_and_spin_waits_are_recorded() {
    use State::*;
    let (t, _) = traced_run("trace_runtime", "2", true);
    let seqs: Vec<_> = t.threads.iter().map(|th| (th.tid, runtime_seq(&th.events))).collect();
    // The program's initial thread: initialised, then attached until its stream closes.
    let main = seqs
        .iter()
        .find(|(_, s)| s.first().is_some_and(|&(e, st, _)| e && st == Init))
        .expect("a thread with Init");
    let m = &main.1;
    assert_eq!(
        m[..3].iter().map(|&(e, s, _)| (e, s)).collect::<Vec<_>>(),
        [(true, Init), (false, Init), (true, Attached)]
    );
    assert_eq!(
        m.last().map(|&(e, s, _)| (e, s)),
        Some((false, Attached)),
        "thread {}: Attached ends last",
        main.0
    );
    // The join of region 1: the primary waits awake for thread 1 (50 ms), and leaves the spin
    // wait and the join barrier at one instant.
    let join = [
        (false, UserMicrotask),
        (true, BarrierJoin),
        (true, BarrierSpinWait),
        (false, BarrierSpinWait),
        (false, BarrierJoin),
    ];
    let at =
        find_run(m, &join).unwrap_or_else(|| panic!("thread {}: no join with a spin wait in {m:?}", main.0));
    assert_eq!(m[at + 3].2, m[at + 4].2, "thread {}: spin wait and join end at one instant", main.0);
    // Region 1's barrier: thread 1 waits awake for thread 0 (50 ms, under the block time).
    let barrier =
        [(true, BarrierPlain), (true, BarrierSpinWait), (false, BarrierSpinWait), (false, BarrierPlain)];
    let waited: Vec<_> = seqs
        .iter()
        .filter(|(tid, _)| *tid != main.0)
        .filter_map(|(tid, s)| find_run(s, &barrier).map(|at| (tid, s, at)))
        .collect();
    assert_eq!(waited.len(), 1, "one worker waited in the barrier: {seqs:?}");
    let (tid, s, at) = waited[0];
    assert_eq!(s[at + 2].2, s[at + 3].2, "thread {tid}: spin wait and barrier end at one instant");
    assert!(find_run(m, &barrier).is_none(), "the primary arrived last: it did not wait in the barrier");
    // The teams construct: each of the two members runs the league's internal microtask,
    // and the user's code inside it.
    let league = [
        (true, InternalMicrotask),
        (true, UserMicrotask),
        (false, UserMicrotask),
        (false, InternalMicrotask),
    ];
    let members = seqs.iter().filter(|(_, s)| find_run(s, &league).is_some()).count();
    assert_eq!(members, 2, "two league members: {seqs:?}");
    let internal: usize =
        seqs.iter().map(|(_, s)| s.iter().filter(|&&(e, st, _)| e && st == InternalMicrotask).count()).sum();
    assert_eq!(internal, 2, "internal microtasks");
    // The program's own thread: attached at its first region (serialized: one thread, which
    // runs the user's code as a microtask) until it ends.
    let own: Vec<_> =
        seqs.iter().filter(|(_, s)| s.first().is_some_and(|&(e, st, _)| e && st == Attached)).collect();
    assert_eq!(own.len(), 1, "one other initial thread: {seqs:?}");
    let o: Vec<_> = own[0].1.iter().map(|&(e, s, _)| (e, s)).collect();
    assert_eq!(
        o,
        [
            (true, Attached),
            (true, ForkCall),
            (false, ForkCall),
            (true, UserMicrotask),
            (false, UserMicrotask),
            (false, Attached)
        ],
        "thread {}",
        own[0].0
    );
}

/// A `.prv`'s event records: per row (1-based), per event type, the values in time order
/// (several at one time: the last one stands), and the trace's end time.
struct Prv {
    end: u64,
    rows: std::collections::HashMap<(usize, u32), Vec<(u64, u64)>>,
}

fn read_prv(text: &str) -> Prv {
    let mut lines = text.lines();
    let head = lines.next().unwrap_or("");
    let end = head.split(':').nth(2).and_then(|f| f.trim_end_matches("_ns").parse().ok()).unwrap_or(0);
    let mut rows: std::collections::HashMap<(usize, u32), Vec<(u64, u64)>> = Default::default();
    for l in lines {
        let f: Vec<&str> = l.split(':').collect();
        if f.first() != Some(&"2") || f.len() < 8 {
            continue;
        }
        let (row, time): (usize, u64) = (f[4].parse().unwrap(), f[5].parse().unwrap());
        for pair in f[6..].chunks(2) {
            let (ty, v): (u32, u64) = (pair[0].parse().unwrap(), pair[1].parse().unwrap());
            let list = rows.entry((row, ty)).or_default();
            match list.last_mut() {
                Some(last) if last.0 == time => last.1 = v,
                _ => list.push((time, v)),
            }
        }
    }
    Prv { end, rows }
}

impl Prv {
    /// How long row `row` showed each nonzero value of type `ty`; with `spin_as_before`, the
    /// spin-wait state (value 4 of type 50, which ovni 1.14 does not show) counts as the
    /// value before it (the barrier it waits in).
    fn durations(&self, row: usize, ty: u32, spin_as_before: bool) -> std::collections::BTreeMap<u64, u64> {
        let mut out = std::collections::BTreeMap::new();
        let empty = Vec::new();
        let list = self.rows.get(&(row, ty)).unwrap_or(&empty);
        let mut shown = 0;
        for (k, &(time, v)) in list.iter().enumerate() {
            if !(spin_as_before && ty == 50 && v == 4) {
                shown = v;
            }
            let next = list.get(k + 1).map_or(self.end, |n| n.0);
            if shown != 0 {
                *out.entry(shown).or_insert(0) += next - time;
            }
        }
        out
    }
}

/// The views `oxiomp-trace paraver` writes are ovni's emulator's, row by row: for programs with
/// tasks, worksharing and parked threads (block time 0), unbound and bound to CPUs, the time
/// each thread spends in each subsystem state (type 50; the spin-wait state, which ovni 1.14
/// does not show, counted as the barrier around it), under each label (51) and in each task
/// (52) is the same in both thread traces, and likewise on each CPU in both CPU traces (also
/// the running thread, type 2). In the bound runs ovni's CPU trace shows each CPU running the
/// thread the trace binds there, and nothing on it otherwise.
#[test]
fn paraver_views_are_ovniemus() {
    for (name, threads) in [("trace_tasks", "2"), ("trace_ws", "3"), ("trace_task_constructs", "2")] {
        for bind in [false, true] {
            let exe = build(name, threads);
            let tdir = trace_dir(&format!("{name}-paraver-{bind}"), threads);
            let mut c = traced_command(&[], &exe, threads, Some(&tdir));
            c.env("KMP_BLOCKTIME", "0");
            if bind {
                c.env("OMP_PROC_BIND", "true");
            }
            assert!(c.status().unwrap().success(), "{name}");
            let what = format!("{name}, {threads} threads, bound: {bind}");
            let t = read_checked(&tdir, &what);
            assert_eq!(common::ovniemu_rejects(&tdir), None, "{what}");
            let (ours_t, _) = trace::paraver(&t);
            let ours_t = read_prv(&ours_t.prv);
            // The same trace without the spin-wait events, as ovni 1.14 sees it: the CPU rows
            // of several threads cannot tell whose barrier a spin wait was in.
            let mut no_spin = Trace::read(&tdir).unwrap();
            for th in &mut no_spin.threads {
                th.events.retain(|e| !matches!(&e.mcv, b"PBs" | b"PBS"));
            }
            let (ours_t_no_spin, ours_c) = trace::paraver(&no_spin);
            let (ours_t_no_spin, ours_c) = (read_prv(&ours_t_no_spin.prv), read_prv(&ours_c.prv));
            let theirs_t = read_prv(&std::fs::read_to_string(tdir.join("thread.prv")).unwrap());
            let theirs_c = read_prv(&std::fs::read_to_string(tdir.join("cpu.prv")).unwrap());
            for row in 1..=t.threads.len() {
                for ty in [50, 51, 52] {
                    let theirs = theirs_t.durations(row, ty, false);
                    assert_eq!(
                        ours_t.durations(row, ty, true),
                        theirs,
                        "{what}: thread row {row}, type {ty}"
                    );
                    assert_eq!(
                        ours_t_no_spin.durations(row, ty, false),
                        theirs,
                        "{what}: thread row {row}, type {ty}"
                    );
                }
            }
            let cpu_rows = theirs_c.rows.keys().map(|k| k.0).max().unwrap_or(0);
            assert!(cpu_rows >= 2, "{what}: ovniemu's CPU trace has rows for the CPUs and the virtual CPU");
            for row in 1..=cpu_rows {
                for ty in [2, 50, 51, 52] {
                    assert_eq!(
                        ours_c.durations(row, ty, false),
                        theirs_c.durations(row, ty, false),
                        "{what}: CPU row {row}, type {ty}"
                    );
                }
            }
            // Where the trace binds each thread (its last `OAs` to a CPU of the list), ovni's
            // CPU trace shows it running.
            let mut bound_to: Vec<(u32, i32)> = Vec::new();
            for th in &t.threads {
                if let Some(cpu) =
                    th.events.iter().rev().find(|e| &e.mcv == b"OAs").and_then(|e| e.payload_u32(0))
                {
                    bound_to.push((th.tid, cpu as i32));
                }
            }
            if bind {
                let n: usize = threads.parse().unwrap();
                let on_cpus: Vec<&(u32, i32)> = bound_to.iter().filter(|b| b.1 >= 0).collect();
                assert!(on_cpus.len() >= n.min(2), "{what}: threads bound to CPUs: {bound_to:?}");
                for &&(tid, cpu) in &on_cpus {
                    let shown = theirs_c.durations(cpu as usize + 1, 2, false);
                    assert!(
                        shown.get(&(tid as u64)).is_some_and(|&d| d > 0),
                        "{what}: CPU {cpu} shows {shown:?}, not {tid}"
                    );
                }
            } else {
                assert!(
                    bound_to.iter().all(|b| b.1 == -1),
                    "{what}: an unbound run binds nothing: {bound_to:?}"
                );
            }
        }
    }
}
