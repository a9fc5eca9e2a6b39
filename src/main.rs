//! The `loki` binary: everything happens in [`loki::main_entry`].

fn main() -> std::process::ExitCode {
    loki::main_entry()
}
