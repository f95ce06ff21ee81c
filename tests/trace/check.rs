//! `oxiomp-trace check` on hand-made streams: ovni's CPU model, truncated and bad traces.

use super::*;

fn write_stream(dir: &Path, bytes: &[u8]) -> PathBuf {
    write_stream_with(dir, bytes, "")
}

/// `write_stream`, with `extra` members at the end of `stream.json`'s root object.
fn write_stream_with(dir: &Path, bytes: &[u8], extra: &str) -> PathBuf {
    let p = dir.join("loom.x/proc.1/thread.1");
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join("stream.obs"), bytes).unwrap();
    let json = format!(
        "{{\"version\": 3, \"ovni\": {{\"lib\": {{\"version\": \"1.14.0\", \"commit\": \"x\"}}, \
         \"part\": \"thread\", \"tid\": 1, \"pid\": 1, \"loom\": \"x\", \"app_id\": 1, \
         \"require\": {{\"ovni\": \"1.1.0\", \"openmp\": \"1.2.1\"}}, \
         \"loom_cpus\": [{{\"index\": 0, \"phyid\": 0}}], \"finished\": 1}}{extra}}}"
    );
    std::fs::write(p.join("stream.json"), json).unwrap();
    p.join("stream.obs")
}

/// Streams of threads 1.. of one process in loom `x` with two CPUs, one stream per event list.
fn write_streams(dir: &Path, streams: &[Vec<Event>]) {
    for (k, events) in streams.iter().enumerate() {
        let tid = k + 1;
        let p = dir.join(format!("loom.x/proc.1/thread.{tid}"));
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(p.join("stream.obs"), stream(events)).unwrap();
        let json = format!(
            "{{\"version\": 3, \"ovni\": {{\"lib\": {{\"version\": \"1.14.0\", \"commit\": \"x\"}}, \
             \"part\": \"thread\", \"tid\": {tid}, \"pid\": 1, \"loom\": \"x\", \"app_id\": 1, \
             \"require\": {{\"ovni\": \"1.1.0\", \"openmp\": \"1.2.1\"}}, \
             \"loom_cpus\": [{{\"index\": 0, \"phyid\": 0}}, {{\"index\": 1, \"phyid\": 1}}], \"finished\": 1}}}}"
        );
        std::fs::write(p.join("stream.json"), json).unwrap();
    }
}

/// `OHx` on `cpu`, `OAs` to `cpu`, at `clock`.
fn on_cpu(mcv: &[u8; 3], clock: u64, cpu: i32) -> Event {
    let payload = if mcv == b"OHx" {
        Payload::ThreadExecute { cpu, creator: -1, tag: 0 }
    } else {
        Payload::Raw(cpu.to_le_bytes().to_vec())
    };
    Event { mcv: *mcv, clock, payload }
}

