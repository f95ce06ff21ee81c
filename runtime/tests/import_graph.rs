//! The import graph of `runtime/src`: which modules use which (`use crate::..`, `use super::..`,
//! inline `crate::..` paths, a re-export followed to the module that defines the name), outside
//! test code.
//!
//! The thread descriptor is the engine's lowest layer but for the primitives: `thread` and the
//! per-thread states it holds (the fork's, worksharing's, tasking's, the task block cache) use
//! none of the modules that use them, so `thread` is on no cycle. Two cycles remain, named in
//! `docs/architecture.md` ("The import graph") with the reason for each: the descriptors a
//! team and its tasks are made of, which point at each other, and the process-wide root with
//! the services it starts. This test fails when `thread` or a module below it joins a cycle,
//! when a module outside a named cycle joins one, or when a third cycle appears.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The cycles `docs/architecture.md` names. A module may leave one; none may join.
const CYCLES: &[(&str, &[&str])] = &[
    (
        // A team holds its implicit tasks and its task pool; a task points at its team and
        // holds its dependence nodes, which point back at tasks.
        "the team and task descriptors",
        &["task::deps", "task::descriptor", "task::pool", "task::prio", "team::descriptor"],
    ),
    (
        // The process-wide root holds the settings, starts worker threads and the hidden
        // helpers, and keeps the threadprivate table; each of those reads the settings or the
        // thread table through it.
        "the runtime root and its services",
        &[
            "affinity_format",
            "env",
            "hidden",
            "lifecycle",
            "query",
            "registry",
            "task",
            "task::create",
            "task::finish",
            "task::run",
            "task::submit",
            "task::wait",
            "threadprivate",
        ],
    ),
];

/// Modules that must stay on no cycle: the thread descriptor, the per-thread states it holds,
/// and the primitives below everything.
const ACYCLIC: &[&str] = &[
    "thread",
    "task::state",
    "task::cache",
    "team::fork_state",
    "worksharing::state",
    "worksharing::dispatch",
    "barrier",
    "icv",
    "places",
    "sync",
    "sync::wait",
    "sync::sleep",
    "lock",
    "error",
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
    resolve_item(path, from, mods).map(|(m, _)| m)
}

/// [`resolve`], with the name the path goes on to in that module, if any.
fn resolve_item(
    path: &str,
    from: &str,
    mods: &BTreeMap<String, PathBuf>,
) -> Option<(String, Option<String>)> {
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
    (0..=full.len())
        .rev()
        .map(|n| (full[..n].join("::"), full.get(n).map(|s| s.to_string())))
        .find(|(m, _)| mods.contains_key(m))
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
    // Names a module re-exports (`pub use a::B;`, `pub(crate) use a::{B, C}`): a path through
    // the re-export leads to the module that defines the name.
    let mut reexports: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (m, (code, _)) in &code {
        for decl in code.split(';') {
            // The declaration, after any attributes (`#[cfg(..)]`) on the lines before it.
            let decl = decl
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with("#["))
                .collect::<Vec<_>>()
                .join(" ");
            let Some(tree) =
                ["pub use ", "pub(crate) use ", "pub(super) use "].iter().find_map(|p| decl.strip_prefix(p))
            else {
                continue;
            };
            for path in expand(tree) {
                let name = path.rsplit("::").next().unwrap_or("").to_string();
                if let Some(target) = resolve(&path, m, &mods) {
                    reexports.entry(m.clone()).or_default().insert(name, target);
                }
            }
        }
    }
    // A re-export of a re-export leads on to the defining module.
    for _ in 0..4 {
        let snapshot = reexports.clone();
        for names in reexports.values_mut() {
            for (name, target) in names.iter_mut() {
                if let Some(next) = snapshot.get(target.as_str()).and_then(|r| r.get(name)) {
                    *target = next.clone();
                }
            }
        }
    }
    let through = |path: &str, from: &str| -> Option<String> {
        let (target, next) = resolve_item(path, from, &mods)?;
        let via = next.and_then(|n| reexports.get(&target).and_then(|r| r.get(&n)).cloned());
        Some(via.unwrap_or(target))
    };
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
            paths.iter().filter_map(|p| through(p, m)).filter(|t| t != m && !t.is_empty()).collect();
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

/// What is wrong with the cycles `found`: a module of `ACYCLIC` on one, a cycle that is not
/// within one of `CYCLES`.
fn cycle_faults(found: &[BTreeSet<String>]) -> Vec<String> {
    let mut faults = Vec::new();
    for c in found {
        for m in ACYCLIC {
            if c.contains(*m) {
                faults.push(format!("{m} is on an import cycle: {c:?}"));
            }
        }
        let named = CYCLES.iter().find(|(_, ms)| c.iter().all(|m| ms.contains(&m.as_str())));
        if named.is_none() {
            faults.push(format!(
                "an import cycle outside the named ones: {c:?}; break the new edge, or name it in \
                 docs/architecture.md and CYCLES with the reason"
            ));
        }
    }
    faults
}

#[test]
fn thread_is_on_no_import_cycle_and_the_named_cycles_do_not_grow() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let g = graph(&src);
    // The reader sees the edges it must: a sanity check of the parsing, on edges that exist.
    assert!(g["thread"].contains("team::descriptor"), "thread uses the team's descriptor: {:?}", g["thread"]);
    assert!(g["task::deps"].contains("task::descriptor"), "{:?}", g["task::deps"]);
    assert!(g["barrier"].contains("sync::wait"), "{:?}", g["barrier"]);
    // Through a re-export at the crate root (`crate::Thread`).
    assert!(g["affinity_format"].contains("thread"), "{:?}", g["affinity_format"]);
    let faults = cycle_faults(&cycles(&g));
    assert!(faults.is_empty(), "{faults:#?}");
}

#[test]
fn a_cycle_through_thread_is_found_and_refused() {
    fn edge(g: &mut BTreeMap<String, BTreeSet<String>>, a: &str, b: &str) {
        g.entry(a.to_string()).or_default().insert(b.to_string());
        g.entry(b.to_string()).or_default();
    }
    let mut g = BTreeMap::new();
    edge(&mut g, "thread", "task::state");
    edge(&mut g, "task::state", "task::descriptor");
    edge(&mut g, "task::descriptor", "task::deps");
    edge(&mut g, "task::deps", "task::descriptor");
    edge(&mut g, "task", "thread");
    assert!(cycle_faults(&cycles(&g)).is_empty(), "{:?}", cycles(&g));
    edge(&mut g, "task::descriptor", "task");
    let found = cycles(&g);
    assert_eq!(found.len(), 1);
    assert!(found[0].contains("thread") && found[0].contains("task"), "{found:?}");
    let faults = cycle_faults(&found);
    assert!(faults.iter().any(|f| f.starts_with("thread is on")), "{faults:?}");
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
