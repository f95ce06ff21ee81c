//! How a trace ends: `exit` and signals inside regions, forked children, the trace's
//! directory, a full disk.

use super::*;

/// A program ended inside a dynamic loop of a 3-thread region (by `exit` when `ok`, else by
/// a signal): every thread's stream ends with the thread's end, and each shows the loop begun.
fn ends_inside_a_loop(program: &str, ok: bool) {
    let (t, _) = traced_run(program, "3", ok);
    assert_eq!(t.threads.len(), 3);
    for th in &t.threads {
        assert_eq!(th.events.last().map(|e| e.mcv), Some(*b"OHe"), "thread {} closed", th.tid);
        let dynamic = seq(&th.events, &[Subsystem::WorkDistribution]);
        assert!(dynamic.starts_with(&pair(State::DynamicForInit)), "thread {}: {dynamic:?}", th.tid);
    }
}

#[test]
fn exit_inside_a_region_leaves_a_valid_trace() {
    ends_inside_a_loop("trace_exit", true);
}

#[test]
fn sigterm_inside_a_region_leaves_a_valid_trace() {
    ends_inside_a_loop("trace_signal", false);
}

/// `exit()` from the user's code inside an undeferred task inside a static loop's part, while
/// the other thread is inside one too: every stream ends the task it was running (`PPe`), the
/// states around it and the loop's part (`PQe`), innermost first, then the thread (`check`
/// rejects a thread that ends inside anything).
#[test]
fn exit_inside_a_task_ends_the_task_and_the_loop() {
    let (t, _) = traced_run("trace_exit_task", "2", true);
    assert_eq!(t.threads.len(), 2);
    for th in &t.threads {
        let codes: Vec<[u8; 3]> = th.events.iter().map(|e| e.mcv).collect();
        let run = State::TaskRunningIf0;
        let tail = [*b"PPe", run.ovni_code(false), State::StaticForChunk.ovni_code(false), *b"PQe"];
        let at = codes.windows(4).rposition(|w| w == tail);
        assert!(
            at.is_some(),
            "thread {}: no task, chunk and loop end at exit: {:?}",
            th.tid,
            &codes[codes.len().saturating_sub(12)..]
        );
        let at = at.unwrap();
        assert!(
            codes[at + 4..].iter().all(|c| c[0] == b'P' && c[2].is_ascii_uppercase()
                || c == b"PA]"
                || c == b"PH]"
                || c == b"OHe"),
            "thread {}: only ends follow: {:?}",
            th.tid,
            &codes[at..]
        );
    }
}

/// A program started with SIGINT ignored (a background job of a shell script is) keeps it
/// ignored: a SIGINT it gets changes nothing, and its trace goes on to its end (the recorder
/// used to close every stream at the signal and let the program run on untraced).
#[test]
fn an_ignored_sigint_stays_ignored_and_the_trace_goes_on() {
    let (t, _) = traced_run_in("trace_sigint_ignored", "2", true, &["sh", "-c", "trap '' INT; exec \"$0\""]);
    let forks = initial_thread(&t).events.iter().filter(|e| &e.mcv == State::ForkCall.ovni_mcv()).count();
    assert_eq!(forks, 2, "both regions recorded, the one after the signal too");
}

/// SIGINT from outside while every thread records (critical sections and tasks, without end):
/// the process ends with the signal, and every thread's stream ends with what it was in and
/// then the thread, each stream's events up to that point whole.
#[test]
fn sigint_from_outside_while_all_threads_record() {
    use std::io::BufRead;
    use std::os::unix::process::ExitStatusExt;
    let exe = build("trace_sigint", "4");
    let tdir = trace_dir("trace_sigint", "4");
    let mut child =
        traced_command(&[], &exe, "4", Some(&tdir)).stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n", "the program did not start recording");
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    // A hang guard, not a timing assertion: the signal ends the program at once.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let st = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the program did not end at SIGINT");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    assert_eq!(st.signal(), Some(libc_sigint()), "ended by SIGINT: {st}");
    let t = read_checked(&tdir, "trace_sigint");
    assert_eq!(t.threads.len(), 4);
    for th in &t.threads {
        assert_eq!(th.events.last().map(|e| e.mcv), Some(*b"OHe"), "thread {} closed", th.tid);
        let sections = th.events.iter().filter(|e| &e.mcv == State::CriticalSection.ovni_mcv()).count();
        assert!(sections >= 1, "thread {} recorded no critical section", th.tid);
    }
}

