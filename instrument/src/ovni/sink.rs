//! Where one thread's stream goes: its file (`stream.obs`), written in order, and its metadata
//! (`stream.json`). Used under the stream's lock (`Stream::lock`).
//!
//! # A full disk
//! A stream must end at a whole event, with what its thread was in ended and the thread's end
//! (`OHe`) written, even when the disk fills up: a stream cut inside an event, or without its
//! end, reads as a crash. So the room a write needs is allocated before the write is made
//! (`fallocate`, keeping the file's size), with [`RESERVE`] bytes more: a write that cannot get
//! its room is not made, and the reserve the previous write allocated takes the stream's end
//! instead.
//!
//! The end goes at the last event boundary before the buffer that could not be written. Each
//! buffer starts with the bytes that complete the previous buffer's last event (with direct
//! I/O a buffer is written in whole blocks and the rest moves on: `Stream::hand_over`); its
//! [`Boundary`] records how many, and what the thread was in there. The cut writes those
//! bytes, `OF]` when the boundary follows a flush's `OF[`, the ends of what was open
//! (innermost first) and `OHe`; rewrites `stream.json` in place with
//! `"oxiomp": {"cut": reason}` (the file was written padded, so no room is needed), which
//! `oxiomp-trace check` reports; and the process gives one warning naming the trace's
//! directory and the error. The thread records nothing more.
//!
//! A file system that cannot allocate ahead (`EOPNOTSUPP`) gets the same treatment without the
//! guarantee: if the end does not fit either, the file is cut back to its last whole write
//! (it may then end inside an event; `stream.json` still says why).
//!
//! Nothing here allocates once the sink exists: a cut can happen in a signal handler's close.
//!
//! # Publication
//! ovni's emulator reads every `stream.json` of the trace's tree, and stops at a stream that
//! holds no events or never ends. A process that ends without closing its streams (`_exit`, the
//! usual end of a forked child, or a crash) leaves them so. So the metadata is written as
//! `.stream.json` when the stream opens (its room taken then, like the file's) and renamed to
//! `stream.json` when the stream's first bytes after the header go out (the first buffer
//! written, or the stream's end): a stream whose process wrote nothing of it stays hidden from
//! ovni's tools, and `oxiomp-trace` lists it apart (`Trace::unpublished`).

use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::Ordering;

use super::clock_ns;
use super::stream::{MAX_DEPTH, PAUSE_MARK, TASK_MARK, WORKSHARING_MARK};
use crate::format;
use crate::{State, code};

/// Bytes allocated beyond what is written: the largest end of a stream cut short (less than a
/// block of an event's rest, `OF]`, the ends of [`MAX_DEPTH`] open entries, `OHe`).
pub(super) const RESERVE: u64 = 16 << 10;
/// Spaces after `stream.json`'s text: room for the cut's note, written in place.
const META_PAD: usize = 160;
/// Alignment and unit of direct I/O (see `Stream`).
pub(super) const BLOCK: usize = 4096;

/// An event boundary at the start of a buffer: the stream's state after the events before it.
#[derive(Clone, Copy)]
pub(super) struct Boundary {
    /// Bytes at the buffer's start that complete the event before the boundary.
    pub(super) rest: usize,
    /// The event before the boundary is a flush's `OF[` (its `OF]` is the next buffer's).
    pub(super) after_flush: bool,
    /// What the thread was in there (`Stream`'s stack entries, outermost first).
    pub(super) depth: usize,
    pub(super) open: [u64; MAX_DEPTH],
}

impl Boundary {
    pub(super) const START: Boundary =
        Boundary { rest: 0, after_flush: false, depth: 0, open: [0; MAX_DEPTH] };
}

