//! Places (OMP_PLACES), the process affinity mask, and the OpenMP thread-affinity policy
//! (OpenMP 5.2 §10.1.3): which place each thread of a new team runs on.
//!
//! Places only ever contain CPUs of the process's affinity mask, so `taskset -c 1 prog` runs on
//! CPU 1 and nowhere else, whatever OMP_PLACES says.

use crate::icv::ProcBind;

/// The place list of the device: each place is a sorted set of OS CPU ids.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlaceList {
    pub places: Vec<Vec<u32>>,
}

/// The CPUs this process may run on, sorted.
pub fn process_mask() -> Vec<u32> {
    // SAFETY: cpu_set_t is plain old data (all-zero is a valid empty set); sched_getaffinity
    // writes at most size_of::<cpu_set_t>() bytes into it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size we pass.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        return (0..n).collect();
    }
    (0..libc::CPU_SETSIZE as u32)
        // SAFETY: i < CPU_SETSIZE, within the set.
        .filter(|&i| unsafe { libc::CPU_ISSET(i as usize, &set) })
        .collect()
}

/// `KMP_AFFINITY=verbose` and `reset` (see `kmp_affinity`), copied out of the settings when
/// the runtime starts. Std atomics: settings, not part of any model.
static VERBOSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static RESET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Called once by the runtime's start: prints the places when `verbose` asks for it, and, when
/// threads are bound to places wider than one CPU, across how many machine levels they may
/// move (`migrate_levels`, see `KmpAffinity`).
pub(crate) fn set_kmp_affinity(
    verbose: bool,
    reset: bool,
    places: &PlaceList,
    bind: ProcBind,
    migrate_levels: u32,
) {
    // Relaxed: written while the runtime starts, before any thread binds.
    VERBOSE.store(verbose, std::sync::atomic::Ordering::Relaxed);
    RESET.store(reset, std::sync::atomic::Ordering::Relaxed);
    if verbose {
        let list: Vec<String> = places.places.iter().map(|p| cpu_set_text(p)).collect();
        crate::stderr_line(format_args!(
            "oxiomp: KMP_AFFINITY: {} places {}; binding {bind:?}",
            list.len(),
            list.join(",")
        ));
        if bind != ProcBind::False {
            report_migration("KMP_AFFINITY", migrate_levels);
        }
    }
}

/// The `verbose` line saying that bound threads may move across `levels` machine levels
/// (none for 0), in libomp's words, which scripts look for.
pub(crate) fn report_migration(setting: &str, levels: u32) {
    if levels > 0 {
        crate::stderr_line(format_args!(
            "OMP: Info #145: {setting}: Threads may migrate across {levels} innermost levels of machine"
        ));
    }
}

/// Whether a primary thread leaving an outermost region is unbound (`KMP_AFFINITY=reset`).
#[inline]
pub(crate) fn reset_on() -> bool {
    // Relaxed: see `set_kmp_affinity`.
    RESET.load(std::sync::atomic::Ordering::Relaxed)
}

fn cpu_set_text(cpus: &[u32]) -> String {
    let ids: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
    format!("{{{}}}", ids.join(","))
}

/// Binds the calling thread to the CPUs of one place. Returns false if the kernel refused.
/// With `KMP_AFFINITY=verbose`, the binding is reported.
pub fn bind_current_thread(cpus: &[u32], gtid: i32) -> bool {
    // Relaxed: see `set_kmp_affinity`.
    let verbose = VERBOSE.load(std::sync::atomic::Ordering::Relaxed);
    bind_current_thread_reporting(cpus, gtid, verbose.then_some("KMP_AFFINITY"))
}

