//! The words of the checks' messages: what a construct is, where it is, with which values.
//! A construct's place is its `ident_t`'s `file:line:column` when the program was built with
//! `-g`; otherwise the code address the program called the runtime from, named from the
//! loaded objects' symbols (`dladdr`).

use std::ffi::CStr;

use oxiomp_instrument::{Meet, MeetKind};

use crate::Ident;
use crate::symbolize::{Code, code_name};

/// Where a thread called a construct from, when the construct's `ident_t` does not say: the
/// return address into the program (0: not known), and the region's outlined function (0: not
/// known), which names the place when the call was the function's tail call.
#[derive(Clone, Copy, Default, Debug)]
pub(super) struct Place {
    pub(super) code: usize,
    pub(super) region: usize,
}

/// The source text of `ident` (`";file;function;line;column;;"`) when it names a location.
fn known_source<'a>(ident: usize) -> Option<&'a CStr> {
    let loc = ident as *const Ident;
    if !Ident::names_location(loc) {
        return None;
    }
    // SAFETY: an ident that names its location is the `ident_t` clang passed, a static object
    // whose `psource` is a static NUL-terminated string.
    Some(unsafe { CStr::from_ptr((*loc).psource) })
}

/// Whether `ident` names its location (a program built with `-g`).
pub(super) fn ident_known(ident: usize) -> bool {
    known_source(ident).is_some()
}

/// The barrier bits of an `ident_t`'s flags (explicit, or the implicit one of which
/// construct); 0 for no ident.
fn barrier_bits(ident: usize) -> i32 {
    Ident::flags(ident as *const Ident) & 0x1e0
}

/// The worksharing construct whose implied barrier a barrier's `ident_t` says it is (clang
/// marks them: `for`, `sections`, `single`); `None` for another barrier (explicit, gcc's, or
/// one with no ident).
pub(super) fn implied_by(ident: usize) -> Option<MeetKind> {
    match barrier_bits(ident) {
        0x40 => Some(MeetKind::Loop),
        0xc0 => Some(MeetKind::Sections),
        0x140 => Some(MeetKind::Single),
        _ => None,
    }
}

/// Whether two arrivals of the same kind can be the same construct: their locations are the
/// same, or one is not known (the program was built without `-g`: then kinds and values are
/// compared, not places). Barriers also agree on what they end.
pub(super) fn same_place(a: &Meet, b: &Meet) -> bool {
    if a.ident == b.ident {
        return true;
    }
    if a.kind == MeetKind::Barrier
        && a.ident != 0
        && b.ident != 0
        && barrier_bits(a.ident) != barrier_bits(b.ident)
    {
        return false;
    }
    match (known_source(a.ident), known_source(b.ident)) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    }
}

/// `file:line:column` of a known ident.
fn ident_location(ident: usize) -> Option<String> {
    known_source(ident).map(|_| Ident::location(ident as *const Ident))
}

/// Where `meet` is, in words.
fn location(meet: &Meet, place: Place) -> String {
    if let Some(l) = ident_location(meet.ident) {
        return l;
    }
    let named = match meet.kind {
        MeetKind::RegionEnd => code_name(meet.code, Code::Entry),
        _ => code_name(place.code, Code::Return),
    };
    if let Some(name) = named {
        return name;
    }
    match code_name(place.region, Code::Entry) {
        Some(name) => format!("the last call of the region's function {name}"),
        None => "an unknown location (build with -g for file and line)".to_string(),
    }
}

/// Whether libomp schedule `sched` is one of an `ordered` loop.
pub(super) fn is_ordered(sched: i32) -> bool {
    (65..=74).contains(&(sched & !(0b111 << 29)))
}

/// The name of libomp schedule `sched` (`sched_type`, modifiers ignored).
fn schedule_name(sched: i32) -> String {
    let base = sched & !(0b111 << 29);
    let (ordered, base) = if (65..=74).contains(&base) { ("ordered ", base - 32) } else { ("", base) };
    let name = match base {
        33 | 34 | 40 | 41 | 44 | 45 => "static",
        35 => "dynamic",
        36 | 42 | 43 | 46 => "guided",
        37 | 47 => "runtime",
        38 => "auto",
        39 => "trapezoidal",
        _ => return format!("{ordered}kind {base}"),
    };
    format!("{ordered}{name}")
}

