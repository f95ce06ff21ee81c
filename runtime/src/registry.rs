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

/// The most threads (initial threads and workers) one process may register.
pub const MAX_THREADS: usize = 1 << 14;

/// "OXIOMP" + layout version, at offset 0 of the root: how a debugger recognises it.
pub const ROOT_MAGIC: u64 = 0x4f58_494f_4d50_0001;

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
    /// Idle workers, not reserved by any team (behind a fork-safe lock, as is `retired`).
    pool: ForkLock<Vec<&'static ThreadDesc>>,
    /// Descriptors of workers whose threads ended, for the next workers started.
    retired: ForkLock<Vec<&'static ThreadDesc>>,
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

/// Whether the runtime prints its warnings (`KMP_WARNINGS`, `kmp_set_warnings_on/off`).
static WARNINGS: AtomicBool = AtomicBool::new(true);

pub fn set_warnings(on: bool) {
    // Relaxed: a setting read when a warning is printed; no data depends on it.
    WARNINGS.store(on, Ordering::Relaxed);
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
fn fork_locks(rt: &'static Runtime) -> [&'static dyn HeldForFork; 6] {
    [
        &rt.pool,
        &rt.retired,
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
/// [`Runtime::forget_workers_after_fork`].
extern "C" fn after_fork_in_child() {
    if let Some(rt) = RUNTIME.get() {
        // SAFETY: as in `after_fork_in_parent`: this is the thread that forked.
        unsafe { release_after_fork(rt) };
        rt.forget_workers_after_fork();
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
        // one that finds it took both (the runtime never goes away).
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
            if settings.globals.display_env != crate::icv::DisplayEnv::False {
                crate::stderr_line(format_args!("{}", env::display(&settings).trim_end()));
            }
            let bt = settings
                .globals
                .blocktime_ms
                .map_or(Duration::from_secs(u64::MAX / 4), Duration::from_millis);
            WaitPolicy::set_block_time(bt);
            crate::query::set_cancellation_on(settings.globals.cancellation);
            crate::affinity_format::set_display(settings.globals.display_affinity);
            let table: Box<[AtomicPtr<ThreadDesc>]> =
                (0..MAX_THREADS).map(|_| AtomicPtr::new(std::ptr::null_mut())).collect();
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
    pub fn set_library(&self, th: Thread, mode: u32) -> Result<(), &'static str> {
        if !(1..=3).contains(&mode) {
            return Err("the mode must be 1 (serial), 2 (turnaround) or 3 (throughput); ignored");
        }
        if th.team().level != 0 {
            return Err("called inside a parallel region; ignored");
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

    /// The number of CPUs the process may use.
    pub fn num_procs(&self) -> u32 {
        self.settings.mask.len().max(1) as u32
    }

    /// How many threads have registered (initial threads and workers).
    pub fn registered_threads(&self) -> u32 {
        self.thread_count.load(Ordering::Relaxed)
    }

    /// Hands out the next gtid and records the descriptor under it.
    pub(crate) fn register(&self, desc: &'static ThreadDesc) -> i32 {
        // Relaxed: the counter only has to hand out distinct numbers; the table slot is
        // published with Release below and read with Acquire.
        let gtid = self.thread_count.fetch_add(1, Ordering::Relaxed);
        if gtid as usize >= MAX_THREADS {
            crate::stderr_line(format_args!(
                "oxiomp: error: more than {MAX_THREADS} threads created; cannot continue"
            ));
            std::process::abort();
        }
        self.table[gtid as usize].store(desc as *const ThreadDesc as *mut ThreadDesc, Ordering::Release);
        gtid as i32
    }

    /// The descriptor of `gtid`, if registered.
    pub fn thread(&self, gtid: i32) -> Option<&'static ThreadDesc> {
        let slot = self.table.get(usize::try_from(gtid).ok()?)?;
        // SAFETY: descriptors are leaked at registration and never freed, so a non-null
        // pointer read with Acquire (pairing with the Release in `register`) is a valid
        // `&'static ThreadDesc`.
        unsafe { slot.load(Ordering::Acquire).as_ref() }
    }

    /// Appends `k` idle workers to `out`, taking them from the pool and starting new threads
    /// for what it lacks.
    pub(crate) fn acquire_workers(&'static self, k: usize, out: &mut Vec<&'static ThreadDesc>) {
        let target = out.len() + k;
        {
            let mut pool = self.pool.lock();
            while out.len() < target {
                match pool.pop() {
                    Some(w) => out.push(w),
                    None => break,
                }
            }
        }
        while out.len() < target {
            out.push(crate::thread::spawn_worker(self));
        }
        self.adjust_busy(k as i64);
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

    /// `omp_pause_resource`: ends the threads of the idle workers (the pool's, and those the
    /// calling thread keeps for its next regions); the next regions start threads again.
    /// Workers other initial threads keep are theirs. Called outside parallel regions.
    pub fn pause(&'static self, th: Thread) -> Result<(), &'static str> {
        if !th.outside_regions() {
            return Err("called inside a parallel or teams region; nothing paused");
        }
        th.desc().release_hot_teams(self);
        // A retiring worker gives back the workers of its own nested teams: look again.
        loop {
            let idle = std::mem::take(&mut *self.pool.lock());
            if idle.is_empty() {
                return Ok(());
            }
            for w in idle {
                crate::thread::retire_worker(w);
                self.retired.lock().push(w);
            }
        }
    }

    /// In the child of a `fork`: only the forking thread exists, so the threads of the pool's
    /// workers and of those the forking thread's hot teams hold are gone. Their descriptors
    /// (idle: a fork outside parallel regions finds every worker between regions) serve the
    /// child's next workers, which the next region starts. A fork inside a parallel region
    /// leaves the child inside a team whose other members do not exist; as with libomp, only
    /// a fork outside parallel regions gives a child that can use OpenMP.
    fn forget_workers_after_fork(&self) {
        let mut gone = std::mem::take(&mut *self.pool.lock());
        let me = Thread::peek();
        if let Some(th) = me
            && th.team().level == 0
        {
            th.desc().forget_after_fork(&mut gone);
        }
        // The vanished workers' own teams for nested regions held workers too.
        let mut i = 0;
        while i < gone.len() {
            let w = gone[i];
            w.forget_after_fork(&mut gone);
            i += 1;
        }
        // (Allocating here is fine with glibc and musl: their malloc is fork-safe.)
        self.retired.lock().extend(gone);
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