/// [`bind_current_thread`], reporting the binding under the setting `report` names, if any,
/// in libomp's words (`OMP: Info #254: KMP_AFFINITY: pid .. tid .. thread <gtid> bound to OS
/// proc set 0,1`), which scripts parse.
pub(crate) fn bind_current_thread_reporting(cpus: &[u32], gtid: i32, report: Option<&str>) -> bool {
    // SAFETY: as in `process_mask`, an all-zero cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if (c as usize) < libc::CPU_SETSIZE as usize {
            // SAFETY: c < CPU_SETSIZE, within the set.
            unsafe { libc::CPU_SET(c as usize, &mut set) };
        }
    }
    // SAFETY: `set` is a valid cpu_set_t of the size we pass; 0 means the calling thread.
    let bound = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 };
    if bound {
        oxiomp_instrument::affinity_changed();
        if let Some(setting) = report {
            // SAFETY: getpid and gettid have no preconditions.
            let (pid, tid) = unsafe { (libc::getpid(), libc::gettid()) };
            let ids: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
            crate::stderr_line(format_args!(
                "OMP: Info #254: {setting}: pid {pid} tid {tid} thread {gtid} bound to OS proc set {}",
                ids.join(",")
            ));
        }
    }
    bound
}

/// A CPU set the program builds and applies itself (libomp's `kmp_affinity_mask_t` API).
pub struct AffinityMask(libc::cpu_set_t);

/// Why a CPU number cannot go into a mask.
#[derive(Debug, PartialEq, Eq)]
pub enum MaskError {
    /// Not a CPU number at all.
    OutOfRange,
    /// A CPU the process may not run on.
    NotAvailable,
}

impl AffinityMask {
    pub fn empty() -> Box<AffinityMask> {
        // SAFETY: an all-zero cpu_set_t is the empty set.
        Box::new(AffinityMask(unsafe { std::mem::zeroed() }))
    }

    fn index(cpu: i32) -> Result<usize, MaskError> {
        usize::try_from(cpu).ok().filter(|&c| c < libc::CPU_SETSIZE as usize).ok_or(MaskError::OutOfRange)
    }

    /// Adds `cpu`, which must be one of `available`, the CPUs the process may run on (its CPU
    /// set at start-up, `Settings::mask`, not the calling thread's binding now).
    pub fn set(&mut self, cpu: i32, available: &[u32]) -> Result<(), MaskError> {
        let c = Self::index(cpu)?;
        if !available.contains(&(c as u32)) {
            return Err(MaskError::NotAvailable);
        }
        // SAFETY: c < CPU_SETSIZE.
        unsafe { libc::CPU_SET(c, &mut self.0) };
        Ok(())
    }

    pub fn unset(&mut self, cpu: i32) -> Result<(), MaskError> {
        let c = Self::index(cpu)?;
        // SAFETY: c < CPU_SETSIZE.
        unsafe { libc::CPU_CLR(c, &mut self.0) };
        Ok(())
    }

    pub fn contains(&self, cpu: i32) -> Result<bool, MaskError> {
        let c = Self::index(cpu)?;
        // SAFETY: c < CPU_SETSIZE.
        Ok(unsafe { libc::CPU_ISSET(c, &self.0) })
    }

    /// Binds the calling thread to the mask; the OS error if it refuses (an empty mask). The
    /// thread is then bound to no place: the caller tells it so (`Thread::forget_place`), and
    /// its next region binds it again.
    pub fn apply(&self) -> Result<(), std::io::Error> {
        // SAFETY: a valid cpu_set_t of the size we pass; 0 is the calling thread.
        let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.0) };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        oxiomp_instrument::affinity_changed();
        Ok(())
    }

    /// Replaces the mask with the calling thread's binding.
    pub fn read_current(&mut self) -> Result<(), std::io::Error> {
        // SAFETY: as in `apply`, writing at most the size we pass.
        let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut self.0) };
        if rc == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
    }

    /// One more than the highest CPU number the machine has (`kmp_get_affinity_max_proc`).
    pub fn max_proc() -> i32 {
        // SAFETY: sysconf has no preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
        if n > 0 { n.min(libc::CPU_SETSIZE as libc::c_long) as i32 } else { 1 }
    }
}

