//! The ovni recorder: every thread writes its events into its own buffer; a full buffer is
//! handed to the process's writer thread, which appends it to
//! `$OVNI_TRACEDIR/loom.<host>/proc.<pid>/thread.<tid>/stream.obs`, while the thread goes on in
//! its second buffer (`stream`: the protocol). What is left is written when the thread ends
//! and when the process exits; `stream.json` next to it carries the metadata (published when
//! the first events reach the file: `sink`). The format is ovni's (see `format`), so ovni's
//! emulator reads these traces unchanged. A forked child records into a directory of its own
//! (`after_fork_in_child`).
//!
//! Recording an event is a clock read and a few stores into the thread's buffer: no lock, no
//! allocation, no system call (but a wake-up of the writer once per buffer). Each stream
//! publishes how far its buffer holds whole events (`committed`, Release after each event),
//! so a thread that calls `exit()` can write every other thread's events up to that point.

use std::cell::RefCell;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::{Arc, OnceLock};

use crate::format::{self, Event, Payload};
use crate::{MAX_GROUP, Recorder, State, code};

mod cpus;
mod siglock;
mod sink;
mod stream;
mod types;

use stream::{BUF_BYTES, Stream, Writer};
use types::{Types, created, declared_task_type, worksharing_type};

/// Room kept free at the end of a buffer: the largest event (a type label, jumbo) and the
/// flush's begin event.
const FLUSH_MARGIN: usize = 512;

/// The process-wide recorder state. A process forked by a traced one gets its own (see
/// `after_fork_in_child`): everything a thread of the parent may have held at the fork (the
/// writer's and the types' locks, streams half handed over) stays behind in the parent's.
pub struct Ovni {
    /// The process's directory, `loom.<host>/proc.<pid>` (made by `start`, or in a forked
    /// child when its first stream opens).
    dir: PathBuf,
    /// The loom's CPUs, and which thread appears on which (shared by the processes of the
    /// loom through a file, see `cpus`).
    cpus: cpus::Cpus,
    /// Writes the buffers the process's threads hand over, and lists their streams.
    writer: Writer,
    /// The task and worksharing types declared in the process's streams.
    types: Types,
    /// Set once the process closes its streams: no stream opens after (`open_stream`).
    closing: AtomicBool,
    /// Whether the process said that its trace was cut short (once, `sink`).
    warned: AtomicBool,
}

impl Ovni {
    /// The recorder state of process `pid`, whose streams go to `loom_dir/proc.<pid>`.
    fn new(loom_dir: &Path, pid: i32, cpus: cpus::Cpus) -> Ovni {
        Ovni {
            dir: loom_dir.join(format!("proc.{pid}")),
            cpus,
            writer: Writer::new(),
            types: Types::new(),
            closing: AtomicBool::new(false),
            warned: AtomicBool::new(false),
        }
    }
}

/// The process's recorder state: null until tracing starts, and in a forked child that
/// records nothing; else a leaked `Ovni`, never freed (a stream may point at its writer
/// until the process ends).
static OVNI: AtomicPtr<Ovni> = AtomicPtr::new(std::ptr::null_mut());

/// The process's recorder state, if it records.
#[inline]
fn ovni() -> Option<&'static Ovni> {
    // Acquire: pairs with the Release store that published it (its fields written before).
    let p = OVNI.load(Ordering::Acquire);
    // SAFETY: null or a leaked `Box<Ovni>`, never freed.
    unsafe { p.as_ref() }
}

/// Publishes `o` as the process's recorder state (leaked: see `OVNI`).
fn publish(o: Option<Ovni>) {
    let p = o.map_or(std::ptr::null_mut(), |o| Box::into_raw(Box::new(o)));
    // Release: see `ovni`.
    OVNI.store(p, Ordering::Release);
}

thread_local! {
    static MINE: RefCell<Option<Arc<Stream>>> = const { RefCell::new(None) };
    static CLOSE_AT_EXIT: CloseAtExit = const { CloseAtExit };
    /// The states a thread that forked was in, outermost first: its stream in the child
    /// begins inside them (`after_fork_in_child`).
    static FORKED_INSIDE: RefCell<Vec<State>> = const { RefCell::new(Vec::new()) };
}

// The same stream as `MINE`, for the hot path (one load, no borrow flag): null before the
// thread's first event, `NO_STREAM` once its stream is closed or could not be opened.
crate::thread_slot!(mod fast: *const Stream = "oxiomp_trace_stream";);

/// The hot path's mark for "this thread records nothing (any more)".
const NO_STREAM: *const Stream = std::ptr::dangling();

/// Closes the calling thread's stream when the thread ends.
struct CloseAtExit;

