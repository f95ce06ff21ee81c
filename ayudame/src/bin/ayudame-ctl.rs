//! `ayudame-ctl`: the command-line client of oxiomp's Ayudame library.
//!
//! ```text
//! ayudame-ctl SOCKET|--pid PID [REQUEST...]
//! ```
//!
//! With a request, sends it, prints the answer and exits (status 1 if it is an error).
//! Without, reads requests from standard input, one a line, and prints each answer, until the
//! input ends or `quit`: the way to step through a task graph (a pause lasts while a client is
//! connected). `help` lists the requests.

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!("usage: ayudame-ctl SOCKET|--pid PID [REQUEST...]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (socket, rest) = match args.as_slice() {
        [flag, pid, rest @ ..] if flag == "--pid" => match pid.parse::<u32>() {
            Ok(pid) => (PathBuf::from(format!("/tmp/ayudame-{pid}.sock")), rest),
            Err(_) => return usage(),
        },
        [path, rest @ ..] if !path.starts_with('-') => (PathBuf::from(path), rest),
        _ => return usage(),
    };
    let stream = match UnixStream::connect(&socket) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("ayudame-ctl: cannot connect to {}: {e}", socket.display());
            return ExitCode::FAILURE;
        }
    };
    let Ok(mut out) = stream.try_clone() else { return ExitCode::FAILURE };
    let mut answers = BufReader::new(stream).lines();
    let mut ask = |request: &str| -> Option<String> {
        writeln!(out, "{request}").ok()?;
        answers.next()?.ok()
    };
    if !rest.is_empty() {
        return match ask(&rest.join(" ")) {
            Some(a) => {
                println!("{a}");
                if a.starts_with("error") { ExitCode::FAILURE } else { ExitCode::SUCCESS }
            }
            None => {
                eprintln!("ayudame-ctl: the program went away");
                ExitCode::FAILURE
            }
        };
    }
    let interactive = std::io::stdin().is_terminal();
    let mut input = std::io::stdin().lock().lines();
    loop {
        if interactive {
            print!("ayudame> ");
            let _ = std::io::stdout().flush();
        }
        let Some(Ok(line)) = input.next() else { break };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if line == "quit" || line == "exit" {
            break;
        }
        match ask(line) {
            Some(a) => println!("{a}"),
            None => {
                eprintln!("ayudame-ctl: the program went away");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
