//! One thread's stream: two buffers, one filled by the thread, the other written to the file
//! by the process's writer thread, so that a thread that records never waits for the kernel's
//! copy of its events (unless the writer falls a whole buffer behind: then the thread writes
//! the older buffer itself, between its flush events, and the trace shows the wait).
//!
//! The protocol, for one stream:
//! - The owner fills `bufs[active]` from `len`; each whole event is published by `committed`
//!   (Release), so that a closer on another thread (`exit()`, a signal) can write it.
//! - When that buffer is nearly full the owner *hands it over* under `file`'s lock: if the
//!   other buffer is still `pending` (not yet written) it writes it first, then marks its own
//!   full buffer pending, swaps `active` and empties `len`/`committed`, and wakes the writer.
//!   So at most one buffer is pending, and it always holds older events than the active one.
//! - Whoever writes the pending buffer (the writer, the owner at its next hand-over, or the
//!   closer) does it under `file`'s lock and clears `pending` before unlocking.
//! - Closing writes the pending buffer, then the active one up to `committed`.
//!
//! Everything but the owner's appends happens under `file`'s lock, so only `committed` needs
//! an ordering of its own.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::clock_ns;
use crate::State;
use crate::format::{self, Event, Payload};

/// Bytes of each of a thread's two buffers.
pub(super) const BUF_BYTES: usize = 1 << 20;
/// Alignment of the buffers, and the unit of what is written with direct I/O: a page, what
/// direct I/O asks of a buffer, a length and a file offset on every Linux file system.
const BLOCK: usize = 4096;
/// States tracked per stream for closing.
pub(super) const MAX_DEPTH: usize = 64;

/// A zeroed, page-aligned buffer of `BUF_BYTES`, owned.
pub(super) struct Buffer(std::ptr::NonNull<u8>);

impl Buffer {
    fn layout() -> std::alloc::Layout {
        // Both are powers of two and the size a multiple of the alignment.
        std::alloc::Layout::from_size_align(BUF_BYTES, BLOCK).expect("buffer layout")
    }

    fn new() -> Option<Buffer> {
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(Self::layout()) };
        std::ptr::NonNull::new(p).map(Buffer)
    }

    pub(super) fn as_ptr(&self) -> *mut u8 {
        self.0.as_ptr()
    }

    /// The first `n` bytes. The caller makes sure nobody writes them meanwhile (see the
    /// module's protocol).
    fn head(&self, n: usize) -> &[u8] {
        // SAFETY: the allocation has BUF_BYTES initialised (zeroed, then written) bytes, and
        // n is clamped to it.
        unsafe { std::slice::from_raw_parts(self.as_ptr(), n.min(BUF_BYTES)) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.as_ptr(), Self::layout()) }
    }
}

/// One thread's stream.
pub(super) struct Stream {
    bufs: [Buffer; 2],
    /// The buffer the owner fills (0 or 1), and its address for the hot path. Changed by the
    /// owner under `file`'s lock.
    active: AtomicUsize,
    cur: AtomicPtr<u8>,
    /// Bytes in the active buffer (owner only), and how many of them are whole events.
    pub(super) len: AtomicUsize,
    pub(super) committed: AtomicUsize,
    /// Bytes of the other buffer not yet written (0: none). Under `file`'s lock.
    pending: AtomicUsize,
    /// The file (None once the stream is closed), and the thread id of whoever holds its lock
    /// (0: nobody), so that a signal handler never waits for the thread it interrupted.
    file: Mutex<Option<File>>,
    holder: AtomicI32,
    /// The file is open for direct I/O (`O_DIRECT`): writes go from our buffers to the
    /// device, without a copy into the page cache, in whole blocks from block-aligned
    /// offsets. Under `file`'s lock.
    direct: AtomicBool,
    /// Closed: no more writes, not even by the owner.
    pub(super) closed: AtomicBool,
    /// The states the thread is in (Paraver values, innermost first), so that a stream closed
    /// while its thread is still inside some (a worker waiting for work at exit) ends them.
    pub(super) open: [AtomicU8; MAX_DEPTH],
    pub(super) depth: AtomicUsize,
}

// SAFETY: the buffers are written only by the owning thread: the active one beyond
// `committed`, the other one never while `pending` is set. Other threads read the active one
// only below `committed` (Acquire, after the owner's Release) and the pending one, both under
// `file`'s lock, which the owner holds whenever it changes which buffer is which.
unsafe impl Sync for Stream {}
// SAFETY: the buffers are plain owned memory; everything else is Send.
unsafe impl Send for Stream {}

