//! Internal control variables (OpenMP 5.2 §2): the per-task data-environment ICVs that travel
//! with every implicit task, and the device-wide ones set once from the environment.

use std::cell::Cell;

/// A loop schedule kind (`omp_sched_t` values, and libomp's two extensions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum ScheduleKind {
    Static = 1,
    Dynamic = 2,
    Guided = 3,
    Auto = 4,
    /// Chunks that shrink linearly from about n/(2p) iterations to the chunk size.
    Trapezoidal = 101,
    /// Per-thread blocks of chunks, stolen from when a thread runs out.
    StaticSteal = 102,
}

impl ScheduleKind {
    pub fn from_omp(v: i32) -> Option<Self> {
        Some(match v {
            1 => ScheduleKind::Static,
            2 => ScheduleKind::Dynamic,
            3 => ScheduleKind::Guided,
            4 => ScheduleKind::Auto,
            101 => ScheduleKind::Trapezoidal,
            102 => ScheduleKind::StaticSteal,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            ScheduleKind::Static => "static",
            ScheduleKind::Dynamic => "dynamic",
            ScheduleKind::Guided => "guided",
            ScheduleKind::Auto => "auto",
            ScheduleKind::Trapezoidal => "trapezoidal",
            ScheduleKind::StaticSteal => "static_steal",
        }
    }
}

/// `omp_sched_monotonic` as OR-ed into `omp_sched_t`.
pub const SCHED_MONOTONIC: i32 = i32::MIN; // 0x80000000

/// The run-sched-var ICV.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub kind: ScheduleKind,
    /// 0 means "the default chunk".
    pub chunk: i32,
    pub monotonic: bool,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule { kind: ScheduleKind::Static, chunk: 0, monotonic: false }
    }
}

/// The bind-var ICV (`omp_proc_bind_t` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum ProcBind {
    False = 0,
    True = 1,
    Primary = 2,
    Close = 3,
    Spread = 4,
}

impl ProcBind {
    pub fn name(self) -> &'static str {
        match self {
            ProcBind::False => "false",
            ProcBind::True => "true",
            ProcBind::Primary => "primary",
            ProcBind::Close => "close",
            ProcBind::Spread => "spread",
        }
    }

    /// The policy a team is actually bound with: `true` means spread.
    pub fn policy(self) -> ProcBind {
        if self == ProcBind::True { ProcBind::Spread } else { self }
    }

    /// The values `__kmpc_push_proc_bind` receives (clang passes primary as 5, libomp's enum
    /// calls 2 "master"); anything else means "no clause".
    pub fn from_clause(v: i32) -> Option<Self> {
        Some(match v {
            0 => ProcBind::False,
            1 => ProcBind::True,
            2 | 5 => ProcBind::Primary,
            3 => ProcBind::Close,
            4 => ProcBind::Spread,
            _ => return None,
        })
    }
}

/// The ICVs of one implicit or explicit task's data environment. Small and `Copy`: a fork copies
/// them into every implicit task of the new team.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Icvs {
    /// nthreads-var: the first element of the list.
    pub nthreads: u32,
    /// nthreads-var: the rest of the list, for deeper levels.
    pub nthreads_rest: &'static [u32],
    /// dyn-var.
    pub dynamic: bool,
    /// max-active-levels-var.
    pub max_active_levels: u32,
    /// run-sched-var.
    pub run_sched: Schedule,
    /// bind-var: the first element of the list.
    pub bind: ProcBind,
    /// bind-var: the rest of the list.
    pub bind_rest: &'static [ProcBind],
    /// default-device-var.
    pub default_device: i32,
    /// thread-limit-var.
    pub thread_limit: u32,
    /// place-partition-var: the first place and the number of places.
    pub partition_start: u32,
    pub partition_len: u32,
    /// def-allocator-var (an `omp_allocator_handle_t`).
    pub def_allocator: usize,
}

