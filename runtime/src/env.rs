//! Reading the OMP_* / KMP_* environment into the initial ICVs.
//!
//! Each variable is parsed on its own. A malformed value gives exactly one warning line naming
//! the variable and the value, and the default is used: never a crash.

use crate::icv::{CheckMode, DisplayEnv, Globals, HangWatch, Icvs, ProcBind, Schedule, ScheduleKind};
use crate::places::{self, PlaceList};

/// The highest number of nested active levels we support.
pub const SUPPORTED_ACTIVE_LEVELS: u32 = i32::MAX as u32;

/// Everything the environment decides, read once at start-up.
#[derive(Clone, Debug)]
pub struct Settings {
    pub icvs: Icvs,
    pub globals: Globals,
    /// The CPUs of the process affinity mask.
    pub mask: Vec<u32>,
    /// The place list (OMP_PLACES, or cores when binding is requested without it).
    pub places: PlaceList,
    /// Hidden helper threads (`LIBOMP_USE_HIDDEN_HELPER_TASK`, ...).
    pub hidden: crate::hidden::Config,
    /// The warnings produced, each one line.
    pub warnings: Vec<String>,
}

/// Where variables come from: the process environment, or a table (tests).
pub trait Source {
    fn get(&self, name: &str) -> Option<String>;

    /// The soft limit of the initial thread's stack (`ulimit -s`), in bytes, if there is one
    /// (`u64::MAX`: unlimited): the workers' default stack size follows it. A test source has
    /// none.
    fn stack_limit(&self) -> Option<u64> {
        None
    }
}

/// The process environment, after the settings `kmp_set_defaults` gave before the runtime
/// started (they win: the program asked for them explicitly).
pub struct ProcessEnv;

pub(crate) static DEFAULTS: crate::sync::fork_lock::ForkLock<Vec<(String, String)>> =
    crate::sync::fork_lock::ForkLock::new(Vec::new());

impl Source for ProcessEnv {
    fn get(&self, name: &str) -> Option<String> {
        if let Some((_, v)) = DEFAULTS.lock().iter().rev().find(|(k, _)| k == name) {
            return Some(v.clone());
        }
        std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
    }

    fn stack_limit(&self) -> Option<u64> {
        let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes the struct we pass.
        (unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut r) } == 0).then_some(r.rlim_cur)
    }
}

/// Worker stacks without `OMP_STACKSIZE`: as large as the initial thread's (`limit`, its soft
/// limit), so that code that runs on the initial thread runs on a worker too (libomp likewise
/// propagates the initial thread's stack size), but never below the 4 MiB libomp always gave
/// workers, and at most 64 MiB (an unlimited stack, `u64::MAX`, gets 64 MiB); 4 MiB when the
/// system does not say.
pub fn default_stacksize(limit: Option<u64>) -> usize {
    const FLOOR: u64 = 4 << 20;
    limit.map_or(FLOOR, |l| l.clamp(FLOOR, 64 << 20)) as usize
}

/// `kmp_set_defaults`: `NAME=VALUE` settings (several separated by `|`, as libomp takes them,
/// or by blanks) read as if they were in the environment. Before the runtime starts, any
/// setting; afterwards (it reads the environment once) only those that can change while it
/// runs (`OMP_TARGET_OFFLOAD`) take effect, and the others are reported.
pub fn set_defaults(text: &str) -> Result<(), String> {
    let mut pairs = Vec::new();
    for item in text.split(|c: char| c == '|' || c.is_whitespace()).filter(|i| !i.is_empty()) {
        let (k, v) = item.split_once('=').ok_or(format!("{item:?} is not NAME=VALUE; ignored"))?;
        pairs.push((k.to_string(), v.to_string()));
    }
    if !crate::Runtime::started() {
        DEFAULTS.lock().extend(pairs);
        return Ok(());
    }
    let mut ignored = Vec::new();
    for (k, v) in pairs {
        if k == "OMP_TARGET_OFFLOAD" {
            let src: &[(&str, &str)] = &[("OMP_TARGET_OFFLOAD", &v)];
            let mut r = Reader { src: &src, warnings: Vec::new(), given: Vec::new() };
            let value = read_target_offload(&mut r);
            r.warnings.iter().for_each(|w| crate::registry::warn(w));
            crate::query::set_target_offload(value);
        } else {
            ignored.push(k);
        }
    }
    if ignored.is_empty() {
        Ok(())
    } else {
        Err(format!("called after the runtime started, which reads {} once; ignored", ignored.join(", ")))
    }
}

impl Source for &[(&str, &str)] {
    fn get(&self, name: &str) -> Option<String> {
        self.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }
}

struct Reader<'a> {
    src: &'a dyn Source,
    warnings: Vec<String>,
    /// The variables read that were set, as given (`KMP_SETTINGS` lists them).
    given: Vec<(String, String)>,
}

