//! A test recorder: every thread's state pushes and pops, in order.

use std::collections::HashMap;
use std::sync::Mutex;
use std::thread::ThreadId;

use oxiomp_instrument::{Event, Recorder, State};

/// Per thread, the (enter?, state) events in order.
#[derive(Default)]
pub struct Log(pub Mutex<HashMap<ThreadId, Vec<(bool, State)>>>);

impl Recorder for Log {
    fn record(&self, events: &[Event]) {
        let mut log = self.0.lock().unwrap();
        let mine = log.entry(std::thread::current().id()).or_default();
        for e in events {
            match *e {
                Event::Enter(s) => mine.push((true, s)),
                Event::Leave(s) => mine.push((false, s)),
                _ => {}
            }
        }
    }
}

/// Installs a fresh `Log` as the process's recorder.
pub fn install() -> &'static Log {
    let log: &'static Log = Box::leak(Box::default());
    assert!(oxiomp_instrument::install(log));
    log
}
