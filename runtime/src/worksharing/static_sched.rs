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
pub fn trip_count(lb: i128, ub: i128, incr: i128) -> u128 {
    if incr > 0 && ub >= lb {
        ((ub - lb) / incr + 1) as u128
    } else if incr < 0 && lb >= ub {
        ((lb - ub) / -incr + 1) as u128
    } else {
        0
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
        let q = tc / n;
        let r = tc % n;
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
    let nchunks = (tc + chunk - 1) / chunk;
    let lower = lb + t * span;
    let upper = lower + span - incr;
    let stride = if nchunks < n { span * nchunks } else { span * n };
    StaticChunk { lower, upper, stride, last: t == (nchunks - 1) % n }
}

#[cfg(test)]
mod tests {
    use super::*;

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