/// What a CPU belongs to, read from sysfs (each CPU on its own when sysfs says nothing).
#[derive(Clone, Copy, Debug, Default)]
struct CpuTopo {
    package: i64,
    core: i64,
    llc: i64,
    numa: i64,
}

fn read_num(path: &str) -> Option<i64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn parse_cpu_list(s: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<u32>().ok()),
        }
    }
    out
}

fn topology(cpu: u32) -> CpuTopo {
    let base = format!("/sys/devices/system/cpu/cpu{cpu}");
    let package = read_num(&format!("{base}/topology/physical_package_id")).unwrap_or(0);
    let core = read_num(&format!("{base}/topology/core_id")).map_or(cpu as i64, |c| (package << 20) | c);
    // The last-level cache: the highest `level` among the cache indices; keyed by its first CPU.
    let mut llc = (0, cpu as i64);
    for i in 0..8 {
        let Some(level) = read_num(&format!("{base}/cache/index{i}/level")) else { break };
        if let Ok(list) = std::fs::read_to_string(format!("{base}/cache/index{i}/shared_cpu_list"))
            && let Some(first) = parse_cpu_list(&list).first()
            && level >= llc.0
        {
            llc = (level, *first as i64);
        }
    }
    let mut numa = 0;
    if let Ok(dir) = std::fs::read_dir("/sys/devices/system/node") {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(n) = name.strip_prefix("node").and_then(|n| n.parse::<i64>().ok())
                && let Ok(list) = std::fs::read_to_string(e.path().join("cpulist"))
                && parse_cpu_list(&list).contains(&cpu)
            {
                numa = n;
            }
        }
    }
    CpuTopo { package, core, llc: llc.1, numa }
}

/// Each CPU of `mask` with its socket and core (for `KMP_HW_SUBSET`).
pub(crate) fn cpu_tree(mask: &[u32]) -> Vec<crate::hw_subset::CpuAt> {
    mask.iter()
        .map(|&c| {
            let t = topology(c);
            (t.package, t.core, c)
        })
        .collect()
}

/// Groups the CPUs of `mask` by `key`, in order of each group's first CPU.
fn group_by(mask: &[u32], key: impl Fn(&CpuTopo) -> i64) -> Vec<Vec<u32>> {
    let mut groups: Vec<(i64, Vec<u32>)> = Vec::new();
    for &cpu in mask {
        let k = key(&topology(cpu));
        match groups.iter_mut().find(|g| g.0 == k) {
            Some(g) => g.1.push(cpu),
            None => groups.push((k, vec![cpu])),
        }
    }
    groups.into_iter().map(|g| g.1).collect()
}

/// The place list for an abstract name (`threads`, `cores`, `ll_caches`, `numa_domains`,
/// `sockets`) over the CPUs of `mask`.
fn abstract_places(name: &str, mask: &[u32]) -> Option<Vec<Vec<u32>>> {
    Some(match name {
        "threads" => mask.iter().map(|&c| vec![c]).collect(),
        "cores" => group_by(mask, |t| t.core),
        "ll_caches" => group_by(mask, |t| t.llc),
        "numa_domains" => group_by(mask, |t| t.numa),
        "sockets" => group_by(mask, |t| t.package),
        _ => return None,
    })
}

/// The places of one kind of unit (an abstract place name: `threads`, `cores`, ...) over the
/// CPUs of `mask`; empty for an unknown name.
pub fn places_at(name: &str, mask: &[u32]) -> Vec<Vec<u32>> {
    abstract_places(name, mask).unwrap_or_default()
}

/// The default place list (used when binding is requested without OMP_PLACES): cores.
pub fn default_places(mask: &[u32]) -> PlaceList {
    PlaceList { places: abstract_places("cores", mask).unwrap_or_default() }
}

