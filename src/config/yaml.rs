//! Guards run on YAML text before it is parsed: a UTF-8 byte order mark is dropped (editors
//! on Windows add one, and it would otherwise become part of the first key), and flow
//! collections nested deeper than [`MAX_NESTING`] are refused in one linear pass (the
//! parser needs time quadratic in the depth: 100,000 `[` took minutes to reject).

/// Deepest nesting of `[…]` / `{…}` accepted; loki's own files need fewer than ten.
pub const MAX_NESTING: usize = 64;

/// `text` without a leading UTF-8 byte order mark.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Where text nests too deeply: 1-based line and column of the bracket that went over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooDeep {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
}

impl TooDeep {
    /// The message for the user, without the location.
    pub fn message(&self) -> String {
        format!(
            "nested more than {MAX_NESTING} levels deep (brackets or braces); no loki setting nests that deep"
        )
    }
}

/// Scanner state carried from line to line.
#[derive(Default)]
struct Scan {
    depth: usize,
    /// Inside a quoted scalar (which may span lines): its quote character.
    quote: Option<char>,
    /// Inside a block scalar (`|`, `>`): lines indented more than this belong to it.
    block_indent: Option<usize>,
}

/// Checks that flow collections nest at most [`MAX_NESTING`] deep, skipping quoted
/// scalars, block scalars and comments.
pub fn check_nesting(text: &str) -> Result<(), TooDeep> {
    let mut scan = Scan::default();
    for (index, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(block) = scan.block_indent {
            if line.trim().is_empty() || indent > block {
                continue;
            }
            scan.block_indent = None;
        }
        if let Some(column) = scan.line(line) {
            return Err(TooDeep {
                line: index + 1,
                column,
            });
        }
        if scan.quote.is_none() && scan.depth == 0 && opens_block_scalar(line) {
            scan.block_indent = Some(indent);
        }
    }
    Ok(())
}

impl Scan {
    /// Scans one line; the 1-based column where the depth went over the limit, if it did.
    fn line(&mut self, line: &str) -> Option<usize> {
        let mut chars = line.chars().enumerate().peekable();
        // Whether a node may start here (line start, after `: `, `- `, `? `, or after `[`,
        // `{` or `,` in a flow collection): only there do quotes and brackets open
        // something; elsewhere they are plain text (`it's`, `a[1]`).
        let mut node_start = true;
        // An indicator (`:`, `-`, `?`) that opens a node once followed by a space.
        let mut pending: Option<char> = None;
        let mut after_space = true;
        while let Some((column, c)) = chars.next() {
            if let Some(quote) = self.quote {
                match c {
                    '\\' if quote == '"' => {
                        chars.next();
                    }
                    '\'' if quote == '\'' && chars.peek().is_some_and(|(_, n)| *n == '\'') => {
                        chars.next();
                    }
                    _ if c == quote => {
                        self.quote = None;
                        node_start = false;
                    }
                    _ => {}
                }
                after_space = false;
                continue;
            }
            let space = c == ' ' || c == '\t';
            // JSON-like `{"a":[1]}`: in flow, `:` needs no space before a node.
            let start = node_start || (self.depth > 0 && pending == Some(':'));
            match c {
                _ if space => {
                    if pending.take().is_some() {
                        node_start = true;
                    }
                }
                '#' if after_space => break,
                '\'' | '"' if start => self.quote = Some(c),
                '[' | '{' if start => {
                    self.depth += 1;
                    if self.depth > MAX_NESTING {
                        return Some(column + 1);
                    }
                    node_start = true;
                    pending = None;
                }
                ']' | '}' if self.depth > 0 => {
                    self.depth -= 1;
                    node_start = false;
                    pending = None;
                }
                ',' if self.depth > 0 => {
                    node_start = true;
                    pending = None;
                }
                ':' | '-' | '?' => {
                    node_start = false;
                    pending = Some(c);
                }
                _ => {
                    node_start = false;
                    pending = None;
                }
            }
            after_space = space;
        }
        None
    }
}

/// Whether a line ends with a block scalar indicator (`key: |`, `- >-`, `key: |2`).
fn opens_block_scalar(line: &str) -> bool {
    let content = match line.find(" #") {
        Some(i) => &line[..i],
        None => line,
    };
    let content = content.trim_end();
    let indicator = content.trim_end_matches(|c: char| c == '-' || c == '+' || c.is_ascii_digit());
    let Some(before) = indicator
        .strip_suffix('|')
        .or_else(|| indicator.strip_suffix('>'))
    else {
        return false;
    };
    let before = before.trim_end();
    before.is_empty() || before.ends_with(':') || before.ends_with('-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_flow_nesting_is_refused_where_it_goes_over() {
        let deep = format!(
            "model: x\nwrap: {}{}\n",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let started = std::time::Instant::now();
        assert_eq!(
            check_nesting(&deep),
            Err(TooDeep {
                line: 2,
                column: 7 + MAX_NESTING
            })
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        let ok = format!(
            "a: {}{}\n",
            "{b: ".repeat(MAX_NESTING),
            "}".repeat(MAX_NESTING)
        );
        assert_eq!(check_nesting(&ok), Ok(()));
        let json_like = format!("a: {}1{}\n", "{\"b\":".repeat(100), "}".repeat(100));
        assert!(check_nesting(&json_like).is_err());
        let lists = format!("- {}\n", "- [".repeat(100));
        assert!(check_nesting(&lists).is_err());
    }

    #[test]
    fn brackets_in_text_do_not_count() {
        let text = format!(
            "a: it's [[[ plain\nb: '{o}'\nc: \"{o}\\\" {o}\"\nd: |\n  {o}\n  more {o}\ne: >-\n    {o}\n# {o}\nf: x # {o}\ng: 'it''s {o}'\n",
            o = "[".repeat(200)
        );
        assert_eq!(check_nesting(&text), Ok(()));
        // Quoted text may span lines.
        let text = format!("a: \"first\n  {o}\n  last\"\nb: [1]\n", o = "{".repeat(200));
        assert_eq!(check_nesting(&text), Ok(()));
    }

    #[test]
    fn a_byte_order_mark_is_dropped() {
        assert_eq!(strip_bom("\u{feff}model: x"), "model: x");
        assert_eq!(strip_bom("model: x"), "model: x");
    }
}
