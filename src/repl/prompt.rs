//! The REPL prompt: Loki's `left_prompt` / `right_prompt` template language and the
//! reedline `Prompt` that shows the rendered strings.
//!
//! Syntax: text is literal; `{var}` is replaced by the variable (empty when undefined);
//! `{?var tmpl}` renders `tmpl` when `var` is truthy, `{!var tmpl}` when it is not;
//! templates nest. Falsy means undefined, empty, `0` or `false`. A brace group that is
//! neither a variable name nor a conditional is printed as it is.

use std::collections::HashMap;

pub use crate::term::line_prompt::LokiPrompt;

/// Loki's default left prompt.
pub const DEFAULT_LEFT: &str = "{color.red}{model}){color.green}{?session {?agent {agent}>}{session}{?role /}}{!session {?agent {agent}>}}{role}{?rag @{rag}}{color.cyan}{?session )}{!session >}{color.reset} ";
/// Loki's default right prompt.
pub const DEFAULT_RIGHT: &str = "{color.purple}{?session {?consume_tokens {consume_tokens}({consume_percent}%)}{!consume_tokens {consume_tokens}}}{color.reset}{?mode {color.yellow} [{mode}]{color.reset}}{?sandbox {color.red} [{sandbox}]{color.reset}}";

/// ANSI colours available as `{color.<name>}`.
const COLORS: &[(&str, &str)] = &[
    ("reset", "\x1b[0m"),
    ("black", "\x1b[30m"),
    ("dark_gray", "\x1b[90m"),
    ("red", "\x1b[31m"),
    ("light_red", "\x1b[91m"),
    ("green", "\x1b[32m"),
    ("light_green", "\x1b[92m"),
    ("yellow", "\x1b[33m"),
    ("light_yellow", "\x1b[93m"),
    ("blue", "\x1b[34m"),
    ("light_blue", "\x1b[94m"),
    ("purple", "\x1b[35m"),
    ("light_purple", "\x1b[95m"),
    ("magenta", "\x1b[35m"),
    ("light_magenta", "\x1b[95m"),
    ("cyan", "\x1b[36m"),
    ("light_cyan", "\x1b[96m"),
    ("white", "\x1b[37m"),
    ("light_gray", "\x1b[97m"),
];

/// Variables a template can use.
#[derive(Debug, Default, Clone)]
pub struct Vars {
    values: HashMap<String, String>,
}

impl Vars {
    /// Empty set; add colours with [`Vars::with_colors`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets a variable; control characters in the value (a role or agent name read from
    /// a file) are shown escaped, only `{color.*}` adds escapes.
    pub fn set(&mut self, name: &str, value: impl Into<String>) {
        let value = value.into();
        let value = match loki_wire::sanitize::display(&value) {
            std::borrow::Cow::Owned(safe) => safe,
            std::borrow::Cow::Borrowed(_) => value,
        };
        self.values.insert(name.to_string(), value);
    }

    /// Defines `color.*` (to escapes when `enabled`, to nothing otherwise, so templates
    /// render the same text either way).
    pub fn with_colors(mut self, enabled: bool) -> Self {
        for (name, code) in COLORS {
            self.values.insert(
                format!("color.{name}"),
                if enabled {
                    (*code).into()
                } else {
                    String::new()
                },
            );
        }
        self
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    fn truthy(&self, name: &str) -> bool {
        self.get(name)
            .is_some_and(|v| !matches!(v, "" | "0" | "false"))
    }
}

/// Renders a template.
pub fn render(template: &str, vars: &Vars) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = matching_brace(after) else {
            out.push_str(&rest[open..]);
            return out;
        };
        render_group(&after[..close], vars, &mut out);
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

fn render_group(inner: &str, vars: &Vars, out: &mut String) {
    if let Some(cond) = inner.strip_prefix('?').or_else(|| inner.strip_prefix('!')) {
        let want = inner.starts_with('?');
        let (name, body) = cond.split_once(char::is_whitespace).unwrap_or((cond, ""));
        if vars.truthy(name) == want {
            out.push_str(&render(body, vars));
        }
    } else if !inner.is_empty() && !inner.contains(char::is_whitespace) {
        out.push_str(vars.get(inner).unwrap_or(""));
    } else {
        out.push('{');
        out.push_str(inner);
        out.push('}');
    }
}

/// Index of the `}` closing a group whose `{` precedes `s`.
fn matching_brace(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return Some(i),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vars {
        let mut v = Vars::new().with_colors(false);
        for (k, val) in pairs {
            v.set(k, *val);
        }
        v
    }

    #[test]
    fn conditionals_and_nesting() {
        let v = vars(&[("variable", "true"), ("variable2", "false")]);
        assert_eq!(render("{?variable yay}{!variable boo}", &v), "yay");
        assert_eq!(render("{?variable {!variable2 yay}>}", &v), "yay>");
        let v = vars(&[("variable", "true"), ("variable2", "1")]);
        assert_eq!(render("{?variable {!variable2 yay}>}", &v), ">");
        assert_eq!(render("{?missing x}{!missing y}", &v), "y");
    }

    #[test]
    fn defaults_render_like_loki() {
        let v = vars(&[("model", "openai:gpt-4o")]);
        assert_eq!(render(DEFAULT_LEFT, &v), "openai:gpt-4o)> ");
        let v = vars(&[("model", "m"), ("role", "temp")]);
        assert_eq!(render(DEFAULT_LEFT, &v), "m)temp> ");
        let v = vars(&[
            ("model", "m"),
            ("session", "s"),
            ("role", "r"),
            ("consume_tokens", "5"),
            ("consume_percent", "1"),
        ]);
        assert_eq!(render(DEFAULT_LEFT, &v), "m)s/r) ");
        assert_eq!(render(DEFAULT_RIGHT, &v), "5(1%)");
    }

    #[test]
    fn colours_literals_and_broken_templates() {
        let v = Vars::new().with_colors(true);
        assert_eq!(render("{color.red}x{color.reset}", &v), "\x1b[31mx\x1b[0m");
        assert_eq!(render("{not a var} {", &v), "{not a var} {");
        assert_eq!(render("{unknown}", &v), "");
    }
}
