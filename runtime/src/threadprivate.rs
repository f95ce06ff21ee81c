//! `threadprivate` without native TLS (`-fnoopenmp-use-tls`): `__kmpc_threadprivate_cached`
//! and `__kmpc_threadprivate_register`.
//!
//! The compiler gives each variable a zeroed pointer slot (`cache`) that the runtime owns: we
//! hang a table there, one entry per gtid. The process's first initial thread uses the
//! variable itself; any other thread gets a copy made, on its first access, from the
//! variable's value as it was when the runtime first saw it (the static initial value: clang
//! makes the first call at the start of `main`), or by the registered constructor.
//!
//! Copies made for a variable with a registered destructor are destroyed when the library is
//! unloaded (at exit, after the program's own static destructors, as libomp does), unless the
//! exiting thread is inside a parallel region, where other threads may still use them. Worker
//! threads live until then (a pause ends their threads but keeps their copies for the
//! workers the next region starts on the same descriptors).

use std::collections::HashMap;
use std::ffi::c_void;

use crate::sync::fork_lock::ForkLock;

use crate::registry::MAX_THREADS;
use crate::sync::atomic::{AtomicPtr, Ordering};

/// `void *ctor(void *this)` and `void dtor(void *this)` as clang passes them.
pub type Ctor = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
pub type CopyCtor = unsafe extern "C" fn(*mut c_void, *mut c_void) -> *mut c_void;
pub type Dtor = unsafe extern "C" fn(*mut c_void);

#[derive(Default)]
pub(crate) struct Record {
    image: Vec<u8>,
    ctor: Option<Ctor>,
    cctor: Option<CopyCtor>,
    dtor: Option<Dtor>,
    /// The copies made for threads other than the first initial thread (addresses), for the
    /// destructor.
    copies: Vec<usize>,
}

pub(crate) static RECORDS: ForkLock<Option<HashMap<usize, Record>>> = ForkLock::new(None);

/// How a thread's copy of a variable starts.
enum Init {
    CopyCtor(CopyCtor),
    Ctor(Ctor),
    Image(Vec<u8>),
}

type Table = [AtomicPtr<c_void>];

fn record_image(data: *mut c_void, size: usize) {
    let mut g = RECORDS.lock();
    let map = g.get_or_insert_with(HashMap::new);
    let r = map.entry(data as usize).or_default();
    if r.image.len() < size {
        // SAFETY: `data` is the variable, at least `size` bytes (the compiler's sizeof).
        r.image = unsafe { std::slice::from_raw_parts(data as *const u8, size) }.to_vec();
    }
}

/// `__kmpc_threadprivate_register`: remembers the constructors of `data`.
pub fn register(data: *mut c_void, ctor: Option<Ctor>, cctor: Option<CopyCtor>, dtor: Option<Dtor>) {
    let mut g = RECORDS.lock();
    let map = g.get_or_insert_with(HashMap::new);
    let r = map.entry(data as usize).or_default();
    r.ctor = ctor;
    r.cctor = cctor;
    r.dtor = dtor;
}

/// `__kmpc_threadprivate_cached`: the calling thread's copy of `data`.
///
/// # Safety
/// `data` is a variable of `size` bytes and `cache` the compiler's slot for it.
pub unsafe fn cached(gtid: i32, data: *mut c_void, size: usize, cache: *mut *mut c_void) -> *mut c_void {
    // SAFETY: the slot is a pointer-sized, aligned global; all accesses go through atomics.
    let slot = unsafe { AtomicPtr::from_ptr(cache) };
    let mut table = slot.load(Ordering::Acquire);
    if table.is_null() {
        table = install_table(slot, data, size);
    }
    // SAFETY: the table is a leaked `[AtomicPtr; MAX_THREADS]` published with Release.
    let table: &Table = unsafe { std::slice::from_raw_parts(table as *const AtomicPtr<c_void>, MAX_THREADS) };
    let Some(entry) = table.get(gtid as usize) else { return data };
    // Acquire: only this thread writes its entry, so Relaxed would do; Acquire costs nothing.
    let p = entry.load(Ordering::Acquire);
    if !p.is_null() {
        return p;
    }
    let copy = if gtid == 0 { data } else { make_copy(data, size) };
    entry.store(copy, Ordering::Release);
    copy
}

#[cold]
fn install_table(slot: &AtomicPtr<c_void>, data: *mut c_void, size: usize) -> *mut c_void {
    record_image(data, size);
    let fresh: Box<Table> = (0..MAX_THREADS).map(|_| AtomicPtr::new(std::ptr::null_mut())).collect();
    let fresh = Box::into_raw(fresh) as *mut AtomicPtr<c_void> as *mut c_void;
    // AcqRel: publish our table, or acquire the one another thread installed first.
    match slot.compare_exchange(std::ptr::null_mut(), fresh, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => fresh,
        Err(theirs) => {
            // SAFETY: `fresh` came from Box::into_raw just above and was never shared.
            drop(unsafe {
                Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                    fresh as *mut AtomicPtr<c_void>,
                    MAX_THREADS,
                ))
            });
            theirs
        }
    }
}

#[cold]
fn make_copy(data: *mut c_void, size: usize) -> *mut c_void {
    let layout = std::alloc::Layout::from_size_align(size.max(1), 16).expect("threadprivate size");
    // SAFETY: the layout has a non-zero size.
    let copy = unsafe { std::alloc::alloc_zeroed(layout) } as *mut c_void;
    if copy.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    // What the copy is made from, taken out of the registry first: a constructor may itself
    // use threadprivate variables (and so the registry's lock).
    let how = {
        let g = RECORDS.lock();
        g.as_ref().and_then(|m| m.get(&(data as usize))).map(|r| match (r.cctor, r.ctor) {
            (Some(cc), _) => Init::CopyCtor(cc),
            (None, Some(c)) => Init::Ctor(c),
            (None, None) => Init::Image(r.image[..r.image.len().min(size)].to_vec()),
        })
    };
    match how {
        // SAFETY: the constructors were registered for this variable's type; `copy` has
        // `size` bytes.
        Some(Init::CopyCtor(cc)) => unsafe {
            cc(copy, data);
        },
        // SAFETY: as above.
        Some(Init::Ctor(c)) => unsafe {
            c(copy);
        },
        Some(Init::Image(bytes)) => {
            // SAFETY: `copy` has `size` bytes, the image at most `size`.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), copy as *mut u8, bytes.len()) };
        }
        None => {}
    }
    let mut g = RECORDS.lock();
    g.get_or_insert_with(HashMap::new).entry(data as usize).or_default().copies.push(copy as usize);
    copy
}

/// Runs the registered destructor on every copy made so far (once: the copies are forgotten),
/// outside the registry's lock (a destructor may use threadprivate variables). Returns how
/// many ran. The copies' memory stays (this runs as the process ends).
pub fn destroy_copies() -> usize {
    let doomed: Vec<(Dtor, usize)> = {
        let mut g = RECORDS.lock();
        let Some(map) = g.as_mut() else { return 0 };
        let mut v = Vec::new();
        for r in map.values_mut() {
            let copies = std::mem::take(&mut r.copies);
            if let Some(d) = r.dtor {
                v.extend(copies.into_iter().map(|c| (d, c)));
            }
        }
        v
    };
    for &(dtor, copy) in &doomed {
        // SAFETY: the destructor was registered for this variable's type, and `copy` is a
        // copy of it that its constructor (or the image) initialised, destroyed only here.
        unsafe { dtor(copy as *mut c_void) };
    }
    doomed.len()
}