impl Drop for CloseAtExit {
    fn drop(&mut self) {
        fast::set(NO_STREAM);
        if let Ok(Some(s)) = MINE.try_with(|m| m.borrow_mut().take()) {
            write_later_now(&s);
            s.close(true, false);
            if let Some(o) = ovni() {
                // SAFETY: gettid has no preconditions.
                o.cpus.give_back(unsafe { libc::gettid() }, s.cpu.load(Ordering::Relaxed));
            }
        }
    }
}

/// CLOCK_MONOTONIC in nanoseconds (as libovni).
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the struct we pass; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The event clock: CLOCK_MONOTONIC nanoseconds, read through the time-stamp counter when
/// the CPU has an invariant one (about 10 ns instead of 25 here): `ns0 + ((tsc - tsc0) * mult
/// shifted right by 32)`, calibrated against CLOCK_MONOTONIC when tracing starts. Every stream
/// uses the same conversion, so clocks stay comparable across threads.
struct Clock {
    tsc0: u64,
    ns0: u64,
    /// ns per TSC tick, 32.32 fixed point (0: no usable TSC, use clock_gettime).
    mult: u64,
}

static CLOCK: OnceLock<Clock> = OnceLock::new();

fn calibrate() -> Clock {
    #[cfg(target_arch = "x86_64")]
    {
        let invariant = std::fs::read_to_string("/proc/cpuinfo")
            .map(|c| c.contains(" constant_tsc") && c.contains(" nonstop_tsc"))
            .unwrap_or(false);
        if invariant {
            // SAFETY: rdtsc has no preconditions on x86-64.
            let (t0, n0) = (unsafe { core::arch::x86_64::_rdtsc() }, monotonic_ns());
            while monotonic_ns() - n0 < 2_000_000 {
                std::hint::spin_loop();
            }
            // SAFETY: as above.
            let (t1, n1) = (unsafe { core::arch::x86_64::_rdtsc() }, monotonic_ns());
            if t1 > t0 {
                let mult = (((n1 - n0) as u128) << 32) / (t1 - t0) as u128;
                return Clock { tsc0: t0, ns0: n0, mult: mult as u64 };
            }
        }
    }
    Clock { tsc0: 0, ns0: 0, mult: 0 }
}

/// The current event clock, ns.
#[inline]
pub fn clock_ns() -> u64 {
    let c = CLOCK.get_or_init(calibrate);
    #[cfg(target_arch = "x86_64")]
    if c.mult != 0 {
        // SAFETY: rdtsc has no preconditions on x86-64.
        let t = unsafe { core::arch::x86_64::_rdtsc() };
        return c.ns0 + ((t.wrapping_sub(c.tsc0) as u128 * c.mult as u128) >> 32) as u64;
    }
    let _ = c;
    monotonic_ns()
}

/// Starts recording into `dir` (created if needed). Returns an error text if the directory
/// cannot be used; the caller warns once and the program runs untraced.
pub fn start(dir: &Path) -> Result<(), String> {
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    let loom_dir = dir.join(format!("loom.{}", hostname()));
    let proc_dir = loom_dir.join(format!("proc.{pid}"));
    std::fs::create_dir_all(&proc_dir).map_err(|e| format!("cannot create {}: {e}", proc_dir.display()))?;
    // After the loom's directory exists: the CPU claims are a file there.
    let o = Ovni::new(&loom_dir, pid, cpus::Cpus::of_machine(&loom_dir));
    let probe = o.dir.join(".oxiomp-probe");
    File::create(&probe).map_err(|e| format!("cannot write in {}: {e}", o.dir.display()))?;
    let _ = std::fs::remove_file(probe);
    CLOCK.get_or_init(calibrate);
    if ovni().is_some() {
        return Err("the recorder was started twice".into());
    }
    publish(Some(o));
    static RECORDER: OvniRecorder = OvniRecorder;
    if !crate::install_ovni(&RECORDER) {
        publish(None);
        return Err("another recorder is installed".into());
    }
    // SAFETY: registering a plain extern "C" function.
    unsafe { libc::atexit(close_all_at_exit) };
    install_signal_handlers();
    // SAFETY: registering a plain extern "C" function to run in fork children.
    unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
    Ok(())
}

