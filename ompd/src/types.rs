//! The C types of OMPD (OpenMP 5.2 §20, `omp-tools.h`).

use std::ffi::{c_char, c_int, c_void};

pub type Word = i64;
pub type Size = u64;

/// `ompd_rc_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rc {
    Ok = 0,
    Unavailable = 1,
    StaleHandle = 2,
    BadInput = 3,
    Error = 4,
    Unsupported = 5,
    NeedsStateTracking = 6,
    Incompatible = 7,
    DeviceReadError = 8,
    DeviceWriteError = 9,
    Nomem = 10,
    Incomplete = 11,
    CallbackError = 12,
}

/// `ompd_scope_t`.
pub mod scope {
    pub const GLOBAL: i32 = 1;
    pub const ADDRESS_SPACE: i32 = 2;
    pub const THREAD: i32 = 3;
    pub const PARALLEL: i32 = 4;
    pub const IMPLICIT_TASK: i32 = 5;
    pub const TASK: i32 = 6;
}

/// `ompd_thread_id_t` kinds.
pub mod thread_id {
    pub const PTHREAD: u64 = 0;
    pub const LWP: u64 = 1;
}

/// `ompd_address_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Address {
    pub segment: u64,
    pub address: u64,
}

/// `ompd_frame_info_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct FrameInfo {
    pub frame_address: Address,
    pub frame_flag: Word,
}

/// `ompd_device_type_sizes_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TypeSizes {
    pub sizeof_char: u8,
    pub sizeof_short: u8,
    pub sizeof_int: u8,
    pub sizeof_long: u8,
    pub sizeof_long_long: u8,
    pub sizeof_pointer: u8,
}

/// The debugger's context for an address space and for a thread (opaque).
pub type AsContext = c_void;
pub type ThreadContext = c_void;

pub type AllocFn = unsafe extern "C" fn(Size, *mut *mut c_void) -> Rc;
pub type FreeFn = unsafe extern "C" fn(*mut c_void) -> Rc;
pub type PrintFn = unsafe extern "C" fn(*const c_char, c_int) -> Rc;
pub type SizeofFn = unsafe extern "C" fn(*mut AsContext, *mut TypeSizes) -> Rc;
pub type SymbolFn = unsafe extern "C" fn(
    *mut AsContext,
    *mut ThreadContext,
    *const c_char,
    *mut Address,
    *const c_char,
) -> Rc;
pub type ReadFn =
    unsafe extern "C" fn(*mut AsContext, *mut ThreadContext, *const Address, Size, *mut c_void) -> Rc;
pub type WriteFn =
    unsafe extern "C" fn(*mut AsContext, *mut ThreadContext, *const Address, Size, *const c_void) -> Rc;
pub type DeviceHostFn = unsafe extern "C" fn(*mut AsContext, *const c_void, Size, Size, *mut c_void) -> Rc;
pub type ThreadContextFn =
    unsafe extern "C" fn(*mut AsContext, u64, Size, *const c_void, *mut *mut ThreadContext) -> Rc;

/// `ompd_callbacks_t`: what the debugger gives the library.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Callbacks {
    pub alloc_memory: Option<AllocFn>,
    pub free_memory: Option<FreeFn>,
    pub print_string: Option<PrintFn>,
    pub sizeof_type: Option<SizeofFn>,
    pub symbol_addr_lookup: Option<SymbolFn>,
    pub read_memory: Option<ReadFn>,
    pub write_memory: Option<WriteFn>,
    pub read_string: Option<ReadFn>,
    pub device_to_host: Option<DeviceHostFn>,
    pub host_to_device: Option<DeviceHostFn>,
    pub get_thread_context_for_thread_id: Option<ThreadContextFn>,
}
