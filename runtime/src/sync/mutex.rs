//! The mutex facade: parking_lot's mutex normally, loom's under `--cfg loom`, so that a
//! protocol built on a short critical section (the dependence release in `release.rs`) is
//! model-checked with the same code that runs.

// Under loom the task engine is not built: only the models use this module.
#![cfg_attr(loom, allow(dead_code))]

#[cfg(not(loom))]
pub(crate) use parking_lot::Mutex;

/// loom's mutex with parking_lot's interface (`lock` returns the guard: no poisoning).
#[cfg(loom)]
pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

#[cfg(loom)]
impl<T> Mutex<T> {
    pub(crate) fn new(v: T) -> Mutex<T> {
        Mutex(loom::sync::Mutex::new(v))
    }

    pub(crate) fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
        // A model thread panics only on a failed assertion, which ends the model anyway.
        self.0.lock().expect("a model thread panicked while holding the mutex")
    }
}