/// `file`'s lock, with its holder recorded.
pub(super) struct FileLock<'a> {
    guard: MutexGuard<'a, Option<File>>,
    holder: &'a AtomicI32,
}

impl Drop for FileLock<'_> {
    fn drop(&mut self) {
        // Relaxed: a hint for signal handlers (see `lock_in_signal`).
        self.holder.store(0, Ordering::Relaxed);
    }
}

fn my_tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

impl Stream {
    /// A stream writing to the new file at `path` (with direct I/O where the file system
    /// takes it); its first bytes are the stream header.
    pub(super) fn create(path: &Path) -> Option<Stream> {
        Self::create_with(path, true)
    }

    fn create_with(path: &Path, try_direct: bool) -> Option<Stream> {
        let direct = match try_direct {
            true => OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .custom_flags(libc::O_DIRECT)
                .open(path)
                .ok(),
            false => None,
        };
        let (file, direct) = match direct {
            Some(f) => (f, true),
            None => (File::create(path).ok()?, false),
        };
        let bufs = [Buffer::new()?, Buffer::new()?];
        let head = format::STREAM_HEADER.len();
        // SAFETY: the buffer is ours alone yet and holds more than the header.
        unsafe { std::ptr::copy_nonoverlapping(format::STREAM_HEADER.as_ptr(), bufs[0].as_ptr(), head) };
        let cur = AtomicPtr::new(bufs[0].as_ptr());
        Some(Stream {
            bufs,
            active: AtomicUsize::new(0),
            cur,
            len: AtomicUsize::new(head),
            committed: AtomicUsize::new(head),
            pending: AtomicUsize::new(0),
            file: Mutex::new(Some(file)),
            holder: AtomicI32::new(0),
            direct: AtomicBool::new(direct),
            closed: AtomicBool::new(false),
            open: std::array::from_fn(|_| AtomicU8::new(0)),
            depth: AtomicUsize::new(0),
        })
    }

    /// Where the owner writes its next event (`len` bytes into the active buffer).
    #[inline]
    pub(super) fn cursor(&self, len: usize) -> *mut u8 {
        // Relaxed: only the owner changes `cur`, and this is the owner.
        // SAFETY (of the add): callers keep len + event size within BUF_BYTES.
        unsafe { self.cur.load(Ordering::Relaxed).add(len) }
    }

