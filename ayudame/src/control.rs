//! Requests: what a client asks over the library's local socket, the state they set, and the
//! answers the runtime's request functions give from it. A task start waits here while the run
//! is paused (the runtime tells PRERUNTASK before the task runs: pause and step are at task
//! granularity).

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The requests' state.
#[derive(Default)]
pub struct State {
    pub paused: bool,
    /// Task starts allowed while paused.
    steps: u32,
    /// Task starts so far, and the last task started.
    pub started: u64,
    pub last_started: i64,
    pub breakpoint: bool,
    pub blocked: HashSet<i64>,
    pub priorities: HashMap<i64, i32>,
    /// The number of threads asked for (0: none).
    pub threads: u32,
    /// Clients connected now.
    clients: u32,
    /// Requests being answered now (see [`Control::drain`]).
    answering: u32,
    /// Tasks raised while they were queued, not started yet (see [`Control::is_blocked`]).
    holds: HashMap<i64, Hold>,
}

/// A task raised while it was already queued, which the runtime asked its priority before:
/// the other queued tasks are held back until it starts, so that it goes first.
struct Hold {
    level: i32,
    /// When it first held a task back: a hold whose task no thread takes within
    /// [`HOLD_TIME`] of that (every thread waiting in a task of its own, or the task queued in
    /// another team) gives up rather than stall the run.
    since: Option<Instant>,
}

/// How long a hold may hold tasks back: far more than a thread takes to reach the raised
/// task (each refused task is put back and the threads take the next), even on a loaded
/// machine.
const HOLD_TIME: Duration = Duration::from_secs(2);

/// The requests' state and the condition task starts wait on.
#[derive(Default)]
pub struct Control {
    state: Mutex<State>,
    changed: Condvar,
}

impl Control {
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether task `id` may not start now (`AYU_isBlocked`): it is blocked, or a task raised
    /// above it while queued has not started yet.
    pub fn is_blocked(&self, id: i64) -> bool {
        let mut s = self.lock();
        if s.blocked.contains(&id) {
            return true;
        }
        if s.holds.is_empty() || s.holds.contains_key(&id) {
            return false;
        }
        let own = s.priorities.get(&id).copied().unwrap_or(-1);
        let now = Instant::now();
        let mut held = false;
        s.holds.retain(|_, h| {
            if h.level <= own {
                return true;
            }
            let holding = now.duration_since(*h.since.get_or_insert(now)) < HOLD_TIME;
            held |= holding;
            holding
        });
        held
    }

    /// Task `id` has started (its start recorded in the graph), or completed, or was
    /// discarded: it holds nothing back any more.
    pub fn started(&self, id: i64) {
        self.lock().holds.remove(&id);
    }

