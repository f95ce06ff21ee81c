//! What the runtime keeps for a tool interface (OMPT): one word of the tool's own for each
//! thread, parallel region and implicit task (OMPT's `ompt_data_t`). The runtime never reads
//! these words: the tool's recorder zeroes one when what it belongs to begins, on the thread
//! that then hands its address to the tool, and the tool reads and writes it through that
//! address for as long as OMPT says the address stays valid.

use std::cell::UnsafeCell;

/// A tool's word (`ompt_data_t`: a 64-bit value or a pointer).
#[repr(transparent)]
pub struct ToolData(UnsafeCell<u64>);

// SAFETY: the runtime itself neither reads nor writes the word after creating it; the tool's
// recorder writes it (zero) on the thread that owns it at that instant, before giving its
// address to the tool, and from then on the tool's own code accesses it (OMPT leaves their
// synchronisation to the tool, as `ompt_data_t` in libomp).
unsafe impl Sync for ToolData {}

impl ToolData {
    pub const fn new() -> ToolData {
        ToolData(UnsafeCell::new(0))
    }

    /// The word's address, for the tool.
    #[inline]
    pub fn as_ptr(&self) -> *mut u64 {
        self.0.get()
    }
}

impl Default for ToolData {
    fn default() -> Self {
        ToolData::new()
    }
}

/// What starts a tool (the `extern "C"` layer's OMPT start-up), registered before the first
/// thread is: run once, by the first thread the runtime registers, after it is registered.
static STARTER: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();
static STARTED: std::sync::Once = std::sync::Once::new();

/// Registers `start` as what starts a tool (the first registration stands).
pub fn set_starter(start: fn()) {
    let _ = STARTER.set(start);
}

/// Runs the starter once (threads registering meanwhile wait until it returns).
pub(crate) fn start_once() {
    STARTED.call_once(|| {
        if let Some(start) = STARTER.get() {
            start();
        }
    });
}