impl Reader<'_> {
    /// Reads `name` and parses it; on failure records one warning and returns None.
    fn read<T>(
        &mut self,
        name: &str,
        default: &str,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Option<T> {
        let raw = self.src.get(name)?;
        self.given.push((name.to_string(), raw.clone()));
        match parse(raw.trim()) {
            Ok(v) => Some(v),
            Err(why) => {
                self.warnings.push(format!(
                    "oxiomp: warning: {name}='{raw}' is not valid ({why}); using the default ({default})"
                ));
                None
            }
        }
    }
}

/// GOMP_SPINCOUNT (libgomp's): how many times a waiting thread spins before it sleeps, a
/// number with an optional `k`, `M`, `G` or `T` factor, or `infinite` / `infinity`. oxiomp's
/// threads wait by time, so it becomes a block time: a spin of libgomp's takes about a
/// nanosecond on current x86, so `n` spins are `n` ns, rounded up to whole milliseconds (0
/// sleeps at once; `infinite` never sleeps). None inside: no block time (never sleep).
fn parse_spincount(s: &str) -> Result<Option<u64>, String> {
    let l = s.trim().to_ascii_lowercase();
    if l == "infinite" || l == "infinity" {
        return Ok(None);
    }
    let (digits, factor) = match l.char_indices().last() {
        Some((i, 'k')) => (&l[..i], 1_000u64),
        Some((i, 'm')) => (&l[..i], 1_000_000),
        Some((i, 'g')) => (&l[..i], 1_000_000_000),
        Some((i, 't')) => (&l[..i], 1_000_000_000_000),
        _ => (&l[..], 1),
    };
    let n: u64 = digits.trim().parse().map_err(|_| "expected a number of spins or infinite".to_string())?;
    let ns = n.saturating_mul(factor);
    Ok(Some(ns.div_ceil(1_000_000).min(MAX_BLOCKTIME_MS)))
}

fn parse_bool(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" | "t" | "y" => Ok(true),
        "false" | "0" | "no" | "off" | "f" | "n" => Ok(false),
        _ => Err("expected true or false".into()),
    }
}

fn parse_uint(s: &str, min: u64, max: u64) -> Result<u64, String> {
    let v: u64 = s.parse().map_err(|_| format!("expected a whole number from {min} to {max}"))?;
    if v < min || v > max {
        return Err(format!("expected a whole number from {min} to {max}"));
    }
    Ok(v)
}

