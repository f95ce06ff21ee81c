//! Reading a whole trace directory and turning it into views: validation, per-state
//! summaries, Paraver, Chrome/Perfetto JSON and an SVG timeline.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::format::{self, Event};
use crate::{State, code};

mod check;
mod paraver;

pub use paraver::{ParaverFiles, label_value, paraver};

/// One thread's stream.
#[derive(Debug)]
pub struct ThreadStream {
    pub loom: String,
    pub pid: u32,
    pub tid: u32,
    pub path: PathBuf,
    pub events: Vec<Event>,
    /// Offset of an incomplete last event (a stream cut short).
    pub truncated_at: Option<usize>,
    /// The stream's metadata (`stream.json` beside it), or why it could not be read.
    pub metadata: Result<String, String>,
}

impl ThreadStream {
    /// How many CPUs its metadata lists for the loom (`ovni.loom_cpus`; 0 if none).
    pub fn loom_cpus(&self) -> usize {
        self.metadata
            .as_ref()
            .ok()
            .and_then(|m| serde_json::from_str::<serde_json::Value>(m).ok())
            .and_then(|v| v.pointer("/ovni/loom_cpus").and_then(serde_json::Value::as_array).map(Vec::len))
            .unwrap_or(0)
    }

    /// Why the stream was cut short, if it was (its metadata says: a full disk, or another
    /// failed write).
    pub fn cut(&self) -> Option<String> {
        let v: serde_json::Value = serde_json::from_str(self.metadata.as_deref().ok()?).ok()?;
        v.pointer("/oxiomp/cut").and_then(serde_json::Value::as_str).map(str::to_string)
    }
}

/// A trace: every thread stream under a directory.
#[derive(Debug, Default)]
pub struct Trace {
    pub threads: Vec<ThreadStream>,
    /// The directories of streams never published (their metadata still `.stream.json`):
    /// threads of a process that ended without closing them (`_exit`, a crash, an `exec`)
    /// before any of their events reached the file, or whose metadata could not be renamed
    /// (the process warned then). Nothing of them is in the trace.
    pub unpublished: Vec<PathBuf>,
}

fn id_of(name: &str, prefix: &str) -> Option<String> {
    name.strip_prefix(prefix).map(str::to_string)
}

impl Trace {
    /// Reads `dir` (`loom.*/proc.*/thread.*/stream.obs`). Errors name the file and, for bad
    /// content, the byte offset.
    pub fn read(dir: &Path) -> Result<Trace, String> {
        let (t, unreadable) = Trace::read_all(dir)?;
        match unreadable.into_iter().next() {
            Some(e) => Err(e),
            None => Ok(t),
        }
    }

