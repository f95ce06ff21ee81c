//! Names of code addresses, for the checks' messages and the watchdog's hang reports when a
//! construct's `ident_t` names no place (a program built without `-g` by clang, and every
//! gcc-built program): the source file, line and column from the object's debug information
//! when it has line tables (DWARF, read with the `addr2line` crate), else the symbol and
//! offset, or the object and offset (`dladdr`). Cold code: it reads the object's file the
//! first time one of its addresses is named, and allocates.

use std::ffi::{CStr, c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What a code address is: where it points decides which instruction's line is its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Code {
    /// A return address: the place is the call just before it.
    Return,
    /// A function's entry point (a region's outlined function, a task's routine).
    Entry,
}

/// The name of `addr`: `file:line:column` (or `file:line`) when the object it lies in has line
/// tables for it, else `symbol+0x.. in object`, or `object+0x..`; None for 0 or an address no
/// loaded object holds.
pub(crate) fn code_name(addr: usize, what: Code) -> Option<String> {
    if addr == 0 {
        return None;
    }
    // A return address follows its call: the call's line is the line of the byte before.
    let probe = if what == Code::Return { addr - 1 } else { addr };
    source_line(probe).or_else(|| symbol_name(addr))
}

/// The name of the variable at data address `addr` (a lock's, a critical section's): its
/// symbol, `symbol+0x..` inside it, from its object's symbol table; None for an address no
/// loaded object's file holds (the stack, the heap) or no symbol covers.
pub(crate) fn data_name(addr: usize) -> Option<String> {
    let (path, bias) = object_of(addr)?;
    with_loader(path, |loader| {
        let at = (addr - bias) as u64;
        let sym = loader.find_symbol_info(at)?;
        Some(match at - sym.address() {
            0 => sym.name().to_string(),
            off => format!("{}+{off:#x}", sym.name()),
        })
    })
}

/// Runs `f` on the reader of the object file at `path` (made the first time, then kept);
/// None if the file cannot be read.
fn with_loader<T>(path: PathBuf, f: impl FnOnce(&addr2line::Loader) -> Option<T>) -> Option<T> {
    let mut cache = LOADERS.lock().unwrap_or_else(|e| e.into_inner());
    let i = match cache.iter().position(|(p, _)| *p == path) {
        Some(i) => i,
        None => {
            // An object that cannot be read: remembered as None.
            let loader = addr2line::Loader::new(&path).ok();
            cache.push((path, loader));
            cache.len() - 1
        }
    };
    f(cache[i].1.as_ref()?)
}

/// `file:line[:column]` of the instruction at `addr`, from its object's debug information.
fn source_line(addr: usize) -> Option<String> {
    let (path, bias) = object_of(addr)?;
    with_loader(path, |loader| line_of(loader, (addr - bias) as u64))
}

/// `file:line[:column]` of the instruction at file address `at` of `loader`'s object.
fn line_of(loader: &addr2line::Loader, at: u64) -> Option<String> {
    let loc = loader.find_location(at).ok()??;
    let file = Path::new(loc.file?).file_name()?.to_string_lossy().into_owned();
    let line = loc.line.filter(|&l| l > 0)?;
    Some(match loc.column.filter(|&c| c > 0) {
        Some(col) => format!("{file}:{line}:{col}"),
        None => format!("{file}:{line}"),
    })
}

/// The debug information of each object named so far, by its file (None: it has none).
static LOADERS: Mutex<Vec<(PathBuf, Option<addr2line::Loader>)>> = Mutex::new(Vec::new());

