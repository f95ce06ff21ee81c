//! The one `Runtime`: settings read from the environment, the table of thread descriptors (by
//! gtid), and the pool of idle workers. It is `#[repr(C)]` and reachable from one exported root
//! symbol, so a debugger library can walk threads and teams from outside the process.

use std::ffi::c_void;
use std::sync::OnceLock;
use std::time::Duration;

use crate::env::{self, Settings};
use crate::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use crate::sync::fork_lock::{ForkLock, HeldForFork};
use crate::sync::wait::WaitPolicy;
use crate::thread::{Thread, ThreadDesc};

/// The most threads (initial threads and workers) that can use the runtime at once: the size
/// of the table of descriptors, and the largest team. Descriptors are reused (a worker's after
/// its thread ended, an initial thread's after its thread ended: `Runtime::thread_ended`), so
/// this bounds the threads alive at once, not those a process creates in its life. The table
/// takes 512 KiB of address space, of which only the pages holding used entries are ever
/// touched.
pub const MAX_THREADS: usize = 1 << 16;

/// "OXIOMP" + layout version, at offset 0 of the root: how a debugger recognises it.
pub const ROOT_MAGIC: u64 = 0x4f58_494f_4d50_0001;

/// The process's runtime, reachable from the exported root.
///
/// For a debugger: `threads[0..thread_count]` are descriptors (never freed, never moved;
/// a slot, once set, keeps its descriptor and the descriptor its gtid). A descriptor serves at
/// most one OS thread at a time; one whose `os_tid` is 0 serves none (a worker between
/// threads, or an initial thread's descriptor waiting for the next thread that calls the
/// runtime). A descriptor passes to a new thread only after its `os_tid` went to 0, and gets
/// the new thread's id last, after its context was set up for that thread.
#[repr(C)]
pub struct Runtime {
    /// [`ROOT_MAGIC`].
    pub magic: u64,
    /// Number of gtids handed out so far; `threads[0..count]` are set.
    pub thread_count: AtomicU32,
    /// Capacity of `threads`.
    pub thread_capacity: u32,
    /// The table of thread descriptors, indexed by gtid.
    pub threads: *const AtomicPtr<ThreadDesc>,
    table: Box<[AtomicPtr<ThreadDesc>]>,
    settings: Settings,
    /// Idle workers, not reserved by any team (behind a fork-safe lock, as are `retired` and
    /// `ended`).
    pool: ForkLock<Vec<&'static ThreadDesc>>,
    /// Descriptors of workers whose threads ended, for the next workers started.
    retired: ForkLock<Vec<&'static ThreadDesc>>,
    /// Descriptors of initial threads that ended, for the next initial threads.
    ended: ForkLock<Vec<&'static ThreadDesc>>,
    /// Held while a new descriptor is made and recorded.
    registering: ForkLock<()>,
    /// Workers reserved by teams plus live initial threads (for the oversubscription hint).
    busy: AtomicU32,
    /// `kmp_set_library*`: 1 serial, 2 turnaround, 3 throughput (the default).
    library: AtomicU32,
    /// Worker stack size set by `kmp_set_stacksize` (0: the environment's).
    stacksize: AtomicUsize,
}

// SAFETY: the raw pointer fields point into `table`, which is owned by the Runtime and never
// moves or frees; all mutable state is atomic or behind the fork-safe locks.
unsafe impl Sync for Runtime {}
// SAFETY: as above.
unsafe impl Send for Runtime {}

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The root's fields a debugger reads (`crate::debug::layout`).
pub(crate) const DEBUG_FIELDS: [crate::debug::layout::Field; 3] = [
    crate::debug_field!("runtime.thread_count", Runtime, thread_count),
    crate::debug_field!("runtime.thread_capacity", Runtime, thread_capacity),
    crate::debug_field!("runtime.threads", Runtime, threads),
];

