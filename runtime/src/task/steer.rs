//! Requests from outside the program that steer the task scheduler: a debugger's breakpoint
//! ("start no new task"), a task it blocks, a priority it raises, the number of threads of the
//! next parallel region (an Ayudame library's requests: `kmp-abi/src/ayudame.rs`). Asked only
//! while a [`Steering`] is installed: one load and a branch per task start, per queued task
//! and per fork without a `num_threads` clause otherwise.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use super::Task;

/// What steers the scheduler.
pub trait Steering: Sync {
    /// Whether task `t` may start now (false: a breakpoint is set, or `t` is blocked). A task
    /// refused is put back where any member of its team takes it, and asked about again then.
    fn may_start(&self, t: &Task) -> bool;
    /// The priority ready task `t` is queued with, if it is to change.
    fn priority(&self, t: &Task) -> Option<i32>;
    /// The number of threads an outermost parallel region without a `num_threads` clause
    /// gets, if it is to differ from nthreads-var.
    fn num_threads(&self) -> Option<u32>;
}

static STEERING: OnceLock<&'static dyn Steering> = OnceLock::new();
/// Whether `STEERING` is set: a flag of its own, so that the fast path is one load. A std
/// atomic: not part of any model.
static ON: AtomicBool = AtomicBool::new(false);

/// Installs `s` (once: false if one was installed already).
pub fn install(s: &'static dyn Steering) -> bool {
    if STEERING.set(s).is_err() {
        return false;
    }
    // Release: with the OnceLock's own, the steering is published before the flag.
    ON.store(true, Ordering::Release);
    true
}

/// The installed steering, if any.
#[inline(always)]
fn steering() -> Option<&'static dyn Steering> {
    // Relaxed: a thread that reads the flag before the steering is visible finds none and
    // goes on as without it, as one that still reads the flag clear does.
    if ON.load(Ordering::Relaxed) { STEERING.get().copied() } else { None }
}

/// Whether task `t` may start now.
#[inline(always)]
pub fn may_start(t: &Task) -> bool {
    steering().is_none_or(|s| s.may_start(t))
}

/// Gives ready task `t`, about to be queued, the priority the steering asks for (by its
/// creator or the thread that released its last dependence: nobody else holds it yet).
#[inline(always)]
pub(crate) fn reprioritise(t: &Task) {
    if let Some(p) = steering().and_then(|s| s.priority(t)) {
        t.head.priority.set(p);
    }
}

/// The number of threads the steering asks an outermost region without a `num_threads`
/// clause to have.
#[inline(always)]
pub(crate) fn num_threads() -> Option<u32> {
    steering().and_then(|s| s.num_threads())
}
