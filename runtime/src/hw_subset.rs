//! `KMP_HW_SUBSET`, libomp's way to run on part of the machine: a list of layers, each a count
//! and an optional offset, e.g. `1s,2c,1t` (one socket, two cores of it, one hardware thread
//! of each core) or `2c@1` (cores 1 and 2 of every socket). The CPUs left are the process's
//! CPUs from then on: places, `omp_get_num_procs` and default team sizes follow them.
//!
//! * Layers: `s` (socket, also `socket`/`package`), `c` (core), `t` (hardware thread); their
//!   order in the text does not matter, and a layer not listed keeps all its items.
//! * Relative (the default): a layer's count applies within each item of the layer above it
//!   (two cores *per socket*, one thread *per core*).
//! * Absolute (a leading `:`): a layer's count applies within each item of the nearest
//!   *listed* layer above it, the layers between flattened: `:1s,2t@1` is the second and
//!   third hardware thread of the first socket, whichever cores they are on.
//!
//! The machine is what sysfs says of the CPUs the process may use, as for `OMP_PLACES`
//! (`places::cpu_tree`); the selection itself (`select`) is a pure function over such a tree,
//! so it is tested on machines larger than the one the tests run on.

/// A topology layer, outermost first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layer {
    Socket = 0,
    Core = 1,
    Thread = 2,
}

/// One item of the setting: how many of a layer's items, from which one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Take {
    pub layer: Layer,
    pub count: usize,
    pub offset: usize,
}

/// A parsed `KMP_HW_SUBSET`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subset {
    pub absolute: bool,
    /// At most one per layer, outermost first.
    pub takes: Vec<Take>,
}

pub fn parse(text: &str) -> Result<Subset, String> {
    let t = text.trim();
    let (absolute, t) = match t.strip_prefix(':') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let mut takes: Vec<Take> = Vec::new();
    for item in t.split(',').map(str::trim) {
        // `<count><layer>[@<offset>]`; a `:attribute` suffix (core types) is not supported.
        if item.contains(':') {
            return Err(format!("'{item}': core attributes are not supported"));
        }
        let (spec, offset) = match item.split_once('@') {
            Some((s, o)) => (s, o.parse::<usize>().map_err(|_| format!("bad offset in '{item}'"))?),
            None => (item, 0),
        };
        let digits = spec.find(|c: char| !c.is_ascii_digit()).ok_or(format!("'{item}' names no layer"))?;
        let count: usize = spec[..digits].parse().map_err(|_| format!("'{item}' has no count"))?;
        if count == 0 {
            return Err(format!("'{item}': the count must be positive"));
        }
        let layer = match spec[digits..].to_ascii_lowercase().as_str() {
            "s" | "socket" | "sockets" | "package" | "packages" => Layer::Socket,
            "c" | "core" | "cores" => Layer::Core,
            "t" | "thread" | "threads" => Layer::Thread,
            other => return Err(format!("unknown layer '{other}' (s, c or t)")),
        };
        if takes.iter().any(|k| k.layer == layer) {
            return Err(format!("layer '{}' given twice", &spec[digits..]));
        }
        takes.push(Take { layer, count, offset });
    }
    takes.sort_by_key(|k| k.layer);
    Ok(Subset { absolute, takes })
}

/// A CPU's place in the machine: (socket, core, CPU), socket and core as sysfs numbers them.
pub type CpuAt = (i64, i64, u32);

/// The CPUs of `cpus` the subset keeps, in CPU order. Items are ordered by their numbers
/// (sockets by id, cores by id within their socket, threads by CPU id within their core).
pub fn select(subset: &Subset, cpus: &[CpuAt]) -> Vec<u32> {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    // Each CPU's item key at each layer.
    let key = |c: &CpuAt, l: Layer| -> (i64, i64, i64) {
        match l {
            Layer::Socket => (c.0, 0, 0),
            Layer::Core => (c.0, c.1, 0),
            Layer::Thread => (c.0, c.1, c.2 as i64),
        }
    };
    let mut kept = sorted;
    for take in &subset.takes {
        // The layer whose items the count applies within.
        let parent = if subset.absolute {
            subset.takes.iter().rev().find(|k| k.layer < take.layer).map(|k| k.layer)
        } else {
            match take.layer {
                Layer::Socket => None,
                Layer::Core => Some(Layer::Socket),
                Layer::Thread => Some(Layer::Core),
            }
        };
        let mut out = Vec::with_capacity(kept.len());
        let mut i = 0;
        while i < kept.len() {
            // One parent item: the run of CPUs with the same parent key.
            let pk = parent.map(|p| key(&kept[i], p));
            let mut j = i;
            while j < kept.len() && parent.map(|p| key(&kept[j], p)) == pk {
                j += 1;
            }
            // Its children at this layer, in order; keep those in [offset, offset + count).
            let mut child = 0usize;
            let mut k = i;
            while k < j {
                let ck = key(&kept[k], take.layer);
                let mut m = k;
                while m < j && key(&kept[m], take.layer) == ck {
                    m += 1;
                }
                if child >= take.offset && child < take.offset + take.count {
                    out.extend_from_slice(&kept[k..m]);
                }
                child += 1;
                k = m;
            }
            i = j;
        }
        kept = out;
    }
    let mut ids: Vec<u32> = kept.into_iter().map(|c| c.2).collect();
    ids.sort_unstable();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2 sockets x 4 cores x 2 threads; CPU ids as Linux often numbers them: the first
    /// threads of all cores 0..7, the second threads 8..15.
    fn machine() -> Vec<CpuAt> {
        let mut m = Vec::new();
        for s in 0..2 {
            for c in 0..4 {
                let core = s * 4 + c;
                m.push((s as i64, c as i64, core as u32));
                m.push((s as i64, c as i64, core as u32 + 8));
            }
        }
        m
    }

    fn sel(text: &str) -> Vec<u32> {
        select(&parse(text).unwrap(), &machine())
    }

    #[test]
    fn relative_layers() {
        assert_eq!(sel("1s"), vec![0, 1, 2, 3, 8, 9, 10, 11]);
        assert_eq!(sel("1s@1"), vec![4, 5, 6, 7, 12, 13, 14, 15]);
        assert_eq!(sel("1s,2c,1t"), vec![0, 1]);
        assert_eq!(sel("2c@1"), vec![1, 2, 5, 6, 9, 10, 13, 14]);
        assert_eq!(sel("1t@1"), (8..16).collect::<Vec<_>>());
        // Order in the text does not matter.
        assert_eq!(sel("1t,1s,2c"), sel("1s,2c,1t"));
        // More than there is keeps what there is.
        assert_eq!(sel("4s,8c,4t").len(), 16);
    }

    #[test]
    fn absolute_layers_flatten_what_is_not_listed() {
        // Threads counted within the socket, whichever core they are on: the socket's CPUs in
        // (core, CPU) order are 0, 8, 1, 9, ...: the second and third are 8 and 1.
        assert_eq!(sel(":1s,2t@1"), vec![1, 8]);
        assert_eq!(sel(":3t"), vec![0, 1, 8]);
        // Relative, the same text takes threads 1 and 2 of each core: each core has only 1.
        assert_eq!(sel("1s,2t@1"), vec![8, 9, 10, 11]);
    }

    #[test]
    fn malformed() {
        for bad in ["", "s", "0s", "2x", "1s,1s", "2c@x", "1c:intel_core"] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert!(parse(":1s,2t@1").unwrap().absolute);
    }
}
