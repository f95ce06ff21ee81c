//! The layout table a debugger library reads: each field it needs, by name, with its offset in
//! its struct and its size. The runtime and the library (`ompd/`) share no code: the library
//! looks the names up, so either can change as long as the names it needs stay, and a table
//! without one of them is a layout the library does not know (`ompd_rc_incompatible`).
//!
//! Each module that owns a debugger-visible struct lists its fields (it alone sees them
//! private); `debug` joins the lists into the one table the `extern "C"` layer exports.

/// The longest field name, with its NUL.
pub const NAME_LEN: usize = 40;

/// One field: `name` (`struct.field`, NUL-padded), where it lies in its struct and how wide
/// it is, in bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: [u8; NAME_LEN],
    pub offset: u32,
    pub size: u32,
}

impl Field {
    /// An unused entry (name empty).
    pub const EMPTY: Field = Field { name: [0; NAME_LEN], offset: 0, size: 0 };

    /// The field `name` at `offset`, `size` bytes wide. A name too long for the table fails
    /// the build (this runs in constants).
    pub const fn new(name: &str, offset: usize, size: usize) -> Field {
        let bytes = name.as_bytes();
        assert!(bytes.len() < NAME_LEN, "field name too long");
        let mut out = [0u8; NAME_LEN];
        let mut i = 0;
        while i < bytes.len() {
            out[i] = bytes[i];
            i += 1;
        }
        Field { name: out, offset: offset as u32, size: size as u32 }
    }

    /// A struct's size, as the entry `name` (offset 0).
    pub const fn size_of(name: &str, size: usize) -> Field {
        Field::new(name, 0, size)
    }
}

/// A field `$field` (a path: `a.b`) of `$ty`, named `$name`: its offset and its size.
#[macro_export]
#[doc(hidden)]
macro_rules! debug_field {
    ($name:literal, $ty:ty, $($field:ident).+) => {{
        const fn size_of_field<T, F>(_: fn(&T) -> &F) -> usize {
            std::mem::size_of::<F>()
        }
        $crate::debug::layout::Field::new(
            $name,
            std::mem::offset_of!($ty, $($field).+),
            size_of_field(|s: &$ty| &s.$($field).+),
        )
    }};
}

/// The lists `parts` joined into one table of `N` entries (`N` their total length).
pub const fn join<const N: usize>(parts: &[&[Field]]) -> [Field; N] {
    let mut out = [Field::EMPTY; N];
    let mut k = 0;
    let mut i = 0;
    while i < parts.len() {
        let mut j = 0;
        while j < parts[i].len() {
            out[k] = parts[i][j];
            k += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(k == N, "the table's length is not the lists' total");
    out
}

/// Identifies the table: "OXIOMPDL" and the version of its format (not of the structs, which
/// the names describe).
pub const MAGIC: u64 = u64::from_le_bytes(*b"OXIOMPDL");
/// The version of the table's format: a library that reads another version refuses it.
pub const VERSION: u32 = 1;

/// The exported table: a header, then `count` entries of `entry_size` bytes.
#[repr(C)]
pub struct Layout<const N: usize> {
    pub magic: u64,
    pub version: u32,
    pub count: u32,
    pub entry_size: u32,
    pub header_size: u32,
    pub fields: [Field; N],
}

impl<const N: usize> Layout<N> {
    pub const fn new(fields: [Field; N]) -> Layout<N> {
        Layout {
            magic: MAGIC,
            version: VERSION,
            count: N as u32,
            entry_size: std::mem::size_of::<Field>() as u32,
            header_size: std::mem::offset_of!(Layout<N>, fields) as u32,
            fields,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_join_in_order_and_keep_their_names() {
        let a = [Field::new("a.x", 0, 4), Field::new("a.y", 8, 8)];
        let b = [Field::size_of("b", 16)];
        let t: [Field; 3] = join(&[&a, &b]);
        assert_eq!(t[1], Field::new("a.y", 8, 8));
        assert_eq!(&t[2].name[..2], b"b\0");
        let l = Layout::new(t);
        assert_eq!(l.header_size, 24);
        assert_eq!(l.entry_size, 48);
    }
}
