//! Colour themes: whether the terminal is light or dark, and which syntect theme colours
//! code (and, for a custom theme, the markdown markup).
//!
//! Owns: the built-in dark/light themes (syntect's bundled ones), the user's
//! `dark.tmTheme` / `light.tmTheme` in the config directory, reading `COLORFGBG`, and
//! looking up colours for markup scopes in a theme.
//! Does not own: the light/dark setting itself (`theme`, `light_theme` in the config) or
//! writing escapes.
//!
//! Nothing is read at startup: a custom theme file is parsed the first time a renderer
//! that highlights is created (once per process; a broken file warns once and the built-in
//! theme is used), and the built-in themes on the first code block.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use syntect::highlighting::{Color, Highlighter, Theme, ThemeSet};
use syntect::parsing::Scope;

/// Built-in theme for dark terminals.
const DARK_THEME: &str = "base16-ocean.dark";
/// Built-in theme for light terminals.
const LIGHT_THEME: &str = "InspiredGitHub";

/// The directory holding `dark.tmTheme` / `light.tmTheme` (the config directory).
static THEME_DIR: RwLock<Option<PathBuf>> = RwLock::new(None);
/// Custom theme files already read: the parsed theme, or `None` when the file was broken
/// (and the warning already shown).
static CUSTOM: OnceLock<Mutex<HashMap<PathBuf, Option<Arc<Theme>>>>> = OnceLock::new();
/// The built-in (dark, light) themes, loaded on first use.
static BUILTIN: OnceLock<(Arc<Theme>, Arc<Theme>)> = OnceLock::new();

/// Custom themes are looked up in `dir` from now on.
pub fn use_config_dir(dir: &Path) {
    if let Ok(mut slot) = THEME_DIR.write() {
        *slot = Some(dir.to_path_buf());
    }
}

/// The file name of the custom theme for a light or dark terminal.
pub fn file_name(light: bool) -> &'static str {
    if light {
        "light.tmTheme"
    } else {
        "dark.tmTheme"
    }
}

/// The path of the custom theme for a light or dark terminal, if a config directory is known.
pub fn custom_path(light: bool) -> Option<PathBuf> {
    let dir = THEME_DIR.read().ok()?.clone()?;
    Some(dir.join(file_name(light)))
}

/// The user's theme for a light or dark terminal: `None` when there is no such file, or
/// when it cannot be used (then a one-line warning was printed, once per file).
pub(crate) fn custom(light: bool) -> Option<Arc<Theme>> {
    let path = custom_path(light)?;
    // No file: the built-in theme. Anything else there (a directory, a FIFO, a link to a
    // device or to nothing) is a theme that cannot be used: the warning below says so.
    std::fs::symlink_metadata(&path).ok()?;
    let cache = CUSTOM.get_or_init(|| Mutex::new(HashMap::new()));
    let mut cache = cache.lock().ok()?;
    if let Some(known) = cache.get(&path) {
        return known.clone();
    }
    let loaded = match load_file(&path) {
        Ok(theme) => Some(Arc::new(theme)),
        Err(reason) => {
            warn(&format!(
                "invalid theme at '{}': {reason}; using the built-in {} theme",
                path.display(),
                if light { "light" } else { "dark" }
            ));
            None
        }
    };
    cache.insert(path, loaded.clone());
    loaded
}

/// The most distinct scope-name parts a theme may use. syntect keeps every scope name
/// of the process in one table of at most 65,533 parts and panics when a later scope
/// does not fit; real themes use a few hundred.
const MAX_THEME_ATOMS: usize = 8192;

/// The largest theme file read.
const MAX_THEME_BYTES: u64 = 8 * 1024 * 1024;

/// Why a `.tmTheme` file cannot be used; each is one line.
#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    /// The file cannot be read (or is not a regular file, or too large).
    #[error(transparent)]
    Read(#[from] std::io::Error),
    /// More scope-name parts than syntect can hold.
    #[error("its scopes name more than {MAX_THEME_ATOMS} distinct parts, more than can be used")]
    TooManyScopes,
    /// Not a theme syntect reads: the first line of its error.
    #[error("{0}")]
    Parse(String),
    /// A theme without a single colour.
    #[error("no colours defined")]
    NoColours,
}

/// Parses a `.tmTheme` file.
pub fn load_file(path: &Path) -> Result<Theme, ThemeError> {
    let text = crate::atomic_file::read_regular_text(path, MAX_THEME_BYTES)?;
    if scope_atoms(&text) > MAX_THEME_ATOMS {
        return Err(ThemeError::TooManyScopes);
    }
    let theme =
        ThemeSet::load_from_reader(&mut std::io::Cursor::new(text.as_bytes())).map_err(|e| {
            let text = e.to_string();
            ThemeError::Parse(text.lines().next().unwrap_or("unreadable").to_string())
        })?;
    if theme.settings.foreground.is_none() && theme.scopes.is_empty() {
        return Err(ThemeError::NoColours);
    }
    Ok(theme)
}

