//! Each thread's recorded states, exactly: worksharing, tasks, nesting, critical sections,
//! the runtime's own states and spin waits.

use super::*;

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
    // clock is the TSC, which the CPU may read a few dozen nanoseconds out of program order
    // and a virtual machine's CPUs may read a few microseconds apart (an overlap of more than
    // 1 us was seen once on a loaded VM): 20 us of slack, far below the overlap a stamp taken
    // after the release shows when the releasing thread is preempted (the bug this checks
    // for: a scheduler's time slice, a millisecond or more).
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
        assert!(
            p[0].1 <= p[1].0 + 20_000,
            "critical sections overlap in the trace: {:?} and {:?}",
            p[0],
            p[1]
        );
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

/// The task numbers of a thread's `PPc` (created) or `PPx` (runs) events, in order.
fn task_ids(th: &trace::ThreadStream, mcv: &[u8; 3]) -> Vec<u32> {
    th.events.iter().filter(|e| &e.mcv == mcv).map(|e| e.payload_u32(0).expect("a task number")).collect()
}

fn count_in(got: &[(bool, State)], s: State) -> (usize, usize) {
    let n = |enter: bool| got.iter().filter(|&&x| x == (enter, s)).count();
    (n(true), n(false))
}

/// The task states the task tests name.
struct TaskStates {
    alloc: State,
    check: State,
    sched: State,
    run: State,
    release: State,
}

const TASK_STATES: TaskStates = TaskStates {
    alloc: State::TaskAllocation,
    check: State::TaskCheckDeps,
    sched: State::TaskScheduling,
    run: State::TaskRunning,
    release: State::TaskReleasingDeps,
};

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
    let TaskStates { alloc, check, sched, run, release } = TASK_STATES;
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
    let TaskStates { alloc, check, sched, run, release } = TASK_STATES;
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

/// gcc's code marks no end of a `single` block and divides static loops itself: a `single`
/// is traced until the thread's next barrier (here its construct's barrier, or for the
/// `nowait` one the barrier of the loop gcc runs without a call), a loop begun by a 5.0
/// start without a first chunk as a static loop, `single copyprivate` until its
/// `GOMP_single_copy_end`.
#[test]
fn gcc_worksharing_states_are_exact() {
    for threads in ["1", "3", "4"] {
        let (t, _) = traced_run("trace_ws_gcc", threads, true);
        let mut singles = 0;
        let mut members = 0;
        for th in &t.threads {
            // One letter per construct: S a single block, L the thread's part of the static
            // loop (each an enter directly followed by its leave), B a plain barrier begins.
            let mut got = String::new();
            let events = seq(&th.events, &[Subsystem::WorkDistribution, Subsystem::Barrier]);
            let mut k = 0;
            while k < events.len() {
                match events[k] {
                    (true, s @ (State::Single | State::StaticForChunk)) => {
                        assert_eq!(events.get(k + 1), Some(&(false, s)), "thread {}: {events:?}", th.tid);
                        got.push(if s == State::Single { 'S' } else { 'L' });
                        k += 2;
                        continue;
                    }
                    (true, State::BarrierPlain) => got.push('B'),
                    (_, s) if s.subsystem() == Subsystem::WorkDistribution => {
                        panic!("thread {}: {s:?} in {events:?}", th.tid)
                    }
                    _ => {}
                }
                k += 1;
            }
            if !got.contains('L') {
                assert!(!got.contains('S'), "thread {}: a single outside the region: {got}", th.tid);
                continue;
            }
            members += 1;
            singles += got.matches('S').count();
            // The single; the nowait single and the loop gcc divides (one barrier); the
            // reduction loop, its barrier and the reductions' barrier; the copyprivate
            // single, the hand-over of its data and gcc's barrier after it (a team of one
            // hands nothing over, and its region ends in a plain barrier).
            assert_eq!(got.replace('S', ""), "BBLBBBB", "thread {}: {got}", th.tid);
            let parts: Vec<&str> = got.split('B').collect();
            assert!(
                parts[0].len() <= 1 && parts[1].len() <= 1 && parts[4].len() <= 1,
                "thread {}: {got}",
                th.tid
            );
            assert_eq!(parts[2], "L", "thread {}: {got}", th.tid);
        }
        assert_eq!(members, threads.parse::<usize>().unwrap(), "{threads} threads: members");
        assert_eq!(singles, 3, "{threads} threads: each single ran once");
    }
}
