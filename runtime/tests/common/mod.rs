//! A test recorder: every thread's state pushes and pops, in order.

use std::collections::HashMap;
use std::sync::Mutex;
use std::thread::ThreadId;

use oxiomp_instrument::{Recorder, State};

/// Per thread, the (enter?, state) events in order.
#[derive(Default)]
pub struct Log(pub Mutex<HashMap<ThreadId, Vec<(bool, State)>>>);

impl Recorder for Log {
    fn push(&self, s: State) {
        self.0.lock().unwrap().entry(std::thread::current().id()).or_default().push((true, s));
    }
    fn pop(&self, s: State) {
        self.0.lock().unwrap().entry(std::thread::current().id()).or_default().push((false, s));
    }
}

/// Installs a fresh `Log` as the process's recorder.
pub fn install() -> &'static Log {
    let log: &'static Log = Box::leak(Box::default());
    assert!(oxiomp_instrument::install(log));
    log
}
