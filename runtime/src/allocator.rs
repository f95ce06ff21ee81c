//! OpenMP allocators (OpenMP 5.2 §6.2): the predefined handles, allocators made by
//! `omp_init_allocator` with their traits, and the def-allocator-var setting (`OMP_ALLOCATOR`).
//!
//! This host has one kind of memory, so every memory space is the system heap; what differs
//! between allocators is what the traits ask for:
//! * `alignment`: every block is aligned at least that much (a power of two);
//! * `pool_size`: the bytes the allocator's live blocks take from the heap at once (each
//!   block's header and alignment padding included, as libomp counts them); an allocation
//!   beyond it falls back;
//! * `fallback`: what a failed allocation does: `default_mem_fb` (the default) takes the
//!   memory from `omp_default_mem_alloc`, `null_fb` returns null, `abort_fb` ends the
//!   program, `allocator_fb` tries the allocator in `fb_data`;
//! * `pinned`: the block is locked in memory (`mlock`); where the system refuses, the
//!   allocation fails and falls back;
//! * `sync_hint`, `access`, `partition`: hints, checked for valid values, with no effect on
//!   one kind of memory.
//!
//! A handle is a predefined number (`omp_default_mem_alloc` = 1, ...) or the address of an
//! [`Allocator`]. Each block records the handle it came from (in its header, see
//! `memory.rs`), so a free gives the bytes back to the right pool whatever handle the program
//! passes. An allocator destroyed while blocks are live is freed with its last block.

use std::ffi::c_void;

use crate::error::Misuse;
use crate::memory;
use crate::sync::atomic::{AtomicUsize, Ordering};
use crate::sync::fork_lock::ForkLock;

/// `omp_allocator_handle_t`.
pub type Handle = usize;

pub const NULL_ALLOCATOR: Handle = 0;
pub const DEFAULT_MEM_ALLOC: Handle = 1;

/// The predefined allocators' names, by handle.
const PREDEFINED: &[(Handle, &str)] = &[
    (1, "omp_default_mem_alloc"),
    (2, "omp_large_cap_mem_alloc"),
    (3, "omp_const_mem_alloc"),
    (4, "omp_high_bw_mem_alloc"),
    (5, "omp_low_lat_mem_alloc"),
    (6, "omp_cgroup_mem_alloc"),
    (7, "omp_pteam_mem_alloc"),
    (8, "omp_thread_mem_alloc"),
    (100, "llvm_omp_target_host_mem_alloc"),
];

/// The memory spaces (`omp_memspace_handle_t`) by name; all are the system heap here.
const MEMSPACES: &[(usize, &str)] = &[
    (0, "omp_default_mem_space"),
    (1, "omp_large_cap_mem_space"),
    (2, "omp_const_mem_space"),
    (3, "omp_high_bw_mem_space"),
    (4, "omp_low_lat_mem_space"),
    (100, "llvm_omp_target_host_mem_space"),
];

/// `omp_atv_default`.
const ATV_DEFAULT: usize = usize::MAX;

/// `omp_alloctrait_key_t` values and their names (as `OMP_ALLOCATOR` spells them).
const KEYS: &[(usize, &str)] = &[
    (1, "sync_hint"),
    (2, "alignment"),
    (3, "access"),
    (4, "pool_size"),
    (5, "fallback"),
    (6, "fb_data"),
    (7, "pinned"),
    (8, "partition"),
];

/// `omp_alloctrait_value_t` values and their names.
const VALUES: &[(usize, &str)] = &[
    (0, "false"),
    (1, "true"),
    (3, "contended"),
    (4, "uncontended"),
    (5, "serialized"),
    (6, "private"),
    (7, "all"),
    (8, "thread"),
    (9, "pteam"),
    (10, "cgroup"),
    (11, "default_mem_fb"),
    (12, "null_fb"),
    (13, "abort_fb"),
    (14, "allocator_fb"),
    (15, "environment"),
    (16, "nearest"),
    (17, "blocked"),
    (18, "interleaved"),
];

/// What a failed allocation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fallback {
    DefaultMem,
    Null,
    Abort,
    Allocator(Handle),
}

