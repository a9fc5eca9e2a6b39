//! `--build-tools`: checks every script in `functions/tools/`, prints the declarations
//! of the visible ones and names the files `visible_tools` hides.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use crate::render::theme::{Style, Theme};
use crate::state::AppState;
use loki_wire::sanitize;

/// Runs the check; returns the exit status (1 when a file has errors).
pub(super) fn run(state: &AppState) -> anyhow::Result<u8> {
    let dir = state.paths.functions_dir.join("tools");
    // Every file is checked, hidden or not, so a hidden file's error shows up too.
    let (tools, errors) = crate::tool::script::load_dir(&dir, None);
    let visible = state.config.visible_tools.as_deref();
    let is_visible = |path: &Path| {
        visible.is_none_or(|v| v.iter().any(|name| path.file_name() == Some(name.as_ref())))
    };
    let theme = Theme::stderr(&state.terminal);
    let mut hidden = Vec::new();
    let mut wrapped = Vec::new();
    let mut declared = 0;
    {
        let mut out = std::io::stdout().lock();
        for tool in tools {
            if !is_visible(&tool.path) {
                hidden.push(file_name(&tool.path));
                continue;
            }
            let spec = crate::tool::Tool::Script(Arc::new(tool)).spec();
            writeln!(out, "{}", serde_json::to_string_pretty(&spec)?)?;
            wrapped.push(spec.name.clone());
            declared += 1;
        }
    }
    let mut err = std::io::stderr().lock();
    for error in &errors {
        if !is_visible(&error.path) {
            hidden.push(file_name(&error.path));
        }
        writeln!(
            err,
            "{} {}",
            theme.paint(Style::Error, "error:"),
            sanitize::display(&error.to_string())
        )?;
    }
    if !hidden.is_empty() {
        hidden.sort();
        writeln!(
            err,
            "{} hidden by visible_tools (not declared to models): {}",
            theme.paint(Style::Warning, "note:"),
            sanitize::display(&hidden.join(", "))
        )?;
    }
    writeln!(
        err,
        "{declared} script tool(s) declared, {} hidden, {} with errors, in {}",
        hidden.len(),
        errors.len(),
        dir.display()
    )?;
    // `functions/bin/<tool>`: every tool runnable from a shell, as in Loki.
    let mut names: Vec<String> = crate::tool::builtin::BUILTINS
        .iter()
        .map(|b| b.name.to_string())
        .collect();
    names.extend(wrapped);
    let bin = state.paths.functions_dir.join("bin");
    let written = std::env::current_exe().and_then(|exe| {
        let runner = crate::tool::wrappers::Runner {
            exe: &exe,
            config_dir: &state.paths.config_dir,
        };
        crate::tool::wrappers::write(&bin, runner, &names)
    });
    match written {
        Ok(written) => writeln!(
            err,
            "{written} wrapper(s) in {} (run one: {}/fs_ls '{{\"path\": \".\"}}')",
            bin.display(),
            bin.display()
        )?,
        Err(e) => {
            writeln!(
                err,
                "{} cannot write the wrappers in {}: {e}",
                theme.paint(Style::Error, "error:"),
                bin.display()
            )?;
            return Ok(1);
        }
    }
    Ok(u8::from(!errors.is_empty()))
}

/// `--build-tools -a NAME`: checks the agent's tools file and global tools, and prints
/// the declarations the agent offers (its own tools, then its global tools); an error in
/// the file or a global tool that is not there is exit status 1.
pub(super) fn run_agent(state: &AppState, name: &str) -> anyhow::Result<u8> {
    let theme = Theme::stderr(&state.terminal);
    let def = match crate::agent::AgentDef::load(&state.paths, name, &state.env) {
        Ok(def) => def,
        Err(e) => {
            crate::term::report_error(&theme, &e.to_string());
            return Ok(1);
        }
    };
    let globals = def.config.global_tools.join(",");
    let global =
        crate::tool::enabled_tools(&state.config, &state.script_tools().tools, Some(&globals));
    let missing =
        crate::tool::missing_global_tools(&state.config, &global, &def.config.global_tools);
    // What the agent offers a model: its own tools, then the global tools it names (one
    // with the name of its own tool is shadowed, as in a conversation).
    let own: Vec<crate::tool::Tool> = def
        .tools
        .iter()
        .map(|tool| crate::tool::Tool::Script(Arc::clone(tool)))
        .collect();
    let global: Vec<crate::tool::Tool> = global
        .into_iter()
        .filter(|g| !own.iter().any(|t| t.name() == g.name()))
        .collect();
    let mut out = std::io::stdout().lock();
    for tool in own.iter().chain(&global) {
        writeln!(out, "{}", serde_json::to_string_pretty(&tool.spec())?)?;
    }
    drop(out);
    let mut err = std::io::stderr().lock();
    for name in &missing {
        writeln!(
            err,
            "{} global tool `{}` of agent `{}` does not exist or is hidden by visible_tools",
            theme.paint(Style::Error, "error:"),
            sanitize::display(name),
            def.name
        )?;
    }
    writeln!(
        err,
        "{} tool(s) of its own and {} global tool(s) for agent `{}`",
        def.tools.len(),
        global.len(),
        def.name
    )?;
    Ok(u8::from(!missing.is_empty()))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
