//! The engine records worksharing states exactly: a dynamic loop gives one "dynamic for init"
//! and one "dynamic for chunk" per chunk the thread received (no spurious first chunk, the last
//! one closed by the `next` that found no work), a static loop one "static for chunk" from init
//! to fini, a single one "single" on the thread that ran it. (A process of its own: the
//! recorder is process-wide.)

mod common;

use std::collections::HashMap;
use std::sync::Mutex;
use std::thread::ThreadId;

use oxiomp_instrument::{State, Subsystem};
use oxiomp_runtime::worksharing::{self as ws, StaticKind};
use oxiomp_runtime::{Thread, parallel, team};

#[test]
fn worksharing_states_are_exact() {
    let log = common::install();
    let chunks: Mutex<HashMap<ThreadId, usize>> = Mutex::default();
    let singles: Mutex<HashMap<ThreadId, usize>> = Mutex::default();
    parallel(Some(3), |_| {
        let th = Thread::current();
        // dynamic,10 over 100 iterations: 10 chunks in all.
        assert!(ws::dispatch_init(th, 0, 35, 0, 99, 1, 10));
        let mut n = 0;
        while ws::dispatch_next(th).is_some() {
            n += 1;
        }
        ws::dispatch_deinit(th);
        *chunks.lock().unwrap().entry(std::thread::current().id()).or_default() += n;
        let c = ws::static_init(th, StaticKind::Loop, 0, 34, 0, 29, 1, 1);
        assert!(c.lower <= c.upper);
        ws::static_fini(th, StaticKind::Loop);
        if team::single(th) {
            *singles.lock().unwrap().entry(std::thread::current().id()).or_default() += 1;
        }
        th.team().barrier(th);
    });
    let log = log.0.lock().unwrap();
    let chunks = chunks.lock().unwrap();
    assert_eq!(chunks.values().sum::<usize>(), 10);
    let mut seen = 0;
    for (id, events) in log.iter() {
        let Some(&n) = chunks.get(id) else { continue };
        seen += 1;
        let ws: Vec<(bool, State)> =
            events.iter().copied().filter(|(_, s)| s.subsystem() == Subsystem::WorkDistribution).collect();
        let mut want = vec![(true, State::DynamicForInit), (false, State::DynamicForInit)];
        for _ in 0..n {
            want.push((true, State::DynamicForChunk));
            want.push((false, State::DynamicForChunk));
        }
        want.push((true, State::StaticForChunk));
        want.push((false, State::StaticForChunk));
        // The single's state is recorded by the ABI layer (between __kmpc_single and
        // __kmpc_end_single), not by the engine's decision.
        assert_eq!(ws, want, "thread {id:?}");
        // Every push has its pop, in stack order, in every subsystem.
        let mut stack = Vec::new();
        for &(push, s) in events {
            if push {
                stack.push(s);
            } else {
                assert_eq!(stack.pop(), Some(s), "unbalanced {s:?} on {id:?}");
            }
        }
    }
    assert_eq!(seen, 3, "all three threads recorded");
    assert_eq!(singles.lock().unwrap().values().sum::<usize>(), 1);
}
