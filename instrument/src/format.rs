//! ovni's binary stream format (`stream.obs`), both directions.
//!
//! A stream is the 4 bytes `ovni`, a u32 version (1), then events in the writer's byte order
//! (little-endian here) with non-decreasing clocks:
//!
//! ```text
//! byte 0      flags (high nibble) | payload size code (low nibble: 0 none, v: v+1 bytes)
//! bytes 1..3  model, category, value characters (MCV)
//! bytes 4..11 u64 clock, ns
//! 12..        payload
//! ```
//! A jumbo event has flag 0x1 and size code 3, then a u32 length and that many bytes.

use std::fmt;

use crate::code;

/// The stream header: magic and version 1.
pub const STREAM_HEADER: &[u8; 8] = b"ovni\x01\x00\x00\x00";
/// The largest event the recorder writes (normal events carry at most 16 payload bytes).
pub const MAX_EVENT: usize = 12 + 16;

const FLAG_JUMBO: u8 = 0x10;

/// An event's payload, as the models we use define it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Payload {
    None,
    /// `OHx`: (cpu index, creator tid, tag).
    ThreadExecute {
        cpu: i32,
        creator: i32,
        tag: u64,
    },
    /// Any other normal payload, raw.
    Raw(Vec<u8>),
    /// A jumbo payload, raw.
    Jumbo(Vec<u8>),
}

/// One event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub mcv: [u8; 3],
    pub clock: u64,
    pub payload: Payload,
}

impl Event {
    /// The MCV as text.
    pub fn code(&self) -> String {
        String::from_utf8_lossy(&self.mcv).into_owned()
    }

    /// The little-endian u32 at byte `at` of a normal payload (task and type numbers).
    pub fn payload_u32(&self, at: usize) -> Option<u32> {
        match &self.payload {
            Payload::Raw(b) if b.len() >= at + 4 => {
                Some(u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]))
            }
            _ => None,
        }
    }
}

/// The end code of a state's begin code (`[` -> `]`, lower -> upper case).
pub const fn end_code(v: u8) -> u8 {
    match v {
        b'[' => b']',
        b'a'..=b'z' => v - 32,
        other => other,
    }
}

/// Encodes `ev` into `out` (at least `MAX_EVENT` bytes for normal events); returns its size.
pub fn encode(ev: &Event, out: &mut [u8]) -> usize {
    let mut payload = [0u8; 16];
    let plen = match &ev.payload {
        Payload::None => 0,
        Payload::ThreadExecute { cpu, creator, tag } => {
            payload[..4].copy_from_slice(&cpu.to_le_bytes());
            payload[4..8].copy_from_slice(&creator.to_le_bytes());
            payload[8..16].copy_from_slice(&tag.to_le_bytes());
            16
        }
        Payload::Raw(b) => {
            let n = b.len().min(16);
            payload[..n].copy_from_slice(&b[..n]);
            n
        }
        Payload::Jumbo(b) => {
            out[0] = FLAG_JUMBO | 3;
            out[1..4].copy_from_slice(&ev.mcv);
            out[4..12].copy_from_slice(&ev.clock.to_le_bytes());
            out[12..16].copy_from_slice(&(b.len() as u32).to_le_bytes());
            out[16..16 + b.len()].copy_from_slice(b);
            return 16 + b.len();
        }
    };
    // Payload sizes are 0 or 2..=16 bytes: a 1-byte payload is padded to 2.
    let plen = if plen == 1 { 2 } else { plen };
    out[0] = if plen == 0 { 0 } else { (plen - 1) as u8 };
    out[1..4].copy_from_slice(&ev.mcv);
    out[4..12].copy_from_slice(&ev.clock.to_le_bytes());
    out[12..12 + plen].copy_from_slice(&payload[..plen]);
    12 + plen
}

/// What is wrong with a stream, with the byte offset where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// Shorter than the header.
    Short,
    /// The first four bytes are not `ovni`.
    BadMagic([u8; 4]),
    /// A stream version we do not know.
    BadVersion(u32),
    /// An event code outside the models we know, at this offset.
    UnknownEvent { offset: usize, mcv: [u8; 3] },
    /// A payload that does not fit its event, at this offset.
    BadPayload { offset: usize, mcv: [u8; 3] },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            ReadError::Short => write!(f, "offset 0: shorter than the 8-byte stream header"),
            ReadError::BadMagic(m) => {
                write!(f, "offset 0: bad magic {:?} (expected \"ovni\")", String::from_utf8_lossy(m))
            }
            ReadError::BadVersion(v) => write!(f, "offset 4: stream version {v} (expected 1)"),
            ReadError::UnknownEvent { offset, mcv } => {
                write!(f, "offset {offset}: unknown event {:?}", String::from_utf8_lossy(mcv))
            }
            ReadError::BadPayload { offset, mcv } => {
                write!(f, "offset {offset}: malformed payload of event {:?}", String::from_utf8_lossy(mcv))
            }
        }
    }
}

/// A decoded stream: its events, and where a truncated tail began (a stream cut short by a
/// crash is read up to its last whole event).
#[derive(Debug, Default)]
pub struct Decoded {
    pub events: Vec<Event>,
    /// Offset of an incomplete last event, if the stream ends inside one.
    pub truncated_at: Option<usize>,
}

