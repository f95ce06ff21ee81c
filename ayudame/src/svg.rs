//! The task graph drawn as SVG: tasks in layers (a task one layer below its lowest
//! predecessor; the tasks added after a barrier below the barrier's line), a box per task
//! coloured by function with its id, thread and run time, an arrow per edge labelled with its
//! address, the critical path in red, a legend of the functions. Linear in the graph's size: a
//! layer wider than [`COLUMNS`] tasks wraps onto more rows.
//!
//! An edge's address is written beside it (once for the edges from one task, or into one,
//! through the same address), and is its tooltip (`<title>`) in a viewer; a graph with more
//! than two edges a task shows it as the tooltip only. An edge into or out of a
//! `mutexinoutset` group is dashed, an `inoutset` one dotted, its label naming the group.

use std::fmt::Write as _;

use crate::graph::Graph;
use crate::output::{colour, duration};

/// Tasks per row of a layer.
pub const COLUMNS: usize = 32;
const W: usize = 170;
const H: usize = 46;
const GAP_X: usize = 24;
const GAP_Y: usize = 56;
const MARGIN: usize = 20;
const LEGEND: usize = 28;

/// `text` with XML's special characters escaped.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The width of a function's entry in the legend.
fn legend_entry(name: &str) -> usize {
    24 + 7 * name.chars().count()
}

/// Each task's layer, in the order the tasks were added (which is a topological order).
fn layers(g: &Graph) -> Vec<usize> {
    let preds = g.predecessors();
    let mut layer = vec![0; g.tasks.len()];
    let (mut epoch, mut base, mut deepest) = (0, 0, None::<usize>);
    for (i, t) in g.tasks.iter().enumerate() {
        if t.epoch != epoch {
            epoch = t.epoch;
            base = deepest.map_or(0, |d| d + 1);
        }
        layer[i] = preds[i].iter().map(|&p| layer[p] + 1).max().unwrap_or(0).max(base);
        deepest = Some(deepest.map_or(layer[i], |d: usize| d.max(layer[i])));
    }
    layer
}

