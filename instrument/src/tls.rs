//! Pointer-sized thread-local slots read at the cost of a load, for the hot paths of the
//! runtime (the current thread's descriptor) and of the recorder (the thread's stream).
//!
//! Rust's `thread_local!` in a shared library uses the general-dynamic TLS model: each access
//! calls `__tls_get_addr` (a few nanoseconds, twice per lock/unlock pair, which was a third of
//! an uncontended `omp_set_lock`). Stable Rust cannot choose the model, so on x86-64 Linux
//! [`thread_slot!`] declares the slot in assembly and reads it with the initial-exec
//! sequence: one load of the slot's offset from the GOT, one `fs`-relative load. Like any
//! initial-exec variable in a shared library each slot takes 8 bytes of the static TLS block;
//! glibc keeps surplus space there for libraries loaded by `dlopen` that need it. Elsewhere a
//! `thread_local!` cell does the job.

/// `thread_slot!(pub(crate) mod NAME: *const T = "symbol");` declares module `NAME` with
/// `get() -> *const T` (null until the thread calls `set`) and `set(*const T)`, a slot of
/// the calling thread. `symbol` names the slot in the object file (hidden, never exported);
/// it must be unique in the library.
#[macro_export]
macro_rules! thread_slot {
    ($vis:vis mod $name:ident: *const $t:ty = $sym:literal;) => {
        #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
        $vis mod $name {
            #[allow(unused_imports)]
            use super::*;

            // One zero-initialised 8-byte TLS slot, hidden.
            core::arch::global_asm!(
                ".pushsection .tbss,\"awT\",@nobits",
                ".p2align 3",
                concat!(".globl ", $sym),
                concat!(".hidden ", $sym),
                concat!(".type ", $sym, ",@object"),
                concat!(".size ", $sym, ",8"),
                concat!($sym, ":"),
                ".zero 8",
                ".popsection",
            );

            /// The calling thread's pointer (null until it sets one).
            #[inline(always)]
            pub fn get() -> *const $t {
                let p: *const $t;
                // SAFETY: reads the calling thread's own slot declared above: the GOT entry
                // holds its offset from the thread pointer (initial-exec model), and every
                // thread's slot is valid, zero until `set`, for the thread's whole life.
                unsafe {
                    core::arch::asm!(
                        concat!("mov {p}, qword ptr [rip + ", $sym, "@GOTTPOFF]"),
                        "mov {p}, qword ptr fs:[{p}]",
                        p = out(reg) p,
                        options(nostack, readonly, preserves_flags, pure),
                    )
                };
                p
            }

            /// Sets the calling thread's pointer.
            #[inline]
            pub fn set(p: *const $t) {
                // SAFETY: writes the calling thread's own slot (see `get`); only this thread
                // ever accesses it.
                unsafe {
                    core::arch::asm!(
                        concat!("mov {t}, qword ptr [rip + ", $sym, "@GOTTPOFF]"),
                        "mov qword ptr fs:[{t}], {p}",
                        t = out(reg) _,
                        p = in(reg) p,
                        options(nostack, preserves_flags),
                    )
                };
            }
        }

        #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
        $vis mod $name {
            #[allow(unused_imports)]
            use super::*;

            std::thread_local! {
                static SLOT: std::cell::Cell<*const $t> = const { std::cell::Cell::new(std::ptr::null()) };
            }

            /// The calling thread's pointer (null until it sets one, and while it ends).
            #[inline(always)]
            pub fn get() -> *const $t {
                SLOT.try_with(|c| c.get()).unwrap_or(std::ptr::null())
            }

            /// Sets the calling thread's pointer (ignored while the thread ends).
            #[inline]
            pub fn set(p: *const $t) {
                let _ = SLOT.try_with(|c| c.set(p));
            }
        }
    };
}
