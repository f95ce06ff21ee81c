//! The task graph as the runtime tells it: functions, tasks with their times and threads,
//! dependence edges, barriers.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

/// One event, decoded from `AYU_event`'s arguments (the data it points at copied out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    PreInit {
        runtime: i32,
    },
    Init,
    Finish,
    RegisterFunction {
        id: i64,
        name: String,
    },
    AddTask {
        id: i64,
        function: i64,
        priority: i64,
    },
    AddDependency {
        succ: i64,
        pred: i64,
        addr: u64,
    },
    Queued {
        id: i64,
        thread: i64,
    },
    PreRun {
        id: i64,
        thread: i64,
    },
    Run {
        id: i64,
    },
    PostRun {
        id: i64,
    },
    Remove {
        id: i64,
    },
    Barrier,
    /// Task `id` names `addr` in a `depend` clause with access `kind` (OMPT's
    /// `ompt_dependence_type_t`), told by oxiomp's `oxiomp_ayu_access` before the task's
    /// edges.
    Access {
        id: i64,
        addr: u64,
        kind: i32,
    },
    /// An event this library does not draw.
    Other,
}

/// The name of access `kind` (OMPT's dependence type numbers).
pub fn access_name(kind: i32) -> &'static str {
    match kind {
        1 => "in",
        2 => "out",
        3 => "inout",
        4 => "mutexinoutset",
        7 => "inoutset",
        34 => "all memory",
        _ => "unknown",
    }
}

/// `mutexinoutset`, `inoutset`.
const MUTEX: i32 = 4;
const SET: i32 = 7;

/// A task and what happened to it (times in nanoseconds since the library started).
#[derive(Clone, Debug, Default)]
pub struct Task {
    pub id: i64,
    pub function: i64,
    pub priority: i64,
    /// Barriers told before the task was added: the part of the graph it belongs to.
    pub epoch: u32,
    pub created: u64,
    pub queued: Option<u64>,
    /// The thread that ran it (-1: not started).
    pub thread: i64,
    pub start: Option<u64>,
    pub end: Option<u64>,
    pub removed: Option<u64>,
    /// The addresses its `depend` clauses name, each with its access kind (when told).
    pub accesses: Vec<(u64, i32)>,
}

impl Task {
    /// How long its body ran (0 while unknown).
    pub fn run_time(&self) -> u64 {
        match (self.start, self.end) {
            (Some(s), Some(e)) => e.saturating_sub(s),
            _ => 0,
        }
    }
}

/// An edge: `succ` runs after `pred`, through the storage at `addr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    pub pred: i64,
    pub succ: i64,
    pub addr: u64,
    /// The predecessor's and the successor's access to the address (or to all memory), as
    /// [`Event::Access`] told them; 0 when not told.
    pub from: i32,
    pub to: i32,
}

impl Edge {
    /// The concurrent group the edge leads into or out of, if either end's access is one:
    /// `mutexinoutset` (members exclude each other) or `inoutset`.
    pub fn group(&self) -> Option<&'static str> {
        if self.from == MUTEX || self.to == MUTEX {
            Some("mutexinoutset")
        } else if self.from == SET || self.to == SET {
            Some("inoutset")
        } else {
            None
        }
    }
}

/// The graph recorded so far.
pub struct Graph {
    pub runtime: i32,
    pub functions: HashMap<i64, String>,
    /// In the order they were added (a predecessor is always added before its successor).
    pub tasks: Vec<Task>,
    index: HashMap<i64, usize>,
    pub edges: Vec<Edge>,
    pub barriers: u32,
    pub finished: bool,
    origin: Instant,
}

impl Default for Graph {
    fn default() -> Graph {
        Graph {
            runtime: 0,
            functions: HashMap::new(),
            tasks: Vec::new(),
            index: HashMap::new(),
            edges: Vec::new(),
            barriers: 0,
            finished: false,
            origin: Instant::now(),
        }
    }
}

impl Graph {
    /// The task with id `id`, if it was added.
    pub fn task(&self, id: i64) -> Option<&Task> {
        self.index.get(&id).map(|&i| &self.tasks[i])
    }

    fn task_mut(&mut self, id: i64) -> Option<&mut Task> {
        self.index.get(&id).map(|&i| &mut self.tasks[i])
    }

    /// Tasks removed so far.
    pub fn removed(&self) -> usize {
        self.tasks.iter().filter(|t| t.removed.is_some()).count()
    }

    /// Records `e`, which happened now.
    pub fn apply(&mut self, e: Event) {
        let now = self.origin.elapsed().as_nanos() as u64;
        match e {
            Event::PreInit { runtime } => self.runtime = runtime,
            Event::RegisterFunction { id, name } => {
                self.functions.insert(id, name);
            }
            Event::AddTask { id, function, priority } => {
                if self.index.contains_key(&id) {
                    return;
                }
                self.index.insert(id, self.tasks.len());
                self.tasks.push(Task {
                    id,
                    function,
                    priority,
                    epoch: self.barriers,
                    created: now,
                    thread: -1,
                    ..Task::default()
                });
            }
            Event::AddDependency { succ, pred, addr } => {
                let (from, to) = (self.access(pred, addr), self.access(succ, addr));
                self.edges.push(Edge { pred, succ, addr, from, to });
            }
            Event::Access { id, addr, kind } => {
                if let Some(t) = self.task_mut(id) {
                    t.accesses.push((addr, kind));
                }
            }
            Event::Queued { id, .. } => {
                if let Some(t) = self.task_mut(id) {
                    t.queued = Some(now);
                }
            }
            Event::PreRun { id, thread } => {
                if let Some(t) = self.task_mut(id) {
                    t.thread = thread;
                    t.start = Some(now);
                }
            }
            Event::Run { .. } => {}
            Event::PostRun { id } => {
                if let Some(t) = self.task_mut(id) {
                    t.end = Some(now);
                }
            }
            Event::Remove { id } => {
                if let Some(t) = self.task_mut(id) {
                    t.removed = Some(now);
                    t.end.get_or_insert(now);
                }
            }
            Event::Barrier => self.barriers += 1,
            Event::Finish => self.finished = true,
            Event::Init | Event::Other => {}
        }
    }

