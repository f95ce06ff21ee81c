//! oxiomp's engine: the thread pool, teams, barriers, ICVs and places, with a safe Rust API and
//! no C ABI (that is `oxiomp-kmp-abi`'s job).
//!
//! One [`Runtime`] holds everything process-wide; each thread reaches its own descriptor through
//! one thread-local pointer ([`Thread::current`]).
//!
//! Under `--cfg loom` only the concurrency cores (`sync`: the wait protocol, the task pool's
//! sleep, task retirement, the dependence release, the remote stack of freed task blocks, the
//! nonmonotonic loops' chunk blocks, the loop slots' gate, the futex mutex under the locks,
//! the checks' ring of arrivals; and `barrier`) are built, for the model checker.

#![deny(clippy::undocumented_unsafe_blocks)]

#[cfg(not(loom))]
pub mod affinity_format;
#[cfg(not(loom))]
pub mod allocator;
pub mod barrier;
pub(crate) mod sync;

#[cfg(not(loom))]
pub mod debug;

#[cfg(not(loom))]
pub mod env;
#[cfg(not(loom))]
pub mod error;
#[cfg(not(loom))]
pub mod hidden;
#[cfg(not(loom))]
pub mod hw_subset;
#[cfg(not(loom))]
pub mod icv;
#[cfg(not(loom))]
pub mod kmp_affinity;
#[cfg(not(loom))]
pub mod lifecycle;
#[cfg(not(loom))]
pub mod lock;
#[cfg(not(loom))]
pub mod memory;
#[cfg(not(loom))]
pub mod places;
#[cfg(not(loom))]
pub mod query;
#[cfg(not(loom))]
pub mod registry;
#[cfg(not(loom))]
pub mod task;
#[cfg(not(loom))]
pub mod team;
#[cfg(not(loom))]
pub mod thread;
#[cfg(not(loom))]
pub mod threadprivate;
#[cfg(not(loom))]
pub mod tool;
#[cfg(not(loom))]
pub mod worksharing;

#[cfg(not(loom))]
pub use registry::Runtime;
#[cfg(not(loom))]
pub use sync::WaitPolicy;
#[cfg(not(loom))]
pub use sync::arrival_ring::{Arrival, ArrivalRing};
#[cfg(not(loom))]
pub use sync::fork_lock::ForkLock;
#[cfg(not(loom))]
pub use team::{
    ForkRequest, Job, Outlined, Team, fork, fork_close, fork_open, fork_teams, parallel, serialized_begin,
    serialized_end,
};
#[cfg(not(loom))]
pub use thread::Thread;

/// Writes one line on stderr; a failed write (a closed stderr, EPIPE) is ignored: printing a
/// message must never panic inside an `extern "C"` entry.
pub fn stderr_line(args: std::fmt::Arguments) {
    use std::io::Write;
    let _ = std::io::stderr().write_fmt(format_args!("{args}\n"));
}

/// A fatal error the program asked for (`#pragma omp error`, a `strict` clause that cannot be
/// met): reports it and ends the process with exit status 1 (as libgomp does; libomp aborts).
/// One thread ends it: others that meet such an error meanwhile wait for the exit.
#[cfg(not(loom))]
#[cold]
pub fn user_error(args: std::fmt::Arguments) -> ! {
    stderr_line(format_args!("oxiomp: error: {args}"));
    static ENDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    // Relaxed: only decides which thread calls exit; the others never return.
    if ENDING.swap(true, std::sync::atomic::Ordering::Relaxed) {
        loop {
            std::thread::park();
        }
    }
    std::process::exit(1)
}

/// Ends the process with a message: for states the runtime cannot continue from.
#[cfg(not(loom))]
#[cold]
pub(crate) fn fatal(args: std::fmt::Arguments) -> ! {
    stderr_line(format_args!("oxiomp: fatal error: {args}"));
    std::process::abort()
}