/// A process forked by a traced one records into its own directory, `proc.<its pid>`, next
/// to its parent's, with an `Ovni` of its own: the parent's streams, writer and types stay the
/// parent's (they may be half-updated by threads the child does not have, and the parent
/// writes them). The thread that forked forgets its stream (never closed or freed here: its
/// file and buffers are the parent's) and the types it knew, and opens a new stream at its
/// next event, like a new thread. Nothing is made before then: a child that only execs
/// leaves no trace of its own.
///
/// The thread's new stream begins inside the states it forked in (the program's initial
/// thread is always in one, "attached"; a fork in a parallel region is inside its user code),
/// entered again after its `OHx`, so that their ends have their beginnings in the child's
/// trace; a thread that forks again before its next event passes the same states on. It is
/// the child's first thread: no thread of the child started it. A fork inside a task or a
/// worksharing construct would need the task's creation or the construct's beginning in the
/// child, which ovni's model has no way to say: that child records nothing (nor does one
/// forked while the thread was opening its stream, from a signal handler).
///
/// Runs in the child, which has one thread. It must run before any other fork handler that
/// records (the runtime's registers after the recorder starts, so runs after it); one the
/// program registered before the runtime started runs before it, and what that records goes
/// nowhere (see `Stream::foreign`).
extern "C" fn after_fork_in_child() {
    let Some(parent) = ovni() else { return };
    fast::set(std::ptr::null());
    types::forget_declared();
    crate::thread_started_by(-1);
    // The thread's stream, if it has one (an Err: it cannot be taken).
    let taken = MINE.try_with(|m| m.try_borrow_mut().map(|mut m| m.take()).map_err(|_| ()));
    let replay = match taken {
        Ok(Ok(Some(s))) => {
            let states = s.open_states();
            // The parent's: never closed or freed here.
            std::mem::forget(s);
            states.map(Some)
        }
        // No stream since the last fork, if any: the states to enter are still the same.
        Ok(Ok(None)) => Some(None),
        Ok(Err(())) | Err(_) => None,
    };
    let recorded = match replay {
        Some(Some(states)) => {
            FORKED_INSIDE.try_with(|f| f.try_borrow_mut().map(|mut f| *f = states).is_ok()).unwrap_or(false)
        }
        Some(None) => true,
        None => false,
    };
    if !recorded {
        publish(None);
        crate::disable();
        return;
    }
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    let loom_dir = parent.dir.parent().unwrap_or(&parent.dir);
    publish(Some(Ovni::new(loom_dir, pid, parent.cpus.for_child())));
}

/// The dispositions SIGINT and SIGTERM had before ours (restored before re-raising).
static mut PREVIOUS: [std::mem::MaybeUninit<libc::sigaction>; 2] = [std::mem::MaybeUninit::uninit(); 2];
const SIGNALS: [i32; 2] = [libc::SIGINT, libc::SIGTERM];

/// On SIGINT/SIGTERM: write what every stream holds, then let the signal end the process.
/// Only where the signal has its default disposition (ending the process): a program that
/// ignores it (a background job of a shell script ignores SIGINT; so does anything started
/// under `nohup`-like wrappers) or handles it itself keeps doing so, traced; if it exits, the
/// streams are closed at exit.
fn install_signal_handlers() {
    for (k, &sig) in SIGNALS.iter().enumerate() {
        // SAFETY: sigaction with a zeroed struct, our handler and an empty mask; PREVIOUS is
        // written here, once, before any handler can run, and only read by the handler. The
        // first call only reads the disposition (a null new action).
        unsafe {
            let prev = std::ptr::addr_of_mut!(PREVIOUS[k]) as *mut libc::sigaction;
            if libc::sigaction(sig, std::ptr::null(), prev) != 0 || (*prev).sa_sigaction != libc::SIG_DFL {
                continue;
            }
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            // Both signals wait while the handler runs (a second one would end the process
            // in the middle of writing the trace).
            libc::sigemptyset(&mut sa.sa_mask);
            for &other in &SIGNALS {
                libc::sigaddset(&mut sa.sa_mask, other);
            }
            libc::sigaction(sig, &sa, prev);
        }
    }
}