    /// Reads every stream of `dir` that can be read; the others are listed, one message each
    /// naming the file and, for bad content, the byte offset. An error only when `dir` holds no
    /// stream at all (or cannot be listed).
    pub fn read_all(dir: &Path) -> Result<(Trace, Vec<String>), String> {
        let mut t = Trace::default();
        let mut unreadable = Vec::new();
        let rd = |p: &Path| std::fs::read_dir(p).map_err(|e| format!("{}: {e}", p.display()));
        let mut looms: Vec<_> = rd(dir)?.flatten().map(|e| e.path()).collect();
        looms.sort();
        for l in looms {
            let Some(loom) = l.file_name().and_then(|n| id_of(&n.to_string_lossy(), "loom.")) else {
                continue;
            };
            let mut procs: Vec<_> = rd(&l)?.flatten().map(|e| e.path()).collect();
            procs.sort();
            for p in procs {
                let Some(pid) = p.file_name().and_then(|n| id_of(&n.to_string_lossy(), "proc.")) else {
                    continue;
                };
                let mut threads: Vec<_> = rd(&p)?.flatten().map(|e| e.path()).collect();
                threads.sort();
                for th in threads {
                    let Some(tid) = th.file_name().and_then(|n| id_of(&n.to_string_lossy(), "thread."))
                    else {
                        continue;
                    };
                    let json = th.join("stream.json");
                    if !json.exists() && th.join(".stream.json").exists() {
                        t.unpublished.push(th);
                        continue;
                    }
                    let path = th.join("stream.obs");
                    let decoded = std::fs::read(&path)
                        .map_err(|e| format!("{}: {e}", path.display()))
                        .and_then(|b| format::decode(&b).map_err(|e| format!("{}: {e}", path.display())));
                    let d = match decoded {
                        Ok(d) => d,
                        Err(e) => {
                            unreadable.push(e);
                            continue;
                        }
                    };
                    t.threads.push(ThreadStream {
                        loom: loom.clone(),
                        pid: pid.parse().unwrap_or(0),
                        tid: tid.parse().unwrap_or(0),
                        path,
                        events: d.events,
                        truncated_at: d.truncated_at,
                        metadata: std::fs::read_to_string(&json)
                            .map_err(|e| format!("{}: {e}", json.display())),
                    });
                }
            }
        }
        if t.threads.is_empty() && unreadable.is_empty() {
            let why = match t.unpublished.len() {
                0 => String::new(),
                n => format!(
                    "; {n} never published: their process ended without closing them (_exit, a crash) \
                     before any of their events were written"
                ),
            };
            return Err(format!(
                "{}: no thread streams (loom.*/proc.*/thread.*/stream.obs){why}",
                dir.display()
            ));
        }
        Ok((t, unreadable))
    }

    /// The earliest and latest clock of the trace.
    pub fn span(&self) -> (u64, u64) {
        let first = self.threads.iter().filter_map(|t| t.events.first()).map(|e| e.clock).min().unwrap_or(0);
        let last = self.threads.iter().filter_map(|t| t.events.last()).map(|e| e.clock).max().unwrap_or(0);
        (first, last)
    }

    /// Per thread, the intervals during which each state was the innermost one.
    pub fn intervals(&self) -> Vec<Vec<Interval>> {
        self.threads.iter().map(|t| intervals_of(&t.events)).collect()
    }
}

/// A stretch of time a thread spent with `state` innermost (`depth`: stack depth, from 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    pub state: State,
    pub begin: u64,
    pub end: u64,
    pub depth: usize,
}

/// The state an event code enters (true) or leaves (false).
pub fn state_of(mcv: &[u8; 3]) -> Option<(State, bool)> {
    State::ALL.iter().find_map(|s| {
        let (enter, leave) = (s.ovni_code(true), s.ovni_code(false));
        if enter == *mcv {
            Some((*s, true))
        } else if leave == *mcv && leave != enter {
            Some((*s, false))
        } else {
            None
        }
    })
}

fn intervals_of(events: &[Event]) -> Vec<Interval> {
    let mut out = Vec::new();
    let mut stack: Vec<(State, u64)> = Vec::new();
    let end = events.last().map_or(0, |e| e.clock);
    for e in events {
        let Some((s, enter)) = state_of(&e.mcv) else { continue };
        if let Some(&(top, since)) = stack.last() {
            out.push(Interval { state: top, begin: since, end: e.clock, depth: stack.len() });
        }
        if enter {
            stack.push((s, e.clock));
        } else if stack.last().is_some_and(|t| t.0 == s) {
            stack.pop();
        }
        if let Some(top) = stack.last_mut() {
            top.1 = e.clock;
        }
    }
    if let Some(&(top, since)) = stack.last() {
        out.push(Interval { state: top, begin: since, end, depth: stack.len() });
    }
    out.retain(|i| i.end > i.begin);
    out
}

