//! What each thread keeps for the regions it forks: the teams it keeps for the next fork at
//! each level ("hot" teams), the teams of its serialized regions, and the clauses pushed for
//! its next fork (`num_threads`, `proc_bind`, `num_teams`/`thread_limit`). Only the owning
//! thread touches it (through `Thread::fork_state`): `Cell`s, the growable parts taken out and
//! put back inside one method of this module ([`with`]). No borrow flag: in the child of a
//! `fork` called while another thread was inside such a method, the part is found empty (its
//! teams forgotten, as the child forgets that thread's state anyway), never stuck borrowed.

use std::cell::Cell;

use super::descriptor::{Job, Team};
use crate::icv::{Icvs, ProcBind};

/// A thread's fork state.
#[derive(Default)]
pub(crate) struct ForkState {
    /// Teams this thread is the primary thread of, kept for the next fork at the same level.
    /// Level 0 on its own: the common case moves one pointer.
    hot0: Cell<Option<Box<Team>>>,
    /// Levels 1 and deeper, at `level - 1`.
    hot: Cell<Vec<Option<Box<Team>>>>,
    /// The serialized regions.
    serial: Cell<Serial>,
    /// `num_threads` clause pushed for the next fork (0 = none).
    push_nthreads: Cell<u32>,
    /// The rest of a `num_threads` list pushed for the next fork: nthreads-var of the region's
    /// implicit tasks and of the levels below (empty: no list).
    push_nthreads_rest: Cell<&'static [u32]>,
    /// The `strict` modifier pushed with `num_threads` for the next fork.
    push_strict: Cell<Option<Box<Strict>>>,
    /// `proc_bind` clause pushed for the next fork.
    push_bind: Cell<Option<ProcBind>>,
    /// `num_teams` / `thread_limit` pushed for the next teams construct (0 = none).
    push_teams: Cell<(u32, u32)>,
    /// The open regions whose primary thread's part runs in the caller's own code (gcc's
    /// split fork), innermost last.
    open: Cell<Vec<Open>>,
}

/// A team forked and not joined yet: what its join needs.
pub(crate) struct Forked {
    pub(super) team: Box<Team>,
    /// The workers' epochs the join waits for, moved out of the team while it runs.
    pub(super) epochs: Vec<u32>,
    /// What the primary thread was, restored at the join.
    pub(super) saved: Saved,
    /// The nesting level the team is kept at for the next fork.
    pub(super) level: usize,
    /// The region's flags, for a tool.
    pub(super) flags: u32,
}

/// A region opened by the split fork (the team's workers run the job, the primary thread
/// returns to its caller as member 0), closed by the split join.
pub(crate) struct Open {
    /// The region's job.
    pub(super) job: Job,
    /// The team the primary thread runs the region on.
    pub(super) team: *const Team,
    /// The forked team; `None` for a serialized region (its team is in `serial`).
    pub(super) forked: Option<Forked>,
}

/// Runs `f` on the value of `cell`, taken out for the call and put back after.
#[inline]
fn with<T: Default, R>(cell: &Cell<T>, f: impl FnOnce(&mut T) -> R) -> R {
    let mut v = cell.take();
    let r = f(&mut v);
    cell.set(v);
    r
}

/// The teams of serialized regions, one per serialized nesting depth, reused, and what the
/// open ones saved, innermost last.
#[derive(Default)]
struct Serial {
    /// Boxed: threads hold pointers to them while the vector may grow.
    #[allow(clippy::vec_box)]
    teams: Vec<Box<Team>>,
    saved: Vec<Saved>,
}

/// The `strict` modifier of a `num_threads` clause: the region must get the threads it asks
/// for, or the program is told (`fatal`: it ends; otherwise a warning and the region runs with
/// what it got). `text` names where and why (the clause's location and message).
pub struct Strict {
    pub fatal: bool,
    pub text: String,
}

impl Strict {
    #[cold]
    pub(super) fn fell_short(&self, requested: u32, got: u32) {
        let what = format!(
            "{}: num_threads(strict: {requested}) gets only {got} thread{}",
            self.text,
            if got == 1 { "" } else { "s" }
        );
        if self.fatal {
            crate::user_error(format_args!("{what}"));
        }
        crate::stderr_line(format_args!("oxiomp: warning: {what}"));
    }
}

/// What a region saves of its encountering thread's state and restores at its end.
#[derive(Clone, Copy)]
pub(crate) struct Saved {
    pub(crate) team: *const Team,
    pub(crate) tid: u32,
    pub(crate) icvs: Icvs,
    pub(crate) ws: crate::worksharing::state::Saved,
    pub(crate) task: crate::task::state::Saved,
}

impl Saved {
    /// The team the thread was in.
    pub(crate) fn team(&self) -> *const Team {
        self.team
    }

    pub(crate) fn tid(&self) -> u32 {
        self.tid
    }

    pub(crate) fn icvs(&self) -> &Icvs {
        &self.icvs
    }
}