/// The ICVs a debugger reads (`crate::debug::layout`), in the ICV struct a thread and a team
/// hold.
pub(crate) const DEBUG_FIELDS: [crate::debug::layout::Field; 11] = [
    crate::debug_field!("icvs.nthreads", Icvs, nthreads),
    crate::debug_field!("icvs.dynamic", Icvs, dynamic),
    crate::debug_field!("icvs.max_active_levels", Icvs, max_active_levels),
    crate::debug_field!("icvs.sched_kind", Icvs, run_sched.kind),
    crate::debug_field!("icvs.sched_chunk", Icvs, run_sched.chunk),
    crate::debug_field!("icvs.sched_monotonic", Icvs, run_sched.monotonic),
    crate::debug_field!("icvs.bind", Icvs, bind),
    crate::debug_field!("icvs.default_device", Icvs, default_device),
    crate::debug_field!("icvs.thread_limit", Icvs, thread_limit),
    crate::debug_field!("icvs.partition_start", Icvs, partition_start),
    crate::debug_field!("icvs.partition_len", Icvs, partition_len),
];

impl Icvs {
    /// The ICVs the implicit tasks of a new team start with (OpenMP 5.2 §2.4: the lists lose
    /// their first element when they have more than one).
    pub fn for_child(&self) -> Icvs {
        let mut c = *self;
        if let Some((first, rest)) = self.nthreads_rest.split_first() {
            c.nthreads = *first;
            c.nthreads_rest = rest;
        }
        if let Some((first, rest)) = self.bind_rest.split_first() {
            c.bind = *first;
            c.bind_rest = rest;
        }
        c
    }
}

/// What the run-time checks do (`OXIOMP_CHECK`): nothing, report a mistake and abort (`1`),
/// or report it and go on where going on is possible (`warn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CheckMode {
    #[default]
    Off,
    Abort,
    Warn,
}

/// Device-wide settings read once from the environment.
#[derive(Clone, Debug)]
pub struct Globals {
    /// stacksize-var, bytes.
    pub stacksize: usize,
    /// wait-policy-var: true = active.
    pub wait_active: bool,
    /// KMP_BLOCKTIME in milliseconds (`None` = infinite).
    pub blocktime_ms: Option<u64>,
    /// cancel-var.
    pub cancellation: bool,
    /// max-task-priority-var.
    pub max_task_priority: i32,
    /// nteams-var (0 = unset).
    pub nteams: i32,
    /// teams-thread-limit-var (0 = unset).
    pub teams_thread_limit: i32,
    /// The OMP_DISPLAY_ENV setting.
    pub display_env: DisplayEnv,
    /// KMP_WARNINGS: whether the runtime prints its warnings.
    pub warnings: bool,
    /// OMP_DISPLAY_AFFINITY.
    pub display_affinity: bool,
    /// debug-var (`OMP_DEBUG=enabled`): the runtime keeps what a debugger reads (OMPD).
    pub debug: bool,
    /// affinity-format-var as the environment set it (OMP_AFFINITY_FORMAT).
    pub affinity_format: String,
    /// The OMP_PLACES text as given (for display), if any.
    pub places_text: Option<String>,
    /// Where to write an ovni trace (`OMP_OVNI=1`, `OVNI_TRACEDIR`, default `./ovni`).
    pub trace_dir: Option<std::path::PathBuf>,
    /// The most threads that use the runtime at once, and so the largest team
    /// (`KMP_DEVICE_THREAD_LIMIT`, at most `registry::MAX_THREADS`, the default).
    pub device_thread_limit: u32,
    /// target-offload-var (`OMP_TARGET_OFFLOAD`): 0 disabled, 1 default, 2 mandatory.
    pub target_offload: i32,
    /// `KMP_ENABLE_TASK_THROTTLING`: whether a task creator runs new tasks at once once its
    /// queue holds enough (the cut-off; on by default).
    pub task_throttling: bool,
    /// `KMP_AFFINITY=verbose`: the places and each binding are printed.
    pub affinity_verbose: bool,
    /// `KMP_AFFINITY=reset`: a primary thread leaving an outermost region is unbound.
    pub affinity_reset: bool,
    /// Machine levels a thread bound by `KMP_AFFINITY` may move across (0: it does not
    /// bind, or binds to single CPUs), for its `verbose` report.
    pub affinity_migrate_levels: u32,
    /// The abstract name the places come from (`cores`, ...), if they do.
    pub places_name: Option<String>,
    /// `KMP_SETTINGS`: the variables given (name, value as given), to report at start-up.
    pub settings_report: Option<Vec<(String, String)>>,
    /// `KMP_TEAMS_PROC_BIND`: how a league's teams are placed in the encountering thread's
    /// partition (spread by default, as in libomp).
    pub teams_bind: ProcBind,
    /// `OXIOMP_CHECK`: the run-time correctness checks.
    pub check: CheckMode,
    /// `OXIOMP_HANG_SECONDS`: when the threads of a hung program are reported (None: on
    /// `SIGQUIT` only, without the states, which are not kept).
    pub hang: Option<HangWatch>,
}