/// A stream's file and metadata.
pub(super) struct Sink {
    /// None once the stream is closed, or cut short.
    file: Option<File>,
    /// The file is open for direct I/O (`O_DIRECT`): writes go from the buffers to the device
    /// without a copy into the page cache, in whole blocks from block-aligned offsets.
    pub(super) direct: bool,
    /// Bytes written to the file.
    written: u64,
    /// The file's room is allocated up to here (`fallocate`).
    reserved: u64,
    /// The file system allocates ahead.
    prealloc: bool,
    /// The boundary at the start of each of the stream's two buffers.
    pub(super) starts: [Boundary; 2],
    /// `stream.json`, kept open to note a cut, its text (without the padding) and length.
    meta: Option<File>,
    meta_text: Box<[u8]>,
    meta_len: usize,
    /// The metadata's hidden path and its published one (`publish`), kept for the sink's
    /// life: a publication in a signal handler's close frees nothing.
    meta_names: (CString, CString),
    /// The metadata has its published name.
    published: bool,
}

/// The hidden name of a stream's metadata until the stream is published (see the module docs).
pub(super) const HIDDEN_META: &str = ".stream.json";

impl Sink {
    /// Creates `dir/stream.obs` (its header written, its room for the first writes allocated;
    /// direct I/O where the file system takes it and `try_direct`) and the metadata `meta`,
    /// hidden until the stream is published. Fails if either cannot be written (a full disk
    /// among other reasons).
    pub(super) fn create(dir: &Path, meta: &str, try_direct: bool) -> std::io::Result<Sink> {
        let (path, hidden, meta_path) =
            (dir.join("stream.obs"), dir.join(HIDDEN_META), dir.join("stream.json"));
        let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other);
        let meta_names = (c(&hidden)?, c(&meta_path)?);
        let file = File::create(path)?;
        let mut s = Sink {
            file: None,
            direct: false,
            written: 0,
            reserved: 0,
            prealloc: true,
            starts: [Boundary::START; 2],
            meta: None,
            meta_text: meta.trim_end().as_bytes().into(),
            meta_len: 0,
            meta_names,
            published: false,
        };
        s.room_for(file.as_raw_fd(), format::STREAM_HEADER.len() as u64)?;
        // The header is in the file at once (a stream never closed, after a crash, still
        // reads as a stream) and also starts the first buffer, whose first write puts it there
        // again: so that writes start at offset 0, block-aligned, and the file offset stays 0.
        file.write_all_at(format::STREAM_HEADER, 0)?;
        // The kernel refuses O_DIRECT (EINVAL) where the file system cannot do it.
        s.direct = try_direct && set_direct(&file, true);
        let mut m = File::create(hidden)?;
        let mut padded = s.meta_text.to_vec();
        padded.resize(padded.len() + META_PAD, b' ');
        padded.push(b'\n');
        m.write_all(&padded)?;
        s.meta_len = padded.len();
        s.meta = Some(m);
        s.file = Some(file);
        Ok(s)
    }

    /// Whether the stream still takes writes.
    pub(super) fn is_open(&self) -> bool {
        self.file.is_some()
    }

    /// Closes the file (nothing is written after), giving back the room allocated beyond
    /// its end.
    pub(super) fn finish(&mut self) {
        if let Some(f) = self.file.take() {
            self.release_reserve(&f, self.written);
        }
        self.meta = None;
    }

    /// Gives back the room allocated past `end` (a hole punched there: the size stays).
    fn release_reserve(&mut self, file: &File, end: u64) {
        if self.reserved > end {
            // SAFETY: fallocate on a descriptor this sink owns; punching a hole frees room and
            // never needs any.
            unsafe {
                libc::fallocate(
                    file.as_raw_fd(),
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    end as i64,
                    (self.reserved - end) as i64,
                )
            };
            self.reserved = end;
        }
    }

    /// Allocates the room for `n` more bytes and the reserve after them, unless it is there.
    fn room_for(&mut self, fd: i32, n: u64) -> std::io::Result<()> {
        let want = self.written + n + RESERVE;
        if !self.prealloc || self.reserved >= want {
            return Ok(());
        }
        loop {
            // SAFETY: fallocate on a descriptor this sink owns; KEEP_SIZE leaves the file's
            // size (what readers see) alone.
            let rc = unsafe {
                libc::fallocate(
                    fd,
                    libc::FALLOC_FL_KEEP_SIZE,
                    self.written as i64,
                    (want - self.written) as i64,
                )
            };
            if rc == 0 {
                self.reserved = want;
                return Ok(());
            }
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => {}
                Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => {
                    self.prealloc = false;
                    return Ok(());
                }
                _ => return Err(e),
            }
        }
    }

    /// Writes the first bytes of buffer `b` (`bytes`, whole events but for the rest carried to
    /// the next buffer). If the file cannot take them, the stream is cut short at buffer `b`'s
    /// boundary (see the module docs).
    pub(super) fn write_buffer(&mut self, b: usize, bytes: &[u8]) {
        let Some(fd) = self.file.as_ref().map(|f| f.as_raw_fd()) else { return };
        let start = self.written;
        let wrote = self.room_for(fd, bytes.len() as u64).and_then(|()| self.write_all(bytes));
        match wrote {
            Ok(()) => self.publish_if_events(self.written),
            Err(e) => self.cut(start, b, bytes, &e),
        }
    }

    /// Writes the stream's last events (the ends of what is open, then `OHe`); on failure the
    /// file is cut back to where they began (it still ends at a whole event).
    pub(super) fn write_end(&mut self, tail: &[u8]) {
        let start = self.written;
        if let Some(f) = &self.file {
            let fd = f.as_raw_fd();
            let fits = self.room_for(fd, tail.len() as u64).and_then(|()| self.write_all(tail));
            let end = match fits {
                Ok(()) => self.written,
                Err(e) => {
                    if let Some(f) = &self.file {
                        let _ = f.set_len(start);
                    }
                    self.note_cut(&e);
                    start
                }
            };
            self.publish_if_events(end);
        }
        self.finish();
    }

    /// Gives the metadata its name once the file, `end` bytes long, holds events after the
    /// header, so that ovni's tools read the stream (see the module docs). If the rename
    /// fails the stream stays hidden, which the process's warning says.
    fn publish_if_events(&mut self, end: u64) {
        if self.published || end <= format::STREAM_HEADER.len() as u64 {
            return;
        }
        self.published = true;
        let (hidden, named) = &self.meta_names;
        // SAFETY: both are NUL-terminated paths; rename only reads them.
        if unsafe { libc::rename(hidden.as_ptr(), named.as_ptr()) } != 0 {
            let e = std::io::Error::last_os_error();
            let mut why = [0u8; 96];
            warn_once(reason(&e, &mut why), &e, b"a thread's stream stays hidden from ovni's tools");
        }
    }

    /// Writes `bytes` at the end of the file (a file system that refuses direct I/O at the
    /// first write gets them through the page cache from then on), counting what was written.
    fn write_all(&mut self, mut bytes: &[u8]) -> std::io::Result<()> {
        let Some(file) = self.file.as_mut() else { return Ok(()) };
        while !bytes.is_empty() {
            match file.write(bytes) {
                Ok(0) => return Err(std::io::Error::from_raw_os_error(libc::ENOSPC)),
                Ok(n) => {
                    bytes = &bytes[n..];
                    self.written += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) && self.direct => {
                    self.direct = false;
                    set_direct(file, false);
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Turns direct I/O off: for a last write that is not whole blocks.
    pub(super) fn buffered(&mut self) {
        if std::mem::replace(&mut self.direct, false)
            && let Some(f) = &self.file
        {
            set_direct(f, false);
        }
    }

    /// A write of buffer `b` (`bytes`, from file offset `start`) failed with `e`: the file
    /// ends at the buffer's boundary, with what was open there ended (see the module docs).
    #[cold]
    fn cut(&mut self, start: u64, b: usize, bytes: &[u8], e: &std::io::Error) {
        let Some(file) = self.file.take() else { return };
        let at = self.starts[b];
        let rest = &bytes[..at.rest.min(bytes.len())];
        // What a partial write put there goes; unaligned writes follow.
        let _ = file.set_len(start);
        if self.direct {
            set_direct(&file, false);
            self.direct = false;
        }
        let mut tail = [0u8; (MAX_DEPTH + 2) * format::MAX_EVENT];
        let mut n = 0;
        let clock = clock_ns();
        if at.after_flush {
            n += put_event(&mut tail[n..], code::FLUSH_END, None, clock);
        }
        n += put_ends(&mut tail[n..], &at.open[..at.depth.min(MAX_DEPTH)], clock);
        let end = start + (rest.len() + n) as u64;
        let ended = file
            .write_all_at(rest, start)
            .and_then(|()| file.write_all_at(&tail[..n], start + rest.len() as u64));
        if ended.is_err() {
            // Not even the reserve (a file system that cannot allocate ahead): back to the
            // last whole write.
            let _ = file.set_len(start);
        }
        // What is left of the reserve goes back to the full disk (other streams end in it).
        self.release_reserve(&file, end.max(start));
        self.note_cut(e);
        self.publish_if_events(if ended.is_ok() { end } else { start });
        self.meta = None;
    }

    /// Notes in `stream.json` why the stream was cut short, and warns (once per process).
    fn note_cut(&mut self, e: &std::io::Error) {
        let mut why = [0u8; 96];
        let why = reason(e, &mut why);
        if let Some(m) = &self.meta {
            // `{...}` becomes `{..., "oxiomp": {"cut": "why"}}`, padded to the same length.
            let mut note = [b' '; META_PAD + 1];
            let mut w = Cursor::new(&mut note);
            w.put(b", \"oxiomp\": {\"cut\": \"");
            w.put(why);
            w.put(b"\"}}");
            let body = self.meta_text.len().saturating_sub(1);
            let n = w.len();
            if n <= META_PAD + 1 && self.meta_len == body + 1 + META_PAD + 1 {
                let _ = m.write_all_at(&self.meta_text[..body], 0);
                let _ = m.write_all_at(&note, body as u64);
            }
        }
        warn_once(why, e, CUT);
    }
}

/// Why a write failed, as `stream.json` and the warning say it: `the disk was full` for
/// ENOSPC and EDQUOT, the system's message otherwise (quotes and backslashes left out).
fn reason<'a>(e: &std::io::Error, buf: &'a mut [u8; 96]) -> &'a [u8] {
    let fixed: &[u8] = match e.raw_os_error() {
        Some(libc::ENOSPC) => b"the disk was full",
        Some(libc::EDQUOT) => b"the disk quota was used up",
        _ => b"",
    };
    if !fixed.is_empty() {
        buf[..fixed.len()].copy_from_slice(fixed);
        return &buf[..fixed.len()];
    }
    let mut w = Cursor::new(buf);
    w.put(b"a write failed: ");
    w.put_errno(e.raw_os_error().unwrap_or(0));
    let n = w.len();
    for c in &mut buf[..n] {
        if *c == b'"' || *c == b'\\' || *c < b' ' {
            *c = b' ';
        }
    }
    &buf[..n]
}

/// A thread's stream could not be made (a full disk, among other reasons): its thread records
/// nothing, which the process's one warning says.
pub(super) fn cannot_open(e: &std::io::Error) {
    let mut why = [0u8; 96];
    warn_once(reason(e, &mut why), e, CUT);
}

/// What a cut means, as the warning says it.
const CUT: &[u8] = b"threads record nothing more, and each stream ends at its last whole event";

/// The process's one warning that its trace was cut short: `why`, the error `e`, and what it
/// means for the trace (`then`).
fn warn_once(why: &[u8], e: &std::io::Error, then: &[u8]) {
    // Relaxed: a flag of its own, no data depends on it.
    let Some(o) = super::ovni().filter(|o| !o.warned.swap(true, Ordering::Relaxed)) else { return };
    if !crate::warnings_on() {
        return;
    }
    let mut line = [0u8; 1024];
    let mut w = Cursor::new(&mut line);
    w.put(b"oxiomp: warning: the trace in ");
    w.put(o.dir.as_os_str().as_bytes());
    w.put(b" is cut short: ");
    w.put(why);
    w.put(b" (");
    w.put_errno(e.raw_os_error().unwrap_or(0));
    w.put(b"); ");
    w.put(then);
    w.put(b"\n");
    let n = w.len();
    // SAFETY: writes `n` initialised bytes of `line` to stderr (async-signal-safe).
    unsafe { libc::write(2, line.as_ptr() as *const libc::c_void, n) };
}

/// A writer into a fixed array: what does not fit is left out.
struct Cursor<'a> {
    out: &'a mut [u8],
    n: usize,
}

