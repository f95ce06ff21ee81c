//! Hidden helper threads: the threads that run `target nowait` tasks apart from the program's
//! teams, as libomp's do. Clang turns `#pragma omp target nowait` (and a `target` with
//! `depend`) into a task allocated with `__kmpc_omp_target_task_alloc`; such a task is a
//! *hidden task*: the helpers run it, so it makes progress while the team that created it is
//! busy, and a team of one thread gets it off its own thread.
//!
//! **Numbering.** gtids are libomp's: when gtid 0 registers, gtids `1..=threads + 1` are
//! reserved (`Config::reserved_gtids`); gtid 1 stands for the helpers' primary thread, which
//! in libomp only waits and runs no task (here it is a descriptor without a thread), and gtids
//! `2..=threads + 1` run the hidden tasks. The program's own workers are numbered after them.
//!
//! **Life.** The helper threads start with the first hidden task and form one team that never
//! ends ([`crate::team::Team::new_hidden`]). A hidden task goes to that team's task pool; a
//! helper takes it, runs it, and parks on the pool when there is nothing to run
//! (`task::serve_hidden`). The task is otherwise an ordinary child of its creator's task:
//! its creator's `taskwait`, taskgroups, barriers and dependences count it, and a helper
//! completing it wakes the creator's team (`task::uncount`, holding that team as an outside
//! thread while it does). In a fork's child the helpers are gone; the child's first hidden
//! task starts new ones on the same descriptors.
//!
//! **Settings.** `LIBOMP_USE_HIDDEN_HELPER_TASK` (on by default), `LIBOMP_NUM_HIDDEN_HELPER_THREADS`
//! (the threads that run hidden tasks: 0 to 16, [`DEFAULT_THREADS`] by default; 0 turns the
//! helpers off), `KMP_HIDDEN_HELPER_AFFINITY` (`KMP_AFFINITY`'s syntax, reported under its
//! own name with `verbose`; unbound by default). With the helpers off, a target task is an
//! ordinary task of its creator's team.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering};

use crate::kmp_affinity::KmpAffinity;
use crate::registry::Runtime;
use crate::sync::fork_lock::ForkLock;
use crate::team::Team;

/// The hidden helper threads that run tasks without `LIBOMP_NUM_HIDDEN_HELPER_THREADS` (with
/// the reserved primary's gtid, libomp's eight).
pub const DEFAULT_THREADS: u32 = 7;

/// What the environment says of the hidden helper threads.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Threads that run hidden tasks (0: no helpers).
    pub threads: u32,
    /// `KMP_HIDDEN_HELPER_AFFINITY`.
    pub affinity: KmpAffinity,
}

impl Config {
    /// How many gtids after 0 the helpers take (none without helpers).
    pub fn reserved_gtids(&self) -> u32 {
        if self.threads == 0 { 0 } else { self.threads + 1 }
    }
}

/// The helpers' team, once started (null before, and again in a fork's child). A std atomic:
/// not part of any model.
static TEAM: AtomicPtr<Team> = AtomicPtr::new(std::ptr::null_mut());

/// Set when no helper thread could start: target tasks are then ordinary tasks, without
/// trying again for each. A std atomic: not part of any model.
static REFUSED: AtomicBool = AtomicBool::new(false);

/// Helper threads that have set themselves up (bound, and reported it): `start` returns once
/// all have, as libomp's does, so that their reports come before the program goes on. A std
/// atomic: not part of any model.
static READY: AtomicU32 = AtomicU32::new(0);

/// Held while the helpers start (fork-safe: a child must not find it held by a thread it does
/// not have).
pub(crate) static STARTING: ForkLock<()> = ForkLock::new(());

/// The helpers' team, started on first use; None without helpers (a target task is then an
/// ordinary task).
#[inline]
pub fn team() -> Option<&'static Team> {
    // Acquire: pairs with the Release in `start`, so the team is seen whole.
    let p = TEAM.load(Ordering::Acquire);
    // SAFETY: a non-null pointer is a leaked team, never freed.
    match unsafe { p.as_ref() } {
        Some(t) => Some(t),
        None => start(),
    }
}

/// Starts the helper threads on their reserved descriptors, each bound as
/// `KMP_HIDDEN_HELPER_AFFINITY` asks. A helper whose thread the system refuses is left out
/// (with a warning); with none started there are no helpers.
#[cold]
fn start() -> Option<&'static Team> {
    let rt = Runtime::get();
    let cfg = &rt.settings().hidden;
    // Relaxed: a flag guarding nothing but another attempt.
    if cfg.threads == 0 || REFUSED.load(Ordering::Relaxed) {
        return None;
    }
    let _one_at_a_time = STARTING.lock();
    // Acquire: as in `team` (another thread may have started them meanwhile).
    let p = TEAM.load(Ordering::Acquire);
    // SAFETY: as in `team`.
    if let Some(t) = unsafe { p.as_ref() } {
        return Some(t);
    }
    // (A helper that forked is the initial thread of its child: its descriptor is taken.)
    let members: Vec<_> =
        (2..=cfg.reserved_gtids()).filter_map(|g| rt.thread(g as i32)).filter(|d| !d.is_initial()).collect();
    if members.is_empty() {
        return None;
    }
    let n = members.len() as u32;
    let team = Team::new_hidden(members.clone());
    let binding = cfg.affinity.binding.as_ref();
    if cfg.affinity.verbose && binding.is_some() {
        crate::places::report_migration("KMP_HIDDEN_HELPER_AFFINITY", cfg.affinity.migrate_levels);
    }
    // Relaxed: no helper runs yet.
    READY.store(0, Ordering::Relaxed);
    let mut started = 0;
    for (tid, desc) in members.into_iter().enumerate() {
        let cpus = binding.map(|(list, bind)| {
            let nplaces = list.places.len() as u32;
            let at = crate::places::place_thread(*bind, 0, nplaces, 0, n, tid as u32);
            list.places[at.place as usize].clone()
        });
        match crate::lifecycle::spawn_hidden_helper(
            rt,
            desc,
            team,
            tid as u32,
            cpus,
            cfg.affinity.verbose,
            &READY,
        ) {
            Ok(()) => started += 1,
            Err(e) => crate::registry::warn(&format!(
                "oxiomp: warning: hidden helper thread {} could not start ({e}); the others run the hidden tasks",
                desc.gtid
            )),
        }
    }
    if started == 0 {
        // Relaxed: see `REFUSED`.
        REFUSED.store(true, Ordering::Relaxed);
        return None;
    }
    // Acquire: pairs with each helper's Release increment (its set-up is done).
    while READY.load(Ordering::Acquire) < started {
        std::thread::yield_now();
    }
    // Release: see `team`.
    TEAM.store(team as *const Team as *mut Team, Ordering::Release);
    Some(team)
}

/// Whether `gtid` is reserved for the helpers (see the module docs).
pub(crate) fn is_reserved(rt: &Runtime, gtid: i32) -> bool {
    gtid >= 1 && gtid as u32 <= rt.settings().hidden.reserved_gtids()
}

/// In a fork's child (the only thread): the helpers' threads are not there; the next hidden
/// task starts new ones. Their team is forgotten, not freed, as other teams in a child are.
pub(crate) fn forget_after_fork() {
    // Relaxed: the only thread.
    TEAM.store(std::ptr::null_mut(), Ordering::Relaxed);
    REFUSED.store(false, Ordering::Relaxed);
}