/// A list of positive whole numbers; those above `max` (the most threads the runtime runs at
/// once) are cut down to it, which the second value tells.
fn parse_num_list(s: &str, max: u32) -> Result<(Vec<u32>, bool), String> {
    let mut cut = false;
    let list = s
        .split(',')
        .map(|p| {
            let p = p.trim();
            let p = p.strip_prefix('+').unwrap_or(p);
            if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && p.bytes().any(|b| b != b'0') {
                // All digits and not zero: a number, perhaps too large for any integer type.
                let v = p.parse::<u64>().unwrap_or(u64::MAX);
                cut |= v > max as u64;
                Ok(v.min(max as u64) as u32)
            } else {
                Err("expected a list of positive whole numbers".to_string())
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((list, cut))
}

/// `[modifier:]kind[,chunk]`.
pub fn parse_schedule(s: &str) -> Result<Schedule, String> {
    let lower = s.to_ascii_lowercase();
    let (modifier, rest) = match lower.split_once(':') {
        Some((m, r)) => (Some(m.trim().to_string()), r.trim().to_string()),
        None => (None, lower.trim().to_string()),
    };
    let (kind, chunk) = match rest.split_once(',') {
        Some((k, c)) => (k.trim().to_string(), Some(c.trim().to_string())),
        None => (rest, None),
    };
    let kind = match kind.as_str() {
        "static" => ScheduleKind::Static,
        "dynamic" => ScheduleKind::Dynamic,
        "guided" => ScheduleKind::Guided,
        "auto" => ScheduleKind::Auto,
        "trapezoidal" => ScheduleKind::Trapezoidal,
        "static_steal" => ScheduleKind::StaticSteal,
        _ => return Err("expected static, dynamic, guided or auto (or trapezoidal, static_steal)".into()),
    };
    let chunk = match chunk {
        Some(c) => parse_uint(&c, 1, i32::MAX as u64).map_err(|_| "bad chunk size".to_string())? as i32,
        None => 0,
    };
    // Without a modifier, static is monotonic and the others are not (OpenMP 5.0); only a
    // modifier that was given is reported (`omp_get_schedule`).
    let monotonic = match modifier.as_deref() {
        None => false,
        Some("monotonic") => true,
        Some("nonmonotonic") => false,
        Some(_) => return Err("expected the modifier monotonic or nonmonotonic".into()),
    };
    Ok(Schedule { kind, chunk, monotonic })
}

/// target-offload-var from `OMP_TARGET_OFFLOAD` (1, `default`, when unset or malformed): at
/// start-up, and for `kmp_set_defaults` afterwards.
/// The hidden helper threads' settings, as libomp reads them: `LIBOMP_USE_HIDDEN_HELPER_TASK`
/// (on by default), `LIBOMP_NUM_HIDDEN_HELPER_THREADS` (the threads that run hidden tasks,
/// 0 to 16, 7 by default; 0 turns them off) and `KMP_HIDDEN_HELPER_AFFINITY` (`KMP_AFFINITY`'s
/// syntax; unbound by default).
fn read_hidden(r: &mut Reader, mask: &[u32]) -> crate::hidden::Config {
    let on = r.read("LIBOMP_USE_HIDDEN_HELPER_TASK", "true", parse_bool).unwrap_or(true);
    let n = r
        .read("LIBOMP_NUM_HIDDEN_HELPER_THREADS", "7", |s| parse_uint(s, 0, 16))
        .map_or(crate::hidden::DEFAULT_THREADS, |n| n as u32);
    let affinity = r
        .read("KMP_HIDDEN_HELPER_AFFINITY", "none", |s| crate::kmp_affinity::parse(s, mask))
        .unwrap_or_default();
    crate::hidden::Config { threads: if on { n } else { 0 }, affinity }
}

/// `OXIOMP_HANG_SECONDS`: how long a wait may last before the threads are reported, in
/// seconds (a decimal number); `0` reports only on `SIGQUIT` (the states are kept for it).
fn parse_hang_seconds(s: &str) -> Result<Option<HangWatch>, String> {
    let secs: f64 = s.parse().map_err(|_| "expected a number of seconds".to_string())?;
    if !(0.0..=1e9).contains(&secs) {
        return Err("expected a number of seconds from 0 to 1e9".to_string());
    }
    Ok(Some(if secs == 0.0 {
        HangWatch::SignalOnly
    } else {
        HangWatch::After(std::time::Duration::from_secs_f64(secs))
    }))
}

fn read_target_offload(r: &mut Reader) -> i32 {
    r.read("OMP_TARGET_OFFLOAD", "default", parse_target_offload).unwrap_or(1)
}

/// `OMP_TARGET_OFFLOAD`: disabled (0), default (1) or mandatory (2), any case.
pub fn parse_target_offload(s: &str) -> Result<i32, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "disabled" => Ok(0),
        "default" => Ok(1),
        "mandatory" => Ok(2),
        _ => Err("expected disabled, default or mandatory".into()),
    }
}

fn parse_bind_list(s: &str) -> Result<Vec<ProcBind>, String> {
    let lower = s.to_ascii_lowercase();
    match lower.as_str() {
        "true" => return Ok(vec![ProcBind::True]),
        "false" => return Ok(vec![ProcBind::False]),
        _ => {}
    }
    lower
        .split(',')
        .map(|p| match p.trim() {
            "primary" | "master" => Ok(ProcBind::Primary),
            "close" => Ok(ProcBind::Close),
            "spread" => Ok(ProcBind::Spread),
            _ => Err("expected true, false, or a list of primary, close, spread".to_string()),
        })
        .collect()
}

/// A size with an optional B/K/M/G suffix (default unit: K).
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (num, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => (&t[..i], t[i..].trim()),
        None => (t, "k"),
    };
    let n: usize = num.parse().map_err(|_| "expected a size such as 4M".to_string())?;
    let mult: usize = match unit.to_ascii_lowercase().as_str() {
        "b" => 1,
        "k" | "kb" => 1 << 10,
        "m" | "mb" => 1 << 20,
        "g" | "gb" => 1 << 30,
        _ => return Err("expected a size such as 4M (units B, K, M, G)".into()),
    };
    let bytes = n.checked_mul(mult).ok_or("size too large")?;
    if bytes < 64 << 10 {
        return Err("a stack must be at least 64K".into());
    }
    Ok(bytes)
}

/// The longest finite block time, in milliseconds (libomp's too): about 24.8 days.
pub const MAX_BLOCKTIME_MS: u64 = i32::MAX as u64;

/// KMP_BLOCKTIME: milliseconds, or a number with `us`/`ms`/`s`, or `infinite`. A number too
/// large for any integer reads as the largest (the caller caps it, with a warning).
pub fn parse_blocktime(s: &str) -> Result<Option<u64>, String> {
    let lower = s.to_ascii_lowercase();
    if lower == "infinite" || lower == "infinity" {
        return Ok(None);
    }
    let (num, unit) = match lower.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => (&lower[..i], &lower[i..]),
        None => (lower.as_str(), "ms"),
    };
    if num.is_empty() {
        return Err("expected milliseconds or 'infinite'".into());
    }
    let n: u64 = num.parse().unwrap_or(u64::MAX);
    Ok(Some(match unit {
        "ms" => n,
        "us" => n.div_ceil(1000),
        "s" => n.saturating_mul(1000),
        _ => return Err("expected milliseconds or 'infinite'".into()),
    }))
}

