//! Thread affinity display (OpenMP 5.2 §3.15, §6.x): the affinity-format-var ICV
//! (`OMP_AFFINITY_FORMAT`, `omp_set_affinity_format`), its expansion for the calling thread
//! (`omp_capture_affinity`, `omp_display_affinity`), and `OMP_DISPLAY_AFFINITY`, which has each
//! thread print the line when it starts a region whose line differs from the one it printed
//! last.
//!
//! A field is `%[[[0].]size]type`: `type` a letter or a `{long_name}`; without `.` the value
//! is left-justified in `size` columns, with `.` right-justified, with `0.` right-justified and
//! padded with zeros. `%%` is a percent sign. An unknown field type prints `undefined` (as
//! libomp does); a `%` that starts no field stays as it is.

use crate::sync::fork_lock::ForkLock;

use crate::query as q;
use crate::sync::atomic::{AtomicBool, Ordering};

/// `OMP_DISPLAY_AFFINITY`, set once at start-up.
static DISPLAY: AtomicBool = AtomicBool::new(false);

pub(crate) fn set_display(on: bool) {
    // Relaxed: set before any region starts (in the runtime's initialisation, which every
    // thread's first entry goes through).
    DISPLAY.store(on, Ordering::Relaxed);
}

/// Whether threads print their line as they start regions (the one branch the fork path pays).
#[inline]
pub(crate) fn displaying() -> bool {
    // Relaxed: see `set_display`.
    DISPLAY.load(Ordering::Relaxed)
}

/// affinity-format-var when the environment does not set it.
/// libomp's, so that what reads its lines reads ours.
pub const DEFAULT_FORMAT: &str = "OMP: pid %P tid %i thread %n bound to OS proc set {%A}";

/// affinity-format-var (device-wide); None until set (then the environment's or the default).
pub(crate) static FORMAT: ForkLock<Option<String>> = ForkLock::new(None);

/// The fields: short name, long name.
const FIELDS: &[(char, &str)] = &[
    ('t', "team_num"),
    ('T', "num_teams"),
    ('L', "nesting_level"),
    ('n', "thread_num"),
    ('N', "num_threads"),
    ('a', "ancestor_tnum"),
    ('H', "host"),
    ('P', "process_id"),
    ('i', "native_thread_id"),
    ('A', "thread_affinity"),
];

/// affinity-format-var.
pub fn get() -> String {
    if let Some(f) = FORMAT.lock().as_ref() {
        return f.clone();
    }
    // The environment's value, read without holding the lock (starting the runtime takes
    // others).
    let env = crate::Runtime::get().settings().globals.affinity_format.clone();
    FORMAT.lock().get_or_insert(env).clone()
}

/// `omp_set_affinity_format`.
pub fn set(format: &str) {
    if let Some(w) = width_warning(format) {
        crate::registry::warn(&format!("oxiomp: warning: omp_set_affinity_format: {w}"));
    }
    *FORMAT.lock() = Some(format.to_string());
}

/// The calling thread's line: `format` (affinity-format-var if empty) with its fields filled.
pub fn capture(format: &str) -> String {
    let format = if format.is_empty() { get() } else { format.to_string() };
    expand(&format, &value)
}

/// Prints the calling thread's line on stdout (the program's stream, as libomp does).
pub fn display(format: &str) {
    print_line(capture(format));
}

/// Writes `line` and a newline through C's `stdout`, the program's own stream: in order with
/// its `printf` output (Rust's stdout has a buffer of its own).
fn print_line(line: String) {
    unsafe extern "C" {
        static mut stdout: *mut libc::FILE;
    }
    let Ok(c) = std::ffi::CString::new(line + "\n") else { return };
    // SAFETY: `stdout` is the C library's stream (initialised before any code of the program
    // runs); fputs takes a NUL-terminated string and locks the stream itself.
    unsafe { libc::fputs(c.as_ptr(), stdout) };
}