/// How many distinct parts (`entity`, `name`, `function` …) the `scope` strings of a
/// `.tmTheme` file name, counted before syntect sees them.
fn scope_atoms(text: &str) -> usize {
    let mut atoms = std::collections::HashSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("<key>scope</key>") {
        rest = &rest[at + "<key>scope</key>".len()..];
        let Some(start) = rest.find("<string>") else {
            break;
        };
        let value = &rest[start + "<string>".len()..];
        let end = value.find("</string>").unwrap_or(value.len());
        for atom in value[..end]
            .split(|c: char| c.is_whitespace() || matches!(c, '.' | ',' | '|' | '&' | '(' | ')'))
            .filter(|a| !a.is_empty() && *a != "-")
        {
            atoms.insert(atom);
            if atoms.len() > MAX_THEME_ATOMS {
                return atoms.len();
            }
        }
        rest = &value[end..];
    }
    atoms.len()
}

/// The built-in theme for a light or dark terminal.
pub(crate) fn builtin(light: bool) -> Arc<Theme> {
    let (dark, light_theme) = BUILTIN.get_or_init(|| {
        let mut set = ThemeSet::load_defaults().themes;
        let dark = set.remove(DARK_THEME).unwrap_or_default();
        let light = set.remove(LIGHT_THEME).unwrap_or_default();
        (Arc::new(dark), Arc::new(light))
    });
    Arc::clone(if light { light_theme } else { dark })
}

/// `dark` => false, `light` => true (the values of the `theme` setting).
pub fn parse_theme(value: &str) -> Option<bool> {
    match value {
        "dark" => Some(false),
        "light" => Some(true),
        _ => None,
    }
}

/// What a front end takes from the terminal at start-up, before building the shared
/// state: custom themes are looked for under `paths`' config directory, and without a
/// configured theme a light background announced by `COLORFGBG` selects the light one.
pub fn adopt_terminal(
    config: &mut crate::config::AppConfig,
    paths: &crate::config::Paths,
    env: &crate::config::Env,
) {
    use_config_dir(&paths.config_dir);
    if config.theme.is_none() && !config.light_theme {
        let detected = env.get("COLORFGBG").and_then(light_from_colorfgbg);
        config.theme = detected.map(|light| if light { "light" } else { "dark" }.into());
    }
}

/// The light/dark choice a `COLORFGBG` value (`fg;bg`, as set by rxvt, Konsole and
/// others) implies: a white or light-grey background is light. `None` when it says nothing.
pub fn light_from_colorfgbg(value: &str) -> Option<bool> {
    let bg: u8 = value.rsplit(';').next()?.trim().parse().ok()?;
    Some(matches!(bg, 7 | 9..=15))
}

/// The 24-bit foreground a theme gives the first of `scopes` it has a rule for; `None` when
/// it has none (the theme's default text colour is not a markup colour).
pub(crate) fn scope_colour(theme: &Theme, scopes: &[&str]) -> Option<(u8, u8, u8)> {
    let highlighter = Highlighter::new(theme);
    scopes.iter().find_map(|name| {
        let scope = Scope::new(name).ok()?;
        let fg: Color = highlighter.style_mod_for_stack(&[scope]).foreground?;
        Some((fg.r, fg.g, fg.b))
    })
}

fn warn(message: &str) {
    let message = loki_wire::sanitize::display(message);
    let _ = writeln!(std::io::stderr().lock(), "warning: {message}");
}

#[cfg(test)]
mod tests {
    use super::*;

    const THEME: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict>
<key>name</key><string>Test</string>
<key>settings</key><array>
<dict><key>settings</key><dict><key>foreground</key><string>#010203</string></dict></dict>
<dict><key>scope</key><string>markup.heading</string>
<key>settings</key><dict><key>foreground</key><string>#FF0001</string></dict></dict>
</array></dict></plist>
"#;

    #[test]
    fn colorfgbg_light_and_dark() {
        assert_eq!(light_from_colorfgbg("0;15"), Some(true));
        assert_eq!(light_from_colorfgbg("0;default;7"), Some(true));
        assert_eq!(light_from_colorfgbg("15;0"), Some(false));
        assert_eq!(light_from_colorfgbg("15;8"), Some(false));
        assert_eq!(light_from_colorfgbg("default"), None);
        assert_eq!(light_from_colorfgbg(""), None);
    }

    #[test]
    fn a_theme_file_gives_scope_colours() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dark.tmTheme");
        std::fs::write(&path, THEME).unwrap();
        let theme = load_file(&path).unwrap();
        assert_eq!(scope_colour(&theme, &["markup.heading"]), Some((255, 0, 1)));
        assert_eq!(scope_colour(&theme, &["markup.quote"]), None);
        std::fs::write(&path, "not a plist").unwrap();
        let err = load_file(&path).unwrap_err();
        assert!(matches!(err, ThemeError::Parse(_)), "{err}");
        assert!(!err.to_string().contains('\n'), "{err}");
    }
}
