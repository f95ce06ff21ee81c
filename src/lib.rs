//! oxiomp: an OpenMP runtime in Rust, built as `libomp.so` (soname `libomp.so.5`), a drop-in
//! replacement for LLVM's libomp. This crate only ties the pieces together: the engine is
//! `oxiomp-runtime`, the C ABI is `oxiomp-kmp-abi`, the variadic fork entries are the C/asm shim
//! that `build.rs` compiles.

#![deny(clippy::undocumented_unsafe_blocks)]

pub use oxiomp_kmp_abi as abi;
pub use oxiomp_runtime as runtime;