    /// Task `id` is about to start: waits while the run is paused and no step is left.
    pub fn before_start(&self, id: i64) {
        let mut s = self.lock();
        while s.paused && s.steps == 0 {
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        if s.paused {
            s.steps -= 1;
        }
        s.started += 1;
        s.last_started = id;
        self.changed.notify_all();
    }

    /// Runs request `line` and returns its answer (one line, `ok...` or `error: ...`).
    pub fn request(&self, line: &str) -> String {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some((&verb, args)) = words.split_first() else {
            return "error: an empty request (help lists them)".into();
        };
        let id = |what: &str| -> Result<i64, String> {
            args.first().and_then(|a| a.parse().ok()).ok_or_else(|| format!("error: '{verb}' takes {what}"))
        };
        let answer = match verb {
            "help" => Ok("ok: requests: status, pause, continue, step, break on|off, block ID, unblock ID, \
                          prioritise ID LEVEL, threads N (0: none), dump, help"
                .to_string()),
            "status" => Ok(self.status()),
            "pause" => {
                self.lock().paused = true;
                Ok("ok: paused: no task starts until step or continue".into())
            }
            "continue" => {
                let mut s = self.lock();
                s.paused = false;
                s.steps = 0;
                self.changed.notify_all();
                Ok("ok: running".into())
            }
            "step" => self.step(),
            "break" => match args {
                ["on"] => {
                    self.lock().breakpoint = true;
                    Ok("ok: breakpoint on: no new task starts".into())
                }
                ["off"] => {
                    self.lock().breakpoint = false;
                    Ok("ok: breakpoint off".into())
                }
                _ => Err("error: 'break' takes on or off".into()),
            },
            "block" => id("a task id").map(|id| {
                self.lock().blocked.insert(id);
                format!("ok: task {id} blocked")
            }),
            "unblock" => id("a task id").and_then(|id| {
                if self.lock().blocked.remove(&id) {
                    Ok(format!("ok: task {id} unblocked"))
                } else {
                    Err(format!("error: task {id} is not blocked"))
                }
            }),
            "prioritise" | "prioritize" | "priority" => match args {
                [id, level] => match (id.parse::<i64>(), level.parse::<i32>()) {
                    (Ok(id), Ok(level)) if level >= 0 => Ok(self.prioritise(id, level)),
                    _ => Err("error: 'prioritise' takes a task id and a priority of 0 or more".into()),
                },
                _ => Err("error: 'prioritise' takes a task id and a priority of 0 or more".into()),
            },
            "threads" => match args.first().and_then(|a| a.parse::<u32>().ok()) {
                Some(n) => {
                    self.lock().threads = n;
                    Ok(if n == 0 {
                        "ok: no number of threads asked for".to_string()
                    } else {
                        format!("ok: the next parallel region gets {n} threads")
                    })
                }
                None => Err("error: 'threads' takes a number (0: none)".into()),
            },
            "dump" => crate::dump().map(|p| format!("ok: wrote {p}.dot, .json and .svg")),
            other => Err(format!("error: unknown request '{other}' (help lists them)")),
        };
        answer.unwrap_or_else(|e| e)
    }

    /// Raises task `id` to `level`: a task not queued yet is queued with it (the runtime asks
    /// as it queues a task); one queued already goes first, the others held back until it
    /// starts.
    fn prioritise(&self, id: i64, level: i32) -> String {
        let waiting = crate::graph().task(id).is_some_and(|t| t.queued.is_some() && t.start.is_none());
        let mut s = self.lock();
        s.priorities.insert(id, level);
        if waiting {
            s.holds.insert(id, Hold { level, since: None });
            format!("ok: task {id} is queued: it starts before the other queued tasks")
        } else {
            format!("ok: task {id} gets priority {level} when it is queued")
        }
    }

    /// One step: lets one task start, and answers once it has (or says it is pending).
    fn step(&self) -> Result<String, String> {
        let mut s = self.lock();
        if !s.paused {
            return Err("error: not paused (pause first)".into());
        }
        s.steps += 1;
        let target = s.started + 1;
        self.changed.notify_all();
        // A task starts as soon as one is ready; a run with none ready yet answers later.
        for _ in 0..600 {
            if s.started >= target {
                return Ok(format!("ok: task {} started", s.last_started));
            }
            s = self.changed.wait_timeout(s, Duration::from_millis(100)).unwrap_or_else(|e| e.into_inner()).0;
        }
        Ok("ok: a step is pending: no task was ready in a minute".into())
    }

    fn status(&self) -> String {
        let s = self.lock();
        let g = crate::graph();
        format!(
            "ok: paused={} breakpoint={} tasks={} started={} removed={} edges={} blocked={} threads={}",
            if s.paused { "yes" } else { "no" },
            if s.breakpoint { "on" } else { "off" },
            g.tasks.len(),
            s.started,
            g.removed(),
            g.edges.len(),
            s.blocked.len(),
            s.threads
        )
    }

    /// Waits, at most `limit`, until no request is being answered: at the program's end, so
    /// that the answer to a request that let it run on (`continue`, the last `step`) reaches
    /// its client before the process exits.
    pub fn drain(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        let mut s = self.lock();
        while s.answering > 0 {
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            s = self.changed.wait_timeout(s, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// Answers request `line` to `out`; false if the client went away.
    fn answer(&self, line: &str, out: &mut UnixStream) -> bool {
        self.lock().answering += 1;
        let answer = self.request(line);
        let sent = writeln!(out, "{answer}").is_ok();
        self.lock().answering -= 1;
        self.changed.notify_all();
        sent
    }

    /// A client connected.
    fn connected(&self) {
        self.lock().clients += 1;
    }

    /// A client went away: when it was the last, a pause is released (a client that goes
    /// away never leaves the program stopped).
    fn disconnected(&self) {
        let mut s = self.lock();
        s.clients -= 1;
        if s.clients == 0 && s.paused {
            s.paused = false;
            s.steps = 0;
            self.changed.notify_all();
        }
    }
}

/// The socket's path: `AYU_SOCKET`, else `/tmp/ayudame-<pid>.sock`.
pub fn socket_path() -> PathBuf {
    std::env::var_os("AYU_SOCKET")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(format!("/tmp/ayudame-{}.sock", std::process::id())))
}

/// Serves clients on the socket at `path`, each on a thread of its own, for as long as the
/// process lives.
pub fn serve(control: &'static Control, path: PathBuf) {
    let _ = std::fs::remove_file(&path);
    let listener = match UnixListener::bind(&path) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("ayudame: cannot listen on {}: {e}; no requests will be taken", path.display());
            return;
        }
    };
    let spawned = std::thread::Builder::new().name("ayudame-server".into()).spawn(move || {
        for stream in listener.incoming().flatten() {
            let _ = std::thread::Builder::new()
                .name("ayudame-client".into())
                .spawn(move || client(control, stream));
        }
    });
    if let Err(e) = spawned {
        eprintln!("ayudame: cannot start the request server: {e}");
    }
}

/// Answers one client's requests, a line each, until it goes away.
fn client(control: &Control, stream: UnixStream) {
    control.connected();
    if let Ok(mut out) = stream.try_clone() {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            if !control.answer(&line, &mut out) {
                break;
            }
        }
    }
    control.disconnected();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_requests_get_an_error_naming_what_is_wrong() {
        let c = Control::default();
        assert_eq!(c.request("frob"), "error: unknown request 'frob' (help lists them)");
        assert_eq!(c.request("block x"), "error: 'block' takes a task id");
        assert_eq!(c.request("unblock 3"), "error: task 3 is not blocked");
        assert_eq!(c.request("break maybe"), "error: 'break' takes on or off");
        assert!(c.request("prioritise 3 -1").starts_with("error:"));
        assert_eq!(c.request("step"), "error: not paused (pause first)");
        assert!(c.request("block 7").starts_with("ok"));
        assert!(c.lock().blocked.contains(&7));
        assert!(c.request("threads 3").starts_with("ok"));
        assert_eq!(c.lock().threads, 3);
    }

    #[test]
    fn a_hold_refuses_lower_tasks_until_its_task_starts_or_its_limit() {
        let c = Control::default();
        c.lock().holds.insert(5, Hold { level: 3, since: None });
        c.lock().priorities.insert(5, 3);
        c.lock().priorities.insert(6, 4);
        assert!(!c.is_blocked(5), "the raised task itself starts");
        assert!(!c.is_blocked(6), "a task raised higher starts");
        assert!(c.is_blocked(7) && c.is_blocked(8), "others wait");
        let first = c.lock().holds[&5].since.expect("held since the first refusal");
        c.lock().holds.get_mut(&5).unwrap().since = first.checked_sub(HOLD_TIME);
        assert!(!c.is_blocked(7), "the hold gives up after its time");
        assert!(c.lock().holds.is_empty());
        c.lock().holds.insert(5, Hold { level: 3, since: None });
        assert!(c.is_blocked(7));
        c.started(5);
        assert!(!c.is_blocked(7), "its task started");
    }

    #[test]
    fn the_last_client_going_away_releases_a_pause() {
        let c = Control::default();
        c.connected();
        c.request("pause");
        assert!(c.lock().paused);
        c.disconnected();
        assert!(!c.lock().paused);
    }
}