/// `OMP_DISPLAY_AFFINITY`: called by each member of a team as its implicit task starts; prints
/// the thread's line when what the line can show has changed since the thread last printed one
/// (`last` holds what it was then): its level, team size and thread number, its CPU set, or
/// the placement of its team (binding policy, the primary thread's place, the partition). A
/// change of the team's placement makes every member print, as libomp shows the whole team
/// when any place changes; a new affinity format alone prints nothing.
#[cold]
pub(crate) fn display_if_changed(last: &mut Option<String>) {
    let th = crate::Thread::current();
    let team = th.team();
    let key = format!(
        "{} {} {} {:?} {}",
        team.level,
        team.nthreads,
        th.tid(),
        team.placement_key(),
        cpu_list(&crate::places::process_mask())
    );
    if last.as_deref() != Some(key.as_str()) {
        *last = Some(key);
        print_line(capture(""));
    }
}

/// The value of field `name` (long name) for the calling thread.
fn value(name: &str) -> String {
    match name {
        "team_num" => q::team_num().to_string(),
        "num_teams" => q::num_teams().to_string(),
        "nesting_level" => q::level().to_string(),
        "thread_num" => q::thread_num().to_string(),
        "num_threads" => q::num_threads().to_string(),
        "ancestor_tnum" => q::ancestor_thread_num(q::level() - 1).to_string(),
        "host" => host_name(),
        "process_id" => std::process::id().to_string(),
        // SAFETY: gettid has no preconditions.
        "native_thread_id" => unsafe { libc::gettid() }.to_string(),
        // The calling thread's own mask (sched_getaffinity of the caller).
        "thread_affinity" => cpu_list(&crate::places::process_mask()),
        _ => UNDEFINED.to_string(),
    }
}

fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is writable for its length; gethostname NUL-terminates within it
    // when the name fits (the last byte stays 0 otherwise).
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len() - 1) } == 0;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(0);
    if ok { String::from_utf8_lossy(&buf[..end]).into_owned() } else { String::new() }
}

/// CPUs as a list with ranges: `0-3,6,8-9`.
pub(crate) fn cpu_list(cpus: &[u32]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        // Runs of three or more as a range, shorter ones listed (as libomp writes CPU sets).
        out += &match j - i {
            0 => cpus[i].to_string(),
            1 => format!("{},{}", cpus[i], cpus[j]),
            _ => format!("{}-{}", cpus[i], cpus[j]),
        };
        i = j + 1;
    }
    out
}

/// Expands the fields of `format` with `value` (by long name).
fn expand(format: &str, value: &dyn Fn(&str) -> String) -> String {
    let mut out = String::new();
    walk(format, &mut |piece| match piece {
        Piece::Text(t) => out += t,
        Piece::Field(f) => out += &f.apply(&value(f.name)),
    });
    out
}

