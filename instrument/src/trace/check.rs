//! `oxiomp-trace check`: the rules a trace must follow, ovni's emulator's among them.

use std::collections::{HashMap, HashSet};

use super::{Trace, state_of};
use crate::format::{self, Event};
use crate::{State, code};

impl Trace {
    /// Checks every stream; returns one message per problem (empty: the trace is valid).
    pub fn check(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for t in &self.threads {
            let p = t.path.display();
            let mut say = |i: usize, what: String| problems.push(format!("{p}: event {i}: {what}"));
            if let Some(off) = t.truncated_at {
                say(
                    t.events.len(),
                    format!("stream ends inside an event at byte offset {off} (read up to there)"),
                );
            }
            match t.events.first() {
                Some(e) if e.mcv == code::THREAD_EXECUTE => {}
                Some(e) => say(0, format!("first event is {} (expected OHx, thread begins)", e.code())),
                None => say(0, "no events".into()),
            }
            let mut stack: Vec<State> = Vec::new();
            let mut ended = false;
            let mut last = 0u64;
            for (i, e) in t.events.iter().enumerate() {
                if e.clock < last {
                    say(i, format!("clock {} goes back from {}", e.clock, last));
                }
                last = last.max(e.clock);
                if ended {
                    say(i, format!("{} after the thread ended (OHe)", e.code()));
                }
                if e.mcv == code::THREAD_END {
                    ended = true;
                }
                if let Some((s, enter)) = state_of(&e.mcv) {
                    if enter {
                        stack.push(s);
                    } else {
                        match stack.pop() {
                            Some(top) if top == s => {}
                            Some(top) => {
                                say(i, format!("leaves \"{}\" while in \"{}\"", s.label(), top.label()))
                            }
                            None => say(i, format!("leaves \"{}\" which it never entered", s.label())),
                        }
                    }
                }
            }
            // A thread ends with nothing open: the recorder ends what its thread is still in
            // (a worker waiting for work at exit, a task `exit()` was called from) before `OHe`.
            let end = t.events.iter().position(|e| e.mcv == code::THREAD_END);
            match end {
                Some(i) if !stack.is_empty() => {
                    let open: Vec<String> = stack.iter().map(|s| format!("\"{}\"", s.label())).collect();
                    say(i, format!("the thread ends (OHe) inside {} (outermost first)", open.join(", ")))
                }
                Some(_) => {}
                // A stream cut inside an event is reported above, and one cut short by a failed
                // write below (with its metadata).
                None if t.truncated_at.is_some() || t.cut().is_some() => {}
                None => say(
                    t.events.len(),
                    "the stream ends without the thread's end (OHe): the process stopped without \
                     closing it (killed, or it crashed)"
                        .into(),
                ),
            }
        }
        problems.extend(self.check_tasks());
        problems.extend(self.check_metadata());
        problems.extend(self.check_cpus());
        problems
    }