/// `check` enforces ovni's thread and CPU model as its emulator does: nothing while paused,
/// CPU indexes within the loom, one running thread per CPU of the list at a time; and
/// accepts what the model allows (a CPU handed over, paused threads sharing one, any number
/// on the virtual CPU).
#[test]
fn check_enforces_the_cpu_model() {
    let base = profile_dir().join("trace-tests/cpus");
    let _ = std::fs::remove_dir_all(&base);
    let run = |name: &str, streams: Vec<Vec<Event>>| -> Vec<String> {
        let dir = base.join(name);
        write_streams(&dir, &streams);
        Trace::read(&dir).unwrap().check()
    };
    // Valid: two threads on CPU 0 one after the other (the first moves away first), a
    // paused thread on a CPU another then runs on, three on the virtual CPU.
    let ok = run(
        "ok",
        vec![
            vec![on_cpu(b"OHx", 1, 0), on_cpu(b"OAs", 5, -1), ev(b"OHp", 6), ev(b"OHr", 20), ev(b"OHe", 30)],
            vec![on_cpu(b"OHx", 2, 1), ev(b"OHp", 3), ev(b"OHr", 9), ev(b"OHe", 31)],
            vec![on_cpu(b"OHx", 4, -1), on_cpu(b"OAs", 7, 1), ev(b"OHe", 8)],
            vec![on_cpu(b"OHx", 10, -1), on_cpu(b"OAs", 11, 0), ev(b"OHe", 12)],
            vec![on_cpu(b"OHx", 13, -1), ev(b"OHe", 14)],
        ],
    );
    assert!(ok.is_empty(), "{ok:#?}");
    let two = run(
        "two",
        vec![vec![on_cpu(b"OHx", 1, 0), ev(b"OHe", 9)], vec![on_cpu(b"OHx", 2, 0), ev(b"OHe", 8)]],
    );
    assert!(
        two.len() == 1 && two[0].contains("clock 2: thread 2 runs on CPU index 0 while thread 1 runs there"),
        "{two:#?}"
    );
    let resumed = run(
        "resumed",
        vec![
            vec![on_cpu(b"OHx", 1, 1), ev(b"OHp", 2), ev(b"OHr", 6), ev(b"OHe", 9)],
            vec![on_cpu(b"OHx", 3, -1), on_cpu(b"OAs", 4, 1), ev(b"OHe", 8)],
        ],
    );
    assert!(
        resumed.len() == 1 && resumed[0].contains("clock 6: thread 1 runs on CPU index 1 while thread 2"),
        "{resumed:#?}"
    );
    let range = run("range", vec![vec![on_cpu(b"OHx", 1, 2), on_cpu(b"OAs", 2, -2), ev(b"OHe", 3)]]);
    assert!(
        range.iter().any(|p| p.contains("event 0: OHx names CPU 2, not in the loom's 2 CPUs")),
        "{range:#?}"
    );
    assert!(range.iter().any(|p| p.contains("event 1: OAs names CPU -2")), "{range:#?}");
    let paused = run(
        "paused",
        vec![vec![on_cpu(b"OHx", 1, -1), ev(b"OHp", 2), ev(b"PBb", 3), ev(b"PBB", 4), ev(b"OHe", 5)]],
    );
    assert!(
        paused.iter().any(|p| p.contains("event 2: PBb while the thread is paused (OHp at event 1)")),
        "{paused:#?}"
    );
    assert!(paused.iter().any(|p| p.contains("event 4: OHe while the thread is paused")), "{paused:#?}");
    let stray = run("stray", vec![vec![on_cpu(b"OHx", 1, -1), ev(b"OHr", 2), ev(b"OHe", 3)]]);
    assert!(stray.len() == 1 && stray[0].contains("event 1: OHr but the thread is not paused"), "{stray:#?}");
}

/// A stream whose metadata says it was cut short is reported as truncated, with the reason,
/// whether it ends with the thread's end (the usual cut) or not (a file system that could not
/// take even the end): never as a killed process.
#[test]
fn check_reports_a_cut_stream_as_truncated() {
    let base = profile_dir().join("trace-tests/cut");
    let _ = std::fs::remove_dir_all(&base);
    let cut = r#", "oxiomp": {"cut": "the disk was full"}"#;
    for (name, events) in [("ended", &[ev(b"OHx", 1), ev(b"OHe", 2)][..]), ("no-end", &[ev(b"OHx", 1)][..])] {
        let dir = base.join(name);
        write_stream_with(&dir, &stream(events), cut);
        let p = Trace::read(&dir).unwrap().check();
        assert_eq!(p.len(), 1, "{name}: {p:?}");
        assert!(p[0].contains("stream.obs: truncated: the disk was full"), "{name}: {p:?}");
    }
    // Without the note, a stream without its end reads as a killed process.
    let dir = base.join("killed");
    write_stream(&dir, &stream(&[ev(b"OHx", 1)]));
    let p = Trace::read(&dir).unwrap().check();
    assert!(p.len() == 1 && p[0].contains("killed, or it crashed"), "{p:?}");
}

fn stream(events: &[Event]) -> Vec<u8> {
    let mut b = format::STREAM_HEADER.to_vec();
    for e in events {
        let mut buf = [0u8; 64];
        let n = format::encode(e, &mut buf);
        b.extend_from_slice(&buf[..n]);
    }
    b
}