/// Per thread and state: (total ns innermost, times entered).
pub fn summary(trace: &Trace) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{:<10} {:<40} {:>14} {:>7} {:>9}", "thread", "state", "time (us)", "share", "count");
    for (t, iv) in trace.threads.iter().zip(trace.intervals()) {
        let first = t.events.first().map_or(0, |e| e.clock);
        let last = t.events.last().map_or(0, |e| e.clock);
        let total = (last - first).max(1) as f64;
        for st in State::ALL {
            let ns: u64 = iv.iter().filter(|i| i.state == *st).map(|i| i.end - i.begin).sum();
            let count = t.events.iter().filter(|e| e.mcv == *st.ovni_mcv()).count();
            if count == 0 && ns == 0 {
                continue;
            }
            let _ = writeln!(
                s,
                "{:<10} {:<40} {:>14.3} {:>6.1}% {:>9}",
                t.tid,
                st.label(),
                ns as f64 / 1e3,
                100.0 * ns as f64 / total,
                count
            );
        }
    }
    s
}

/// The `.pcf` sections before the event types: Paraver's defaults (thread level, times in ns,
/// the semantic of a thread window) and its standard state names and colours, which its own
/// tools and configurations expect to find. Our `.prv` has event records only (as ovni's
/// emulator writes), so every thread is in state 0 throughout.
const PCF_HEAD: &str = "DEFAULT_OPTIONS

LEVEL               THREAD
UNITS               NANOSEC
LOOK_BACK           100
SPEED               1
FLAG_ICONS          ENABLED
NUM_OF_STATE_COLORS 1000
YMAX_SCALE          37


DEFAULT_SEMANTIC

THREAD_FUNC         State As Is


STATES
0    Idle
1    Running
2    Not created
3    Waiting a message
4    Blocking Send
5    Synchronization
6    Test/Probe
7    Scheduling and Fork/Join
8    Wait/WaitAll
9    Blocked
10   Immediate Send
11   Immediate Receive
12   I/O
13   Group Communication
14   Tracing Disabled
15   Others
16   Send Receive
17   Memory transfer


STATES_COLOR
0    {117,195,255}
1    {0,0,255}
2    {255,255,255}
3    {255,0,0}
4    {255,0,174}
5    {179,0,0}
6    {0,255,0}
7    {255,255,0}
8    {235,0,0}
9    {0,162,0}
10   {255,0,255}
11   {100,100,177}
12   {172,174,41}
13   {255,144,26}
14   {2,255,177}
15   {192,224,0}
16   {66,66,66}
17   {255,0,96}


";

fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// Chrome Trace Event JSON (Perfetto, chrome://tracing): one track per thread, the state
/// stack as nested slices, each task run as a slice "task N" with its number as argument.
pub fn chrome(trace: &Trace) -> String {
    let (t0, _) = trace.span();
    let mut o = String::from("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    let mut first = true;
    for t in &trace.threads {
        let mut push = |line: String| {
            if !first {
                o.push_str(",\n");
            }
            first = false;
            o.push_str(&line);
        };
        push(format!(
            "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}}",
            t.pid,
            t.tid,
            json_str(&format!("thread {}", t.tid))
        ));
        let mut depth = 0usize;
        for e in &t.events {
            if e.mcv == code::TASK_EXECUTE || e.mcv == code::TASK_END {
                let ts = (e.clock - t0) as f64 / 1e3;
                let id = e.payload_u32(0).unwrap_or(0);
                push(if e.mcv == code::TASK_EXECUTE {
                    format!(
                        "{{\"ph\":\"B\",\"name\":\"task {id}\",\"cat\":\"task\",\"pid\":{},\"tid\":{},\"ts\":{ts:.3},\"args\":{{\"task\":{id}}}}}",
                        t.pid, t.tid
                    )
                } else {
                    format!("{{\"ph\":\"E\",\"pid\":{},\"tid\":{},\"ts\":{ts:.3}}}", t.pid, t.tid)
                });
                continue;
            }
            let Some((s, enter)) = state_of(&e.mcv) else { continue };
            let ts = (e.clock - t0) as f64 / 1e3;
            if enter {
                depth += 1;
                push(format!(
                    "{{\"ph\":\"B\",\"name\":{},\"cat\":{},\"pid\":{},\"tid\":{},\"ts\":{ts:.3}}}",
                    json_str(s.label()),
                    json_str(&format!("{:?}", s.subsystem())),
                    t.pid,
                    t.tid
                ));
            } else if depth > 0 {
                depth -= 1;
                push(format!("{{\"ph\":\"E\",\"pid\":{},\"tid\":{},\"ts\":{ts:.3}}}", t.pid, t.tid));
            }
        }
    }
    o.push_str("\n]}\n");
    o
}

/// The colour of a state in pictures: a hue family per subsystem (barriers red, critical
/// purple, work distribution blue/green, tasks yellow/brown, runtime grey), shades within it.
pub fn colour(s: State) -> &'static str {
    match s {
        State::BarrierFork => "#f4a582",
        State::BarrierJoin => "#d6604d",
        State::BarrierPlain => "#b2182b",
        State::BarrierSpinWait => "#fddbc7",
        State::BarrierTask => "#e08214",
        State::CriticalAcquiring => "#c2a5cf",
        State::CriticalReleasing => "#9970ab",
        State::CriticalSection => "#762a83",
        State::Distribute => "#08519c",
        State::DynamicForChunk => "#3182bd",
        State::DynamicForInit => "#9ecae1",
        State::StaticForChunk => "#2171b5",
        State::Section => "#41ab5d",
        State::Single => "#006d2c",
        State::TaskAllocation => "#fee391",
        State::TaskCheckDeps => "#fec44f",
        State::TaskDuplicating => "#fe9929",
        State::TaskReleasingDeps => "#ec7014",
        State::TaskRunning => "#cc9a06",
        State::TaskRunningIf0 => "#a6761d",
        State::TaskScheduling => "#ffffb2",
        State::Taskgroup => "#8c6d31",
        State::Taskwait => "#bf812d",
        State::TaskwaitDeps => "#dfc27d",
        State::Taskyield => "#f6e8c3",
        State::Attached => "#d9d9d9",
        State::ForkCall => "#969696",
        State::Init => "#525252",
        State::InternalMicrotask => "#bdbdbd",
        State::UserMicrotask => "#e7e7e7",
        State::WorkerLoop => "#f0f0f0",
    }
}