/// When a hang is reported (`OXIOMP_HANG_SECONDS`); either way each thread's states are kept
/// for the report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HangWatch {
    /// When a wait has lasted this long (and on `SIGQUIT`).
    After(std::time::Duration),
    /// On `SIGQUIT` only (`OXIOMP_HANG_SECONDS=0`).
    SignalOnly,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DisplayEnv {
    False,
    True,
    Verbose,
}

/// A slot for ICVs a task body may have to save (see `task::state::ThreadState::icv_save`). Not an
/// `Option<Icvs>`: creating an empty one must cost one store, not a copy of the whole struct.
pub(crate) struct IcvSave {
    full: Cell<bool>,
    icvs: Cell<std::mem::MaybeUninit<Icvs>>,
}

impl IcvSave {
    #[inline]
    pub(crate) fn new() -> Self {
        IcvSave { full: Cell::new(false), icvs: Cell::new(std::mem::MaybeUninit::uninit()) }
    }

    /// Makes the slot at `p` an empty one without writing the (uninitialised) ICV bytes.
    ///
    /// # Safety
    /// `p` is valid for writes and holds no live slot.
    #[inline]
    pub(crate) unsafe fn init_empty(p: *mut IcvSave) {
        // SAFETY: per the contract; `icvs` may stay uninitialised (it is a MaybeUninit), and
        // `full` false says so.
        unsafe { std::ptr::addr_of_mut!((*p).full).write(Cell::new(false)) };
    }

    pub(crate) fn put(&self, icvs: Icvs) {
        self.icvs.set(std::mem::MaybeUninit::new(icvs));
        self.full.set(true);
    }

    /// Whether ICVs were saved.
    #[inline]
    pub(crate) fn is_full(&self) -> bool {
        self.full.get()
    }

    /// A copy of the saved ICVs, if any, leaving them saved.
    #[inline]
    pub(crate) fn get(&self) -> Option<Icvs> {
        // SAFETY: `full` is set only after `icvs` was written.
        self.full.get().then(|| unsafe { self.icvs.get().assume_init() })
    }

    /// The saved ICVs, if any were saved.
    #[inline]
    pub(crate) fn take(&self) -> Option<Icvs> {
        // SAFETY: `full` is set only after `icvs` was written.
        self.full.replace(false).then(|| unsafe { self.icvs.get().assume_init() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_icvs_pop_lists() {
        static REST: [u32; 2] = [3, 2];
        static BREST: [ProcBind; 1] = [ProcBind::Close];
        let i = Icvs {
            nthreads: 4,
            nthreads_rest: &REST,
            dynamic: false,
            max_active_levels: 3,
            run_sched: Schedule::default(),
            bind: ProcBind::Spread,
            bind_rest: &BREST,
            default_device: 0,
            thread_limit: u32::MAX,
            partition_start: 0,
            partition_len: 1,
            def_allocator: 1,
        };
        let c = i.for_child();
        assert_eq!((c.nthreads, c.nthreads_rest), (3, &[2u32][..]));
        assert_eq!(c.bind, ProcBind::Close);
        let g = c.for_child();
        assert_eq!((g.nthreads, g.nthreads_rest.len()), (2, 0));
        assert_eq!(g.bind, ProcBind::Close);
        let h = g.for_child();
        assert_eq!(h.nthreads, 2, "an exhausted list keeps its last value");
        assert_eq!(ProcBind::from_clause(5), Some(ProcBind::Primary));
        assert_eq!(ProcBind::from_clause(9), None);
    }
}
