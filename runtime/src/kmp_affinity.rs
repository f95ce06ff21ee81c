//! `KMP_AFFINITY`, libomp's own affinity setting, read as the OpenMP places and binding it
//! amounts to (used when neither `OMP_PLACES` nor `OMP_PROC_BIND` is set, which win, as in
//! libomp):
//!
//! | `KMP_AFFINITY` type | places | binding |
//! |---|---|---|
//! | `compact` (`logical`, `physical`) | one per `granularity` unit (default `core`) | `close` |
//! | `scatter`, `balanced` | likewise | `spread` |
//! | `explicit,proclist=[...]` | the listed CPUs (`3`, `0-2`, `{4,5}`), each widened to its `granularity` unit (default `fine`) | `close` |
//! | `none`, `disabled` | (none) | none |
//!
//! Modifiers: `granularity=` `fine`/`thread`, `core`, `socket`/`package`, `numa`/`node`,
//! `llc`/`ll_cache`; `verbose` (the places, and each binding, on stderr); `reset` (a primary
//! thread that leaves an outermost region gets its initial CPU set back); `noverbose`,
//! `warnings`, `nowarnings`, `respect`, `norespect`, `noreset`, `duplicates`,
//! `noduplicates` are accepted. libomp's numeric `permute` and `offset` after the type are
//! accepted and ignored.

use crate::icv::ProcBind;
use crate::places::{self, PlaceList};

/// What `KMP_AFFINITY` asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KmpAffinity {
    /// The places and the binding, or None (`none`, `disabled`).
    pub binding: Option<(PlaceList, ProcBind)>,
    pub verbose: bool,
    pub reset: bool,
    /// How many machine levels below its place a bound thread may move across: 0 for
    /// `granularity=fine`, 1 for `core`, 2 for coarser units (for the `verbose` report).
    pub migrate_levels: u32,
}

/// Splits at the commas that are not inside `[...]` or `{...}`.
fn top_level_items(s: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0i32, 0, Vec::new());
    for (i, c) in s.char_indices() {
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter().map(str::trim).filter(|i| !i.is_empty()).collect()
}

/// The abstract place name of a granularity.
fn granularity(g: &str) -> Result<&'static str, String> {
    Ok(match g {
        "fine" | "thread" => "threads",
        "core" => "cores",
        "socket" | "package" => "sockets",
        "numa" | "node" | "numa_domain" => "numa_domains",
        "llc" | "ll_cache" | "l3_cache" => "ll_caches",
        _ => return Err(format!("unknown granularity '{g}' (fine, thread, core, socket, numa, llc)")),
    })
}

/// The CPUs of an explicit proclist: `[0,2-3,{4,5}]`, each entry one place.
fn proclist(s: &str) -> Result<Vec<Vec<u32>>, String> {
    let body = s.strip_prefix('[').and_then(|b| b.strip_suffix(']')).ok_or("proclist must be [...]")?;
    let num = |t: &str| t.trim().parse::<u32>().map_err(|_| format!("bad CPU number '{t}' in proclist"));
    let mut out = Vec::new();
    for item in top_level_items(body) {
        if let Some(set) = item.strip_prefix('{').and_then(|b| b.strip_suffix('}')) {
            out.push(set.split(',').map(num).collect::<Result<Vec<_>, _>>()?);
        } else if let Some((a, b)) = item.split_once('-') {
            let (a, b) = (num(a)?, num(b)?);
            if b < a || b - a > 1 << 16 {
                return Err(format!("bad range '{item}' in proclist"));
            }
            out.extend((a..=b).map(|c| vec![c]));
        } else {
            out.push(vec![num(item)?]);
        }
    }
    Ok(out)
}