/// Whether the runtime prints its warnings (`KMP_WARNINGS`, `kmp_set_warnings_on/off`).
static WARNINGS: AtomicBool = AtomicBool::new(true);

pub fn set_warnings(on: bool) {
    // Relaxed: a setting read when a warning is printed; no data depends on it.
    WARNINGS.store(on, Ordering::Relaxed);
    oxiomp_instrument::set_warnings(on);
}

/// Prints one warning line (unless warnings are off).
pub fn warn(line: &str) {
    // Relaxed: see `set_warnings`.
    if WARNINGS.load(Ordering::Relaxed) {
        crate::stderr_line(format_args!("{line}"));
    }
}

/// The runtime's process-wide lists, in the order the fork handlers take them (no code path
/// holds two of them at once, and none runs the program's code while holding one).
fn fork_locks(rt: &'static Runtime) -> [&'static dyn HeldForFork; 9] {
    [
        &crate::hidden::STARTING,
        &rt.registering,
        &rt.pool,
        &rt.retired,
        &rt.ended,
        &crate::threadprivate::RECORDS,
        &crate::allocator::LIVE,
        &crate::affinity_format::FORMAT,
        &crate::env::DEFAULTS,
    ]
}

/// `pthread_atfork` prepare handler: holds the runtime's lists across the fork, so that the
/// child gets them whole (not half-updated by a thread that does not exist there).
extern "C" fn before_fork() {
    if let Some(rt) = RUNTIME.get() {
        for l in fork_locks(rt) {
            l.hold_for_fork();
        }
    }
}

/// Lets go of what `before_fork` took (in both processes).
///
/// # Safety
/// `before_fork` ran on this thread for this fork.
unsafe fn release_after_fork(rt: &'static Runtime) {
    for l in fork_locks(rt).into_iter().rev() {
        // SAFETY: per the contract, this thread holds it.
        unsafe { l.release_held() };
    }
}

/// `pthread_atfork` parent handler: lets the lists go.
extern "C" fn after_fork_in_parent() {
    if let Some(rt) = RUNTIME.get() {
        // SAFETY: the handlers are registered once the runtime is set, and it never goes
        // away: `before_fork` found it too and took the locks on this thread.
        unsafe { release_after_fork(rt) };
    }
}

/// `pthread_atfork` child handler: lets the lists go, then see
/// [`Runtime::restart_after_fork`].
extern "C" fn after_fork_in_child() {
    if let Some(rt) = RUNTIME.get() {
        // SAFETY: as in `after_fork_in_parent`: this is the thread that forked.
        unsafe { release_after_fork(rt) };
        rt.restart_after_fork();
        crate::threadprivate::forget_copies_after_fork();
    }
}