extern "C" fn on_signal(sig: i32) {
    close_all(true);
    if let Some(k) = SIGNALS.iter().position(|&s| s == sig) {
        // SAFETY: restoring the disposition saved at installation, then re-raising the
        // signal so that it takes effect (by default, the process ends with it).
        unsafe {
            let prev = std::ptr::addr_of!(PREVIOUS[k]) as *const libc::sigaction;
            libc::sigaction(sig, prev, std::ptr::null_mut());
            libc::raise(sig);
        }
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().replace(['/', '.'], "_"))
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

extern "C" fn close_all_at_exit() {
    close_all(false);
}

/// Closes every stream. From a signal handler (`in_signal`) a lock is waited for a bounded
/// time only, and not at all when the interrupted thread is taking it.
fn close_all(in_signal: bool) {
    let Some(o) = ovni() else { return };
    // Relaxed: the registry's lock orders it (this thread takes and gives back the lock below,
    // after the store; `open_stream` reads it with the lock held).
    o.closing.store(true, Ordering::Relaxed);
    let mut i = 0;
    loop {
        // The registry's lock is held only to take one stream: closing may wait for the
        // writer, which takes the registry's lock between streams.
        let s = if in_signal {
            siglock::lock_in_signal(&o.writer.streams, 1000)
        } else {
            siglock::lock(&o.writer.streams)
        }
        .and_then(|v| v.get(i).cloned());
        let Some(s) = s else { return };
        s.close(false, in_signal);
        // The thread records nothing more: its CPU is free for the threads of other processes
        // of the loom (its own end, if it comes, gives it back too, harmlessly).
        o.cpus.give_back(s.tid, s.cpu.load(Ordering::Relaxed));
        i += 1;
    }
}

/// The calling thread's stream, opened on its first event (null if it cannot be).
#[inline]
fn stream() -> *const Stream {
    let p = fast::get();
    // `NO_STREAM` is the smallest non-null address (the type's alignment), so one compare
    // sends both null and it to the slow path.
    if p as usize > NO_STREAM as usize { p } else { open_mine(p) }
}

#[cold]
fn open_mine(p: *const Stream) -> *const Stream {
    if p == NO_STREAM {
        return std::ptr::null();
    }
    let opened = MINE.try_with(|m| {
        let mut m = m.borrow_mut();
        if m.is_none() {
            *m = open_stream();
            // Registered (so that the thread's end closes the stream) while the thread is
            // not ending: its first event comes before.
            let _ = CLOSE_AT_EXIT.try_with(|_| {});
        }
        m.as_ref().map_or(std::ptr::null(), Arc::as_ptr)
    });
    let p = opened.unwrap_or(std::ptr::null());
    fast::set(if p.is_null() { NO_STREAM } else { p });
    p
}

#[cold]
fn open_stream() -> Option<Arc<Stream>> {
    let o = ovni()?;
    // Relaxed: a hint here (looked at again under the registry's lock below).
    if o.closing.load(Ordering::Relaxed) {
        return None;
    }
    // The writer starts with the process's first stream (in a forked child too).
    o.writer.start();
    // SAFETY: no preconditions.
    let (tid, pid) = unsafe { (libc::gettid(), libc::getpid()) };
    let dir = o.dir.join(format!("thread.{tid}"));
    let s = match std::fs::create_dir_all(&dir)
        .and_then(|()| Stream::create(&dir, &metadata(o, tid, pid), &o.writer))
    {
        Ok(s) => Arc::new(s),
        Err(e) => {
            // No stream rather than a stream without its start (a full disk): the thread
            // records nothing, and the process says so (once).
            let _ = std::fs::remove_dir_all(&dir);
            sink::cannot_open(&e);
            return None;
        }
    };
    // The thread's first event is in the stream before a closer can find the stream. It
    // begins on the CPU it is bound to if it can be shown there (see `cpus`), else on the
    // virtual CPU.
    let cpu = o.cpus.take(tid, -1);
    s.cpu.store(cpu, Ordering::Relaxed);
    append(&s, code::THREAD_EXECUTE, Payload::ThreadExecute { cpu, creator: crate::creator(), tag: 0 });
    s.begun();
    // The thread that forked begins inside the states it forked in.
    for st in FORKED_INSIDE.try_with(|f| f.take()).unwrap_or_default() {
        append_events(&s, [Small::state(st, true)], |s| s.entered(st));
    }
    let mut streams = siglock::lock(&o.writer.streams)?;
    // Once the process closes its streams (exit, a signal), a thread records nothing more:
    // a stream opened then (a region run by a later exit handler) would never be closed.
    if o.closing.load(Ordering::Relaxed) {
        drop(streams);
        // Nothing of it is written: no stream of a thread that recorded nothing.
        let _ = std::fs::remove_dir_all(&dir);
        return None;
    }
    streams.push(s.clone());
    Some(s)
}

fn metadata(o: &Ovni, tid: i32, pid: i32) -> String {
    format!(
        "{{\"version\": 3, \"ovni\": {{\"lib\": {{\"version\": \"1.14.0\", \"commit\": \"oxiomp\"}}, \
         \"part\": \"thread\", \"tid\": {tid}, \"pid\": {pid}, \"loom\": \"{}\", \"app_id\": 1, \
         \"require\": {{\"ovni\": \"1.1.0\", \"openmp\": \"1.2.1\"}}, \"loom_cpus\": [{}], \"finished\": 1}}}}\n",
        hostname(),
        o.cpus.loom_cpus_json()
    )
}

// `Stream::len` is only touched by the owning thread (Relaxed); `committed` publishes the
// bytes to other threads (Release, read with Acquire under the stream's lock).

/// An event of the hot path: its code and a payload of 0, 4 or 8 bytes, kept in a fixed
/// 8-byte array so that writing it is three fixed-size stores (no copy of a variable length).
#[derive(Clone, Copy)]
struct Small {
    /// The event's first four bytes: the payload size code and the MCV.
    head: [u8; 4],
    /// Payload bytes (0, 4 or 8).
    len: usize,
    payload: [u8; 8],
}

impl Small {
    /// An event without payload.
    #[inline(always)]
    const fn bare(mcv: [u8; 3]) -> Small {
        Small { head: [0, mcv[0], mcv[1], mcv[2]], len: 0, payload: [0; 8] }
    }

    /// Entering (`enter`) or leaving state `s`: its head read from a table (the state is often
    /// known only at run time: the ovni code is not computed per event).
    #[inline(always)]
    fn state(s: State, enter: bool) -> Small {
        Small { head: STATE_HEADS[s as usize][enter as usize], len: 0, payload: [0; 8] }
    }

    /// An event whose payload is one u32 (a task or type number).
    #[inline(always)]
    const fn one(mcv: [u8; 3], a: u32) -> Small {
        let a = a.to_le_bytes();
        Small { head: [3, mcv[0], mcv[1], mcv[2]], len: 4, payload: [a[0], a[1], a[2], a[3], 0, 0, 0, 0] }
    }

    /// An event whose payload is two u32s (a task's number and type).
    #[inline(always)]
    const fn two(mcv: [u8; 3], a: u32, b: u32) -> Small {
        let (a, b) = (a.to_le_bytes(), b.to_le_bytes());
        Small {
            head: [7, mcv[0], mcv[1], mcv[2]],
            len: 8,
            payload: [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]],
        }
    }
}

