//! Custom `.tmTheme` files, the light/dark choice (`theme`, `light_theme`, `COLORFGBG`,
//! `.set theme`) and broken theme files.

use crate::common::TestEnv;
use crate::common::fake_llm::openai;
use crate::common::pty::Pty;

const ANSWER: &[&str] = &["# Heading\n\n", "```rust\nfn main() {}\n```\n"];

/// A theme whose default text colour is `fg` and whose headings are `heading`.
fn theme(fg: &str, heading: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict>
<key>name</key><string>Test</string>
<key>settings</key><array>
<dict><key>settings</key><dict><key>foreground</key><string>{fg}</string>
<key>background</key><string>#000000</string></dict></dict>
<dict><key>scope</key><string>markup.heading</string>
<key>settings</key><dict><key>foreground</key><string>{heading}</string></dict></dict>
</array></dict></plist>
"#
    )
}

const DARK_FG: &str = "38;2;250;1;2";
const DARK_HEADING: &str = "38;2;10;11;12";
const LIGHT_FG: &str = "38;2;3;201;4";

fn env_with_themes() -> TestEnv {
    let env = TestEnv::new();
    std::fs::write(
        env.config_dir().join("dark.tmTheme"),
        theme("#FA0102", "#0A0B0C"),
    )
    .unwrap();
    std::fs::write(
        env.config_dir().join("light.tmTheme"),
        theme("#03C904", "#0A0B0D"),
    )
    .unwrap();
    env
}

fn answer(env: &TestEnv, extra: &[(&str, &str)]) -> String {
    env.server.push(openai::text_stream(ANSWER));
    let mut pty = Pty::spawn(env, &["hi"], extra);
    let screen = pty.read_to_end();
    assert_eq!(pty.exit_code(), 0, "{screen:?}");
    screen
}

#[test]
fn a_custom_dark_theme_colours_code_and_headings() {
    let env = env_with_themes();
    let screen = answer(&env, &[]);
    assert!(
        screen.contains(DARK_FG),
        "code in the theme's colour: {screen:?}"
    );
    assert!(
        screen.contains(DARK_HEADING),
        "heading from the theme: {screen:?}"
    );
    assert!(!screen.contains(LIGHT_FG), "{screen:?}");
    assert!(!screen.contains("warning"), "{screen:?}");
}

#[test]
fn the_light_theme_file_is_used_for_theme_light_and_colorfgbg() {
    let env = env_with_themes();
    let screen = answer(&env, &[("LOKI_THEME", "light")]);
    assert!(screen.contains(LIGHT_FG), "{screen:?}");
    assert!(!screen.contains(DARK_FG), "{screen:?}");
    // A light terminal background (COLORFGBG) picks the light theme when `theme` is unset.
    let screen = answer(&env, &[("COLORFGBG", "0;15")]);
    assert!(screen.contains(LIGHT_FG), "{screen:?}");
    // ... and an explicit `theme` wins over it.
    let screen = answer(&env, &[("COLORFGBG", "0;15"), ("LOKI_THEME", "dark")]);
    assert!(screen.contains(DARK_FG), "{screen:?}");
}

#[test]
fn colorfgbg_and_light_theme_show_in_info() {
    let env = TestEnv::new();
    let info = |vars: &[(&str, &str)]| {
        let mut cmd = env.loki();
        cmd.arg("--info");
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let out = cmd.assert().success();
        let text = crate::common::stdout(&out);
        text.lines()
            .find(|l| l.starts_with("theme "))
            .map(|l| l.split_whitespace().nth(1).unwrap_or("").to_string())
            .unwrap_or_default()
    };
    assert_eq!(info(&[]), "dark");
    assert_eq!(info(&[("COLORFGBG", "0;15")]), "light");
    assert_eq!(info(&[("COLORFGBG", "15;0")]), "dark");
    assert_eq!(info(&[("LOKI_LIGHT_THEME", "true")]), "light");
    assert_eq!(
        info(&[("COLORFGBG", "0;15"), ("LOKI_THEME", "dark")]),
        "dark"
    );
}

#[test]
fn a_broken_theme_warns_in_one_line_and_the_built_in_is_used() {
    let env = TestEnv::new();
    std::fs::write(env.config_dir().join("dark.tmTheme"), "<plist><dict>oops").unwrap();
    let screen = answer(&env, &[]);
    let warning = screen
        .lines()
        .find(|l| l.contains("warning: invalid theme at"))
        .unwrap_or_else(|| panic!("no warning: {screen:?}"));
    assert!(warning.contains("dark.tmTheme"), "{warning}");
    assert!(warning.contains("built-in dark theme"), "{warning}");
    assert!(screen.contains("38;2;"), "still highlighted: {screen:?}");
    assert!(screen.contains("Heading"), "{screen:?}");
}

#[test]
fn set_theme_in_the_repl_switches_theme_files() {
    let env = env_with_themes();
    for _ in 0..3 {
        env.server.push(openai::text_stream(ANSWER));
    }
    let mut pty = Pty::spawn(&env, &[], &[]);
    pty.expect("fake:gpt-4o-mini)");
    pty.send("hi\r");
    pty.expect("Heading");
    let first = pty.expect("fake:gpt-4o-mini)");
    assert!(first.contains(DARK_FG), "{first:?}");
    pty.send(".set theme light\r");
    pty.expect("theme: light");
    pty.expect("fake:gpt-4o-mini)");
    pty.send("again\r");
    pty.expect("Heading");
    let second = pty.expect("fake:gpt-4o-mini)");
    assert!(second.contains(LIGHT_FG), "{second:?}");
    assert!(!second.contains(DARK_FG), "{second:?}");
    pty.send(".set theme purple\r");
    pty.expect("expected dark or light");
    pty.expect("fake:gpt-4o-mini)");
    // `null` goes back to the configured (here: default dark) theme.
    pty.send(".set theme null\r");
    pty.expect("theme: null");
    pty.expect("fake:gpt-4o-mini)");
    pty.send("third\r");
    pty.expect("Heading");
    let third = pty.expect("fake:gpt-4o-mini)");
    assert!(third.contains(DARK_FG), "{third:?}");
    pty.send("\x04");
    pty.read_to_end();
}

/// Issue 27 item 3: a theme naming ~70,000 scopes would fill syntect's process-wide scope
/// table and make it panic on the first code block; it is refused with the usual
/// one-line warning and the built-in theme colours the answer.
#[test]
fn a_theme_with_too_many_scopes_is_refused_not_a_crash() {
    let env = TestEnv::new();
    let scopes: Vec<String> = (0..70_000).map(|i| format!("s{i}")).collect();
    let text = theme("#ffffff", "#ff0000").replace(
        "<string>markup.heading</string>",
        &format!("<string>{}</string>", scopes.join(", ")),
    );
    std::fs::write(env.config_dir().join("dark.tmTheme"), text).unwrap();
    let screen = answer(&env, &[]);
    let warning = screen
        .lines()
        .find(|l| l.contains("warning: invalid theme at"))
        .unwrap_or_else(|| panic!("no warning: {screen:?}"));
    assert!(warning.contains("distinct parts"), "{warning}");
    assert!(screen.contains("38;2;"), "still highlighted: {screen:?}");
    assert!(screen.contains("main"), "{screen:?}");
}