/// What a meet is, where, and with which values: "'for' at a.c:42:5 (0..1023 step 1,
/// schedule static)".
pub(super) fn describe(meet: &Meet, place: Place) -> String {
    let at = location(meet, place);
    match meet.kind {
        MeetKind::Loop => {
            let chunked =
                matches!(meet.sched & !(0b111 << 29), 33 | 35 | 36 | 65 | 67 | 68) && meet.chunk > 0;
            let chunk = if chunked { format!(", chunk {}", meet.chunk) } else { String::new() };
            format!(
                "'for' at {at} ({}..{} step {}, schedule {}{chunk})",
                meet.lower,
                meet.upper,
                meet.stride,
                schedule_name(meet.sched)
            )
        }
        MeetKind::Sections => format!("'sections' at {at} ({} sections)", meet.upper.wrapping_add(1)),
        MeetKind::Single => format!("'single' at {at}"),
        MeetKind::Barrier => {
            let what = Ident::barrier_words(meet.ident as *const Ident).unwrap_or("a barrier");
            format!("{what} at {at}")
        }
        MeetKind::RegionEnd => format!("the end of the parallel region at {at}"),
        MeetKind::Ordered => format!("'ordered' at {at}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ident(flags: i32, src: &'static CStr) -> Ident {
        Ident { reserved_1: 0, flags, reserved_2: 0, reserved_3: 0, psource: src.as_ptr() }
    }

    #[test]
    fn a_construct_is_named_by_its_source_location_and_values() {
        let id = ident(0x202, c";jacobi.c;main;42;5;;");
        let m = Meet {
            lower: 0,
            upper: 1023,
            stride: 1,
            sched: 33,
            chunk: 4,
            ..Meet::plain(MeetKind::Loop, &id as *const Ident as usize)
        };
        assert_eq!(
            describe(&m, Place::default()),
            "'for' at jacobi.c:42:5 (0..1023 step 1, schedule static, chunk 4)"
        );
        let b = ident(0x142, c";jacobi.c;main;57;5;;");
        let m = Meet::plain(MeetKind::Barrier, &b as *const Ident as usize);
        assert_eq!(describe(&m, Place::default()), "the implicit barrier of a 'single' at jacobi.c:57:5");
    }

    #[test]
    fn places_compare_by_source_text_unless_one_is_unknown() {
        let (a, b) = (ident(0x22, c";a.c;f;3;1;;"), ident(0x22, c";a.c;f;3;1;;"));
        let (c, u) = (ident(0x22, c";a.c;f;9;1;;"), ident(0x22, c";unknown;unknown;0;0;;"));
        let meet = |i: &Ident| Meet::plain(MeetKind::Barrier, i as *const Ident as usize);
        assert!(same_place(&meet(&a), &meet(&b)));
        assert!(!same_place(&meet(&a), &meet(&c)));
        assert!(same_place(&meet(&a), &meet(&u)));
        let implicit = ident(0x42, c";unknown;unknown;0;0;;");
        assert!(!same_place(&meet(&u), &meet(&implicit)), "an explicit barrier is not a loop's");
    }

    #[test]
    fn an_implied_barrier_names_its_construct() {
        let id = |flags| ident(flags, c";a.c;f;3;1;;");
        let (f, s, one, x) = (id(0x42), id(0xc2), id(0x142), id(0x22));
        let by = |i: &Ident| implied_by(i as *const Ident as usize);
        assert_eq!(by(&f), Some(MeetKind::Loop));
        assert_eq!(by(&s), Some(MeetKind::Sections));
        assert_eq!(by(&one), Some(MeetKind::Single));
        assert_eq!(by(&x), None, "an explicit barrier");
        assert_eq!(implied_by(0), None, "gcc's barrier: no ident");
    }

    #[test]
    fn an_unknown_place_says_how_to_get_one() {
        let m = Meet::plain(MeetKind::Single, 0);
        assert_eq!(
            describe(&m, Place::default()),
            "'single' at an unknown location (build with -g for file and line)"
        );
        let named = code_name(describe as *const () as usize, Code::Entry).unwrap();
        assert!(named.starts_with("describe.rs:"), "{named}");
    }
}
