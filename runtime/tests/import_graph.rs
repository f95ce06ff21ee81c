//! The import graph of `runtime/src`: which modules use which (`use crate::..`, `use super::..`,
//! inline `crate::..` paths), outside test code. The engine's descriptors point at each other
//! (a thread at its team and task, a team at its threads, a task at its team), and the
//! subsystems reach their per-thread state through the thread's handle, so the modules that
//! define them form one cycle; `docs/architecture.md` names it and says why. This test keeps it
//! from growing: any module outside the named set that joins a cycle, or a second cycle, fails.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The modules of the one cycle (`docs/architecture.md`, "The import graph"). A module may
/// leave it; none may join.
const CYCLE: &[&str] = &[
    "affinity_format",
    "current",
    "env",
    "hidden",
    "query",
    "registry",
    "task",
    "task::cache",
    "task::deps",
    "task::descriptor",
    "task::pool",
    "task::prio",
    "task::state",
    "task::wait",
    "team",
    "team::fork_state",
    "thread",
    "threadprivate",
    "worksharing",
    "worksharing::dispatch",
    "worksharing::state",
];

/// Every module file of `src`: module path ("" for lib.rs) -> file.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).expect("under src").with_extension("");
            let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
                parts.pop();
            }
            out.insert(parts.join("::"), path);
        }
    }
    out
}

/// The text of a module without comments and without its test module (an inline `mod` under a
/// `#[cfg(..test..)]`, which the files keep last), and the names of its child modules that
/// exist only in tests (`#[cfg(test)] mod tests;`).
fn code_of(text: &str) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut test_children = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(") && t.contains("test") {
            let next = lines.peek().map(|l| l.trim()).unwrap_or("");
            let decl = next.trim_start_matches("pub(crate) ").trim_start_matches("pub ");
            if let Some(name) = decl.strip_prefix("mod ") {
                if let Some(name) = name.strip_suffix(';') {
                    test_children.push(name.trim().to_string());
                    continue;
                }
                break;
            }
        }
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    (out, test_children)
}

/// Expands a use tree (`a::{b, c::{d, e}}`) into its paths.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or("").trim();
        return vec![path.to_string()];
    };
    let prefix = tree[..open].trim_end_matches("::");
    let close = tree.rfind('}').filter(|&c| c > open).unwrap_or(tree.len());
    let inner = &tree[open + 1..close];
    let mut items = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    items
        .into_iter()
        .filter(|i| !i.trim().is_empty())
        .flat_map(expand)
        .map(|p| if p == "self" { prefix.to_string() } else { format!("{prefix}::{p}") })
        .collect()
}

/// The module (of `mods`) a path names, from module `from`: the longest module prefix of the
/// path made absolute.
fn resolve(path: &str, from: &str, mods: &BTreeMap<String, PathBuf>) -> Option<String> {
    let mut segs: Vec<&str> = path.split("::").map(str::trim).filter(|s| !s.is_empty()).collect();
    let mut base: Vec<&str> = if from.is_empty() { vec![] } else { from.split("::").collect() };
    match segs.first().copied() {
        Some("crate") => {
            base.clear();
            segs.remove(0);
        }
        Some("super") => {
            while segs.first() == Some(&"super") {
                base.pop();
                segs.remove(0);
            }
        }
        Some("self") => {
            segs.remove(0);
        }
        // A child module named without `self::` (`use state::X` in a module with `mod state`).
        Some(first) if mods.contains_key(&[from, first].join("::").trim_start_matches("::").to_string()) => {}
        _ => return None,
    }
    let full: Vec<&str> = base.into_iter().chain(segs).collect();
    (1..=full.len()).rev().map(|n| full[..n].join("::")).find(|m| mods.contains_key(m))
}

/// Module -> the modules it uses.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut mods = modules(src);
    let mut code = BTreeMap::new();
    for (m, file) in &mods {
        let (text, test_children) = code_of(&std::fs::read_to_string(file).expect("read module"));
        code.insert(m.clone(), (text, test_children));
    }
    // Test-only modules are not part of the graph.
    for (m, (_, children)) in code.clone() {
        for c in children {
            let child = if m.is_empty() { c } else { format!("{m}::{c}") };
            mods.remove(&child);
            code.remove(&child);
        }
    }
    let mut out = BTreeMap::new();
    for (m, (code, _)) in &code {
        let code = code.as_str();
        let mut paths = Vec::new();
        // `use` declarations (their trees may span lines).
        let mut rest = code;
        while let Some(i) = rest.find("use ") {
            let before = rest[..i].chars().last();
            rest = &rest[i + 4..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let end = rest.find(';').unwrap_or(rest.len());
            paths.extend(expand(&rest[..end]));
        }
        // Inline paths.
        for (i, _) in code.match_indices("crate::") {
            if code[..i].chars().last().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let tail: String =
                code[i..].chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
            paths.push(tail);
        }
        let edges: BTreeSet<String> =
            paths.iter().filter_map(|p| resolve(p, m, &mods)).filter(|t| t != m && !t.is_empty()).collect();
        out.insert(m.clone(), edges);
    }
    out
}

/// The strongly connected components of more than one module (Tarjan).
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct State<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn the_one_import_cycle_does_not_grow() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let g = graph(&src);
    // The reader sees the edges it must: a sanity check of the parsing, on edges that exist.
    assert!(g["thread"].contains("team"), "thread uses team: {:?}", g["thread"]);
    assert!(g["task::deps"].contains("task::descriptor"), "{:?}", g["task::deps"]);
    assert!(g["barrier"].contains("sync::wait"), "{:?}", g["barrier"]);
    let found = cycles(&g);
    let allowed: BTreeSet<String> = CYCLE.iter().map(|m| m.to_string()).collect();
    assert!(found.len() <= 1, "more than one import cycle: {found:#?}");
    for c in &found {
        let joined: Vec<&String> = c.difference(&allowed).collect();
        assert!(
            joined.is_empty(),
            "modules joined the import cycle: {joined:?} (the cycle: {c:?}); break the new edge, or \
             name the module in docs/architecture.md and CYCLE with the reason"
        );
    }
    // The sync primitives, the ICVs, places and the barrier stay below it.
    for m in ["barrier", "icv", "places", "sync", "sync::wait", "sync::sleep", "lock", "error"] {
        assert!(found.iter().all(|c| !c.contains(m)), "{m} is on the cycle");
    }
}

#[test]
fn use_trees_expand() {
    assert_eq!(
        expand("crate::a::{b, c::{d, e as f}, self}"),
        ["crate::a::b", "crate::a::c::d", "crate::a::c::e", "crate::a"]
    );
    let mut mods = BTreeMap::new();
    for m in ["task", "task::state", "thread", "sync::wait"] {
        mods.insert(m.to_string(), PathBuf::new());
    }
    assert_eq!(resolve("super::state::ThreadState", "task::prio", &mods).as_deref(), Some("task::state"));
    assert_eq!(resolve("crate::sync::wait::Spin", "thread", &mods).as_deref(), Some("sync::wait"));
    assert_eq!(resolve("state::ThreadState", "task", &mods).as_deref(), Some("task::state"));
    assert_eq!(resolve("std::cell::Cell", "task", &mods), None);
}