/// SIGINT's number (Linux, every architecture).
fn libc_sigint() -> i32 {
    2
}

/// Without `OVNI_TRACEDIR` the trace goes to `./ovni`; an unwritable directory gives exactly
/// one warning (however many threads), and the program runs untraced with its results.
#[test]
fn trace_directory_default_and_unwritable() {
    let exe = build("trace_nested", "2");
    let cwd = trace_dir("default-dir", "2");
    std::fs::create_dir_all(&cwd).unwrap();
    let st =
        traced_command(&["timeout", "-k", "5", "60"], &exe, "2", None).current_dir(&cwd).status().unwrap();
    assert!(st.success());
    let t = read_checked(&cwd.join("ovni"), "default directory");
    assert_eq!(t.threads.len(), 4);

    let cwd = trace_dir("unwritable-dir", "4");
    std::fs::create_dir_all(&cwd).unwrap();
    let out =
        traced_command(&["timeout", "-k", "5", "60"], &exe, "4", Some(Path::new("/proc/oxiomp-no/trace")))
            .current_dir(&cwd)
            .output()
            .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warning =
        "oxiomp: warning: OMP_OVNI=1 but the trace cannot be written (cannot create /proc/oxiomp-no/trace";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line, nothing else: {stderr}");
    assert!(!cwd.join("ovni").exists(), "nothing written in the default directory instead");
}