/// The heads of the state events (`Small::bare` of the state's ovni code), by Paraver value:
/// `[leave, enter]`.
static STATE_HEADS: [[[u8; 4]; 2]; State::ALL.len() + 1] = {
    let mut t = [[[0u8; 4]; 2]; State::ALL.len() + 1];
    let mut i = 0;
    while i < State::ALL.len() {
        let s = State::ALL[i];
        t[s as usize] = [Small::bare(s.ovni_code(false)).head, Small::bare(s.ovni_code(true)).head];
        i += 1;
    }
    t
};

/// Appends one small event, stamped now, without allocating: the hot path (for events that
/// leave the state stack alone).
#[inline]
fn append_small(s: &Stream, ev: Small) {
    let later = s.take_later();
    if let Some(len) = room(s) {
        write_events(s, len, later, [ev]);
    }
}

/// A creation noted for the owner's next event (`task_created_later`): task number, type,
/// allocation state (Paraver value).
type Later = (u32, u32, u8);

/// Writes a creation noted for later now, with its own clock read (before the stream
/// closes, or before another creation is noted).
fn write_later_now(s: &Stream) {
    if let Some(later) = s.take_later()
        && let Some(len) = room(s)
    {
        write_events(s, len, Some(later), []);
    }
}

/// Appends `N` small events stamped with one clock read (events that happen at one
/// instant: the end of a state and the beginning of the next), and changes the thread's state
/// stack with them (`stack`), so that a closer on another thread sees both or neither.
#[inline]
fn append_events<const N: usize>(s: &Stream, events: [Small; N], stack: impl FnOnce(&Stream)) {
    let later = s.take_later();
    let Some(len) = room(s) else { return };
    // The seqlock's write side (see `Stream::snapshot`): `committed` is `len` here (every event
    // is committed as it is written); BUSY with the stack's mark, then a Release fence so that
    // no store of the stack's is seen before it. The BUSY store is a Release store itself: a
    // closer that reads it takes the bytes up to `len` (written by earlier events) from it.
    s.committed.store(s.busy_word(len), Ordering::Release);
    std::sync::atomic::fence(Ordering::Release);
    stack(s);
    write_events(s, len, later, events);
}

/// Where the next small events go in the owner's buffer (flushed first if nearly full), or
/// None once the stream is closed.
#[inline]
fn room(s: &Stream) -> Option<usize> {
    if s.closed.load(Ordering::Relaxed) {
        return None;
    }
    let len = s.len.load(Ordering::Relaxed);
    Some(if len + FLUSH_MARGIN > BUF_BYTES { flush(s) } else { len })
}

/// Before a pause (`OHp`): flushes now if the resume that follows (`OHr`) would not fit
/// without a flush. A flush is recorded as work of the thread (`OF[`, `OF]`), and a paused
/// thread does none: ovni's thread model refuses it between the two.
fn room_for_resume(s: &Stream) {
    if !s.closed.load(Ordering::Relaxed) && s.len.load(Ordering::Relaxed) + 2 * FLUSH_MARGIN > BUF_BYTES {
        flush(s);
    }
}

/// Writes `N` small events at `len` (from `room`), after the `later` ones if any, stamped
/// with one clock read, and commits them.
#[inline]
fn write_events<const N: usize>(s: &Stream, len: usize, later: Option<Later>, events: [Small; N]) {
    const { assert!((N + 3) * format::MAX_EVENT + format::MAX_EVENT <= FLUSH_MARGIN) };
    let clock = clock_ns().to_le_bytes();
    let mut end = len;
    if let Some(l) = later {
        end = put_later(s, end, clock, l);
    }
    for ev in events {
        end = put(s, end, clock, ev);
    }
    s.commit(end);
}

