//! Links the drop-in library: soname `libomp.so.5` and a version script with libomp's version
//! nodes (`VERSION` for every exported symbol, the `OMP_*` nodes present as in LLVM's libomp),
//! generated from the export list in `abi/exports.txt`.

use std::fmt::Write as _;

const VERSION_NODES_OMP: [&str; 7] =
    ["OMP_1.0", "OMP_2.0", "OMP_3.0", "OMP_3.1", "OMP_4.0", "OMP_4.5", "OMP_5.0"];
const VERSION_NODES_GOMP: [&str; 7] =
    ["GOMP_1.0", "GOMP_2.0", "GOMP_3.0", "GOMP_4.0", "GOMP_4.5", "GOMP_5.0", "GOMP_5.0.1"];

fn main() {
    println!("cargo:rerun-if-changed=abi/exports.txt");
    let list = std::fs::read_to_string("abi/exports.txt").expect("abi/exports.txt");
    let mut script = String::from("VERSION {\n  global:\n");
    for pat in list.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        writeln!(script, "    {pat};").unwrap();
    }
    script.push_str("  local: *;\n};\n");
    // libomp also defines the GOMP-compatibility nodes (OMP_1.0 .. OMP_5.0 and GOMP_1.0 ..
    // GOMP_5.0.1, each a child of the one before); they carry no symbols of ours (no GOMP_*
    // entry points yet) but are declared so `readelf -V` shows the same node names.
    for chain in [&VERSION_NODES_OMP[..], &VERSION_NODES_GOMP[..]] {
        let mut parent = String::new();
        for v in chain {
            writeln!(script, "{v} {{\n}} {parent};").unwrap();
            parent = v.to_string();
        }
    }
    let out = std::env::var("OUT_DIR").expect("OUT_DIR");
    let path = format!("{out}/libomp.map");
    std::fs::write(&path, script).expect("write version script");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={path}");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libomp.so.5");
}