/// The traits that change what an allocation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Traits {
    pub alignment: usize,
    /// Bytes live at once (`usize::MAX`: no pool).
    pub pool_size: usize,
    pub fallback: Fallback,
    pub pinned: bool,
}

/// `Allocator::blocks`: set once the program destroyed the allocator.
const DESTROYED: usize = 1 << (usize::BITS - 1);

/// An allocator made by `omp_init_allocator` (its address is the handle).
#[repr(C)]
pub struct Allocator {
    pub memspace: usize,
    pub traits: Traits,
    /// Bytes live (only counted with a pool).
    used: AtomicUsize,
    /// Live blocks, plus [`DESTROYED`].
    blocks: AtomicUsize,
}

/// Handles below this are not addresses.
const FIRST_ADDRESS: usize = 4096;

/// `omp_init_allocator`: an allocator in `memspace` with `traits` (key, value pairs), or an
/// error saying what is not supported (the caller returns `omp_null_allocator`).
pub fn init(memspace: usize, traits: &[(usize, usize)]) -> Result<Handle, String> {
    if !MEMSPACES.iter().any(|&(m, _)| m == memspace) {
        return Err(format!("unknown memory space {memspace}"));
    }
    let t = parse_traits(traits)?;
    let a =
        Box::new(Allocator { memspace, traits: t, used: AtomicUsize::new(0), blocks: AtomicUsize::new(0) });
    let h = Box::into_raw(a) as Handle;
    {
        let mut live = LIVE.lock();
        let i = live.binary_search(&h).unwrap_or_else(|i| i);
        live.insert(i, h);
    }
    Ok(h)
}

fn parse_traits(traits: &[(usize, usize)]) -> Result<Traits, String> {
    let mut t = Traits { alignment: 1, pool_size: usize::MAX, fallback: Fallback::DefaultMem, pinned: false };
    let mut fb_data = None;
    let mut allocator_fb = false;
    for &(key, value) in traits {
        let bad = || format!("trait {} cannot be {value}", key_name(key));
        if value == ATV_DEFAULT {
            continue;
        }
        match key {
            1 if (3..=6).contains(&value) => {}
            2 if value.is_power_of_two() => t.alignment = value,
            3 if matches!(value, 7..=10) => {}
            4 if value > 0 => t.pool_size = value,
            5 => {
                t.fallback = match value {
                    11 => Fallback::DefaultMem,
                    12 => Fallback::Null,
                    13 => Fallback::Abort,
                    14 => {
                        allocator_fb = true;
                        Fallback::Null
                    }
                    _ => return Err(bad()),
                }
            }
            6 => fb_data = Some(value),
            7 if value <= 1 => t.pinned = value == 1,
            8 if (15..=18).contains(&value) => {}
            1..=8 => return Err(bad()),
            _ => return Err(format!("unknown trait key {key}")),
        }
    }
    if allocator_fb {
        let fb = fb_data.ok_or("fallback allocator_fb needs an fb_data allocator")?;
        if fb == NULL_ALLOCATOR || !valid(fb) {
            return Err("fb_data is not an allocator".into());
        }
        t.fallback = Fallback::Allocator(fb);
    }
    Ok(t)
}

fn key_name(key: usize) -> &'static str {
    KEYS.iter().find(|&&(k, _)| k == key).map_or("?", |&(_, n)| n)
}

/// The addresses of the allocators `init` made and that are not freed yet: a handle the
/// program passes is looked up here before it is read (a stale or made-up handle is reported,
/// not followed). Sorted.
pub(crate) static LIVE: ForkLock<Vec<Handle>> = ForkLock::new(Vec::new());

/// The allocator behind handle `h` if `init` made it and it is not freed (not predefined).
fn custom(h: Handle) -> Option<&'static Allocator> {
    if h < FIRST_ADDRESS || LIVE.lock().binary_search(&h).is_err() {
        return None;
    }
    // SAFETY: `h` is in LIVE: `init` made it with Box::into_raw, and it is removed from LIVE
    // (under the write lock) before it is freed.
    Some(unsafe { &*(h as *const Allocator) })
}