/// Writes one small event at `end` (uncommitted), stamped `clock`; returns where it ends.
#[inline(always)]
fn put(s: &Stream, end: usize, clock: [u8; 8], ev: Small) -> usize {
    // SAFETY: only the owner writes, beyond `committed`, and the events fit (`room` left
    // FLUSH_MARGIN bytes, more than the events of one call, 3 later ones included, and the
    // flush's own). Each event's stores cover 20 bytes (<= MAX_EVENT) from its start; the
    // payload bytes past `ev.len` are overwritten by the next event, and nobody reads beyond
    // `committed`.
    unsafe {
        let p = s.cursor(end);
        std::ptr::write_unaligned(p as *mut [u8; 4], ev.head);
        std::ptr::write_unaligned(p.add(4) as *mut [u8; 8], clock);
        std::ptr::write_unaligned(p.add(12) as *mut [u8; 8], ev.payload);
    }
    end + 12 + ev.len
}

/// Writes the events of a creation noted for later (`Stream::take_later`) at `end`, stamped
/// `clock`; returns where they end. Out of line: the events' own call sites stay small.
#[inline(never)]
fn put_later(s: &Stream, end: usize, clock: [u8; 8], l: Later) -> usize {
    let (id, ty, alloc) = l;
    // `set_later` was given a state's value: the table has its heads.
    let [leave, enter] = STATE_HEADS[alloc as usize % STATE_HEADS.len()];
    let end = put(s, end, clock, Small { head: enter, len: 0, payload: [0; 8] });
    let end = put(s, end, clock, Small::two(code::TASK_CREATE, id, ty));
    put(s, end, clock, Small { head: leave, len: 0, payload: [0; 8] })
}

/// Appends one event, stamped now, to the owner's buffer, flushing it first if it is nearly
/// full (the clock is read after the flush, so clocks never go back).
fn append(s: &Stream, mcv: [u8; 3], payload: Payload) {
    if s.closed.load(Ordering::Relaxed) {
        return;
    }
    let need = match &payload {
        Payload::Jumbo(b) => 16 + b.len(),
        _ => format::MAX_EVENT,
    };
    let len = s.len.load(Ordering::Relaxed);
    let len = if len + need.max(FLUSH_MARGIN) > BUF_BYTES { flush(s) } else { len };
    let ev = Event { mcv, clock: clock_ns(), payload };
    // SAFETY: only the owner writes, and only beyond `committed`; the slice is in bounds
    // (flush left room for the largest event, jumbo labels included).
    let dst = unsafe { std::slice::from_raw_parts_mut(s.cursor(len), need) };
    let n = format::encode(&ev, dst);
    s.commit(len + n);
}

/// Hands the full buffer over to the writer, between flush events (`OF[` ends the full
/// buffer, `OF]` starts the next one); returns the new length.
#[cold]
fn flush(s: &Stream) -> usize {
    let head = Event { mcv: code::FLUSH_BEGIN, clock: clock_ns(), payload: Payload::None };
    let len = s.len.load(Ordering::Relaxed);
    // SAFETY: as in `append`: the owner writes beyond `committed`, within FLUSH_MARGIN.
    let dst = unsafe { std::slice::from_raw_parts_mut(s.cursor(len), format::MAX_EVENT) };
    let len = len + format::encode(&head, dst);
    let len = s.hand_over(len);
    // The end of the flush is the first event of the next buffer (the clock is read after
    // the hand-over, so clocks never go back).
    let tail = Event { mcv: code::FLUSH_END, clock: clock_ns(), payload: Payload::None };
    // SAFETY: as above, in the owner's emptied buffer.
    let dst = unsafe { std::slice::from_raw_parts_mut(s.cursor(len), format::MAX_EVENT) };
    let n = len + format::encode(&tail, dst);
    s.commit(n);
    n
}

/// The recorder behind the instrumentation calls when `OMP_OVNI=1`.
pub struct OvniRecorder;

/// The calling thread's stream, if it records.
#[inline]
fn my_stream<'a>() -> Option<&'a Stream> {
    // SAFETY: the thread's own stream stays alive (an Arc in MINE and in the registry).
    unsafe { stream().as_ref() }
}

/// What an event does to the thread's stack of open states and marks (`Stream`), applied in
/// `append_events`'s window.
#[derive(Clone, Copy)]
enum StackOp {
    None,
    Entered(State),
    TaskStarted(u32),
    WorksharingBegan(u32),
    Paused,
    Left,
}

