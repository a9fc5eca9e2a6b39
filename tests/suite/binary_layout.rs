//! The executable's link-time layout (build.rs, `link/hot-text.ld`, docs/benchmarks.md
//! "Memory"): the functions a one-shot answer runs are linked together into `.text.hot`
//! ahead of the rest of the code, and the relocations are packed (DT_RELR) exactly when
//! the C library loki runs with can load them. The memory this saves is measured by
//! `scripts/bench` on a release build; these tests guard the wiring on the binary under
//! test, which is linked the same way. build.rs records what it applied (nothing when
//! `LOKI_LINK_LAYOUT=off` or a linker of the build's own is configured), and each test
//! checks the binary against that.
#![cfg(all(
    target_os = "linux",
    target_env = "gnu",
    target_pointer_width = "64",
    target_endian = "little"
))]

use crate::common::LOKI;

struct Section {
    name: String,
    kind: u32,
    addr: u64,
    size: u64,
}

const SHT_RELR: u32 = 19;

/// The section headers of a little-endian ELF64 file.
fn sections(elf: &[u8]) -> Vec<Section> {
    assert_eq!(&elf[..4], b"\x7fELF", "not an ELF file");
    assert_eq!(elf[4], 2, "not ELF64");
    let u16_at = |o: usize| u16::from_le_bytes([elf[o], elf[o + 1]]) as usize;
    let u32_at = |o: usize| u32::from_le_bytes(elf[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap());
    let (shoff, shentsize, shnum, shstrndx) = (
        u64_at(0x28) as usize,
        u16_at(0x3a),
        u16_at(0x3c),
        u16_at(0x3e),
    );
    let header = |i: usize| shoff + i * shentsize;
    let strtab = u64_at(header(shstrndx) + 0x18) as usize;
    (0..shnum)
        .map(|i| {
            let h = header(i);
            let name_at = strtab + u32_at(h) as usize;
            let end = elf[name_at..].iter().position(|&b| b == 0).unwrap();
            Section {
                name: String::from_utf8_lossy(&elf[name_at..name_at + end]).into_owned(),
                kind: u32_at(h + 4),
                addr: u64_at(h + 0x10),
                size: u64_at(h + 0x20),
            }
        })
        .collect()
}

fn loki_sections() -> Vec<Section> {
    sections(&std::fs::read(LOKI).unwrap())
}

/// What build.rs decided: `script`, `no-unwind`, `relr` (passed to the linker), `native` (building for
/// the building machine).
fn applied(what: &str) -> bool {
    env!("LOKI_LINK_LAYOUT_APPLIED")
        .split(',')
        .any(|w| w == what)
}

#[test]
fn the_functions_a_one_shot_answer_runs_are_linked_together_before_the_rest() {
    let all = loki_sections();
    let hot = all.iter().find(|s| s.name == ".text.hot");
    if !applied("script") {
        assert!(
            hot.is_none(),
            "a .text.hot section without link/hot-text.ld"
        );
        return;
    }
    let hot = hot.expect("link/hot-text.ld was passed but loki has no .text.hot section");
    let text = all.iter().find(|s| s.name == ".text").unwrap();
    // Unoptimised code differs from the release build the list was measured on, but the
    // hash-free patterns still match most of the functions that run.
    assert!(
        hot.size > 64 * 1024,
        ".text.hot holds only {} bytes",
        hot.size
    );
    assert!(
        hot.addr < text.addr,
        ".text.hot is not placed ahead of .text"
    );
}

#[test]
fn relocations_are_packed_only_when_the_c_library_can_load_them() {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let libc = maps
        .lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .find(|path| path.ends_with("/libc.so.6"))
        .expect("this test process maps no libc.so.6");
    let needle = b"GLIBC_ABI_DT_RELR";
    let supported = std::fs::read(libc)
        .unwrap()
        .windows(needle.len())
        .any(|w| w == needle);
    let all = loki_sections();
    let packed = all.iter().any(|s| s.kind == SHT_RELR && s.size > 0);
    assert_eq!(
        packed,
        applied("relr"),
        "packed relocations: {packed}, requested by build.rs: {}",
        applied("relr")
    );
    if packed {
        assert!(
            supported,
            "relocations are packed but {libc} cannot load them"
        );
        let rela = all
            .iter()
            .find(|s| s.name == ".rela.dyn")
            .map_or(0, |s| s.size);
        assert!(rela < 64 * 1024, ".rela.dyn still holds {rela} bytes");
    } else if cfg!(target_arch = "x86_64") && supported && applied("native") && applied("script") {
        panic!("{libc} can load packed relocations but build.rs did not ask for them");
    }
}

#[test]
fn unwind_tables_are_dropped_only_from_release_builds() {
    let unwind = loki_sections()
        .into_iter()
        .find(|s| s.name == ".eh_frame")
        .map_or(0, |s| s.size);
    if applied("no-unwind") {
        assert_eq!(
            unwind, 0,
            "link/no-unwind.ld was passed but .eh_frame remains"
        );
    } else {
        // A debug build unwinds on panic (a task's panic is caught by tokio and reported):
        // its tables must be there.
        assert!(unwind > 0, "a build that unwinds has no .eh_frame");
    }
}

/// glibc's libm is not loaded: the four math functions loki's dependencies call are
/// defined in the binary (src/libm_functions.rs), so the linker drops the library and its
/// IFUNC resolvers do not run (and keep its code resident) at every start. The loader
/// lists what it would load when asked to trace (`ldd` does the same).
#[test]
fn the_math_library_is_not_loaded() {
    let out = std::process::Command::new(LOKI)
        .env("LD_TRACE_LOADED_OBJECTS", "1")
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("libc.so"), "no loader trace: {listed}");
    assert!(
        !listed.contains("libm.so"),
        "libm is still loaded: {listed}"
    );
}
