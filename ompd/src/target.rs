//! The program as the library sees it: memory read through the debugger's callbacks, and the
//! runtime's layout table (`oxiomp_debug_layout`) that says where each field lies. Nothing
//! here assumes a size: pointers are as wide as the debugger says, fields as the table says.

use std::collections::HashMap;
use std::ffi::{CString, c_void};

use crate::types::{Address, AsContext, Callbacks, Rc, TypeSizes};

/// The layout table's header: magic, version, count, entry size, header size.
const MAGIC: u64 = u64::from_le_bytes(*b"OXIOMPDL");
const VERSION: u32 = 1;
const HEADER: u64 = 24;

/// Where a field lies in its struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub offset: u64,
    pub size: u64,
}

/// One process (an address space) the debugger showed the library.
pub struct Target {
    pub cb: Callbacks,
    pub ctx: *mut AsContext,
    pub sizes: TypeSizes,
    fields: HashMap<String, Field>,
    /// The address of `oxiomp_debug_globals`.
    globals: u64,
}

pub type Result<T> = std::result::Result<T, Rc>;

impl Target {
    /// Reads the layout table of the process behind `ctx`; `Incompatible` if it has none (not
    /// oxiomp) or one of another format.
    pub fn open(cb: Callbacks, ctx: *mut AsContext) -> Result<Target> {
        let mut sizes = TypeSizes::default();
        let sizeof = cb.sizeof_type.ok_or(Rc::CallbackError)?;
        // SAFETY: the debugger's callback, called with its own context and a place to write.
        let rc = unsafe { sizeof(ctx, &mut sizes) };
        if rc != Rc::Ok || sizes.sizeof_pointer == 0 || sizes.sizeof_pointer > 8 {
            return Err(Rc::CallbackError);
        }
        let mut t = Target { cb, ctx, sizes, fields: HashMap::new(), globals: 0 };
        let table = t.symbol("oxiomp_debug_layout").map_err(|_| Rc::Incompatible)?;
        t.globals = t.symbol("oxiomp_debug_globals").map_err(|_| Rc::Incompatible)?;
        let head = t.read(table, HEADER)?;
        let word = |i: usize| u32::from_le_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]) as u64;
        let magic = u64::from_le_bytes(head[0..8].try_into().map_err(|_| Rc::Error)?);
        if magic != MAGIC || word(8) != VERSION as u64 {
            return Err(Rc::Incompatible);
        }
        let (count, entry, header) = (word(12), word(16), word(20));
        if !(48..=256).contains(&entry) || count > 4096 {
            return Err(Rc::Incompatible);
        }
        let body = t.read(table + header, count * entry)?;
        for e in body.chunks_exact(entry as usize) {
            let name_len = e[..40].iter().position(|&b| b == 0).unwrap_or(40);
            let name = String::from_utf8_lossy(&e[..name_len]).into_owned();
            let num = |i: usize| u32::from_le_bytes([e[i], e[i + 1], e[i + 2], e[i + 3]]) as u64;
            t.fields.insert(name, Field { offset: num(40), size: num(44) });
        }
        // The fields every answer needs; a table without them is of a runtime this library
        // does not know.
        for f in REQUIRED {
            t.field(f).map_err(|_| Rc::Incompatible)?;
        }
        Ok(t)
    }

    /// The address of the symbol `name`.
    pub fn symbol(&self, name: &str) -> Result<u64> {
        let f = self.cb.symbol_addr_lookup.ok_or(Rc::CallbackError)?;
        let c = CString::new(name).map_err(|_| Rc::BadInput)?;
        let mut a = Address::default();
        // SAFETY: the debugger's callback, with its context, a NUL-terminated name, a place to
        // write and no file name.
        let rc = unsafe { f(self.ctx, std::ptr::null_mut(), c.as_ptr(), &mut a, std::ptr::null()) };
        if rc != Rc::Ok || a.address == 0 {
            return Err(Rc::Unavailable);
        }
        Ok(a.address)
    }

    /// `n` bytes at `addr`.
    pub fn read(&self, addr: u64, n: u64) -> Result<Vec<u8>> {
        if addr == 0 {
            return Err(Rc::Unavailable);
        }
        if n > 1 << 20 {
            return Err(Rc::BadInput);
        }
        let f = self.cb.read_memory.ok_or(Rc::CallbackError)?;
        let mut buf = vec![0u8; n as usize];
        let a = Address { segment: 0, address: addr };
        // SAFETY: the debugger's callback writes at most `n` bytes into `buf`.
        let rc = unsafe { f(self.ctx, std::ptr::null_mut(), &a, n, buf.as_mut_ptr() as *mut c_void) };
        match rc {
            Rc::Ok => Ok(buf),
            _ => Err(Rc::DeviceReadError),
        }
    }

    /// An unsigned integer of `size` bytes (1 to 8) at `addr`, in the target's byte order
    /// (the debugger converts it when it can).
    pub fn read_uint(&self, addr: u64, size: u64) -> Result<u64> {
        if !(1..=8).contains(&size) {
            return Err(Rc::Incompatible);
        }
        let raw = self.read(addr, size)?;
        let mut host = [0u8; 8];
        match self.cb.device_to_host {
            Some(f) => {
                // SAFETY: the debugger's callback converts one unit of `size` bytes into
                // `host`, which holds 8.
                let rc = unsafe {
                    f(self.ctx, raw.as_ptr() as *const c_void, size, 1, host.as_mut_ptr() as *mut c_void)
                };
                if rc != Rc::Ok {
                    host[..size as usize].copy_from_slice(&raw);
                }
            }
            None => host[..size as usize].copy_from_slice(&raw),
        }
        Ok(u64::from_le_bytes(host))
    }

    /// A pointer at `addr`.
    pub fn read_ptr(&self, addr: u64) -> Result<u64> {
        self.read_uint(addr, self.sizes.sizeof_pointer as u64)
    }

    /// A NUL-terminated string at `addr` (at most `max` bytes).
    pub fn read_string(&self, addr: u64, max: u64) -> Result<String> {
        if addr == 0 {
            return Err(Rc::Unavailable);
        }
        let f = self.cb.read_string.or(self.cb.read_memory).ok_or(Rc::CallbackError)?;
        let mut buf = vec![0u8; max as usize + 1];
        let a = Address { segment: 0, address: addr };
        // SAFETY: the debugger's callback writes at most `max` bytes into `buf`.
        let rc = unsafe { f(self.ctx, std::ptr::null_mut(), &a, max, buf.as_mut_ptr() as *mut c_void) };
        if rc != Rc::Ok {
            return Err(Rc::DeviceReadError);
        }
        let len = buf.iter().position(|&b| b == 0).unwrap_or(max as usize);
        Ok(String::from_utf8_lossy(&buf[..len]).into_owned())
    }

    /// The table's entry `name`.
    pub fn field(&self, name: &str) -> Result<Field> {
        self.fields.get(name).copied().ok_or(Rc::Incompatible)
    }

    /// The value of field `name` of the struct at `base`.
    pub fn get(&self, base: u64, name: &str) -> Result<u64> {
        if base == 0 {
            return Err(Rc::StaleHandle);
        }
        let f = self.field(name)?;
        self.read_uint(base + f.offset, f.size)
    }

    /// The address of field `name` of the struct at `base`.
    pub fn addr_of(&self, base: u64, name: &str) -> Result<u64> {
        Ok(base + self.field(name)?.offset)
    }

    /// A process-wide value (`globals.*`).
    pub fn global(&self, name: &str) -> Result<u64> {
        self.get(self.globals, name)
    }

    /// The runtime's root (`Unavailable` before the runtime started).
    pub fn runtime(&self) -> Result<u64> {
        match self.global("globals.runtime")? {
            0 => Err(Rc::Unavailable),
            r => Ok(r),
        }
    }

    /// The descriptors of every thread the runtime has.
    pub fn threads(&self) -> Result<Vec<u64>> {
        let rt = self.runtime()?;
        let count = self.get(rt, "runtime.thread_count")?.min(1 << 16);
        let table = self.get(rt, "runtime.threads")?;
        let p = self.sizes.sizeof_pointer as u64;
        let raw = self.read(table, count * p)?;
        Ok(raw
            .chunks_exact(p as usize)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..c.len()].copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .filter(|&d| d != 0)
            .collect())
    }
}

/// Fields without which no answer can be given.
const REQUIRED: &[&str] = &[
    "globals.runtime",
    "runtime.thread_count",
    "runtime.threads",
    "thread.os_tid",
    "thread.state",
    "thread.team",
    "thread.tid",
    "thread.task",
    "team.nthreads",
    "team.level",
    "team.parent",
    "task.kind",
    "task.team",
];
