//! The loom's CPUs, and which thread the trace shows on which of them.
//!
//! ovni's model (its `doc/user/concepts/part-model.md`): a loom is a list of CPUs, each
//! running at most one thread at a time, plus a virtual CPU that collects the threads not tied
//! to one CPU. A thread says where it begins (`OHx`: a logical index into the loom's list, or
//! -1 for the virtual CPU) and where it moves (`OAs`). ovni's emulator stops at once when two
//! running threads claim one CPU of the list.
//!
//! Here the loom's list is every CPU of the machine, index `i` being CPU `i` (so that every
//! process tracing into one directory on one machine, whatever its CPU set, lists the same
//! CPUs under the same indexes: ovni merges the lists of a loom's streams). A thread appears on
//! a CPU of the list only when it is bound to exactly that one CPU *and* holds the CPU's claim,
//! which one thread holds at a time: so the trace never shows two threads on one CPU, even
//! when several threads are bound to it (more threads than places, `taskset` under a binding
//! policy): the others are on the virtual CPU. A thread keeps its claim while it is paused
//! (sleeping threads are not running, so nothing conflicts), and gives it back when it moves
//! elsewhere or ends. The claims are shared by every process tracing into the directory (a
//! child a program starts, a forked one): they live in a file of the loom's directory,
//! `cpus.oxiomp`, mapped by each (ovni's tools read only `stream.json` and `stream.obs`
//! files); where it cannot be mapped, the process keeps its own.
//!
//! Time order: a claim is given back after the event that leaves the CPU was written, with the
//! clock then; whoever takes it next writes its event with a later clock (it waits until the
//! clock has passed that instant, a few nanoseconds at most), so that the emulator, which
//! orders events by their clocks, sees the CPU left before it is taken.

use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

use super::clock_ns;

/// One CPU of the loom's list: the thread that holds it, and when it was last given back.
/// Laid out as in the shared file (16 bytes; all zero: free, never held).
#[repr(C)]
struct Claim {
    /// The holder's OS thread id, or 0.
    holder: AtomicI32,
    _pad: u32,
    /// The clock at which the last holder gave it back (its events before then).
    released: AtomicU64,
}

/// The loom's CPUs (every CPU of the machine, index = CPU number) and their claims.
#[derive(Clone, Copy)]
pub(super) struct Cpus {
    claims: &'static [Claim],
    /// The claims are the loom's shared file's (else the process's own).
    shared: bool,
    /// Every thread is on the virtual CPU (`for_child`).
    virtual_only: bool,
}

impl Cpus {
    /// The machine's CPUs, with the claims shared through `loom_dir/cpus.oxiomp` (the
    /// process's own when the file cannot be mapped).
    pub(super) fn of_machine(loom_dir: &Path) -> Cpus {
        let n = machine_cpus();
        if let Some(claims) = shared_claims(&loom_dir.join("cpus.oxiomp"), n) {
            return Cpus { claims, shared: true, virtual_only: false };
        }
        let own: Box<[Claim]> = (0..n)
            .map(|_| Claim { holder: AtomicI32::new(0), _pad: 0, released: AtomicU64::new(0) })
            .collect();
        Cpus { claims: Box::leak(own), shared: false, virtual_only: false }
    }

    /// The CPUs as a forked child sees them: the same shared claims; without them (the
    /// parent's own, copied, which the parent goes on taking unseen) every thread of the child
    /// is on the virtual CPU.
    pub(super) fn for_child(self) -> Cpus {
        Cpus { virtual_only: self.virtual_only || !self.shared, ..self }
    }

    /// `stream.json`'s `loom_cpus`: `{"index": i, "phyid": i}` for each CPU of the machine.
    pub(super) fn loom_cpus_json(&self) -> String {
        let cpus: Vec<String> =
            (0..self.claims.len()).map(|i| format!("{{\"index\": {i}, \"phyid\": {i}}}")).collect();
        cpus.join(", ")
    }

