//! Hang diagnosis: with `OXIOMP_HANG_SECONDS=N` a watch keeps what every thread does and
//! waits for (`runtime::debug::watch`, one more recorder of the instrument events), and a
//! watchdog thread reports the threads (`runtime::debug::hang`) when a barrier, taskwait,
//! taskgroup, lock, critical or ordered wait has lasted N seconds; `OXIOMP_HANG_SECONDS=0`
//! keeps the states without a watchdog. On `SIGQUIT`, where the program left its default
//! action, the same report is written from the signal handler (allocating nothing, through
//! write(2)), then the signal's default action ends the program as it would have.
//!
//! With `OXIOMP_CHECK=1` a report by the watchdog aborts the program; otherwise the program
//! goes on waiting (a slow program may still finish), and the next report comes only for a
//! wait that began after this one.

use std::ffi::c_int;
use std::fmt::{self, Write};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use oxiomp_instrument::{Event, Meet, Recorder, sync_kind};
use oxiomp_runtime::debug::hang::{self, Names, Reason};
use oxiomp_runtime::icv::{CheckMode, HangWatch};

use crate::Ident;
use crate::symbolize::Code;

/// Whether the states are kept (the watch is installed).
static KEPT: AtomicBool = AtomicBool::new(false);
/// Whether a report is being written (one at a time; a second asker skips its report).
static REPORTING: AtomicBool = AtomicBool::new(false);

struct Watcher;

impl Recorder for Watcher {
    fn record(&self, events: &[Event]) {
        for &e in events {
            match e {
                // A construct met: the program's call that reached it names its place when
                // its `ident_t` does not (gcc's code, clang's without `-g`).
                Event::Meet(m) => {
                    let code = crate::check::meet_caller();
                    let m = if m.code == 0 { Meet { code, ..m } } else { m };
                    oxiomp_runtime::debug::watch_events(&[Event::Meet(m)]);
                }
                e => oxiomp_runtime::debug::watch_events(&[e]),
            }
        }
    }
}

/// Starts the watch and its watchdog if `OXIOMP_HANG_SECONDS` asks for them, and the
/// `SIGQUIT` report where the program left the signal's default action.
pub(crate) fn start() {
    let g = &oxiomp_runtime::Runtime::get().settings().globals;
    if let Some(watch) = g.hang {
        static WATCHER: Watcher = Watcher;
        if oxiomp_instrument::install_watcher(&WATCHER) {
            // Relaxed: read by the reports, which only choose what to print by it.
            KEPT.store(true, Ordering::Relaxed);
            if let HangWatch::After(limit) = watch {
                let abort = g.check == CheckMode::Abort;
                if WATCHDOG.set((limit, abort)).is_ok() {
                    spawn_watchdog(limit, abort);
                    // SAFETY: registers a plain function pointer, run in the child of every
                    // fork (after the runtime's own handler: registered later).
                    unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
                }
            }
        }
    }
    install_sigquit();
}

/// The watchdog's limit and whether its report aborts, once it is started.
static WATCHDOG: OnceLock<(Duration, bool)> = OnceLock::new();

fn spawn_watchdog(limit: Duration, abort: bool) {
    let spawned =
        std::thread::Builder::new().name("oxiomp-hang".into()).spawn(move || watchdog(limit, abort));
    if let Err(e) = spawned {
        oxiomp_runtime::stderr_line(format_args!(
            "oxiomp: warning: OXIOMP_HANG_SECONDS: no watchdog thread ({e})"
        ));
    }
}

/// `pthread_atfork` child handler: the child has no watchdog thread (only the forking thread
/// goes on), and may hang on its own: it gets a watchdog of its own. The threads the parent
/// had are not in its reports (the runtime forgot them: they have no system thread). A report
/// the parent was writing is not the child's.
extern "C" fn after_fork_in_child() {
    // Relaxed: the only thread.
    REPORTING.store(false, Ordering::Relaxed);
    if let Some(&(limit, abort)) = WATCHDOG.get() {
        spawn_watchdog(limit, abort);
    }
}

