//! Barriers and flushes.

use oxiomp_runtime::Thread;

use crate::Ident;

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_barrier(_loc: *const Ident, _gtid: i32) {
    let th = Thread::current();
    th.team().barrier(th.tid());
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_flush(_loc: *const Ident) {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

/// `single`: 1 for the one thread that executes the block.
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_single(_loc: *const Ident, _gtid: i32) -> i32 {
    let won = oxiomp_runtime::team::single(Thread::current());
    if won {
        oxiomp_instrument::single_enter();
    }
    won as i32
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_end_single(_loc: *const Ident, _gtid: i32) {
    oxiomp_instrument::single_exit();
}

/// `master`: 1 on the primary thread.
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_master(_loc: *const Ident, _gtid: i32) -> i32 {
    (Thread::current().tid() == 0) as i32
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_end_master(_loc: *const Ident, _gtid: i32) {}

/// `masked filter(f)`: 1 on thread `f`.
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_masked(_loc: *const Ident, _gtid: i32, filter: i32) -> i32 {
    (Thread::current().tid() as i32 == filter) as i32
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_end_masked(_loc: *const Ident, _gtid: i32) {}