/// The graph as an SVG document.
pub fn svg(g: &Graph) -> String {
    let layer = layers(g);
    let depth = layer.iter().max().map_or(0, |d| d + 1);
    let mut count = vec![0usize; depth];
    for &l in &layer {
        count[l] += 1;
    }
    // The first row of each layer (a layer of more than COLUMNS tasks takes several).
    let mut first_row = vec![0usize; depth + 1];
    for l in 0..depth {
        first_row[l + 1] = first_row[l] + count[l].div_ceil(COLUMNS).max(1);
    }
    let widest = count.iter().map(|&c| c.min(COLUMNS)).max().unwrap_or(0).max(1);
    let mut functions: Vec<_> = g.functions.iter().collect();
    functions.sort();
    let legend_width: usize = functions.iter().map(|(_, name)| legend_entry(name)).sum();
    let width = (2 * MARGIN + widest * (W + GAP_X)).max(2 * MARGIN + legend_width);
    let top = MARGIN + LEGEND * 2;
    let height = top + first_row[depth] * (H + GAP_Y) + MARGIN;
    let mut seen = vec![0usize; depth];
    let place: Vec<(usize, usize)> = layer
        .iter()
        .map(|&l| {
            let k = seen[l];
            seen[l] += 1;
            let row = first_row[l] + k / COLUMNS;
            (MARGIN + (k % COLUMNS) * (W + GAP_X), top + row * (H + GAP_Y))
        })
        .collect();
    let critical = g.critical();

    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         font-family=\"sans-serif\" font-size=\"11\">"
    );
    out.push_str(
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" \
         markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker>\
         <marker id=\"arrow-critical\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" \
         markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#d00\"/></marker></defs>\n",
    );
    let _ = writeln!(out, "<rect width=\"{width}\" height=\"{height}\" fill=\"white\"/>");
    // The legend: one swatch per function, and the critical path's colour.
    let mut x = MARGIN;
    for (id, name) in functions {
        let _ = writeln!(
            out,
            "<g class=\"legend\"><rect x=\"{x}\" y=\"{MARGIN}\" width=\"14\" height=\"14\" fill=\"{}\" \
             stroke=\"#333\"/><text x=\"{}\" y=\"{}\">{}</text></g>",
            colour(*id),
            x + 18,
            MARGIN + 11,
            xml(name)
        );
        x += legend_entry(name);
    }
    let _ = writeln!(
        out,
        "<text x=\"{MARGIN}\" y=\"{}\" fill=\"#d00\">critical path ({} tasks) in red; {} tasks, {} edges, {} barriers{}</text>",
        MARGIN + LEGEND + 11,
        critical.path.len(),
        g.tasks.len(),
        g.edges.len(),
        g.barriers,
        if g.edges.iter().any(|e| e.group().is_some()) {
            "; dashed: into or out of a mutexinoutset group, dotted: an inoutset one"
        } else {
            ""
        }
    );
    // Barrier lines: above the first layer of each part after a barrier.
    let mut epoch = 0;
    for (i, t) in g.tasks.iter().enumerate() {
        if t.epoch != epoch {
            epoch = t.epoch;
            let y = top + first_row[layer[i]] * (H + GAP_Y) - GAP_Y / 2;
            let _ = writeln!(
                out,
                "<g class=\"barrier\"><line x1=\"0\" y1=\"{y}\" x2=\"{width}\" y2=\"{y}\" stroke=\"#000\" \
                 stroke-width=\"2\" stroke-dasharray=\"8,4\"/><text x=\"{}\" y=\"{}\">barrier {epoch}</text></g>",
                MARGIN,
                y - 4
            );
        }
    }
    // Each edge's address is its tooltip; written beside it too unless edges are so many that
    // the labels would cover each other.
    let labelled = g.edges.len() <= 2 * g.tasks.len();
    let mut written = std::collections::HashSet::new();
    for e in &g.edges {
        let (Some(p), Some(s)) = (g.position(e.pred), g.position(e.succ)) else { continue };
        let ((px, py), (sx, sy)) = (place[p], place[s]);
        let (x1, y1, x2, y2) = (px + W / 2, py + H, sx + W / 2, sy);
        let hot = critical.has_edge(e.pred, e.succ);
        let (stroke, width, marker) =
            if hot { ("#d00", 2.5, "arrow-critical") } else { ("#555", 1.0, "arrow") };
        // Into or out of a concurrent group: dashed (mutexinoutset) or dotted (inoutset), the
        // group's kind after the address.
        let (dash, label) = match e.group() {
            Some(group) => (
                if group == "mutexinoutset" {
                    " stroke-dasharray=\"6,3\""
                } else {
                    " stroke-dasharray=\"2,3\""
                },
                format!("{:#x} {group}", e.addr),
            ),
            None => ("", format!("{:#x}", e.addr)),
        };
        let _ = write!(
            out,
            "<g class=\"edge\"><title>{label}</title><line x1=\"{x1}\" y1=\"{y1}\" x2=\"{x2}\" y2=\"{y2}\" \
             stroke=\"{stroke}\" stroke-width=\"{width}\"{dash} marker-end=\"url(#{marker})\"/>"
        );
        // A label another edge from the same task, or into the same task, already shows is
        // not written again (they would cover each other).
        let fresh =
            written.insert((e.pred, true, label.clone())) & written.insert((e.succ, false, label.clone()));
        if labelled && fresh {
            let _ = write!(
                out,
                "<text x=\"{}\" y=\"{}\" font-size=\"9\" fill=\"#444\">{label}</text>",
                (x1 + x2) / 2 + 3,
                (y1 + y2) / 2
            );
        }
        out.push_str("</g>\n");
    }
    for (i, t) in g.tasks.iter().enumerate() {
        let (x, y) = place[i];
        let (stroke, sw) = if critical.tasks[i] { ("#d00", 3) } else { ("#333", 1) };
        let thread = if t.thread >= 0 { format!("thread {}", t.thread) } else { "not run".to_string() };
        let _ = writeln!(
            out,
            "<g class=\"task\" id=\"task-{}\"><rect x=\"{x}\" y=\"{y}\" width=\"{W}\" height=\"{H}\" rx=\"5\" \
             fill=\"{}\" stroke=\"{stroke}\" stroke-width=\"{sw}\"/><text x=\"{}\" y=\"{}\" font-weight=\"bold\">{}</text>\
             <text x=\"{}\" y=\"{}\">#{} · {thread} · {}</text></g>",
            t.id,
            colour(t.function),
            x + 6,
            y + 17,
            xml(&g.function_name(t)),
            x + 6,
            y + 35,
            t.id,
            duration(t.run_time())
        );
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Event;

    #[test]
    fn a_task_is_drawn_below_its_predecessors_and_the_barriers_before_it() {
        let mut g = Graph::default();
        g.apply(Event::RegisterFunction { id: 1, name: "<f>".into() });
        for id in 1..=3 {
            g.apply(Event::AddTask { id, function: 1, priority: 0 });
        }
        g.apply(Event::AddDependency { succ: 3, pred: 1, addr: 1 });
        g.apply(Event::Barrier);
        g.apply(Event::AddTask { id: 4, function: 1, priority: 0 });
        assert_eq!(layers(&g), [0, 0, 1, 2]);
        let s = svg(&g);
        assert_eq!(s.matches("class=\"task\"").count(), 4);
        assert_eq!(s.matches("class=\"edge\"").count(), 1);
        assert_eq!(s.matches("class=\"barrier\"").count(), 1);
        assert!(s.contains("&lt;f&gt;") && !s.contains("<f>"));
    }

    #[test]
    fn a_wide_layer_wraps_onto_more_rows() {
        let mut g = Graph::default();
        for id in 1..=(3 * COLUMNS as i64) {
            g.apply(Event::AddTask { id, function: 1, priority: 0 });
        }
        let s = svg(&g);
        let width: usize = s.split("width=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        assert_eq!(width, 2 * MARGIN + COLUMNS * (W + GAP_X));
        let rows = s.matches(&format!("y=\"{}\"", MARGIN + LEGEND * 2)).count();
        assert_eq!(rows, COLUMNS, "one full row at the top");
    }
}