/// Looks at the threads' waits every quarter of `limit` (from 10 ms to 1 s) and reports when
/// one has lasted `limit`. `SIGQUIT` is blocked on this thread: its report is written on
/// another, which waits for this one's report to end.
fn watchdog(limit: Duration, abort: bool) {
    // SAFETY: a signal set on the stack, filled before use; pthread_sigmask changes only this
    // thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGQUIT);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
    let limit_ns = limit.as_nanos().min(u64::MAX as u128) as u64;
    let period = (limit / 4).clamp(Duration::from_millis(10), Duration::from_secs(1));
    let mut reported = 0;
    loop {
        std::thread::sleep(period);
        let Some((gtid, latest)) = hang::overdue(limit_ns, reported) else { continue };
        reported = latest;
        let reason = Reason::Waited { gtid, limit_ms: limit.as_millis() as u64 };
        if write_report(reason, &Full) && abort {
            oxiomp_runtime::stderr_line(format_args!("oxiomp: hang: aborting (OXIOMP_CHECK=1)"));
            std::process::abort();
        }
    }
}

/// Writes a report to standard error unless one is being written; says whether it wrote.
fn write_report(reason: Reason, names: &dyn Names) -> bool {
    // Acquire/Release: one report at a time (its lines do not interleave with another's).
    if REPORTING.swap(true, Ordering::Acquire) {
        return false;
    }
    let mut sink = Stderr::new();
    // Relaxed: see `KEPT`.
    let _ = hang::report(reason, KEPT.load(Ordering::Relaxed), names, &mut sink);
    sink.flush();
    REPORTING.store(false, Ordering::Release);
    true
}

/// Installs the `SIGQUIT` report if the signal has its default action.
fn install_sigquit() {
    // SAFETY: sigaction with a null new action only reads the current one into `old`, a
    // zeroed `sigaction` (a valid value of the plain C struct).
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::sigaction(libc::SIGQUIT, std::ptr::null(), &mut old) } != 0
        || old.sa_sigaction != libc::SIG_DFL
    {
        return;
    }
    // SAFETY: zeroed, then filled in: a valid `sigaction`.
    let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
    act.sa_sigaction = on_sigquit as extern "C" fn(c_int) as usize;
    act.sa_flags = libc::SA_RESTART;
    // SAFETY: `act.sa_mask` is ours to fill; the handler is an `extern "C" fn(c_int)` that does
    // only async-signal-safe work (see `on_sigquit`).
    unsafe {
        libc::sigemptyset(&mut act.sa_mask);
        libc::sigaction(libc::SIGQUIT, &act, std::ptr::null_mut());
    }
}

/// The `SIGQUIT` handler: the report (nothing allocated, no lock taken: atomics read, text
/// formatted into a buffer on the stack, written with write(2)), then the default action.
/// While the watchdog writes a report (on its own thread, where `SIGQUIT` is blocked), this
/// one waits for it to end, ten seconds at most.
extern "C" fn on_sigquit(_sig: c_int) {
    let pause = libc::timespec { tv_sec: 0, tv_nsec: 10_000_000 };
    for _ in 0..1000 {
        if write_report(Reason::Signal, &Plain) {
            break;
        }
        // SAFETY: nanosleep is async-signal-safe and reads `pause`, which outlives the call.
        unsafe { libc::nanosleep(&pause, std::ptr::null_mut()) };
    }
    // SAFETY: sigaction and raise are async-signal-safe; the default action restored, the
    // raised signal (blocked while this handler runs) ends the program when it returns.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut act.sa_mask);
        libc::sigaction(libc::SIGQUIT, &act, std::ptr::null_mut());
        libc::raise(libc::SIGQUIT);
    }
}

/// Lines to standard error through a buffer on the stack, written with write(2) at each line's
/// end (and when full).
struct Stderr {
    buf: [u8; 1024],
    len: usize,
}

impl Stderr {
    fn new() -> Stderr {
        Stderr { buf: [0; 1024], len: 0 }
    }