    /// Takes `file`'s lock (waiting for it).
    pub(super) fn lock(&self) -> Option<FileLock<'_>> {
        let guard = self.file.lock().ok()?;
        self.holder.store(my_tid(), Ordering::Relaxed);
        Some(FileLock { guard, holder: &self.holder })
    }

    /// Takes `file`'s lock from a signal handler: waits at most about two seconds for a
    /// writer on another thread, and not at all if the interrupted thread is the holder.
    pub(super) fn lock_in_signal(&self) -> Option<FileLock<'_>> {
        let me = my_tid();
        for _ in 0..2000 {
            if let Ok(guard) = self.file.try_lock() {
                self.holder.store(me, Ordering::Relaxed);
                return Some(FileLock { guard, holder: &self.holder });
            }
            if self.holder.load(Ordering::Relaxed) == me {
                return None;
            }
            pause_1ms();
        }
        None
    }

    /// Writes `bytes` to the file (under the lock `f`). A file system that refuses direct
    /// I/O at the first write gets the bytes through the page cache from then on.
    fn write_out(&self, f: &mut FileLock<'_>, mut bytes: &[u8]) {
        let Some(file) = f.guard.as_mut() else { return };
        while !bytes.is_empty() {
            match file.write(bytes) {
                Ok(0) => return,
                Ok(n) => bytes = &bytes[n..],
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) && self.direct.load(Ordering::Relaxed) => {
                    self.buffered(file)
                }
                // Nothing more can be done (a full disk): the trace ends early; `check`
                // says where.
                Err(_) => return,
            }
        }
    }

    /// Turns direct I/O off (under `file`'s lock): for a last write that is not whole blocks.
    fn buffered(&self, file: &File) {
        if self.direct.swap(false, Ordering::Relaxed) {
            use std::os::fd::AsRawFd;
            let fd = file.as_raw_fd();
            // SAFETY: fcntl on our own open descriptor; both calls are async-signal-safe.
            unsafe { libc::fcntl(fd, libc::F_SETFL, libc::fcntl(fd, libc::F_GETFL) & !libc::O_DIRECT) };
        }
    }

    /// Writes the pending buffer, if any (under the lock `f`).
    fn write_pending(&self, f: &mut FileLock<'_>) {
        let p = self.pending.load(Ordering::Relaxed);
        if p != 0 {
            let other = 1 - self.active.load(Ordering::Relaxed);
            self.write_out(f, self.bufs[other].head(p));
            self.pending.store(0, Ordering::Relaxed);
        }
    }

    /// The owner hands over its active buffer, `len` bytes of whole events, and continues in
    /// the other one (see the module's protocol); returns the bytes the other one starts
    /// with. With direct I/O only whole blocks are handed over: the rest (less than a block)
    /// moves to the start of the other buffer, so every write is whole blocks at a
    /// block-aligned offset (the stream header is the first buffer's start for this reason).
    pub(super) fn hand_over(&self, len: usize) -> usize {
        let mut rest = 0;
        if let Some(mut f) = self.lock() {
            // The writer is a whole buffer behind: write the older one here (the thread's
            // flush events show the time it takes).
            self.write_pending(&mut f);
            let a = self.active.load(Ordering::Relaxed);
            let whole = if self.direct.load(Ordering::Relaxed) { len / BLOCK * BLOCK } else { len };
            rest = len - whole;
            // SAFETY: the other buffer is free (nothing pending), `rest` < BLOCK bytes, and
            // the two buffers are distinct allocations.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    self.bufs[a].as_ptr().add(whole),
                    self.bufs[1 - a].as_ptr(),
                    rest,
                )
            };
            if f.guard.is_some() {
                self.pending.store(whole, Ordering::Relaxed);
            }
            self.active.store(1 - a, Ordering::Relaxed);
            self.cur.store(self.bufs[1 - a].as_ptr(), Ordering::Relaxed);
            self.committed.store(rest, Ordering::Relaxed);
            self.len.store(rest, Ordering::Relaxed);
        }
        WRITER.wake();
        rest
    }

    /// Writes what the stream holds, ends the states its thread is still in (innermost
    /// first) and then the thread, once: nothing is written after that. `owner`: called by
    /// the thread that owns the stream.
    pub(super) fn close(&self, owner: bool, in_signal: bool) {
        let f = if in_signal { self.lock_in_signal() } else { self.lock() };
        let Some(mut f) = f else { return };
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        self.write_pending(&mut f);
        let a = self.active.load(Ordering::Relaxed);
        // Acquire: pairs with the owner's Release after each event.
        let end =
            if owner { self.len.load(Ordering::Relaxed) } else { self.committed.load(Ordering::Acquire) };
        if let Some(file) = f.guard.as_mut() {
            self.buffered(file);
        }
        self.write_out(&mut f, self.bufs[a].head(end));
        if let Some(file) = f.guard.as_mut() {
            let mut ev = [0u8; format::MAX_EVENT];
            let depth = self.depth.load(Ordering::Relaxed).min(MAX_DEPTH);
            for d in (0..depth).rev() {
                let v = self.open[d].load(Ordering::Relaxed);
                if let Some(st) = State::ALL.iter().find(|x| **x as u8 == v) {
                    let mut mcv = *st.ovni_mcv();
                    mcv[2] = format::end_code(mcv[2]);
                    let n =
                        format::encode(&Event { mcv, clock: clock_ns(), payload: Payload::None }, &mut ev);
                    let _ = file.write_all(&ev[..n]);
                }
            }
            let n =
                format::encode(&Event { mcv: *b"OHe", clock: clock_ns(), payload: Payload::None }, &mut ev);
            let _ = file.write_all(&ev[..n]);
            let _ = file.flush();
        }
        *f.guard = None;
    }
}

fn pause_1ms() {
    let ts = libc::timespec { tv_sec: 0, tv_nsec: 1_000_000 };
    // SAFETY: nanosleep reads `ts`; it is async-signal-safe.
    unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
}

/// The process's writer thread: writes the buffers threads hand over.
pub(super) struct Writer {
    /// Set when a buffer was handed over; the writer clears it and looks at every stream.
    work: Mutex<bool>,
    wake: Condvar,
    /// The streams, in the order they opened.
    pub(super) streams: Mutex<Vec<Arc<Stream>>>,
    started: AtomicBool,
}