impl StackOp {
    #[inline(always)]
    fn apply(self, st: &Stream) {
        match self {
            StackOp::None => {}
            StackOp::Entered(s) => st.entered(s),
            StackOp::TaskStarted(id) => st.task_started(id),
            StackOp::WorksharingBegan(ty) => st.worksharing_began(ty),
            StackOp::Paused => st.paused(),
            StackOp::Left => st.left(),
        }
    }
}

/// The ovni event of `e` and what it does to the stack (`AffinityChanged` is none: it is
/// recorded on its own, `affinity_changed`). Declares a type first if the event is its first
/// use in the process.
#[inline(always)]
fn ovni_event(st: &Stream, e: crate::Event) -> (Small, StackOp) {
    use crate::Event as E;
    match e {
        E::Enter(s) => (Small::state(s, true), StackOp::Entered(s)),
        E::Leave(s) => (Small::state(s, false), StackOp::Left),
        E::TaskCreated { id, site } => (created(st, id, site), StackOp::None),
        E::TaskExecute(id) => (Small::one(code::TASK_EXECUTE, id), StackOp::TaskStarted(id)),
        E::TaskEnd(id) => (Small::one(code::TASK_END, id), StackOp::Left),
        E::WorksharingBegin { kind, ident } => {
            let ty = worksharing_type(st, kind, ident, true);
            (Small::one(code::WORKSHARING_BEGIN, ty), StackOp::WorksharingBegan(ty))
        }
        E::WorksharingEnd(kind) => {
            (Small::one(code::WORKSHARING_END, worksharing_type(st, kind, 0, false)), StackOp::Left)
        }
        E::Pause => (Small::bare(code::THREAD_PAUSE), StackOp::Paused),
        E::Resume => (Small::bare(code::THREAD_RESUME), StackOp::Left),
        E::AffinityChanged => (Small::bare(code::AFFINITY_SET), StackOp::None),
        // `record` leaves tool and meet groups out (each always a group of its own).
        E::Tool(_) | E::Meet(_) => unreachable!("a tool or meet event reached the ovni writer"),
    }
}

/// Writes the first `N` of `events` (there are at least `N`) as one group: one clock read, and
/// the stack changed with them. One copy per group size, so that the events' writes are fixed
/// stores (the group sizes are few).
#[inline(always)]
fn write_group<const N: usize>(st: &Stream, events: &[crate::Event]) {
    let mut ops = [StackOp::None; N];
    let smalls: [Small; N] = std::array::from_fn(|i| {
        let (small, op) = ovni_event(st, events[i]);
        ops[i] = op;
        small
    });
    append_events(st, smalls, |st| ops.into_iter().for_each(|op| op.apply(st)));
}

/// Records entering state `s`.
#[inline(never)]
fn enter(s: State) {
    if let Some(st) = my_stream() {
        append_events(st, [Small::state(s, true)], |st| st.entered(s))
    }
}

/// Records leaving state `s`.
#[inline(never)]
fn leave(s: State) {
    if let Some(st) = my_stream() {
        append_events(st, [Small::state(s, false)], Stream::left)
    }
}

/// Records leaving state `a` and entering `b` at one instant.
#[inline(never)]
fn switch(a: State, b: State) {
    if let Some(st) = my_stream() {
        append_events(st, [Small::state(a, false), Small::state(b, true)], |st| {
            st.left();
            st.entered(b);
        })
    }
}

/// Records entering state `state` to run task `id`.
#[inline(never)]
fn task_begin(state: State, id: u32) {
    let Some(st) = my_stream() else { return };
    // A part of a task run inside its own previous part (an untied if(0) task, which its
    // creator runs inline, re-submits itself at a scheduling point and runs on): the task is
    // running already, and ovni's task model has a task run once at a time, so the part is
    // recorded as the rest of that run.
    if st.innermost_task() == Some(id) {
        return st.nested_part(id);
    }
    append_events(st, [Small::state(state, true), Small::one(code::TASK_EXECUTE, id)], |st| {
        st.entered(state);
        st.task_started(id);
    });
}

/// Records the end of task `id`'s run and leaving `state`.
#[inline(never)]
fn task_finish(id: u32, state: State) {
    let Some(st) = my_stream() else { return };
    if st.end_nested_part(id) {
        return;
    }
    append_events(st, [Small::one(code::TASK_END, id), Small::state(state, false)], Stream::left_two);
}

/// Records passing through state `pass` into `to` at one instant.
#[inline(never)]
fn pass_into(pass: State, to: State) {
    if let Some(st) = my_stream() {
        let events = [Small::state(pass, true), Small::state(pass, false), Small::state(to, true)];
        append_events(st, events, |st| st.entered(to));
    }
}

/// Records leaving `from` and passing through state `pass` at one instant.
#[inline(never)]
fn pass_out(from: State, pass: State) {
    if let Some(st) = my_stream() {
        let events = [Small::state(from, false), Small::state(pass, true), Small::state(pass, false)];
        append_events(st, events, Stream::left);
    }
}

