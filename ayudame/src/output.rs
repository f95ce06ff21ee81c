//! The task graph written out: DOT (for Graphviz), JSON (for programs) and SVG (drawn here,
//! see `svg.rs`), each in one pass over the graph.

use std::fmt::Write as _;
use std::path::Path;

use crate::graph::Graph;

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
/// its address), the critical path in red.
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
        let extra = if critical.has_edge(e.pred, e.succ) { ", color=red, penwidth=3" } else { "" };
        let _ = writeln!(out, "  t{} -> t{} [label=\"{:#x}\"{extra}];", e.pred, e.succ, e.addr);
    }
    out.push_str("}\n");
    out
}

/// The graph as JSON: `runtime`, `barriers`, `functions` [{id, name}], `tasks` [{id,
/// function, priority, epoch, thread, created_ns, queued_ns, start_ns, end_ns, removed_ns}]
/// (null for what did not happen), `edges` [{from, to, address}], `critical_path` [task ids].
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
             \"queued_ns\":{},\"start_ns\":{},\"end_ns\":{},\"removed_ns\":{}}}",
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
    }
    out.push_str("],\"edges\":[");
    for (k, e) in g.edges.iter().enumerate() {
        let sep = if k > 0 { "," } else { "" };
        let _ = write!(out, "{sep}{{\"from\":{},\"to\":{},\"address\":\"{:#x}\"}}", e.pred, e.succ, e.addr);
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
        assert_eq!(j["functions"][0]["name"], "a \"quoted\" name");
        assert_eq!(j["critical_path"], serde_json::json!([5, 6]));
        assert!(j["tasks"][0]["start_ns"].is_null());
    }
}
