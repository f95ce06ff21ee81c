//! Links the drop-in library: soname `libomp.so.5` and a version script generated from the data
//! in `abi/`:
//! - `exports.txt`: every `__kmpc_*`, `omp_*`, `kmp_*`, ... entry, in libomp's node `VERSION`
//!   (binaries built against LLVM's libomp ask for `omp_get_thread_num@VERSION`);
//! - `gomp.txt`: each `GOMP_*` entry in the libgomp node gcc's binaries ask for;
//! - `omp-versions.txt`: the `omp_*` routines also under libgomp's `OMP_*` nodes, as entries of
//!   their own (`name@OMP_x`, not the default version) that jump to the routine: a small
//!   assembly file made here, whose `.symver` directives name them.
//!
//! libgomp's node chains (`OMP_1.0` .. `OMP_5.1`, `GOMP_1.0` .. `GOMP_5.1`, `GOACC_2.0` ..
//! `GOACC_2.0.2`, each a child of the one before) are all defined: a binary whose list of
//! needed versions names one the library lacks does not load.

use std::fmt::Write as _;

const NODES_OMP: [&str; 10] = [
    "OMP_1.0",
    "OMP_2.0",
    "OMP_3.0",
    "OMP_3.1",
    "OMP_4.0",
    "OMP_4.5",
    "OMP_5.0",
    "OMP_5.0.1",
    "OMP_5.0.2",
    "OMP_5.1",
];
const NODES_GOMP: [&str; 9] = [
    "GOMP_1.0",
    "GOMP_2.0",
    "GOMP_3.0",
    "GOMP_4.0",
    "GOMP_4.0.1",
    "GOMP_4.5",
    "GOMP_5.0",
    "GOMP_5.0.1",
    "GOMP_5.1",
];
const NODES_GOACC: [&str; 3] = ["GOACC_2.0", "GOACC_2.0.1", "GOACC_2.0.2"];

/// The lines of a data file, without comments and blank lines, split into words.
fn rows(path: &str) -> Vec<Vec<String>> {
    println!("cargo:rerun-if-changed={path}");
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

fn main() {
    let out = std::env::var("OUT_DIR").expect("OUT_DIR");
    let exports = rows("abi/exports.txt");
    let gomp = rows("abi/gomp.txt");
    let aliases = rows("abi/omp-versions.txt");

    let mut script = String::from("VERSION {\n  global:\n");
    for r in &exports {
        writeln!(script, "    {};", r[0]).unwrap();
    }
    script.push_str("  local: *;\n};\n");
    for chain in [&NODES_OMP[..], &NODES_GOMP[..], &NODES_GOACC[..]] {
        let mut parent = String::new();
        for node in chain {
            let names: Vec<&str> = gomp.iter().filter(|r| r[1] == *node).map(|r| r[0].as_str()).collect();
            assert!(
                names.iter().all(|n| n.starts_with("GOMP_") || n.starts_with("GOACC_")),
                "abi/gomp.txt: only GOMP_ and GOACC_ names go into libgomp's nodes"
            );
            script.push_str(&format!("{node} {{\n"));
            if !names.is_empty() {
                script.push_str("  global:\n");
                for n in names {
                    writeln!(script, "    {n};").unwrap();
                }
            }
            writeln!(script, "}} {parent};").unwrap();
            parent = node.to_string();
        }
    }
    for r in &gomp {
        let known = NODES_GOMP.contains(&r[1].as_str()) || NODES_GOACC.contains(&r[1].as_str());
        assert!(known, "abi/gomp.txt: unknown node {}", r[1]);
    }

    // The OMP_* entries: each a jump to its routine, named `name@node` by `.symver`.
    let mut asm = String::from(".text\n");
    for r in &aliases {
        let (name, node) = (&r[0], &r[1]);
        let target = r.get(2).unwrap_or(name);
        assert!(NODES_OMP.contains(&node.as_str()), "abi/omp-versions.txt: unknown node {node}");
        let local = format!("oxiomp_{}_{}", node.replace('.', "_"), name);
        write!(
            asm,
            ".globl {local}\n.type {local}, @function\n.p2align 4\n{local}:\n  jmp {target}@PLT\n\
             .size {local}, .-{local}\n.symver {local}, {name}@{node}\n"
        )
        .unwrap();
    }
    asm.push_str(".section .note.GNU-stack,\"\",@progbits\n");
    let asm_path = format!("{out}/omp_versions.S");
    std::fs::write(&asm_path, asm).expect("write omp_versions.S");
    let objects = cc::Build::new().file(&asm_path).compile_intermediates();
    for o in objects {
        println!("cargo:rustc-cdylib-link-arg={}", o.display());
    }

    let path = format!("{out}/libomp.map");
    std::fs::write(&path, script).expect("write version script");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={path}");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libomp.so.5");

    preload_libgomp(&out);
}

/// Makes `libgomp.so.1` for `LD_PRELOAD`, beside the library (`target/<profile>/`): a library
/// with no code whose soname is `libgomp.so.1`, that defines libgomp's version nodes and needs
/// `libomp.so.5` from its own directory (a link to the library, made here too). Preloaded, it
/// answers a gcc program's need for `libgomp.so.1` (so Debian's libgomp is not mapped too), and
/// every symbol the program asks for resolves in oxiomp. (Our library itself, whose soname is
/// `libomp.so.5`, preloaded under any name leaves that need to the system's libgomp.)
fn preload_libgomp(out: &str) {
    let dir = std::path::Path::new(out);
    let empty = dir.join("empty.c");
    std::fs::write(&empty, "").expect("write empty.c");
    let mut nodes = String::new();
    for chain in [&NODES_OMP[..], &NODES_GOMP[..], &NODES_GOACC[..]] {
        let mut parent = "";
        for node in chain {
            writeln!(nodes, "{node} {{ }} {parent};").unwrap();
            parent = node;
        }
    }
    let map = dir.join("libgomp-nodes.map");
    std::fs::write(&map, nodes).expect("write libgomp-nodes.map");
    let cc = cc::Build::new().cargo_metadata(false).get_compiler();
    let link = |args: &[&std::ffi::OsStr]| {
        let status = cc.to_command().args(args).status().expect("run the C compiler");
        assert!(status.success(), "linking {args:?} failed");
    };
    // The soname the shim needs, from a stand-in (our library is linked after this script).
    let stub = dir.join("libomp.so.5");
    link(&[
        "-shared".as_ref(),
        "-fPIC".as_ref(),
        "-Wl,-soname,libomp.so.5".as_ref(),
        "-o".as_ref(),
        stub.as_os_str(),
        empty.as_os_str(),
    ]);
    let shim = dir.join("libgomp.so.1");
    let version_script = format!("-Wl,--version-script={}", map.display());
    link(&[
        "-shared".as_ref(),
        "-fPIC".as_ref(),
        "-Wl,-soname,libgomp.so.1".as_ref(),
        version_script.as_ref(),
        "-Wl,--no-as-needed".as_ref(),
        "-Wl,-rpath,$ORIGIN".as_ref(),
        "-o".as_ref(),
        shim.as_os_str(),
        empty.as_os_str(),
        stub.as_os_str(),
    ]);
    // OUT_DIR is target/<profile>/build/<pkg>-<hash>/out.
    let Some(profile) = dir.ancestors().nth(3) else { return };
    std::fs::copy(&shim, profile.join("libgomp.so.1")).expect("copy libgomp.so.1");
    let so5 = profile.join("libomp.so.5");
    let _ = std::fs::remove_file(&so5);
    std::os::unix::fs::symlink("libomp.so", &so5).expect("link libomp.so.5");
}
