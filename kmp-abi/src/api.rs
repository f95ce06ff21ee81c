//! The `omp_*` inquiry/setter routines (libomp's extensions are in `extensions.rs`).

use std::ffi::c_int;

use oxiomp_runtime::Runtime;
use oxiomp_runtime::query as q;

use crate::misuse;

/// The host's device number: there are no other devices, so it is `omp_get_num_devices()`.
const INITIAL_DEVICE: c_int = 0;

macro_rules! getters {
    ($( $name:ident -> $ty:ty = $e:expr; )*) => {
        $(
            #[unsafe(no_mangle)]
            pub extern "C" fn $name() -> $ty { $e }
        )*
    };
}

getters! {
    omp_get_num_threads -> c_int = q::num_threads();
    omp_get_thread_num -> c_int = q::thread_num();
    omp_get_max_threads -> c_int = q::max_threads();
    omp_get_num_procs -> c_int = q::num_procs();
    omp_in_parallel -> c_int = q::in_parallel() as c_int;
    omp_get_dynamic -> c_int = q::dynamic() as c_int;
    omp_get_nested -> c_int = q::nested() as c_int;
    omp_get_cancellation -> c_int = q::cancellation() as c_int;
    omp_get_thread_limit -> c_int = q::thread_limit();
    omp_get_max_active_levels -> c_int = q::max_active_levels();
    omp_get_supported_active_levels -> c_int = q::supported_active_levels();
    omp_get_level -> c_int = q::level();
    omp_get_active_level -> c_int = q::active_level();
    omp_get_proc_bind -> c_int = q::proc_bind();
    omp_get_num_places -> c_int = q::num_places();
    omp_get_place_num -> c_int = q::place_num();
    omp_get_partition_num_places -> c_int = q::partition().len() as c_int;
    omp_get_num_teams -> c_int = q::num_teams();
    omp_get_team_num -> c_int = q::team_num();
    omp_get_default_device -> c_int = q::default_device();
    omp_get_num_devices -> c_int = 0;
    omp_get_device_num -> c_int = 0;
    omp_get_initial_device -> c_int = INITIAL_DEVICE;
    omp_is_initial_device -> c_int = 1;
    omp_get_max_task_priority -> c_int = q::max_task_priority();
    omp_get_max_teams -> c_int = q::max_teams();
    omp_get_teams_thread_limit -> c_int = q::teams_thread_limit();
    omp_get_wtime -> f64 = q::wtime();
    omp_get_wtick -> f64 = q::wtick();
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_set_num_threads(n: c_int) {
    if let Err(e) = q::set_num_threads(n) {
        misuse("omp_set_num_threads", e);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_set_dynamic(on: c_int) {
    q::set_dynamic(on != 0);
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_set_nested(on: c_int) {
    q::set_nested(on != 0);
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_set_max_active_levels(n: c_int) {
    if let Err(e) = q::set_max_active_levels(n) {
        misuse("omp_set_max_active_levels", e);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_ancestor_thread_num(level: c_int) -> c_int {
    q::ancestor_thread_num(level)
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_team_size(level: c_int) -> c_int {
    q::team_size(level)
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_set_schedule(kind: c_int, chunk: c_int) {
    if let Err(e) = q::set_schedule(kind, chunk) {
        misuse("omp_set_schedule", e);
    }
}

/// # Safety
/// `kind` and `chunk` are null or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_get_schedule(kind: *mut c_int, chunk: *mut c_int) {
    let (k, c) = q::schedule();
    // SAFETY: the caller passes writable pointers (null is tolerated).
    unsafe {
        if let Some(kind) = kind.as_mut() {
            *kind = k;
        }
        if let Some(chunk) = chunk.as_mut() {
            *chunk = c;
        }
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_place_num_procs(place: c_int) -> c_int {
    q::place_num_procs(place)
}

/// # Safety
/// `ids` has room for `omp_get_place_num_procs(place)` ints.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_get_place_proc_ids(place: c_int, ids: *mut c_int) {
    if ids.is_null() {
        return;
    }
    for (i, &cpu) in q::place_proc_ids(place).iter().enumerate() {
        // SAFETY: the caller sized `ids` by omp_get_place_num_procs.
        unsafe { *ids.add(i) = cpu as c_int };
    }
}

/// # Safety
/// `nums` has room for `omp_get_partition_num_places()` ints.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_get_partition_place_nums(nums: *mut c_int) {
    if nums.is_null() {
        return;
    }
    for (i, p) in q::partition().enumerate() {
        // SAFETY: the caller sized `nums` by omp_get_partition_num_places.
        unsafe { *nums.add(i) = p };
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_set_default_device(d: c_int) {
    if d < 0 {
        misuse("omp_set_default_device", "the device number must not be negative; ignored");
        return;
    }
    q::set_default_device(d);
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_set_num_teams(n: c_int) {
    if let Err(e) = q::set_num_teams(n) {
        misuse("omp_set_num_teams", e);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_set_teams_thread_limit(n: c_int) {
    if let Err(e) = q::set_teams_thread_limit(n) {
        misuse("omp_set_teams_thread_limit", e);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_display_env(verbose: c_int) {
    let rt = Runtime::get();
    let mut s = rt.settings().clone();
    s.globals.display_env = if verbose != 0 {
        oxiomp_runtime::icv::DisplayEnv::Verbose
    } else {
        oxiomp_runtime::icv::DisplayEnv::True
    };
    oxiomp_runtime::stderr_line(format_args!("{}", oxiomp_runtime::env::display(&s).trim_end()));
}

/// `omp_pause_resource` / `omp_pause_resource_all` (kinds `omp_pause_soft` = 1 and
/// `omp_pause_hard` = 2 release the same here: the idle workers' threads end, and the next
/// region starts threads again; threadprivate data stays). 0 on success.
fn pause(call: &str, kind: c_int, device: c_int) -> c_int {
    if !(1..=2).contains(&kind) {
        misuse(call, "the kind must be omp_pause_soft or omp_pause_hard; nothing paused");
        return 1;
    }
    if device != INITIAL_DEVICE && device != -1 {
        misuse(call, "no such device (only the host, omp_get_initial_device()); nothing paused");
        return 1;
    }
    match Runtime::get().pause(oxiomp_runtime::Thread::current()) {
        Ok(()) => 0,
        Err(e) => {
            misuse(call, e);
            1
        }
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_pause_resource(kind: c_int, device: c_int) -> c_int {
    pause("omp_pause_resource", kind, device)
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_pause_resource_all(kind: c_int) -> c_int {
    pause("omp_pause_resource_all", kind, INITIAL_DEVICE)
}

/// A C string argument as text (null: empty).
///
/// # Safety
/// `s` is null or NUL-terminated.
unsafe fn text<'a>(s: *const std::ffi::c_char) -> std::borrow::Cow<'a, str> {
    if s.is_null() {
        return "".into();
    }
    // SAFETY: per the contract.
    unsafe { std::ffi::CStr::from_ptr(s) }.to_string_lossy()
}

/// Copies `s` into the C buffer `buf` of `size` bytes, truncated and NUL-terminated (nothing
/// for a null buffer or size 0); returns the length of `s`.
///
/// # Safety
/// `buf` is null or writable for `size` bytes.
unsafe fn copy_out(s: &str, buf: *mut std::ffi::c_char, size: usize) -> usize {
    if !buf.is_null() && size > 0 {
        let n = s.len().min(size - 1);
        // SAFETY: per the contract, n + 1 <= size bytes are writable.
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr(), buf as *mut u8, n);
            *buf.add(n) = 0;
        }
    }
    s.len()
}

// clang's omp.h maps the affinity format routines (set, get, display, capture) to these
// ompc_ names (libomp's omp_ versions of them take Fortran strings).

/// # Safety
/// `format` is null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ompc_set_affinity_format(format: *const std::ffi::c_char) {
    // SAFETY: per the contract.
    oxiomp_runtime::affinity_format::set(&unsafe { text(format) });
}

/// # Safety
/// `buf` is null or writable for `size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ompc_get_affinity_format(buf: *mut std::ffi::c_char, size: usize) -> usize {
    // SAFETY: per the contract.
    unsafe { copy_out(&oxiomp_runtime::affinity_format::get(), buf, size) }
}

/// # Safety
/// `format` is null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ompc_display_affinity(format: *const std::ffi::c_char) {
    // SAFETY: per the contract.
    oxiomp_runtime::affinity_format::display(&unsafe { text(format) });
}

/// # Safety
/// `buf` is null or writable for `size` bytes; `format` is null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ompc_capture_affinity(
    buf: *mut std::ffi::c_char,
    size: usize,
    format: *const std::ffi::c_char,
) -> usize {
    // SAFETY: per the contract.
    unsafe { copy_out(&oxiomp_runtime::affinity_format::capture(&text(format)), buf, size) }
}

/// The attached tool's answer to `command` (its `control_tool` callback's), or -2
/// (`omp_control_tool_notool`) without a tool, -1 (`omp_control_tool_nocallback`) if the tool
/// registered no such callback.
#[unsafe(no_mangle)]
pub extern "C" fn omp_control_tool(command: c_int, modifier: c_int, arg: *mut std::ffi::c_void) -> c_int {
    let _entered = crate::ompt::frame::enter_if_known();
    crate::ompt::control_tool(command, modifier, arg)
}

// Interop objects (OpenMP 5.1 `interop` construct) come from a device runtime; this one is
// host-only, so the only object a program can hold is `omp_interop_none` (null). The property
// routines answer for it: no implementation-defined properties, every value empty (return
// code `omp_irc_empty`), a non-null object `omp_irc_other` (it is none of ours); names, type
// descriptions and return-code descriptions as the specification lists them.

/// Property names and value types, by property id -1 (`fr_id`) to -9 (`targetsync`).
const INTEROP_PROPERTIES: [(&std::ffi::CStr, &std::ffi::CStr); 9] = [
    (c"fr_id", c"omp_interop_fr_t"),
    (c"fr_name", c"const char *"),
    (c"vendor", c"intptr_t"),
    (c"vendor_name", c"const char *"),
    (c"device_num", c"int"),
    (c"platform", c"void *"),
    (c"device", c"void *"),
    (c"device_context", c"void *"),
    (c"targetsync", c"void *"),
];

/// Return-code descriptions, by code 1 (`omp_irc_no_value`) down to -6 (`omp_irc_other`).
const INTEROP_RC: [&std::ffi::CStr; 8] = [
    c"the property has no value",
    c"success",
    c"the interop object is omp_interop_none",
    c"the property id is out of range",
    c"the property's type is int: use omp_get_interop_int",
    c"the property's type is a pointer: use omp_get_interop_ptr",
    c"the property's type is a string: use omp_get_interop_str",
    c"the interop object is not one of this runtime (a host-only runtime has none)",
];

fn interop_property(p: c_int) -> Option<(&'static std::ffi::CStr, &'static std::ffi::CStr)> {
    usize::try_from(-(p as i64) - 1).ok().and_then(|i| INTEROP_PROPERTIES.get(i).copied())
}

/// The return code of any property read: empty for `omp_interop_none`, out of range for an
/// unknown property, other for an object that is not ours.
///
/// # Safety
/// `rc` is null or writable.
unsafe fn interop_read(interop: *const std::ffi::c_void, p: c_int, rc: *mut c_int) {
    let code = if interop_property(p).is_none() {
        -2
    } else if interop.is_null() {
        -1
    } else {
        -6
    };
    // SAFETY: per the contract.
    if let Some(rc) = unsafe { rc.as_mut() } {
        *rc = code;
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_num_interop_properties(_interop: *const std::ffi::c_void) -> c_int {
    0
}

/// # Safety
/// `rc` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_get_interop_int(
    interop: *const std::ffi::c_void,
    p: c_int,
    rc: *mut c_int,
) -> isize {
    // SAFETY: the same contract.
    unsafe { interop_read(interop, p, rc) };
    0
}

/// # Safety
/// `rc` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_get_interop_ptr(
    interop: *const std::ffi::c_void,
    p: c_int,
    rc: *mut c_int,
) -> *mut std::ffi::c_void {
    // SAFETY: the same contract.
    unsafe { interop_read(interop, p, rc) };
    std::ptr::null_mut()
}

/// # Safety
/// `rc` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_get_interop_str(
    interop: *const std::ffi::c_void,
    p: c_int,
    rc: *mut c_int,
) -> *const std::ffi::c_char {
    // SAFETY: the same contract.
    unsafe { interop_read(interop, p, rc) };
    std::ptr::null()
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_interop_name(
    _interop: *const std::ffi::c_void,
    p: c_int,
) -> *const std::ffi::c_char {
    interop_property(p).map_or(std::ptr::null(), |(name, _)| name.as_ptr())
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_interop_type_desc(
    _interop: *const std::ffi::c_void,
    p: c_int,
) -> *const std::ffi::c_char {
    interop_property(p).map_or(std::ptr::null(), |(_, ty)| ty.as_ptr())
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_interop_rc_desc(
    _interop: *const std::ffi::c_void,
    rc: c_int,
) -> *const std::ffi::c_char {
    usize::try_from(1 - rc as i64)
        .ok()
        .and_then(|i| INTEROP_RC.get(i))
        .map_or(std::ptr::null(), |d| d.as_ptr())
}
