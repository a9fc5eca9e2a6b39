//! The `loki` binary: everything happens in [`loki::main_entry`].

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod libm_functions;

fn main() -> std::process::ExitCode {
    loki::main_entry()
}
