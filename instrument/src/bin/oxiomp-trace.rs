//! `oxiomp-trace`: reads a trace written with `OMP_OVNI=1` and turns it into views.
//!
//! ```text
//! oxiomp-trace summary DIR            per thread and state: time, share, count
//! oxiomp-trace check   DIR            validates the trace; exit status 1 if it is not valid
//!                                     (a stream that cannot be decoded included)
//! oxiomp-trace paraver DIR [OUT]      OUT.prv, OUT.pcf, OUT.row (default DIR/trace): a row per
//!                                     thread; OUT-cpu.{prv,pcf,row}: a row per CPU
//! oxiomp-trace chrome  DIR [OUT]      Trace Event JSON for Perfetto (default DIR/trace.json)
//! oxiomp-trace svg     DIR [OUT]      a timeline picture (default DIR/trace.svg)
//! ```
//!
//! Exit status: 0 done (a valid trace, for `check`), 1 `check` found problems, 2 the command
//! could not run (bad usage, DIR holds no trace, a stream that cannot be read for a view, an
//! output that cannot be written).

#![deny(clippy::undocumented_unsafe_blocks)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use oxiomp_instrument::trace::{self, Trace};

const USAGE: &str = "usage: oxiomp-trace <summary|check|paraver|chrome|svg> TRACE_DIR [OUT]\n\
  check: exit status 1 if the trace is not valid; 2 (every command) if it cannot run";

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

fn run(args: &[String]) -> Result<ExitCode, String> {
    let (Some(cmd), Some(dir)) = (args.first(), args.get(1)) else {
        return Err(USAGE.into());
    };
    let dir = PathBuf::from(dir);
    let out = args.get(2).map(PathBuf::from);
    if cmd == "check" {
        // Streams that cannot be decoded are problems of the trace, reported with the others.
        let (t, mut problems) = Trace::read_all(&dir)?;
        problems.extend(t.check());
        return Ok(report_check(&dir, &t, &problems));
    }
    let t = Trace::read(&dir)?;
    match cmd.as_str() {
        "summary" => print!("{}", trace::summary(&t)),
        "paraver" => {
            let base = out.unwrap_or_else(|| dir.join("trace"));
            let cpu_base = base.with_file_name(format!(
                "{}-cpu",
                base.file_name().map_or("trace".into(), |n| n.to_string_lossy())
            ));
            let (threads, cpus) = trace::paraver(&t);
            for (b, f) in [(&base, threads), (&cpu_base, cpus)] {
                for (ext, text) in [("prv", f.prv), ("pcf", f.pcf), ("row", f.row)] {
                    write(&b.with_extension(ext), &text)?;
                }
            }
            println!(
                "wrote {}.{{prv,pcf,row}} (threads) and {}.{{prv,pcf,row}} (CPUs)",
                base.display(),
                cpu_base.display()
            );
        }
        "chrome" => {
            let p = out.unwrap_or_else(|| dir.join("trace.json"));
            write(&p, &trace::chrome(&t))?;
            println!("wrote {}", p.display());
        }
        "svg" => {
            let p = out.unwrap_or_else(|| dir.join("trace.svg"));
            write(&p, &trace::svg(&t))?;
            println!("wrote {}", p.display());
        }
        _ => return Err(format!("unknown command {cmd:?}\n{USAGE}")),
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints `check`'s verdict; exit status 1 when there are problems.
fn report_check(dir: &Path, t: &Trace, problems: &[String]) -> ExitCode {
    for p in problems {
        println!("{p}");
    }
    if !t.unpublished.is_empty() {
        println!(
            "left out: {} stream(s) never published (their process ended without closing them, \
             with _exit, exec or a crash, before any of their events were written):",
            t.unpublished.len()
        );
        for p in &t.unpublished {
            println!("  {}", p.display());
        }
    }
    if !problems.is_empty() {
        println!("trace {} is NOT valid: {} problem(s)", dir.display(), problems.len());
        return ExitCode::from(1);
    }
    let events: usize = t.threads.iter().map(|s| s.events.len()).sum();
    println!("trace {} is valid: {} threads, {events} events", dir.display(), t.threads.len());
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("oxiomp-trace: {e}");
            ExitCode::from(2)
        }
    }
}
