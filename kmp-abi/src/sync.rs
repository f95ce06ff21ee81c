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
