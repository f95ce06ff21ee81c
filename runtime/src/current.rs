//! The calling thread's descriptor pointer, in thread-local storage.
//!
//! Every entry point without a gtid argument (`omp_get_thread_num`, the lock routines, task
//! entries that look up their thread) starts here, so the read must cost next to nothing:
//! an initial-exec slot (see `oxiomp_instrument::tls`), not a `thread_local!`.

use crate::thread::ThreadDesc;

oxiomp_instrument::thread_slot!(mod slot: *const ThreadDesc = "oxiomp_current_thread";);

/// The calling thread's descriptor, null if the runtime does not know the thread yet.
#[inline(always)]
pub(crate) fn get() -> *const ThreadDesc {
    slot::get()
}

/// Records the calling thread's descriptor (when the thread is registered).
#[inline]
pub(crate) fn set(desc: &'static ThreadDesc) {
    slot::set(desc);
}

/// Forgets the calling thread's descriptor (an initial thread at its end gives it up).
pub(crate) fn clear() {
    slot::set(std::ptr::null());
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
