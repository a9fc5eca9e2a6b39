//! `functions/bin/<tool>`: one small shell script per tool that runs it from a shell the
//! way loki runs it for a model (`loki --run-tool NAME '{…}'`: approval, confinement and
//! output limits included), as Loki's `bin/` wrappers do. `--build-tools` writes them for
//! the built-in and script tools; the first run writes them for the built-in tools, with
//! an empty `functions/mcp.json`.

use std::path::Path;

/// What a wrapper runs: this loki, with the config directory it was written for.
#[derive(Debug, Clone, Copy)]
pub struct Runner<'a> {
    /// The loki executable.
    pub exe: &'a Path,
    /// The config directory the wrappers belong to (`LOKI_CONFIG_DIR` unless the caller
    /// sets another): a wrapper run from any shell finds its tools and settings.
    pub config_dir: &'a Path,
}

/// The wrapper script for tool `name`.
pub fn script(runner: Runner<'_>, name: &str) -> String {
    format!(
        "#!/bin/sh\n# Written by loki: runs the `{name}` tool as loki runs it for a model (approval and\n# confinement included). Arguments: one JSON object, e.g. '{{\"path\": \".\"}}'.\nif [ -z \"${{LOKI_CONFIG_DIR:-}}\" ]; then LOKI_CONFIG_DIR={}; export LOKI_CONFIG_DIR; fi\nexec {} --run-tool {} \"$@\"\n",
        quote(&runner.config_dir.display().to_string()),
        quote(&runner.exe.display().to_string()),
        quote(name)
    )
}

/// `text` in single quotes for sh.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Writes the wrappers of `names` into `bin_dir` (0755), replacing older ones; how many
/// were written. Names that could not be file names are left out.
pub fn write(bin_dir: &Path, runner: Runner<'_>, names: &[String]) -> std::io::Result<usize> {
    std::fs::create_dir_all(bin_dir)?;
    let mut written = 0;
    for name in names {
        if name.is_empty() || name.starts_with('.') || name.contains(['/', '\\', '\0']) {
            continue;
        }
        let path = bin_dir.join(name);
        crate::atomic_file::write_atomic(&path, script(runner, name).as_bytes(), false)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        }
        written += 1;
    }
    Ok(written)
}

/// First run: `functions/mcp.json` (no servers) and the built-in tools' wrappers, when
/// `functions/bin` does not exist yet. Nothing the user has is overwritten.
pub fn install_builtins(functions_dir: &Path, runner: Runner<'_>) -> std::io::Result<()> {
    let mcp = functions_dir.join("mcp.json");
    if !mcp.exists() {
        std::fs::create_dir_all(functions_dir)?;
        crate::atomic_file::write_atomic(&mcp, b"{\n  \"mcpServers\": {}\n}\n", false)?;
    }
    let bin = functions_dir.join("bin");
    if bin.exists() {
        return Ok(());
    }
    let names: Vec<String> = super::builtin::BUILTINS
        .iter()
        .map(|b| b.name.to_string())
        .collect();
    write(&bin, runner, &names).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrappers_quote_what_they_run() {
        let runner = Runner {
            exe: Path::new("/opt/it's here/loki"),
            config_dir: Path::new("/home/a b/.config/loki"),
        };
        let text = script(runner, "fs_ls");
        assert!(text.starts_with("#!/bin/sh\n"));
        assert!(
            text.ends_with(
                "then LOKI_CONFIG_DIR='/home/a b/.config/loki'; export LOKI_CONFIG_DIR; fi\n\
                 exec '/opt/it'\\''s here/loki' --run-tool 'fs_ls' \"$@\"\n"
            ),
            "{text}"
        );
    }

    fn runner(config_dir: &Path) -> Runner<'_> {
        Runner {
            exe: Path::new("/bin/loki"),
            config_dir,
        }
    }

    #[test]
    fn first_run_installs_once_and_keeps_the_user_s_files() {
        let dir = tempfile::tempdir().unwrap();
        let functions = dir.path().join("functions");
        install_builtins(&functions, runner(dir.path())).unwrap();
        assert!(functions.join("bin/fs_ls").exists());
        let mcp = functions.join("mcp.json");
        assert!(
            std::fs::read_to_string(&mcp)
                .unwrap()
                .contains("mcpServers")
        );
        std::fs::write(&mcp, "{\"mcpServers\": {\"mine\": {}}}").unwrap();
        std::fs::remove_file(functions.join("bin/fs_ls")).unwrap();
        install_builtins(&functions, runner(dir.path())).unwrap();
        assert!(std::fs::read_to_string(&mcp).unwrap().contains("mine"));
        assert!(!functions.join("bin/fs_ls").exists());
    }
}