/// Each process of a traced program records into its own `proc.<pid>` directory, as ovni's
/// layout has it (`tests/trace/trace_fork.c`): children forked outside a region, from a
/// region's user code (on the primary thread and on a worker: the child's thread begins inside
/// the states it forked in, and names no creator) and from such a child before it recorded
/// anything (it passes the same states on), and grandchildren. A child forked inside a task
/// (whose trace would begin inside a task it never created) records nothing, nor does one that
/// only execs (even re-bound to a CPU by the runtime's fork handler); one that ends with
/// `_exit` (closing nothing) leaves its streams unpublished, out of the trace. The parent's
/// trace is untouched. Each process's threads all appear once, every stream ends once, each
/// process declares the types it uses, the CPU claims are the loom's shared file, and ovni's
/// emulator takes the whole trace, with the threads bound to CPUs and not.
#[test]
fn forked_children_write_their_own_process_streams() {
    for bind in [false, true] {
        let exe = build("trace_fork", "2");
        let tdir = trace_dir(&format!("trace_fork-bound-{bind}"), "2");
        let mut c = traced_command(&["timeout", "-k", "5", "60"], &exe, "2", Some(&tdir));
        if bind {
            c.env("OMP_PROC_BIND", "true");
        }
        assert!(c.status().unwrap().success(), "trace_fork, bound: {bind}");
        let what = format!("trace_fork, bound: {bind}");
        let t = read_checked(&tdir, &what);
        assert_eq!(common::ovniemu_rejects(&tdir), None, "{what}");
        let loom = t.threads[0].path.ancestors().nth(3).unwrap().to_path_buf();
        assert!(loom.join("cpus.oxiomp").is_file(), "{what}: the CPU claims are shared through the loom");
        let mut pids: Vec<u32> = t.threads.iter().map(|th| th.pid).collect();
        pids.sort();
        pids.dedup();
        // The child that ended with `_exit`: its two threads' streams, hidden.
        assert_eq!(t.unpublished.len(), 2, "{what}: {:?}", t.unpublished);
        let quick = t.unpublished[0].parent().unwrap();
        assert!(t.unpublished.iter().all(|u| u.parent() == Some(quick)), "{what}: {:?}", t.unpublished);
        let quick_pid: u32 = quick.file_name().unwrap().to_str().unwrap()["proc.".len()..].parse().unwrap();
        assert!(!pids.contains(&quick_pid), "{what}");
        // No other process directory: nothing of the child forked in a task, or of the one
        // that only execs.
        let mut dirs: Vec<u32> = std::fs::read_dir(&loom)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix("proc.")?.parse().ok())
            .collect();
        dirs.sort();
        let mut want = pids.clone();
        want.push(quick_pid);
        want.sort();
        assert_eq!(dirs, want, "{what}: process directories");
        let of = |pid: u32| t.threads.iter().filter(move |th| th.pid == pid);
        let count = |pid: u32, mcv: &[u8; 3]| -> usize {
            of(pid).map(|th| th.events.iter().filter(|e| &e.mcv == mcv).count()).sum()
        };
        let regions = |pid: u32| count(pid, State::ForkCall.ovni_mcv());
        // A process's initial thread's states, in order.
        let states = |pid: u32| -> Vec<(bool, State)> {
            let th = of(pid).find(|th| th.tid == pid).expect("the process's initial thread");
            th.events.iter().filter_map(|e| trace::state_of(&e.mcv)).map(|(s, enter)| (enter, s)).collect()
        };
        let (attached, user, worker) = (State::Attached, State::UserMicrotask, State::WorkerLoop);
        let find = |what: &str, n: usize, f: &dyn Fn(u32) -> bool| -> Vec<u32> {
            let found: Vec<u32> = pids.iter().copied().filter(|&p| f(p)).collect();
            assert_eq!(found.len(), n, "{what}: {found:?} of {pids:?}");
            found
        };
        let parent = find("the parent", 1, &|p| states(p).first() == Some(&(true, State::Init)))[0];
        let child = find("the child with tasks", 1, &|p| count(p, b"PPc") == 4)[0];
        let grandchild = find("the grandchild", 1, &|p| count(p, State::StaticForChunk.ovni_mcv()) > 0)[0];
        // Forked by the primary thread in a region, and that child's own child.
        let in_region =
            find("children forked in a region", 2, &|p| states(p)[..2] == [(true, attached), (true, user)]);
        let from_worker =
            find("the child forked by a worker", 1, &|p| states(p)[..2] == [(true, worker), (true, user)])[0];
        let mut all = vec![parent, child, grandchild, in_region[0], in_region[1], from_worker];
        all.sort();
        all.dedup();
        assert_eq!(all, pids, "{what}: every process is one of these");
        // A child forked in a region begins in the states its parent's thread was in, runs
        // its own region inside them, and ends them.
        for &pid in in_region.iter().chain([&from_worker]) {
            let s = states(pid);
            assert_eq!(s[2], (true, State::ForkCall), "{what}: {pid}");
            assert_eq!(s[s.len() - 2..], [(false, user), (false, s[0].1)], "{what}: {pid}");
            assert_eq!(regions(pid), 1, "{what}: {pid}");
            // No thread of the child started its first thread.
            let first = of(pid).find(|th| th.tid == pid).unwrap();
            let creator = match first.events[0].payload {
                Payload::ThreadExecute { creator, .. } => creator,
                _ => panic!("{what}: {pid} begins without OHx"),
            };
            assert_eq!(creator, -1, "{what}: {pid}");
        }
        for &pid in &pids {
            assert_eq!(of(pid).count(), 2, "{what}: process {pid} has its two threads");
            assert!(of(pid).all(|th| th.events.first().is_some_and(|e| &e.mcv == b"OHx")), "{what}");
            for th in of(pid) {
                assert_eq!(
                    th.events.iter().filter(|e| &e.mcv == b"OHe").count(),
                    1,
                    "{what}: thread {}",
                    th.tid
                );
            }
            // Each process declares its own types (ovni keeps them per process).
            let used = count(pid, b"PPc") + count(pid, b"PQx");
            assert_eq!(used > 0, count(pid, b"POc") > 0, "{what}: process {pid}");
        }
        assert_eq!(regions(parent), 2, "{what}");
        assert_eq!(regions(child), 1, "{what}");
        assert_eq!(regions(grandchild), 1, "{what}");
        // The parent's task (the fork inside it) is the parent's alone.
        assert_eq!(count(parent, b"PPc"), 1, "{what}");
    }
}