    /// Task `id`'s access to `addr` (or to all memory); 0 when not told.
    fn access(&self, id: i64, addr: u64) -> i32 {
        let Some(t) = self.task(id) else { return 0 };
        let find = |a: u64| t.accesses.iter().find(|&&(x, _)| x == a).map(|&(_, k)| k);
        find(addr).or_else(|| find(u64::MAX)).unwrap_or(0)
    }

    /// The function name of task `t` (its id when it was never registered).
    pub fn function_name(&self, t: &Task) -> String {
        self.functions.get(&t.function).cloned().unwrap_or_else(|| format!("function {}", t.function))
    }

    /// The position of task `id` in [`tasks`](Self::tasks), if it was added.
    pub fn position(&self, id: i64) -> Option<usize> {
        self.index.get(&id).copied()
    }

    /// Each task's predecessors, by position (the tasks' order is a topological one: a
    /// predecessor is always added before its successor).
    pub fn predecessors(&self) -> Vec<Vec<usize>> {
        let mut preds = vec![Vec::new(); self.tasks.len()];
        for e in &self.edges {
            if let (Some(p), Some(s)) = (self.position(e.pred), self.position(e.succ)) {
                preds[s].push(p);
            }
        }
        preds
    }

    /// The critical path: the chain of edges whose tasks' run times add up to the most, as
    /// task positions from its first task to its last (empty for an empty graph).
    pub fn critical_path(&self) -> Vec<usize> {
        let preds = self.predecessors();
        let n = self.tasks.len();
        let mut best = vec![0u64; n];
        let mut via: Vec<Option<usize>> = vec![None; n];
        for i in 0..n {
            let from = preds[i].iter().copied().max_by_key(|&p| best[p]);
            best[i] = self.tasks[i].run_time().max(1) + from.map_or(0, |p| best[p]);
            via[i] = from;
        }
        let Some(mut at) = (0..n).max_by_key(|&i| best[i]) else { return Vec::new() };
        let mut path = vec![at];
        while let Some(p) = via[at] {
            path.push(p);
            at = p;
        }
        path.reverse();
        path
    }

    /// The critical path as the drawings mark it.
    pub fn critical(&self) -> Critical {
        let path = self.critical_path();
        let mut tasks = vec![false; self.tasks.len()];
        for &i in &path {
            tasks[i] = true;
        }
        let edges = path.windows(2).map(|w| (self.tasks[w[0]].id, self.tasks[w[1]].id)).collect();
        Critical { path, tasks, edges }
    }
}

/// The critical path ([`Graph::critical_path`]), with what is on it.
pub struct Critical {
    /// Task positions, first to last.
    pub path: Vec<usize>,
    /// By task position: on the path.
    pub tasks: Vec<bool>,
    /// Its edges, as (predecessor id, successor id).
    edges: HashSet<(i64, i64)>,
}

impl Critical {
    /// Whether the edge `pred -> succ` is on the path.
    pub fn has_edge(&self, pred: i64, succ: i64) -> bool {
        self.edges.contains(&(pred, succ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diamond() -> Graph {
        let mut g = Graph::default();
        g.apply(Event::RegisterFunction { id: 1, name: "f".into() });
        for id in 1..=4 {
            g.apply(Event::AddTask { id, function: 1, priority: 0 });
        }
        for (pred, succ) in [(1, 2), (1, 3), (2, 4), (3, 4)] {
            g.apply(Event::AddDependency { succ, pred, addr: 8 });
        }
        g
    }

    #[test]
    fn the_critical_path_follows_the_longest_run_times() {
        let mut g = diamond();
        for (id, time) in [(1, 10), (2, 50), (3, 20), (4, 10)] {
            let i = g.index[&id];
            g.tasks[i].start = Some(0);
            g.tasks[i].end = Some(time);
        }
        let ids: Vec<i64> = g.critical_path().iter().map(|&i| g.tasks[i].id).collect();
        assert_eq!(ids, [1, 2, 4]);
    }

    #[test]
    fn a_task_belongs_to_the_part_after_the_barriers_told_before_it() {
        let mut g = diamond();
        g.apply(Event::Barrier);
        g.apply(Event::AddTask { id: 9, function: 1, priority: 2 });
        assert_eq!(g.task(9).unwrap().epoch, 1);
        assert_eq!(g.task(4).unwrap().epoch, 0);
        // Added twice (a runtime that repeats itself): kept once.
        g.apply(Event::AddTask { id: 9, function: 1, priority: 2 });
        assert_eq!(g.tasks.len(), 5);
    }
}
