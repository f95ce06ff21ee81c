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
//! an ordering of its own. The file itself, and what happens when the disk is full, is
//! `sink.rs`'s.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use super::clock_ns;
use super::siglock::{self, Marked};
use super::sink::{BLOCK, Boundary, Sink, put_ends};
use crate::State;
use crate::format;

/// Bytes of each of a thread's two buffers (aligned to `BLOCK`: a page, what direct I/O asks
/// of a buffer, a length and a file offset on every Linux file system).
pub(super) const BUF_BYTES: usize = 1 << 20;
/// Entries of the stack tracked per stream for closing (states, running tasks, worksharing
/// parts: a recursion of tied tasks with taskwait uses three per level).
pub(super) const MAX_DEPTH: usize = 256;
/// A stack entry's code for "running task (id in the high half)": the closer ends it with `PPe`.
pub(super) const TASK_MARK: u64 = 0x40;
/// A stack entry's code for "in a part of a worksharing construct (type in the high half)":
/// the closer ends it with `PQe`.
pub(super) const WORKSHARING_MARK: u64 = 0x41;
/// A stack entry's code for "paused" (`OHp`, sleeping in the kernel): the closer resumes the
/// thread (`OHr`) before it ends anything else.
pub(super) const PAUSE_MARK: u64 = 0x42;
/// A stack entry's code for "a part of the running task (number in the high half) inside its
/// previous part", recorded as nothing (`OvniRecorder::record`): the closer writes no end.
pub(super) const NESTED_PART_MARK: u64 = 0x43;
/// Set in `committed` while the owner changes its state stack and writes the matching events
/// (see `Stream::snapshot`); the word then also carries what the event may overwrite of the
/// stack as of the committed bytes (`Stream::busy_word`).
pub(super) const BUSY: usize = 1 << 63;
/// The committed length's bits in `committed` (the rest: BUSY and the stack's mark).
const LEN_MASK: usize = (1 << 32) - 1;

/// A zeroed, page-aligned buffer of `BUF_BYTES`, owned; released when its thread's stream is
/// closed by the thread itself (a program that starts many threads keeps no memory per ended
/// thread but the stream's header).
pub(super) struct Buffer(AtomicPtr<u8>);

impl Buffer {
    fn layout() -> std::alloc::Layout {
        // Both are powers of two and the size a multiple of the alignment.
        std::alloc::Layout::from_size_align(BUF_BYTES, BLOCK).expect("buffer layout")
    }

    fn new() -> Option<Buffer> {
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(Self::layout()) };
        (!p.is_null()).then(|| Buffer(AtomicPtr::new(p)))
    }

    /// The buffer's address (null once released). Relaxed: it changes once, to null, under
    /// the stream's lock, when no other thread can look at the buffer any more (`release`).
    pub(super) fn as_ptr(&self) -> *mut u8 {
        self.0.load(Ordering::Relaxed)
    }

    /// The first `n` bytes (none once released). The caller makes sure nobody writes them
    /// meanwhile (see the module's protocol).
    fn head(&self, n: usize) -> &[u8] {
        let p = self.as_ptr();
        if p.is_null() {
            return &[];
        }
        // SAFETY: the allocation has BUF_BYTES initialised (zeroed, then written) bytes, and
        // n is clamped to it; it stays allocated while the caller holds the stream's lock.
        unsafe { std::slice::from_raw_parts(p, n.min(BUF_BYTES)) }
    }

    /// Frees the memory.
    fn release(&self) {
        let p = self.0.swap(std::ptr::null_mut(), Ordering::Relaxed);
        if !p.is_null() {
            // SAFETY: allocated in `new` with this layout; the swap frees it once.
            unsafe { std::alloc::dealloc(p, Self::layout()) }
        }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        self.release();
    }
}

/// One thread's stream. Aligned to two cache lines, so that streams of different threads
/// never share a line (their owners write `len`, `committed` and `depth` at every event).
#[repr(align(128))]
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
    /// The file and metadata (closed once the stream is, or cut short: `sink.rs`).
    file: Mutex<Sink>,
    /// Closed (or cut short): no more writes, not even by the owner.
    pub(super) closed: AtomicBool,
    /// What the thread is in, outermost first, so that a stream closed while its thread is
    /// still inside something (a worker waiting for work at exit, a task `exit()` is called
    /// from) ends it: states (the low byte is the Paraver value) and marks for a running task
    /// (`TASK_MARK`) and a part of a worksharing construct (`WORKSHARING_MARK`), whose task
    /// number or type is the high half. They nest: the runtime's task and worksharing events
    /// pair up with its state events (`check` verifies it on every trace the tests write).
    pub(super) open: [AtomicU64; MAX_DEPTH],
    pub(super) depth: AtomicUsize,
    /// The loom CPU index the thread appears on (-1: the virtual CPU; `cpus`). Written by the
    /// owner (Relaxed), which records nothing once the stream is closed; read by the owner
    /// and, to give the claim back, by whoever closes the stream.
    pub(super) cpu: AtomicI32,
    /// Type numbers (tasks, worksharing constructs) the owner knows are declared in the
    /// process, one per slot (`type_slot`; 0: none): the few its thread uses, without a
    /// thread-local lookup per event. Owner only (Relaxed: no other thread reads them).
    known_types: [AtomicU32; KNOWN_TYPES],
    /// The owner's unused task numbers, `next..end` (taken from the process's counter a block
    /// at a time). Owner only (Relaxed).
    task_ids: [AtomicU32; 2],
    /// A task creation not written yet (`OvniRecorder::record_later`): its number (0:
    /// none), type and allocation state, written with the owner's next event, at that
    /// event's clock read. Owner only (Relaxed).
    later: [AtomicU32; 3],
    /// The process's writer, which the owner wakes when it hands a buffer over.
    writer: &'static Writer,
    /// The process whose stream it is (`foreign`), and its owner's OS thread id.
    pid: i32,
    pub(super) tid: i32,
}