/// The file of the loaded object holding `addr`, and the object's load bias (what to take
/// from a run-time address to get the address its file gives).
fn object_of(addr: usize) -> Option<(PathBuf, usize)> {
    struct Search {
        addr: usize,
        found: Option<(PathBuf, usize)>,
    }
    unsafe extern "C" fn visit(info: *mut libc::dl_phdr_info, _size: usize, data: *mut c_void) -> c_int {
        // SAFETY: `data` is the `Search` `object_of` passed, alive and not otherwise borrowed
        // during the call; `info` and its program headers are valid for this callback.
        let (search, info) = unsafe { (&mut *(data as *mut Search), &*info) };
        // SAFETY: `dlpi_phdr` points at `dlpi_phnum` program headers.
        let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
        let bias = info.dlpi_addr as usize;
        let holds = headers.iter().any(|h| {
            let start = bias.wrapping_add(h.p_vaddr as usize);
            h.p_type == libc::PT_LOAD
                && (start..start.wrapping_add(h.p_memsz as usize)).contains(&search.addr)
        });
        if !holds {
            return 0;
        }
        // The program itself has an empty name: its file is /proc/self/exe.
        let name = (!info.dlpi_name.is_null())
            // SAFETY: a non-null `dlpi_name` is a NUL-terminated string.
            .then(|| unsafe { CStr::from_ptr(info.dlpi_name) })
            .filter(|n| !n.is_empty())
            .map(|n| PathBuf::from(n.to_string_lossy().into_owned()));
        search.found = Some((name.unwrap_or_else(|| PathBuf::from("/proc/self/exe")), bias));
        1
    }
    let mut search = Search { addr, found: None };
    // SAFETY: `visit` matches the callback's type and only reads what it is given; `search`
    // outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut search as *mut Search as *mut c_void) };
    search.found
}

/// `symbol+0x.. in object`, or `object+0x..` when no symbol covers `addr` (from `dladdr`).
fn symbol_name(addr: usize) -> Option<String> {
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr only writes `info`; any address may be asked about.
    if unsafe { libc::dladdr(addr as *const c_void, &mut info) } == 0 {
        return None;
    }
    // SAFETY: dladdr's strings are null or NUL-terminated and live as long as the object.
    let text =
        |p: *const libc::c_char| (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy());
    let object = text(info.dli_fname).map(|f| f.rsplit('/').next().unwrap_or_default().to_string());
    let object = object.filter(|o| !o.is_empty()).unwrap_or_else(|| "the program".to_string());
    Some(match text(info.dli_sname) {
        Some(sym) => format!("{sym}+{:#x} in {object}", addr - info.dli_saddr as usize),
        None => format!("{object}+{:#x}", addr - info.dli_fbase as usize),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn here() -> usize {
        here as *const () as usize
    }

    #[test]
    fn a_function_of_this_test_is_named_by_its_source_line() {
        // Test binaries carry line tables (cargo's test profile has debug information).
        let name = code_name(here(), Code::Entry).unwrap();
        assert!(name.starts_with("symbolize.rs:"), "{name}");
        let line: u32 = name.split(':').nth(1).unwrap().parse().unwrap();
        assert!(line > 100, "{name}");
    }

    static A_VARIABLE: [u64; 4] = [1, 2, 3, 4];

    #[test]
    fn a_static_variable_is_named_by_its_symbol() {
        let base = std::hint::black_box(&A_VARIABLE) as *const [u64; 4] as usize;
        let name = data_name(base).unwrap();
        assert!(name.contains("A_VARIABLE") && !name.contains('+'), "{name}");
        let inside = data_name(base + 16).unwrap();
        assert!(inside.contains("A_VARIABLE") && inside.ends_with("+0x10"), "{inside}");
        let on_stack = 0u64;
        assert_eq!(data_name(&on_stack as *const u64 as usize), None);
    }

    #[test]
    fn nothing_is_named_for_no_address() {
        assert_eq!(code_name(0, Code::Return), None);
        assert_eq!(object_of(8), None);
    }

    #[test]
    fn a_symbol_names_an_address_without_line_tables() {
        // The test binary exports no symbols: it is named by its file and the offset.
        let named = symbol_name(here()).unwrap();
        let exe = std::env::current_exe().unwrap();
        let file = exe.file_name().unwrap().to_string_lossy();
        assert!(named.starts_with(&format!("{file}+0x")), "{named}");
    }
}
