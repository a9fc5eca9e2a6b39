//! Splitting documents into chunks that follow their structure.
//!
//! A document is cut at the strongest boundary that keeps chunks within `chunk_size`
//! tokens: Markdown at headings, source code at top-level items (a line at column 0 after
//! a blank line or a closing bracket: functions, classes, impls in most languages), then
//! paragraphs (blank lines), then lines. Small neighbouring pieces are merged up to the
//! size. Consecutive chunks share up to `overlap` tokens of whole lines, except where a
//! chunk starts a new section. Every chunk knows its 1-based line range.
//!
//! Sizes are estimated with [`loki_wire::token_estimate::estimate`], cheap and tokenizer-independent.

use std::ops::Range;

/// One chunk of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// The text.
    pub text: String,
    /// First line (1-based).
    pub start_line: u32,
    /// Last line (inclusive).
    pub end_line: u32,
}

/// How a document is structured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// Headings start sections.
    Markdown,
    /// Top-level items start sections.
    Code,
    /// Paragraphs only.
    Text,
}

const CODE_EXTENSIONS: &[&str] = &[
    "rs", "py", "js", "mjs", "cjs", "ts", "tsx", "jsx", "go", "java", "kt", "kts", "scala", "c",
    "h", "cc", "cpp", "cxx", "hpp", "cs", "php", "rb", "swift", "sol", "proto", "lua", "sh",
    "bash", "zsh", "ex", "exs", "erl", "hs", "ml", "dart", "r", "jl", "zig", "nim", "pl",
];

impl Language {
    /// The language of a file with extension `ext` (lowercase, without the dot).
    pub fn from_extension(ext: &str) -> Self {
        let ext = ext.to_ascii_lowercase();
        match ext.as_str() {
            "md" | "mdx" | "markdown" | "mkd" | "rst" => Self::Markdown,
            e if CODE_EXTENSIONS.contains(&e) => Self::Code,
            _ => Self::Text,
        }
    }
}

/// An indivisible piece of text: a line, or part of a very long line.
struct Atom<'a> {
    text: &'a str,
    line: u32,
    tokens: usize,
    /// 2: a section starts here; 1: a paragraph starts here; 0: nothing.
    boundary: u8,
}

/// Splits `text` into chunks of at most about `chunk_size` tokens with `overlap` tokens
/// shared between neighbours.
pub fn split(text: &str, language: Language, chunk_size: usize, overlap: usize) -> Vec<Piece> {
    let chunk_size = chunk_size.max(16);
    let overlap = overlap.min(chunk_size / 2);
    let atoms = atoms(text, language, chunk_size);
    if atoms.is_empty() {
        return Vec::new();
    }
    let mut ranges = Vec::new();
    segment(&atoms, 0..atoms.len(), 2, chunk_size, &mut ranges);
    let merged = merge(&atoms, ranges, chunk_size);
    let mut out = Vec::with_capacity(merged.len());
    for (i, range) in merged.iter().enumerate() {
        let mut start = range.start;
        if i > 0 && overlap > 0 && atoms[range.start].boundary < 2 {
            let mut budget = overlap;
            while start > merged[i - 1].start && atoms[start - 1].tokens <= budget {
                budget -= atoms[start - 1].tokens;
                start -= 1;
            }
        }
        let mut end = range.end;
        while end > start + 1 && atoms[end - 1].text.trim().is_empty() {
            end -= 1;
        }
        let body: String = atoms[start..end].iter().map(|a| a.text).collect();
        let trimmed = body.trim_end();
        if trimmed.trim().is_empty() {
            continue;
        }
        out.push(Piece {
            text: trimmed.to_string(),
            start_line: atoms[start].line,
            end_line: atoms[end - 1].line,
        });
    }
    out
}

fn atoms(text: &str, language: Language, chunk_size: usize) -> Vec<Atom<'_>> {
    // A line longer than a chunk is cut at whitespace (or anywhere) into pieces.
    let max_chars = chunk_size.saturating_mul(3).max(64);
    let mut out = Vec::new();
    let mut in_fence = false;
    let mut previous_blank = true;
    let mut previous_closes = false;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let trimmed = line.trim();
        let blank = trimmed.is_empty();
        let mut boundary = u8::from(previous_blank && !blank);
        match language {
            Language::Markdown => {
                if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                    in_fence = !in_fence;
                } else if !in_fence && is_heading(line) {
                    boundary = 2;
                }
            }
            Language::Code => {
                let top_level = !blank
                    && !line.starts_with(char::is_whitespace)
                    && !trimmed.starts_with(['}', ')', ']']);
                if top_level && (previous_blank || previous_closes) {
                    boundary = 2;
                }
            }
            Language::Text => {}
        }
        previous_blank = blank;
        previous_closes = !line.starts_with(char::is_whitespace)
            && (trimmed.starts_with(['}', ')', ']']) || trimmed == "end");
        let mut rest = line;
        let mut first = true;
        while !rest.is_empty() {
            let cut = cut_point(rest, max_chars);
            let (head, tail) = rest.split_at(cut);
            out.push(Atom {
                text: head,
                line: number,
                tokens: loki_wire::token_estimate::estimate(head)
                    .max(usize::from(!head.trim().is_empty())),
                boundary: if first { boundary } else { 0 },
            });
            first = false;
            rest = tail;
        }
    }
    out
}

