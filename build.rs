//! Link-time layout of the `loki` executable on Linux with glibc (docs/benchmarks.md,
//! "Memory"). Two linker options, both about how much of the file a run has to map:
//!
//! - `link/hot-text.ld` places the functions a one-shot answer runs (measured by
//!   `scripts/link-layout`) together at the start of the code, so a run maps a few
//!   64 KiB windows of code instead of nearly all of them.
//! - `-z pack-relative-relocs` stores the position-independent executable's
//!   relocations in a compact table (DT_RELR) that the loader reads in a few pages
//!   instead of 1.2 MB. The loader must know the format (glibc 2.36 and later export the
//!   `GLIBC_ABI_DT_RELR` version for it), so it is used only when building for the
//!   machine that builds and that machine's libc has that version.
//!
//! `LOKI_LINK_LAYOUT=off` turns both off (e.g. for a linker that rejects them).

use std::env;
use std::fs;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=link/hot-text.ld");
    println!("cargo:rerun-if-env-changed=LOKI_LINK_LAYOUT");
    let var = |key: &str| env::var(key).unwrap_or_default();
    if var("LOKI_LINK_LAYOUT") == "off" {
        return;
    }
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" {
        return;
    }
    let script = Path::new(&var("CARGO_MANIFEST_DIR")).join("link/hot-text.ld");
    if script.is_file() {
        println!("cargo:rustc-link-arg-bins=-Wl,-T,{}", script.display());
    }
    if var("TARGET") == var("HOST") && libc_loads_packed_relocations() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the C library this build script runs with (the building machine's) exports
/// `GLIBC_ABI_DT_RELR`, the version a packed-relocation executable requires.
fn libc_loads_packed_relocations() -> bool {
    let Ok(maps) = fs::read_to_string("/proc/self/maps") else {
        return false;
    };
    let Some(libc) = maps
        .lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .find(|path| path.ends_with("/libc.so.6"))
    else {
        return false;
    };
    let Ok(bytes) = fs::read(libc) else {
        return false;
    };
    let needle = b"GLIBC_ABI_DT_RELR";
    bytes.windows(needle.len()).any(|w| w == needle)
}