fn ev(mcv: &[u8; 3], clock: u64) -> Event {
    let payload =
        if mcv == b"OHx" { Payload::ThreadExecute { cpu: 0, creator: -1, tag: 0 } } else { Payload::None };
    Event { mcv: *mcv, clock, payload }
}

#[test]
fn bad_traces_are_rejected_with_the_reason() {
    let base = profile_dir().join("trace-tests/bad");
    let _ = std::fs::remove_dir_all(&base);
    let case = |name: &str, bytes: Vec<u8>| -> Result<Vec<String>, String> {
        let dir = base.join(name);
        write_stream(&dir, &bytes);
        Trace::read(&dir).map(|t| t.check())
    };
    // Wrong magic: a read error naming the file and offset 0.
    let e = case("magic", b"OVNI\x01\x00\x00\x00".to_vec()).unwrap_err();
    assert!(e.contains("stream.obs: offset 0: bad magic"), "{e}");
    // An unknown event: its offset.
    let mut b = stream(&[ev(b"OHx", 1)]);
    b.extend_from_slice(&[0, b'X', b'y', b'z', 2, 0, 0, 0, 0, 0, 0, 0]);
    let e = case("unknown", b).unwrap_err();
    assert!(e.contains("offset 36: unknown event \"Xyz\""), "{e}");
    // Truncated: read up to the last whole event, and reported by check.
    let mut b = stream(&[ev(b"OHx", 1), ev(b"PBb", 2), ev(b"PBB", 3)]);
    b.truncate(b.len() - 4);
    let p = case("truncated", b).unwrap();
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("event 2: stream ends inside an event at byte offset 48"), "{p:?}");
    // Clock going back, unbalanced end, events after the end.
    let p =
        case("order", stream(&[ev(b"OHx", 5), ev(b"PBb", 4), ev(b"PIR", 6), ev(b"OHe", 7), ev(b"PBB", 8)]))
            .unwrap();
    assert!(p.iter().any(|m| m.contains("event 1: clock 4 goes back from 5")), "{p:?}");
    assert!(
        p.iter().any(|m| m.contains("event 2: leaves \"Critical: releasing\" while in \"Barrier: plain\"")),
        "{p:?}"
    );
    assert!(p.iter().any(|m| m.contains("event 4: PBB after the thread ended")), "{p:?}");
    // A task run before it was created, and one ended where it does not run.
    let task = |mcv: &[u8; 3], clock: u64, id: u32| Event {
        mcv: *mcv,
        clock,
        payload: if mcv == b"PPc" {
            Payload::Raw([id.to_le_bytes(), 1u32.to_le_bytes()].concat())
        } else {
            Payload::Raw(id.to_le_bytes().to_vec())
        },
    };
    let p =
        case("tasks", stream(&[ev(b"OHx", 1), task(b"PPx", 2, 7), task(b"PPc", 3, 7), task(b"PPe", 4, 8)]))
            .unwrap();
    assert!(p.iter().any(|m| m.contains("event 1: task 7 runs at 2 before it is created at 3")), "{p:?}");
    assert!(p.iter().any(|m| m.contains("event 3: task 8 ends but is not the task running here")), "{p:?}");
    // A type declared twice in one process, and a task of an undeclared type.
    let poc = |clock: u64, ty: u32| Event {
        mcv: *b"POc",
        clock,
        payload: Payload::Jumbo([&ty.to_le_bytes()[..], b"t\0"].concat()),
    };
    let p = case("types", stream(&[ev(b"OHx", 1), poc(2, 5), poc(3, 5), task(b"PPc", 4, 9)])).unwrap();
    assert!(p.iter().any(|m| m.contains("event 2: type 5 declared a second time in process 1")), "{p:?}");
    assert!(p.iter().any(|m| m.contains("event 3: PPc uses type 1, not declared before")), "{p:?}");
    // A valid one passes.
    assert!(
        case("good", stream(&[ev(b"OHx", 1), ev(b"PBb", 2), ev(b"PBB", 3), ev(b"OHe", 4)]))
            .unwrap()
            .is_empty()
    );
}