    /// The loom index the calling thread `tid` appears on: the index of the one CPU it is
    /// bound to, if that is in the list and the thread holds its claim (taken here if free);
    /// -1 otherwise (the virtual CPU). `now`: the index it appears on until now (-1: none),
    /// whose claim it keeps if it is bound there still.
    pub(super) fn take(&self, tid: i32, now: i32) -> i32 {
        if self.virtual_only {
            return -1;
        }
        let Some(i) =
            bound_cpus().filter(|c| c.len() == 1).map(|c| c[0] as usize).filter(|&c| c < self.claims.len())
        else {
            return -1;
        };
        if i as i32 == now {
            return now;
        }
        let claim = &self.claims[i];
        // Acquire: pairs with `give_back`'s Release, so the release clock read below is the
        // one the last holder stored.
        if let Err(holder) = claim.holder.compare_exchange(0, tid, Ordering::Acquire, Ordering::Relaxed) {
            // A holder that no longer exists (its process ended without closing its streams:
            // `_exit`, a crash) recorded nothing after now: its claim is taken over.
            if !gone(holder)
                || claim.holder.compare_exchange(holder, tid, Ordering::Acquire, Ordering::Relaxed).is_err()
            {
                return -1;
            }
            // Relaxed: ordered by the Acquire above (and by the holder's end, long before).
            claim.released.fetch_max(clock_ns(), Ordering::Relaxed);
        }
        // Relaxed: ordered by the Acquire above.
        let released = claim.released.load(Ordering::Relaxed);
        while clock_ns() <= released {
            std::hint::spin_loop();
        }
        i as i32
    }

    /// Thread `tid` no longer appears on loom index `index` (it wrote the event that leaves it,
    /// or its end): the claim is free from the clock now on. Nothing for the virtual CPU (-1).
    /// Given back twice (a stream closed at exit by another thread, then by its own thread's
    /// end), the later clock stands.
    pub(super) fn give_back(&self, tid: i32, index: i32) {
        let Some(claim) = usize::try_from(index).ok().and_then(|i| self.claims.get(i)) else { return };
        // Relaxed: the thread holds it no more (taken by another since, or never): nothing to
        // give back. A stale read is harmless: the CAS below decides.
        if claim.holder.load(Ordering::Relaxed) != tid {
            return;
        }
        // Relaxed: published by the Release below, before anyone can take the claim; fetch_max
        // so that a second give-back with an earlier clock cannot move it back.
        claim.released.fetch_max(clock_ns(), Ordering::Relaxed);
        // Release: the next holder sees the clock above (and writes its events after it).
        let _ = claim.holder.compare_exchange(tid, 0, Ordering::Release, Ordering::Relaxed);
    }
}

/// Whether no thread has the OS thread id `tid` any more (`kill` with signal 0 checks that
/// a thread id exists; a tid reused since counts as existing: its CPU is not taken over).
fn gone(tid: i32) -> bool {
    // SAFETY: signal 0 sends nothing; kill only looks the id up.
    tid > 0
        && unsafe { libc::kill(tid, 0) } != 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// The number of CPUs of the machine (ids `0..n`, online or not), at least one more than the
/// highest the calling thread may use, at most what a CPU set holds.
fn machine_cpus() -> usize {
    // SAFETY: sysconf has no preconditions.
    let conf = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as usize;
    let highest = bound_cpus().and_then(|c| c.last().copied()).map_or(0, |c| c as usize + 1);
    conf.max(highest).min(libc::CPU_SETSIZE as usize)
}

/// The claims of `n` CPUs in the file at `path`, mapped shared (created, zeroed, if it is
/// not there); None if that fails.
fn shared_claims(path: &Path, n: usize) -> Option<&'static [Claim]> {
    let bytes = n * std::mem::size_of::<Claim>();
    let file =
        std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).ok()?;
    if file.metadata().ok()?.len() < bytes as u64 {
        // Another process may do the same at once: both make it this size, zero-filled.
        file.set_len(bytes as u64).ok()?;
    }
    // SAFETY: a shared, read-write mapping of `bytes` bytes of a file at least that long; the
    // mapping outlives the file handle (the kernel keeps the file) and is never unmapped.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    // SAFETY: the mapping is page-aligned, `bytes` long, and holds `n` claims: 16-byte
    // structs of atomics, for which any bit pattern (zero included) is valid; every process
    // touches them only through atomic operations.
    Some(unsafe { std::slice::from_raw_parts(p as *const Claim, n) })
}

