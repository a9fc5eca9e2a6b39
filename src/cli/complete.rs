//! Dynamic shell completion: `source <(COMPLETE=bash loki)` registers a completer that
//! calls loki back on every Tab, and these functions supply the values of `-m`, `-r` and
//! `-s` from the user's configuration.
//!
//! They only read files: no provider is contacted, no local server probed, nothing is
//! written, and any error simply yields no candidates.

use std::ffi::OsStr;

use clap_complete::engine::CompletionCandidate;

use crate::client::ProviderRegistry;
use crate::config::clients::ModelKind;
use crate::config::{Env, Paths};

/// Handles a `COMPLETE=<shell>` invocation and exits; returns otherwise.
pub fn complete_from_env() {
    clap_complete::CompleteEnv::with_factory(command)
        .bin("loki")
        .complete();
}

/// Supplies the candidates for one argument.
type Completer = fn(&OsStr) -> Vec<CompletionCandidate>;

/// loki's command line with the completers of the arguments that name configured things.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    use clap_complete::engine::ArgValueCompleter;
    let completers: [(&str, Completer); 7] = [
        ("model", models),
        ("role", roles),
        ("session", sessions),
        ("rag", rags),
        ("macro_name", macros),
        ("agent", agents),
        ("agent_variable", agent_variables),
    ];
    let mut cmd = super::args::Args::command();
    for (id, complete) in completers {
        cmd = cmd.mut_arg(id, |arg| arg.add(ArgValueCompleter::new(complete)));
    }
    cmd
}

fn matching(current: &OsStr, values: Vec<(String, Option<String>)>) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy();
    values
        .into_iter()
        .filter(|(value, _)| value.starts_with(current.as_ref()))
        .map(|(value, help)| CompletionCandidate::new(value).help(help.map(Into::into)))
        .collect()
}

/// The names `list` finds under the configured paths that start with `current`.
fn names(current: &OsStr, list: impl FnOnce(&Paths) -> Vec<String>) -> Vec<CompletionCandidate> {
    let (_, paths) = paths();
    let values = list(&paths).into_iter().map(|name| (name, None)).collect();
    matching(current, values)
}

fn paths() -> (Env, Paths) {
    let env = Env::capture();
    let paths = Paths::resolve(&env);
    (env, paths)
}

/// Chat models of the configured clients (or of the zero-config provider).
pub fn models(current: &OsStr) -> Vec<CompletionCandidate> {
    let (env, paths) = paths();
    // Completion never asks for the vault's password.
    let config = match crate::vault::load_config(&paths, &env, crate::vault::NoPrompt) {
        Ok((Some(loaded), _)) => loaded.config,
        Ok((None, _)) => match crate::config::zero::from_env(&env) {
            Ok(Some(found)) => found.config,
            Ok(None) | Err(_) => return Vec::new(),
        },
        Err(_) => return Vec::new(),
    };
    let overrides = std::fs::read_to_string(&paths.models_override_file).ok();
    let registry = ProviderRegistry::new(&config, &env, overrides);
    let models = registry.models(ModelKind::Chat).unwrap_or_default();
    matching(
        current,
        models
            .into_iter()
            .map(|m| {
                let help = m
                    .config
                    .max_input_tokens
                    .map(|n| format!("{}k context", n / 1000));
                (m.id(), help)
            })
            .collect(),
    )
}

/// Built-in and user roles.
pub fn roles(current: &OsStr) -> Vec<CompletionCandidate> {
    names(current, |paths| crate::role::list(&paths.roles_dir))
}

/// Saved sessions, by name (or id when unnamed).
pub fn sessions(current: &OsStr) -> Vec<CompletionCandidate> {
    names(current, |paths| {
        crate::conversation::catalog::saved_session_names(&paths.sessions_dir)
    })
}

/// Saved knowledge bases.
pub fn rags(current: &OsStr) -> Vec<CompletionCandidate> {
    names(current, |paths| crate::rag::list(&paths.rags_dir))
}

/// `--macro` values: macro names.
pub fn macros(current: &OsStr) -> Vec<CompletionCandidate> {
    names(current, |paths| crate::macros::list(&paths.macros_dir))
}

/// `-a`/`--agent` values: installed and built-in agents.
pub fn agents(current: &OsStr) -> Vec<CompletionCandidate> {
    names(current, |paths| crate::agent::list(&paths.agents_dir))
}

/// `--agent-variable` names: the variables of the agent the command line names with
/// `-a`/`--agent` (else of every agent), with their descriptions.
pub fn agent_variables(current: &OsStr) -> Vec<CompletionCandidate> {
    let (_, paths) = paths();
    let args: Vec<String> = std::env::args().collect();
    let named = args
        .windows(2)
        .find_map(|pair| matches!(pair[0].as_str(), "-a" | "--agent").then(|| pair[1].clone()));
    let agents = match named {
        Some(name) => vec![name],
        None => crate::agent::list(&paths.agents_dir),
    };
    let mut values = Vec::new();
    for agent in agents {
        let file = paths.agents_dir.join(&agent).join("config.yaml");
        let Ok(text) = crate::atomic_file::read_regular_text(&file, 1024 * 1024) else {
            continue;
        };
        let Ok(config) = serde_yaml::from_str::<serde_yaml::Value>(&text) else {
            continue;
        };
        for variable in config["variables"].as_sequence().into_iter().flatten() {
            if let Some(name) = variable["name"].as_str() {
                let help = variable["description"].as_str().map(str::to_string);
                values.push((name.to_string(), help));
            }
        }
    }
    matching(current, values)
}
