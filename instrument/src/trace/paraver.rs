//! Paraver files of a trace, with the views ovni's emulator writes, so that ovni's Paraver
//! configurations (its `cfg/thread/openmp/*.cfg` and `cfg/cpu/openmp/*.cfg`) apply to them:
//!
//! - a thread trace, one row per thread: the subsystem state (event type 50, ovni's values),
//!   the label of the task or worksharing construct it runs (51: the number ovni derives from
//!   the type's label, so the same label has the same value and colour in both), and the task
//!   it runs (52); all 0 while the thread is not running (paused, or before its start and after
//!   its end), as ovni shows "the ACTIVE thread";
//! - a CPU trace, one row per CPU of each loom and one for its virtual CPU: the same three of
//!   the thread running there (0 unless exactly one runs), its TID (2) and how many run (3).
//!
//! One difference, by design: ovni 1.14 ignores "Barrier: spin wait" (`PBs`/`PBS`), so its
//! views show the barrier around it; these show the spin wait (value 4) for what it is.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::{PCF_HEAD, Trace};
use crate::format::{Event, Payload};
use crate::{State, code};

/// One Paraver trace: its three files' contents.
pub struct ParaverFiles {
    pub prv: String,
    pub pcf: String,
    pub row: String,
}

/// The values a thread shows at a time: running, its CPU index (-1 virtual; None before it
/// starts), and types 50, 51, 52 (each 0 when none).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Shown {
    running: bool,
    cpu: Option<i32>,
    values: [u64; 3],
}

const TYPES: [u32; 3] = [50, 51, 52];

/// A row's values at a time: (time, [(event type, value)]).
type RowChange = (u64, Vec<(u32, u64)>);

/// The thread and CPU traces of `trace`.
pub fn paraver(trace: &Trace) -> (ParaverFiles, ParaverFiles) {
    let (t0, t1) = trace.span();
    let labels = type_labels(trace);
    let timelines: Vec<Vec<(u64, Shown)>> = trace
        .threads
        .iter()
        .map(|t| timeline(&t.events, labels.get(&t.pid).unwrap_or(&TypeLabels::default())))
        .collect();
    (thread_files(trace, &timelines, t0, t1), cpu_files(trace, &timelines, t0, t1))
}

/// A process's task types (task id -> type) and types' label values (type -> value).
#[derive(Default)]
struct TypeLabels {
    task_type: HashMap<u32, u32>,
    label: HashMap<u32, u64>,
}

/// The types of each process's tasks and the values of their labels.
fn type_labels(trace: &Trace) -> HashMap<u32, TypeLabels> {
    let mut out: HashMap<u32, TypeLabels> = HashMap::new();
    for t in &trace.threads {
        let p = out.entry(t.pid).or_default();
        for e in &t.events {
            match (e.mcv, &e.payload) {
                (code::TASK_CREATE, _) => {
                    if let (Some(id), Some(ty)) = (e.payload_u32(0), e.payload_u32(4)) {
                        p.task_type.insert(id, ty);
                    }
                }
                (code::TYPE_CREATE, Payload::Jumbo(b)) if b.len() > 4 => {
                    let ty = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    let text = &b[4..];
                    let end = text.iter().position(|&c| c == 0).unwrap_or(text.len());
                    p.label.insert(ty, label_value(&text[..end]));
                }
                _ => {}
            }
        }
    }
    out
}

