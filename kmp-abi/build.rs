//! Compiles the C/asm shim: the variadic `__kmpc_fork_call` / `__kmpc_fork_teams` entries, the
//! microtask invoker, the `__kmpc_atomic_*` entries (whose operand types Rust lacks), the weak
//! `ompt_start_tool` (see `shim/ompt.c`), libgomp's variadic `GOMP_doacross_*wait`, and the
//! entries that note their caller for the run-time checks (`shim/caller.c`).
//! Linked whole-archive so the entries stay in the library although no Rust code calls them.

fn main() {
    println!("cargo:rerun-if-changed=shim/fork.c");
    println!("cargo:rerun-if-changed=shim/invoke.S");
    println!("cargo:rerun-if-changed=shim/atomic.c");
    println!("cargo:rerun-if-changed=shim/ompt.c");
    println!("cargo:rerun-if-changed=shim/gomp.c");
    println!("cargo:rerun-if-changed=shim/caller.c");
    cc::Build::new()
        .file("shim/fork.c")
        .file("shim/invoke.S")
        .file("shim/atomic.c")
        .file("shim/ompt.c")
        .file("shim/gomp.c")
        .file("shim/caller.c")
        .flag_if_supported("-fno-omit-frame-pointer")
        .cargo_metadata(false)
        .compile("oxiomp_shim");
    let out = std::env::var("OUT_DIR").expect("OUT_DIR");
    println!("cargo:rustc-link-search=native={out}");
    println!("cargo:rustc-link-lib=static:+whole-archive=oxiomp_shim");
}
