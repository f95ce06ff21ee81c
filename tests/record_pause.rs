//! A thread that pauses and resumes many times (a sleeping waiter), with its buffer handed over
//! at every position of the pair: no flush is ever recorded between a pause (`OHp`) and its
//! resume (`OHr`), which ovni's thread model refuses (a paused thread does no work). A process
//! of its own: the recorder is process-wide.

use oxiomp_instrument::trace::Trace;

/// Pause/resume pairs: 12-byte events, a few MB (several hand-overs).
const PAIRS: usize = 200_000;

#[test]
fn no_flush_between_a_pause_and_its_resume() {
    let dir = std::env::temp_dir().join(format!("oxiomp-record-pause-{}", std::process::id()));
    oxiomp_instrument::ovni::start(&dir).expect("trace directory");
    std::thread::spawn(|| {
        for i in 0..PAIRS {
            // A state change every third pair shifts where the buffer fills within a pair.
            if i % 3 == 0 {
                oxiomp_instrument::barrier_plain_enter();
            }
            oxiomp_instrument::thread_pause();
            oxiomp_instrument::thread_resume();
            if i % 3 == 0 {
                oxiomp_instrument::barrier_plain_exit();
            }
        }
    })
    .join()
    .unwrap();
    let t = Trace::read(&dir).expect("readable trace");
    assert_eq!(t.threads.len(), 1);
    let s = &t.threads[0];
    let flushes = s.events.iter().filter(|e| &e.mcv == b"OF[").count();
    assert!(flushes >= 2, "only {flushes} flushes: the test crosses no buffer boundary");
    let problems = t.check();
    assert!(problems.is_empty(), "{problems:?}");
    let pauses = s.events.iter().filter(|e| &e.mcv == b"OHp").count();
    assert_eq!(pauses, PAIRS);
    let _ = std::fs::remove_dir_all(dir);
}
