//! The calling thread's descriptor pointer, in thread-local storage.
//!
//! Every entry point without a gtid argument (`omp_get_thread_num`, the lock routines, task
//! entries that look up their thread) starts here, so the read must cost next to nothing.
//! Rust's `thread_local!` in a shared library uses the general-dynamic TLS model: each access
//! calls `__tls_get_addr` (a few nanoseconds, twice per lock/unlock pair, which was a third of
//! an uncontended `omp_set_lock`). Stable Rust cannot choose the model, so on x86-64 Linux the
//! slot is declared in assembly and read with the initial-exec sequence: one load of the
//! slot's offset from the GOT, one `fs`-relative load. Like any initial-exec variable in a
//! shared library it takes 8 bytes of the static TLS block; glibc keeps surplus space there
//! for libraries loaded by `dlopen` that need it. Elsewhere a `thread_local!` cell does the job.

use crate::thread::ThreadDesc;

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod slot {
    use super::ThreadDesc;

    // One zero-initialised 8-byte TLS slot, hidden (never exported from libomp.so).
    core::arch::global_asm!(
        ".pushsection .tbss,\"awT\",@nobits",
        ".p2align 3",
        ".globl oxiomp_current_thread",
        ".hidden oxiomp_current_thread",
        ".type oxiomp_current_thread,@object",
        ".size oxiomp_current_thread,8",
        "oxiomp_current_thread:",
        ".zero 8",
        ".popsection",
    );

    #[inline(always)]
    pub(super) fn get() -> *const ThreadDesc {
        let p: *const ThreadDesc;
        // SAFETY: reads the calling thread's own slot declared above: the GOT entry holds its
        // offset from the thread pointer (initial-exec model), and every thread's slot is
        // valid, zero until `set`, for the thread's whole life.
        unsafe {
            core::arch::asm!(
                "mov {p}, qword ptr [rip + oxiomp_current_thread@GOTTPOFF]",
                "mov {p}, qword ptr fs:[{p}]",
                p = out(reg) p,
                options(nostack, readonly, preserves_flags, pure),
            )
        };
        p
    }

    #[inline]
    pub(super) fn set(p: *const ThreadDesc) {
        // SAFETY: writes the calling thread's own slot (see `get`); only this thread ever
        // accesses it.
        unsafe {
            core::arch::asm!(
                "mov {t}, qword ptr [rip + oxiomp_current_thread@GOTTPOFF]",
                "mov qword ptr fs:[{t}], {p}",
                t = out(reg) _,
                p = in(reg) p,
                options(nostack, preserves_flags),
            )
        };
    }
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
mod slot {
    use super::ThreadDesc;
    use std::cell::Cell;

    thread_local! {
        static CURRENT: Cell<*const ThreadDesc> = const { Cell::new(std::ptr::null()) };
    }

    #[inline(always)]
    pub(super) fn get() -> *const ThreadDesc {
        CURRENT.try_with(|c| c.get()).unwrap_or(std::ptr::null())
    }

    #[inline]
    pub(super) fn set(p: *const ThreadDesc) {
        CURRENT.with(|c| c.set(p));
    }
}

/// The calling thread's descriptor, null if the runtime does not know the thread yet.
#[inline(always)]
pub(crate) fn get() -> *const ThreadDesc {
    slot::get()
}

/// Records the calling thread's descriptor (once, when the thread is registered).
#[inline]
pub(crate) fn set(desc: &'static ThreadDesc) {
    slot::set(desc);
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_thread_has_its_own_slot() {
        // Any distinct non-null addresses serve as descriptors here: the slot only stores them.
        for v in [1usize, 2] {
            let addr = Box::leak(Box::new(v)) as *const usize as usize;
            std::thread::spawn(move || {
                let p = addr as *const super::ThreadDesc;
                assert!(super::get().is_null(), "a new thread's slot starts empty");
                super::slot::set(p);
                assert_eq!(super::get(), p);
            })
            .join()
            .unwrap();
        }
    }
}
