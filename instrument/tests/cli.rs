//! The `oxiomp-trace` tool on hand-made traces (written with the crate's own stream encoder):
//! `check` accepts a good trace and names the file and offset of what is wrong in bad ones;
//! `chrome` writes JSON whose slices nest per thread and carry task numbers; `svg` draws one
//! lane per thread, a legend of the states seen and a time axis; `summary` has one row per
//! thread and state seen, with shares adding up to the thread's time.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use oxiomp_instrument::format::{self, Event, Payload};

const EXE: &str = env!("CARGO_BIN_EXE_oxiomp-trace");
/// The clock of the trace's first event, and a millisecond.
const T0: u64 = 5_000_000;
const MS: u64 = 1_000_000;

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn encode(events: &[Event]) -> Vec<u8> {
    let mut b = format::STREAM_HEADER.to_vec();
    for e in events {
        let mut buf = [0u8; 64];
        let n = format::encode(e, &mut buf);
        b.extend_from_slice(&buf[..n]);
    }
    b
}

/// Writes one thread's stream of process 100, and its metadata; returns the stream's path.
fn write_stream(dir: &Path, tid: u32, bytes: &[u8]) -> PathBuf {
    let p = dir.join(format!("loom.test/proc.100/thread.{tid}"));
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join("stream.obs"), bytes).unwrap();
    std::fs::write(p.join("stream.json"), metadata(tid)).unwrap();
    p.join("stream.obs")
}

/// The metadata of thread `tid` of process 100 on loom "test", as the recorder writes it.
fn metadata(tid: u32) -> String {
    format!(
        "{{\"version\": 3, \"ovni\": {{\"lib\": {{\"version\": \"1.14.0\", \"commit\": \"oxiomp\"}}, \
         \"part\": \"thread\", \"tid\": {tid}, \"pid\": 100, \"loom\": \"test\", \"app_id\": 1, \
         \"require\": {{\"ovni\": \"1.1.0\", \"openmp\": \"1.2.1\"}}, \
         \"loom_cpus\": [{{\"index\": 0, \"phyid\": 0}}], \"finished\": 1}}}}\n"
    )
}

/// An event at `ms` milliseconds after T0 (no payload but for OHx).
fn ev(mcv: &[u8; 3], ms: f64) -> Event {
    let clock = T0 + (ms * MS as f64).round() as u64;
    let payload =
        if mcv == b"OHx" { Payload::ThreadExecute { cpu: -1, creator: -1, tag: 0 } } else { Payload::None };
    Event { mcv: *mcv, clock, payload }
}

fn with(mut e: Event, payload: Payload) -> Event {
    e.payload = payload;
    e
}

fn task(mcv: &[u8; 3], ms: f64, id: u32) -> Event {
    let p = if mcv == b"PPc" {
        Payload::Raw([id.to_le_bytes(), 1u32.to_le_bytes()].concat())
    } else {
        Payload::Raw(id.to_le_bytes().to_vec())
    };
    with(ev(mcv, ms), p)
}

/// Three threads over 10 ms, each always in some state between its first and last event:
/// - 100: user microtask 0..10, allocating tasks 1 and 2 (1..1.5, 1.5..1.6), running task 1
///   (2..4), a plain barrier (6..8);
/// - 101: worker loop 0.5..9, running task 2 (3..5) holding a critical section (acquiring
///   3.5..3.6, section 3.6..4.4, releasing 4.4..4.5);
/// - 102: worker loop 1..7, a plain barrier 2..7.
fn good_trace(dir: &Path) -> Vec<PathBuf> {
    let a = vec![
        ev(b"OHx", 0.0),
        ev(b"PMu", 0.0),
        with(ev(b"POc", 1.0), Payload::Jumbo([&1u32.to_le_bytes()[..], b"task_a\0"].concat())),
        ev(b"PTa", 1.0),
        task(b"PPc", 1.5, 1),
        ev(b"PTA", 1.5),
        ev(b"PTa", 1.5),
        task(b"PPc", 1.6, 2),
        ev(b"PTA", 1.6),
        ev(b"PT[", 2.0),
        task(b"PPx", 2.0, 1),
        task(b"PPe", 4.0, 1),
        ev(b"PT]", 4.0),
        ev(b"PBb", 6.0),
        ev(b"PBB", 8.0),
        ev(b"PMU", 10.0),
        ev(b"OHe", 10.0),
    ];
    let b = vec![
        ev(b"OHx", 0.5),
        ev(b"PH[", 0.5),
        ev(b"PT[", 3.0),
        task(b"PPx", 3.0, 2),
        ev(b"PIa", 3.5),
        ev(b"PIA", 3.6),
        ev(b"PI[", 3.6),
        ev(b"PI]", 4.4),
        ev(b"PIr", 4.4),
        ev(b"PIR", 4.5),
        task(b"PPe", 5.0, 2),
        ev(b"PT]", 5.0),
        ev(b"PH]", 9.0),
        ev(b"OHe", 9.0),
    ];
    let c = vec![
        ev(b"OHx", 1.0),
        ev(b"PH[", 1.0),
        ev(b"PBb", 2.0),
        ev(b"PBB", 7.0),
        ev(b"PH]", 7.0),
        ev(b"OHe", 7.0),
    ];
    [(100, a), (101, b), (102, c)].iter().map(|(tid, evs)| write_stream(dir, *tid, &encode(evs))).collect()
}