/// Parses `KMP_AFFINITY` against the process mask (places hold only CPUs of `mask`).
pub fn parse(text: &str, mask: &[u32]) -> Result<KmpAffinity, String> {
    let lower = text.to_ascii_lowercase();
    let mut a = KmpAffinity::default();
    let (mut gran, mut kind, mut list) = (None, None, None);
    for item in top_level_items(&lower) {
        match item {
            "verbose" => a.verbose = true,
            "reset" => a.reset = true,
            "noverbose" | "warnings" | "nowarnings" | "respect" | "norespect" | "noreset" | "duplicates"
            | "noduplicates" | "dups" | "nodups" => {}
            "compact" | "logical" | "physical" | "scatter" | "balanced" | "explicit" | "none"
            | "disabled" => {
                if kind.replace(item).is_some() {
                    return Err("more than one affinity type".into());
                }
            }
            _ if item.starts_with("granularity=") || item.starts_with("gran=") => {
                gran = Some(granularity(item.split_once('=').map_or("", |p| p.1))?);
            }
            _ if item.starts_with("proclist=") => list = Some(proclist(&item["proclist=".len()..])?),
            _ if item.parse::<u32>().is_ok() && kind.is_some() => {} // permute, offset
            _ => return Err(format!("unknown item '{item}'")),
        }
    }
    let bind = match kind {
        None if list.is_some() => ProcBind::Close,
        None | Some("none") | Some("disabled") => return Ok(a),
        Some("scatter") | Some("balanced") => ProcBind::Spread,
        Some("explicit") if list.is_none() => return Err("explicit needs a proclist=[...]".into()),
        _ => ProcBind::Close,
    };
    let place_list = match &list {
        Some(list) => {
            let units = places::places_at(gran.unwrap_or("threads"), mask);
            // Each listed CPU widened to its unit; CPUs outside the mask dropped.
            list.iter()
                .filter_map(|cpus| {
                    let mut p: Vec<u32> = units
                        .iter()
                        .filter(|u| u.iter().any(|c| cpus.contains(c)))
                        .flatten()
                        .copied()
                        .collect();
                    p.sort_unstable();
                    p.dedup();
                    (!p.is_empty()).then_some(p)
                })
                .collect()
        }
        None => places::places_at(gran.unwrap_or("cores"), mask),
    };
    if place_list.is_empty() {
        return Err("no CPU of the process is in it".into());
    }
    a.migrate_levels = match gran.unwrap_or(if list.is_some() { "threads" } else { "cores" }) {
        "threads" => 0,
        "cores" => 1,
        _ => 2,
    };
    a.binding = Some((PlaceList { places: place_list }, bind));
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_granularities_and_modifiers() {
        let mask = [0, 1, 2, 3];
        let threads: Vec<Vec<u32>> = mask.iter().map(|&c| vec![c]).collect();
        let a = parse("granularity=fine,compact", &mask).unwrap();
        assert_eq!(a.binding, Some((PlaceList { places: threads.clone() }, ProcBind::Close)));
        let a = parse("verbose,granularity=thread,scatter,1,0", &mask).unwrap();
        assert!(a.verbose && !a.reset);
        assert_eq!(a.binding.unwrap().1, ProcBind::Spread);
        assert!(parse("reset,compact", &mask).unwrap().reset);
        assert_eq!(parse("compact", &mask).unwrap().migrate_levels, 1);
        assert_eq!(parse("granularity=socket,scatter", &mask).unwrap().migrate_levels, 2);
        assert_eq!(parse("explicit,proclist=[0,1]", &mask).unwrap().migrate_levels, 0);
        assert_eq!(parse("none", &mask).unwrap().binding, None);
        assert_eq!(parse("disabled", &mask).unwrap().binding, None);
        assert!(parse("granularity=molecule,compact", &mask).is_err());
        assert!(parse("compact,scatter", &mask).is_err());
        assert!(parse("sideways", &mask).is_err());
        assert!(parse("explicit", &mask).is_err());
    }

    #[test]
    fn explicit_proclists() {
        let mask = [0, 1, 2, 3];
        let a = parse("explicit,proclist=[3,{0,1},2-2]", &mask).unwrap();
        assert_eq!(
            a.binding,
            Some((PlaceList { places: vec![vec![3], vec![0, 1], vec![2]] }, ProcBind::Close))
        );
        // CPUs outside the mask are dropped, and a list with none left is refused.
        let a = parse("proclist=[1,9],explicit", &mask).unwrap();
        assert_eq!(a.binding.unwrap().0.places, vec![vec![1]]);
        assert!(parse("explicit,proclist=[9]", &mask).is_err());
        assert!(parse("explicit,proclist=[x]", &mask).is_err());
        assert!(parse("explicit,proclist=[3-1]", &mask).is_err());
    }
}
