//! Static loop schedules: which iterations each thread runs, computed without any shared state.
//!
//! All arithmetic is done in `i128` on the loop's own values, so every induction type clang
//! uses (32/64-bit, signed/unsigned) is covered by one implementation; the ABI layer converts
//! back with the type's wrap-around.

/// What `__kmpc_for_static_init_*` returns to one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticChunk {
    /// First iteration value of the thread's (first) chunk.
    pub lower: i128,
    /// Last iteration value of that chunk (inclusive). For chunked schedules it may lie past
    /// the loop's end: clang clamps it.
    pub upper: i128,
    /// Distance from one of the thread's chunks to its next (chunked), or the trip count.
    pub stride: i128,
    /// Whether the thread runs the loop's last iteration.
    pub last: bool,
}

/// The number of iterations of `for (i = lb; incr > 0 ? i <= ub : i >= ub; i += incr)`.
#[inline]
pub fn trip_count(lb: i128, ub: i128, incr: i128) -> u128 {
    if incr > 0 && ub >= lb {
        // clang's normalised loops step by 1: no division at all.
        if incr == 1 { (ub - lb + 1) as u128 } else { (div_rem(ub - lb, incr).0 + 1) as u128 }
    } else if incr < 0 && lb >= ub {
        (div_rem(lb - ub, -incr).0 + 1) as u128
    } else {
        0
    }
}

/// `(a / b, a % b)` for `a >= 0`, `b > 0`: in 64 bits when both fit (every loop but one over
/// the whole 64-bit range), where the 128-bit division is a library call several times
/// slower.
#[inline]
fn div_rem(a: i128, b: i128) -> (i128, i128) {
    debug_assert!(a >= 0 && b > 0);
    match (u64::try_from(a), u64::try_from(b)) {
        (Ok(a), Ok(b)) => ((a / b) as i128, (a % b) as i128),
        _ => (a / b, a % b),
    }
}

/// The static schedule for thread `tid` of `nth`: unchunked (`chunk <= 0` or `chunked == false`)
/// gives each thread one balanced block (the first `tc % nth` threads one iteration more);
/// chunked deals out `chunk`-iteration chunks round-robin.
pub fn static_chunk(
    lb: i128,
    ub: i128,
    incr: i128,
    chunked: bool,
    chunk: i128,
    tid: u32,
    nth: u32,
) -> StaticChunk {
    let tc = trip_count(lb, ub, incr) as i128;
    if tc == 0 {
        return StaticChunk { lower: lb, upper: ub, stride: incr, last: false };
    }
    if nth <= 1 {
        // The whole loop; a chunked caller's next chunk (lower + stride) lies past the end in
        // the loop's direction (for clang's normalised loops, incr = 1, this is libomp's `tc`).
        let stride = if chunked && chunk > 0 { tc * incr } else { tc };
        return StaticChunk { lower: lb, upper: ub, stride, last: true };
    }
    let (t, n) = (tid as i128, nth as i128);
    if !chunked || chunk <= 0 {
        let (q, r) = div_rem(tc, n);
        let count = q + i128::from(t < r);
        if count == 0 {
            // No iterations: the lower bound one step past the upper one.
            let past = if incr > 0 { ub + 1 } else { ub - 1 };
            return StaticChunk { lower: past, upper: ub, stride: tc, last: false };
        }
        let first = t * q + t.min(r);
        let lower = lb + first * incr;
        let upper = lower + (count - 1) * incr;
        let last_tid = if tc >= n { n - 1 } else { tc - 1 };
        return StaticChunk { lower, upper, stride: tc, last: t == last_tid };
    }
    let span = chunk * incr;
    let nchunks = div_rem(tc + chunk - 1, chunk).0;
    let lower = lb + t * span;
    let upper = lower + span - incr;
    let stride = if nchunks < n { span * nchunks } else { span * n };
    StaticChunk { lower, upper, stride, last: t == div_rem(nchunks - 1, n).1 }
}

