//! Stress tests of the task engine through the safe `spawn` API: every task runs exactly once,
//! waits wait for what they must, and dependences order accesses as sequential execution would.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use super::submit::CUTOFF;
use super::*;
use crate::team::parallel;

/// xorshift, deterministic per seed.
fn rng(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn every_task_runs_once_and_taskwait_waits() {
    for n in [1u32, 2, 4, 8] {
        let hits: Arc<Vec<AtomicU32>> = Arc::new((0..4000).map(|_| AtomicU32::new(0)).collect());
        parallel(Some(n), |tid| {
            let th = Thread::current();
            for i in (tid as usize..4000).step_by(n as usize) {
                let h = hits.clone();
                spawn(th, &[], move || {
                    h[i].fetch_add(1, Ordering::Relaxed);
                });
            }
            taskwait(th);
            for i in (tid as usize..4000).step_by(n as usize) {
                assert_eq!(hits[i].load(Ordering::Relaxed), 1, "n={n} i={i} after taskwait");
            }
        });
        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
    }
}

#[test]
fn nested_tasks_finish_by_the_barrier() {
    let count = Arc::new(AtomicU32::new(0));
    fn tree(th: Thread, depth: u32, count: Arc<AtomicU32>) {
        count.fetch_add(1, Ordering::Relaxed);
        if depth == 0 {
            return;
        }
        for _ in 0..3 {
            let c = count.clone();
            spawn(th, &[], move || tree(Thread::current(), depth - 1, c));
        }
    }
    parallel(Some(4), |tid| {
        let th = Thread::current();
        if tid == 0 {
            tree(th, 6, count.clone());
        }
        th.team().barrier(th);
        // 1 + 3 + ... + 3^6 = 1093 nodes, all complete at the barrier.
        assert_eq!(count.load(Ordering::Relaxed), 1093);
    });
}

/// Random dependence graphs over a few addresses: each task applies a non-commutative update
/// (out/inout), reads (in), or a commutative one (inoutset, mutexinoutset, the latter checked
/// for mutual exclusion); the results must equal a sequential replay.
#[test]
fn random_dependence_graphs_match_sequential_order() {
    const ADDRS: usize = 4;
    for (seed0, n) in [(1u64, 1u32), (2, 2), (3, 4), (4, 8), (5, 3)] {
        let mut seed = seed0.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let vals: Arc<Vec<AtomicU64>> = Arc::new((0..ADDRS).map(|_| AtomicU64::new(1)).collect());
        let inside: Arc<Vec<AtomicU32>> = Arc::new((0..ADDRS).map(|_| AtomicU32::new(0)).collect());
        let bad = Arc::new(AtomicBool::new(false));
        // Plan the tasks and the sequential result.
        let mut plan = Vec::new();
        let mut expect = [1u64; ADDRS];
        let mut reads = Vec::new();
        for id in 0..600u64 {
            let a = (rng(&mut seed) % ADDRS as u64) as usize;
            let kind = match rng(&mut seed) % 5 {
                0 => Access::In,
                1 => Access::Out,
                2 => Access::InOutSet,
                3 => Access::MutexInOutSet,
                _ => Access::Out,
            };
            match kind {
                Access::In => reads.push((id, expect[a])),
                Access::Out => expect[a] = expect[a].wrapping_mul(31).wrapping_add(id),
                _ => expect[a] = expect[a].wrapping_add(id * 1000),
            }
            plan.push((id, a, kind));
        }
        let seen: Arc<Vec<AtomicU64>> = Arc::new((0..600).map(|_| AtomicU64::new(u64::MAX)).collect());
        parallel(Some(n), |tid| {
            let th = Thread::current();
            if tid == 0 {
                for &(id, a, kind) in &plan {
                    let (vals, inside, bad, seen) = (vals.clone(), inside.clone(), bad.clone(), seen.clone());
                    let dep = Dep { addr: 0x1000 + a * 64, kind };
                    spawn(th, &[dep], move || {
                        let v = &vals[a];
                        match kind {
                            Access::In => {
                                seen[id as usize].store(v.load(Ordering::Relaxed), Ordering::Relaxed)
                            }
                            Access::Out => {
                                let x = v.load(Ordering::Relaxed);
                                std::hint::spin_loop();
                                v.store(x.wrapping_mul(31).wrapping_add(id), Ordering::Relaxed);
                            }
                            Access::MutexInOutSet => {
                                if inside[a].fetch_add(1, Ordering::SeqCst) != 0 {
                                    bad.store(true, Ordering::Relaxed);
                                }
                                let x = v.load(Ordering::Relaxed);
                                std::thread::yield_now();
                                v.store(x.wrapping_add(id * 1000), Ordering::Relaxed);
                                inside[a].fetch_sub(1, Ordering::SeqCst);
                            }
                            _ => {
                                v.fetch_add(id * 1000, Ordering::Relaxed);
                            }
                        }
                    });
                }
                taskwait(th);
            }
        });
        assert!(!bad.load(Ordering::Relaxed), "two mutexinoutset tasks ran at once (seed {seed0})");
        for (a, e) in expect.iter().enumerate() {
            assert_eq!(vals[a].load(Ordering::Relaxed), *e, "address {a}, seed {seed0}, {n} threads");
        }
        for (id, v) in reads {
            assert_eq!(seen[id as usize].load(Ordering::Relaxed), v, "reader {id}, seed {seed0}");
        }
    }
}

/// A long chain on one address keeps the dependence map at one entry (memory bounded).
#[test]
fn long_chain_runs_in_order() {
    let x = Arc::new(AtomicU64::new(0));
    parallel(Some(2), |tid| {
        let th = Thread::current();
        if tid == 0 {
            for i in 0..100_000u64 {
                let x = x.clone();
                spawn(th, &[Dep { addr: 64, kind: Access::Out }], move || {
                    assert_eq!(x.load(Ordering::Relaxed), i);
                    x.store(i + 1, Ordering::Relaxed);
                });
            }
            taskwait(th);
            assert_eq!(x.load(Ordering::Relaxed), 100_000);
        }
    });
}

#[test]
fn taskgroup_waits_for_descendants() {
    parallel(Some(3), |tid| {
        let th = Thread::current();
        if tid != 0 {
            return;
        }
        let count = Arc::new(AtomicU32::new(0));
        taskgroup_begin(th);
        for _ in 0..50 {
            let c = count.clone();
            spawn(th, &[], move || {
                let c2 = c.clone();
                // A grandchild nobody waits for but the taskgroup.
                spawn(Thread::current(), &[], move || {
                    std::thread::yield_now();
                    c2.fetch_add(1, Ordering::Relaxed);
                });
                c.fetch_add(1, Ordering::Relaxed);
            });
        }
        taskgroup_end(th);
        assert_eq!(count.load(Ordering::Relaxed), 100);
    });
}

/// Children left behind by undeferred tasks (and their children) hold the barrier.
#[test]
fn children_of_undeferred_tasks_hold_the_barrier() {
    for n in [1u32, 2, 4] {
        let count = Arc::new(AtomicU32::new(0));
        parallel(Some(n), |tid| {
            let th = Thread::current();
            for _ in 0..20 {
                let c = count.clone();
                undeferred(th, move || {
                    let th = Thread::current();
                    for _ in 0..5 {
                        let c = c.clone();
                        spawn(th, &[], move || {
                            std::thread::yield_now();
                            c.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                    // A nested undeferred task without children leaves no count behind.
                    undeferred(th, || {});
                });
            }
            th.team().barrier(th);
            assert_eq!(count.load(Ordering::Relaxed), 100 * n, "tid {tid} of {n}");
            th.team().barrier(th);
        });
    }
}

/// Runs `f` on thread 0 of a team of two whose thread 1 stays away from the task pool until
/// `f` returns (it waits outside any task scheduling point), so that thread 0's deque and its
/// counts are exactly what `f` makes of them.
fn alone_in_a_pair(f: impl Fn(Thread) + Sync) {
    let done = AtomicBool::new(false);
    parallel(Some(2), |tid| {
        if tid == 1 {
            while !done.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            return;
        }
        f(Thread::current());
        done.store(true, Ordering::Release);
    });
}

/// What the parts of `untied_entry` saw: part 0 makes room in a full deque when asked to
/// (`take_one`), re-submits the task (as clang's untied entry does) and looks at the deque;
/// part 1 counts its runs.
#[derive(Default)]
struct UntiedProbe {
    take_one: bool,
    queued_after_resubmit: AtomicU32,
    part1_runs: AtomicU32,
}

/// An untied task's entry for the tests below: a `*const UntiedProbe` follows its `kmp_task_t`.
unsafe extern "C" fn untied_entry(gtid: i32, kt: *mut KmpTask) -> i32 {
    let th = Thread::from_gtid(gtid);
    // SAFETY: the tests allocate room for the probe pointer after the kmp_task_t, and the
    // probe outlives the task (the tests wait for it).
    unsafe {
        let probe = &**(kt.add(1) as *const *const UntiedProbe);
        if (*kt).part_id == 0 {
            if probe.take_one {
                assert!(run_one(th), "the full deque has a task to run");
            }
            let before = th.team().tasks().own_len(th.tid());
            (*kt).part_id = 1;
            assert_eq!(submit(th, Task::from_kmp(kt), &mut Vec::new()), Ok(()));
            let after = th.team().tasks().own_len(th.tid());
            probe.queued_after_resubmit.store((after - before) as u32, Ordering::Relaxed);
        } else {
            probe.part1_runs.fetch_add(1, Ordering::Relaxed);
        }
    }
    0
}

/// A new untied task whose entry is `untied_entry` with `probe`.
fn untied_task(probe: &UntiedProbe) -> &'static Task {
    let size = std::mem::size_of::<KmpTask>() + std::mem::size_of::<*const UntiedProbe>();
    let kt = alloc(0, size, 0, Some(untied_entry), 0);
    // SAFETY: room for the pointer was allocated; the task is not submitted yet.
    unsafe {
        *(kt.add(1) as *mut *const UntiedProbe) = probe;
        Task::from_kmp(kt)
    }
}

/// An untied task's next part goes on where its previous part ran, whether the task was run
/// at once (the deque was full, and part 0 made room in it, so the cut-off would now queue)
/// or queued (the deque was empty): re-submitting pushes nothing, the part runs right after
/// the previous one returns, once, and a task run at once stays uncounted (`Counted::Lazy`).
/// (Which thread runs part 1 cannot tell the policies apart here: thread 1 takes no task.)
/// Thread 1 stays away from the deque, so the counts are exact.
#[test]
fn an_untied_task_goes_on_where_its_part_ran() {
    let small = Arc::new(AtomicU32::new(0));
    let at_once = UntiedProbe { take_one: true, ..Default::default() };
    let queued = UntiedProbe::default();
    alone_in_a_pair(|th| {
        for _ in 0..CUTOFF {
            let s = small.clone();
            spawn(th, &[], move || {
                s.fetch_add(1, Ordering::Relaxed);
            });
        }
        assert_eq!(th.team().tasks().own_len(0), CUTOFF, "the deque is full");
        let created = current(th).rest.created.load(Ordering::Relaxed);
        submit(th, untied_task(&at_once), &mut Vec::new()).unwrap();
        assert_eq!(small.load(Ordering::Relaxed), 1, "part 0 ran at once and took one task");
        assert_eq!(at_once.part1_runs.load(Ordering::Relaxed), 1, "part 1 ran before submit returned");
        assert_eq!(at_once.queued_after_resubmit.load(Ordering::Relaxed), 0, "nothing was pushed");
        assert_eq!(current(th).rest.created.load(Ordering::Relaxed), created, "run at once: not counted");
        assert_eq!(current(th).rest.spawned.load(Ordering::Relaxed), created, "nor for retirement");
        taskwait(th);
        assert_eq!(small.load(Ordering::Relaxed), CUTOFF as u32);

        // The deque is empty now: the task is queued, and taskwait runs it here.
        submit(th, untied_task(&queued), &mut Vec::new()).unwrap();
        assert_eq!(th.team().tasks().own_len(0), 1, "queued");
        assert_eq!(queued.part1_runs.load(Ordering::Relaxed), 0);
        taskwait(th);
        assert_eq!(queued.part1_runs.load(Ordering::Relaxed), 1, "taskwait waited for part 1");
        assert_eq!(queued.queued_after_resubmit.load(Ordering::Relaxed), 0, "nothing was pushed");
    });
}

/// Submitting a task again that is not an untied task re-submitting itself from its own body
/// is refused (the entry reports the misuse) and leaves the task alone: here, a queued task
/// submitted a second time before it ran (thread 1 stays away from the deque), which then
/// runs once.
#[test]
fn a_second_submission_is_refused() {
    let runs = Arc::new(AtomicU32::new(0));
    alone_in_a_pair(|th| {
        // As `spawn` does, keeping the task.
        let size = std::mem::size_of::<KmpTask>() + std::mem::size_of::<Body>();
        let kt = alloc(flags::TIED, size, 0, Some(run_rust_body), 0);
        let r = runs.clone();
        let body: Body = Box::new(move || {
            r.fetch_add(1, Ordering::Relaxed);
        });
        // SAFETY: room for the body was allocated, 8-aligned; the task is not submitted yet.
        let t = unsafe {
            std::ptr::write((kt as *mut u8).add(std::mem::size_of::<KmpTask>()) as *mut Body, body);
            Task::from_kmp(kt)
        };
        submit(th, t, &mut Vec::new()).unwrap();
        assert_eq!(th.team().tasks().own_len(0), 1, "queued");
        assert!(submit(th, t, &mut Vec::new()).is_err(), "a second submission is refused");
        assert_eq!(th.team().tasks().own_len(0), 1, "and leaves the queue alone");
        taskwait(th);
        assert_eq!(runs.load(Ordering::Relaxed), 1, "the task ran once");
    });
}

/// A tied task that re-submits itself from its own body is refused (only clang's untied tasks
/// do that), and its body does not run again.
#[test]
fn a_tied_task_resubmitting_itself_is_refused() {
    static REFUSED: AtomicU32 = AtomicU32::new(0);
    static RUNS: AtomicU32 = AtomicU32::new(0);
    unsafe extern "C" fn entry(gtid: i32, kt: *mut KmpTask) -> i32 {
        let th = Thread::from_gtid(gtid);
        RUNS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the task running this entry.
        if submit(th, unsafe { Task::from_kmp(kt) }, &mut Vec::new()).is_err() {
            REFUSED.fetch_add(1, Ordering::Relaxed);
        }
        0
    }
    parallel(Some(1), |_| {
        let th = Thread::current();
        let kt = alloc(flags::TIED, std::mem::size_of::<KmpTask>(), 0, Some(entry), 0);
        // SAFETY: just allocated.
        submit(th, unsafe { Task::from_kmp(kt) }, &mut Vec::new()).unwrap();
        taskwait(th);
    });
    assert_eq!(REFUSED.load(Ordering::Relaxed), 1, "refused");
    assert_eq!(RUNS.load(Ordering::Relaxed), 1, "the body ran once");
}

/// A task queued by a grandchild run at once (both levels ran at once because the deque was
/// full) makes the whole chain hold on: the task run at once holds its parent and so does the
/// middle one, so that the queued task's retirement can walk up through them after they and
/// their queued ancestor have ended.
#[test]
fn a_task_queued_below_tasks_run_at_once_holds_the_chain() {
    let release = Arc::new(AtomicBool::new(false));
    let ran = Arc::new(AtomicU32::new(0));
    let (r2, ran2) = (release.clone(), ran.clone());
    parallel(Some(2), move |tid| {
        let th = Thread::current();
        if tid == 1 {
            while !r2.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            return;
        }
        let ran = ran2.clone();
        // P: queued (the deque is empty), run by the taskwait below.
        spawn(th, &[], move || {
            let th = Thread::current();
            let p: &Task = current(th);
            for _ in 0..CUTOFF {
                let r = ran.clone();
                spawn(th, &[], move || {
                    r.fetch_add(1, Ordering::Relaxed);
                });
            }
            let ran = ran.clone();
            // t and c run at once (the deque is full).
            spawn(th, &[], move || {
                let th = Thread::current();
                let ran = ran.clone();
                spawn(th, &[], move || {
                    let th = Thread::current();
                    let c: &Task = current(th);
                    // SAFETY: c's parent t is suspended beneath it, alive.
                    let t = unsafe { &*c.head.parent };
                    assert!(
                        !t.rest.parent_ref.get() && !c.rest.parent_ref.get(),
                        "run at once: no references"
                    );
                    assert!(run_one(th), "make room in the deque");
                    let p_before = p_refs(t);
                    let r = ran.clone();
                    spawn(th, &[], move || {
                        r.fetch_add(100, Ordering::Relaxed);
                    });
                    assert!(c.rest.parent_ref.get(), "c holds t");
                    assert!(t.rest.parent_ref.get(), "t holds P");
                    assert_eq!(t.rest.refs.load(Ordering::Relaxed), 2, "t: its own reference and c's");
                    assert_eq!(p_refs(t), p_before + 1, "P: one more, t's");
                });
            });
            let _ = p;
        });
        taskwait(th);
        r2.store(true, Ordering::Release);
    });
    // The region's end waited for every descendant.
    assert_eq!(ran.load(Ordering::Relaxed), CUTOFF as u32 + 100, "every task ran once");
}

/// The reference count of `t`'s parent.
fn p_refs(t: &Task) -> u32 {
    // SAFETY: the parent is suspended beneath `t`, alive.
    unsafe { &*t.head.parent }.rest.refs.load(Ordering::Relaxed)
}