/// What a thread shows, from each of its events on: a change list (time, shown).
fn timeline(events: &[Event], types: &TypeLabels) -> Vec<(u64, Shown)> {
    let mut out: Vec<(u64, Shown)> = Vec::new();
    let (mut running, mut cpu) = (false, None);
    let mut states: Vec<State> = Vec::new();
    let mut tasks: Vec<u64> = Vec::new();
    let mut labels: Vec<u64> = Vec::new();
    for e in events {
        let id = e.payload_u32(0);
        match e.mcv {
            code::THREAD_EXECUTE => {
                running = true;
                cpu = Some(match e.payload {
                    Payload::ThreadExecute { cpu, .. } => cpu,
                    _ => -1,
                });
            }
            code::AFFINITY_SET => cpu = id.map(|c| c as i32),
            code::THREAD_PAUSE | code::THREAD_END => running = false,
            code::THREAD_RESUME => running = true,
            code::TASK_EXECUTE => {
                let id = id.unwrap_or(0);
                tasks.push(id as u64);
                let ty = types.task_type.get(&id).copied().unwrap_or(0);
                labels.push(types.label.get(&ty).copied().unwrap_or(0));
            }
            code::TASK_END => {
                tasks.pop();
                labels.pop();
            }
            code::WORKSHARING_BEGIN => {
                labels.push(id.and_then(|ty| types.label.get(&ty).copied()).unwrap_or(0))
            }
            code::WORKSHARING_END => {
                labels.pop();
            }
            mcv => {
                if let Some((s, enter)) = super::state_of(&mcv) {
                    if enter {
                        states.push(s);
                    } else {
                        states.pop();
                    }
                }
            }
        }
        let values = if running {
            [
                states.last().map_or(0, |s| *s as u64),
                labels.last().copied().unwrap_or(0),
                tasks.last().copied().unwrap_or(0),
            ]
        } else {
            [0; 3]
        };
        let shown = Shown { running, cpu, values };
        match out.last_mut() {
            Some(last) if last.1 == shown => {}
            // Several changes at one instant: the last one stands.
            Some(last) if last.0 == e.clock => last.1 = shown,
            _ => out.push((e.clock, shown)),
        }
    }
    out
}

/// The prv header line for `rows` rows over `t1 - t0`.
fn prv_head(t0: u64, t1: u64, rows: usize) -> String {
    format!("#Paraver (01/01/1970 at 00:00):{}_ns:1({rows}):1:1({rows}:1)\n", t1 - t0)
}

/// The event records of one row (1-based) with values `(time, [type values])`, for changes
/// only.
fn records(recs: &mut Vec<(u64, usize, u32, u64)>, row: usize, changes: &[RowChange]) {
    let mut now: HashMap<u32, u64> = HashMap::new();
    for (time, values) in changes {
        for &(ty, v) in values {
            if now.get(&ty).copied().unwrap_or(0) != v {
                now.insert(ty, v);
                recs.push((*time, row, ty, v));
            }
        }
    }
}

fn write_records(prv: &mut String, mut recs: Vec<(u64, usize, u32, u64)>, t0: u64) {
    recs.sort_by_key(|r| (r.0, r.1, r.2));
    for (time, row, ty, v) in recs {
        let _ = writeln!(prv, "2:{row}:1:1:{row}:{}:{ty}:{v}", time - t0);
    }
}

fn thread_files(trace: &Trace, timelines: &[Vec<(u64, Shown)>], t0: u64, t1: u64) -> ParaverFiles {
    let n = trace.threads.len();
    let mut prv = prv_head(t0, t1, n);
    let mut recs = Vec::new();
    for (k, tl) in timelines.iter().enumerate() {
        let changes: Vec<RowChange> =
            tl.iter().map(|(t, s)| (*t, TYPES.iter().copied().zip(s.values).collect())).collect();
        records(&mut recs, k + 1, &changes);
    }
    write_records(&mut prv, recs, t0);
    let mut row = format!("LEVEL THREAD SIZE {n}\n");
    for t in &trace.threads {
        let _ = writeln!(row, "THREAD {}.{}", t.pid, t.tid);
    }
    ParaverFiles { prv, pcf: pcf("of the ACTIVE thread", false), row }
}

