//! The task graph written out: DOT (for Graphviz), JSON (for programs) and SVG (drawn here,
//! see `svg.rs`), each in one pass over the graph.

use std::fmt::Write as _;
use std::path::Path;

use crate::graph::{Graph, access_name};

/// The colour of function `f` (the same for all its tasks, distinct for the first twelve).
pub(crate) fn colour(f: i64) -> &'static str {
    const PALETTE: [&str; 12] = [
        "#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5", "#d9d9d9",
        "#bc80bd", "#ccebc5", "#ffed6f",
    ];
    PALETTE[f.rem_euclid(PALETTE.len() as i64) as usize]
}

/// `text` as a quoted string for DOT and JSON (JSON's escapes: `\"`, `\\` and `\n` read the
/// same in DOT).
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_string())
}

/// A run time for a label: `12.3 us`, `4.5 ms`.
pub(crate) fn duration(ns: u64) -> String {
    match ns {
        n if n < 10_000 => format!("{n} ns"),
        n if n < 10_000_000 => format!("{:.1} us", n as f64 / 1e3),
        n => format!("{:.1} ms", n as f64 / 1e6),
    }
}

/// The graph in Graphviz's DOT language: a box per task (coloured by function, labelled with
/// the function, the task id, its thread and run time), an edge per dependence (labelled with
/// its address; dashed and labelled `mutexinoutset` into or out of such a group, dotted and
/// labelled `inoutset` likewise), the critical path in red.
pub fn dot(g: &Graph) -> String {
    let critical = g.critical();
    let mut out = String::from("digraph ayudame {\n  node [shape=box, style=filled];\n");
    for (i, t) in g.tasks.iter().enumerate() {
        let label =
            format!("{}\n#{} thread {} {}", g.function_name(t), t.id, t.thread, duration(t.run_time()));
        let extra = if critical.tasks[i] { ", color=red, penwidth=3" } else { "" };
        let _ = writeln!(
            out,
            "  t{} [label={}, fillcolor=\"{}\"{extra}];",
            t.id,
            quoted(&label),
            colour(t.function)
        );
    }
    for e in &g.edges {
        let mut extra = String::new();
        if critical.has_edge(e.pred, e.succ) {
            extra.push_str(", color=red, penwidth=3");
        }
        let mut label = format!("{:#x}", e.addr);
        if let Some(group) = e.group() {
            let _ = write!(label, "\\n{group}");
            extra.push_str(if group == "mutexinoutset" { ", style=dashed" } else { ", style=dotted" });
        }
        let _ = writeln!(out, "  t{} -> t{} [label=\"{label}\"{extra}];", e.pred, e.succ);
    }
    out.push_str("}\n");
    out
}

/// The graph as JSON: `runtime`, `barriers`, `functions` [{id, name}], `tasks` [{id,
/// function, priority, epoch, thread, created_ns, queued_ns, start_ns, end_ns, removed_ns,
/// accesses [{address, type}]}] (null for what did not happen), `edges` [{from, to, address,
/// from_access, to_access}] (the access types as `in`, `inout`, `mutexinoutset`, ...; null
/// when not told), `critical_path` [task ids].
pub fn json(g: &Graph) -> String {
    let opt = |v: Option<u64>| v.map_or_else(|| "null".to_string(), |v| v.to_string());
    let mut out = format!("{{\"runtime\":{},\"barriers\":{},\"functions\":[", g.runtime, g.barriers);
    let mut functions: Vec<_> = g.functions.iter().collect();
    functions.sort();
    for (k, (id, name)) in functions.iter().enumerate() {
        let sep = if k > 0 { "," } else { "" };
        let _ = write!(out, "{sep}{{\"id\":{id},\"name\":{}}}", quoted(name));
    }
    out.push_str("],\"tasks\":[");
    for (k, t) in g.tasks.iter().enumerate() {
        let sep = if k > 0 { "," } else { "" };
        let _ = write!(
            out,
            "{sep}{{\"id\":{},\"function\":{},\"priority\":{},\"epoch\":{},\"thread\":{},\"created_ns\":{},\
             \"queued_ns\":{},\"start_ns\":{},\"end_ns\":{},\"removed_ns\":{},\"accesses\":[",
            t.id,
            t.function,
            t.priority,
            t.epoch,
            t.thread,
            t.created,
            opt(t.queued),
            opt(t.start),
            opt(t.end),
            opt(t.removed)
        );
        for (k, &(addr, kind)) in t.accesses.iter().enumerate() {
            let sep = if k > 0 { "," } else { "" };
            let _ = write!(out, "{sep}{{\"address\":\"{addr:#x}\",\"type\":\"{}\"}}", access_name(kind));
        }
        out.push_str("]}");
    }
    out.push_str("],\"edges\":[");
    for (k, e) in g.edges.iter().enumerate() {
        let sep = if k > 0 { "," } else { "" };
        let name =
            |kind: i32| if kind == 0 { "null".to_string() } else { format!("\"{}\"", access_name(kind)) };
        let _ = write!(
            out,
            "{sep}{{\"from\":{},\"to\":{},\"address\":\"{:#x}\",\"from_access\":{},\"to_access\":{}}}",
            e.pred,
            e.succ,
            e.addr,
            name(e.from),
            name(e.to)
        );
    }
    out.push_str("],\"critical_path\":[");
    let path: Vec<String> = g.critical_path().iter().map(|&i| g.tasks[i].id.to_string()).collect();
    out.push_str(&path.join(","));
    out.push_str("]}\n");
    out
}