/// Reads every variable from `src`.
pub fn read(src: &dyn Source) -> Settings {
    let mut r = Reader { src, warnings: Vec::new(), given: Vec::new() };
    let mut mask = places::process_mask();
    if let Some(subset) = r.read("KMP_HW_SUBSET", "the whole machine", crate::hw_subset::parse) {
        let kept = crate::hw_subset::select(&subset, &places::cpu_tree(&mask));
        if kept.is_empty() {
            r.warnings.push(format!(
                "oxiomp: warning: KMP_HW_SUBSET='{}' leaves no CPU of the process; using the whole machine",
                src.get("KMP_HW_SUBSET").unwrap_or_default()
            ));
        } else {
            mask = kept;
        }
    }
    let nprocs = mask.len().max(1) as u32;

    let max = crate::registry::MAX_THREADS as u64;
    let device_thread_limit = r
        .read("KMP_DEVICE_THREAD_LIMIT", &format!("{max}"), |s| parse_uint(s, 1, max))
        .or_else(|| r.read("KMP_ALL_THREADS", &format!("{max}"), |s| parse_uint(s, 1, max)))
        .unwrap_or(max) as u32;
    let nthreads_list =
        r.read("OMP_NUM_THREADS", &format!("{nprocs}"), |s| parse_num_list(s, device_thread_limit));
    let nthreads_list = nthreads_list.map(|(list, cut)| {
        if cut {
            r.warnings.push(format!(
                "oxiomp: warning: OMP_NUM_THREADS='{}' asks for more threads than oxiomp runs at once \
                 ({device_thread_limit}); using {device_thread_limit} instead",
                src.get("OMP_NUM_THREADS").unwrap_or_default()
            ));
        }
        list
    });
    let dynamic = r.read("OMP_DYNAMIC", "false", parse_bool).unwrap_or(false);
    let nested = r.read("OMP_NESTED", "unset", parse_bool);
    let max_levels = r.read("OMP_MAX_ACTIVE_LEVELS", "1", |s| {
        parse_uint(s, 0, u32::MAX as u64).map(|v| v.min(SUPPORTED_ACTIVE_LEVELS as u64) as u32)
    });
    let thread_limit = r
        .read("OMP_THREAD_LIMIT", "no limit", |s| parse_uint(s, 1, i32::MAX as u64).map(|v| v as u32))
        .unwrap_or(i32::MAX as u32);
    let mut bind_list = r.read("OMP_PROC_BIND", "false", parse_bind_list);
    let places_text = src.get("OMP_PLACES");
    let mut places_name = None;
    let mut places = r.read("OMP_PLACES", "cores", |s| places::parse_places(s, &mask)).map(|p| {
        if let Some(note) = p.note() {
            r.warnings.push(format!(
                "oxiomp: warning: OMP_PLACES='{}': {note}",
                places_text.as_deref().unwrap_or_default()
            ));
        }
        places_name = p.name;
        p.list
    });
    let kmp_affinity =
        r.read("KMP_AFFINITY", "none", |s| crate::kmp_affinity::parse(s, &mask)).unwrap_or_default();
    let mut affinity_migrate_levels = 0;
    if let Some((list, bind)) = kmp_affinity.binding
        && places.is_none()
        && bind_list.is_none()
    {
        places = Some(list);
        bind_list = Some(vec![bind]);
        affinity_migrate_levels = kmp_affinity.migrate_levels;
    }
    let hidden = read_hidden(&mut r, &mask);
    let run_sched = r.read("OMP_SCHEDULE", "static", parse_schedule).unwrap_or_default();
    let default_stack = default_stacksize(src.stack_limit());
    let default_text = format!("{}K", default_stack >> 10);
    let stacksize = r
        .read("OMP_STACKSIZE", &default_text, parse_size)
        .or_else(|| r.read("KMP_STACKSIZE", &default_text, parse_size))
        .or_else(|| r.read("GOMP_STACKSIZE", &default_text, parse_size))
        .unwrap_or(default_stack);
    let wait_active = r
        .read("OMP_WAIT_POLICY", "active for a while, then passive", |s| {
            match s.to_ascii_lowercase().as_str() {
                "active" => Ok(Some(true)),
                "passive" => Ok(Some(false)),
                _ => Err("expected active or passive".to_string()),
            }
        })
        .flatten();
    let blocktime = r.read("KMP_BLOCKTIME", "200ms", parse_blocktime).map(|b| match b {
        Some(ms) if ms > MAX_BLOCKTIME_MS => {
            r.warnings.push(format!(
                "oxiomp: warning: KMP_BLOCKTIME='{}' is longer than the longest block time, \
                 {MAX_BLOCKTIME_MS} ms (about 24.8 days; 'infinite' never sleeps); using {MAX_BLOCKTIME_MS} ms",
                src.get("KMP_BLOCKTIME").unwrap_or_default()
            ));
            Some(MAX_BLOCKTIME_MS)
        }
        b => b,
    });
    // libgomp's spin count, for gcc users: read as a block time (see `parse_spincount`).
    let blocktime = blocktime.or_else(|| r.read("GOMP_SPINCOUNT", "unset", parse_spincount));
    let target_offload = read_target_offload(&mut r);
    let cancellation = r.read("OMP_CANCELLATION", "false", parse_bool).unwrap_or(false);
    let task_throttling = r.read("KMP_ENABLE_TASK_THROTTLING", "true", parse_bool).unwrap_or(true);
    let max_task_priority =
        r.read("OMP_MAX_TASK_PRIORITY", "0", |s| parse_uint(s, 0, i32::MAX as u64)).unwrap_or(0) as i32;
    let default_device =
        r.read("OMP_DEFAULT_DEVICE", "0", |s| parse_uint(s, 0, i32::MAX as u64)).unwrap_or(0) as i32;
    let nteams = r.read("OMP_NUM_TEAMS", "unset", |s| parse_uint(s, 1, i32::MAX as u64)).unwrap_or(0) as i32;
    let teams_thread_limit =
        r.read("OMP_TEAMS_THREAD_LIMIT", "unset", |s| parse_uint(s, 1, i32::MAX as u64)).unwrap_or(0) as i32;
    let display_env = r
        .read("OMP_DISPLAY_ENV", "false", |s| match s.to_ascii_lowercase().as_str() {
            "verbose" => Ok(DisplayEnv::Verbose),
            other => parse_bool(other).map(|b| if b { DisplayEnv::True } else { DisplayEnv::False }),
        })
        .unwrap_or(DisplayEnv::False);
    let warnings = r.read("KMP_WARNINGS", "true", parse_bool).unwrap_or(true);
    let display_affinity = r.read("OMP_DISPLAY_AFFINITY", "false", parse_bool).unwrap_or(false);
    let debug = r
        .read("OMP_DEBUG", "disabled", |s| match s.trim().to_ascii_lowercase().as_str() {
            "enabled" => Ok(true),
            "disabled" => Ok(false),
            _ => Err("expected enabled or disabled".to_string()),
        })
        .unwrap_or(false);
    let check = r
        .read("OXIOMP_CHECK", "0", |s| match s.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "abort" => Ok(CheckMode::Abort),
            "warn" => Ok(CheckMode::Warn),
            "0" | "false" | "" => Ok(CheckMode::Off),
            _ => Err("expected 1, warn or 0".to_string()),
        })
        .unwrap_or(CheckMode::Off);
    let hang = r.read("OXIOMP_HANG_SECONDS", "unset", parse_hang_seconds).flatten();
    let affinity_format =
        src.get("OMP_AFFINITY_FORMAT").unwrap_or_else(|| crate::affinity_format::DEFAULT_FORMAT.to_string());
    if let Some(w) = crate::affinity_format::width_warning(&affinity_format) {
        r.warnings.push(format!("oxiomp: warning: OMP_AFFINITY_FORMAT='{affinity_format}': {w}"));
    }
    let def_allocator = r
        .read("OMP_ALLOCATOR", "omp_default_mem_alloc", crate::allocator::parse_env)
        .unwrap_or(crate::allocator::DEFAULT_MEM_ALLOC);
    let trace_dir = r.read("OMP_OVNI", "0", parse_bool).unwrap_or(false).then(|| {
        std::path::PathBuf::from(
            r.src.get("OVNI_TRACEDIR").filter(|d| !d.trim().is_empty()).unwrap_or("ovni".into()),
        )
    });

    // nthreads-var: the list; the first element is the top level's.
    let list: &'static [u32] = Box::leak(nthreads_list.unwrap_or_else(|| vec![nprocs]).into_boxed_slice());
    let binds: &'static [ProcBind] = Box::leak(
        bind_list
            .unwrap_or_else(|| vec![if places.is_some() { ProcBind::True } else { ProcBind::False }])
            .into_boxed_slice(),
    );
    // max-active-levels-var: explicit value, else OMP_NESTED, else all supported levels when
    // OMP_NUM_THREADS or OMP_PROC_BIND is a list (as libomp does), else 1.
    let max_active_levels = max_levels.unwrap_or(match nested {
        Some(true) => SUPPORTED_ACTIVE_LEVELS,
        Some(false) => 1,
        None if list.len() > 1 || binds.len() > 1 => SUPPORTED_ACTIVE_LEVELS,
        None => 1,
    });
    // Without KMP_BLOCKTIME, the wait policy decides, as in libomp: active waits never sleep
    // (infinite block time; waiting threads still yield), passive ones sleep at once.
    let blocktime_ms = match (blocktime, wait_active) {
        (Some(b), _) => b,
        (None, Some(false)) => Some(0),
        (None, Some(true)) => None,
        (None, None) => Some(200),
    };
    let places = places.unwrap_or_else(|| {
        places_name = Some("cores".into());
        places::default_places(&mask)
    });
    let settings_report = r.read("KMP_SETTINGS", "false", parse_bool).unwrap_or(false);
    let teams_bind = r
        .read("KMP_TEAMS_PROC_BIND", "spread", |s| match parse_bind_list(s)?.as_slice() {
            [b @ (ProcBind::Spread | ProcBind::Close | ProcBind::Primary)] => Ok(*b),
            _ => Err("expected spread, close or primary".into()),
        })
        .unwrap_or(ProcBind::Spread);
    // libomp's count of dispatch buffers, 1 to 4096: checked and reported as libomp does,
    // otherwise unused (oxiomp's loop slots wait safely for stragglers whatever the count).
    if let Some(n) =
        r.read("KMP_DISP_NUM_BUFFERS", "7", |s| s.parse::<i64>().map_err(|_| "expected a number".into()))
        && !(1..=4096).contains(&n)
    {
        let (what, used) = if n < 1 { ("too small", 1) } else { ("too large", 4096) };
        r.warnings
            .push(format!("oxiomp: warning: KMP_DISP_NUM_BUFFERS='{n}' is {what} (1 to 4096); using {used}"));
    }
    let nplaces = places.places.len() as u32;
    Settings {
        icvs: Icvs {
            nthreads: list[0],
            nthreads_rest: &list[1..],
            dynamic,
            max_active_levels,
            run_sched,
            bind: binds[0],
            bind_rest: &binds[1..],
            default_device,
            thread_limit,
            partition_start: 0,
            partition_len: nplaces,
            def_allocator,
        },
        globals: Globals {
            stacksize,
            wait_active: wait_active.unwrap_or(false),
            blocktime_ms,
            cancellation,
            max_task_priority,
            nteams,
            teams_thread_limit,
            display_env,
            debug,
            warnings,
            display_affinity,
            affinity_format,
            places_text,
            trace_dir,
            device_thread_limit,
            target_offload,
            task_throttling,
            affinity_verbose: kmp_affinity.verbose,
            affinity_reset: kmp_affinity.reset,
            affinity_migrate_levels,
            places_name,
            settings_report: settings_report.then_some(r.given.clone()),
            teams_bind,
            check,
            hang,
        },
        mask,
        places,
        hidden,
        warnings: r.warnings,
    }
}