/// The number of CPU ids the machine has (ids `0..n`, online or not): at least one more than
/// the highest CPU of `mask`, at most what a CPU set holds.
pub fn machine_cpus(mask: &[u32]) -> u32 {
    let conf = AffinityMask::max_proc().max(1) as u32;
    conf.max(mask.iter().max().map_or(0, |&m| m + 1)).min(libc::CPU_SETSIZE as u32)
}

/// What parsing OMP_PLACES found: the place list, and the CPU ids it named that the machine
/// does not have (ignored; how many, and the first few).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ParsedPlaces {
    pub list: PlaceList,
    pub missing: u64,
    pub missing_first: Vec<i64>,
    /// Places beyond the most a list holds (`max_places`) were dropped.
    pub truncated: bool,
    /// The abstract name the places come from (`cores`, ...), if they do.
    pub name: Option<String>,
    /// What was wrong with the count after an abstract name (ignored), if anything.
    pub bad_count: Option<String>,
}

impl ParsedPlaces {
    /// The warning to give about what was ignored, if anything was.
    pub fn note(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.missing > 0 {
            let first: Vec<String> = self.missing_first.iter().map(|c| c.to_string()).collect();
            let more = if self.missing > first.len() as u64 { ", ..." } else { "" };
            parts.push(format!(
                "ignoring {} CPU id(s) this machine does not have ({}{more})",
                self.missing,
                first.join(", ")
            ));
        }
        if self.truncated {
            parts.push(format!("ignoring the places beyond the first {}", self.list.places.len()));
        }
        if let (Some(e), Some(name)) = (&self.bad_count, &self.name) {
            parts.push(format!("{e}; using {name}"));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// Parses OMP_PLACES against the process mask. Explicit places are cut down to the CPUs in
/// `mask` (CPU ids the machine does not have are reported in the result); places left empty
/// are dropped. An error names what is wrong. Time and memory depend on the machine's CPU
/// count and the text's length, not on the numbers written (`{0:4000000000}` lists the
/// machine's CPUs, it does not expand four billion ids).
pub fn parse_places(text: &str, mask: &[u32]) -> Result<ParsedPlaces, String> {
    parse_places_on(text, mask, machine_cpus(mask))
}

fn parse_places_on(text: &str, mask: &[u32], ncpus: u32) -> Result<ParsedPlaces, String> {
    let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if t.is_empty() {
        return Err("empty value".into());
    }
    let lower = t.to_ascii_lowercase();
    let (name, count) = match lower.split_once('(') {
        Some((n, rest)) => {
            let count = || -> Result<usize, String> {
                let c = rest.strip_suffix(')').ok_or("missing ')'")?;
                match c.parse() {
                    Ok(0) => Err("place count must be positive".into()),
                    Ok(c) => Ok(c),
                    Err(_) => Err(format!("bad place count '{c}'")),
                }
            };
            (n.to_string(), Some(count()))
        }
        None => (lower.clone(), None),
    };
    if let Some(mut places) = abstract_places(&name, mask) {
        // An abstract name with a malformed count means that name's places (as in libomp),
        // with a note.
        let mut bad_count = None;
        match count {
            Some(Ok(c)) => places.truncate(c),
            Some(Err(e)) => bad_count = Some(e),
            None => {}
        }
        return Ok(ParsedPlaces {
            list: PlaceList { places },
            name: Some(name),
            bad_count,
            ..Default::default()
        });
    }
    if let Some(Err(e)) = count {
        return Err(e);
    }
    if !t.starts_with('{') && !t.starts_with('!') {
        return Err(format!("unknown place name '{name}'"));
    }
    let mut missing = Missing::default();
    // The places as written (CPU ids the machine has), in order; at most `max_places` (more
    // would repeat places many times over: the rest are dropped, with a note).
    let mut places: Vec<Vec<u32>> = Vec::new();
    let mut truncated = false;
    let mut rest = t.as_str();
    loop {
        let exclude = rest.starts_with('!');
        if exclude {
            rest = &rest[1..];
        }
        let body_end = rest.find('}').ok_or("missing '}'")?;
        if !rest.starts_with('{') {
            return Err(format!("expected '{{' at '{rest}'"));
        }
        let place = parse_resource_list(&rest[1..body_end], ncpus, &mut missing)?;
        rest = &rest[body_end + 1..];
        // an optional interval ":len[:stride]" replicates the place
        let mut len = 1i64;
        let mut stride = 1i64;
        if let Some(r) = rest.strip_prefix(':') {
            let end = r.find(',').unwrap_or(r.len());
            let nums: Vec<&str> = r[..end].split(':').collect();
            len = parse_int(nums[0])?;
            if nums.len() > 1 {
                stride = parse_int(nums[1])?;
            }
            if nums.len() > 2 || len <= 0 {
                return Err(format!("bad place interval ':{}'", &r[..end]));
            }
            rest = &r[end..];
        }
        // Copies k = 0.. of the place shifted by k * stride, as long as some of its CPUs
        // exist: a place shifted entirely off the machine stays off it (its CPUs are
        // reported as missing without being listed one by one).
        let (lo, hi) = (place.iter().min().copied(), place.iter().max().copied());
        for k in 0..len {
            let shift = k.saturating_mul(stride);
            let on_machine = |c: u32| {
                let s = (c as i64).saturating_add(shift);
                (s >= 0 && s < ncpus as i64).then_some(s as u32)
            };
            let shifted: Vec<u32> = place.iter().filter_map(|&c| on_machine(c)).collect();
            if shifted.len() < place.len() {
                let gone = place.iter().map(|&c| (c as i64).saturating_add(shift));
                missing.add(gone.filter(|&s| s < 0 || s >= ncpus as i64));
            }
            let off = match (lo, hi) {
                (Some(lo), Some(hi)) => {
                    (stride > 0 && (lo as i64).saturating_add(shift) >= ncpus as i64)
                        || (stride < 0 && (hi as i64).saturating_add(shift) < 0)
                }
                _ => true,
            };
            if off && k > 0 {
                // Every later copy is further off: count them without listing.
                let later = ((len - k - 1) as u64).saturating_mul(place.len() as u64);
                missing.count = missing.count.saturating_add(later);
                break;
            }
            if exclude {
                places.retain(|p| *p != shifted);
                if stride == 0 {
                    // Every copy is this one.
                    break;
                }
            } else if places.len() < max_places(ncpus) {
                places.push(shifted);
            } else {
                truncated = true;
                break;
            }
        }
        match rest.strip_prefix(',') {
            Some(r) => rest = r,
            None if rest.is_empty() => break,
            None => return Err(format!("unexpected '{rest}'")),
        }
    }
    let places: Vec<Vec<u32>> = places
        .into_iter()
        .map(|mut p| {
            p.retain(|c| mask.contains(c));
            p.sort_unstable();
            p.dedup();
            p
        })
        .filter(|p| !p.is_empty())
        .collect();
    if places.is_empty() {
        return Err("no place contains a CPU this process may use".into());
    }
    Ok(ParsedPlaces {
        list: PlaceList { places },
        missing: missing.count,
        missing_first: missing.first,
        truncated,
        ..Default::default()
    })
}

/// The most places a list holds: one per CPU of the machine, or 4096 (a list may name a CPU
/// more than once, to put several threads on it), whichever is more.
fn max_places(ncpus: u32) -> usize {
    (ncpus as usize).max(4096)
}

/// CPU ids named that the machine does not have: how many, and the first few.
#[derive(Default)]
struct Missing {
    count: u64,
    first: Vec<i64>,
}

impl Missing {
    const SHOWN: usize = 4;

    fn add(&mut self, ids: impl Iterator<Item = i64>) {
        for id in ids {
            self.count = self.count.saturating_add(1);
            if self.first.len() < Self::SHOWN {
                self.first.push(id);
            }
        }
    }
}

fn parse_int(s: &str) -> Result<i64, String> {
    s.parse().map_err(|_| format!("bad number '{s}'"))
}

/// `res[:len[:stride]]` items separated by commas, `!res` excluding: the CPU ids (below
/// `ncpus`) they name; ids at or above it are counted in `missing`, not listed.
fn parse_resource_list(s: &str, ncpus: u32, missing: &mut Missing) -> Result<Vec<u32>, String> {
    let mut out: Vec<u32> = Vec::new();
    for item in s.split(',') {
        let (exclude, item) = match item.strip_prefix('!') {
            Some(i) => (true, i),
            None => (false, item),
        };
        let nums: Vec<&str> = item.split(':').collect();
        if nums.len() > 3 || nums[0].is_empty() {
            return Err(format!("bad resource '{item}'"));
        }
        let start = parse_int(nums[0])?;
        let len = if nums.len() > 1 { parse_int(nums[1])? } else { 1 };
        let stride = if nums.len() > 2 { parse_int(nums[2])? } else { 1 };
        if start < 0 || len <= 0 || (exclude && nums.len() > 1) {
            return Err(format!("bad resource '{item}'"));
        }
        // The ids start + k * stride for k < len that are on the machine: k runs only as far
        // as they can be (at most `ncpus` steps, whatever len says).
        let n = ncpus as i64;
        let mut k = 0i64;
        while k < len {
            let c = start.saturating_add(k.saturating_mul(stride));
            if c >= n && stride < 0 {
                // Above the machine, coming down: the ids up to the first one on it are
                // missing (the first of them named), and the walk goes on from there.
                let on = ((c - (n - 1)) as u64).div_ceil(stride.unsigned_abs()).min((len - k) as u64) as i64;
                missing.add(std::iter::once(c));
                missing.count = missing.count.saturating_add(on as u64 - 1);
                k += on;
                continue;
            }
            if c < 0 || c >= n {
                // Off the machine: this one and, the stride leading away, every later one.
                missing.add(std::iter::once(c));
                missing.count = missing.count.saturating_add((len - k - 1) as u64);
                break;
            } else if exclude {
                out.retain(|&x| x != c as u32);
            } else if !out.contains(&(c as u32)) {
                out.push(c as u32);
            }
            if stride == 0 {
                break;
            }
            k += 1;
        }
    }
    Ok(out)
}

/// Where one thread of a new team goes: its place and its place partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub place: u32,
    pub partition_start: u32,
    pub partition_len: u32,
}

/// The OpenMP affinity policy: the placement of thread `tid` of a team of `n` threads whose
/// primary thread is on place `master` (absolute index) of the partition
/// `[start, start + len)`. O(1), no allocation.
pub fn place_thread(policy: ProcBind, start: u32, len: u32, master: u32, n: u32, tid: u32) -> Placement {
    let p = len.max(1);
    let m = master.saturating_sub(start).min(p - 1);
    let keep = |place| Placement { place, partition_start: start, partition_len: p };
    let abs = |rel: u32| start + rel % p;
    match policy {
        ProcBind::False | ProcBind::Primary => keep(master),
        _ if n > p => {
            // Consecutive threads share a place; the first n % p places take one more thread.
            let s = n / p;
            let r = n % p;
            let g = if tid < r * (s + 1) { tid / (s + 1) } else { r + (tid - r * (s + 1)) / s };
            let place = abs(m + g);
            if policy.policy() == ProcBind::Spread {
                Placement { place, partition_start: place, partition_len: 1 }
            } else {
                keep(place)
            }
        }
        ProcBind::Close => keep(abs(m + tid)),
        ProcBind::True | ProcBind::Spread => {
            // n subpartitions of q or q+1 consecutive places; the primary thread's is the one
            // holding its place, the others follow it round-robin.
            let q = p / n;
            let r = p % n;
            let sub_start = |j: u32| j * q + j.min(r);
            let sub_len = |j: u32| q + u32::from(j < r);
            let k = (0..n).find(|&j| m >= sub_start(j) && m < sub_start(j) + sub_len(j)).unwrap_or(0);
            let j = (k + tid) % n;
            let place = if tid == 0 { master } else { start + sub_start(j) };
            Placement { place, partition_start: start + sub_start(j), partition_len: sub_len(j) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_places() {
        let mask: Vec<u32> = (0..8).collect();
        let parse = |t: &str, mask: &[u32]| parse_places_on(t, mask, 16).map(|p| p.list.places);
        assert_eq!(parse("{0,1},{2:2},{4:2:2}", &mask).unwrap(), vec![vec![0, 1], vec![2, 3], vec![4, 6]]);
        assert_eq!(parse("{0}:4:2", &mask).unwrap(), vec![vec![0], vec![2], vec![4], vec![6]]);
        assert_eq!(parse("{0:4,!1}", &mask).unwrap(), vec![vec![0, 2, 3]]);
        assert_eq!(parse("{3:3:-1}", &mask).unwrap(), vec![vec![1, 2, 3]]);
        assert_eq!(parse("{6,7}:3:-2", &mask).unwrap(), vec![vec![6, 7], vec![4, 5], vec![2, 3]]);
        assert_eq!(parse("{0},{1},{9}", &[1]).unwrap(), vec![vec![1]], "places are cut down to the mask");
        assert_eq!(parse("{0}:4:1,!{1}:2", &mask).unwrap(), vec![vec![0], vec![3]]);
        assert_eq!(parse("threads(2)", &mask).unwrap(), vec![vec![0], vec![1]]);
        assert_eq!(parse(" THREADS ", &[3]).unwrap(), vec![vec![3]]);
        for bad in ["", "{0", "{a}", "{0}:0", "bogus", "bogus(2)", "{0},,", "{7}", "{99999999999999999999}"] {
            assert!(parse(bad, &[0, 1]).is_err(), "{bad:?} accepted");
        }
        // A place name with a malformed count means the name's places, with a note (libomp
        // reads it so).
        for lenient in ["threads(0)", "threads(", "threads()", "threads(x)"] {
            let p = parse_places_on(lenient, &mask, 16).unwrap();
            assert_eq!(p.list.places.len(), 8, "{lenient:?}");
            assert!(p.note().unwrap().contains("using threads"), "{lenient:?}");
        }
    }

    /// CPU ids the machine does not have are counted and named (the first few), never
    /// listed one by one: huge lengths and intervals cost no more than the machine's CPUs.
    #[test]
    fn ids_beyond_the_machine() {
        let mask: Vec<u32> = (0..4).collect();
        let p = parse_places_on("{0:100000000}", &mask, 4).unwrap();
        assert_eq!(p.list.places, vec![vec![0, 1, 2, 3]]);
        assert_eq!((p.missing, p.missing_first.clone(), p.truncated), (100_000_000 - 4, vec![4], false));
        assert!(
            p.note().unwrap().contains("ignoring 99999996 CPU id(s) this machine does not have (4, ...)")
        );
        let p = parse_places_on("{0:4000000000}", &mask, 4).unwrap();
        assert_eq!((p.list.places.len(), p.missing), (1, 4_000_000_000 - 4));
        let p = parse_places_on("{0:2}:100000000:1", &mask, 4).unwrap();
        assert_eq!(p.list.places, vec![vec![0, 1], vec![1, 2], vec![2, 3], vec![3]]);
        assert_eq!(p.missing, 1 + 2 * (100_000_000 - 4), "{p:?}");
        let p = parse_places_on("{0}:100000000:0", &mask, 4).unwrap();
        assert_eq!(p.list.places, vec![vec![0]; 4096], "copies of one place, 4096 at most");
        assert!(p.truncated && p.note().unwrap().contains("beyond the first 4096"));
        let p = parse_places_on("{0},{0},{1},{1}", &mask, 2).unwrap();
        assert_eq!(p.list.places, vec![vec![0], vec![0], vec![1], vec![1]], "a CPU named twice");
        // From far above the machine, coming down (to id 1): counted, not walked one by one.
        let p = parse_places_on("{9223372036854775807:9223372036854775807:-1}", &mask, 4).unwrap();
        assert_eq!((p.list.places.clone(), p.missing), (vec![vec![1, 2, 3]], i64::MAX as u64 - 3));
        assert_eq!(p.missing_first, vec![i64::MAX]);
        let p = parse_places_on("{10000000000:10000000000:-1}", &mask, 4).unwrap();
        assert_eq!(p.list.places, vec![vec![1, 2, 3]]);
        let p = parse_places_on("{6:4:-2}", &mask, 4).unwrap();
        assert_eq!((p.list.places.clone(), p.missing), (vec![vec![0, 2]], 2));
        // Strides that overflow: no panic, and copies off the machine stop the walk.
        let p = parse_places_on("{1}:2:9223372036854775807", &mask, 4).unwrap();
        assert_eq!(p.list.places, vec![vec![1]]);
        let p = parse_places_on("{0},!{1}:9223372036854775807:9223372036854775807", &mask, 4).unwrap();
        assert_eq!(p.list.places, vec![vec![0]]);
        let p = parse_places_on("{1},{6},{9:2}", &mask, 8).unwrap();
        assert_eq!((p.list.places.clone(), p.missing, p.missing_first.clone()), (vec![vec![1]], 2, vec![9]));
        let p = parse_places_on("{0:4}", &mask, 4).unwrap();
        assert_eq!(p.note(), None, "nothing to say about ids the machine has");
        let p = parse_places_on("{3:100000000:-1}", &mask, 4).unwrap();
        assert_eq!((p.list.places.clone(), p.missing), (vec![vec![0, 1, 2, 3]], 100_000_000 - 4));
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-2,5\n"), vec![0, 1, 2, 5]);
    }

    #[test]
    fn close_and_spread() {
        let pl = |policy, n, tid| place_thread(policy, 0, 4, 1, n, tid);
        // close, T <= P: consecutive places from the primary's.
        let got: Vec<u32> = (0..3).map(|t| pl(ProcBind::Close, 3, t).place).collect();
        assert_eq!(got, vec![1, 2, 3]);
        // close, T > P: 8 threads on 4 places, two each, starting at the primary's place.
        let got: Vec<u32> = (0..8).map(|t| pl(ProcBind::Close, 8, t).place).collect();
        assert_eq!(got, vec![1, 1, 2, 2, 3, 3, 0, 0]);
        // 5 threads on 4 places: the first place gets the extra one.
        let got: Vec<u32> = (0..5).map(|t| pl(ProcBind::Close, 5, t).place).collect();
        assert_eq!(got, vec![1, 1, 2, 3, 0]);
        // spread, 2 threads on 4 places: subpartitions {0,1} and {2,3}; primary on 1.
        let a = pl(ProcBind::Spread, 2, 0);
        let b = pl(ProcBind::Spread, 2, 1);
        assert_eq!((a.place, a.partition_start, a.partition_len), (1, 0, 2));
        assert_eq!((b.place, b.partition_start, b.partition_len), (2, 2, 2));
        // primary: everyone on the primary's place.
        assert!((0..4).all(|t| pl(ProcBind::Primary, 4, t).place == 1));
        // spread with T > P: each thread's partition is its own place.
        let c = pl(ProcBind::Spread, 8, 3);
        assert_eq!((c.place, c.partition_start, c.partition_len), (2, 2, 1));
    }
}
