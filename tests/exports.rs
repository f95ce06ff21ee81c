//! The exported symbol lists (`abi/exports.txt`, `abi/gomp.txt`, `abi/omp-versions.txt`) are
//! data: this checks the built library against them (exactly those symbols: each of the first in
//! libomp's version node `VERSION`, each `GOMP_*` entry in its libgomp node, each `omp_*`
//! routine also under its libgomp `OMP_*` node), the soname and version nodes, and that every
//! `extern "C"` entry of kmp-abi is listed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let lib = exe.parent().and_then(Path::parent).unwrap().join("libomp.so");
    assert!(lib.exists(), "{} missing: build the library first", lib.display());
    lib
}

fn listed() -> BTreeSet<String> {
    std::fs::read_to_string(root().join("abi/exports.txt"))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

/// The rows of a data file in `abi/` (comments and blank lines left out), split into words.
fn rows(file: &str) -> Vec<Vec<String>> {
    std::fs::read_to_string(root().join("abi").join(file))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

fn tool(name: &str, args: &[&str], lib: &Path) -> String {
    let out = Command::new(name).args(args).arg(lib).output().unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(out.status.success(), "{name} failed");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn library_exports_exactly_the_lists_in_their_version_nodes() {
    let lib = library();
    let nm = tool("nm", &["-D", "--defined-only"], &lib);
    // (name, version, default version?)
    let mut exported = BTreeSet::new();
    for line in nm.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (kind, sym) = (f[f.len() - 2], f[f.len() - 1]);
        if kind == "A" {
            continue; // version node definitions
        }
        let (name, version, default) = match sym.split_once("@@") {
            Some((n, v)) => (n, v, true),
            None => {
                let (n, v) = sym.split_once('@').unwrap_or_else(|| panic!("{sym} has no version"));
                (n, v, false)
            }
        };
        exported.insert((name.to_string(), version.to_string(), default));
    }
    let mut want: BTreeSet<(String, String, bool)> =
        listed().into_iter().map(|n| (n, "VERSION".to_string(), true)).collect();
    want.extend(rows("gomp.txt").into_iter().map(|r| (r[0].clone(), r[1].clone(), true)));
    want.extend(rows("omp-versions.txt").into_iter().map(|r| (r[0].clone(), r[1].clone(), false)));
    let extra: Vec<_> = exported.difference(&want).collect();
    let missing: Vec<_> = want.difference(&exported).collect();
    assert!(
        extra.is_empty() && missing.is_empty(),
        "exported but not listed: {extra:?}; listed but missing: {missing:?}"
    );
}

#[test]
fn soname_and_version_nodes() {
    let lib = library();
    let dynamic = tool("readelf", &["-d"], &lib);
    assert!(dynamic.contains("Library soname: [libomp.so.5]"), "{dynamic}");
    let versions = tool("readelf", &["-V"], &lib);
    // The node names of LLVM's libomp 19 (`readelf -V /usr/lib/llvm-19/lib/libomp.so.5`).
    for node in [
        "VERSION",
        "OMP_1.0",
        "OMP_2.0",
        "OMP_3.0",
        "OMP_3.1",
        "OMP_4.0",
        "OMP_4.5",
        "OMP_5.0",
        "GOMP_1.0",
        "GOMP_2.0",
        "GOMP_3.0",
        "GOMP_4.0",
        "GOMP_4.5",
        "GOMP_5.0",
        "GOMP_5.0.1",
        // libgomp's (gcc 12) that libomp 19 lacks: a gcc binary needing one would not load.
        "OMP_5.0.1",
        "OMP_5.0.2",
        "OMP_5.1",
        "GOMP_4.0.1",
        "GOMP_5.1",
    ] {
        assert!(versions.contains(&format!("Name: {node}\n")), "node {node} missing:\n{versions}");
    }
}

#[test]
fn every_abi_entry_is_listed() {
    let want = listed();
    let mut entries = BTreeSet::new();
    let mut dirs = vec![root().join("kmp-abi/src"), root().join("kmp-abi/shim")];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            if e.path().is_dir() {
                dirs.push(e.path());
                continue;
            }
            let text = std::fs::read_to_string(e.path()).unwrap();
            for w in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                let entry_like = w.starts_with("__kmpc_")
                    || w.starts_with("omp_")
                    || w.starts_with("kmp_")
                    || w.starts_with("GOMP_");
                // Prefixes in comments ("__kmpc_dispatch_*") are not names.
                if entry_like && !w.ends_with('_') {
                    entries.insert(w.to_string());
                }
            }
        }
    }
    // Names that appear in the sources but are types, not entries.
    let not_entries = [
        "omp_lock_t",
        "omp_nest_lock_t",
        "omp_sync_hint_t",
        "kmp_critical_name",
        "kmp_dim",
        "kmp_depend_info",
        "kmp_task_red_input_t",
        "kmp_taskred_input_t",
        "kmp_task_t",
        "omp_alloctrait_t",
        "omp_null_allocator",
        "omp_pause_soft",
        "kmp_affinity_mask_t",
        "kmp_base_depnode_t",
        "omp_interop_fr_t",
        "omp_interop_none",
        "omp_irc_empty",
        "omp_irc_no_value",
        "omp_irc_other",
        "omp_pause_hard",
        "omp_all_memory",
        "omp_control_tool_notool",
        "omp_control_tool_nocallback",
        "kmp_cancel_kind_t",
    ];
    let gomp: BTreeSet<String> = rows("gomp.txt").into_iter().map(|r| r[0].clone()).collect();
    let unlisted: Vec<_> = entries
        .iter()
        .filter(|e| !want.contains(*e) && !gomp.contains(*e) && !not_entries.contains(&e.as_str()))
        .collect();
    assert!(unlisted.is_empty(), "entries in kmp-abi that abi/ does not list: {unlisted:?}");
}