/// Writes `<prefix>.dot`, `<prefix>.json` and `<prefix>.svg`; the first error, if any.
pub fn write_all(g: &Graph, prefix: &Path) -> std::io::Result<()> {
    let with = |ext: &str| {
        let mut p = prefix.as_os_str().to_owned();
        p.push(ext);
        std::path::PathBuf::from(p)
    };
    std::fs::write(with(".dot"), dot(g))?;
    std::fs::write(with(".json"), json(g))?;
    std::fs::write(with(".svg"), crate::svg::svg(g))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Event;

    #[test]
    fn edges_into_and_out_of_groups_are_marked() {
        let mut g = Graph::default();
        // A writer, two mutexinoutset members, a reader; then inoutset after the reader.
        for id in 1..=5 {
            g.apply(Event::AddTask { id, function: 1, priority: 0 });
        }
        for (id, kind) in [(1, 3), (2, 4), (3, 4), (4, 1), (5, 7)] {
            g.apply(Event::Access { id, addr: 0x10, kind });
        }
        for (pred, succ) in [(1, 2), (1, 3), (2, 4), (3, 4), (4, 5)] {
            g.apply(Event::AddDependency { succ, pred, addr: 0x10 });
        }
        let groups: Vec<_> = g.edges.iter().map(|e| e.group()).collect();
        assert_eq!(
            groups,
            [Some("mutexinoutset"); 4].into_iter().chain([Some("inoutset")]).collect::<Vec<_>>()
        );
        let d = dot(&g);
        assert_eq!(d.matches("style=dashed").count(), 4, "{d}");
        assert_eq!(d.matches("style=dotted").count(), 1, "{d}");
        assert!(d.contains("t2 -> t4 [label=\"0x10\\nmutexinoutset\""), "{d}");
        let j: serde_json::Value = serde_json::from_str(&json(&g)).unwrap();
        assert_eq!(j["edges"][2]["from_access"], "mutexinoutset");
        assert_eq!(j["edges"][2]["to_access"], "in");
        assert_eq!(j["tasks"][4]["accesses"], serde_json::json!([{"address": "0x10", "type": "inoutset"}]));
    }

    #[test]
    fn dot_and_json_hold_every_task_and_edge() {
        let mut g = Graph::default();
        g.apply(Event::RegisterFunction { id: 1, name: "a \"quoted\" name".into() });
        g.apply(Event::AddTask { id: 5, function: 1, priority: 0 });
        g.apply(Event::AddTask { id: 6, function: 1, priority: 3 });
        g.apply(Event::AddDependency { succ: 6, pred: 5, addr: 0x10 });
        let d = dot(&g);
        assert!(d.contains("t5 -> t6 [label=\"0x10\", color=red"), "{d}");
        assert!(d.contains("a \\\"quoted\\\" name"), "{d}");
        let j: serde_json::Value = serde_json::from_str(&json(&g)).unwrap();
        assert_eq!(j["tasks"][1]["priority"], 3);
        assert_eq!(j["edges"][0]["address"], "0x10");
        assert!(j["edges"][0]["from_access"].is_null());
        assert_eq!(j["functions"][0]["name"], "a \"quoted\" name");
        assert_eq!(j["critical_path"], serde_json::json!([5, 6]));
        assert!(j["tasks"][0]["start_ns"].is_null());
    }
}