/// One row per CPU of each loom (in the order of the looms' first streams), then the loom's
/// virtual CPU.
fn cpu_files(trace: &Trace, timelines: &[Vec<(u64, Shown)>], t0: u64, t1: u64) -> ParaverFiles {
    let mut looms: Vec<(&str, usize)> = Vec::new();
    for t in &trace.threads {
        let n = t.loom_cpus();
        match looms.iter_mut().find(|l| l.0 == t.loom) {
            Some(l) => l.1 = l.1.max(n),
            None => looms.push((t.loom.as_str(), n)),
        }
    }
    let mut row = String::new();
    let mut recs = Vec::new();
    let mut first_row = 1;
    for (li, &(loom, ncpus)) in looms.iter().enumerate() {
        for c in 0..ncpus {
            let _ = writeln!(row, "CPU {li}.{c}");
        }
        let _ = writeln!(row, "vCPU {li}.*");
        // Every change of a thread of the loom, in time order; per CPU, who runs there.
        let mut changes: Vec<(u64, usize, Shown)> = Vec::new();
        for (k, t) in trace.threads.iter().enumerate() {
            if t.loom == loom {
                changes.extend(timelines[k].iter().map(|&(time, s)| (time, k, s)));
            }
        }
        changes.sort_by_key(|c| (c.0, c.1));
        let mut now: HashMap<usize, Shown> = HashMap::new();
        let mut rows: Vec<Vec<RowChange>> = vec![Vec::new(); ncpus + 1];
        let mut i = 0;
        while i < changes.len() {
            let time = changes[i].0;
            while i < changes.len() && changes[i].0 == time {
                now.insert(changes[i].1, changes[i].2);
                i += 1;
            }
            for (c, out) in rows.iter_mut().enumerate() {
                let index = if c == ncpus { -1 } else { c as i32 };
                let here: Vec<usize> =
                    now.iter().filter(|(_, s)| s.running && s.cpu == Some(index)).map(|(&k, _)| k).collect();
                let (tid, values) = match here.as_slice() {
                    [k] => (trace.threads[*k].tid as u64, now[k].values),
                    _ => (0, [0; 3]),
                };
                let mut v: Vec<(u32, u64)> = vec![(2, tid), (3, here.len() as u64)];
                v.extend(TYPES.iter().copied().zip(values));
                out.push((time, v));
            }
        }
        for (c, changes) in rows.iter().enumerate() {
            records(&mut recs, first_row + c, changes);
        }
        first_row += ncpus + 1;
    }
    let rows = first_row - 1;
    let mut prv = prv_head(t0, t1, rows);
    write_records(&mut prv, recs, t0);
    let row = format!("LEVEL THREAD SIZE {rows}\n{row}");
    ParaverFiles { prv, pcf: pcf("of the RUNNING thread", true), row }
}

/// The `.pcf`: Paraver's sections, then the event types (named as ovni names them).
fn pcf(whose: &str, cpus: bool) -> String {
    let mut pcf = String::from(PCF_HEAD);
    if cpus {
        let _ = writeln!(pcf, "EVENT_TYPE\n0    2     TID {whose}\n");
        let _ = writeln!(pcf, "EVENT_TYPE\n0    3     Number of RUNNING threads\n");
    }
    let _ = writeln!(pcf, "EVENT_TYPE\n0    50    OpenMP subsystem {whose}\nVALUES\n0      End");
    for s in State::ALL {
        let _ = writeln!(pcf, "{:<6} {}", *s as u8, s.label());
    }
    let _ = writeln!(pcf, "\nEVENT_TYPE\n0    51    OpenMP label {whose}\n");
    let _ = writeln!(pcf, "EVENT_TYPE\n0    52    OpenMP task ID {whose}");
    pcf
}

/// The value ovni's emulator gives a type's label in its label view: Bob Jenkins' hash of the
/// label's bytes (the 1996 "lookup2" function, as uthash computes it, initial value
/// 0xfeedbeef), plus 666, kept positive.
pub fn label_value(label: &[u8]) -> u64 {
    (jenkins(label).wrapping_add(666) & 0x7fff_ffff) as u64
}