/// The allocator that served a block: its header names it, and a block keeps its allocator
/// alive (the allocator is freed only after its last block).
///
/// # Safety
/// `h` is the serving allocator recorded in a live block's header.
unsafe fn serving(h: Handle) -> Option<&'static Allocator> {
    // SAFETY: per the contract, an address handle there is a live allocator.
    (h >= FIRST_ADDRESS).then(|| unsafe { &*(h as *const Allocator) })
}

/// Frees allocator `h` (destroyed, and without blocks).
fn free_allocator(h: Handle) {
    {
        let mut live = LIVE.lock();
        if let Ok(i) = live.binary_search(&h) {
            live.remove(i);
        }
    }
    // SAFETY: made by `init` with Box::into_raw; destroyed and without blocks, so nothing
    // refers to it, and it is out of LIVE, so no lookup can reach it.
    drop(unsafe { Box::from_raw(h as *mut Allocator) });
}

/// Whether allocator `a` is destroyed. Relaxed: using an allocator while another thread
/// destroys it is a program error; this only reports use after the destroy.
fn destroyed(a: &Allocator) -> bool {
    a.blocks.load(Ordering::Relaxed) & DESTROYED != 0
}

/// Whether `h` names an allocator (predefined or live).
pub fn valid(h: Handle) -> bool {
    PREDEFINED.iter().any(|&(p, _)| p == h) || custom(h).is_some_and(|a| !destroyed(a))
}

/// `omp_destroy_allocator`.
pub fn destroy(h: Handle) -> Result<(), Misuse> {
    if h == NULL_ALLOCATOR {
        return Ok(());
    }
    let Some(a) = custom(h) else {
        return Err(if valid(h) { Misuse::PredefinedAllocator } else { Misuse::DestroyNotAnAllocator });
    };
    // AcqRel: pairs with the last block's free (`free`), so exactly one side frees it.
    let prev = a.blocks.fetch_or(DESTROYED, Ordering::AcqRel);
    if prev & DESTROYED != 0 {
        return Err(Misuse::AllocatorDestroyedTwice);
    }
    if prev == 0 {
        free_allocator(h);
    }
    Ok(())
}

/// Allocates `size` bytes aligned to `align` through allocator `h` (not null), following its
/// fallback; null when it (and its fallback) cannot, or for size 0. Errors: `h` (or an
/// allocator it falls back to) is not an allocator.
pub fn alloc(h: Handle, size: usize, align: usize, zeroed: bool) -> Result<*mut c_void, Misuse> {
    if size == 0 {
        return Ok(std::ptr::null_mut());
    }
    let requested = h;
    let (mut h, mut align) = (h, align);
    // A chain of allocator_fb fallbacks ends (a cycle would not).
    for hop in 0..16 {
        let owner = memory::Owner { served: h, requested };
        let Some(a) = custom(h) else {
            if !valid(h) {
                return Err(if hop == 0 { Misuse::NotAnAllocator } else { Misuse::FallbackNotAnAllocator });
            }
            return Ok(memory::alloc(size, align, zeroed, owner));
        };
        if destroyed(a) {
            return Err(if hop == 0 { Misuse::AllocatorDestroyed } else { Misuse::FallbackDestroyed });
        }
        // Every allocator on the way keeps its alignment promise.
        align = align.max(a.traits.alignment);
        if let Some(p) = try_alloc(a, owner, size, align, zeroed) {
            return Ok(p);
        }
        match a.traits.fallback {
            Fallback::DefaultMem => {
                let owner = memory::Owner { served: DEFAULT_MEM_ALLOC, requested };
                return Ok(memory::alloc(size, align, zeroed, owner));
            }
            Fallback::Null => return Ok(std::ptr::null_mut()),
            Fallback::Abort => crate::fatal(format_args!(
                "an allocation of {size} bytes failed in an allocator with the abort_fb fallback"
            )),
            Fallback::Allocator(next) => h = next,
        }
    }
    Ok(std::ptr::null_mut())
}

