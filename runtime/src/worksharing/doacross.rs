//! Doacross loops (`ordered(n)` with `depend(sink)` / `depend(source)`).
//!
//! The iteration space is the product of the dimensions clang describes in normalised form
//! (`lo = 0`, `st = 1`, and `up` = the dimension's trip count, an exclusive bound: libomp reads
//! it as inclusive, which makes a sink one past the end of an inner dimension wait forever).
//! One bit per iteration records `source`; `sink` waits for its bit, and a sink vector outside
//! the iteration space is satisfied at once. A sink spins and yields for the block time like
//! every waiter of the runtime, then parks (`sync/sleep.rs`); each `source` notifies the
//! parked sinks (a fence and a load when none is parked), which look at their bits again.

use std::sync::Arc;

use crate::sync::atomic::{AtomicU32, Ordering};
use crate::sync::sleep::Sleep;
use oxiomp_instrument::ToolEvent;

/// One dimension as clang passes it: `struct kmp_dim { i64 lo, up, st; }`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Dim {
    pub lo: i64,
    pub up: i64,
    pub st: i64,
}

pub struct Doacross {
    dims: Vec<(i64, i64, u64)>, // (lo, st, size)
    done: Box<[AtomicU32]>,
    /// Sinks parked after their block time.
    sleep: Sleep,
}

impl Doacross {
    pub fn new(dims: &[Dim]) -> Arc<Doacross> {
        let dims: Vec<(i64, i64, u64)> = dims
            .iter()
            .map(|d| {
                let st = if d.st == 0 { 1 } else { d.st };
                let span = if st > 0 { d.up.saturating_sub(d.lo) } else { d.lo.saturating_sub(d.up) };
                let size = if span <= 0 { 0 } else { (span as u64).div_ceil(st.unsigned_abs()) };
                (d.lo, st, size)
            })
            .collect();
        let total: u64 = dims.iter().map(|d| d.2).product();
        let words = total.div_ceil(32) as usize;
        Arc::new(Doacross {
            dims,
            done: (0..words).map(|_| AtomicU32::new(0)).collect(),
            sleep: Sleep::new(),
        })
    }

    /// The linear index of iteration `vec`, or None when it lies outside the space.
    fn index(&self, vec: &[i64]) -> Option<u64> {
        let mut idx = 0u64;
        for (k, &(lo, st, size)) in self.dims.iter().enumerate() {
            let off = vec.get(k)?.checked_sub(lo)?;
            if off % st != 0 {
                return None;
            }
            let i = off / st;
            if i < 0 || i as u64 >= size {
                return None;
            }
            idx = idx * size + i as u64;
        }
        Some(idx)
    }

    pub fn ndims(&self) -> usize {
        self.dims.len()
    }

    /// `depend(source)` for iteration `vec`.
    pub fn post(&self, vec: &[i64]) {
        if let Some(i) = self.index(vec) {
            if oxiomp_instrument::tool_attached() {
                self.tell(vec, true);
            }
            // Release: the iteration's writes happen-before the sink that sees the bit.
            self.done[(i / 32) as usize].fetch_or(1 << (i % 32), Ordering::Release);
            self.sleep.notify();
        }
    }

    /// `depend(sink: vec)` of `ident_t` `ident` (0: none): waits until iteration `vec` posted
    /// (at once if it is outside).
    pub fn wait(&self, vec: &[i64], ident: usize) {
        let Some(i) = self.index(vec) else { return };
        if oxiomp_instrument::tool_attached() {
            self.tell(vec, false);
        }
        let (word, bit) = (&self.done[(i / 32) as usize], 1u32 << (i % 32));
        // Acquire: pairs with the Release in `post`.
        let posted = || word.load(Ordering::Acquire) & bit != 0;
        if posted() {
            return;
        }
        if oxiomp_instrument::enabled() {
            self.tell_wait(vec, true, ident);
        }
        self.sleep.wait_until(&posted);
        if oxiomp_instrument::enabled() {
            self.tell_wait(vec, false, ident);
        }
    }
}

impl Doacross {
    /// Tells a tool of `depend(source)` (`source`) or `depend(sink)` for iteration `vec`,
    /// which lies inside the iteration space.
    #[cold]
    fn tell(&self, vec: &[i64], source: bool) {
        // Inside the space: each offset from `lo` is a whole number of steps, at least 0.
        let iters: Vec<u64> =
            self.dims.iter().zip(vec).map(|(&(lo, st, _), &v)| ((v - lo) / st) as u64).collect();
        oxiomp_instrument::tool(|| ToolEvent::Doacross {
            source,
            iters: iters.as_ptr() as usize,
            n: iters.len() as u32,
        });
    }
}

impl Doacross {
    /// Tells the recorders that the calling thread begins (`waiting`) or ends waiting for
    /// iteration `vec`, inside the space (the first [`MAX_TOLD`] dimensions), at the sink of
    /// `ident_t` `ident`.
    #[cold]
    fn tell_wait(&self, vec: &[i64], waiting: bool, ident: usize) {
        let mut iters = [0u64; MAX_TOLD];
        let n = self.dims.len().min(MAX_TOLD);
        for ((it, &(lo, st, _)), &v) in iters.iter_mut().zip(&self.dims).zip(vec) {
            // Inside the space: each offset from `lo` is a whole number of steps, at least 0.
            *it = ((v - lo) / st) as u64;
        }
        oxiomp_instrument::tool(|| ToolEvent::DoacrossWait {
            waiting,
            iters: iters.as_ptr() as usize,
            n: n as u32,
            ident,
            count: self.dims.first().map_or(0, |d| d.2),
        });
    }
}

/// The most dimensions of an iteration a doacross wait tells.
pub const MAX_TOLD: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_exclusive_and_out_of_range_sinks_pass() {
        let d = Doacross::new(&[Dim { lo: 0, up: 3, st: 1 }, Dim { lo: 0, up: 4, st: 1 }]);
        assert_eq!(d.index(&[2, 3]), Some(11));
        assert_eq!(d.index(&[2, 4]), None, "j + 1 past the end is outside");
        assert_eq!(d.index(&[-1, 0]), None);
        d.wait(&[1, 4], 0); // returns at once
        d.post(&[1, 2]);
        d.wait(&[1, 2], 0);
    }
}
