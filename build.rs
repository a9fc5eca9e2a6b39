//! Link-time layout of the `loki` executable on Linux with glibc (docs/benchmarks.md,
//! "Memory: the executable's layout"). Two linker options, both about how much of the
//! file a run has to map:
//!
//! - `link/hot-text.ld` places the functions a one-shot answer runs (measured by
//!   `scripts/link-layout`) together at the start of the code, so a run maps a few
//!   64 KiB windows of code instead of nearly all of them.
//! - `link/no-unwind.ld` drops the unwind tables (`.eh_frame`) from release builds,
//!   which abort on panic: nothing unwinds, and in a stripped executable a backtrace names nothing.
//!   The code loki and its dependencies compile has none already
//!   (`-C force-unwind-tables=no`); this covers the precompiled standard library and C.
//! - `-z pack-relative-relocs` stores the position-independent executable's
//!   relocations in a compact table (DT_RELR) that the loader reads in a few pages
//!   instead of 1.2 MB. The loader must know the format (glibc 2.36 and later export the
//!   `GLIBC_ABI_DT_RELR` version for it), so it is used only on x86-64, when building for
//!   the machine that builds, with the toolchain's own linker, and when that machine's
//!   libc has that version.
//!
//! Both are left out when the build names its own linker (a linker setting, `-fuse-ld`,
//! a sysroot: mold rejects linker scripts, and a cross or older-glibc sysroot is not the
//! libc checked here), and when `LOKI_LINK_LAYOUT=off`. What was decided is exported to
//! the tests as `LOKI_LINK_LAYOUT_APPLIED` (`script`, `no-unwind`, `relr`, and `native` when
//! building for the building machine).

use std::env;
use std::fs;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=link/hot-text.ld");
    println!("cargo:rerun-if-changed=link/no-unwind.ld");
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-changed=crates/wire/Cargo.toml");
    println!("cargo:rerun-if-changed=crates/rag/Cargo.toml");
    println!("cargo:rerun-if-env-changed=LOKI_LINK_LAYOUT");
    println!("cargo:rerun-if-env-changed=LOKI_ICF");
    let applied = decide();
    println!(
        "cargo:rustc-env=LOKI_LINK_LAYOUT_APPLIED={}",
        applied.join(",")
    );
}

fn decide() -> Vec<&'static str> {
    let var = |key: &str| env::var(key).unwrap_or_default();
    let mut applied = Vec::new();
    if var("LOKI_LINK_LAYOUT") == "off" {
        return applied;
    }
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" {
        return applied;
    }
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    let own_linker = env::var_os("RUSTC_LINKER").is_some()
        || [
            "fuse-ld",
            "linker=",
            "linker-flavor",
            "link-self-contained",
            "sysroot",
            "zig",
        ]
        .iter()
        .any(|word| flags.contains(word));
    if own_linker {
        println!(
            "cargo:warning=loki: a linker of the build's own is configured; building without the hot-code layout and packed relocations (docs/benchmarks.md)"
        );
        return applied;
    }
    let native = var("TARGET") == var("HOST");
    if native {
        applied.push("native");
    }
    let script = Path::new(&var("CARGO_MANIFEST_DIR")).join("link/hot-text.ld");
    if script.is_file() {
        warn_if_stale(&script);
        // `-Xlinker` keeps a path with commas whole (`-Wl,` would split it).
        for arg in ["-Xlinker", "-T", "-Xlinker"] {
            println!("cargo:rustc-link-arg-bins={arg}");
        }
        println!("cargo:rustc-link-arg-bins={}", script.display());
        applied.push("script");
    }
    let no_unwind = Path::new(&var("CARGO_MANIFEST_DIR")).join("link/no-unwind.ld");
    // Cargo tells a build script the profile's name, not its panic strategy: "release" is
    // the release profile and every profile that inherits it, which abort on
    // panic; a test harness built in one unwinds, but is no binary target.
    if var("PROFILE") == "release" && no_unwind.is_file() {
        for arg in ["-Xlinker", "-T", "-Xlinker"] {
            println!("cargo:rustc-link-arg-bins={arg}");
        }
        println!("cargo:rustc-link-arg-bins={}", no_unwind.display());
        applied.push("no-unwind");
    }
    if var("CARGO_CFG_TARGET_ARCH") == "x86_64" && native && libc_loads_packed_relocations() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
        applied.push("relr");
    }
    if var("LOKI_ICF") == "on" && var("TARGET") == "x86_64-unknown-linux-gnu" && links_with_lld() {
        // Identical code folding (opt-in): one copy of functions that compiled to the same
        // bytes saves about 5% of the executable, but which copy survives depends on the
        // order the linker sees them in — which the hot-code list itself changes — so the
        // functions a one-shot answer runs land outside `.text.hot` and a one-shot maps
        // several more megabytes of code (docs/benchmarks.md, 2026-11-29).
        println!("cargo:rustc-link-arg-bins=-Wl,--icf=all");
        applied.push("icf");
    }
    applied
}