/// A trace on a small file system that fills up: the program runs on (exit 0) with one
/// warning naming the trace's directory and the error; every stream that exists ends at a
/// whole event, with what its thread was in ended and the thread's end (`OHe`), and `check`
/// reports each stream cut short as "truncated: the disk was full", with no other problem (not
/// "killed"). Sizes from a few streams' first buffers to several buffers each, so that streams
/// are cut at their first hand-over, later ones, and their close. The file system is a tmpfs
/// mounted in a mount namespace of the test's own (`unshare`: root, or a user namespace).
#[test]
fn a_full_disk_cuts_the_trace_short_consistently() {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let root = status.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"));
    for (size, threads) in [("200k", "2"), ("1m", "2"), ("3m", "4"), ("5m", "3")] {
        let exe = build("trace_fill", threads);
        let base = profile_dir().join("trace-tests").join(format!("full-disk-{size}-{threads}"));
        let _ = std::fs::remove_dir_all(&base);
        let (mnt, out) = (base.join("mnt"), base.join("out"));
        std::fs::create_dir_all(&mnt).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        let (m, o, e) = (mnt.display(), out.display(), exe.display());
        let script = format!(
            "mount -t tmpfs -o size={size} tmpfs {m} || exit 97; \
             timeout -k 5 60 {e} 2> {o}/stderr; echo $? > {o}/rc; cp -a {m}/trace {o}/trace"
        );
        let mut c = Command::new("unshare");
        c.args(if root { &["-m"][..] } else { &["-r", "-m"][..] }).args(["sh", "-c", &script]);
        clean_env(&mut c);
        c.env("OMP_OVNI", "1")
            .env("OVNI_TRACEDIR", mnt.join("trace"))
            .env("OMP_NUM_THREADS", threads)
            .env("LD_LIBRARY_PATH", &lib().dir)
            .env("LD_BIND_NOW", "1");
        let run = c.output().expect("unshare (util-linux)");
        assert!(
            run.status.success(),
            "{size}: could not run the program on a tmpfs of its own (unshare and mount need root or \
             user namespaces): {run:?}"
        );
        let what = format!("trace on a {size} tmpfs, {threads} threads");
        let rc = std::fs::read_to_string(out.join("rc")).unwrap();
        assert_eq!(rc.trim(), "0", "{what}: the program's exit status");
        let stderr = std::fs::read_to_string(out.join("stderr")).unwrap();
        let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
        assert_eq!(warnings.len(), 1, "{what}: one warning:\n{stderr}");
        let trace_dir = mnt.join("trace");
        assert!(
            warnings[0].contains(&format!("the trace in {}", trace_dir.display()))
                && warnings[0].contains("the disk was full (No space left on device)"),
            "{what}: the warning names the directory and the error: {}",
            warnings[0]
        );
        let t = Trace::read(&out.join("trace")).unwrap_or_else(|e| panic!("{what}: {e}"));
        let problems = t.check();
        let cut: Vec<&String> =
            problems.iter().filter(|p| p.contains(": truncated: the disk was full (")).collect();
        assert!(!cut.is_empty(), "{what}: no stream says it was cut short: {problems:#?}");
        assert_eq!(cut.len(), problems.len(), "{what}: problems besides the truncation: {problems:#?}");
        for th in &t.threads {
            assert_eq!(
                th.events.last().map(|e| &e.mcv),
                Some(b"OHe"),
                "{what}: thread {} ends with OHe",
                th.tid
            );
        }
    }
}