    /// ovni's thread and CPU model, as its emulator enforces it: a thread emits nothing while
    /// it is paused (`OHp` .. `OHr`) and does not end paused; every CPU index (`OHx`, `OAs`)
    /// is -1 (the loom's virtual CPU) or one of the loom's `loom_cpus`; and no CPU of the list
    /// runs two threads at one time (the events of a loom's streams taken in clock order, a
    /// thread running on its CPU from `OHx` or `OHr` to `OHp` or `OHe`, moved by `OAs`).
    fn check_cpus(&self) -> Vec<String> {
        use std::collections::HashMap;
        let mut problems = Vec::new();
        // The loom's CPU count: the longest `loom_cpus` of its streams.
        let mut ncpus: HashMap<&str, usize> = HashMap::new();
        for t in &self.threads {
            let e = ncpus.entry(t.loom.as_str()).or_insert(0);
            *e = (*e).max(t.loom_cpus());
        }
        let cpu_of = |e: &Event| -> Option<i32> {
            match (e.mcv, &e.payload) {
                (code::THREAD_EXECUTE, format::Payload::ThreadExecute { cpu, .. }) => Some(*cpu),
                (code::AFFINITY_SET, _) => e.payload_u32(0).map(|c| c as i32),
                _ => None,
            }
        };
        // Per stream: pauses, and CPU indexes within the loom.
        for t in &self.threads {
            let n = ncpus.get(t.loom.as_str()).copied().unwrap_or(0) as i32;
            let p = t.path.display();
            let mut paused_at: Option<usize> = None;
            for (i, e) in t.events.iter().enumerate() {
                if let Some(c) = cpu_of(e)
                    && (c < -1 || c >= n)
                {
                    problems.push(format!(
                        "{p}: event {i}: {} names CPU {c}, not in the loom's {n} CPUs",
                        e.code()
                    ));
                }
                match (e.mcv, paused_at) {
                    (code::THREAD_PAUSE, None) => paused_at = Some(i),
                    (code::THREAD_RESUME, Some(_)) => paused_at = None,
                    (code::THREAD_RESUME, None) => {
                        problems.push(format!("{p}: event {i}: OHr but the thread is not paused"))
                    }
                    (_, Some(at)) => problems.push(format!(
                        "{p}: event {i}: {} while the thread is paused (OHp at event {at})",
                        e.code()
                    )),
                    _ => {}
                }
            }
        }
        // Across a loom's streams, in clock order: one running thread per CPU of the list.
        let mut by_loom: HashMap<&str, Vec<(u64, usize, usize)>> = HashMap::new();
        for (s, t) in self.threads.iter().enumerate() {
            let evs = by_loom.entry(t.loom.as_str()).or_default();
            for (i, e) in t.events.iter().enumerate() {
                if matches!(
                    e.mcv,
                    code::THREAD_EXECUTE
                        | code::AFFINITY_SET
                        | code::THREAD_PAUSE
                        | code::THREAD_RESUME
                        | code::THREAD_END
                ) {
                    evs.push((e.clock, s, i));
                }
            }
        }
        for (loom, mut evs) in by_loom {
            evs.sort_unstable();
            // Per stream: its CPU (None before OHx) and whether it runs; per CPU: who runs there.
            let mut cpu: HashMap<usize, i32> = HashMap::new();
            let mut running: HashMap<usize, bool> = HashMap::new();
            let mut on_cpu: HashMap<i32, Vec<usize>> = HashMap::new();
            for (clock, s, i) in evs {
                let e = &self.threads[s].events[i];
                let was = (cpu.get(&s).copied(), running.get(&s).copied().unwrap_or(false));
                let now = match e.mcv {
                    code::THREAD_EXECUTE => (cpu_of(e), true),
                    code::AFFINITY_SET => (cpu_of(e), was.1),
                    code::THREAD_PAUSE => (was.0, false),
                    code::THREAD_RESUME => (was.0, true),
                    _ => (was.0, false),
                };
                if let (Some(c), true) = (was.0, was.1) {
                    on_cpu.entry(c).or_default().retain(|&x| x != s);
                }
                if let (Some(c), true) = (now.0, now.1) {
                    let here = on_cpu.entry(c).or_default();
                    if c >= 0 && !here.is_empty() {
                        let other = &self.threads[here[0]];
                        problems.push(format!(
                            "loom.{loom}: clock {clock}: thread {} runs on CPU index {c} while thread {} runs \
                             there (one thread at a time on a CPU of the loom's list)",
                            self.threads[s].tid, other.tid
                        ));
                    }
                    here.push(s);
                }
                if let Some(c) = now.0 {
                    cpu.insert(s, c);
                }
                running.insert(s, now.1);
            }
        }
        problems
    }

