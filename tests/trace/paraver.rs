//! The Paraver views `oxiomp-trace paraver` writes, against ovni's emulator's.

use super::*;

/// A `.prv`'s event records: per row (1-based), per event type, the values in time order
/// (several at one time: the last one stands), and the trace's end time.
struct Prv {
    end: u64,
    rows: std::collections::HashMap<(usize, u32), Vec<(u64, u64)>>,
}

fn read_prv(text: &str) -> Prv {
    let mut lines = text.lines();
    let head = lines.next().unwrap_or("");
    let end = head.split(':').nth(2).and_then(|f| f.trim_end_matches("_ns").parse().ok()).unwrap_or(0);
    let mut rows: std::collections::HashMap<(usize, u32), Vec<(u64, u64)>> = Default::default();
    for l in lines {
        let f: Vec<&str> = l.split(':').collect();
        if f.first() != Some(&"2") || f.len() < 8 {
            continue;
        }
        let (row, time): (usize, u64) = (f[4].parse().unwrap(), f[5].parse().unwrap());
        for pair in f[6..].chunks(2) {
            let (ty, v): (u32, u64) = (pair[0].parse().unwrap(), pair[1].parse().unwrap());
            let list = rows.entry((row, ty)).or_default();
            match list.last_mut() {
                Some(last) if last.0 == time => last.1 = v,
                _ => list.push((time, v)),
            }
        }
    }
    Prv { end, rows }
}

impl Prv {
    /// How long row `row` showed each nonzero value of type `ty`; with `spin_as_before`, the
    /// spin-wait state (value 4 of type 50, which ovni 1.14 does not show) counts as the
    /// value before it (the barrier it waits in).
    fn durations(&self, row: usize, ty: u32, spin_as_before: bool) -> std::collections::BTreeMap<u64, u64> {
        let mut out = std::collections::BTreeMap::new();
        let empty = Vec::new();
        let list = self.rows.get(&(row, ty)).unwrap_or(&empty);
        let mut shown = 0;
        for (k, &(time, v)) in list.iter().enumerate() {
            if !(spin_as_before && ty == 50 && v == 4) {
                shown = v;
            }
            let next = list.get(k + 1).map_or(self.end, |n| n.0);
            if shown != 0 {
                *out.entry(shown).or_insert(0) += next - time;
            }
        }
        out
    }
}

/// The views `oxiomp-trace paraver` writes are ovni's emulator's, row by row: for programs with
/// tasks, worksharing and parked threads (block time 0), unbound and bound to CPUs, the time
/// each thread spends in each subsystem state (type 50; the spin-wait state, which ovni 1.14
/// does not show, counted as the barrier around it), under each label (51) and in each task
/// (52) is the same in both thread traces, and likewise on each CPU in both CPU traces (also
/// the running thread, type 2). In the bound runs ovni's CPU trace shows each CPU running the
/// thread the trace binds there, and nothing on it otherwise.
#[test]
fn paraver_views_are_ovniemus() {
    for (name, threads) in [("trace_tasks", "2"), ("trace_ws", "3"), ("trace_task_constructs", "2")] {
        for bind in [false, true] {
            let exe = build(name, threads);
            let tdir = trace_dir(&format!("{name}-paraver-{bind}"), threads);
            let mut c = traced_command(&[], &exe, threads, Some(&tdir));
            c.env("KMP_BLOCKTIME", "0");
            if bind {
                c.env("OMP_PROC_BIND", "true");
            }
            assert!(c.status().unwrap().success(), "{name}");
            let what = format!("{name}, {threads} threads, bound: {bind}");
            let t = read_checked(&tdir, &what);
            assert_eq!(common::ovniemu_rejects(&tdir), None, "{what}");
            let (ours_t, _) = trace::paraver(&t);
            let ours_t = read_prv(&ours_t.prv);
            // The same trace without the spin-wait events, as ovni 1.14 sees it: the CPU rows
            // of several threads cannot tell whose barrier a spin wait was in.
            let mut no_spin = Trace::read(&tdir).unwrap();
            for th in &mut no_spin.threads {
                th.events.retain(|e| !matches!(&e.mcv, b"PBs" | b"PBS"));
            }
            let (ours_t_no_spin, ours_c) = trace::paraver(&no_spin);
            let (ours_t_no_spin, ours_c) = (read_prv(&ours_t_no_spin.prv), read_prv(&ours_c.prv));
            let theirs_t = read_prv(&std::fs::read_to_string(tdir.join("thread.prv")).unwrap());
            let theirs_c = read_prv(&std::fs::read_to_string(tdir.join("cpu.prv")).unwrap());
            for row in 1..=t.threads.len() {
                for ty in [50, 51, 52] {
                    let theirs = theirs_t.durations(row, ty, false);
                    assert_eq!(
                        ours_t.durations(row, ty, true),
                        theirs,
                        "{what}: thread row {row}, type {ty}"
                    );
                    assert_eq!(
                        ours_t_no_spin.durations(row, ty, false),
                        theirs,
                        "{what}: thread row {row}, type {ty}"
                    );
                }
            }
            let cpu_rows = theirs_c.rows.keys().map(|k| k.0).max().unwrap_or(0);
            assert!(cpu_rows >= 2, "{what}: ovniemu's CPU trace has rows for the CPUs and the virtual CPU");
            for row in 1..=cpu_rows {
                for ty in [2, 50, 51, 52] {
                    assert_eq!(
                        ours_c.durations(row, ty, false),
                        theirs_c.durations(row, ty, false),
                        "{what}: CPU row {row}, type {ty}"
                    );
                }
            }
            // Where the trace binds each thread (its last `OAs` to a CPU of the list), ovni's
            // CPU trace shows it running.
            let mut bound_to: Vec<(u32, i32)> = Vec::new();
            for th in &t.threads {
                if let Some(cpu) =
                    th.events.iter().rev().find(|e| &e.mcv == b"OAs").and_then(|e| e.payload_u32(0))
                {
                    bound_to.push((th.tid, cpu as i32));
                }
            }
            if bind {
                let n: usize = threads.parse().unwrap();
                let on_cpus: Vec<&(u32, i32)> = bound_to.iter().filter(|b| b.1 >= 0).collect();
                assert!(on_cpus.len() >= n.min(2), "{what}: threads bound to CPUs: {bound_to:?}");
                for &&(tid, cpu) in &on_cpus {
                    let shown = theirs_c.durations(cpu as usize + 1, 2, false);
                    assert!(
                        shown.get(&(tid as u64)).is_some_and(|&d| d > 0),
                        "{what}: CPU {cpu} shows {shown:?}, not {tid}"
                    );
                }
            } else {
                assert!(
                    bound_to.iter().all(|b| b.1 == -1),
                    "{what}: an unbound run binds nothing: {bound_to:?}"
                );
            }
        }
    }
}