/// The thread (of `nth`) that [`static_chunk`] gives iteration number `index` (from 0) of a
/// loop of `tc` iterations, if the loop has it.
pub fn static_owner(tc: u128, chunked: bool, chunk: i128, nth: u32, index: u128) -> Option<u32> {
    if index >= tc {
        return None;
    }
    let n = nth.max(1) as u128;
    if chunked && chunk > 0 {
        return Some(((index / chunk as u128) % n) as u32);
    }
    // Balanced blocks: the first `r` threads `q + 1` iterations, the others `q`.
    let (q, r) = (tc / n, tc % n);
    let long = r * (q + 1);
    Some(if index < long { index / (q + 1) } else { r + (index - long) / q } as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_of_an_iteration_is_the_thread_whose_chunk_holds_it() {
        for (tc, chunked, chunk, nth) in [
            (10, false, 0, 3),
            (64, false, 0, 16),
            (2, false, 0, 3),
            (10, true, 3, 3),
            (10, true, 4, 3),
            (100, true, 1, 7),
            (5, false, 0, 1),
        ] {
            for t in 0..nth {
                let c = static_chunk(0, tc as i128 - 1, 1, chunked, chunk, t, nth);
                for i in 0..tc {
                    let i = i as i128;
                    let mine = if chunked {
                        i >= c.lower && (i - c.lower) % c.stride <= c.upper - c.lower
                    } else {
                        (c.lower..=c.upper).contains(&i)
                    };
                    assert_eq!(
                        static_owner(tc, chunked, chunk, nth, i as u128) == Some(t),
                        mine,
                        "{tc} {chunked} {chunk} {nth}: iteration {i}, thread {t}"
                    );
                }
            }
            assert_eq!(static_owner(tc, chunked, chunk, nth, tc), None);
        }
    }

    fn run(lb: i128, ub: i128, incr: i128, chunked: bool, chunk: i128, nth: u32) -> Vec<StaticChunk> {
        (0..nth).map(|t| static_chunk(lb, ub, incr, chunked, chunk, t, nth)).collect()
    }

    /// The worked example of the ABI notes (N = 10, 3 threads), as libomp 19 returns it.
    #[test]
    fn matches_libomp_table() {
        let s = run(0, 9, 1, false, 1, 3);
        assert_eq!(
            s.iter().map(|c| (c.lower, c.upper, c.stride, c.last)).collect::<Vec<_>>(),
            vec![(0, 3, 10, false), (4, 6, 10, false), (7, 9, 10, true)]
        );
        let s = run(0, 9, 1, true, 3, 3);
        assert_eq!(
            s.iter().map(|c| (c.lower, c.upper, c.stride, c.last)).collect::<Vec<_>>(),
            vec![(0, 2, 9, true), (3, 5, 9, false), (6, 8, 9, false)]
        );
        let s = run(0, 9, 1, true, 4, 3);
        assert_eq!((s[2].lower, s[2].upper, s[2].stride, s[2].last), (8, 11, 12, true));
        let s = run(0, 1, 1, false, 1, 3);
        assert_eq!((s[1].lower, s[1].upper, s[1].last), (1, 1, true));
        assert_eq!((s[2].lower, s[2].upper, s[2].last), (2, 1, false));
        let s = run(9, 0, -1, false, 1, 3);
        assert_eq!(
            s.iter().map(|c| (c.lower, c.upper, c.last)).collect::<Vec<_>>(),
            vec![(9, 6, false), (5, 3, false), (2, 0, true)]
        );
    }

    /// The 64-bit fast paths give what 128-bit arithmetic gives, at the edges of the range too.
    #[test]
    fn division_fast_path_matches_128_bits() {
        let edges = [0i128, 1, 2, 3, 7, 63, 64, 65, u32::MAX as i128, i64::MAX as i128, u64::MAX as i128];
        for &a in edges.iter().chain(&[u64::MAX as i128 + 1, 1 << 100]) {
            for &b in &edges[1..] {
                assert_eq!(div_rem(a, b), (a / b, a % b), "{a} / {b}");
            }
        }
        let (min, max) = (i64::MIN as i128, i64::MAX as i128);
        for (lb, ub, incr) in
            [(min, max, 1), (min, max, 3), (max, min, -1), (max, min, -7), (0, max, 1), (-5, 5, 1)]
        {
            let want = if incr > 0 { (ub - lb) / incr + 1 } else { (lb - ub) / -incr + 1 } as u128;
            assert_eq!(trip_count(lb, ub, incr), want, "{lb}..{ub} by {incr}");
            for nth in [2u32, 3, 16] {
                for chunk in [0, 1, 5] {
                    for tid in 0..nth {
                        let got = static_chunk(lb, ub, incr, chunk > 0, chunk, tid, nth);
                        assert_eq!(
                            got,
                            reference_chunk(lb, ub, incr, chunk, tid, nth),
                            "{lb}..{ub} by {incr}"
                        );
                    }
                }
            }
        }
    }

    /// `static_chunk` as it was written before the 64-bit paths, all in 128 bits.
    fn reference_chunk(lb: i128, ub: i128, incr: i128, chunk: i128, tid: u32, nth: u32) -> StaticChunk {
        let tc = if incr > 0 { (ub - lb) / incr + 1 } else { (lb - ub) / -incr + 1 };
        let (t, n) = (tid as i128, nth as i128);
        if chunk <= 0 {
            let (q, r) = (tc / n, tc % n);
            let count = q + i128::from(t < r);
            if count == 0 {
                let past = if incr > 0 { ub + 1 } else { ub - 1 };
                return StaticChunk { lower: past, upper: ub, stride: tc, last: false };
            }
            let lower = lb + (t * q + t.min(r)) * incr;
            let last_tid = if tc >= n { n - 1 } else { tc - 1 };
            return StaticChunk { lower, upper: lower + (count - 1) * incr, stride: tc, last: t == last_tid };
        }
        let span = chunk * incr;
        let nchunks = (tc + chunk - 1) / chunk;
        let lower = lb + t * span;
        let stride = if nchunks < n { span * nchunks } else { span * n };
        StaticChunk { lower, upper: lower + span - incr, stride, last: t == (nchunks - 1) % n }
    }

    /// Every iteration is dealt exactly once, for many shapes.
    #[test]
    fn every_iteration_once() {
        for (lb, ub, incr) in [(0i128, 99, 1), (100, -50, -3), (5, 5, 1), (7, 3, 2), (-20, 20, 7)] {
            let tc = trip_count(lb, ub, incr);
            for nth in [1u32, 2, 3, 4, 16] {
                for (chunked, chunk) in [(false, 0), (true, 1), (true, 3), (true, 64)] {
                    let mut hits = vec![0u32; tc as usize];
                    for c in run(lb, ub, incr, chunked, chunk, nth) {
                        let (mut lo, mut hi) = (c.lower, c.upper);
                        loop {
                            // clang's clamp of the chunk to the loop's bound
                            if incr > 0 {
                                hi = hi.min(ub)
                            } else {
                                hi = hi.max(ub)
                            }
                            if (incr > 0 && lo > hi) || (incr < 0 && lo < hi) {
                                break;
                            }
                            let mut i = lo;
                            while (incr > 0 && i <= hi) || (incr < 0 && i >= hi) {
                                let idx = (i - lb) / incr;
                                assert!(
                                    idx >= 0 && (idx as usize) < hits.len(),
                                    "{lb},{ub},{incr} nth={nth} chunk={chunk} i={i} c={c:?}"
                                );
                                hits[idx as usize] += 1;
                                i += incr;
                            }
                            if !chunked {
                                break;
                            }
                            lo += c.stride;
                            hi = c.upper + (lo - c.lower);
                        }
                    }
                    assert!(
                        hits.iter().all(|&h| h == 1),
                        "{lb},{ub},{incr} nth={nth} chunk={chunk}: {hits:?}"
                    );
                }
            }
        }
    }
}