/// Records leaving `inner` and then `outer`, which encloses it, at one instant.
#[inline(never)]
fn leave_two(inner: State, outer: State) {
    if let Some(st) = my_stream() {
        append_events(st, [Small::state(inner, false), Small::state(outer, false)], Stream::left_two);
    }
}

/// Records beginning a part of worksharing construct `w` (whose `ident_t` is `ident`) and
/// entering `state`, at one instant.
#[inline(never)]
fn worksharing_enter(w: crate::Worksharing, ident: usize, state: State) {
    let Some(st) = my_stream() else { return };
    let ty = worksharing_type(st, w, ident, true);
    append_events(st, [Small::one(code::WORKSHARING_BEGIN, ty), Small::state(state, true)], |st| {
        st.worksharing_began(ty);
        st.entered(state);
    });
}

/// Records leaving `state` and ending the part of worksharing construct `w`, at one instant.
#[inline(never)]
fn worksharing_leave(state: State, w: crate::Worksharing) {
    let Some(st) = my_stream() else { return };
    let ty = worksharing_type(st, w, 0, false);
    append_events(st, [Small::state(state, false), Small::one(code::WORKSHARING_END, ty)], Stream::left_two);
}

/// Records a group of any other shape (see `OvniRecorder::record`).
#[inline(never)]
fn record_group(events: &[crate::Event]) {
    use crate::Event as E;
    if let [E::AffinityChanged] = events {
        return affinity_changed();
    }
    let Some(st) = my_stream() else { return };
    if let [E::Pause] = events {
        room_for_resume(st);
    }
    match *events {
        [] => {}
        [_] => write_group::<1>(st, events),
        [_, _] => write_group::<2>(st, events),
        [_, _, _] => write_group::<3>(st, events),
        _ => write_group::<MAX_GROUP>(st, events),
    }
}

impl Recorder for OvniRecorder {
    #[inline(always)]
    fn record(&self, events: &[crate::Event]) {
        use crate::Event as E;
        // The most frequent groups are written by functions of their own, without going
        // through `ovni_event` (tracing's cost on short constructs is made of a few such
        // events).
        match events {
            [E::Enter(s)] => enter(*s),
            [E::Leave(s)] => leave(*s),
            [E::Leave(a), E::Enter(b)] => switch(*a, *b),
            [E::Enter(s), E::TaskExecute(id)] => task_begin(*s, *id),
            [E::TaskEnd(id), E::Leave(s)] => task_finish(*id, *s),
            [E::Leave(a), E::Leave(b)] => leave_two(*a, *b),
            [E::Enter(a), E::Leave(b), E::Enter(c)] if a == b => pass_into(*a, *c),
            [E::Leave(a), E::Enter(b), E::Leave(c)] if b == c => pass_out(*a, *b),
            [E::WorksharingBegin { kind, ident }, E::Enter(s)] => worksharing_enter(*kind, *ident, *s),
            [E::Leave(s), E::WorksharingEnd(kind)] => worksharing_leave(*s, *kind),
            [E::Tool(_)] | [E::Meet(_)] => {}
            _ => record_group(events),
        }
    }

    fn record_later(&self, events: &[crate::Event]) {
        use crate::Event as E;
        let [E::Enter(alloc), E::TaskCreated { id, site }, E::Leave(_)] = *events else {
            return self.record(events);
        };
        let Some(st) = my_stream() else { return };
        // At most one creation waits: an earlier one (a task allocated and not submitted yet,
        // with no event since) is written now, in order.
        write_later_now(st);
        // The type is declared now (its `POc` comes before any use of it, see `declare`).
        st.set_later(id, declared_task_type(st, site), alloc as u8);
    }

    fn task_number(&self) -> u32 {
        match my_stream() {
            Some(st) => st.next_task_number(crate::task_number_block),
            None => crate::next_task_number(),
        }
    }
}

/// Records where the calling thread now runs (`OAs`), if it changed. A thread that has not
/// recorded yet begins where it is bound then (`open_stream`): no stream is opened for this (a
/// child forked by a traced process, re-bound by the runtime's fork handler, that only execs,
/// leaves none). A closed stream says nothing more, and its claim is given back already.
fn affinity_changed() {
    let p = fast::get();
    if p.is_null() || p == NO_STREAM {
        return;
    }
    let (Some(o), Some(st)) = (ovni(), my_stream()) else { return };
    if st.closed.load(Ordering::Relaxed) {
        return;
    }
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    // Relaxed: owner only.
    let now = st.cpu.load(Ordering::Relaxed);
    let new = o.cpus.take(tid, now);
    if new != now {
        append_small(st, Small::one(code::AFFINITY_SET, new as u32));
        st.cpu.store(new, Ordering::Relaxed);
        o.cpus.give_back(tid, now);
    }
}