pub(super) static WRITER: Writer = Writer {
    work: Mutex::new(false),
    wake: Condvar::new(),
    streams: Mutex::new(Vec::new()),
    started: AtomicBool::new(false),
};

impl Writer {
    /// Starts the writer thread (once). Without it (it could not start), each thread writes
    /// its previous buffer itself at its next hand-over.
    pub(super) fn start(&'static self) {
        if self.started.swap(true, Ordering::Relaxed) {
            return;
        }
        let _ = std::thread::Builder::new().name("oxiomp-trace-writer".into()).spawn(move || self.run());
    }

    fn wake(&self) {
        if let Ok(mut w) = self.work.lock() {
            *w = true;
            self.wake.notify_one();
        }
    }

    fn run(&self) {
        loop {
            {
                let Ok(mut w) = self.work.lock() else { return };
                while !*w {
                    let Ok(g) = self.wake.wait(w) else { return };
                    w = g;
                }
                *w = false;
            }
            // One stream at a time (the registry's lock is not held while writing, so that
            // threads opening their streams do not wait for a write).
            let mut i = 0;
            while let Some(s) = self.streams.lock().ok().and_then(|v| v.get(i).cloned()) {
                i += 1;
                s.write_if_pending();
            }
        }
    }
}

impl Stream {
    /// The writer's part: writes the pending buffer if there is one.
    fn write_if_pending(&self) {
        // Relaxed: a hint, looked at again under the lock.
        if self.pending.load(Ordering::Relaxed) != 0
            && let Some(mut f) = self.lock()
        {
            self.write_pending(&mut f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The owner's side of recording, with made-up events of 12 to 28 bytes whose bytes
    /// count up: hands over as `append` does; `writer` says after which hand-overs the
    /// writer gets to run (otherwise the owner writes the pending buffer itself).
    fn record(s: &Stream, bytes: usize, writer: impl Fn(usize) -> bool) -> Vec<u8> {
        let mut all = format::STREAM_HEADER.to_vec();
        let mut hand_overs = 0;
        let mut k = 0u32;
        while all.len() < bytes {
            let n = 12 + (k as usize * 7) % 17;
            let ev: Vec<u8> = (0..n).map(|i| (k as usize * 31 + i) as u8).collect();
            let mut len = s.len.load(Ordering::Relaxed);
            if len + 512 > BUF_BYTES {
                len = s.hand_over(len);
                hand_overs += 1;
                if writer(hand_overs) {
                    s.write_if_pending();
                }
            }
            // SAFETY: the test is the stream's owner; the event fits (checked above).
            unsafe { std::ptr::copy_nonoverlapping(ev.as_ptr(), s.cursor(len), n) };
            s.len.store(len + n, Ordering::Relaxed);
            s.committed.store(len + n, Ordering::Release);
            all.extend_from_slice(&ev);
            k += 1;
        }
        all
    }

    /// Every byte reaches the file once and in order, through any mix of hand-overs written
    /// by the writer and by the owner, with direct I/O (whole blocks, the rest carried
    /// over) and without; closing writes the pending buffer before the active one.
    #[test]
    fn hand_overs_keep_every_byte_in_order() {
        let dir = std::env::temp_dir().join(format!("oxiomp-stream-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let patterns: [(&str, fn(usize) -> bool); 3] = [
            ("writer always", |_| true),
            ("writer never", |_| false),
            ("writer every third", |h| h % 3 == 0),
        ];
        let mut direct_seen = false;
        for try_direct in [true, false] {
            for (name, writer) in patterns {
                let path = dir.join(format!("{name}-{try_direct}"));
                let s = Stream::create_with(&path, try_direct).unwrap();
                direct_seen |= s.direct.load(Ordering::Relaxed);
                let expected = record(&s, 5 * BUF_BYTES + 12345, writer);
                s.close(true, false);
                let got = std::fs::read(&path).unwrap();
                // The closing event of the thread (no states are open) ends the file.
                assert_eq!(got.len(), expected.len() + 12, "{name}, direct I/O tried: {try_direct}");
                assert!(got[..expected.len()] == expected[..], "{name}, direct I/O tried: {try_direct}");
                assert_eq!(&got[expected.len() + 1..expected.len() + 4], b"OHe");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        // Where the temporary directory takes direct I/O (ext4, tmpfs on recent kernels), its
        // path was covered; say so when it was not.
        if !direct_seen {
            eprintln!("note: {} does not take O_DIRECT; only buffered writes were tested", dir.display());
        }
    }
}