/// One attempt in allocator `a` (serving `owner`), within its pool; None if it does not fit or
/// the memory cannot be had (or pinned). A pinned block takes whole pages of its own (the
/// kernel locks pages, without counts), and its pool counts them.
fn try_alloc(
    a: &Allocator,
    owner: memory::Owner,
    size: usize,
    align: usize,
    zeroed: bool,
) -> Option<*mut c_void> {
    let (size, align) = if a.traits.pinned {
        let page = memory::page_size();
        (size.checked_next_multiple_of(page)?, align.max(page))
    } else {
        (size, align)
    };
    let pooled = a.traits.pool_size != usize::MAX;
    // A pool counts what its blocks take from the heap, headers and padding included.
    let charge = memory::footprint(size, align)?;
    if pooled {
        // Relaxed: the pool count guards no other data; the CAS keeps it within the limit.
        let mut cur = a.used.load(Ordering::Relaxed);
        loop {
            let next = cur.checked_add(charge).filter(|&n| n <= a.traits.pool_size)?;
            match a.used.compare_exchange_weak(cur, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => cur = now,
            }
        }
    }
    let p = memory::alloc(size, align, zeroed, owner);
    let ok = !p.is_null() && (!a.traits.pinned || memory::pin(p, size));
    if !ok {
        if !p.is_null() {
            // SAFETY: just allocated, not handed out.
            unsafe { memory::free_raw(p) };
        }
        if pooled {
            // Relaxed: as above.
            a.used.fetch_sub(charge, Ordering::Relaxed);
        }
        return None;
    }
    // Relaxed: only the count matters; `destroy` and the last free pair through AcqRel.
    a.blocks.fetch_add(1, Ordering::Relaxed);
    Some(p)
}

/// Frees a block from [`alloc`] (null is ignored), giving its bytes back to the pool of the
/// allocator that served it.
///
/// # Safety
/// `p` is null or a live block from [`alloc`].
pub unsafe fn free(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    // SAFETY: per the contract.
    let (size, owner) = unsafe { memory::block_info(p) };
    // SAFETY: the serving allocator of a live block.
    let a = unsafe { serving(owner.served) };
    if let Some(a) = a {
        if a.traits.pinned {
            memory::unpin(p, size);
        }
        if a.traits.pool_size != usize::MAX {
            // Relaxed: as in `try_alloc`.
            // SAFETY: per the contract.
            a.used.fetch_sub(unsafe { memory::block_footprint(p) }, Ordering::Relaxed);
        }
    }
    // SAFETY: per the contract.
    unsafe { memory::free_raw(p) };
    // AcqRel: pairs with `destroy`.
    if let Some(a) = a
        && a.blocks.fetch_sub(1, Ordering::AcqRel) == DESTROYED | 1
    {
        free_allocator(owner.served);
    }
}

/// `omp_realloc`: a block of `size` bytes from `h` (null: the allocator the program asked for
/// `p`, even if a fallback served it) holding `p`'s bytes up to the smaller size; `p` is freed
/// only when the new block could be had. Size 0 frees `p` and returns null.
///
/// # Safety
/// As for [`free`].
pub unsafe fn realloc(p: *mut c_void, size: usize, h: Handle) -> Result<*mut c_void, Misuse> {
    if size == 0 {
        // SAFETY: per the contract.
        unsafe { free(p) };
        return Ok(std::ptr::null_mut());
    }
    let h = if h == NULL_ALLOCATOR && !p.is_null() {
        // SAFETY: per the contract.
        unsafe { memory::block_info(p) }.1.requested
    } else {
        h
    };
    let q = alloc(h, size, 1, false)?;
    if !q.is_null() && !p.is_null() {
        // SAFETY: both blocks are live and hold at least the copied length.
        unsafe {
            let old = memory::block_info(p).0;
            std::ptr::copy_nonoverlapping(p as *const u8, q as *mut u8, old.min(size));
            free(p);
        }
    }
    Ok(q)
}