/// The CPUs the calling thread may run on (its affinity), increasing; None if the system
/// does not say.
fn bound_cpus() -> Option<Vec<u32>> {
    // SAFETY: cpu_set_t is plain old data (all-zero is the empty set); sched_getaffinity writes
    // at most its size into it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size we pass; 0 is the caller.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return None;
    }
    Some(
        (0..libc::CPU_SETSIZE as u32)
            // SAFETY: i < CPU_SETSIZE, within the set.
            .filter(|&i| unsafe { libc::CPU_ISSET(i as usize, &set) })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Binds the calling thread to CPU `cpu` alone.
    fn bind_to(cpu: usize) {
        // SAFETY: cpu_set_t is plain old data; CPU_SET stays within it (cpu < CPU_SETSIZE);
        // sched_setaffinity reads the set we pass for the calling thread (0).
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            assert_eq!(libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set), 0);
        }
    }

    /// A thread bound to one CPU appears on it when its claim is free, not while a live thread
    /// holds it, and takes it over from a thread that no longer exists (its process ended
    /// without giving it back); given back, the claim is free again, and a second give-back
    /// (an end after a close at exit) changes nothing. A forked child without the shared
    /// claims puts every thread on the virtual CPU.
    #[test]
    fn claims_are_taken_given_back_and_taken_over_from_ended_threads() {
        let dir = std::env::temp_dir().join(format!("oxiomp-cpus-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cpus = Cpus::of_machine(&dir);
        assert!(cpus.shared && dir.join("cpus.oxiomp").is_file());
        let cpu = bound_cpus().unwrap()[0] as usize;
        // SAFETY: gettid has no preconditions.
        let me = unsafe { libc::gettid() };
        let ended = std::thread::spawn(|| {
            // SAFETY: as above.
            unsafe { libc::gettid() }
        })
        .join()
        .unwrap();
        std::thread::spawn(move || {
            bind_to(cpu);
            // SAFETY: as above.
            let tid = unsafe { libc::gettid() };
            let claim = &cpus.claims[cpu];
            claim.holder.store(me, Ordering::Relaxed);
            assert_eq!(cpus.take(tid, -1), -1, "a live thread holds it");
            claim.holder.store(ended, Ordering::Relaxed);
            assert_eq!(cpus.take(tid, -1), cpu as i32, "taken over from an ended thread");
            assert_eq!(claim.holder.load(Ordering::Relaxed), tid);
            cpus.give_back(tid, cpu as i32);
            assert_eq!(claim.holder.load(Ordering::Relaxed), 0);
            let released = claim.released.load(Ordering::Relaxed);
            assert!(released > 0);
            claim.holder.store(me, Ordering::Relaxed);
            cpus.give_back(tid, cpu as i32);
            assert_eq!(claim.holder.load(Ordering::Relaxed), me, "not the thread's to give back");
            assert_eq!(claim.released.load(Ordering::Relaxed), released);
            claim.holder.store(0, Ordering::Relaxed);
            assert_eq!(cpus.for_child().take(tid, -1), cpu as i32, "shared claims: the same");
            let private = Cpus { shared: false, ..cpus };
            assert_eq!(private.for_child().take(tid, -1), -1, "a child without shared claims");
            cpus.give_back(tid, cpu as i32);
        })
        .join()
        .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
