//! `threadprivate` without native TLS, and doacross loops.

use std::ffi::c_void;

use oxiomp_runtime::Thread;
use oxiomp_runtime::threadprivate as tp;
use oxiomp_runtime::worksharing::{self as ws, doacross::Dim};

use crate::Ident;

/// # Safety
/// `data` is the variable (`size` bytes) and `cache` the compiler's slot for it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_threadprivate_cached(
    _loc: *const Ident,
    _gtid: i32,
    data: *mut c_void,
    size: usize,
    cache: *mut *mut c_void,
) -> *mut c_void {
    // SAFETY: forwarded.
    unsafe { tp::cached(Thread::current().gtid(), data, size, cache) }
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_threadprivate_register(
    _loc: *const Ident,
    data: *mut c_void,
    ctor: Option<tp::Ctor>,
    cctor: Option<tp::CopyCtor>,
    dtor: Option<tp::Dtor>,
) {
    tp::register(data, ctor, cctor, dtor);
}

/// Run when the library is unloaded (`.fini_array`: at exit, after the program's own static
/// destructors, which destroy the variables themselves): destroys the other threads' copies
/// of threadprivate variables registered with a destructor, unless threads may still use them.
extern "C" fn destroy_threadprivate_at_unload() {
    tp::destroy_copies_at_exit();
}

#[used]
#[unsafe(link_section = ".fini_array")]
static DESTROY_THREADPRIVATE_AT_UNLOAD: extern "C" fn() = destroy_threadprivate_at_unload;

/// # Safety
/// `dims` points to `num_dims` dimension descriptors.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_doacross_init(
    _loc: *const Ident,
    _gtid: i32,
    num_dims: i32,
    dims: *const Dim,
) {
    // SAFETY: clang passes an array of num_dims `kmp_dim`.
    let dims = unsafe { std::slice::from_raw_parts(dims, num_dims.max(0) as usize) };
    ws::doacross_init(Thread::current(), dims);
}

fn vector<'a>(th: Thread, vec: *const i64) -> &'a [i64] {
    // SAFETY: clang passes one i64 per dimension of the current doacross loop.
    unsafe { std::slice::from_raw_parts(vec, ws::doacross_dims(th)) }
}

/// # Safety
/// `vec` holds one i64 per dimension.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_doacross_wait(loc: *const Ident, _gtid: i32, vec: *const i64) {
    let th = Thread::current();
    ws::doacross_wait(th, vector(th, vec), loc as usize);
}

/// # Safety
/// `vec` holds one i64 per dimension.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __kmpc_doacross_post(_loc: *const Ident, _gtid: i32, vec: *const i64) {
    let th = Thread::current();
    ws::doacross_post(th, vector(th, vec));
}

#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_doacross_fini(_loc: *const Ident, _gtid: i32) {
    ws::doacross_fini(Thread::current());
}
