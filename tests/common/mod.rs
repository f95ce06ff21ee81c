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
    /// A directory holding `libomp.so.5` and `libgomp.so.1`, both → our library (the names
    /// clang's and gcc's programs ask the loader for).
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
        for name in ["libomp.so.5", "libgomp.so.1"] {
            let link = dir.join(name);
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(&so, &link).unwrap();
        }
        Lib { so, dir }
    })
}

/// Compiles the C file `src` with clang-19 and `flags` into `exe`, failing the test with the
/// compiler's messages if it does not build.
pub fn clang(src: &Path, exe: &Path, flags: &[&str]) {
    let o = Command::new("clang-19")
        .args(flags)
        .arg(src)
        .arg("-o")
        .arg(exe)
        .output()
        .expect("clang-19 (install it: scripts/setup.sh)");
    assert!(o.status.success(), "building {}: {}", src.display(), String::from_utf8_lossy(&o.stderr));
}

/// Builds `tests/<topic>/<name>.c` with clang-19 (`-fopenmp -O2 -Wall`, and `-g` if `debug`)
/// into `<exe>` in the profile's `<topic>-tests` directory. It is built in the sources'
/// directory, so that the program's locations name `name.c` as a user's build names its files;
/// each test gives its own `exe`, so that one test's build never replaces a file another test
/// is running.
pub fn clang_topic(topic: &str, name: &str, debug: bool, exe: &str) -> PathBuf {
    let src_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(topic);
    let dir = profile_dir().join(format!("{topic}-tests"));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join(exe);
    let mut c = Command::new("clang-19");
    c.args(["-fopenmp", "-O2", "-Wall"]);
    if debug {
        c.arg("-g");
    }
    let out =
        c.current_dir(&src_dir).arg(format!("{name}.c")).arg("-o").arg(&exe).output().expect("run clang-19");
    assert!(out.status.success(), "compiling {name}.c: {}", String::from_utf8_lossy(&out.stderr));
    exe
}

/// Compiles the C file `src` with gcc and `flags` into `exe`, failing the test with the
/// compiler's messages if it does not build.
pub fn gcc(src: &Path, exe: &Path, flags: &[&str]) {
    let o = Command::new("gcc").args(flags).arg(src).arg("-o").arg(exe).output().expect("gcc");
    assert!(o.status.success(), "building {}: {}", src.display(), String::from_utf8_lossy(&o.stderr));
}

/// Removes the caller's OpenMP, runtime, loader and tracing settings from `c`'s environment.
pub fn clean_env(c: &mut Command) {
    for (k, _) in std::env::vars() {
        if ["OMP_", "KMP_", "LD_", "OVNI", "OXIOMP_"].iter().any(|p| k.starts_with(p)) {
            c.env_remove(k);
        }
    }
}

/// ovni's emulator (`ovniemu`, built from `../shared/vendor` by `scripts/setup.sh`):
/// `$OVNIEMU`, or where the build script installs it.
pub fn ovniemu() -> &'static Path {
    static EMU: OnceLock<PathBuf> = OnceLock::new();
    EMU.get_or_init(|| {
        let p = std::env::var_os("OVNIEMU").map(PathBuf::from).unwrap_or_else(|| {
            let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from);
            home.join(".cache/ovni-1.14.0/bin/ovniemu")
        });
        assert!(
            p.is_file(),
            "ovni's emulator is missing at {} (scripts/setup.sh builds it from ../shared/vendor)",
            p.display()
        );
        p
    })
}

/// Runs ovni's emulator in its linter mode (`ovniemu -l`) on the trace in `dir`: None if it
/// accepts it (exit 0, no error), else what it said. It writes its Paraver files into `dir`.
pub fn ovniemu_rejects(dir: &Path) -> Option<String> {
    let out = Command::new("timeout")
        .args(["-k", "5", "120"])
        .arg(ovniemu())
        .arg("-l")
        .arg(dir)
        .output()
        .expect("run ovniemu");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let errors: Vec<&str> = text.lines().filter(|l| l.contains("ERROR")).collect();
    if out.status.success() && errors.is_empty() {
        None
    } else {
        let last: Vec<&str> = text.lines().rev().take(12).collect::<Vec<_>>().into_iter().rev().collect();
        Some(format!(
            "ovniemu -l exit {:?}:\n{}\n...\n{}",
            out.status.code(),
            errors.join("\n"),
            last.join("\n")
        ))
    }
}

/// Runs `cmd` with its stdout and stderr captured, in a process group of its own, and once
/// its own process has ended kills whatever else is left in that group (a child it forked
/// and did not wait for: it would hold the pipes open, and reading them to their end would
/// wait for it forever). Returns the output and whether anything was left running.
pub fn output_reaping(mut cmd: Command) -> (std::process::Output, bool) {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let mut child = cmd
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run test program");
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = pipe.read_to_end(&mut v);
            v
        })
    };
    let stdout = read(Box::new(child.stdout.take().expect("stdout piped")));
    let stderr = read(Box::new(child.stderr.take().expect("stderr piped")));
    let status = child.wait().expect("wait for test program");
    let group = -(child.id() as libc::pid_t);
    // SAFETY: signals the process group the child led (its id is the group's): signal 0
    // only asks whether any member is left, SIGKILL ends them.
    let left = unsafe { libc::kill(group, 0) } == 0;
    if left {
        // SAFETY: as above.
        unsafe { libc::kill(group, libc::SIGKILL) };
    }
    let stdout = stdout.join().expect("stdout reader");
    let stderr = stderr.join().expect("stderr reader");
    (std::process::Output { status, stdout, stderr }, left)
}