impl<'a> Cursor<'a> {
    fn new(out: &'a mut [u8]) -> Self {
        Cursor { out, n: 0 }
    }

    fn put(&mut self, s: &[u8]) {
        let k = s.len().min(self.out.len() - self.n);
        self.out[self.n..self.n + k].copy_from_slice(&s[..k]);
        self.n += k;
    }

    /// The system's message for `errno`.
    fn put_errno(&mut self, errno: i32) {
        let mut msg = [0u8; 128];
        // SAFETY: strerror_r (the XSI one) writes a NUL-terminated message of at most the
        // buffer's length into it.
        let ok = unsafe { libc::strerror_r(errno, msg.as_mut_ptr() as *mut libc::c_char, msg.len()) } == 0;
        let len = msg.iter().position(|&c| c == 0).unwrap_or(0);
        if ok && len > 0 {
            self.put(&msg[..len]);
        } else {
            self.put(b"error ");
            let mut digits = [0u8; 12];
            let mut k = digits.len();
            let mut v = errno.unsigned_abs();
            loop {
                k -= 1;
                digits[k] = b'0' + (v % 10) as u8;
                v /= 10;
                if v == 0 {
                    break;
                }
            }
            self.put(&digits[k..]);
        }
    }

    fn len(&self) -> usize {
        self.n
    }
}

