//! Recording on several threads at once, through many buffer hand-overs to the writer
//! thread (and, when it falls behind, writes by the threads themselves): every event reaches
//! the trace once, in order, and the trace passes `check` (a process of its own: the recorder
//! is process-wide).

use oxiomp_instrument::trace::Trace;

const THREADS: usize = 4;
/// Enter/exit pairs per thread: 12-byte events, about 7 MB per thread (seven hand-overs).
const PAIRS: usize = 300_000;

#[test]
fn every_event_of_every_thread_reaches_the_trace() {
    let dir = std::env::temp_dir().join(format!("oxiomp-record-threads-{}", std::process::id()));
    oxiomp_instrument::ovni::start(&dir).expect("trace directory");
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            std::thread::spawn(|| {
                for _ in 0..PAIRS {
                    oxiomp_instrument::barrier_plain_enter();
                    oxiomp_instrument::barrier_plain_exit();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // The writer thread takes no signals (they belong to the program's threads: a handler run
    // on the writer could not wait for the stream it is writing).
    let writer = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|e| e.ok())
        .find(|e| std::fs::read_to_string(e.path().join("comm")).is_ok_and(|c| c.trim() == "oxiomp-trace-wr"))
        .expect("the writer thread runs");
    let status = std::fs::read_to_string(writer.path().join("status")).unwrap();
    let blocked = status.lines().find_map(|l| l.strip_prefix("SigBlk:")).expect("SigBlk line");
    let blocked = u64::from_str_radix(blocked.trim(), 16).unwrap();
    for sig in [2, 15] {
        // SIGINT, SIGTERM (Linux numbers).
        assert_ne!(blocked & (1 << (sig - 1)), 0, "signal {sig} not blocked in the writer");
    }
    // Each thread closed its stream when it ended.
    let t = Trace::read(&dir).expect("readable trace");
    assert_eq!(t.threads.len(), THREADS);
    let problems = t.check();
    assert!(problems.is_empty(), "{problems:?}");
    let enter = oxiomp_instrument::State::BarrierPlain.ovni_mcv();
    for s in &t.threads {
        assert_eq!(s.truncated_at, None);
        let codes: Vec<[u8; 3]> = s.events.iter().map(|e| e.mcv).filter(|m| &m[..2] != b"OF").collect();
        assert_eq!(codes.first(), Some(b"OHx"), "{}", s.path.display());
        assert_eq!(codes.last(), Some(b"OHe"), "{}", s.path.display());
        let states = &codes[1..codes.len() - 1];
        assert_eq!(states.len(), 2 * PAIRS, "{}", s.path.display());
        assert!(states.iter().step_by(2).all(|m| m == enter));
        let flushes = s.events.iter().filter(|e| &e.mcv == b"OF[").count();
        assert!(flushes >= 2 * PAIRS * 12 / (1 << 20), "{} flushes in {}", flushes, s.path.display());
    }
    let _ = std::fs::remove_dir_all(dir);
}