/// Slots of `Stream::known_types` (a power of two).
const KNOWN_TYPES: usize = 8;

/// The slot of type `ty` in `Stream::known_types`: the top bits of a multiplicative hash (the
/// low bits of task types are all 1, worksharing types differ in their low bits only).
#[inline]
fn type_slot(ty: u32) -> usize {
    (ty.wrapping_mul(0x9e37_79b9) >> (32 - KNOWN_TYPES.trailing_zeros())) as usize
}

// SAFETY: the buffers are written only by the owning thread: the active one beyond
// `committed`, the other one never while `pending` is set. Other threads read the active one
// only below `committed` (Acquire, after the owner's Release) and the pending one, both under
// `file`'s lock, which the owner holds whenever it changes which buffer is which.
unsafe impl Sync for Stream {}
// SAFETY: the buffers are plain owned memory; everything else is Send.
unsafe impl Send for Stream {}

/// `file`'s lock.
pub(super) type FileLock<'a> = Marked<'a, Sink>;

impl Stream {
    /// A stream writing to `dir/stream.obs` (with direct I/O where the file system takes it),
    /// whose first bytes are the stream header, with `meta` in `dir/stream.json` (under a hidden
    /// name until the stream's first events are written: `sink`); full buffers go to `writer`.
    pub(super) fn create(dir: &Path, meta: &str, writer: &'static Writer) -> std::io::Result<Stream> {
        Self::create_with(dir, meta, true, writer)
    }

    fn create_with(
        dir: &Path,
        meta: &str,
        try_direct: bool,
        writer: &'static Writer,
    ) -> std::io::Result<Stream> {
        let sink = Sink::create(dir, meta, try_direct)?;
        let no_memory = || std::io::Error::from(std::io::ErrorKind::OutOfMemory);
        let bufs = [Buffer::new().ok_or_else(no_memory)?, Buffer::new().ok_or_else(no_memory)?];
        let head = format::STREAM_HEADER.len();
        // SAFETY: the buffer is ours alone yet and holds more than the header.
        unsafe { std::ptr::copy_nonoverlapping(format::STREAM_HEADER.as_ptr(), bufs[0].as_ptr(), head) };
        let cur = AtomicPtr::new(bufs[0].as_ptr());
        Ok(Stream {
            bufs,
            active: AtomicUsize::new(0),
            cur,
            len: AtomicUsize::new(head),
            committed: AtomicUsize::new(head),
            pending: AtomicUsize::new(0),
            file: Mutex::new(sink),
            closed: AtomicBool::new(false),
            open: std::array::from_fn(|_| AtomicU64::new(0)),
            depth: AtomicUsize::new(0),
            cpu: AtomicI32::new(-1),
            known_types: std::array::from_fn(|_| AtomicU32::new(0)),
            task_ids: std::array::from_fn(|_| AtomicU32::new(0)),
            later: std::array::from_fn(|_| AtomicU32::new(0)),
            writer,
            // SAFETY: getpid and gettid have no preconditions; the owner creates its stream.
            pid: unsafe { libc::getpid() },
            // SAFETY: as above.
            tid: unsafe { libc::gettid() },
        })
    }

    /// The owner's active buffer now holds `end` bytes, all whole events: published to a
    /// closer on another thread (Release: the events' bytes are visible to whoever reads
    /// `committed` with Acquire).
    #[inline]
    pub(super) fn commit(&self, end: usize) {
        self.len.store(end, Ordering::Relaxed);
        self.committed.store(end, Ordering::Release);
    }

    /// Where the owner writes its next event (`len` bytes into the active buffer).
    #[inline]
    pub(super) fn cursor(&self, len: usize) -> *mut u8 {
        // Relaxed: only the owner changes `cur`, and this is the owner.
        let cur = self.cur.load(Ordering::Relaxed);
        // SAFETY: `cur` is the start of the active buffer (BUF_BYTES long), and callers keep
        // len + event size within BUF_BYTES.
        unsafe { cur.add(len) }
    }