    /// Every stream has its metadata (`stream.json`, as ovni's emulator reads it): version 3,
    /// the thread part, the directory's tid, pid and loom, the models it requires, the library
    /// version, `finished` 1; and each loom lists its CPUs in at least one of its streams.
    fn check_metadata(&self) -> Vec<String> {
        use serde_json::Value;
        let mut problems = Vec::new();
        let mut cpus_listed: std::collections::HashMap<&str, bool> = std::collections::HashMap::new();
        for t in &self.threads {
            // A stream cut short (a full disk): it ends consistently, and what it lost is said
            // for what it is.
            if let Some(why) = t.cut() {
                problems.push(format!(
                    "{}: truncated: {why} (the thread's events after the last buffer that could be \
                     written are lost)",
                    t.path.display()
                ));
            }
            let json = t.path.with_file_name("stream.json");
            let mut say = |what: String| problems.push(format!("{}: {what}", json.display()));
            let text = match &t.metadata {
                Ok(text) => text,
                Err(e) => {
                    problems.push(format!("{e} (every stream needs its metadata)"));
                    continue;
                }
            };
            let v: Value = match serde_json::from_str(text) {
                Ok(v) => v,
                Err(e) => {
                    say(format!("not JSON: {e}"));
                    continue;
                }
            };
            let listed = cpus_listed.entry(t.loom.as_str()).or_insert(false);
            *listed |= v.pointer("/ovni/loom_cpus").and_then(Value::as_array).is_some_and(|a| !a.is_empty());
            let mut want = |ptr: &str, ok: &dyn Fn(&Value) -> bool, expected: String| match v.pointer(ptr) {
                Some(x) if ok(x) => {}
                Some(x) => say(format!("{ptr} is {x}, expected {expected}")),
                None => say(format!("{ptr} is missing (expected {expected})")),
            };
            want("/version", &|x| x.as_u64() == Some(3), "3".into());
            want("/ovni/part", &|x| x.as_str() == Some("thread"), "\"thread\"".into());
            want("/ovni/tid", &|x| x.as_u64() == Some(t.tid as u64), format!("{} (the directory's)", t.tid));
            want("/ovni/pid", &|x| x.as_u64() == Some(t.pid as u64), format!("{} (the directory's)", t.pid));
            want(
                "/ovni/loom",
                &|x| x.as_str() == Some(t.loom.as_str()),
                format!("{:?} (the directory's)", t.loom),
            );
            want("/ovni/finished", &|x| x.as_u64() == Some(1), "1".into());
            want("/ovni/lib/version", &|x| x.is_string(), "a version string".into());
            want("/ovni/lib/commit", &|x| x.is_string(), "a string".into());
            want("/ovni/require/ovni", &|x| x.is_string(), "a version string".into());
            want("/ovni/require/openmp", &|x| x.is_string(), "a version string (the OpenMP model)".into());
        }
        let mut looms: Vec<_> =
            cpus_listed.into_iter().filter(|(_, listed)| !listed).map(|(l, _)| l).collect();
        looms.sort();
        for l in looms {
            problems.push(format!("loom.{l}: no stream.json of the loom lists its CPUs (ovni.loom_cpus)"));
        }
        problems
    }

    /// The task and worksharing rules: each type declared once per process
    /// ([`check_types_declared_once`](Self::check_types_declared_once)) and before its use
    /// ([`check_types_declared_before_use`](Self::check_types_declared_before_use)),
    /// worksharing parts nested and closed ([`check_worksharing_nesting`](Self::check_worksharing_nesting)),
    /// tasks created before they run and ended where they run
    /// ([`check_task_runs`](Self::check_task_runs)).
    fn check_tasks(&self) -> Vec<String> {
        let declared = self.type_declarations();
        let mut problems = self.check_types_declared_once();
        problems.extend(self.check_types_declared_before_use(&declared));
        problems.extend(self.check_worksharing_nesting());
        problems.extend(self.check_task_runs());
        problems
    }

