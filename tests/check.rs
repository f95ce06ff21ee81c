//! The run-time checks (`OXIOMP_CHECK`): C programs with one mistake each (tests/check/*.c),
//! built with clang-19 with and without `-g`, run on our library at 2, 3, 4 and 16 threads.
//! Each must end with exactly the expected message, naming both constructs with their source
//! locations (with `-g`; without it, the code addresses the program called from, by symbol or
//! object and offset, never an unknown place), the values that differ and the thread numbers.
//!
//! In each program the team's last thread (`D` below) errs and is made to arrive last; which
//! other thread (`N`) the message names, and which of the two reports it, depends on timing,
//! so the test accepts either orientation of "thread A reached X where thread B reached Y".

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{clean_env, lib};

fn build(name: &str, debug: bool) -> PathBuf {
    build_as(name, debug, if debug { name.to_string() } else { format!("{name}-nodebug") })
}

/// Builds `tests/check/<name>.c` into `<exe>` (see `common::clang_topic`).
fn build_as(name: &str, debug: bool, exe: String) -> PathBuf {
    common::clang_topic("check", name, debug, &exe)
}

fn run(exe: &Path, threads: u32, mode: &str) -> Output {
    let mut c = Command::new("timeout");
    c.args(["-k", "5", "60"]).arg(exe);
    clean_env(&mut c);
    c.env("OMP_NUM_THREADS", threads.to_string())
        .env("OXIOMP_CHECK", mode)
        .env("LD_LIBRARY_PATH", &lib().dir);
    c.output().expect("run the program")
}

/// The lines the checks printed.
fn check_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("oxiomp: check: "))
        .map(String::from)
        .collect()
}

/// A mistake's expected message: `deviant` is what the erring thread reached, `others` what the
/// rest of the team reached, `differs` the suffix naming the values that differ (if any).
struct Expect {
    deviant: &'static str,
    others: &'static str,
    differs: &'static str,
}

impl Expect {
    /// Every message the checks may print for a team of `n`, with the text after "check: ".
    fn messages(&self, n: u32) -> Vec<String> {
        let d = n - 1;
        let mut all = Vec::new();
        for other in 0..d {
            for (a, x, b, y) in [(d, self.deviant, other, self.others), (other, self.others, d, self.deviant)]
            {
                all.push(format!("thread {a} reached {x} where thread {b} reached {y}{}", self.differs));
            }
        }
        all
    }
}

/// `text` with each place replaced by `@`: a `file.c:line:column`, a `symbol+0x...` or
/// `object+0x...` (with the `in object` that may follow).
fn places_erased(text: &str) -> String {
    let text = text.replace("the last call of the region's function ", "");
    let mut out = Vec::new();
    let mut words = text.split(' ').peekable();
    while let Some(w) = words.next() {
        let (core, tail) = match w.find([')', ';', ',']) {
            Some(i) if w.contains(".c:") || w.contains("+0x") => w.split_at(i),
            _ => (w, ""),
        };
        if core.contains(".c:") || core.contains("+0x") {
            if core.contains("+0x") && words.peek() == Some(&"in") {
                words.next();
                let obj = words.next().unwrap_or_default();
                let rest = obj.find([')', ';', ',']).map_or("", |i| &obj[i..]);
                out.push(format!("@{rest}"));
                continue;
            }
            out.push(format!("@{tail}"));
        } else {
            out.push(w.to_string());
        }
    }
    out.join(" ")
}

/// `text` with each data address (a word `0x...`, as a lock is named) replaced by `0x?`.
fn addresses_erased(text: &str) -> String {
    let words = text.split(' ').map(|w| {
        let hex = w.strip_prefix("0x").map(|h| h.trim_end_matches([',', ';', ')']));
        match hex {
            Some(h) if !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()) => {
                format!("0x?{}", &w[2 + h.len()..])
            }
            _ => w.to_string(),
        }
    });
    words.collect::<Vec<_>>().join(" ")
}

/// Checks that `name` reports the one mistake `e` describes (see [`check_mistake`]).
fn check_pair(name: &str, e: Expect) {
    check_mistake(name, |n| e.messages(n));
}