    /// Takes `file`'s lock (waiting for it).
    pub(super) fn lock(&self) -> Option<FileLock<'_>> {
        siglock::lock(&self.file)
    }

    /// Takes `file`'s lock from a signal handler: waits at most about two seconds for a
    /// writer on another thread, and not at all if the interrupted thread is taking it.
    pub(super) fn lock_in_signal(&self) -> Option<FileLock<'_>> {
        siglock::lock_in_signal(&self.file, 2000)
    }

    /// Writes `bytes` of buffer `b` (under the lock `f`). If the file cannot take them (a full
    /// disk), the sink ends the stream at the buffer's boundary, and the owner records no
    /// more.
    fn write_out(&self, f: &mut FileLock<'_>, b: usize, bytes: &[u8]) {
        f.write_buffer(b, bytes);
        if !f.is_open() {
            // Relaxed: a hint for the owner's `room` (the lock orders the rest).
            self.closed.store(true, Ordering::Relaxed);
        }
    }

    /// Writes the pending buffer, if any (under the lock `f`).
    fn write_pending(&self, f: &mut FileLock<'_>) {
        let p = self.pending.load(Ordering::Relaxed);
        if p != 0 {
            let other = 1 - self.active.load(Ordering::Relaxed);
            self.write_out(f, other, self.bufs[other].head(p));
            self.pending.store(0, Ordering::Relaxed);
        }
    }

    /// The stream's first events (header and `OHx`) are in: the boundary a stream cut before
    /// its first hand-over ends at. Owner only, before a closer can find the stream.
    pub(super) fn begun(&self) {
        if let Some(mut f) = self.lock() {
            let a = self.active.load(Ordering::Relaxed);
            f.starts[a] = Boundary { rest: self.len.load(Ordering::Relaxed), ..Boundary::START };
        }
    }

    /// Whether the calling process is not the stream's: a child forked by it, recording
    /// before its fork handler gave it streams of its own (a handler the program registered
    /// first). Such a child neither writes the parent's file nor takes the stream's lock
    /// (which a thread it does not have may hold): the stream is closed for it.
    fn foreign(&self) -> bool {
        // SAFETY: getpid has no preconditions.
        let foreign = unsafe { libc::getpid() } != self.pid;
        if foreign {
            // Relaxed: the child's own copy of the flag, for its owner's `room`.
            self.closed.store(true, Ordering::Relaxed);
        }
        foreign
    }

    /// The owner hands over its active buffer, `len` bytes of whole events, and continues in
    /// the other one (see the module's protocol); returns the bytes the other one starts
    /// with. With direct I/O only whole blocks are handed over: the rest (less than a block)
    /// moves to the start of the other buffer, so every write is whole blocks at a
    /// block-aligned offset (the stream header is the first buffer's start for this reason).
    pub(super) fn hand_over(&self, len: usize) -> usize {
        if self.foreign() {
            return 0;
        }
        let mut rest = 0;
        if let Some(mut f) = self.lock() {
            // The writer is a whole buffer behind: write the older one here (the thread's
            // flush events show the time it takes).
            self.write_pending(&mut f);
            let a = self.active.load(Ordering::Relaxed);
            let whole = if f.direct { len / BLOCK * BLOCK } else { len };
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
            if f.is_open() {
                self.pending.store(whole, Ordering::Relaxed);
            }
            // Where a stream cut short at the next buffer ends: after `rest` bytes, the buffer
            // handed over ending with the flush's `OF[`, the thread in what it is in now.
            let (depth, open) = self.stack();
            f.starts[1 - a] = Boundary { rest, after_flush: true, depth, open };
            self.active.store(1 - a, Ordering::Relaxed);
            self.cur.store(self.bufs[1 - a].as_ptr(), Ordering::Relaxed);
            self.committed.store(rest, Ordering::Relaxed);
            self.len.store(rest, Ordering::Relaxed);
        }
        self.writer.wake();
        rest
    }

    /// Whether type `ty` (never 0) is in the owner's cache of declared types.
    #[inline]
    pub(super) fn knows_type(&self, ty: u32) -> bool {
        self.known_types[type_slot(ty)].load(Ordering::Relaxed) == ty
    }

    /// Notes in the owner's cache that type `ty` is declared.
    pub(super) fn learn_type(&self, ty: u32) {
        self.known_types[type_slot(ty)].store(ty, Ordering::Relaxed);
    }

    /// The owner's next task number, from its block (`take_block` gives a new block of
    /// numbers when this one is used up).
    #[inline]
    pub(super) fn next_task_number(&self, take_block: impl FnOnce() -> (u32, u32)) -> u32 {
        let (mut next, mut end) =
            (self.task_ids[0].load(Ordering::Relaxed), self.task_ids[1].load(Ordering::Relaxed));
        if next == end {
            (next, end) = take_block();
            self.task_ids[1].store(end, Ordering::Relaxed);
        }
        self.task_ids[0].store(next.wrapping_add(1), Ordering::Relaxed);
        next
    }

    /// Notes a creation to write with the owner's next event: task `id` (not 0) of type `ty`,
    /// in state `alloc` (a Paraver value). The caller wrote any earlier one first.
    #[inline]
    pub(super) fn set_later(&self, id: u32, ty: u32, alloc: u8) {
        debug_assert!(id != 0 && self.later[0].load(Ordering::Relaxed) == 0);
        self.later[1].store(ty, Ordering::Relaxed);
        self.later[2].store(alloc as u32, Ordering::Relaxed);
        self.later[0].store(id, Ordering::Relaxed);
    }

    /// Takes the creation noted by `set_later`, if any: (id, type, state value).
    #[inline]
    pub(super) fn take_later(&self) -> Option<(u32, u32, u8)> {
        let id = self.later[0].load(Ordering::Relaxed);
        if id == 0 {
            return None;
        }
        self.later[0].store(0, Ordering::Relaxed);
        Some((id, self.later[1].load(Ordering::Relaxed), self.later[2].load(Ordering::Relaxed) as u8))
    }

    // The stack of open states and marks, for closing: only the owner writes it (Relaxed),
    // inside `append_events`'s BUSY window; another thread reads it through `snapshot`.

    /// Pushes entry `e` (a state's value, or a mark with its number).
    #[inline]
    fn push(&self, e: u64) {
        let d = self.depth.load(Ordering::Relaxed);
        if d < MAX_DEPTH {
            self.open[d].store(e, Ordering::Relaxed);
        }
        self.depth.store(d + 1, Ordering::Relaxed);
    }

    /// Notes that the thread entered `s`.
    #[inline]
    pub(super) fn entered(&self, s: State) {
        self.push(s as u64);
    }

    /// Notes that the thread started running task `id` (ended by `left`, as a state).
    #[inline]
    pub(super) fn task_started(&self, id: u32) {
        self.push(TASK_MARK | (id as u64) << 32);
    }

    /// Notes that the thread began its part of a worksharing construct of type `ty` (ended
    /// by `left`, as a state).
    #[inline]
    pub(super) fn worksharing_began(&self, ty: u32) {
        self.push(WORKSHARING_MARK | (ty as u64) << 32);
    }

    /// The type of the worksharing construct the thread is in innermost, if any (owner only).
    pub(super) fn innermost_worksharing(&self) -> Option<u32> {
        let (depth, open) = self.stack();
        open[..depth].iter().rev().find(|e| *e & 0xff == WORKSHARING_MARK).map(|e| (e >> 32) as u32)
    }

    /// The number of the task the thread runs innermost, if any (owner only).
    pub(super) fn innermost_task(&self) -> Option<u32> {
        let (depth, open) = self.stack();
        open[..depth]
            .iter()
            .rev()
            .find(|e| matches!(*e & 0xff, TASK_MARK | NESTED_PART_MARK))
            .map(|e| (e >> 32) as u32)
    }

    /// Notes that a part of task `id` began inside its previous part (nothing is recorded:
    /// no event goes with the mark, so a closer may see it or not alike).
    pub(super) fn nested_part(&self, id: u32) {
        self.push(NESTED_PART_MARK | (id as u64) << 32);
    }

    /// Ends the nested part of task `id` begun by `nested_part` if the thread is in one: true
    /// when it was.
    pub(super) fn end_nested_part(&self, id: u32) -> bool {
        let d = self.depth.load(Ordering::Relaxed);
        let top = if (1..=MAX_DEPTH).contains(&d) { self.open[d - 1].load(Ordering::Relaxed) } else { 0 };
        let nested = top == NESTED_PART_MARK | (id as u64) << 32;
        if nested {
            self.left();
        }
        nested
    }

    /// Notes that the thread paused (ended by `left`, as a state).
    #[inline]
    pub(super) fn paused(&self) {
        self.push(PAUSE_MARK);
    }

    /// Notes that the thread left its innermost state or mark.
    #[inline]
    pub(super) fn left(&self) {
        let d = self.depth.load(Ordering::Relaxed);
        self.depth.store(d.saturating_sub(1), Ordering::Relaxed);
    }

    /// Notes that the thread left its two innermost states or marks (a task's run and its
    /// state, a worksharing part and its state, a state and the one around it).
    #[inline]
    pub(super) fn left_two(&self) {
        self.left();
        self.left();
    }

    /// The states the thread is in, outermost first, if it is in nothing else (no task, no
    /// worksharing part, not paused). Owner only.
    pub(super) fn open_states(&self) -> Option<Vec<State>> {
        let (depth, open) = self.stack();
        open[..depth]
            .iter()
            .map(|&e| match State::ALL.get((e as usize).wrapping_sub(1)) {
                Some(&s) if e < 0x40 => Some(s),
                _ => None,
            })
            .collect()
    }

    /// What the thread is in (how many entries, and the entries, outermost first).
    fn stack(&self) -> (usize, [u64; MAX_DEPTH]) {
        self.read_stack(self.depth.load(Ordering::Relaxed), None)
    }

    /// The first `depth` entries of the stack (at most MAX_DEPTH are kept), the innermost
    /// one's code (low byte) replaced by `top` if given.
    fn read_stack(&self, depth: usize, top: Option<u8>) -> (usize, [u64; MAX_DEPTH]) {
        let n = depth.min(MAX_DEPTH);
        let mut open = [0u64; MAX_DEPTH];
        for (d, v) in open[..n].iter_mut().enumerate() {
            *v = self.open[d].load(Ordering::Relaxed);
        }
        if let Some(top) = top
            && (1..=MAX_DEPTH).contains(&depth)
        {
            open[depth - 1] = (open[depth - 1] & !0xff) | top as u64;
        }
        (n, open)
    }

    /// The value of `committed` while the owner records a stack-changing event at `len`:
    /// BUSY, and the stack's depth and innermost entry's code as they are before the event.
    /// An event pushes (writes entries at and above `depth`), pops (writes nothing) or
    /// switches states (writes the state at `depth - 1`; marks are never switched, and a
    /// state's entry has nothing but its code), so those two are all it can change of the
    /// stack as of `len`: a closer that finds the owner stopped inside the event (a signal
    /// handler on the owner's thread, or the owner preempted there) still knows exactly what
    /// was begun in the committed bytes. Owner only.
    #[inline]
    pub(super) fn busy_word(&self, len: usize) -> usize {
        debug_assert!(len <= LEN_MASK);
        let d = self.depth.load(Ordering::Relaxed);
        let top =
            if (1..=MAX_DEPTH).contains(&d) { self.open[d - 1].load(Ordering::Relaxed) as u8 } else { 0 };
        len | BUSY | (d.min(MAX_DEPTH + 1) << 32) | ((top as usize) << 48)
    }

    /// The stack as of the committed bytes of `committed` value `c` (see `busy_word`).
    fn stack_as_of(&self, c: usize) -> (usize, [u64; MAX_DEPTH]) {
        if c & BUSY == 0 { self.stack() } else { self.read_stack((c >> 32) & 0xffff, Some((c >> 48) as u8)) }
    }

    /// The committed bytes and the states the thread is in as of the same event, read by
    /// another thread while the owner may be recording: a seqlock on `committed`, whose value
    /// changes with every event the owner records, and which carries `BUSY` and the stack's
    /// mark while the owner changes its stack and writes the matching events (`append_events`:
    /// Release BUSY store, Release fence, stack and bytes, Release store of the new length). A read is
    /// consistent when `committed` was the same before (Acquire) and after (Acquire fence)
    /// reading the stack: then the owner's stores to the stack that the read saw, if any,
    /// belong to the event in progress at `c1`, which `stack_as_of` discounts (a store of a
    /// later event comes after that event's BUSY store and Release fence, so the second load
    /// would have seen a new value). The owner takes `file`'s lock to hand a buffer over, and
    /// the caller holds it, so `committed` cannot come back to an earlier value meanwhile.
    fn snapshot(&self) -> (usize, (usize, [u64; MAX_DEPTH])) {
        for _ in 0..100_000 {
            let c1 = self.committed.load(Ordering::Acquire);
            let stack = self.stack_as_of(c1);
            std::sync::atomic::fence(Ordering::Acquire);
            if self.committed.load(Ordering::Relaxed) == c1 {
                return (c1 & LEN_MASK, stack);
            }
            std::hint::spin_loop();
        }
        // The owner kept recording all that time (it stops once it sees `closed`).
        let c = self.committed.load(Ordering::Acquire);
        (c & LEN_MASK, self.stack_as_of(c))
    }

    /// Writes what the stream holds, ends the states its thread is still in (innermost
    /// first) and then the thread, once: nothing is written after that. `owner`: called by
    /// the thread that owns the stream.
    pub(super) fn close(&self, owner: bool, in_signal: bool) {
        if self.foreign() {
            return;
        }
        let f = if in_signal { self.lock_in_signal() } else { self.lock() };
        let Some(mut f) = f else { return };
        // Closed already (by another closer, or cut short): nothing more is written, but the
        // owner still frees its buffers below.
        if !self.closed.swap(true, Ordering::AcqRel) {
            self.write_pending(&mut f);
            let a = self.active.load(Ordering::Relaxed);
            let (end, (depth, open)) =
                if owner { (self.len.load(Ordering::Relaxed), self.stack()) } else { self.snapshot() };
            f.buffered();
            self.write_out(&mut f, a, self.bufs[a].head(end));
            if f.is_open() {
                // The ends of what is still open, innermost first, then the thread's.
                let mut tail = [0u8; (MAX_DEPTH + 1) * format::MAX_EVENT];
                let n = put_ends(&mut tail, &open[..depth], clock_ns());
                f.write_end(&tail[..n]);
            }
        }
        f.finish();
        if owner {
            // The thread records nothing more, and any other thread that takes the lock from
            // now on finds the stream closed and nothing pending: the buffers can go.
            self.cur.store(std::ptr::null_mut(), Ordering::Relaxed);
            self.bufs.iter().for_each(Buffer::release);
        }
    }
}