/// The OMP_DISPLAY_ENV text (OpenMP 5.2 §6.12): version, then `[host] NAME='VALUE'` lines.
/// `KMP_SETTINGS=1`: the variables the program was started with (as given), then the
/// settings in force, one per line (as `OMP_DISPLAY_ENV` shows them, places by name where they
/// come from one). Empty when not asked for.
pub fn settings_report(s: &Settings) -> String {
    let Some(given) = &s.globals.settings_report else { return String::new() };
    let mut out = String::from("oxiomp: KMP_SETTINGS\nUser settings:\n");
    for (k, v) in given {
        out.push_str(&format!("   {k}='{v}'\n"));
    }
    out.push_str("Effective settings:\n");
    for l in display(s).lines().filter_map(|l| l.strip_prefix("  [host] ")) {
        match (&s.globals.places_name, l.starts_with("OMP_PLACES=")) {
            (Some(name), true) => out.push_str(&format!("   OMP_PLACES='{name}'\n")),
            _ => out.push_str(&format!("   {l}\n")),
        }
    }
    out
}

pub fn display(s: &Settings) -> String {
    display_as(s, s.globals.display_env == DisplayEnv::Verbose)
}

/// The `OMP_DISPLAY_ENV=verbose` text, whatever `OMP_DISPLAY_ENV` says (what a debugger
/// shows: OMPD's `ompd_get_display_control_vars`).
pub fn display_verbose(s: &Settings) -> String {
    display_as(s, true)
}

