//! What the integration tests that run C programs on our library share. (Each test binary
//! uses a part of it.)
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The directory of the test executable's profile (`target/<profile>`).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent().and_then(Path::parent).expect("target/<profile>/deps/<test>").to_path_buf()
}

pub struct Lib {
    /// Our library, `target/<profile>/libomp.so` (or `$OXIOMP_LIB`).
    pub so: PathBuf,
    /// A directory holding only `libomp.so.5` → our library.
    pub dir: PathBuf,
}

/// Our library, and a directory to put on LD_LIBRARY_PATH for it (made once: tests run in
/// parallel).
pub fn lib() -> &'static Lib {
    static LIB: OnceLock<Lib> = OnceLock::new();
    LIB.get_or_init(|| {
        let so =
            std::env::var_os("OXIOMP_LIB").map_or_else(|| profile_dir().join("libomp.so"), PathBuf::from);
        let so = so.canonicalize().unwrap_or_else(|_| {
            panic!("our library {} is missing: build it first (cargo build)", so.display())
        });
        let dir = profile_dir().join("oxiomp-ld");
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("libomp.so.5");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&so, &link).unwrap();
        Lib { so, dir }
    })
}

/// Removes the caller's OpenMP, runtime, loader and tracing settings from `c`'s environment.
pub fn clean_env(c: &mut Command) {
    for (k, _) in std::env::vars() {
        if k.starts_with("OMP_") || k.starts_with("KMP_") || k.starts_with("LD_") || k.starts_with("OVNI") {
            c.env_remove(k);
        }
    }
}
