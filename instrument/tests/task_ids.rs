//! Task trace numbers are unique across threads and never 0 (threads take them in blocks;
//! a process of its own: the recorder is process-wide).

use std::sync::Mutex;

use oxiomp_instrument::{Event, Recorder, Site};

struct Ids(Mutex<Vec<u32>>);

impl Recorder for Ids {
    fn record(&self, events: &[Event]) {
        for e in events {
            if let Event::TaskCreated { id, .. } = *e {
                self.0.lock().unwrap().push(id);
            }
        }
    }
}

#[test]
fn task_numbers_are_unique_across_threads() {
    static IDS: Ids = Ids(Mutex::new(Vec::new()));
    assert!(oxiomp_instrument::install(&IDS));
    const THREADS: usize = 4;
    // Not a multiple of the block size, so that threads leave blocks half used.
    const TASKS: usize = 5_000;
    let returned: Vec<Vec<u32>> = (0..THREADS)
        .map(|_| {
            std::thread::spawn(|| {
                (0..TASKS).map(|entry| oxiomp_instrument::task_created(Site { entry, ident: 0 })).collect()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    let mut seen = IDS.0.lock().unwrap().clone();
    let mut all: Vec<u32> = returned.concat();
    assert_eq!(all.len(), THREADS * TASKS);
    assert!(all.iter().all(|&id| id != 0), "0 means untraced");
    all.sort_unstable();
    seen.sort_unstable();
    assert_eq!(all, seen, "the recorder saw each returned number once");
    all.dedup();
    assert_eq!(all.len(), THREADS * TASKS, "numbers repeat");
}