/// Bob Jenkins' lookup2 hash of `key` with the initial value 0xfeedbeef.
fn jenkins(key: &[u8]) -> u32 {
    fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
        // Three rounds of: each word less the other two, then mixed with a shift of the last.
        *a = a.wrapping_sub(*b).wrapping_sub(*c) ^ (*c >> 13);
        *b = b.wrapping_sub(*c).wrapping_sub(*a) ^ (*a << 8);
        *c = c.wrapping_sub(*a).wrapping_sub(*b) ^ (*b >> 13);
        *a = a.wrapping_sub(*b).wrapping_sub(*c) ^ (*c >> 12);
        *b = b.wrapping_sub(*c).wrapping_sub(*a) ^ (*a << 16);
        *c = c.wrapping_sub(*a).wrapping_sub(*b) ^ (*b >> 5);
        *a = a.wrapping_sub(*b).wrapping_sub(*c) ^ (*c >> 3);
        *b = b.wrapping_sub(*c).wrapping_sub(*a) ^ (*a << 10);
        *c = c.wrapping_sub(*a).wrapping_sub(*b) ^ (*b >> 15);
    }
    let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let (mut a, mut b, mut c) = (0x9e37_79b9u32, 0x9e37_79b9u32, 0xfeed_beefu32);
    let mut k = key;
    while k.len() >= 12 {
        a = a.wrapping_add(word(&k[0..4]));
        b = b.wrapping_add(word(&k[4..8]));
        c = c.wrapping_add(word(&k[8..12]));
        mix(&mut a, &mut b, &mut c);
        k = &k[12..];
    }
    c = c.wrapping_add(key.len() as u32);
    // The last bytes: into a (0..4), b (4..8), and c's upper three bytes (8..11).
    for (i, &byte) in k.iter().enumerate() {
        let v = byte as u32;
        match i {
            0..=3 => a = a.wrapping_add(v << (8 * i)),
            4..=7 => b = b.wrapping_add(v << (8 * (i - 4))),
            _ => c = c.wrapping_add(v << (8 * (i - 7))),
        }
    }
    mix(&mut a, &mut b, &mut c);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values ovni's emulator 1.14.0 wrote for these labels (its `thread.pcf`): labels of
    /// 1 to 25 bytes (every tail length of the hash after 0, 1 and 2 whole 12-byte blocks),
    /// and real ones.
    #[test]
    fn label_values_are_ovnis() {
        for (label, value) in [
            ("x", 1892352499),
            ("xx", 1380535261),
            ("xxx", 46705674),
            ("xxxx", 1293029800),
            ("xxxxx", 869659079),
            ("xxxxxx", 1376979980),
            ("xxxxxxx", 1890412432),
            ("xxxxxxxx", 245549439),
            ("xxxxxxxxx", 1685605078),
            ("xxxxxxxxxx", 1115790684),
            ("xxxxxxxxxxx", 1157326613),
            ("xxxxxxxxxxxx", 1712934780),
            ("xxxxxxxxxxxxx", 253947321),
            ("xxxxxxxxxxxxxx", 1251455599),
            ("xxxxxxxxxxxxxxx", 326856156),
            ("xxxxxxxxxxxxxxxx", 441636781),
            ("xxxxxxxxxxxxxxxxx", 399070091),
            ("xxxxxxxxxxxxxxxxxx", 27644416),
            ("xxxxxxxxxxxxxxxxxxx", 444408772),
            ("xxxxxxxxxxxxxxxxxxxx", 1223552766),
            ("xxxxxxxxxxxxxxxxxxxxx", 1422387134),
            ("xxxxxxxxxxxxxxxxxxxxxx", 275099771),
            ("xxxxxxxxxxxxxxxxxxxxxxx", 1950805094),
            ("xxxxxxxxxxxxxxxxxxxxxxxx", 1858766266),
            ("xxxxxxxxxxxxxxxxxxxxxxxxx", 1353555797),
            ("a", 2068372317),
            ("ab", 1377438717),
            ("abc", 1041449296),
            ("abcd", 490853538),
            ("abcde", 638434598),
            ("abcdef", 65470738),
            ("abcdefg", 1592972466),
            ("abcdefgh", 1728678965),
            ("abcdefghi", 884591256),
            ("abcdefghij", 486933592),
            ("abcdefghijk", 261216825),
            ("abcdefghijkl", 1721602274),
            ("abcdefghijklm", 1631672161),
            ("abcdefghijklmn", 1863724478),
            ("abcdefghijklmno", 1267808732),
            ("abcdefghijklmnop", 320773536),
            ("abcdefghijklmnopq", 1286961248),
            ("abcdefghijklmnopqr", 131141075),
            ("abcdefghijklmnopqrs", 617323896),
            ("abcdefghijklmnopqrst", 980486002),
            ("abcdefghijklmnopqrstu", 2094759040),
            ("abcdefghijklmnopqrstuv", 106547251),
            ("abcdefghijklmnopqrstuvw", 701367084),
            ("abcdefghijklmnopqrstuvwx", 1198998732),
            ("abcdefghijklmnopqrstuvwxy", 543145458),
            ("single /work/main/tests/c/task_basic.c:129:1", 792_258_254),
            ("/work/main/tests/c/task_basic.c:55:1", 508_199_764),
            ("/work/main/tests/c/task_basic.c:62:1", 1_405_575_645),
            ("single /work/main/tests/c/task_basic.c:144:1", 1_644_999_254),
            ("/work/main/tests/c/task_basic.c:160:1", 1_220_826_823),
            ("/work/main/tests/c/task_basic.c:165:1", 1_059_483_028),
        ] {
            assert_eq!(label_value(label.as_bytes()), value, "{label}");
        }
    }
}
