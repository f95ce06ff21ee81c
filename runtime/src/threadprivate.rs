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
//! unloaded (at exit, after the program's own static destructors, as libomp does), the newest
//! first, unless a thread may still be using them: the exiting thread or another initial
//! thread is inside a parallel region. Worker threads live until then (a pause ends their
//! threads but keeps their copies for the workers the next region starts on the same
//! descriptors). An initial thread's copies are destroyed and freed when the thread ends (its
//! gtid then serves the next initial thread, which starts with copies of its own). A forked
//! child does not destroy the copies it inherited: they are the parent's objects.

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
}

/// The variables the runtime has seen, their tables, and the copies still to be destroyed.
pub(crate) struct Registry {
    vars: Option<HashMap<usize, Record>>,
    /// Copies of variables with a destructor (the copy's address, its thread's gtid), in the
    /// order they were made.
    doomed: Vec<(Dtor, usize, i32)>,
    /// Every table installed (its address, and the variable's size: that of each copy in it),
    /// recorded before it is published.
    tables: Vec<(usize, usize)>,
    /// The process's exit destroys the copies: a thread ending now leaves its copies alone.
    exiting: bool,
}

pub(crate) static RECORDS: ForkLock<Registry> =
    ForkLock::new(Registry { vars: None, doomed: Vec::new(), tables: Vec::new(), exiting: false });

/// How a thread's copy of a variable starts.
enum Init {
    CopyCtor(CopyCtor),
    Ctor(Ctor),
    Image(Vec<u8>),
}

type Table = [AtomicPtr<c_void>];

fn record_image(data: *mut c_void, size: usize) {
    let mut g = RECORDS.lock();
    let map = g.vars.get_or_insert_with(HashMap::new);
    let r = map.entry(data as usize).or_default();
    if r.image.len() < size {
        // SAFETY: `data` is the variable, at least `size` bytes (the compiler's sizeof).
        r.image = unsafe { std::slice::from_raw_parts(data as *const u8, size) }.to_vec();
    }
}

/// `__kmpc_threadprivate_register`: remembers the constructors of `data`.
pub fn register(data: *mut c_void, ctor: Option<Ctor>, cctor: Option<CopyCtor>, dtor: Option<Dtor>) {
    let mut g = RECORDS.lock();
    let map = g.vars.get_or_insert_with(HashMap::new);
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
    let copy = if gtid == 0 { data } else { make_copy(data, size, gtid) };
    entry.store(copy, Ordering::Release);
    copy
}