/// Writes the ends of `open` (stack entries, outermost first), innermost first, then the
/// thread's end (`OHe`), all at `clock`, into `out`; returns the bytes written.
pub(super) fn put_ends(out: &mut [u8], open: &[u64], clock: u64) -> usize {
    let mut n = 0;
    for &e in open.iter().rev() {
        n += put_end(&mut out[n..], e, clock);
    }
    n + put_end(&mut out[n..], 0, clock)
}

/// Writes into `out` the event that ends stack entry `e` (a state, a running task, a part of a
/// worksharing construct, a pause; 0: the thread itself) at `clock`; returns its size (0 for an
/// entry that is none of these).
fn put_end(out: &mut [u8], e: u64, clock: u64) -> usize {
    let (mcv, payload) = match e & 0xff {
        0 => (code::THREAD_END, None),
        PAUSE_MARK => (code::THREAD_RESUME, None),
        TASK_MARK => (code::TASK_END, Some((e >> 32) as u32)),
        WORKSHARING_MARK => (code::WORKSHARING_END, Some((e >> 32) as u32)),
        v => match State::ALL.iter().find(|s| **s as u64 == v) {
            Some(s) => (s.ovni_code(false), None),
            None => return 0,
        },
    };
    put_event(out, mcv, payload, clock)
}

/// Writes event `mcv` with an optional 4-byte payload at `clock` into `out`; returns its size.
fn put_event(out: &mut [u8], mcv: [u8; 3], payload: Option<u32>, clock: u64) -> usize {
    out[0] = if payload.is_some() { 3 } else { 0 };
    out[1..4].copy_from_slice(&mcv);
    out[4..12].copy_from_slice(&clock.to_le_bytes());
    match payload {
        Some(p) => {
            out[12..16].copy_from_slice(&p.to_le_bytes());
            16
        }
        None => 12,
    }
}

/// Turns direct I/O on or off for `file`; whether the kernel took it.
pub(super) fn set_direct(file: &File, on: bool) -> bool {
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on our own open descriptor; both calls are async-signal-safe.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        let flags = if on { flags | libc::O_DIRECT } else { flags & !libc::O_DIRECT };
        libc::fcntl(fd, libc::F_SETFL, flags) == 0
    }
}