impl Runtime {
    /// The runtime, initialised on first use (reads the environment once).
    #[inline]
    pub fn get() -> &'static Runtime {
        match RUNTIME.get() {
            Some(r) => r,
            None => Self::init(),
        }
    }

    #[cold]
    fn init() -> &'static Runtime {
        let rt = Self::init_settings();
        // After RUNTIME is set: a fork handler that finds no runtime has taken no lock, and
        // one that finds it took both (the runtime never goes away). And after the trace
        // recorder started (in `init_settings`): its child handler, which gives the child
        // streams of its own, must run before this one, whose re-binding it records.
        static FORK_HANDLERS: std::sync::Once = std::sync::Once::new();
        FORK_HANDLERS.call_once(|| {
            // SAFETY: registers plain function pointers, run around every fork.
            unsafe {
                libc::pthread_atfork(Some(before_fork), Some(after_fork_in_parent), Some(after_fork_in_child))
            };
        });
        rt
    }

    fn init_settings() -> &'static Runtime {
        RUNTIME.get_or_init(|| {
            let settings = env::read(&env::ProcessEnv);
            if !settings.globals.warnings {
                set_warnings(false);
            }
            for w in &settings.warnings {
                warn(w);
            }
            if let Some(dir) = &settings.globals.trace_dir
                && let Err(e) = oxiomp_instrument::ovni::start(dir)
            {
                warn(&format!(
                    "oxiomp: warning: OMP_OVNI=1 but the trace cannot be written ({e}); running untraced"
                ));
            }
            // Recorded from here (the recorder starts with the settings that ask for it).
            oxiomp_instrument::init_enter();
            if settings.globals.settings_report.is_some() {
                crate::stderr_line(format_args!("{}", env::settings_report(&settings).trim_end()));
            }
            if settings.globals.display_env != crate::icv::DisplayEnv::False {
                crate::stderr_line(format_args!("{}", env::display(&settings).trim_end()));
            }
            let bt = settings
                .globals
                .blocktime_ms
                .map_or(Duration::from_secs(u64::MAX / 4), Duration::from_millis);
            WaitPolicy::set_block_time(bt);
            crate::query::set_cancellation_on(settings.globals.cancellation);
            crate::query::set_target_offload(settings.globals.target_offload);
            crate::task::set_throttling(settings.globals.task_throttling);
            crate::affinity_format::set_display(settings.globals.display_affinity);
            crate::places::set_kmp_affinity(
                settings.globals.affinity_verbose,
                settings.globals.affinity_reset,
                &settings.places,
                settings.icvs.bind,
                settings.globals.affinity_migrate_levels,
            );
            let table = zeroed_table::<ThreadDesc>(MAX_THREADS);
            oxiomp_instrument::init_exit();
            Runtime {
                magic: ROOT_MAGIC,
                thread_count: AtomicU32::new(0),
                thread_capacity: MAX_THREADS as u32,
                threads: table.as_ptr(),
                table,
                settings,
                pool: ForkLock::new(Vec::new()),
                retired: ForkLock::new(Vec::new()),
                ended: ForkLock::new(Vec::new()),
                registering: ForkLock::new(()),
                busy: AtomicU32::new(0),
                library: AtomicU32::new(3),
                stacksize: AtomicUsize::new(0),
            }
        })
    }

    /// Whether the runtime has read its settings (without starting it).
    pub fn started() -> bool {
        RUNTIME.get().is_some()
    }

    /// The stack size of workers started from now on.
    pub fn worker_stacksize(&self) -> usize {
        // Relaxed: a setting; threads started after the store see it through the spawn.
        match self.stacksize.load(Ordering::Relaxed) {
            0 => self.settings.globals.stacksize,
            n => n,
        }
    }

    /// `kmp_set_stacksize(_s)`: the stack size of workers started from now on (at least
    /// 64 KiB: less cannot hold a worker).
    pub fn set_worker_stacksize(&self, bytes: usize) {
        // Relaxed: see `worker_stacksize`.
        self.stacksize.store(bytes.max(64 << 10), Ordering::Relaxed);
    }

    /// `kmp_get_library`.
    pub fn library(&self) -> u32 {
        // Relaxed: a setting.
        self.library.load(Ordering::Relaxed)
    }

    /// `kmp_set_library(mode)` for the calling thread, outside parallel regions: serial (1)
    /// makes its regions one thread (nthreads-var 1), turnaround (2) and throughput (3) give
    /// them the default size back; turnaround waits without ever sleeping (infinite block
    /// time), throughput turns an infinite block time back into the settings' (another one,
    /// from `kmp_set_blocktime`, stays). Threads still yield while they wait.
    pub fn set_library(&self, th: Thread, mode: u32) -> Result<(), crate::error::Misuse> {
        if !(1..=3).contains(&mode) {
            return Err(crate::error::Misuse::LibraryMode);
        }
        if th.team().level != 0 {
            return Err(crate::error::Misuse::LibraryInRegion);
        }
        // Relaxed: a setting.
        self.library.store(mode, Ordering::Relaxed);
        let n = if mode == 1 { 1 } else { self.settings.icvs.nthreads };
        th.change_icvs(|i| i.nthreads = n);
        let infinite = Duration::from_secs(u64::MAX / 4);
        if mode == 2 {
            WaitPolicy::set_block_time(infinite);
        } else if mode == 3 && WaitPolicy::block_time() >= infinite {
            let ms = self.settings.globals.blocktime_ms.unwrap_or(200);
            WaitPolicy::set_block_time(Duration::from_millis(ms));
        }
        Ok(())
    }

    /// The root a debugger starts from.
    pub fn root_ptr() -> *const c_void {
        Self::get() as *const Runtime as *const c_void
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The place list of the settings (`OMP_PLACES`, or one the binding implies).
    #[inline]
    pub fn places() -> &'static crate::places::PlaceList {
        &Runtime::get().settings().places
    }

    /// The number of CPUs the process may use.
    pub fn num_procs(&self) -> u32 {
        self.settings.mask.len().max(1) as u32
    }

    /// How many descriptors exist (gtids handed out): initial threads and workers, alive or
    /// waiting for their next thread.
    pub fn registered_threads(&self) -> u32 {
        // Acquire: pairs with `register_new`, so that the slots below are set.
        self.thread_count.load(Ordering::Acquire)
    }

    /// A new descriptor, made by `make` for the next gtid and recorded under it, unless
    /// `limit` descriptors exist already (at most the table's capacity). One at a time, so
    /// that the slot is set before the count covers it: `threads[0..thread_count]` are always
    /// set.
    pub(crate) fn register_new(
        &self,
        limit: u32,
        make: impl FnOnce(i32) -> &'static ThreadDesc,
    ) -> Option<&'static ThreadDesc> {
        let _one_at_a_time = self.registering.lock();
        // Relaxed: the count changes only under the lock.
        let gtid = self.thread_count.load(Ordering::Relaxed);
        if gtid >= limit.min(self.thread_capacity) {
            return None;
        }
        let desc = make(gtid as i32);
        // Release, all: whoever reads the count (Acquire in `registered_threads`, or a
        // debugger's read of a stopped process) finds the slots set, and the descriptors whole.
        self.table[gtid as usize].store(desc as *const ThreadDesc as *mut ThreadDesc, Ordering::Release);
        let mut count = gtid + 1;
        if gtid == 0 {
            // The hidden helpers' gtids come right after the first thread's (see `hidden`).
            let reserved = self.settings.hidden.reserved_gtids().min(self.thread_capacity - 1);
            for g in 1..=reserved {
                let d = ThreadDesc::leak_hidden_helper(g as i32, self.settings.icvs);
                self.table[g as usize].store(d as *const ThreadDesc as *mut ThreadDesc, Ordering::Release);
            }
            count += reserved;
        }
        self.thread_count.store(count, Ordering::Release);
        Some(desc)
    }

    /// The most threads that use the runtime at once (`KMP_DEVICE_THREAD_LIMIT`, at most
    /// [`MAX_THREADS`], the default): no worker is started beyond it, and no team is larger.
    /// Initial threads are not refused below the table's capacity.
    pub fn thread_limit(&self) -> u32 {
        self.settings.globals.device_thread_limit
    }

    /// A descriptor of an initial thread that ended, for a new initial thread (it keeps its
    /// gtid).
    pub(crate) fn take_ended(&self) -> Option<&'static ThreadDesc> {
        self.ended.lock().pop()
    }

    /// An initial thread's descriptor serves no thread any more (its thread ended): the next
    /// initial thread gets it. Called on the ending thread, which does not touch the
    /// descriptor after this.
    pub(crate) fn thread_ended(&self, desc: &'static ThreadDesc) {
        self.ended.lock().push(desc);
    }

    /// The descriptor of `gtid`, if registered.
    pub fn thread(&self, gtid: i32) -> Option<&'static ThreadDesc> {
        let slot = self.table.get(usize::try_from(gtid).ok()?)?;
        // SAFETY: descriptors are leaked at registration and never freed, so a non-null
        // pointer read with Acquire (pairing with the Release in `register`) is a valid
        // `&'static ThreadDesc`.
        unsafe { slot.load(Ordering::Acquire).as_ref() }
    }

    /// Appends up to `k` idle workers to `out`, taking them from the pool and starting new
    /// threads for what it lacks. Fewer when no more threads can be started (the table is
    /// full, or the system refuses a thread): the reason is returned with them.
    pub(crate) fn acquire_workers(
        &'static self,
        k: usize,
        out: &mut Vec<crate::team::Member>,
    ) -> Result<(), crate::lifecycle::SpawnError> {
        let start = out.len();
        let target = start + k;
        {
            let mut pool = self.pool.lock();
            while out.len() < target {
                match pool.pop() {
                    Some(w) => out.push(crate::team::Member::of(w)),
                    None => break,
                }
            }
        }
        let mut result = Ok(());
        while out.len() < target {
            match crate::lifecycle::spawn_worker(self) {
                Ok(w) => out.push(crate::team::Member::of(w)),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.adjust_busy((out.len() - start) as i64);
        result
    }

    /// Returns workers to the pool.
    pub(crate) fn release_workers(&self, ws: impl IntoIterator<Item = &'static ThreadDesc>) {
        let mut pool = self.pool.lock();
        let before = pool.len();
        pool.extend(ws);
        let n = pool.len() - before;
        drop(pool);
        self.adjust_busy(-(n as i64));
    }

    /// A descriptor of a worker whose thread ended, if any.
    pub(crate) fn take_retired(&self) -> Option<&'static ThreadDesc> {
        self.retired.lock().pop()
    }

    /// A worker's descriptor serves no thread (its thread ended, or could not start): the
    /// next worker started gets it.
    pub(crate) fn retire(&self, desc: &'static ThreadDesc) {
        self.retired.lock().push(desc);
    }

    /// `omp_pause_resource`: ends the threads of the idle workers (the pool's, and those the
    /// calling thread keeps for its next regions); the next regions start threads again.
    /// Workers other initial threads keep are theirs. Called outside parallel regions.
    pub fn pause(&'static self, th: Thread) -> Result<(), crate::error::Misuse> {
        if !th.outside_regions() {
            return Err(crate::error::Misuse::PauseInRegion);
        }
        crate::lifecycle::release_hot_teams(th, self);
        self.retire_idle();
        Ok(())
    }

    /// Ends the threads of the pool's idle workers (those no thread keeps for its next
    /// regions: the workers of a program thread that ended, for one).
    pub fn retire_idle(&'static self) {
        // A retiring worker gives back the workers of its own nested teams: look again.
        loop {
            let idle = std::mem::take(&mut *self.pool.lock());
            if idle.is_empty() {
                return;
            }
            for w in idle {
                crate::lifecycle::retire_worker(w);
                self.retire(w);
            }
        }
    }

    /// In the child of a `fork`: only the forking thread exists. Every other descriptor
    /// serves no thread now: a worker's waits for the child's next workers (the next region
    /// starts them), an initial thread's for the child's next initial threads (but the first
    /// thread's, gtid 0, whose threadprivate copies are the variables themselves). Their teams
    /// are forgotten, not freed: a vanished thread may have left them half-written. The
    /// forking thread restarts as the child's initial thread
    /// (`lifecycle::restart_in_fork_child`).
    fn restart_after_fork(&self) {
        let me = Thread::peek();
        // (Allocating here is fine with glibc and musl: their malloc is fork-safe.)
        let (mut workers, mut initials) = (Vec::new(), Vec::new());
        for g in 0..self.registered_threads() as i32 {
            let Some(d) = self.thread(g) else { continue };
            if me.is_some_and(|m| std::ptr::eq(m.desc(), d)) {
                continue;
            }
            d.forget_state_after_fork(self.settings.icvs);
            d.clear_os_thread();
            if crate::hidden::is_reserved(self, g) {
                // Kept for the child's own helpers.
            } else if !d.is_initial() {
                workers.push(d);
            } else if d.gtid != 0 {
                // The next initial thread given it makes threadprivate copies of its own.
                crate::threadprivate::forget_thread_after_fork(d.gtid);
                initials.push(d);
            }
        }
        crate::hidden::forget_after_fork();
        self.pool.lock().clear();
        *self.retired.lock() = workers;
        *self.ended.lock() = initials;
        if let Some(th) = me {
            crate::lifecycle::restart_in_fork_child(th, self);
        }
        // Relaxed: the only thread; the count feeds the oversubscription hint.
        self.busy.store(u32::from(me.is_some()), Ordering::Relaxed);
        WaitPolicy::set_oversubscribed(false);
    }

    pub(crate) fn adjust_busy(&self, delta: i64) {
        // Relaxed: the count only feeds the oversubscription hint.
        let now = if delta >= 0 {
            self.busy.fetch_add(delta as u32, Ordering::Relaxed) + delta as u32
        } else {
            self.busy.fetch_sub((-delta) as u32, Ordering::Relaxed) - (-delta) as u32
        };
        WaitPolicy::set_oversubscribed(now > self.num_procs());
    }
}