/// The process's writer thread: writes the buffers threads hand over.
pub(super) struct Writer {
    /// Set when a buffer was handed over; the writer clears it and looks at every stream.
    work: Mutex<bool>,
    wake: Condvar,
    /// The streams, in the order they opened.
    pub(super) streams: Mutex<Vec<Arc<Stream>>>,
    started: AtomicBool,
    /// Buffers the writer thread has written (the others were written by their threads).
    written: AtomicUsize,
}

impl Writer {
    /// A writer with no streams, its thread not started.
    pub(super) const fn new() -> Writer {
        Writer {
            work: Mutex::new(false),
            wake: Condvar::new(),
            streams: Mutex::new(Vec::new()),
            started: AtomicBool::new(false),
            written: AtomicUsize::new(0),
        }
    }

    /// Starts the writer thread (once). Without it (it could not start), each thread writes
    /// its previous buffer itself at its next hand-over.
    pub(super) fn start(&'static self) {
        if self.started.swap(true, Ordering::Relaxed) {
            return;
        }
        // The writer takes no signals: it inherits a mask that blocks them all (a program that
        // waits for signals with `sigwait` in a thread of its own must keep getting them, and
        // a handler run on the writer could not wait for the stream the writer holds).
        // SAFETY: sigset_t is a plain C struct filled by sigfillset; pthread_sigmask swaps
        // this thread's mask and puts it back after the spawn.
        unsafe {
            let (mut all, mut old): (libc::sigset_t, libc::sigset_t) =
                (std::mem::zeroed(), std::mem::zeroed());
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
            let _ = std::thread::Builder::new().name("oxiomp-trace-writer".into()).spawn(move || self.run());
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        }
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
            while let Some(s) = siglock::lock(&self.streams).and_then(|v| v.get(i).cloned()) {
                i += 1;
                if s.write_if_pending() {
                    // Relaxed: a statistic.
                    self.written.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}

impl Stream {
    /// The writer's part: writes the pending buffer if there is one; returns whether it did.
    fn write_if_pending(&self) -> bool {
        // Relaxed: a hint, looked at again under the lock.
        if self.pending.load(Ordering::Relaxed) == 0 {
            return false;
        }
        let Some(mut f) = self.lock() else { return false };
        let wrote = self.pending.load(Ordering::Relaxed) != 0 && f.is_open();
        self.write_pending(&mut f);
        wrote
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Payload;

    /// The owner appends made-up event number `k` (12 to 28 bytes that count up), handing
    /// over as `append` does; returns the event's bytes and whether it handed over.
    fn append_test_event(s: &Stream, k: usize) -> (Vec<u8>, bool) {
        let n = 12 + (k * 7) % 17;
        let ev: Vec<u8> = (0..n).map(|i| (k * 31 + i) as u8).collect();
        let mut len = s.len.load(Ordering::Relaxed);
        let handed = len + 512 > BUF_BYTES;
        if handed {
            len = s.hand_over(len);
        }
        // SAFETY: the test is the stream's owner; the event fits (checked above).
        unsafe { std::ptr::copy_nonoverlapping(ev.as_ptr(), s.cursor(len), n) };
        s.commit(len + n);
        (ev, handed)
    }

    /// The owner's side of recording `bytes` of events; `writer` says after which
    /// hand-overs the writer gets to run (otherwise the owner writes the pending buffer
    /// itself).
    fn record(s: &Stream, bytes: usize, writer: impl Fn(usize) -> bool) -> Vec<u8> {
        let mut all = format::STREAM_HEADER.to_vec();
        let (mut hand_overs, mut k) = (0, 0);
        while all.len() < bytes {
            let (ev, handed) = append_test_event(s, k);
            if handed {
                hand_overs += 1;
                if writer(hand_overs) {
                    s.write_if_pending();
                }
            }
            all.extend_from_slice(&ev);
            k += 1;
        }
        all
    }

    /// The tests' writer (its thread started by the one test that needs it).
    static TEST_WRITER: Writer = Writer::new();

    /// A stream in directory `dir` (made), for tests: the stream and its file's path.
    fn test_stream(dir: &std::path::Path, try_direct: bool) -> (Stream, std::path::PathBuf) {
        std::fs::create_dir_all(dir).unwrap();
        (Stream::create_with(dir, "{}", try_direct, &TEST_WRITER).unwrap(), dir.join("stream.obs"))
    }

    fn test_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("oxiomp-stream-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Every byte reaches the file once and in order, through any mix of hand-overs written
    /// by the writer and by the owner, with direct I/O (whole blocks, the rest carried
    /// over: a misaligned write would be refused and turn direct I/O off) and without;
    /// closing writes the pending buffer before the active one.
    #[test]
    fn hand_overs_keep_every_byte_in_order() {
        let dir = test_dir("order");
        type Pattern = (&'static str, fn(usize) -> bool);
        let patterns: [Pattern; 3] = [
            ("writer always", |_| true),
            ("writer never", |_| false),
            ("writer every third", |h| h % 3 == 0),
        ];
        let mut direct_seen = false;
        for try_direct in [true, false] {
            for (name, writer) in patterns {
                let (s, path) = test_stream(&dir.join(format!("{name}-{try_direct}")), try_direct);
                // A stream never closed (a crash) still reads as a stream.
                assert_eq!(std::fs::read(&path).unwrap(), format::STREAM_HEADER);
                let direct = s.lock().unwrap().direct;
                direct_seen |= direct;
                let expected = record(&s, 5 * BUF_BYTES + 12345, writer);
                assert_eq!(s.lock().unwrap().direct, direct, "a direct write was refused: {name}");
                s.close(true, false);
                assert!(s.bufs.iter().all(|b| b.as_ptr().is_null()), "the owner's close frees the buffers");
                let got = std::fs::read(&path).unwrap();
                // The closing event of the thread (no states are open) ends the file.
                assert_eq!(got.len(), expected.len() + 12, "{name}, direct I/O tried: {try_direct}");
                assert!(got[..expected.len()] == expected[..], "{name}, direct I/O tried: {try_direct}");
                assert_eq!(&got[expected.len() + 1..expected.len() + 4], b"OHe");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert!(direct_seen, "{} takes no O_DIRECT: the direct path went untested", dir.display());
    }

    /// What a stream's events leave open, as the closer must end it: states, running tasks
    /// (`PPx`/`PPe`) and worksharing parts (`PQx`/`PQe`) pair up innermost first, and nothing
    /// follows `OHe`, the last event. Panics naming `what` otherwise.
    fn assert_all_closed(events: &[format::Event], what: &str) {
        #[derive(Debug, PartialEq)]
        enum Open {
            State(State),
            Task(Option<u32>),
            Worksharing(Option<u32>),
        }
        let mut stack = Vec::new();
        for e in events {
            let (begin, entry) = match (&e.mcv, crate::trace::state_of(&e.mcv)) {
                (_, Some((st, enter))) => (enter, Open::State(st)),
                (b"PPx" | b"PPe", _) => (&e.mcv == b"PPx", Open::Task(e.payload_u32(0))),
                (b"PQx" | b"PQe", _) => (&e.mcv == b"PQx", Open::Worksharing(e.payload_u32(0))),
                _ => continue,
            };
            if begin {
                stack.push(entry);
            } else {
                assert_eq!(stack.pop(), Some(entry), "{what}: an end without its begin");
            }
        }
        assert!(stack.is_empty(), "{what}: left open: {stack:?}");
        assert_eq!(events.last().map(|e| &e.mcv), Some(b"OHe"), "{what}");
    }

    /// One round of what the owner records in the tests below, as the recorder does (the same
    /// events and stack changes), its first `steps` steps (events of one instant): states
    /// pushed, switched and popped, a worksharing part with a state (static loop) and one
    /// without (dynamic loop, a chunk inside), a running task inside that. 13 steps in all.
    fn record_round(s: &Stream, k: u32, steps: usize) {
        use crate::ovni::{Small, append_events};
        let (a, b, c) = (State::Single, State::CriticalSection, State::TaskRunning);
        let (ws, chunk) = (0x5753_0002, State::DynamicForChunk);
        let mut n = 0;
        let mut step = |f: &dyn Fn(&Stream)| {
            if n < steps {
                f(s);
            }
            n += 1;
        };
        step(&|s| append_events(s, [Small::state(a, true)], |s| s.entered(a)));
        step(&|s| append_events(s, [Small::state(b, true)], |s| s.entered(b)));
        step(&|s| {
            append_events(s, [Small::state(b, false), Small::state(c, true)], |s| {
                s.left();
                s.entered(c)
            })
        });
        step(&|s| append_events(s, [Small::one(*b"PQx", ws)], |s| s.worksharing_began(ws)));
        step(&|s| append_events(s, [Small::state(chunk, true)], |s| s.entered(chunk)));
        step(&|s| {
            append_events(s, [Small::state(c, true), Small::one(*b"PPx", k)], |s| {
                s.entered(c);
                s.task_started(k);
            })
        });
        step(&|s| {
            append_events(s, [Small::one(*b"PPe", k), Small::state(c, false)], |s| {
                s.left();
                s.left();
            })
        });
        step(&|s| append_events(s, [Small::state(chunk, false)], Stream::left));
        step(&|s| append_events(s, [Small::one(*b"PQe", ws)], Stream::left));
        step(&|s| {
            append_events(s, [Small::one(*b"PQx", ws + 1), Small::state(a, true)], |s| {
                s.worksharing_began(ws + 1);
                s.entered(a);
            })
        });
        step(&|s| {
            append_events(s, [Small::state(a, false), Small::one(*b"PQe", ws + 1)], |s| {
                s.left();
                s.left();
            })
        });
        step(&|s| append_events(s, [Small::state(c, false)], Stream::left));
        step(&|s| append_events(s, [Small::state(a, false)], Stream::left));
    }

    /// A close from another thread while the owner changes its stack (pushes, pops,
    /// switches; tasks begun and ended, worksharing parts) ends exactly what the written
    /// events leave open: the stack it reads and the bytes it writes are of the same event
    /// (`snapshot`). Repeated, closing at varied moments.
    #[test]
    fn a_close_from_another_thread_ends_the_open_states() {
        let dir = test_dir("stack");
        for round in 0..200u32 {
            let (s, path) = test_stream(&dir.join(format!("s{round}")), true);
            let s = Arc::new(s);
            let owner = {
                let s = s.clone();
                std::thread::spawn(move || {
                    let mut k = 1;
                    while !s.closed.load(Ordering::Relaxed) {
                        record_round(&s, k, usize::MAX);
                        k += 1;
                    }
                })
            };
            // Let the owner run for a varied while (a few events to a few thousand).
            for _ in 0..(round * 37) % 5000 {
                std::hint::spin_loop();
            }
            s.close(false, false);
            owner.join().unwrap();
            let events = format::decode(&std::fs::read(&path).unwrap()).expect("a whole stream").events;
            assert_all_closed(&events, &format!("round {round}"));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A stream closed after each step of a round (the owner stopped there: `exit()` from
    /// the user's code inside a task, a chunk, a static loop) ends each open task with `PPe`,
    /// each open worksharing part with `PQe` and each state, innermost first.
    #[test]
    fn a_close_ends_running_tasks_and_worksharing_parts() {
        let dir = test_dir("marks");
        for stop in 0..=13usize {
            let (s, path) = test_stream(&dir.join(format!("s{stop}")), true);
            record_round(&s, 7, stop);
            s.close(false, false);
            let events = format::decode(&std::fs::read(&path).unwrap()).expect("a whole stream").events;
            assert_all_closed(&events, &format!("stopped after {stop} steps"));
            if stop == 6 {
                // Inside the task, inside the chunk, inside the dynamic loop's part.
                let tail: Vec<[u8; 3]> = events[events.len() - 7..].iter().map(|e| e.mcv).collect();
                assert_eq!(tail, [*b"PPe", *b"PT]", *b"PWC", *b"PQe", *b"PT]", *b"PWI", *b"OHe"]);
                assert_eq!(events[events.len() - 7].payload_u32(0), Some(7));
                assert_eq!(events[events.len() - 4].payload_u32(0), Some(0x5753_0002));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A closer that finds the owner stopped inside a stack-changing event (its stack already
    /// changed, the event not committed: a signal handler on the owner's thread, or the owner
    /// preempted there for longer than the closer spins) ends exactly the states whose
    /// beginnings are in the stream: the stack as of the committed bytes, for a push, a pop and
    /// a switch. (The closer used to take the changed stack: an end without its beginning.)
    #[test]
    fn a_close_inside_an_event_ends_the_committed_states() {
        use crate::ovni::{Small, append_events};
        let dir = test_dir("inside");
        let (a, b) = (State::Single, State::CriticalSection);
        type Stop = (&'static str, fn(&Stream));
        let stopped_inside: [Stop; 4] = [
            ("push", |s| s.entered(State::TaskRunning)),
            ("pop", Stream::left),
            ("switch", |s| {
                s.left();
                s.entered(State::TaskRunning)
            }),
            ("task end", |s| {
                s.left();
                s.left();
            }),
        ];
        for (name, change) in stopped_inside {
            let (s, path) = test_stream(&dir.join(name), true);
            append_events(&s, [Small::state(a, true)], |s| s.entered(a));
            append_events(&s, [Small::state(b, true)], |s| s.entered(b));
            if name == "task end" {
                // The stop is in the task's end: both its entries are still open in the bytes.
                append_events(&s, [Small::state(State::TaskRunning, true), Small::one(*b"PPx", 9)], |s| {
                    s.entered(State::TaskRunning);
                    s.task_started(9);
                });
            }
            // `append_events` up to its stack change, as the owner would be when stopped.
            let len = s.len.load(Ordering::Relaxed);
            s.committed.store(s.busy_word(len), Ordering::Relaxed);
            change(&s);
            s.close(false, false);
            let events = format::decode(&std::fs::read(&path).unwrap()).expect("a whole stream").events;
            let mcvs: Vec<[u8; 3]> = events.iter().map(|e| e.mcv).collect();
            if name == "task end" {
                let run = State::TaskRunning;
                let want = [
                    a.ovni_code(true),
                    b.ovni_code(true),
                    run.ovni_code(true),
                    *b"PPx",
                    *b"PPe",
                    run.ovni_code(false),
                    b.ovni_code(false),
                    a.ovni_code(false),
                    *b"OHe",
                ];
                assert_eq!(mcvs, want, "stopped inside a {name}");
                assert_eq!(events[4].payload_u32(0), Some(9), "the mark keeps the task's number");
                continue;
            }
            let want =
                [a.ovni_code(true), b.ovni_code(true), b.ovni_code(false), a.ovni_code(false), *b"OHe"];
            assert_eq!(mcvs, want, "stopped inside a {name}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// With the writer thread running, a close from another thread (as at `exit()`) while
    /// the owner records leaves a prefix of the owner's events, cut at a whole event, then
    /// the thread's end.
    #[test]
    fn a_close_from_another_thread_leaves_whole_events() {
        let dir = test_dir("close");
        let (s, path) = test_stream(&dir, true);
        let s = Arc::new(s);
        TEST_WRITER.streams.lock().unwrap().push(s.clone());
        TEST_WRITER.start();
        let owner = {
            let s = s.clone();
            std::thread::spawn(move || {
                let mut all = format::STREAM_HEADER.to_vec();
                let mut ends = vec![all.len()];
                let mut k = 0;
                while !s.closed.load(Ordering::Relaxed) {
                    all.extend_from_slice(&append_test_event(&s, k).0);
                    ends.push(all.len());
                    k += 1;
                }
                (all, ends)
            })
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while TEST_WRITER.written.load(Ordering::Relaxed) < 3 {
            assert!(std::time::Instant::now() < deadline, "the writer thread wrote no buffers");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        s.close(false, false);
        let (all, ends) = owner.join().unwrap();
        // Another thread's close leaves the memory alone (the owner may be writing into it).
        assert!(s.bufs.iter().all(|b| !b.as_ptr().is_null()));
        let got = std::fs::read(&path).unwrap();
        let body = &got[..got.len() - 12];
        assert_eq!(&got[got.len() - 11..got.len() - 8], b"OHe");
        assert!(body.len() > 3 * (BUF_BYTES - 4096), "only {} bytes", body.len());
        assert!(ends.binary_search(&body.len()).is_ok(), "cut inside an event at {}", body.len());
        assert!(all[..body.len()] == *body, "the file is not what the owner recorded");
        let _ = std::fs::remove_dir_all(&dir);
    }
    /// A creation noted for later is written with the owner's next event, before it and at
    /// its clock read (allocation state entered, task created, state left); a second one
    /// noted first writes the waiting one at once; one still waiting when the thread ends is
    /// written before the stream closes. Numbers come from the stream's block, not 0.
    #[test]
    fn a_later_creation_goes_out_with_the_next_event() {
        use crate::ovni::{Small, append_events, write_later_now};
        let dir = test_dir("later");
        let (s, path) = test_stream(&dir.join("s"), true);
        let (alloc, run) = (State::TaskAllocation, State::TaskRunning);
        let mut block = 0;
        let mut take_block = || {
            block += 1;
            (100 * block, 100 * block + 2)
        };
        let ids: Vec<u32> = (0..3).map(|_| s.next_task_number(&mut take_block)).collect();
        assert_eq!(ids, [100, 101, 200]);
        s.set_later(ids[0], 0x51, alloc as u8);
        append_events(&s, [Small::state(run, true)], |s| s.entered(run));
        s.set_later(ids[1], 0x51, alloc as u8);
        // What `task_created_later` does before noting another.
        write_later_now(&s);
        s.set_later(ids[2], 0x53, alloc as u8);
        append_events(&s, [Small::state(run, false)], Stream::left);
        s.set_later(ids[0], 0x55, alloc as u8);
        // What the thread's end does before closing.
        write_later_now(&s);
        s.close(true, false);
        let events = format::decode(&std::fs::read(&path).unwrap()).expect("a whole stream").events;
        let (a, a_end) = (alloc.ovni_code(true), alloc.ovni_code(false));
        // A creation's three events: the allocation entered, the task created, the state left.
        let creation = |id: u32, ty: u32| {
            let mut p = id.to_le_bytes().to_vec();
            p.extend(ty.to_le_bytes());
            [(a, Payload::None), (*b"PPc", Payload::Raw(p)), (a_end, Payload::None)]
        };
        let got: Vec<([u8; 3], Payload)> = events.iter().map(|e| (e.mcv, e.payload.clone())).collect();
        let mut want = Vec::new();
        want.extend(creation(100, 0x51));
        want.push((run.ovni_code(true), Payload::None));
        want.extend(creation(101, 0x51));
        want.extend(creation(200, 0x53));
        want.push((run.ovni_code(false), Payload::None));
        want.extend(creation(100, 0x55));
        want.push((*b"OHe", Payload::None));
        assert_eq!(got, want);
        // One clock read per group: the later events share their next event's stamp.
        for group in [&events[0..4], &events[4..7], &events[7..11], &events[11..14]] {
            assert!(
                group.iter().all(|e| e.clock == group[0].clock),
                "{:?}",
                group.iter().map(|e| e.clock).collect::<Vec<_>>()
            );
        }
        assert!(events[3].clock < events[4].clock && events[6].clock < events[7].clock);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