/// The allocator `h`'s name for display: predefined ones by name, others by address.
pub fn name(h: Handle) -> String {
    PREDEFINED.iter().find(|&&(p, _)| p == h).map_or(format!("{h:#x}"), |&(_, n)| n.to_string())
}

/// `OMP_ALLOCATOR`: a predefined allocator's name, or `memspace` / `memspace:key=value,...`
/// (OpenMP 5.1), which makes a new allocator.
pub fn parse_env(s: &str) -> Result<Handle, String> {
    let s = s.trim();
    if let Some(&(h, _)) = PREDEFINED.iter().find(|&&(_, n)| n.eq_ignore_ascii_case(s)) {
        return Ok(h);
    }
    let (space, traits) = match s.split_once(':') {
        Some((space, traits)) if traits.trim().is_empty() => {
            return Err(format!("no traits after '{}:'", space.trim()));
        }
        Some((space, traits)) => (space, Some(traits)),
        None => (s, None),
    };
    let Some(&(m, _)) = MEMSPACES.iter().find(|&&(_, n)| n.eq_ignore_ascii_case(space.trim())) else {
        return Err("expected a predefined allocator or a memory space with traits".into());
    };
    let mut list = Vec::new();
    for kv in traits.into_iter().flat_map(|t| t.split(',')).map(str::trim) {
        if kv.is_empty() {
            return Err("an empty trait in the list".into());
        }
        let (k, v) = kv.split_once('=').ok_or(format!("trait {kv:?} is not key=value"))?;
        let &(key, _) = KEYS
            .iter()
            .find(|&&(_, n)| n.eq_ignore_ascii_case(k.trim()))
            .ok_or(format!("unknown trait {:?}", k.trim()))?;
        let v = v.trim();
        let value = match key {
            2 | 4 => v.parse::<usize>().map_err(|_| format!("trait {} needs a number", k.trim()))?,
            6 => return Err("fb_data cannot be given in OMP_ALLOCATOR".into()),
            _ => VALUES
                .iter()
                .find(|&&(_, n)| n.eq_ignore_ascii_case(v))
                .map(|&(val, _)| val)
                .ok_or(format!("unknown value {v:?} of trait {}", k.trim()))?,
        };
        list.push((key, value));
    }
    init(m, &list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traits_are_checked() {
        assert!(init(0, &[(2, 64), (4, 1 << 20), (5, 12), (7, 0), (1, 4), (3, 7), (8, 16)]).is_ok());
        assert!(init(0, &[(2, 3)]).is_err(), "alignment not a power of two");
        assert!(init(0, &[(99, 1)]).is_err(), "unknown key");
        assert!(init(0, &[(5, 14)]).is_err(), "allocator_fb without fb_data");
        assert!(init(0, &[(5, 14), (6, 1)]).is_ok());
        assert!(init(0, &[(7, 5)]).is_err(), "pinned is true or false");
        assert!(init(0, &[(2, ATV_DEFAULT)]).is_ok(), "omp_atv_default is always valid");
        assert!(init(42, &[]).is_err(), "unknown memory space");
    }

    #[test]
    fn a_pool_falls_back() {
        let h = init(0, &[(4, 1000), (5, 12)]).unwrap();
        let a = alloc(h, 600, 16, false).unwrap();
        assert!(!a.is_null());
        assert!(alloc(h, 600, 16, false).unwrap().is_null(), "null_fb beyond the pool");
        // SAFETY: a live block from `alloc`.
        unsafe { free(a) };
        // A block's header (32 bytes at alignment 16) counts: 968 bytes fill the pool.
        assert!(alloc(h, 969, 16, false).unwrap().is_null(), "969 bytes and a header exceed 1000");
        let b = alloc(h, 968, 16, false).unwrap();
        assert!(!b.is_null(), "the pool is whole again");
        let d = init(0, &[(4, 1000)]).unwrap();
        let c = alloc(d, 5000, 16, false).unwrap();
        assert!(!c.is_null(), "default_mem_fb takes the memory elsewhere");
        // SAFETY: live blocks.
        unsafe {
            free(b);
            free(c);
        }
        assert_eq!(destroy(h), Ok(()));
        assert_eq!(destroy(d), Ok(()));
    }

    #[test]
    fn destroyed_with_live_blocks() {
        let h = init(0, &[(2, 256)]).unwrap();
        let p = alloc(h, 10, 16, true).unwrap();
        assert_eq!(p as usize % 256, 0);
        assert_eq!(destroy(h), Ok(()));
        assert!(alloc(h, 10, 16, false).is_err(), "a destroyed allocator allocates nothing");
        // SAFETY: still live; its free also frees the allocator.
        unsafe { free(p) };
    }

    #[test]
    fn fallbacks_keep_the_alignment_and_realloc_the_requested_allocator() {
        // A pool of 400: 50 bytes at alignment 256 take 306 (the header is padded to 256).
        let h = init(0, &[(2, 256), (4, 400)]).unwrap();
        let big = alloc(h, 1000, 16, false).unwrap();
        assert!(!big.is_null(), "default_mem_fb beyond the pool");
        assert_eq!(big as usize % 256, 0, "the fallback keeps the alignment trait");
        // SAFETY: a live block.
        let (_, owner) = unsafe { memory::block_info(big) };
        assert_eq!(owner, memory::Owner { served: DEFAULT_MEM_ALLOC, requested: h });
        // SAFETY: a live block; realloc frees it.
        let small = unsafe { realloc(big, 50, NULL_ALLOCATOR) }.unwrap();
        // SAFETY: the new live block.
        let (_, owner) = unsafe { memory::block_info(small) };
        assert_eq!(owner.served, h, "realloc with no allocator goes back to the one asked");
        assert_eq!(small as usize % 256, 0);
        // SAFETY: live.
        unsafe { free(small) };
        assert_eq!(destroy(h), Ok(()));
    }

    #[test]
    fn a_freed_allocator_is_not_followed() {
        let h = init(0, &[]).unwrap();
        assert_eq!(destroy(h), Ok(()), "no blocks: freed at once");
        assert_eq!(alloc(h, 10, 16, false), Err(Misuse::NotAnAllocator));
        assert!(destroy(h).is_err());
        assert!(!valid(h));
    }

    #[test]
    fn pinned_blocks_have_pages_of_their_own() {
        let h = init(0, &[(7, 1), (5, 12)]).unwrap();
        let page = memory::page_size();
        let (a, b) = (alloc(h, 100, 16, false).unwrap(), alloc(h, 100, 16, false).unwrap());
        if a.is_null() || b.is_null() {
            return; // RLIMIT_MEMLOCK refuses here (null_fb): nothing to check
        }
        assert_eq!(a as usize % page, 0);
        assert!((a as usize).abs_diff(b as usize) >= page, "no page shared");
        // SAFETY: live blocks.
        unsafe {
            assert_eq!(memory::block_info(a).0, page, "the block owns its whole page");
            free(a);
            free(b);
        }
        assert_eq!(destroy(h), Ok(()));
    }

    #[test]
    fn env_values() {
        assert_eq!(parse_env("omp_high_bw_mem_alloc"), Ok(4));
        let h = parse_env("omp_default_mem_space:pool_size=64,fallback=null_fb,alignment=128").unwrap();
        let a = custom(h).unwrap();
        assert_eq!(a.traits.pool_size, 64);
        assert_eq!(a.traits.fallback, Fallback::Null);
        assert_eq!(a.traits.alignment, 128);
        assert!(parse_env("omp_default_mem_space:pool_size=lots").is_err());
        assert!(parse_env("my_memory").is_err());
        assert!(parse_env("omp_default_mem_space:colour=red").is_err());
        assert_eq!(
            parse_env("omp_default_mem_space:"),
            Err("no traits after 'omp_default_mem_space:'".into())
        );
        assert_eq!(
            parse_env("omp_default_mem_space: "),
            Err("no traits after 'omp_default_mem_space:'".into())
        );
        assert!(parse_env("omp_default_mem_space:pool_size=64,").is_err(), "an empty trait");
        assert!(parse_env("omp_default_mem_space").is_ok(), "a memory space alone is its allocator");
    }
}
