//! Finding the configuration: the config file, else the environment, else a local model
//! server, else (on a terminal) the first-run wizard.

use std::io::Write;

use std::sync::Arc;

use crate::config::{self, AppConfig, ConfigError, Env, Paths, TerminalCaps};
use crate::render::theme::{Style, Theme};
use crate::term::vault_prompt::TerminalUnlock;
use crate::vault::Keyring;
use loki_wire::sanitize;

/// Applies `LOKI_<KEY>` overrides to a configuration synthesised without a file: the
/// overrides are read into a default configuration, which then takes the synthesised
/// clients (and model, unless `LOKI_MODEL` chose one).
fn with_env_overrides(
    synth: AppConfig,
    paths: &Paths,
    env: &Env,
) -> Result<AppConfig, ConfigError> {
    let mut config = config::load::parse("", &paths.config_file, env)?.config;
    config.clients = synth.clients;
    if config.model.is_none() {
        config.model = synth.model;
    }
    Ok(config)
}

/// Finds the configuration: the config file, else the environment, else a local model
/// server, else (on a terminal) the first-run wizard.
pub(super) async fn load_config(
    paths: &Paths,
    env: &Env,
    caps: &TerminalCaps,
    interactive: bool,
    info_only: bool,
) -> Result<(AppConfig, String, Arc<Keyring>), ConfigError> {
    // Information commands read no secret: the vault stays shut.
    let (loaded, vault) =
        crate::vault::load_config_resolving(paths, env, TerminalUnlock::new(caps), !info_only)?;
    if let Some(warning) = crate::vault::exposure_warning(vault.access()) {
        show_warnings(&[warning], caps);
    }
    let mut vault = Arc::new(vault);
    let (config, origin) = match loaded {
        Some(loaded) => {
            show_warnings(&loaded.warnings, caps);
            (loaded.config, paths.config_file.display().to_string())
        }
        None => {
            let (config, origin, made) =
                synthesise(paths, env, caps, interactive, info_only, &vault).await?;
            if let Some(made) = made {
                vault = Arc::new(made);
            }
            (config, origin)
        }
    };
    Ok((config, origin, vault))
}

fn show_warnings(warnings: &[String], caps: &TerminalCaps) {
    let theme = Theme::stderr(caps);
    let mut err = std::io::stderr().lock();
    for warning in warnings {
        let _ = writeln!(
            err,
            "{} {}",
            theme.paint(Style::Warning, "warning:"),
            sanitize::display(warning)
        );
    }
}

/// A configuration without a file: from the environment, a local model server, or (on a
/// terminal) the first-run wizard.
async fn synthesise(
    paths: &Paths,
    env: &Env,
    caps: &TerminalCaps,
    interactive: bool,
    info_only: bool,
    vault: &Keyring,
) -> Result<(AppConfig, String, Option<Keyring>), ConfigError> {
    if let Some(found) = config::zero::from_env(env)? {
        let config = with_env_overrides(found.config, paths, env)?;
        return Ok((config, found.origin, None));
    }
    if let Some(found) = crate::client::local_probe::probe_local(env).await {
        let config = with_env_overrides(found.config, paths, env)?;
        return Ok((config, found.origin, None));
    }
    if info_only {
        return Ok((AppConfig::default(), "none".into(), None));
    }
    if interactive {
        let setup = crate::cli::wizard::run(paths, env, vault, caps).await?;
        return Ok((setup.config, setup.origin, setup.vault));
    }
    Err(ConfigError::NoConfig {
        path: paths.config_file.clone(),
        vars: config::zero::hint_vars(),
    })
}