/// Whether an event code belongs to the models oxiomp writes: ovni's "O" and OpenMP's "P".
pub fn known(mcv: &[u8; 3]) -> bool {
    match mcv[0] {
        b'O' => {
            matches!(
                *mcv,
                code::THREAD_EXECUTE
                    | code::THREAD_END
                    | code::THREAD_PAUSE
                    | code::THREAD_RESUME
                    | code::AFFINITY_SET
                    | code::FLUSH_BEGIN
                    | code::FLUSH_END
                    | code::USER_BEGIN
                    | code::USER_END
            )
        }
        b'P' => {
            let begin = [mcv[0], mcv[1], begin_code(mcv[2])];
            crate::State::ALL.iter().any(|s| s.ovni_mcv() == &begin)
                || matches!(&mcv[..2], b"PP" | b"PQ" | b"PO")
        }
        _ => false,
    }
}

const fn begin_code(v: u8) -> u8 {
    match v {
        b']' => b'[',
        b'A'..=b'Z' => v + 32,
        other => other,
    }
}

/// Decodes a whole stream.
pub fn decode(bytes: &[u8]) -> Result<Decoded, ReadError> {
    if bytes.len() < 8 {
        return Err(ReadError::Short);
    }
    if &bytes[..4] != b"ovni" {
        return Err(ReadError::BadMagic([bytes[0], bytes[1], bytes[2], bytes[3]]));
    }
    let version = u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes"));
    if version != 1 {
        return Err(ReadError::BadVersion(version));
    }
    let mut out = Decoded::default();
    let mut at = 8;
    while at < bytes.len() {
        if bytes.len() - at < 12 {
            out.truncated_at = Some(at);
            break;
        }
        let flags = bytes[at];
        let mcv = [bytes[at + 1], bytes[at + 2], bytes[at + 3]];
        let clock = u64::from_le_bytes(bytes[at + 4..at + 12].try_into().expect("8 bytes"));
        if !known(&mcv) {
            return Err(ReadError::UnknownEvent { offset: at, mcv });
        }
        let (payload, size) = if flags & FLAG_JUMBO != 0 {
            if bytes.len() - at < 16 {
                out.truncated_at = Some(at);
                break;
            }
            let n = u32::from_le_bytes(bytes[at + 12..at + 16].try_into().expect("4 bytes")) as usize;
            if bytes.len() - at - 16 < n {
                out.truncated_at = Some(at);
                break;
            }
            (Payload::Jumbo(bytes[at + 16..at + 16 + n].to_vec()), 16 + n)
        } else {
            let code = (flags & 0x0f) as usize;
            let n = if code == 0 { 0 } else { code + 1 };
            if bytes.len() - at - 12 < n {
                out.truncated_at = Some(at);
                break;
            }
            let p = &bytes[at + 12..at + 12 + n];
            let payload = match (mcv, n) {
                (code::THREAD_EXECUTE, 16) => Payload::ThreadExecute {
                    cpu: i32::from_le_bytes(p[..4].try_into().expect("4")),
                    creator: i32::from_le_bytes(p[4..8].try_into().expect("4")),
                    tag: u64::from_le_bytes(p[8..16].try_into().expect("8")),
                },
                (code::THREAD_EXECUTE, _) => return Err(ReadError::BadPayload { offset: at, mcv }),
                (_, 0) => Payload::None,
                _ => Payload::Raw(p.to_vec()),
            };
            (payload, 12 + n)
        };
        out.events.push(Event { mcv, clock, payload });
        at += size;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_truncation() {
        let evs = [
            Event { mcv: *b"OHx", clock: 5, payload: Payload::ThreadExecute { cpu: 1, creator: -1, tag: 0 } },
            Event { mcv: *b"PBb", clock: 6, payload: Payload::None },
            Event { mcv: *b"PBB", clock: 9, payload: Payload::None },
            Event { mcv: *b"POc", clock: 9, payload: Payload::Jumbo(b"\x01\x00\x00\x00x.c:3\x00".to_vec()) },
            Event { mcv: *b"OHe", clock: 10, payload: Payload::None },
        ];
        let mut bytes = STREAM_HEADER.to_vec();
        for e in &evs {
            let mut b = [0u8; 64];
            let n = encode(e, &mut b);
            bytes.extend_from_slice(&b[..n]);
        }
        let d = decode(&bytes).unwrap();
        assert_eq!(d.events, evs);
        assert_eq!(d.truncated_at, None);
        // Cut in the middle of the last event: the others are read.
        let d = decode(&bytes[..bytes.len() - 5]).unwrap();
        assert_eq!(d.events.len(), 4);
        assert_eq!(d.truncated_at, Some(bytes.len() - 12));
    }

    #[test]
    fn bad_streams_name_the_offset() {
        assert_eq!(decode(b"ovn").unwrap_err(), ReadError::Short);
        assert!(matches!(decode(b"OVNI\x01\x00\x00\x00").unwrap_err(), ReadError::BadMagic(_)));
        assert_eq!(decode(b"ovni\x02\x00\x00\x00").unwrap_err(), ReadError::BadVersion(2));
        let mut b = STREAM_HEADER.to_vec();
        b.extend_from_slice(&[0, b'Z', b'z', b'z', 0, 0, 0, 0, 0, 0, 0, 0]);
        let e = decode(&b).unwrap_err();
        assert_eq!(e, ReadError::UnknownEvent { offset: 8, mcv: *b"Zzz" });
        assert_eq!(e.to_string(), "offset 8: unknown event \"Zzz\"");
    }

    #[test]
    fn every_state_code_is_known_both_ways() {
        for s in crate::State::ALL {
            let b = *s.ovni_mcv();
            assert!(known(&b), "{s:?}");
            assert!(known(&[b[0], b[1], end_code(b[2])]), "{s:?} end");
        }
    }
}