    fn flush(&mut self) {
        let mut done = 0;
        while done < self.len {
            // SAFETY: writes initialised bytes of `buf` to fd 2.
            let n = unsafe { libc::write(2, self.buf[done..].as_ptr().cast(), self.len - done) };
            if n <= 0 {
                break;
            }
            done += n as usize;
        }
        self.len = 0;
    }
}

impl Write for Stderr {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for &b in s.as_bytes() {
            if self.len == self.buf.len() {
                self.flush();
            }
            self.buf[self.len] = b;
            self.len += 1;
            if b == b'\n' {
                self.flush();
            }
        }
        Ok(())
    }
}

/// What a barrier is, in words: by its `ident_t`'s flags, or by its kind.
fn barrier(ident: u64, kind: u32) -> &'static str {
    if let Some(w) = Ident::barrier_words(ident as *const Ident) {
        return w;
    }
    match kind {
        sync_kind::BARRIER_IMPLICIT_PARALLEL => "the implicit barrier at the end of the region",
        sync_kind::REDUCTION => "the barrier of a reduction",
        sync_kind::BARRIER_TEAMS => "the barrier of a teams region",
        _ => "a barrier",
    }
}

/// The names a signal handler can give: the `ident_t`'s location, or the code address.
struct Plain;

impl Names for Plain {
    fn place(&self, out: &mut dyn Write, ident: u64, code: usize) -> fmt::Result {
        if Ident::write_location(ident as *const Ident, out)? {
            return Ok(());
        }
        match code {
            0 => write!(out, "an unknown place (build with -g for file and line)"),
            c => write!(out, "code address {c:#x}"),
        }
    }

    fn barrier(&self, ident: u64, kind: u32) -> &'static str {
        barrier(ident, kind)
    }

    fn call_site(&self, out: &mut dyn Write, code: u64) -> fmt::Result {
        write!(out, "code address {code:#x}")
    }

    fn known(&self, ident: u64) -> bool {
        Ident::names_location(ident as *const Ident)
    }
}

/// The names the watchdog gives: the `ident_t`'s location, or the code's symbol and object.
struct Full;

impl Names for Full {
    fn place(&self, out: &mut dyn Write, ident: u64, code: usize) -> fmt::Result {
        if Ident::write_location(ident as *const Ident, out)? {
            return Ok(());
        }
        match crate::symbolize::code_name(code, Code::Entry) {
            Some(name) => out.write_str(&name),
            None => Plain.place(out, 0, code),
        }
    }

    fn barrier(&self, ident: u64, kind: u32) -> &'static str {
        Plain.barrier(ident, kind)
    }

    fn call_site(&self, out: &mut dyn Write, code: u64) -> fmt::Result {
        match crate::symbolize::code_name(code as usize, Code::Return) {
            Some(name) => out.write_str(&name),
            None => Plain.call_site(out, code),
        }
    }

    fn known(&self, ident: u64) -> bool {
        Plain.known(ident)
    }

    fn variable(&self, out: &mut dyn Write, addr: u64) -> fmt::Result {
        match crate::symbolize::data_name(addr as usize) {
            Some(name) => write!(out, " ({})", variable_words(&name)),
            None => Ok(()),
        }
    }
}

/// A variable's symbol as the report shows it: a critical section's lock (clang's
/// `.gomp_critical_user_NAME.var`, gcc's `.gomp_critical_user_NAME`) by its name, anything
/// else by its symbol.
fn variable_words(symbol: &str) -> String {
    match symbol.strip_prefix(".gomp_critical_user_") {
        Some(rest) => match rest.strip_suffix(".var").unwrap_or(rest) {
            "" => "unnamed".to_string(),
            name => format!("named {name}"),
        },
        None => format!("`{symbol}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::variable_words;

    #[test]
    fn a_critical_sections_lock_is_named_by_its_name() {
        assert_eq!(variable_words(".gomp_critical_user_alpha.var"), "named alpha");
        assert_eq!(variable_words(".gomp_critical_user_alpha"), "named alpha");
        assert_eq!(variable_words(".gomp_critical_user_.var"), "unnamed");
        assert_eq!(variable_words("locks+0x10"), "`locks+0x10`");
    }
}
