//! The ICVs a debugger can ask for, each at the scope OpenMP gives it, and how each is read
//! from the runtime's structs.

use crate::target::{Result, Target};
use crate::types::{Rc, scope};

/// One ICV: its name (as OpenMP's tables and LLVM's gdb plugin spell it), its scope, and
/// whether its value is a string (`ompd_get_icv_string_from_scope`) rather than a number.
/// Only the address-space, thread, parallel and task scopes are used, and only the string
/// ICVs LLVM's plugin knows as strings: it lists every ICV and asks for the others as
/// numbers.
pub struct Icv {
    pub name: &'static str,
    pub scope: i32,
    pub string: bool,
}

const fn icv(name: &'static str, scope: i32, string: bool) -> Icv {
    Icv { name, scope, string }
}

/// The ICVs, by id (index + 1; 0 is `ompd_icv_undefined`).
pub const ICVS: &[Icv] = &[
    icv("dyn-var", scope::THREAD, false),
    icv("run-sched-var", scope::TASK, true),
    icv("stacksize-var", scope::ADDRESS_SPACE, false),
    icv("cancel-var", scope::ADDRESS_SPACE, false),
    icv("max-task-priority-var", scope::ADDRESS_SPACE, false),
    icv("debug-var", scope::ADDRESS_SPACE, false),
    icv("nthreads-var", scope::THREAD, false),
    icv("display-affinity-var", scope::ADDRESS_SPACE, false),
    icv("affinity-format-var", scope::ADDRESS_SPACE, true),
    icv("default-device-var", scope::THREAD, false),
    icv("tool-var", scope::ADDRESS_SPACE, false),
    icv("levels-var", scope::PARALLEL, false),
    icv("active-levels-var", scope::PARALLEL, false),
    icv("thread-limit-var", scope::TASK, false),
    icv("max-active-levels-var", scope::TASK, false),
    icv("bind-var", scope::TASK, false),
    icv("num-procs-var", scope::ADDRESS_SPACE, false),
    icv("thread-num-var", scope::THREAD, false),
    icv("final-task-var", scope::TASK, false),
    icv("implicit-task-var", scope::TASK, false),
    icv("team-size-var", scope::PARALLEL, false),
    icv("wait-policy-var", scope::ADDRESS_SPACE, false),
    icv("nteams-var", scope::ADDRESS_SPACE, false),
    icv("teams-thread-limit-var", scope::ADDRESS_SPACE, false),
    icv("num-places-var", scope::ADDRESS_SPACE, false),
];

/// The ICV of id `id`.
pub fn by_id(id: u64) -> Result<&'static Icv> {
    (id as usize).checked_sub(1).and_then(|i| ICVS.get(i)).ok_or(Rc::BadInput)
}

/// What an ICV's value is read from: the process, a thread's descriptor, a team, or a task
/// with the descriptor of the thread it runs on (0: not known) and its team.
#[derive(Clone, Copy)]
pub enum At {
    Process,
    Thread(u64),
    Team(u64),
    Task { task: u64, thread: u64 },
}

/// The numeric value of `icv` at `at`.
pub fn value(t: &Target, icv: &Icv, at: At) -> Result<i64> {
    if icv.string {
        return Err(Rc::Incompatible);
    }
    let g = |name| t.global(name).map(|v| v as i64);
    Ok(match (icv.name, at) {
        ("stacksize-var", At::Process) => g("globals.stacksize")?,
        ("cancel-var", At::Process) => g("globals.cancellation")?,
        ("max-task-priority-var", At::Process) => g("globals.max_task_priority")?,
        ("debug-var", At::Process) => g("globals.debug")?,
        ("display-affinity-var", At::Process) => g("globals.display_affinity")?,
        ("tool-var", At::Process) => g("globals.tool")?,
        ("num-procs-var", At::Process) => g("globals.num_procs")?,
        ("wait-policy-var", At::Process) => g("globals.wait_policy")?,
        ("nteams-var", At::Process) => g("globals.nteams")?,
        ("teams-thread-limit-var", At::Process) => g("globals.teams_thread_limit")?,
        ("num-places-var", At::Process) => g("globals.num_places")?,
        ("dyn-var", At::Thread(d)) => thread_icv(t, d, "icvs.dynamic")? as i64,
        ("nthreads-var", At::Thread(d)) => thread_icv(t, d, "icvs.nthreads")? as i64,
        ("default-device-var", At::Thread(d)) => thread_icv(t, d, "icvs.default_device")? as i32 as i64,
        ("thread-num-var", At::Thread(d)) => t.get(d, "thread.tid")? as i64,
        ("levels-var", At::Team(x)) => t.get(x, "team.level")? as i64,
        ("active-levels-var", At::Team(x)) => t.get(x, "team.active_level")? as i64,
        ("team-size-var", At::Team(x)) => t.get(x, "team.nthreads")? as i64,
        ("thread-limit-var", At::Task { task, thread }) => {
            task_icv(t, task, thread, "icvs.thread_limit")? as i64
        }
        ("max-active-levels-var", At::Task { task, thread }) => {
            task_icv(t, task, thread, "icvs.max_active_levels")? as i64
        }
        ("bind-var", At::Task { task, thread }) => task_icv(t, task, thread, "icvs.bind")? as i32 as i64,
        ("final-task-var", At::Task { task, .. }) => (t.get(task, "task.final")? != 0) as i64,
        ("implicit-task-var", At::Task { task, .. }) => (t.get(task, "task.kind")? == 0) as i64,
        _ => return Err(Rc::BadInput),
    })
}

/// The string value of `icv` at `at`.
pub fn string(t: &Target, icv: &Icv, at: At) -> Result<String> {
    Ok(match (icv.name, at) {
        ("affinity-format-var", At::Process) => t.read_string(t.global("globals.affinity_format")?, 4096)?,
        ("run-sched-var", At::Task { task, thread }) => {
            let kind = task_icv(t, task, thread, "icvs.sched_kind")? as i32;
            let chunk = task_icv(t, task, thread, "icvs.sched_chunk")? as i32;
            let monotonic = task_icv(t, task, thread, "icvs.sched_monotonic")? != 0;
            let name = match kind {
                1 => "static",
                2 => "dynamic",
                3 => "guided",
                4 => "auto",
                101 => "trapezoidal",
                102 => "static_steal",
                _ => "unknown",
            };
            let m = if monotonic { "monotonic:" } else { "" };
            format!("{m}{name},{chunk}")
        }
        _ if !icv.string => value(t, icv, at)?.to_string(),
        _ => return Err(Rc::BadInput),
    })
}

/// An ICV of a thread's current task (the thread holds its task's ICVs).
fn thread_icv(t: &Target, desc: u64, name: &str) -> Result<u64> {
    t.get(t.addr_of(desc, "thread.icvs")?, name)
}

/// An ICV of `task`: the thread's it runs on when the task is that thread's current one,
/// otherwise those the task's team began its implicit tasks with.
fn task_icv(t: &Target, task: u64, thread: u64, name: &str) -> Result<u64> {
    if thread != 0 && t.get(thread, "thread.task")? == task {
        return thread_icv(t, thread, name);
    }
    let team = t.get(task, "task.team")?;
    t.get(t.addr_of(team, "team.icvs")?, name)
}