fn display_as(s: &Settings, verbose: bool) -> String {
    let i = &s.icvs;
    let g = &s.globals;
    let list =
        |first: String, rest: Vec<String>| std::iter::once(first).chain(rest).collect::<Vec<_>>().join(",");
    let mut out = String::from("OPENMP DISPLAY ENVIRONMENT BEGIN\n  _OPENMP='202011'\n");
    let mut line = |name: &str, value: String| out.push_str(&format!("  [host] {name}='{value}'\n"));
    line("OMP_DYNAMIC", if i.dynamic { "TRUE" } else { "FALSE" }.into());
    line("OMP_NESTED", if i.max_active_levels > 1 { "TRUE" } else { "FALSE" }.into());
    line(
        "OMP_NUM_THREADS",
        list(i.nthreads.to_string(), i.nthreads_rest.iter().map(|n| n.to_string()).collect()),
    );
    let sched = format!(
        "{}{}{}",
        if i.run_sched.monotonic || i.run_sched.kind == ScheduleKind::Static {
            "MONOTONIC:"
        } else {
            "NONMONOTONIC:"
        },
        i.run_sched.kind.name().to_ascii_uppercase(),
        if i.run_sched.chunk > 0 { format!(",{}", i.run_sched.chunk) } else { String::new() }
    );
    line("OMP_SCHEDULE", sched);
    line(
        "OMP_PROC_BIND",
        list(
            i.bind.name().to_ascii_uppercase(),
            i.bind_rest.iter().map(|b| b.name().to_ascii_uppercase()).collect(),
        ),
    );
    let places: Vec<String> = s
        .places
        .places
        .iter()
        .map(|p| format!("{{{}}}", p.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")))
        .collect();
    line("OMP_PLACES", places.join(","));
    line("OMP_STACKSIZE", format!("{}K", g.stacksize >> 10));
    line("OMP_WAIT_POLICY", if g.wait_active { "ACTIVE" } else { "PASSIVE" }.into());
    line("OMP_MAX_ACTIVE_LEVELS", i.max_active_levels.to_string());
    line("OMP_THREAD_LIMIT", i.thread_limit.to_string());
    line("OMP_CANCELLATION", if g.cancellation { "TRUE" } else { "FALSE" }.into());
    line("OMP_DEFAULT_DEVICE", i.default_device.to_string());
    line("OMP_ALLOCATOR", crate::allocator::name(i.def_allocator));
    line("OMP_MAX_TASK_PRIORITY", g.max_task_priority.to_string());
    line("OMP_DISPLAY_AFFINITY", if g.display_affinity { "TRUE" } else { "FALSE" }.into());
    line("OMP_AFFINITY_FORMAT", g.affinity_format.clone());
    line("OMP_NUM_TEAMS", g.nteams.to_string());
    line("OMP_TEAMS_THREAD_LIMIT", g.teams_thread_limit.to_string());
    line("OMP_DEBUG", if g.debug { "enabled" } else { "disabled" }.into());
    if verbose {
        let bt = g.blocktime_ms.map_or("infinite".to_string(), |b| b.to_string());
        line("KMP_BLOCKTIME", bt);
    }
    out.push_str("OPENMP DISPLAY ENVIRONMENT END\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> Settings {
        read(&vars)
    }

    #[test]
    fn defaults() {
        let s = with(&[]);
        assert_eq!(s.icvs.nthreads as usize, s.mask.len());
        assert_eq!(s.icvs.max_active_levels, 1);
        assert!(!s.icvs.dynamic);
        assert_eq!(s.icvs.bind, ProcBind::False);
        assert!(s.warnings.is_empty());
    }

    #[test]
    fn libgomp_variables() {
        let s = with(&[("GOMP_STACKSIZE", "512K"), ("GOMP_SPINCOUNT", "300k")]);
        assert_eq!(s.globals.stacksize, 512 << 10);
        assert_eq!(s.globals.blocktime_ms, Some(1), "300000 spins: 0.3 ms, rounded up");
        assert_eq!(with(&[("GOMP_SPINCOUNT", "0")]).globals.blocktime_ms, Some(0));
        assert_eq!(with(&[("GOMP_SPINCOUNT", "infinite")]).globals.blocktime_ms, None);
        assert_eq!(with(&[("GOMP_SPINCOUNT", "2G")]).globals.blocktime_ms, Some(2000));
        // libomp's and the standard's names come first.
        let s = with(&[("OMP_STACKSIZE", "1M"), ("GOMP_STACKSIZE", "512K")]);
        assert_eq!(s.globals.stacksize, 1 << 20);
        assert_eq!(with(&[("KMP_BLOCKTIME", "5"), ("GOMP_SPINCOUNT", "0")]).globals.blocktime_ms, Some(5));
        let bad = with(&[("GOMP_SPINCOUNT", "lots")]);
        assert!(
            bad.warnings.len() == 1 && bad.warnings[0].contains("GOMP_SPINCOUNT='lots'"),
            "{:?}",
            bad.warnings
        );
    }

    #[test]
    fn lists_and_levels() {
        let s = with(&[("OMP_NUM_THREADS", "4, 3,2"), ("OMP_PROC_BIND", "spread,close")]);
        assert_eq!((s.icvs.nthreads, s.icvs.nthreads_rest), (4, &[3u32, 2][..]));
        assert_eq!(s.icvs.max_active_levels, SUPPORTED_ACTIVE_LEVELS);
        assert_eq!((s.icvs.bind, s.icvs.bind_rest), (ProcBind::Spread, &[ProcBind::Close][..]));
        assert_eq!(with(&[("OMP_NESTED", "true")]).icvs.max_active_levels, SUPPORTED_ACTIVE_LEVELS);
        assert_eq!(with(&[("OMP_NESTED", "1"), ("OMP_MAX_ACTIVE_LEVELS", "2")]).icvs.max_active_levels, 2);
    }

    #[test]
    fn each_malformed_value_warns_once_and_defaults() {
        let bad = [
            ("OMP_NUM_THREADS", "4x"),
            ("OMP_DYNAMIC", "maybe"),
            ("OMP_MAX_ACTIVE_LEVELS", "-3"),
            ("OMP_THREAD_LIMIT", "zero"),
            ("OMP_PROC_BIND", "sideways"),
            ("OMP_PLACES", "{0"),
            ("OMP_SCHEDULE", "garbage"),
            ("OMP_STACKSIZE", "12Q"),
            ("OMP_WAIT_POLICY", "sometimes"),
            ("KMP_BLOCKTIME", "soon"),
            ("OMP_CANCELLATION", "perhaps"),
            ("OMP_DISPLAY_ENV", "loud"),
        ];
        let s = with(&bad);
        assert_eq!(s.warnings.len(), bad.len(), "{:#?}", s.warnings);
        for ((name, value), w) in bad.iter().zip(&s.warnings) {
            assert!(w.contains(&format!("{name}='{value}'")), "{w}");
            assert!(w.starts_with("oxiomp: warning: ") && !w.contains('\n'));
        }
        let d = with(&[]);
        assert_eq!(s.icvs.nthreads, d.icvs.nthreads);
        assert_eq!(s.icvs.max_active_levels, 1);
        assert_eq!(s.icvs.run_sched, Schedule::default());
        assert_eq!(s.globals.stacksize, 4 << 20);
        assert_eq!(s.globals.blocktime_ms, Some(200));
    }

    /// Worker stacks follow the initial thread's limit, within 4 MiB and 64 MiB.
    #[test]
    fn default_stack_size_follows_the_stack_limit() {
        assert_eq!(default_stacksize(Some(8 << 20)), 8 << 20);
        assert_eq!(default_stacksize(Some(u64::MAX)), 64 << 20);
        assert_eq!(default_stacksize(Some(1 << 30)), 64 << 20);
        assert_eq!(default_stacksize(Some(4096)), 4 << 20);
        assert_eq!(default_stacksize(None), 4 << 20);
    }

    /// Thread counts above the most the runtime runs at once are cut down to it, with a
    /// warning that says so (not that the value is malformed).
    #[test]
    fn too_many_threads_are_cut_down() {
        let s = with(&[("OMP_NUM_THREADS", "100000,3")]);
        assert_eq!((s.icvs.nthreads, s.icvs.nthreads_rest), (65536, &[3u32][..]));
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
        assert!(s.warnings[0].contains("asks for more threads than oxiomp runs at once (65536)"));
        let s = with(&[("OMP_NUM_THREADS", "99999999999999999999999"), ("KMP_DEVICE_THREAD_LIMIT", "64")]);
        assert_eq!((s.icvs.nthreads, s.globals.device_thread_limit), (64, 64));
        assert!(s.warnings[0].contains("(64)"), "{:?}", s.warnings);
        let s = with(&[("KMP_DEVICE_THREAD_LIMIT", "70000")]);
        assert_eq!(s.globals.device_thread_limit, 65536);
        assert!(s.warnings[0].contains("expected a whole number from 1 to 65536"), "{:?}", s.warnings);
        assert_eq!(with(&[("KMP_ALL_THREADS", "8")]).globals.device_thread_limit, 8);
        assert_eq!(with(&[("OMP_NUM_THREADS", "+4, 2")]).icvs.nthreads, 4, "a sign is allowed");
        for bad in ["0", "-4", "4,,2", "4x"] {
            let s = with(&[("OMP_NUM_THREADS", bad)]);
            assert!(
                s.warnings[0].contains("expected a list of positive whole numbers"),
                "{bad}: {:?}",
                s.warnings
            );
        }
    }

    #[test]
    fn schedules_sizes_blocktimes() {
        let d = parse_schedule("dynamic,7").unwrap();
        assert_eq!((d.kind, d.chunk, d.monotonic), (ScheduleKind::Dynamic, 7, false));
        let m = parse_schedule("monotonic:guided").unwrap();
        assert_eq!((m.kind, m.chunk, m.monotonic), (ScheduleKind::Guided, 0, true));
        let t = parse_schedule("trapezoidal,3").unwrap();
        assert_eq!((t.kind, t.chunk), (ScheduleKind::Trapezoidal, 3));
        assert_eq!(parse_schedule("STATIC_STEAL").unwrap().kind, ScheduleKind::StaticSteal);
        assert!(parse_schedule("static,0").is_err());
        assert!(parse_schedule("weird:static").is_err());
        assert_eq!(parse_size("2M").unwrap(), 2 << 20);
        assert_eq!(parse_size("512").unwrap(), 512 << 10);
        assert_eq!(parse_size("1g").unwrap(), 1 << 30);
        assert!(parse_size("1K").is_err());
        assert_eq!(parse_blocktime("0").unwrap(), Some(0));
        assert_eq!(parse_blocktime("1500us").unwrap(), Some(2));
        assert_eq!(parse_blocktime("infinite").unwrap(), None);
        for long in ["99999999999", "99999999999999999999999", "2147484s"] {
            let s = with(&[("KMP_BLOCKTIME", long)]);
            assert_eq!(s.globals.blocktime_ms, Some(MAX_BLOCKTIME_MS), "{long}");
            assert_eq!(s.warnings.len(), 1);
            assert!(s.warnings[0].contains("longer than the longest block time"), "{:?}", s.warnings);
        }
        assert_eq!(with(&[("KMP_BLOCKTIME", "2147483647")]).warnings.len(), 0);
        assert_eq!(with(&[("OMP_WAIT_POLICY", "passive")]).globals.blocktime_ms, Some(0));
        assert_eq!(with(&[("OMP_WAIT_POLICY", "active")]).globals.blocktime_ms, None);
        assert_eq!(
            with(&[("OMP_WAIT_POLICY", "active"), ("KMP_BLOCKTIME", "5")]).globals.blocktime_ms,
            Some(5)
        );
        assert_eq!(with(&[]).globals.blocktime_ms, Some(200));
    }

    #[test]
    fn display_format() {
        let s = with(&[("OMP_NUM_THREADS", "3,2"), ("OMP_SCHEDULE", "guided,4")]);
        let t = display(&s);
        assert!(t.starts_with("OPENMP DISPLAY ENVIRONMENT BEGIN\n  _OPENMP='202011'\n"));
        assert!(t.contains("  [host] OMP_NUM_THREADS='3,2'\n"));
        assert!(t.contains("  [host] OMP_SCHEDULE='NONMONOTONIC:GUIDED,4'\n"));
        assert!(t.ends_with("OPENMP DISPLAY ENVIRONMENT END\n"));
    }
}
