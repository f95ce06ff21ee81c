//! `taskloop`: the compiler hands over a pattern task whose header holds the (normalised)
//! loop bounds; the runtime cuts the iteration space into chunks, each a byte copy of the
//! pattern with its own bounds, then finishes the pattern without running it.

use super::task::{self, KmpTask, KmpTaskloop, Task};
use crate::thread::Thread;

/// `void dup(kmp_task_t *dst, kmp_task_t *src, kmp_int32 lastpriv)`.
pub type DupFn = unsafe extern "C" fn(*mut KmpTask, *mut KmpTask, i32);

/// The arguments of `__kmpc_taskloop(_5)`.
pub struct TaskloopArgs {
    pub if_val: bool,
    /// The bounds, and where they sit in the task (byte offsets from the `kmp_task_t`).
    pub lb: u64,
    pub ub: u64,
    pub lb_offset: usize,
    pub ub_offset: usize,
    pub st: i64,
    pub nogroup: bool,
    /// 0: no clause, 1: grainsize, 2: num_tasks.
    pub sched: i32,
    pub grainsize: u64,
    pub strict: bool,
    pub dup: Option<DupFn>,
}

/// Iterations of the loop `lb..=ub` by `st` (in the runtime's unsigned arithmetic).
pub fn trip_count(lb: u64, ub: u64, st: i64) -> u64 {
    if st == 0 {
        return 0;
    }
    if st > 0 {
        if (ub as i64) < (lb as i64) {
            return 0;
        }
        ub.wrapping_sub(lb) / st as u64 + 1
    } else {
        if (lb as i64) < (ub as i64) {
            return 0;
        }
        lb.wrapping_sub(ub) / st.unsigned_abs() + 1
    }
}

/// How a loop of `tc` iterations is cut: (number of chunks, base chunk size, chunks that get
/// one more iteration). Strict grainsize: chunks of exactly `grainsize`, the last one shorter
/// (then `extras` is 0 and the caller trims the last chunk).
pub fn plan(tc: u64, nthreads: u32, sched: i32, grainsize: u64, strict: bool) -> (u64, u64, u64) {
    if tc == 0 {
        return (0, 0, 0);
    }
    match sched {
        1 => {
            let g = grainsize.max(1);
            if strict {
                (tc.div_ceil(g), g, 0)
            } else {
                let n = (tc / g).max(1);
                (n, tc / n, tc % n)
            }
        }
        2 => {
            let n = grainsize.clamp(1, tc);
            (n, tc / n, tc % n)
        }
        _ => {
            let n = (nthreads as u64 * 10).clamp(1, tc);
            (n, tc / n, tc % n)
        }
    }
}

/// `__kmpc_taskloop` / `__kmpc_taskloop_5`.
pub fn taskloop(th: Thread, pattern: &'static Task, a: &TaskloopArgs) {
    let kt = pattern.kmp();
    let (lb_off, ub_off) = (a.lb_offset, a.ub_offset);
    let body = pattern.size - task::HEADER;
    if lb_off.max(ub_off) + 8 > body {
        crate::fatal(format_args!("taskloop bounds at offsets {lb_off}/{ub_off} lie outside the task"));
    }
    let (lower, upper) = (a.lb, a.ub);
    let tc = trip_count(lower, upper, a.st);
    if !a.nogroup {
        super::taskgroup_begin(th);
    }
    let (n, size, extras) = plan(tc, th.team().nthreads, a.sched, a.grainsize, a.strict);
    // Chunks run in place, one after another in one reused task block, when they may not be
    // deferred or when the deque is full enough that queueing more only costs (the cut-off).
    let mut inline: Option<&'static Task> = None;
    let mut start = 0u64;
    for k in 0..n {
        let len = if a.strict && a.sched == 1 { size.min(tc - start) } else { size + (k < extras) as u64 };
        let lb = lower.wrapping_add(start.wrapping_mul(a.st as u64));
        let ub = lb.wrapping_add((len - 1).wrapping_mul(a.st as u64));
        let last = (k + 1 == n) as i32;
        start += len;
        let defer = a.if_val && super::may_defer(th, pattern);
        oxiomp_instrument::task_duplicating_enter();
        let c = if defer {
            task::duplicate(pattern, th.desc().task_cache(), super::next_id(th))
        } else {
            match inline {
                Some(c) => {
                    task::copy_body(pattern, c);
                    c
                }
                None => {
                    let c = task::duplicate(pattern, th.desc().task_cache(), super::next_id(th));
                    super::begin_in_place(c);
                    *inline.insert(c)
                }
            }
        };
        let ckt = c.kmp();
        // SAFETY: the copy has the pattern's layout: lb/ub at the same offsets; `liter` is
        // part of the taskloop header when the compiler uses the standard one.
        unsafe {
            *((ckt as *mut u8).add(lb_off) as *mut u64) = lb;
            *((ckt as *mut u8).add(ub_off) as *mut u64) = ub;
            if lb_off == std::mem::offset_of!(KmpTaskloop, lb) {
                (*(ckt as *mut KmpTaskloop)).liter = last;
            }
            if let Some(dup) = a.dup {
                dup(ckt, kt, last);
            }
        }
        oxiomp_instrument::task_duplicating_exit();
        if defer {
            super::submit(th, c, &mut Vec::new());
        } else {
            super::run_in_place(th, c);
        }
    }
    if let Some(c) = inline {
        super::discard_after_run(c);
    }
    super::discard(pattern);
    if !a.nogroup {
        super::taskgroup_end(th);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn trip_counts() {
        assert_eq!(trip_count(0, 9, 1), 10);
        assert_eq!(trip_count(0, 9, 3), 4);
        assert_eq!(trip_count(9, 0, -1), 10);
        assert_eq!(trip_count(5, 4, 1), 0);
        assert_eq!(trip_count(0, u64::MAX, 1), 0); // ub = -1: empty
    }

    #[test]
    fn plans_cover_the_loop() {
        for tc in [1u64, 2, 7, 100, 1001] {
            for (sched, g, strict) in
                [(0, 0, false), (1, 1, false), (1, 7, false), (1, 7, true), (2, 3, false), (2, 5000, false)]
            {
                let (n, size, extras) = plan(tc, 4, sched, g, strict);
                let mut total = 0;
                let mut start = 0;
                for k in 0..n {
                    let len = if strict { size.min(tc - start) } else { size + (k < extras) as u64 };
                    assert!(len >= 1);
                    if sched == 1 && !strict {
                        assert!(len >= g.min(tc) && len < 2 * g.max(1) || n == 1, "tc={tc} g={g} len={len}");
                    }
                    if strict && k + 1 < n {
                        assert_eq!(len, g);
                    }
                    total += len;
                    start += len;
                }
                assert_eq!(total, tc, "tc={tc} sched={sched} g={g}");
                if sched == 2 {
                    assert_eq!(n, g.min(tc));
                }
            }
        }
    }
}