#[cold]
fn install_table(slot: &AtomicPtr<c_void>, data: *mut c_void, size: usize) -> *mut c_void {
    record_image(data, size);
    let fresh = crate::registry::zeroed_table::<c_void>(MAX_THREADS);
    let fresh = Box::into_raw(fresh) as *mut AtomicPtr<c_void> as *mut c_void;
    // Recorded before it is published: a thread that finds the table in the slot finds it in
    // the list when it ends (`thread_ended`).
    RECORDS.lock().tables.push((fresh as usize, size));
    // AcqRel: publish our table, or acquire the one another thread installed first.
    match slot.compare_exchange(std::ptr::null_mut(), fresh, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => fresh,
        Err(theirs) => {
            RECORDS.lock().tables.retain(|&(t, _)| t != fresh as usize);
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

/// The layout of a copy of a variable of `size` bytes.
fn copy_layout(size: usize) -> std::alloc::Layout {
    std::alloc::Layout::from_size_align(size.max(1), 16).expect("threadprivate size")
}

#[cold]
fn make_copy(data: *mut c_void, size: usize, gtid: i32) -> *mut c_void {
    let layout = copy_layout(size);
    // SAFETY: the layout has a non-zero size.
    let copy = unsafe { std::alloc::alloc_zeroed(layout) } as *mut c_void;
    if copy.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    // What the copy is made from, taken out of the registry first: a constructor may itself
    // use threadprivate variables (and so the registry's lock).
    let (how, dtor) = {
        let g = RECORDS.lock();
        let r = g.vars.as_ref().and_then(|m| m.get(&(data as usize)));
        let how = r.map(|r| match (r.cctor, r.ctor) {
            (Some(cc), _) => Init::CopyCtor(cc),
            (None, Some(c)) => Init::Ctor(c),
            (None, None) => Init::Image(r.image[..r.image.len().min(size)].to_vec()),
        });
        (how, r.and_then(|r| r.dtor))
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
    if let Some(d) = dtor {
        RECORDS.lock().doomed.push((d, copy as usize, gtid));
    }
    copy
}

/// Initial thread `gtid` ended: its copies are destroyed (the newest first), with its entries
/// still set (a destructor may use the thread's other copies), then its entries emptied and
/// the copies freed, so that the next initial thread given the gtid makes copies of its own.
/// Copies a destructor makes are destroyed in turn (a few rounds at most, as pthread keys'
/// destructors). Called on the ending thread, the only one that writes its entries. Once the
/// process's exit destroys the copies (`destroy_copies`), nothing is destroyed or freed here.
pub(crate) fn thread_ended(gtid: i32) {
    for _ in 0..4 {
        let dtors = {
            let mut g = RECORDS.lock();
            if g.exiting {
                return;
            }
            let mut dtors = Vec::new();
            g.doomed.retain(|&(d, copy, owner)| {
                let mine = owner == gtid;
                if mine {
                    dtors.push((d, copy));
                }
                !mine
            });
            dtors
        };
        if dtors.is_empty() {
            break;
        }
        // Outside the lock: a destructor may use threadprivate variables.
        for &(dtor, copy) in dtors.iter().rev() {
            // SAFETY: as in `destroy_copies`; the copy is this thread's, which uses it no more.
            unsafe { dtor(copy as *mut c_void) };
        }
    }
    let copies = {
        let g = RECORDS.lock();
        if g.exiting {
            return;
        }
        take_entries(&g, gtid)
    };
    for (copy, size) in copies {
        // SAFETY: made by `make_copy` with this layout, taken out of its table, and never
        // referenced by the runtime again.
        unsafe { std::alloc::dealloc(copy as *mut u8, copy_layout(size)) };
    }
}

/// Empties `gtid`'s entries in every table; returns the copies they held, with their sizes.
fn take_entries(g: &Registry, gtid: i32) -> Vec<(*mut c_void, usize)> {
    let mut copies = Vec::new();
    for &(table, size) in &g.tables {
        // SAFETY: a recorded table is a leaked `[AtomicPtr; MAX_THREADS]` (it is dropped from
        // the list before it is freed, by the thread that made it, unpublished).
        let table: &Table =
            unsafe { std::slice::from_raw_parts(table as *const AtomicPtr<c_void>, MAX_THREADS) };
        if let Some(entry) = table.get(gtid as usize) {
            // Relaxed: only the entry's thread writes it (the caller is that thread, at its
            // end, or the only thread of a fork's child).
            let p = entry.swap(std::ptr::null_mut(), Ordering::Relaxed);
            if !p.is_null() {
                copies.push((p, size));
            }
        }
    }
    copies
}

/// In a fork's child, for a gtid whose initial thread is not there: the next thread given the
/// gtid makes copies of its own. The parent's copies are neither destroyed nor freed.
pub(crate) fn forget_thread_after_fork(gtid: i32) {
    let g = RECORDS.lock();
    let _ = take_entries(&g, gtid);
}

/// Runs the registered destructors on the copies made so far, the newest first (a copy's
/// destructor may still use copies made before it), once: the list is taken. Outside the
/// registry's lock (a destructor may use threadprivate variables). Returns how many ran. The
/// copies' memory stays (this runs as the process ends).
pub fn destroy_copies() -> usize {
    let doomed = {
        let mut g = RECORDS.lock();
        g.exiting = true;
        std::mem::take(&mut g.doomed)
    };
    for &(dtor, copy, _) in doomed.iter().rev() {
        // SAFETY: the destructor was registered for this variable's type, and `copy` is a
        // copy of it that its constructor (or the image) initialised, destroyed only here.
        unsafe { dtor(copy as *mut c_void) };
    }
    doomed.len()
}

/// At the library's unload: [`destroy_copies`], unless a thread may still be using a copy
/// (the exiting thread, or another initial thread, is inside a parallel region: another
/// initial thread's contention group then holds more than itself). An initial thread other
/// than the exiting one that is inside a `teams` region is not seen (its teams count their
/// threads in contention groups of their own).
pub fn destroy_copies_at_exit() {
    if !crate::Runtime::started() {
        return;
    }
    let rt = crate::Runtime::get();
    let me_outside = crate::Thread::peek().is_none_or(|th| th.outside_regions());
    let roots_idle = (0..rt.registered_threads() as i32)
        .filter_map(|g| rt.thread(g))
        // Acquire: pairs with the Release of a join's give-back, so the region's uses of the
        // copies happen before their destruction.
        .all(|d| !d.is_initial() || d.cg_threads.load(Ordering::Acquire) == 1);
    if me_outside && roots_idle {
        destroy_copies();
    }
}

/// In a forked child: the copies it inherited are the parent's objects, not destroyed here.
pub(crate) fn forget_copies_after_fork() {
    RECORDS.lock().doomed.clear();
}