    /// Every `POc` of the trace: (process, type) and the stream path, event index and clock of
    /// each declaration, in stream order.
    fn declarations(&self) -> impl Iterator<Item = ((u32, u32), (&std::path::Path, usize, u64))> + '_ {
        self.threads.iter().flat_map(|t| {
            t.events.iter().enumerate().filter(|(_, e)| e.mcv == code::TYPE_CREATE).filter_map(
                move |(k, e)| {
                    let format::Payload::Jumbo(b) = &e.payload else { return None };
                    let ty = u32::from_le_bytes(b.get(..4)?.try_into().ok()?);
                    Some(((t.pid, ty), (t.path.as_path(), k, e.clock)))
                },
            )
        })
    }

    /// When each type is declared (its first declaration), per (process, type).
    fn type_declarations(&self) -> HashMap<(u32, u32), u64> {
        let mut types = HashMap::new();
        for (key, (_, _, clock)) in self.declarations() {
            types.entry(key).or_insert(clock);
        }
        types
    }

    /// A type is declared once in its process (ovni's emulator refuses a second `POc`).
    fn check_types_declared_once(&self) -> Vec<String> {
        let mut seen = HashSet::new();
        let mut problems = Vec::new();
        for ((pid, ty), (path, k, _)) in self.declarations() {
            if !seen.insert((pid, ty)) {
                problems.push(format!(
                    "{}: event {k}: type {ty} declared a second time in process {pid}",
                    path.display()
                ));
            }
        }
        problems
    }

    /// A task's creation (`PPc`) and a worksharing part (`PQx`, `PQe`) use a type declared in
    /// its process at or before its instant.
    fn check_types_declared_before_use(&self, declared: &HashMap<(u32, u32), u64>) -> Vec<String> {
        let mut problems = Vec::new();
        for t in &self.threads {
            for (k, e) in t.events.iter().enumerate() {
                let ty = match e.mcv {
                    code::TASK_CREATE => e.payload_u32(4),
                    code::WORKSHARING_BEGIN | code::WORKSHARING_END => e.payload_u32(0),
                    _ => None,
                };
                let Some(ty) = ty else { continue };
                match declared.get(&(t.pid, ty)) {
                    Some(&c) if c <= e.clock => {}
                    _ => problems.push(format!(
                        "{}: event {k}: {} uses type {ty}, not declared before",
                        t.path.display(),
                        e.code()
                    )),
                }
            }
        }
        problems
    }

    /// Worksharing parts nest like states (`PQe` ends the innermost `PQx`, with its type) and
    /// are all ended before the thread ends.
    fn check_worksharing_nesting(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for t in &self.threads {
            let mut ws: Vec<u32> = Vec::new();
            for (k, e) in t.events.iter().enumerate() {
                match (e.mcv, e.payload_u32(0)) {
                    (code::WORKSHARING_BEGIN, Some(ty)) => ws.push(ty),
                    (code::WORKSHARING_END, Some(ty)) if ws.pop() != Some(ty) => problems.push(format!(
                        "{}: event {k}: worksharing of type {ty} ends but is not the innermost one",
                        t.path.display()
                    )),
                    (code::THREAD_END, _) if !ws.is_empty() => problems.push(format!(
                        "{}: event {k}: the thread ends (OHe) inside worksharing construct(s) of type {ws:?}",
                        t.path.display()
                    )),
                    _ => {}
                }
            }
        }
        problems
    }

    /// A task runs (`PPx`) only once created (`PPc`, task numbers per process), its run ends
    /// (`PPe`) on the thread running it innermost, and no thread ends while running one.
    fn check_task_runs(&self) -> Vec<String> {
        let mut created: HashMap<(u32, u32), u64> = HashMap::new();
        for t in &self.threads {
            for e in t.events.iter().filter(|e| e.mcv == code::TASK_CREATE) {
                if let Some(i) = e.payload_u32(0) {
                    created.insert((t.pid, i), e.clock);
                }
            }
        }
        let mut problems = Vec::new();
        for t in &self.threads {
            let mut running: Vec<u32> = Vec::new();
            for (k, e) in t.events.iter().enumerate() {
                let Some(i) = e.payload_u32(0) else { continue };
                match e.mcv {
                    code::TASK_EXECUTE => {
                        match created.get(&(t.pid, i)) {
                            Some(&c) if c <= e.clock => {}
                            Some(&c) => problems.push(format!(
                                "{}: event {k}: task {i} runs at {} before it is created at {c}",
                                t.path.display(),
                                e.clock
                            )),
                            None => problems.push(format!(
                                "{}: event {k}: task {i} runs but was never created",
                                t.path.display()
                            )),
                        }
                        running.push(i);
                    }
                    code::TASK_END if running.pop() != Some(i) => {
                        problems.push(format!(
                            "{}: event {k}: task {i} ends but is not the task running here",
                            t.path.display()
                        ));
                    }
                    _ => {}
                }
            }
            if let Some(k) = t.events.iter().position(|e| e.mcv == code::THREAD_END)
                && let Some(&i) = running.last()
            {
                problems.push(format!(
                    "{}: event {k}: the thread ends (OHe) while task {i} runs (no PPe)",
                    t.path.display()
                ));
            }
        }
        problems
    }
}
