//! The C math functions loki's dependencies call (`pow` in tokio's scheduler, `ldexp` in
//! syntect, `logf` in the BM25 ranking, `log10f` in the HTML converter, `exp2` in debug
//! builds), defined here from the `libm` crate (rust-lang's pure-Rust port of musl's libm)
//! so that the linker needs nothing from glibc's `libm.so.6` and drops it (`--as-needed`).
//!
//! Why: a shared library that is loaded runs its IFUNC resolvers at start-up, whether or
//! not its functions are called; libm has dozens, spread over its code, and each one
//! touched maps a 64 KiB window. A one-shot answer kept about 0.3 MiB of libm resident for
//! four functions (docs/benchmarks.md, "What whole-program LTO buys").
//!
//! They live in the binary crate, not the library: its object file is always linked, so
//! these definitions are seen before the linker looks at libm. Only on Linux with glibc,
//! where the layout of the executable is measured.

// `no_mangle` is an unsafe attribute: an exported name could clash with another
// definition. These four are the C library's own names, defined once, with the C
// library's signatures.
#![allow(unsafe_code)]

/// `double pow(double, double)`.
#[unsafe(no_mangle)]
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

/// `double ldexp(double, int)`.
#[unsafe(no_mangle)]
pub extern "C" fn ldexp(x: f64, n: std::ffi::c_int) -> f64 {
    libm::ldexp(x, n)
}

/// `float logf(float)`.
#[unsafe(no_mangle)]
pub extern "C" fn logf(x: f32) -> f32 {
    libm::logf(x)
}

/// `float log10f(float)`.
#[unsafe(no_mangle)]
pub extern "C" fn log10f(x: f32) -> f32 {
    libm::log10f(x)
}

/// `double exp2(double)` (called from unoptimised builds).
#[unsafe(no_mangle)]
pub extern "C" fn exp2(x: f64) -> f64 {
    libm::exp2(x)
}