impl ForkState {
    /// A fresh state for the next thread a descriptor serves; the serialized regions' teams
    /// are kept (they belong to the descriptor). `drop_old`: the rest is dropped (false:
    /// forgotten, in a fork's child, where a vanished thread may have left it half-written;
    /// the serialized teams too).
    pub(crate) fn restart(&self, drop_old: bool) {
        let old = (
            self.take_all_hot(),
            with(&self.serial, |s| std::mem::take(&mut s.saved)),
            self.push_strict.take(),
            self.open.take(),
        );
        if drop_old {
            drop(old);
        } else {
            std::mem::forget(old);
            std::mem::forget(self.serial.take());
        }
        self.push_nthreads.set(0);
        self.push_nthreads_rest.set(&[]);
        self.push_bind.set(None);
        self.push_teams.set((0, 0));
    }

    /// The team kept for a fork at `level`, if any (taken: give it back with
    /// [`ForkState::keep_hot`]).
    #[inline]
    pub(crate) fn take_hot(&self, level: usize) -> Option<Box<Team>> {
        match level {
            0 => self.hot0.take(),
            _ => with(&self.hot, |hot| hot.get_mut(level - 1).and_then(Option::take)),
        }
    }

    /// Keeps `team` for the next fork at `level`; returns the team kept there before, if any.
    #[inline]
    pub(crate) fn keep_hot(&self, level: usize, team: Box<Team>) -> Option<Box<Team>> {
        if level == 0 {
            return self.hot0.replace(Some(team));
        }
        with(&self.hot, |hot| {
            if hot.len() < level {
                hot.resize_with(level, || None);
            }
            hot[level - 1].replace(team)
        })
    }

    /// All the teams kept for later forks (the thread ends or pauses).
    #[inline]
    pub(crate) fn take_all_hot(&self) -> Vec<Option<Box<Team>>> {
        let mut all = vec![self.hot0.take()];
        all.append(&mut self.hot.take());
        all
    }

    /// Whether a serialized region is open on this thread.
    #[inline]
    pub(crate) fn in_serial(&self) -> bool {
        with(&self.serial, |s| !s.saved.is_empty())
    }

    /// A serialized region begins, saving `s` to restore at its end: the team it runs on (the
    /// one for its depth, made the first time with `icvs`), boxed and kept by this state, so
    /// its address is stable while the region runs.
    #[inline]
    pub(crate) fn begin_serial(&self, s: Saved, icvs: crate::icv::Icvs) -> *mut Team {
        with(&self.serial, |serial| {
            let depth = serial.saved.len();
            serial.saved.push(s);
            if serial.teams.len() <= depth {
                serial.teams.push(Box::new(Team::empty(icvs)));
            }
            &mut *serial.teams[depth] as *mut Team
        })
    }

    /// The innermost serialized region ends: what it saved.
    #[inline]
    pub(crate) fn end_serial(&self) -> Option<Saved> {
        with(&self.serial, |s| s.saved.pop())
    }

    /// Takes the `num_threads` pushed for the next fork (0: none).
    #[inline]
    pub(crate) fn take_nthreads(&self) -> u32 {
        self.push_nthreads.take()
    }

    /// Takes the rest of a `num_threads` list pushed for the next fork.
    #[inline]
    pub(crate) fn take_nthreads_rest(&self) -> &'static [u32] {
        self.push_nthreads_rest.take()
    }

    #[inline]
    pub(crate) fn push_nthreads(&self, n: u32, rest: &'static [u32]) {
        self.push_nthreads.set(n);
        self.push_nthreads_rest.set(rest);
    }

    #[inline]
    pub(crate) fn take_strict(&self) -> Option<Box<Strict>> {
        self.push_strict.take()
    }

    #[inline]
    pub(crate) fn push_strict(&self, s: Option<Box<Strict>>) {
        self.push_strict.set(s);
    }

    #[inline]
    pub(crate) fn take_bind(&self) -> Option<ProcBind> {
        self.push_bind.take()
    }

    #[inline]
    pub(crate) fn push_bind(&self, b: Option<ProcBind>) {
        self.push_bind.set(b);
    }

    #[inline]
    pub(crate) fn take_teams(&self) -> (u32, u32) {
        self.push_teams.take()
    }

    #[inline]
    pub(crate) fn push_teams(&self, v: (u32, u32)) {
        self.push_teams.set(v);
    }

    /// A split-fork region opened.
    pub(crate) fn push_open(&self, r: Open) {
        with(&self.open, |open| open.push(r));
    }

    /// Takes the innermost open split-fork region if its team is `team` (the thread's current
    /// one); `None` (and nothing taken) otherwise.
    pub(crate) fn pop_open(&self, team: *const Team) -> Option<Open> {
        with(&self.open, |open| match open.last() {
            Some(r) if r.team == team => open.pop(),
            _ => None,
        })
    }
}