/// A piece of a format: plain text, or a field.
enum Piece<'a> {
    Text(&'a str),
    Field(&'a Field),
}

/// Goes through `format`, piece by piece (`%%` is the text `%`).
fn walk(format: &str, piece: &mut dyn FnMut(Piece)) {
    let mut rest = format;
    while let Some(p) = rest.find('%') {
        piece(Piece::Text(&rest[..p]));
        let spec = &rest[p + 1..];
        if let Some(after) = spec.strip_prefix('%') {
            piece(Piece::Text("%"));
            rest = after;
            continue;
        }
        match parse_field(spec) {
            Some((f, len)) => {
                piece(Piece::Field(&f));
                rest = &spec[len..];
            }
            None => {
                piece(Piece::Text("%"));
                rest = spec;
            }
        }
    }
    piece(Piece::Text(rest));
}

/// The widest a field is padded: a wider width is cut down to it (libomp pads to any width;
/// a width in the millions would make every line that long).
pub const MAX_WIDTH: usize = 256;

/// The widest field width of `format` above [`MAX_WIDTH`], if any (for a warning).
pub fn too_wide(format: &str) -> Option<usize> {
    let mut widest = 0;
    walk(format, &mut |piece| {
        if let Piece::Field(f) = piece {
            widest = widest.max(f.width);
        }
    });
    (widest > MAX_WIDTH).then_some(widest)
}

/// The warning for a format with fields wider than [`MAX_WIDTH`], if it has any.
pub fn width_warning(format: &str) -> Option<String> {
    too_wide(format).map(|w| {
        format!(
            "a field is {w} characters wide; fields are padded to at most {MAX_WIDTH}, as wide as oxiomp pads"
        )
    })
}

/// The name (and value) of an unknown field type.
const UNDEFINED: &str = "undefined";

struct Field {
    name: &'static str,
    zero: bool,
    right: bool,
    width: usize,
}

impl Field {
    fn apply(&self, v: &str) -> String {
        let w = self.width.min(MAX_WIDTH);
        match (self.right, self.zero) {
            (false, _) => format!("{v:<w$}"),
            (true, false) => format!("{v:>w$}"),
            // Zeros go after a sign.
            (true, true) => match v.strip_prefix('-') {
                Some(digits) => format!("-{digits:0>0$}", w.saturating_sub(1)),
                None => format!("{v:0>w$}"),
            },
        }
    }
}

/// Parses `[[0].][size]type` at the start of `s`: the field and the bytes it takes.
fn parse_field(s: &str) -> Option<(Field, usize)> {
    let b = s.as_bytes();
    let mut i = 0;
    let zero = b.starts_with(b"0.");
    if zero {
        i = 2;
    }
    let right = zero || b.get(i) == Some(&b'.');
    if right && !zero {
        i += 1;
    }
    let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    // As written (the padding is capped: `Field::apply`); too many digits for a number: the
    // largest.
    let width = if digits > 0 { s[i..i + digits].parse::<usize>().unwrap_or(usize::MAX) } else { 0 };
    i += digits;
    let name = if b.get(i) == Some(&b'{') {
        let close = s[i..].find('}')?;
        let long = &s[i + 1..i + close];
        i += close + 1;
        FIELDS.iter().find(|&&(_, n)| n == long).map_or(UNDEFINED, |f| f.1)
    } else {
        let c = s[i..].chars().next()?;
        i += c.len_utf8();
        FIELDS.iter().find(|&&(k, _)| k == c).map_or(UNDEFINED, |f| f.1)
    };
    Some((Field { name, zero, right, width }, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(name: &str) -> String {
        match name {
            "thread_num" => "3".into(),
            "ancestor_tnum" => "-1".into(),
            "thread_affinity" => "0-1".into(),
            "undefined" => "undefined".into(),
            other => other.to_uppercase(),
        }
    }

    #[test]
    fn fields_and_justification() {
        let x = |f: &str| expand(f, &fake);
        assert_eq!(x("n=%n"), "n=3");
        assert_eq!(x("[%5n][%.5n][%0.5n][%05n]"), "[3    ][    3][00003][3    ]");
        assert_eq!(x("%{thread_num}/%{thread_affinity}"), "3/0-1");
        assert_eq!(x("%0.4a"), "-001");
        assert_eq!(x("%4000000000n").len(), MAX_WIDTH, "widths are capped");
        assert_eq!(x("%99999999999999999999999n").len(), MAX_WIDTH);
        assert_eq!(too_wide("%4000000000n %5n"), Some(4_000_000_000));
        assert_eq!(too_wide("%256n %.3{thread_num}"), None);
        assert!(width_warning("%0.300n").unwrap().contains("300 characters wide"));
        assert_eq!(x("100%% %q %{nope} %{open %"), "100% undefined undefined %{open %");
        assert_eq!(x("%L %N %t %T"), "NESTING_LEVEL NUM_THREADS TEAM_NUM NUM_TEAMS");
    }

    #[test]
    fn cpu_ranges() {
        assert_eq!(cpu_list(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8,9", "runs of two are listed");
        assert_eq!(cpu_list(&[4, 5, 6]), "4-6");
        assert_eq!(cpu_list(&[5]), "5");
        assert_eq!(cpu_list(&[]), "");
    }
}
