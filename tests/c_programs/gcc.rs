//! The self-checking C programs again, built with `gcc -fopenmp` (against Debian's libgomp)
//! and run on our library both ways a gcc program can be: as `libgomp.so.1` in a directory
//! on `LD_LIBRARY_PATH`, and with the build's `libgomp.so.1` in `LD_PRELOAD` (traced, the
//! trace checked as for clang's programs); then on libgomp itself as the reference. The
//! loader's own trace must show ours as the only libgomp, and `LD_BIND_NOW` makes a missing
//! entry fail at start-up.
//!
//! A program gcc cannot build against libgomp (libomp's own entry points or extensions,
//! clang-only syntax) or cannot run as written (gcc lowers it differently: see each reason)
//! says so with `gcc=skip: REASON`, and its test checks that the reason still holds: gcc
//! does not build it, or the gcc-built program fails on libgomp too. One whose checks libgomp
//! fails (libomp's behaviour, which oxiomp keeps) says `gcc-reference=skip`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{clean_env, lib, profile_dir};
use crate::{Directives, TIMEOUT_SECS, directives};

#[derive(Clone, Copy, Debug, PartialEq)]
enum On {
    /// Ours, as `libgomp.so.1` in a directory on `LD_LIBRARY_PATH`.
    Directory,
    /// Ours, through `LD_PRELOAD` of the build's `libgomp.so.1` (traced).
    Preload,
    /// Debian's libgomp.
    Libgomp,
}

/// Builds `name` with gcc: the program, or gcc's messages.
fn try_compile(name: &str, d: &Directives) -> Result<PathBuf, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c").join(format!("{name}.c"));
    let out_dir = profile_dir().join("ctests-gcc");
    std::fs::create_dir_all(&out_dir).unwrap();
    let exe = out_dir.join(name);
    let out = Command::new("gcc")
        .args(["-fopenmp", "-O2", "-g", "-Werror=implicit-function-declaration"])
        .arg(&src)
        .args(&d.cflags)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("gcc (install it: scripts/setup.sh)");
    if out.status.success() { Ok(exe) } else { Err(String::from_utf8_lossy(&out.stderr).into_owned()) }
}

/// A program skipped for gcc: its reason must still hold. Either gcc does not build it, or the
/// gcc-built program fails on libgomp at one of its thread counts (within a shorter limit).
fn skip_still_holds(name: &str, d: &Directives, reason: &str, threads: &[Option<String>]) {
    let Ok(exe) = try_compile(name, d) else { return };
    for n in threads {
        let (out, _) = crate::common::output_reaping(command(&exe, d, n.as_deref(), On::Libgomp, Some("30")));
        if !out.status.success() {
            return;
        }
    }
    panic!("{name}: gcc builds it and it passes on libgomp: the gcc=skip reason ({reason}) no longer holds");
}

/// The command for one run, under `timeout` seconds and the directives' prefix (None: the
/// program itself, for the loader trace).
fn command(exe: &Path, d: &Directives, threads: Option<&str>, on: On, timeout: Option<&str>) -> Command {
    let mut c = match timeout {
        None => Command::new(exe),
        Some(secs) => {
            let mut c = Command::new("timeout");
            c.args(["-k", "5", secs]);
            c.args(&d.prefix);
            c.arg(exe);
            c
        }
    };
    clean_env(&mut c);
    if let Some(n) = threads {
        c.env("OMP_NUM_THREADS", n);
    }
    for (k, v) in &d.env {
        c.env(k, v);
    }
    c.env("LD_BIND_NOW", "1");
    match on {
        On::Directory => {
            // The run-time checks are on, as for the clang-built runs.
            c.env("LD_LIBRARY_PATH", &lib().dir).env("OXIOMP_CHECK", "1");
        }
        On::Preload => {
            c.env("LD_PRELOAD", lib().so.with_file_name("libgomp.so.1"));
        }
        On::Libgomp => {}
    }
    c
}

/// Checks, with the loader's own trace, which libgomp the run would use.
fn check_loaded_libgomp(exe: &Path, d: &Directives, threads: Option<&str>, on: On) {
    let mut c = command(exe, d, threads, on, None);
    c.env("LD_TRACE_LOADED_OBJECTS", "1");
    let out = c.output().expect("run loader trace");
    let trace = String::from_utf8_lossy(&out.stdout);
    let gomp: Vec<&str> = trace.lines().filter(|l| l.contains("libgomp")).collect();
    let system = |l: &str| l.contains("/lib/x86_64-linux-gnu/libgomp") || l.contains("/usr/lib/");
    match on {
        On::Directory | On::Preload => {
            let ours_dir = lib().dir.to_str().unwrap().to_string();
            let ours_so = lib().so.parent().unwrap().to_str().unwrap().to_string();
            let ours = |l: &str| l.contains(&ours_dir) || l.contains(&ours_so);
            assert!(gomp.len() == 1 && ours(gomp[0]), "{on:?}: our library is not the only libgomp:\n{trace}")
        }
        On::Libgomp => {
            assert!(
                gomp.len() == 1 && system(gomp[0]),
                "reference run does not use Debian's libgomp:\n{trace}"
            )
        }
    }
}

/// Builds `name` with gcc and runs it as the module docs say.
pub(crate) fn run(name: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c").join(format!("{name}.c"));
    let src = std::fs::read_to_string(&path).unwrap();
    let d = directives(&src);
    let threads: Vec<Option<String>> = match &d.threads {
        None => ["1", "2", "4", "16"].iter().map(|s| Some(s.to_string())).collect(),
        Some(v) if v.is_empty() => vec![None],
        Some(v) => v.iter().cloned().map(Some).collect(),
    };
    if let Some(reason) = &d.gcc_skip {
        return skip_still_holds(name, &d, reason, &threads);
    }
    let exe = try_compile(name, &d).unwrap_or_else(|e| {
        panic!("gcc does not build {name}.c (give it gcc=skip with the reason if it cannot):\n{e}")
    });
    let mut failures = Vec::new();
    for n in &threads {
        for on in [On::Directory, On::Preload, On::Libgomp] {
            if on == On::Libgomp && d.skip_gcc_reference {
                continue;
            }
            check_loaded_libgomp(&exe, &d, n.as_deref(), on);
            let mut cmd = command(&exe, &d, n.as_deref(), on, Some(TIMEOUT_SECS));
            let trace_dir = (on == On::Preload && !d.env.iter().any(|(k, _)| k == "OMP_OVNI")).then(|| {
                profile_dir()
                    .join("ctests-traces")
                    .join(format!("gcc-{name}-{}", n.as_deref().unwrap_or("x")))
            });
            if let Some(t) = &trace_dir {
                let _ = std::fs::remove_dir_all(t);
                cmd.env("OMP_OVNI", "1").env("OVNI_TRACEDIR", t);
            }
            let (out, left) = crate::common::output_reaping(cmd);
            let what = format!(
                "gcc-built {name} on {on:?} with OMP_NUM_THREADS={}",
                n.as_deref().unwrap_or("(unset)")
            );
            if left {
                failures
                    .push(format!("{what}: processes it started were still running after it ended (killed)"));
            }
            crate::judge(&what, &out, trace_dir.as_deref(), &d, on != On::Libgomp, &mut failures);
        }
    }
    assert!(failures.is_empty(), "{} failing run(s):\n{}", failures.len(), failures.join("\n"));
}