/// A table of `n` null pointers whose memory is not written: the allocator's zeroed pages
/// (an `mmap` for a table this large) are touched only where entries are set.
pub(crate) fn zeroed_table<T>(n: usize) -> Box<[AtomicPtr<T>]> {
    let b = Box::<[AtomicPtr<T>]>::new_zeroed_slice(n);
    // SAFETY: an all-zero `AtomicPtr` is a valid null pointer.
    unsafe { b.assume_init() }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Initial threads come and go, four at a time, while another thread reads the table as a
    /// debugger would: every slot below the count holds a descriptor under its own gtid, and
    /// one serving a thread names that thread (its `os_tid` is its OS id, or 0 between
    /// threads). Ended threads' gtids are handed to the next ones: 400 threads take no more
    /// than a few gtids beyond those alive at once.
    #[test]
    fn ended_initial_threads_give_their_gtids_to_new_ones() {
        let rt = Runtime::get();
        let _ = Thread::current();
        let before = rt.registered_threads();
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    for g in 0..rt.registered_threads() as i32 {
                        let d = rt.thread(g).expect("a slot below the count is set");
                        assert_eq!(d.gtid, g, "descriptor under another gtid");
                    }
                }
            });
            for _ in 0..100 {
                let all_in = std::sync::Arc::new(std::sync::Barrier::new(4));
                let hs: Vec<_> = (0..4)
                    .map(|_| {
                        let all_in = all_in.clone();
                        std::thread::spawn(move || {
                            let th = Thread::current();
                            // The four are alive at once from here.
                            all_in.wait();
                            // SAFETY: gettid has no preconditions.
                            let me = unsafe { libc::gettid() };
                            assert_eq!(th.desc().os_tid.load(Ordering::Relaxed), me);
                            assert_eq!(th.tid(), 0);
                            assert_eq!(th.team().level, 0);
                            th.gtid()
                        })
                    })
                    .collect();
                let gtids: Vec<i32> = hs.into_iter().map(|h| h.join().unwrap()).collect();
                let mut distinct = gtids.clone();
                distinct.sort_unstable();
                distinct.dedup();
                assert_eq!(distinct.len(), gtids.len(), "two live threads share a gtid: {gtids:?}");
            }
            stop.store(true, Ordering::Relaxed);
        });
        // Other tests of this process start threads meanwhile: allow for them.
        let grew = rt.registered_threads() - before;
        assert!(grew < 100, "400 short-lived threads took {grew} new gtids");
    }
}