fn is_heading(line: &str) -> bool {
    let hashes = line.bytes().take_while(|b| *b == b'#').count();
    (1..=6).contains(&hashes) && line[hashes..].starts_with([' ', '\t', '\n'])
}

/// Where to cut a long line: at the last whitespace before `max_chars`, else at a char
/// boundary.
fn cut_point(text: &str, max_chars: usize) -> usize {
    if text.len() <= max_chars {
        return text.len();
    }
    let mut limit = max_chars;
    while !text.is_char_boundary(limit) {
        limit -= 1;
    }
    match text[..limit].rfind(char::is_whitespace) {
        Some(i) if i > limit / 2 => i + 1,
        _ => limit.max(1),
    }
}

fn tokens(atoms: &[Atom<'_>], range: &Range<usize>) -> usize {
    atoms[range.clone()].iter().map(|a| a.tokens).sum()
}

/// Splits `range` at boundaries of `level` or stronger until every part fits.
fn segment(
    atoms: &[Atom<'_>],
    range: Range<usize>,
    level: u8,
    size: usize,
    out: &mut Vec<Range<usize>>,
) {
    if tokens(atoms, &range) <= size || range.len() <= 1 {
        out.push(range);
        return;
    }
    if level == 0 {
        out.extend((range.start..range.end).map(|i| i..i + 1));
        return;
    }
    let mut start = range.start;
    for i in range.start + 1..range.end {
        if atoms[i].boundary >= level {
            segment(atoms, start..i, level - 1, size, out);
            start = i;
        }
    }
    segment(atoms, start..range.end, level - 1, size, out);
}

/// Joins neighbouring parts while they fit; a new section starts a new chunk once the
/// current one is half full.
fn merge(atoms: &[Atom<'_>], parts: Vec<Range<usize>>, size: usize) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut current: Option<(Range<usize>, usize)> = None;
    for part in parts {
        let t = tokens(atoms, &part);
        current = match current {
            None => Some((part, t)),
            Some((cur, ct)) => {
                let new_section = atoms[part.start].boundary == 2 && ct * 2 >= size;
                if ct + t <= size && !new_section {
                    Some((cur.start..part.end, ct + t))
                } else {
                    out.push(cur);
                    Some((part, t))
                }
            }
        };
    }
    if let Some((cur, _)) = current {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_splits_at_headings_with_line_ranges() {
        let para = "word ".repeat(60);
        let text = format!("# One\n\n{para}\n\n# Two\n\n{para}\n\n## Three\n\n{para}\n");
        let pieces = split(&text, Language::Markdown, 100, 10);
        assert_eq!(pieces.len(), 3, "{pieces:#?}");
        assert!(pieces[0].text.starts_with("# One"));
        assert!(
            pieces[1].text.starts_with("# Two"),
            "no overlap into a new section"
        );
        assert_eq!((pieces[1].start_line, pieces[1].end_line), (5, 7));
        assert!(pieces[2].text.starts_with("## Three"));
    }

    #[test]
    fn code_splits_at_top_level_items() {
        let body = "    let x = 1;\n".repeat(20);
        let text = format!(
            "use std::io;\n\n/// Docs.\nfn a() {{\n{body}}}\n\nfn b() {{\n{body}}}\nstruct C;\n"
        );
        let pieces = split(&text, Language::Code, 90, 0);
        assert!(pieces.len() >= 2, "{pieces:#?}");
        assert!(
            pieces
                .iter()
                .any(|p| p.text.starts_with("/// Docs.\nfn a()"))
        );
        assert!(pieces.iter().any(|p| p.text.starts_with("fn b()")));
    }

    #[test]
    fn text_uses_paragraphs_lines_and_overlap() {
        let lines: Vec<String> = (0..40).map(|i| format!("line number {i} here")).collect();
        let text = lines.join("\n");
        let pieces = split(&text, Language::Text, 40, 10);
        assert!(pieces.len() > 3);
        // Overlap: the second chunk starts before the first one ends.
        assert!(pieces[1].start_line <= pieces[0].end_line);
        assert_eq!(pieces.last().map(|p| p.end_line), Some(40));
        // A giant line is cut into several chunks.
        let long = "x".repeat(5000);
        assert!(split(&long, Language::Text, 100, 0).len() > 3);
        assert!(split("  \n\n ", Language::Text, 100, 0).is_empty());
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(Language::from_extension("MD"), Language::Markdown);
        assert_eq!(Language::from_extension("rs"), Language::Code);
        assert_eq!(Language::from_extension("txt"), Language::Text);
    }
}