/// Whether rustc links with its own lld: the default on x86-64 Linux since Rust 1.90
/// (GNU ld, which older toolchains use, has no `--icf`).
fn links_with_lld() -> bool {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = std::process::Command::new(rustc).arg("-vV").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(release) = text.lines().find_map(|l| l.strip_prefix("release: ")) else {
        return false;
    };
    let mut parts = release
        .split(['.', '-'])
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (1, 90)
}

/// The hot-code list records a fingerprint of the dependencies it was measured with; a
/// list made with others still links (unmatched patterns are ignored) but places less of
/// the code that runs, so the build says so instead of failing.
fn warn_if_stale(script: &Path) {
    let recorded = fs::read_to_string(script).ok().and_then(|text| {
        text.lines().find_map(|line| {
            line.trim()
                .strip_prefix("fingerprint: ")
                .map(str::to_string)
        })
    });
    let root = script
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("."));
    let hash = layout_fingerprint(root);
    if recorded.as_deref() != Some(hash.as_str()) {
        println!(
            "cargo:warning=loki: link/hot-text.ld was measured with other dependencies; run scripts/link-layout for the best layout (docs/benchmarks.md)"
        );
    }
}

/// The manifests of the crates linked into loki (loki's, crates/wire's and crates/rag's).
const MANIFESTS: [&str; 3] = [
    "Cargo.toml",
    "crates/wire/Cargo.toml",
    "crates/rag/Cargo.toml",
];

/// What the symbol names of a release build depend on, as a hash (FNV-1a): the locked
/// packages (Cargo.lock), and Cargo.toml's dependency, feature and profile sections —
/// not its comments, description or dev-dependencies, whose edits leave every symbol
/// as it was. `scripts/link-layout` computes the same.
fn layout_fingerprint(root: &Path) -> String {
    let mut hash: u64 = 0xCBF2_9CE4_8422_2325;
    let mut feed = |text: &str| {
        for byte in text.bytes().chain([b'\n']) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01B3);
        }
    };
    let lock = fs::read_to_string(root.join("Cargo.lock")).unwrap_or_default();
    for line in lock
        .lines()
        .filter(|l| l.starts_with("name = ") || l.starts_with("version = "))
    {
        feed(line);
    }
    for manifest in MANIFESTS {
        let manifest = fs::read_to_string(root.join(manifest)).unwrap_or_default();
        let mut counted = false;
        for line in manifest.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.starts_with('[') {
                counted = (line.contains("dependencies") && !line.contains("dev-dependencies"))
                    || line.starts_with("[features")
                    || line.starts_with("[profile.release")
                    || line.starts_with("[profile.dist");
            }
            if counted && !line.is_empty() {
                feed(line);
            }
        }
    }
    format!("{hash:016x}")
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