/// Columns of a lane: each column is drawn in the state that took most of its time, so a
/// picture of millions of intervals stays small (at most this many rectangles per lane).
const COLUMNS: usize = 2000;

/// A lane as runs of columns: (first column, number of columns, state), for the columns in
/// which some state was innermost for at least a third of the column's time.
fn lane_runs(iv: &[Interval], t0: u64, span: f64, columns: usize) -> Vec<(usize, usize, State)> {
    let mut per_col: Vec<[f64; 32]> = vec![[0.0; 32]; columns];
    let col_ns = span / columns as f64;
    for i in iv {
        let b = (i.begin - t0) as f64;
        let e = (i.end - t0) as f64;
        let first = ((b / col_ns) as usize).min(columns - 1);
        let last = ((e / col_ns) as usize).min(columns - 1);
        for (c, col) in per_col.iter_mut().enumerate().take(last + 1).skip(first) {
            let lo = b.max(c as f64 * col_ns);
            let hi = e.min((c + 1) as f64 * col_ns);
            if hi > lo {
                col[i.state as usize] += hi - lo;
            }
        }
    }
    let mut runs: Vec<(usize, usize, State)> = Vec::new();
    for (c, col) in per_col.iter().enumerate() {
        let (best, t) =
            col.iter().enumerate().fold((0, 0.0), |acc, (k, &t)| if t > acc.1 { (k, t) } else { acc });
        if t < col_ns / 3.0 {
            continue;
        }
        let Some(st) = State::ALL.iter().copied().find(|s| *s as usize == best) else { continue };
        match runs.last_mut() {
            Some(r) if r.2 == st && r.0 + r.1 == c => r.1 += 1,
            _ => runs.push((c, 1, st)),
        }
    }
    runs
}