/// Runs `name` with the checks aborting, at 2, 3, 4 and 16 threads, built with and without
/// `-g`: one message, one of `expect`'s, then an abort.
fn check_mistake(name: &str, accept: impl Fn(u32) -> Vec<String>) {
    let mut failures = Vec::new();
    for debug in [true, false] {
        let exe = build(name, debug);
        for n in [2, 3, 4, 16] {
            let what = format!("{name} (-g: {debug}) at {n} threads");
            failures.extend(judge(&exe, n, !debug, &accept(n)).map(|f| format!("{what}: {f}")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs `exe` at `n` threads with the checks aborting: None if it printed one message, one of
/// `accept`'s (`by_address`: with its places erased, each a code address in the program),
/// then aborted; else what went wrong.
fn judge(exe: &Path, n: u32, by_address: bool, accept: &[String]) -> Option<String> {
    let out = run(exe, n, "1");
    let lines = check_lines(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    use std::os::unix::process::ExitStatusExt;
    if out.status.signal() != Some(libc::SIGABRT) {
        return Some(format!("not aborted ({:?}):\n{stderr}", out.status));
    }
    let [line] = lines.as_slice() else {
        return Some(format!("not one check message:\n{stderr}"));
    };
    let text = line.strip_prefix("oxiomp: check: ").unwrap();
    let Some(text) = text.strip_suffix("; aborting (OXIOMP_CHECK=1)") else {
        return Some(format!("the message does not say it aborts: {line}"));
    };
    let accepted: Vec<String> = accept.iter().map(|a| addresses_erased(a)).collect();
    let text = &addresses_erased(text);
    // Without -g, every place is in the program itself: `<program>+0x...`, or a symbol
    // `in <program>`.
    let program = exe.file_name().unwrap().to_str().unwrap();
    let in_program = text.split(' ').filter(|w| w.contains("+0x")).all(|w| w.starts_with(program))
        || text.contains(&format!(" in {program}"));
    let ok = if by_address {
        !text.contains("unknown")
            && in_program
            && accepted.iter().any(|a| places_erased(a) == places_erased(text))
    } else {
        accepted.iter().any(|a| a == text)
    };
    (!ok).then(|| format!("unexpected message:\n  {text}\nexpected one of:\n  {}", accepted.join("\n  ")))
}

/// Builds `tests/check/<name>.c` with gcc, `-g`, into `<name>-gcc`.
fn build_gcc(name: &str) -> PathBuf {
    let dir = common::profile_dir().join("check-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join(format!("{name}-gcc"));
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check");
    let out = Command::new("gcc")
        .args(["-fopenmp", "-O2", "-g", &format!("{name}.c"), "-o"])
        .arg(&exe)
        .current_dir(&src)
        .output()
        .expect("gcc");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    exe
}

/// Without `-g` a construct's place is the return address of the program's call of its entry
/// (which the entry notes), or, when the call was the function's tail call (a `jmp`: the
/// return address is then in the runtime), the region's function. In the binary: the
/// instruction before the `single`'s address calls `__kmpc_single`, and the barrier's
/// function is the outlined region that jumps to `__kmpc_barrier`.
#[test]
fn without_g_a_place_is_the_return_address_of_the_call() {
    let exe = build("single", false);
    let program = exe.file_name().unwrap().to_str().unwrap().to_string();
    let out = run(&exe, 2, "1");
    let lines = check_lines(&out);
    let [line] = lines.as_slice() else { panic!("not one message: {lines:?}") };
    let address = |after: &str| -> u64 {
        let rest = line.split_once(after).unwrap_or_else(|| panic!("no {after:?} in {line}")).1;
        let hex = rest.strip_prefix(&format!("{program}+0x")).unwrap_or_else(|| panic!("{line}"));
        let hex: String = hex.chars().take_while(|c| c.is_ascii_hexdigit()).collect();
        u64::from_str_radix(&hex, 16).unwrap()
    };
    let single = address("where thread 0 reached 'single' at ");
    let region = address("reached 'barrier' at the last call of the region's function ");
    let dis = Command::new("objdump").args(["-d", "--no-show-raw-insn"]).arg(&exe).output().expect("objdump");
    let text = String::from_utf8_lossy(&dis.stdout);
    let insns: Vec<(u64, &str)> = text
        .lines()
        .filter_map(|l| {
            let (a, rest) = l.trim_start().split_once(':')?;
            Some((u64::from_str_radix(a, 16).ok()?, rest))
        })
        .collect();
    let at = insns
        .iter()
        .position(|&(a, _)| a == single)
        .unwrap_or_else(|| panic!("no instruction at {single:#x}"));
    let call = insns[at - 1].1;
    assert!(call.contains("call") && call.contains("<__kmpc_single@plt>"), "before {single:#x}: {call}");
    // The region's function: its label, then its instructions up to the next label.
    let label = format!("{region:016x} <");
    let body = text.split_once(&label).unwrap_or_else(|| panic!("no function at {region:#x}")).1;
    let body = body.split("\n\n").next().unwrap();
    assert!(
        body.contains("jmp") && body.contains("<__kmpc_barrier@plt>"),
        "function at {region:#x}:\n{body}"
    );
}

/// gcc-built programs (gcc passes no source locations) built with `-g`: their places are the
/// lines of their calls and functions, from their debug information, exactly.
#[test]
fn a_gcc_built_program_is_named_by_its_debug_lines() {
    // gcc's barrier call names no construct (no ident_t): "a barrier".
    let e = Expect {
        deviant: "the end of the parallel region at barrier.c:9:9",
        others: "a barrier at barrier.c:13:9",
        differs: "",
    };
    let task = |n: u32| (0..n).map(|t| held_task_message(t, "held_task.c:15:9")).collect::<Vec<_>>();
    // gcc's line for the entry of an undeferred task's function is its first statement's.
    let unset = |n: u32| (0..n).map(|t| unset_other_message(t, "unset_other.c:19:23")).collect::<Vec<_>>();
    // gcc's code ends a `single` with a plain barrier call, which the checks take with the
    // `single` as one arrival: a `single` skipped, or one not followed by the others' barrier,
    // still differs.
    let skipped = Expect {
        deviant: "a barrier at the last call of the region's function single.c:8:9",
        others: "'single' at single.c:13:9",
        differs: "",
    };
    let no_barrier = Expect {
        deviant: "'single' at single_barrier.c:9:13",
        others: "'single' at single_barrier.c:9:13",
        differs: ": one of the two threads reached a barrier right after it, the other did not",
    };
    // Whether a gcc loop ends with a barrier shows only at its end: the barrier is compared.
    let loop_nowait = Expect {
        deviant: "the end of the parallel region at loop_nowait.c:11:9",
        others: "the implicit barrier of a 'for' at loop_nowait.c:19:17",
        differs: "",
    };
    let mut failures = Vec::new();
    for (name, accept) in [
        ("barrier", &(|n| e.messages(n)) as &dyn Fn(u32) -> Vec<String>),
        ("single", &|n| skipped.messages(n)),
        ("single_barrier", &|n| no_barrier.messages(n)),
        ("loop_nowait", &|n| loop_nowait.messages(n)),
        ("held_task", &task),
        ("unset_other", &unset),
    ] {
        let exe = build_gcc(name);
        for n in [2, 3, 4, 16] {
            failures.extend(judge(&exe, n, false, &accept(n)).map(|f| format!("{name} at {n}: {f}")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The message for a task, at `place`, that ends on thread `t` holding a lock it set.
fn held_task_message(t: u32, place: &str) -> String {
    format!(
        "thread {t} ended a task at {place} holding the lock 0x1, which the task set: a lock must be unset by \
         the task that set it"
    )
}

#[test]
fn constructs_in_another_order() {
    check_pair(
        "order",
        Expect {
            deviant: "'single' at order.c:22:1",
            others: "'for' at order.c:16:1 (0..99 step 1, schedule static)",
            differs: "",
        },
    );
}

#[test]
fn a_loop_with_other_bounds() {
    check_pair(
        "bounds",
        Expect {
            deviant: "'for' at bounds.c:16:1 (0..511 step 1, schedule static)",
            others: "'for' at bounds.c:16:1 (0..1023 step 1, schedule static)",
            differs: ": the loop bounds differ",
        },
    );
}

/// The other threads are 30 constructs ahead of the deviant when it skips one: their records
/// went through the slow path of the team's ring of arrivals.
#[test]
fn a_loop_skipped_far_behind_the_others() {
    check_pair(
        "far_ahead",
        Expect {
            deviant: "'for' at far_ahead.c:19:1 (0..130 step 1, schedule static)",
            others: "'for' at far_ahead.c:19:1 (0..129 step 1, schedule static)",
            differs: ": the loop bounds differ",
        },
    );
}

#[test]
fn a_barrier_one_thread_skips() {
    check_pair(
        "barrier",
        Expect {
            deviant: "the end of the parallel region at barrier.c:9:1",
            others: "'barrier' at barrier.c:13:1",
            differs: "",
        },
    );
}

#[test]
fn a_barrier_after_a_single_one_thread_skips() {
    check_pair(
        "single_barrier",
        Expect {
            deviant: "the end of the parallel region at single_barrier.c:16:1",
            others: "'barrier' at single_barrier.c:23:1",
            differs: "",
        },
    );
}

#[test]
fn a_single_one_thread_skips() {
    check_pair(
        "single",
        Expect { deviant: "'barrier' at single.c:17:1", others: "'single' at single.c:14:1", differs: "" },
    );
}

#[test]
fn an_ordered_in_a_loop_without_the_clause() {
    check_mistake("ordered", |n| {
        (0..n)
            .map(|t| {
                format!(
                    "thread {t} reached 'ordered' at ordered.c:9:1 within 'for' at ordered.c:16:1 (0..99 step 1, \
                     schedule static), which has no 'ordered' clause"
                )
            })
            .collect()
    });
}

#[test]
fn a_lock_held_at_the_end_of_the_region() {
    check_mistake("held_lock", |n| {
        vec![format!(
            "thread {} reached the end of the parallel region at held_lock.c:11:1 holding the lock 0x1, which \
             it set in the region: a lock must be unset by the task that set it",
            n - 1
        )]
    });
}

#[test]
fn a_lock_held_at_the_end_of_a_task() {
    // Any thread of the team may run the task. With -g the place is the task's function's
    // line, from the debug information.
    check_mistake("held_task", |n| (0..n).map(|t| held_task_message(t, "held_task.c:15")).collect());
}

#[test]
fn a_lock_unset_by_another_task_of_the_thread() {
    // The task's place is its function's line, from the debug information.
    check_mistake("unset_other", |n| (0..n).map(|t| unset_other_message(t, "unset_other.c:17")).collect());
}

/// The message for a lock the implicit task of thread `t` set and a task at `place` unset.
fn unset_other_message(t: u32, place: &str) -> String {
    format!(
        "thread {t} unset the lock 0x1 in a task at {place}, which its implicit task set: a lock must be unset \
         by the task that set it"
    )
}

#[test]
fn a_loop_nested_in_a_loop() {
    check_mistake("nested", |n| {
        (0..n)
            .map(|t| {
                format!(
                    "thread {t} reached 'for' at nested.c:9:1 (0..7 step 1, schedule static) inside 'for' at \
                     nested.c:19:1 (0..7 step 1, schedule static) of the same team: worksharing constructs may \
                     not be nested in one team"
                )
            })
            .collect()
    });
}

/// `OXIOMP_CHECK=warn`: the message, without the abort, and the program goes on to its end.
#[test]
fn warn_reports_and_goes_on() {
    let exe = build_as("bounds", true, "bounds-warn".to_string());
    let out = run(&exe, 3, "warn");
    let lines = check_lines(&out);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].ends_with(": the loop bounds differ"), "{lines:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("a[0] = "), "{out:?}");
}

/// A malformed value: one warning naming the variable, and the checks stay off.
#[test]
fn a_malformed_switch_is_one_warning() {
    let exe = build_as("bounds", true, "bounds-malformed".to_string());
    let out = run(&exe, 2, "sometimes");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(stderr.matches("OXIOMP_CHECK").count(), 1, "{stderr}");
    assert!(check_lines(&out).is_empty(), "{stderr}");
}

#[test]
fn places_are_erased_in_every_form() {
    assert_eq!(
        places_erased("'for' at a.c:3:1 (0..9 step 1, schedule static)"),
        "'for' at @ (0..9 step 1, schedule static)"
    );
    assert_eq!(places_erased("'single' at main+0x1c in prog where"), "'single' at @ where");
    assert_eq!(places_erased("end at prog+0x11a0; aborting"), "end at @; aborting");
    assert_eq!(places_erased("at the last call of the region's function prog+0x11f0 where"), "at @ where");
}