fn run(args: &[&str]) -> Output {
    Command::new(EXE).args(args).output().expect("running oxiomp-trace")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn check_accepts_a_good_trace_and_names_what_is_wrong() {
    let good = scratch("check-good");
    good_trace(&good);
    let o = run(&["check", good.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    assert_eq!(text(&o.stdout), format!("trace {} is valid: 3 threads, 37 events\n", good.display()));

    // Truncated: the last event of thread 101 cut short. Readable: check reports it (status 1).
    let dir = scratch("check-truncated");
    let paths = good_trace(&dir);
    let mut bytes = std::fs::read(&paths[1]).unwrap();
    let whole = bytes.len();
    bytes.truncate(whole - 5);
    std::fs::write(&paths[1], &bytes).unwrap();
    let o = run(&["check", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    let out = text(&o.stdout);
    // The last event (OHe, 12 bytes) begins 12 bytes before the end; 13 events read.
    let want = format!(
        "{}: event 13: stream ends inside an event at byte offset {} (read up to there)",
        paths[1].display(),
        whole - 12
    );
    assert!(out.lines().any(|l| l == want), "{out}");
    assert!(out.contains("is NOT valid: 1 problem(s)"), "{out}");

    // Wrong magic: a problem naming the file and offset 0 (status 1), the other streams
    // checked as usual; a view of the trace cannot be made (status 2, the same message).
    let dir = scratch("check-magic");
    let paths = good_trace(&dir);
    let mut bytes = std::fs::read(&paths[2]).unwrap();
    bytes[..4].copy_from_slice(b"OVNI");
    std::fs::write(&paths[2], &bytes).unwrap();
    let o = run(&["check", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let bad_magic = format!("{}: offset 0: bad magic \"OVNI\" (expected \"ovni\")", paths[2].display());
    assert_eq!(
        text(&o.stdout),
        format!("{bad_magic}\ntrace {} is NOT valid: 1 problem(s)\n", dir.display()),
        "{}",
        text(&o.stderr)
    );
    let o = run(&["summary", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(text(&o.stderr), format!("oxiomp-trace: {bad_magic}\n"));

    // An unknown event after the first (OHx, 28 bytes after the 8-byte header): offset 36.
    let dir = scratch("check-unknown");
    let mut bytes = encode(&[ev(b"OHx", 0.0)]);
    bytes.extend_from_slice(&[0, b'X', b'y', b'z', 1, 0, 0, 0, 0, 0, 0, 0]);
    bytes.extend_from_slice(&encode(&[ev(b"OHe", 1.0)])[8..]);
    let p = write_stream(&dir, 7, &bytes);
    let o = run(&["check", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stdout),
        format!(
            "{}: offset 36: unknown event \"Xyz\"\ntrace {} is NOT valid: 1 problem(s)\n",
            p.display(),
            dir.display()
        )
    );

    // No trace at all: status 2.
    let o = run(&["check", scratch("check-empty").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no thread streams"), "{}", text(&o.stderr));

    // States that do not nest: the event and both states named (status 1).
    let dir = scratch("check-nesting");
    let p = write_stream(
        &dir,
        7,
        &encode(&[ev(b"OHx", 0.0), ev(b"PBb", 1.0), ev(b"PTa", 2.0), ev(b"PBB", 3.0), ev(b"OHe", 4.0)]),
    );
    let o = run(&["check", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stdout),
        format!(
            "{p}: event 3: leaves \"Barrier: plain\" while in \"Task: allocation\"\n\
             {p}: event 4: the thread ends (OHe) inside \"Barrier: plain\" (outermost first)\n\
             trace {} is NOT valid: 2 problem(s)\n",
            dir.display(),
            p = p.display(),
        )
    );
}

/// What a thread leaves open when it ends is a problem: states, a running task, a part of a
/// worksharing construct; and so is a stream without the thread's end.
#[test]
fn check_names_what_a_thread_leaves_open() {
    let dir = scratch("check-open");
    let poc = with(ev(b"POc", 0.5), Payload::Jumbo([&1u32.to_le_bytes()[..], b"ws\0"].concat()));
    let ws = |mcv: &[u8; 3], ms: f64| with(ev(mcv, ms), Payload::Raw(1u32.to_le_bytes().to_vec()));
    let p = write_stream(
        &dir,
        7,
        &encode(&[
            ev(b"OHx", 0.0),
            ev(b"PMu", 0.5),
            poc,
            ws(b"PQx", 1.0),
            ev(b"PWs", 1.0),
            ev(b"PTa", 1.2),
            task(b"PPc", 1.3, 4),
            ev(b"PTA", 1.3),
            ev(b"PT[", 2.0),
            task(b"PPx", 2.0, 4),
            ev(b"OHe", 3.0),
        ]),
    );
    let q = write_stream(&dir, 8, &encode(&[ev(b"OHx", 0.0), ev(b"PH[", 0.5)]));
    let o = run(&["check", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stdout),
        format!(
            "{p}: event 10: the thread ends (OHe) inside \"Runtime: user microtask\", \
             \"Work-distribution: static for chunk\", \"Task: running task\" (outermost first)\n\
             {q}: event 2: the stream ends without the thread's end (OHe): the process stopped \
             without closing it (killed, or it crashed)\n\
             {p}: event 10: the thread ends (OHe) inside worksharing construct(s) of type [1]\n\
             {p}: event 10: the thread ends (OHe) while task 4 runs (no PPe)\n\
             trace {} is NOT valid: 4 problem(s)\n",
            dir.display(),
            p = p.display(),
            q = q.display(),
        )
    );
}

/// Every stream needs its metadata, as ovni's emulator reads it: a missing `stream.json`, one
/// that is not JSON, and fields that disagree with the directory or the format are named.
#[test]
fn check_reads_the_streams_metadata() {
    let dir = scratch("check-metadata");
    let paths = good_trace(&dir);
    let json = |k: usize| paths[k].with_file_name("stream.json");
    std::fs::remove_file(json(0)).unwrap();
    std::fs::write(json(1), "{\"version\": 3,").unwrap();
    let wrong =
        metadata(102).replace("\"tid\": 102", "\"tid\": 5").replace("\"finished\": 1", "\"finished\": 0");
    std::fs::write(json(2), wrong.replace(", \"openmp\": \"1.2.1\"", "")).unwrap();
    let o = run(&["check", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    let (j0, j1, j2) = (json(0), json(1), json(2));
    assert_eq!(lines.len(), 6, "{out}");
    assert_eq!(lines[5], format!("trace {} is NOT valid: 5 problem(s)", dir.display()));
    assert!(lines[0].starts_with(&format!("{}: No such file", j0.display())), "{out}");
    assert!(lines[0].ends_with("(every stream needs its metadata)"), "{out}");
    assert!(lines[1].starts_with(&format!("{}: not JSON: EOF while parsing", j1.display())), "{out}");
    assert_eq!(lines[2], format!("{}: /ovni/tid is 5, expected 102 (the directory's)", j2.display()));
    assert_eq!(lines[3], format!("{}: /ovni/finished is 0, expected 1", j2.display()));
    assert_eq!(
        lines[4],
        format!(
            "{}: /ovni/require/openmp is missing (expected a version string (the OpenMP model))",
            j2.display()
        )
    );
    // No stream of the loom lists its CPUs.
    let dir = scratch("check-cpus");
    let paths = good_trace(&dir);
    for p in &paths {
        let j = p.with_file_name("stream.json");
        let text = std::fs::read_to_string(&j).unwrap();
        std::fs::write(&j, text.replace("[{\"index\": 0, \"phyid\": 0}]", "[]")).unwrap();
    }
    let o = run(&["check", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stdout),
        format!(
            "loom.test: no stream.json of the loom lists its CPUs (ovni.loom_cpus)\n\
             trace {} is NOT valid: 1 problem(s)\n",
            dir.display()
        )
    );
}

/// A JSON value (just enough to read what `chrome` writes).
#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(BTreeMap<String, Json>),
}

impl Json {
    fn get(&self, k: &str) -> Option<&Json> {
        match self {
            Json::Obj(m) => m.get(k),
            _ => None,
        }
    }
    fn str(&self, k: &str) -> Option<&str> {
        match self.get(k) {
            Some(Json::Str(s)) => Some(s),
            _ => None,
        }
    }
    fn num(&self, k: &str) -> Option<f64> {
        match self.get(k) {
            Some(Json::Num(n)) => Some(*n),
            _ => None,
        }
    }
}

/// A strict parser for the JSON grammar (RFC 8259), panicking on anything else.
struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn parse(text: &str) -> Json {
        let mut p = Parser { s: text.as_bytes(), at: 0 };
        let v = p.value();
        p.ws();
        assert_eq!(p.at, p.s.len(), "trailing text at byte {}", p.at);
        v
    }
    fn ws(&mut self) {
        while self.at < self.s.len() && b" \t\r\n".contains(&self.s[self.at]) {
            self.at += 1;
        }
    }
    fn peek(&mut self) -> u8 {
        self.ws();
        *self.s.get(self.at).unwrap_or_else(|| panic!("JSON ends early"))
    }
    fn eat(&mut self, c: u8) {
        assert_eq!(self.peek() as char, c as char, "at byte {}", self.at);
        self.at += 1;
    }
    fn lit(&mut self, word: &str, v: Json) -> Json {
        assert!(self.s[self.at..].starts_with(word.as_bytes()), "at byte {}", self.at);
        self.at += word.len();
        v
    }
    fn value(&mut self) -> Json {
        match self.peek() {
            b'{' => {
                self.at += 1;
                let mut m = BTreeMap::new();
                if self.peek() == b'}' {
                    self.at += 1;
                    return Json::Obj(m);
                }
                loop {
                    let k = self.string();
                    self.eat(b':');
                    let v = self.value();
                    assert!(m.insert(k, v).is_none(), "duplicate key at byte {}", self.at);
                    match self.peek() {
                        b',' => self.at += 1,
                        _ => {
                            self.eat(b'}');
                            return Json::Obj(m);
                        }
                    }
                }
            }
            b'[' => {
                self.at += 1;
                let mut a = Vec::new();
                if self.peek() == b']' {
                    self.at += 1;
                    return Json::Arr(a);
                }
                loop {
                    a.push(self.value());
                    match self.peek() {
                        b',' => self.at += 1,
                        _ => {
                            self.eat(b']');
                            return Json::Arr(a);
                        }
                    }
                }
            }
            b'"' => Json::Str(self.string()),
            b't' => self.lit("true", Json::Bool(true)),
            b'f' => self.lit("false", Json::Bool(false)),
            b'n' => self.lit("null", Json::Null),
            _ => self.number(),
        }
    }
    fn string(&mut self) -> String {
        self.eat(b'"');
        let mut out = String::new();
        loop {
            let c = self.s[self.at];
            self.at += 1;
            match c {
                b'"' => return out,
                b'\\' => {
                    let e = self.s[self.at];
                    self.at += 1;
                    match e {
                        b'"' | b'\\' | b'/' => out.push(e as char),
                        b'n' => out.push('\n'),
                        b't' => out.push('\t'),
                        b'r' => out.push('\r'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'u' => {
                            let h = std::str::from_utf8(&self.s[self.at..self.at + 4]).unwrap();
                            out.push(char::from_u32(u32::from_str_radix(h, 16).unwrap()).unwrap());
                            self.at += 4;
                        }
                        _ => panic!("bad escape at byte {}", self.at),
                    }
                }
                c if c < 0x20 => panic!("control character in a string at byte {}", self.at),
                _ => {
                    // A UTF-8 sequence: copy it whole.
                    let start = self.at - 1;
                    while self.at < self.s.len() && (self.s[self.at] & 0xc0) == 0x80 {
                        self.at += 1;
                    }
                    out.push_str(std::str::from_utf8(&self.s[start..self.at]).unwrap());
                }
            }
        }
    }
    fn number(&mut self) -> Json {
        let start = self.at;
        if self.s[self.at] == b'-' {
            self.at += 1;
        }
        let digits = |p: &mut Self| {
            let s = p.at;
            while p.at < p.s.len() && p.s[p.at].is_ascii_digit() {
                p.at += 1;
            }
            assert!(p.at > s, "a digit expected at byte {}", p.at);
        };
        assert!(
            self.s[self.at] != b'0' || !self.s.get(self.at + 1).is_some_and(u8::is_ascii_digit),
            "leading zero at byte {}",
            self.at
        );
        digits(self);
        if self.s.get(self.at) == Some(&b'.') {
            self.at += 1;
            digits(self);
        }
        if matches!(self.s.get(self.at), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.s.get(self.at), Some(b'+' | b'-')) {
                self.at += 1;
            }
            digits(self);
        }
        Json::Num(std::str::from_utf8(&self.s[start..self.at]).unwrap().parse().unwrap())
    }
}

#[test]
fn chrome_slices_nest_per_thread_and_carry_task_numbers() {
    let dir = scratch("chrome");
    good_trace(&dir);
    let out = dir.join("out.json");
    let o = run(&["chrome", dir.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let doc = Parser::parse(&std::fs::read_to_string(&out).unwrap());
    let Some(Json::Arr(events)) = doc.get("traceEvents") else { panic!("no traceEvents array") };
    // Per thread: the B/E slices as a stack; each slice (name, begin, end), in end order.
    let mut open: BTreeMap<u64, Vec<(String, f64, Option<f64>)>> = BTreeMap::new();
    let mut slices: BTreeMap<u64, Vec<(String, f64, f64)>> = BTreeMap::new();
    let mut names: BTreeSet<(u64, String)> = BTreeSet::new();
    let mut last_ts: BTreeMap<u64, f64> = BTreeMap::new();
    for e in events {
        assert_eq!(e.num("pid"), Some(100.0), "{e:?}");
        let tid = e.num("tid").expect("tid") as u64;
        match e.str("ph") {
            Some("M") => {
                assert_eq!(e.str("name"), Some("thread_name"));
                let Some(Json::Str(n)) = e.get("args").and_then(|a| a.get("name")) else { panic!("{e:?}") };
                names.insert((tid, n.clone()));
            }
            Some("B") => {
                let ts = e.num("ts").expect("ts");
                assert!(ts >= *last_ts.get(&tid).unwrap_or(&0.0), "time goes back on {tid}: {e:?}");
                last_ts.insert(tid, ts);
                let name = e.str("name").expect("a slice has a name").to_string();
                let task = e.get("args").and_then(|a| a.num("task"));
                if let Some(id) = name.strip_prefix("task ") {
                    assert_eq!(e.str("cat"), Some("task"));
                    assert_eq!(task, Some(id.parse::<f64>().unwrap()), "task number in args: {e:?}");
                } else {
                    assert!(e.str("cat").is_some_and(|c| !c.is_empty()), "{e:?}");
                }
                open.entry(tid).or_default().push((name, ts, task));
            }
            Some("E") => {
                let ts = e.num("ts").expect("ts");
                assert!(ts >= *last_ts.get(&tid).unwrap_or(&0.0), "time goes back on {tid}: {e:?}");
                last_ts.insert(tid, ts);
                let (name, b, _) =
                    open.entry(tid).or_default().pop().unwrap_or_else(|| panic!("E without B on {tid}"));
                slices.entry(tid).or_default().push((name, b, ts));
            }
            p => panic!("unexpected phase {p:?}"),
        }
    }
    assert!(open.values().all(Vec::is_empty), "slices left open: {open:?}");
    let want_names: BTreeSet<(u64, String)> =
        [100, 101, 102].iter().map(|&t| (t, format!("thread {t}"))).collect();
    assert_eq!(names, want_names);
    // Microseconds from the trace's first event.
    let s = |n: &str, b: f64, e: f64| (n.to_string(), b, e);
    assert_eq!(
        slices[&100],
        vec![
            s("Task: allocation", 1000.0, 1500.0),
            s("Task: allocation", 1500.0, 1600.0),
            s("task 1", 2000.0, 4000.0),
            s("Task: running task", 2000.0, 4000.0),
            s("Barrier: plain", 6000.0, 8000.0),
            s("Runtime: user microtask", 0.0, 10000.0),
        ]
    );
    assert_eq!(
        slices[&101],
        vec![
            s("Critical: acquiring", 3500.0, 3600.0),
            s("Critical: section", 3600.0, 4400.0),
            s("Critical: releasing", 4400.0, 4500.0),
            s("task 2", 3000.0, 5000.0),
            s("Task: running task", 3000.0, 5000.0),
            s("Runtime: worker main loop", 500.0, 9000.0),
        ]
    );
    assert_eq!(
        slices[&102],
        vec![s("Barrier: plain", 2000.0, 7000.0), s("Runtime: worker main loop", 1000.0, 7000.0)]
    );
}

/// The tags of an SVG document, checked to nest; returns (tag name, attributes, text after
/// the tag up to the next one).
fn svg_elements(svg: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    let mut rest = svg.trim();
    while let Some(i) = rest.find('<') {
        assert!(rest[..i].trim().is_empty() || !stack.is_empty(), "text outside the root: {:?}", &rest[..i]);
        let j = rest[i..].find('>').expect("an unclosed tag") + i;
        let tag = &rest[i + 1..j];
        let after = &rest[j + 1..];
        let txt = after[..after.find('<').unwrap_or(after.len())].to_string();
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name), "</{name}> closes another element");
        } else {
            let self_closing = tag.ends_with('/');
            let tag = tag.trim_end_matches('/');
            let (name, attrs) = tag.split_once(' ').unwrap_or((tag, ""));
            if !self_closing {
                stack.push(name.to_string());
            }
            out.push((name.to_string(), attrs.to_string(), txt));
        }
        rest = after;
    }
    assert!(stack.is_empty(), "unclosed elements {stack:?}");
    out
}

fn attr<'a>(attrs: &'a str, name: &str) -> Option<&'a str> {
    let k = format!(" {name}=\"");
    let i = format!(" {attrs}").find(&k)?;
    let v = &attrs[i + k.len() - 1..];
    v.split('"').next()
}

#[test]
fn svg_has_a_lane_per_thread_a_legend_and_an_axis() {
    let dir = scratch("svg");
    good_trace(&dir);
    let out = dir.join("out.svg");
    let o = run(&["svg", dir.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let svg = std::fs::read_to_string(&out).unwrap();
    let els = svg_elements(&svg);
    assert_eq!(els[0].0, "svg");
    let texts: Vec<&str> = els.iter().filter(|e| e.0 == "text").map(|e| e.2.as_str()).collect();
    // One lane per thread: its label and its background.
    let lanes: Vec<&str> = texts.iter().copied().filter(|t| t.starts_with("thread ")).collect();
    assert_eq!(lanes, ["thread 100", "thread 101", "thread 102"]);
    let backgrounds: Vec<&str> = els
        .iter()
        .filter(|e| e.0 == "rect" && attr(&e.1, "fill") == Some("#f4f4f4"))
        .map(|e| attr(&e.1, "y").unwrap())
        .collect();
    assert_eq!(backgrounds, ["30", "52", "74"], "lane backgrounds");
    // The states in the lanes (each rectangle titled with its state), at their place: 10 ms
    // over 1000 pixels from x = 110.
    let drawn: Vec<(String, String, String, String)> = els
        .windows(2)
        .filter(|w| w[0].0 == "rect" && w[1].0 == "title")
        .map(|w| {
            let a = |k| attr(&w[0].1, k).unwrap().to_string();
            (w[1].2.clone(), a("y"), a("x"), a("width"))
        })
        .collect();
    let d = |s: &str, y: &str, x: &str, w: &str| (s.to_string(), y.to_string(), x.to_string(), w.to_string());
    for want in [
        d("Barrier: plain", "30", "710.00", "200.00"),
        d("Task: running task", "30", "310.00", "200.00"),
        d("Task: allocation", "30", "210.00", "60.00"),
        d("Critical: section", "52", "470.00", "80.00"),
        d("Barrier: plain", "74", "310.00", "500.00"),
        d("Runtime: worker main loop", "74", "210.00", "100.00"),
    ] {
        assert!(drawn.contains(&want), "{want:?} not in {drawn:?}");
    }
    assert!(drawn.iter().all(|r| ["30", "52", "74"].contains(&r.1.as_str())), "a rectangle off the lanes");
    // The legend: a swatch and the label of each state the trace shows, once, none other.
    let legend: BTreeSet<&str> = texts
        .iter()
        .copied()
        .filter(|t| oxiomp_instrument::State::ALL.iter().any(|s| s.label() == *t))
        .collect();
    let want: BTreeSet<&str> = [
        "Barrier: plain",
        "Critical: acquiring",
        "Critical: releasing",
        "Critical: section",
        "Task: allocation",
        "Task: running task",
        "Runtime: user microtask",
        "Runtime: worker main loop",
    ]
    .into();
    assert_eq!(legend, want);
    let labels = texts.iter().filter(|t| want.contains(*t)).count();
    assert_eq!(labels, want.len(), "each legend label once");
    let swatches = els
        .iter()
        .filter(|e| e.0 == "rect" && attr(&e.1, "width") == Some("12") && attr(&e.1, "height") == Some("12"));
    assert_eq!(swatches.count(), want.len());
    // The axis: 11 ticks, 0 to 10 ms.
    let ticks: Vec<&str> = texts.iter().copied().filter(|t| t.ends_with(" ms") && !t.contains(':')).collect();
    let want: Vec<String> = (0..=10).map(|k| format!("{k}.000 ms")).collect();
    assert_eq!(ticks, want);
    let tick_lines = els.iter().filter(|e| e.0 == "line" && attr(&e.1, "x1") == attr(&e.1, "x2")).count();
    assert_eq!(tick_lines, 11);
    assert!(texts.contains(&"oxiomp trace: 3 threads, 10.000 ms"), "{texts:?}");
}

#[test]
fn summary_has_a_row_per_thread_and_state_with_shares_of_its_time() {
    let dir = scratch("summary");
    good_trace(&dir);
    let o = run(&["summary", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["thread", "state", "time", "(us)", "share", "count"]);
    // (thread, state) -> (us, share %, count)
    let mut rows: BTreeMap<(u32, String), (f64, f64, usize)> = BTreeMap::new();
    for l in lines {
        let w: Vec<&str> = l.split_whitespace().collect();
        let n = w.len();
        assert!(n >= 5, "{l}");
        let share = w[n - 2].strip_suffix('%').unwrap_or_else(|| panic!("share in {l}")).parse().unwrap();
        let key = (w[0].parse().unwrap(), w[1..n - 3].join(" "));
        let row = (w[n - 3].parse().unwrap(), share, w[n - 1].parse().unwrap());
        assert!(rows.insert(key, row).is_none(), "a second row for {l}");
    }
    let r = |tid: u32, s: &str, us: f64, share: f64, count: usize| ((tid, s.to_string()), (us, share, count));
    let want: BTreeMap<_, _> = [
        r(100, "Barrier: plain", 2000.0, 20.0, 1),
        r(100, "Task: allocation", 600.0, 6.0, 2),
        r(100, "Task: running task", 2000.0, 20.0, 1),
        r(100, "Runtime: user microtask", 5400.0, 54.0, 1),
        r(101, "Critical: acquiring", 100.0, 1.2, 1),
        r(101, "Critical: releasing", 100.0, 1.2, 1),
        r(101, "Critical: section", 800.0, 9.4, 1),
        r(101, "Task: running task", 1000.0, 11.8, 1),
        r(101, "Runtime: worker main loop", 6500.0, 76.5, 1),
        r(102, "Barrier: plain", 5000.0, 83.3, 1),
        r(102, "Runtime: worker main loop", 1000.0, 16.7, 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(rows, want);
    // Every thread is in some state all along: its shares add up to 100% (but for rounding).
    for tid in [100, 101, 102] {
        let sum: f64 = rows.iter().filter(|(k, _)| k.0 == tid).map(|(_, v)| v.1).sum();
        assert!((sum - 100.0).abs() <= 0.3, "thread {tid}: shares add up to {sum}");
    }
}