/// An SVG timeline: one lane per thread coloured by the innermost state, a time axis and a
/// legend of the states that occur.
pub fn svg(trace: &Trace) -> String {
    let (t0, t1) = trace.span();
    let span = (t1 - t0).max(1) as f64;
    let (left, width, lane, top) = (110.0, 1000.0, 22.0, 30.0);
    let n = trace.threads.len();
    let ivs = trace.intervals();
    let used: Vec<State> =
        State::ALL.iter().copied().filter(|s| ivs.iter().flatten().any(|i| i.state == *s)).collect();
    let legend_rows = used.len().div_ceil(3);
    let height = top + n as f64 * lane + 50.0 + legend_rows as f64 * 18.0;
    let mut o = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"18\" font-size=\"13\">oxiomp trace: {n} threads, {:.3} ms</text>\n",
        left + width + 20.0,
        span / 1e6
    );
    for (k, (t, iv)) in trace.threads.iter().zip(&ivs).enumerate() {
        let y = top + k as f64 * lane;
        let _ = writeln!(o, "<text x=\"4\" y=\"{:.1}\">thread {}</text>", y + 14.0, t.tid);
        let _ = writeln!(
            o,
            "<rect x=\"{left}\" y=\"{y}\" width=\"{width}\" height=\"{}\" fill=\"#f4f4f4\"/>",
            lane - 4.0
        );
        for (col, cols, st) in lane_runs(iv, t0, span, COLUMNS) {
            let x = left + col as f64 * width / COLUMNS as f64;
            let w = cols as f64 * width / COLUMNS as f64;
            let _ = writeln!(
                o,
                "<rect x=\"{x:.2}\" y=\"{y}\" width=\"{w:.2}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>",
                lane - 4.0,
                colour(st),
                st.label()
            );
        }
    }
    let axis_y = top + n as f64 * lane + 6.0;
    let _ = writeln!(
        o,
        "<line x1=\"{left}\" y1=\"{axis_y}\" x2=\"{}\" y2=\"{axis_y}\" stroke=\"black\"/>",
        left + width
    );
    for k in 0..=10 {
        let x = left + width * k as f64 / 10.0;
        let _ = writeln!(
            o,
            "<line x1=\"{x}\" y1=\"{axis_y}\" x2=\"{x}\" y2=\"{}\" stroke=\"black\"/>",
            axis_y + 4.0
        );
        let _ = writeln!(
            o,
            "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{:.3} ms</text>",
            axis_y + 16.0,
            span * k as f64 / 10.0 / 1e6
        );
    }
    for (k, s) in used.iter().enumerate() {
        let x = left + (k % 3) as f64 * 330.0;
        let y = axis_y + 30.0 + (k / 3) as f64 * 18.0;
        let _ = writeln!(
            o,
            "<rect x=\"{x}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>",
            y - 10.0,
            colour(*s)
        );
        let _ = writeln!(o, "<text x=\"{}\" y=\"{y}\">{}</text>", x + 16.0, s.label());
    }
    o.push_str("</svg>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Payload;

    #[test]
    fn paraver_records_state_and_running_task() {
        let raw = |id: u32| Payload::Raw(id.to_le_bytes().to_vec());
        let evs = vec![
            ev(b"OHx", 100),
            ev(b"PT[", 110),
            Event { mcv: *b"PPx", clock: 110, payload: raw(7) },
            Event { mcv: *b"PPe", clock: 150, payload: raw(7) },
            ev(b"PT]", 150),
            ev(b"OHe", 160),
        ];
        let t = Trace {
            threads: vec![ThreadStream {
                loom: "l".into(),
                pid: 1,
                tid: 2,
                path: PathBuf::from("x"),
                events: evs,
                truncated_at: None,
                metadata: Err("none".into()),
            }],
            unpublished: Vec::new(),
        };
        let (threads, cpus) = paraver(&t);
        let (prv, pcf, row) = (threads.prv, threads.pcf, threads.row);
        assert_eq!(
            prv.lines().skip(1).collect::<Vec<_>>(),
            vec!["2:1:1:1:1:10:50:19", "2:1:1:1:1:10:52:7", "2:1:1:1:1:50:50:0", "2:1:1:1:1:50:52:0"]
        );
        // No loom CPUs listed (no metadata): the virtual CPU's row, on which the thread runs.
        assert_eq!(cpus.row, "LEVEL THREAD SIZE 1\nvCPU 0.*\n");
        assert_eq!(
            cpus.prv.lines().skip(1).collect::<Vec<_>>(),
            vec![
                "2:1:1:1:1:0:2:2",
                "2:1:1:1:1:0:3:1",
                "2:1:1:1:1:10:50:19",
                "2:1:1:1:1:10:52:7",
                "2:1:1:1:1:50:50:0",
                "2:1:1:1:1:50:52:0",
                "2:1:1:1:1:60:2:0",
                "2:1:1:1:1:60:3:0"
            ]
        );
        assert!(prv.starts_with("#Paraver (01/01/1970 at 00:00):60_ns:1(1):1:1(1:1)"));
        assert!(pcf.contains("19     Task: running task") && pcf.contains("52    OpenMP task ID"));
        assert!(pcf.contains("51    OpenMP label of the ACTIVE thread"));
        assert_eq!(row, "LEVEL THREAD SIZE 1\nTHREAD 1.2\n");
        // Paraver's sections, in its order, each state with a colour.
        let heads: Vec<&str> = pcf
            .lines()
            .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && !l.contains(' '))
            .collect();
        assert_eq!(
            heads,
            [
                "DEFAULT_OPTIONS",
                "DEFAULT_SEMANTIC",
                "STATES",
                "STATES_COLOR",
                "EVENT_TYPE",
                "VALUES",
                "EVENT_TYPE",
                "EVENT_TYPE"
            ]
        );
        let section = |name: &str| -> Vec<String> {
            let body = pcf.split(&format!("{name}\n")).nth(1).unwrap_or("");
            body.lines()
                .take_while(|l| !l.is_empty())
                .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
                .collect()
        };
        assert_eq!(section("STATES"), section("STATES_COLOR"));
        assert!(section("STATES").len() > 10 && section("STATES")[0] == "0");
        assert!(
            pcf.contains("THREAD_FUNC         State As Is") && pcf.contains("UNITS               NANOSEC")
        );
    }

    #[test]
    fn lanes_merge_columns_by_dominant_state() {
        let iv = [
            Interval { state: State::UserMicrotask, begin: 0, end: 50, depth: 1 },
            Interval { state: State::BarrierPlain, begin: 50, end: 52, depth: 2 },
            Interval { state: State::UserMicrotask, begin: 52, end: 100, depth: 1 },
        ];
        // 10 columns of 10 ns: the 2 ns barrier does not dominate its column.
        assert_eq!(lane_runs(&iv, 0, 100.0, 10), vec![(0, 10, State::UserMicrotask)]);
        let iv = [
            Interval { state: State::UserMicrotask, begin: 0, end: 40, depth: 1 },
            Interval { state: State::BarrierPlain, begin: 40, end: 100, depth: 2 },
        ];
        assert_eq!(
            lane_runs(&iv, 0, 100.0, 10),
            vec![(0, 4, State::UserMicrotask), (4, 6, State::BarrierPlain)]
        );
    }

    fn ev(mcv: &[u8; 3], clock: u64) -> Event {
        Event { mcv: *mcv, clock, payload: Payload::None }
    }

    #[test]
    fn innermost_intervals() {
        let evs =
            [ev(b"OHx", 0), ev(b"PMu", 10), ev(b"PBb", 20), ev(b"PBB", 50), ev(b"PMU", 60), ev(b"OHe", 70)];
        let iv = intervals_of(&evs);
        assert_eq!(
            iv,
            vec![
                Interval { state: State::UserMicrotask, begin: 10, end: 20, depth: 1 },
                Interval { state: State::BarrierPlain, begin: 20, end: 50, depth: 2 },
                Interval { state: State::UserMicrotask, begin: 50, end: 60, depth: 1 },
            ]
        );
        assert_eq!(state_of(b"PBB"), Some((State::BarrierPlain, false)));
        assert_eq!(state_of(b"PI]"), Some((State::CriticalSection, false)));
        assert_eq!(state_of(b"OHx"), None);
    }
}
