//! Incremental, newline-gated markdown renderer for streamed LLM answers.
//!
//! Owns: turning deltas of markdown text into terminal bytes appended to a caller's buffer:
//! printing the incomplete last line ("tail") raw as it streams, erasing it when the line
//! completes and writing the styled line instead; block state (code fence, table); inline
//! styling; wrapping of committed lines. Cost per delta is independent of answer length: only
//! the tail and a few flags are kept, and each line is styled once, when it completes.
//! Does not own: writing to the terminal, detecting colour support or terminal width, syntax
//! highlighting internals (`super::highlight`), wrapping rules (`super::wrap`).
//!
//! Marker rule: emphasis delimiters (`**`, `__`, `*`, `_`) are hidden once matched; every other
//! markup character (`#`, bullets, backticks, brackets, URLs, `>`, pipes, fences) stays visible.
//! Tables are lines starting with `|`; the first row of a table is styled as its header (its
//! separator only arrives after that row is committed). Tables, rules and fence lines are never
//! wrapped. When lines are buffered (highlight or wrap on) every `\r` is dropped, so `\r\n`
//! acts as `\n`; with both off the input bytes pass through untouched.

use std::ops::Range;

use super::highlight::Highlighter;
use super::wrap::{char_width, display_width, list_prefix, wrap_ranges};

/// Lines longer than this (bytes) get no inline styling, bounding the per-line parse cost.
const MAX_INLINE: usize = 8192;
/// SGR attribute bit: bold.
const BOLD: u8 = 1;
/// SGR attribute bit: dim (faint).
const DIM: u8 = 2;
/// SGR attribute bit: italic.
const ITALIC: u8 = 4;
/// SGR attribute bit: underline.
const UNDERLINE: u8 = 8;

/// How the renderer should look and lay out text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RenderOptions {
    /// false => no ANSI at all (NO_COLOR / not a TTY); output is the raw text (wrapped if set).
    pub(crate) highlight: bool,
    /// Light theme instead of dark.
    pub(crate) light: bool,
    /// Wrap committed prose lines at this display width (None = no wrapping).
    pub(crate) wrap: Option<usize>,
    /// Also wrap lines inside fenced code blocks.
    pub(crate) wrap_code: bool,
    /// Terminal columns, used to count the rows of the raw tail; 0 => treat as 80.
    pub(crate) term_width: usize,
    /// Terminal rows: a raw tail that would reach this tall is left as printed instead of
    /// being erased and restyled (the cursor cannot move above the screen); 0 => treat as 24.
    pub(crate) term_height: usize,
}

/// A 24-bit colour.
type Rgb = (u8, u8, u8);

/// Colours for markdown markup (code colours come from the syntect theme): headings and their
/// `#`, list bullets and numbers, inline code, link text, blockquotes, checked task boxes.
struct Palette {
    heading: Rgb,
    bullet: Rgb,
    code: Rgb,
    link: Rgb,
    quote: Rgb,
    done: Rgb,
}

impl Palette {
    /// The palette for a dark or light terminal background.
    #[rustfmt::skip]
    fn new(light: bool) -> Self {
        let [heading, bullet, code, link, quote, done] = if light {
            [(0, 82, 163), (154, 103, 0), (165, 29, 45), (5, 80, 174), (96, 96, 96), (17, 99, 41)]
        } else {
            [(97, 175, 239), (229, 192, 123), (152, 195, 121), (86, 182, 194), (150, 150, 150),
                (152, 195, 121)]
        };
        Self { heading, bullet, code, link, quote, done }
    }

    /// The palette a custom theme implies: each markup colour from the theme's rule for the
    /// matching markup scope (or a close code scope), the built-in colour where it has none.
    fn from_theme(theme: &syntect::highlighting::Theme, light: bool) -> Self {
        use super::themes::scope_colour;
        let base = Self::new(light);
        let pick = |scopes: &[&str], fallback: Rgb| scope_colour(theme, scopes).unwrap_or(fallback);
        Self {
            heading: pick(
                &["markup.heading", "entity.name.section", "entity.name"],
                base.heading,
            ),
            bullet: pick(
                &["punctuation.definition.list_item", "markup.list", "keyword"],
                base.bullet,
            ),
            code: pick(&["markup.raw.inline", "markup.raw", "string"], base.code),
            link: pick(
                &["markup.underline.link", "string.other.link", "constant"],
                base.link,
            ),
            quote: pick(&["markup.quote", "comment"], base.quote),
            done: pick(&["markup.inserted", "string"], base.done),
        }
    }
}

/// Text attributes of one run of output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Style {
    /// Foreground colour, terminal default when `None`.
    fg: Option<Rgb>,
    /// `BOLD | DIM | ITALIC | UNDERLINE` bits.
    attrs: u8,
}

impl Style {
    /// A style from an optional colour and attribute bits.
    fn new(fg: Option<Rgb>, attrs: u8) -> Self {
        Self { fg, attrs }
    }

    /// This style with extra attribute bits (and a colour, if given).
    fn with(self, fg: Option<Rgb>, attrs: u8) -> Self {
        Self {
            fg: fg.or(self.fg),
            attrs: self.attrs | attrs,
        }
    }

    /// Append the SGR sequence selecting exactly this style.
    fn write_sgr(&self, out: &mut Vec<u8>) {
        let bits = [(BOLD, ";1"), (DIM, ";2"), (ITALIC, ";3"), (UNDERLINE, ";4")];
        let attrs: String = bits
            .iter()
            .filter(|b| self.attrs & b.0 != 0)
            .map(|b| b.1)
            .collect();
        let fg = self
            .fg
            .map(|(r, g, b)| format!(";38;2;{r};{g};{b}"))
            .unwrap_or_default();
        out.extend_from_slice(format!("\x1b[0{attrs}{fg}m").as_bytes());
    }
}

/// Visible text plus style runs: run `i` covers bytes from the previous run's end to `runs[i].0`.
#[derive(Clone, Default)]
struct Styled {
    /// The visible text.
    text: String,
    /// `(end byte, style)` of consecutive runs.
    runs: Vec<(usize, Style)>,
}

impl Styled {
    /// `text` as a single run in `style`.
    fn of(text: &str, style: Style) -> Self {
        let mut s = Self::default();
        s.push(text, style);
        s
    }

    /// Append `s` in `style`, merging with the previous run when the style is the same.
    fn push(&mut self, s: &str, style: Style) {
        if s.is_empty() {
            return;
        }
        self.text.push_str(s);
        match self.runs.last_mut() {
            Some((end, last)) if *last == style => *end = self.text.len(),
            _ => self.runs.push((self.text.len(), style)),
        }
    }

    /// Append the bytes of `range` to `out`, with SGR changes when `styled`; `current` is the
    /// style in effect (`None`: no SGR written yet on this physical line).
    fn emit(
        &self,
        range: Range<usize>,
        styled: bool,
        current: &mut Option<Style>,
        out: &mut Vec<u8>,
    ) {
        let mut start = 0;
        for &(end, style) in &self.runs {
            let (a, b) = (start.max(range.start), end.min(range.end));
            start = end;
            if a < b {
                if styled && style != current.unwrap_or_default() {
                    style.write_sgr(out);
                    *current = Some(style);
                }
                out.extend_from_slice(&self.text.as_bytes()[a..b]);
            }
        }
    }
}

/// An open fenced code block.
struct Fence {
    /// Fence character, `` ` `` or `~`.
    ch: u8,
    /// Length of the opening fence; the closing one must be at least as long.
    len: usize,
}

/// Block-level kind of one complete line, with byte offsets into it.
enum Block<'a> {
    /// Empty or whitespace-only line.
    Blank,
    /// Opening code fence with its info string.
    FenceOpen(Fence, &'a str),
    /// Closing code fence.
    FenceClose,
    /// A line inside a code block.
    Code,
    /// ATX heading; text starts at the offset.
    Heading(usize),
    /// Thematic break (`---`, `***`, `___`).
    Rule,
    /// `|` row of a table; `true` for the first (header) row.
    TableRow(bool),
    /// `|---|:--|` separator row.
    TableSep,
    /// Blockquote; text starts at the offset.
    Quote(usize),
    /// List item: marker range, optional task box `(range, checked)`, text start.
    List(Range<usize>, Option<(Range<usize>, bool)>, usize),
    /// Anything else.
    Para,
}

/// Length of the run of byte `ch` at the start of `s`.
fn run_len(s: &str, ch: u8) -> usize {
    s.bytes().take_while(|&b| b == ch).count()
}

/// Classify one complete line given the open fence (if any) and whether a table is open.
fn classify<'a>(line: &'a str, fence: Option<&Fence>, in_table: bool) -> Block<'a> {
    let rest = line.trim_start_matches(' ');
    let indent = line.len() - rest.len();
    if let Some(f) = fence {
        let n = run_len(rest, f.ch);
        let closes = indent <= 3 && n >= f.len && rest[n..].trim().is_empty();
        return if closes {
            Block::FenceClose
        } else {
            Block::Code
        };
    }
    if rest.trim().is_empty() {
        return Block::Blank;
    }
    if indent <= 3 {
        for ch in [b'`', b'~'] {
            let n = run_len(rest, ch);
            let info = rest[n..].trim();
            if n >= 3 && !(ch == b'`' && info.contains('`')) {
                return Block::FenceOpen(Fence { ch, len: n }, info);
            }
        }
        let after = &rest[run_len(rest, b'#')..];
        if (1..=6).contains(&(rest.len() - after.len()))
            && (after.is_empty() || after.starts_with([' ', '\t']))
        {
            return Block::Heading(line.len() - after.trim_start().len());
        }
        let mut marks = rest.chars().filter(|c| !matches!(c, ' ' | '\t'));
        if let Some(c @ ('-' | '*' | '_')) = marks.next()
            && marks.clone().count() >= 2
            && marks.all(|m| m == c)
        {
            return Block::Rule;
        }
        if rest.starts_with('|') {
            if rest.contains('-') && rest.chars().all(|c| "|-: \t".contains(c)) {
                return Block::TableSep;
            }
            return Block::TableRow(!in_table);
        }
        if rest.starts_with('>') {
            return Block::Quote(line.len() - rest.trim_start_matches(['>', ' ']).len());
        }
    }
    let Some(item) = list_prefix(line) else {
        return Block::Para;
    };
    let body = &line[item.end..];
    let checked = match body.get(..3) {
        Some("[ ]") => false,
        Some("[x]" | "[X]") => true,
        _ => return Block::List(item.marker, None, item.end),
    };
    if !(body.len() == 3 || body[3..].starts_with(' ')) {
        return Block::List(item.marker, None, item.end);
    }
    let end = line.len() - body[3..].trim_start_matches(' ').len();
    Block::List(item.marker, Some((item.end..item.end + 3, checked)), end)
}

/// Where the cursor is after printing text from column 0 on a terminal `cols` wide,
/// simulating the terminal's auto-wrap: a character that does not fit wraps to the next
/// row, and a row filled exactly leaves the cursor on it.
#[derive(Clone, Copy, Debug, Default)]
struct TailCursor {
    /// Rows below the first row of the text.
    row: usize,
    /// Column on that row.
    col: usize,
}

impl TailCursor {
    /// Advance over `text` on a terminal `cols` (> 0) wide.
    fn advance(&mut self, text: &str, cols: usize) {
        for c in text.chars() {
            if c == '\t' {
                self.col = ((self.col / 8 + 1) * 8).min(cols - 1).max(self.col);
                continue;
            }
            let w = char_width(c);
            if w > 0 && self.col + w > cols && self.col > 0 {
                self.row += 1;
                self.col = 0;
            }
            self.col = (self.col + w).min(cols);
        }
    }
}

/// Rows the cursor must move up, after a `\r`, to reach the first row of `tail` printed from
/// column 0 on a terminal `term_width` wide (0 => 80); for narrow text this is
/// `(width - 1) / term_width`.
#[cfg(test)]
pub(crate) fn erase_rows(tail: &str, term_width: usize) -> usize {
    let mut cursor = TailCursor::default();
    cursor.advance(tail, cols_of(term_width));
    cursor.row
}

/// Terminal columns, 80 when unknown.
fn cols_of(term_width: usize) -> usize {
    if term_width == 0 { 80 } else { term_width }
}

/// The most rows the cursor may move up to erase a raw tail on a terminal `term_height`
/// rows tall (0 => 24): the tail's first row must still be on screen, with one row to spare.
fn max_erase_rows(term_height: usize) -> usize {
    let rows = if term_height == 0 { 24 } else { term_height };
    rows.saturating_sub(3)
}

/// Streaming markdown renderer: feed deltas with `push`, end with `finish`.
pub(crate) struct MarkdownRenderer {
    /// Options given at construction.
    opts: RenderOptions,
    /// Markup colours.
    palette: Palette,
    /// Code-block highlighter (loads syntect on the first code fence only).
    highlighter: Highlighter,
    /// The current incomplete line (without `\r`).
    tail: String,
    /// Bytes of `tail` already printed raw, to be erased at commit.
    shown: usize,
    /// Where the raw tail printed so far ends on the screen.
    cursor: TailCursor,
    /// The raw tail grew taller than the screen allows erasing, or the terminal was resized
    /// while it was shown: it stays as printed and is not restyled.
    frozen: bool,
    /// The open code fence, if any.
    fence: Option<Fence>,
    /// The previous line was a table row.
    in_table: bool,
    /// Anything was pushed at all.
    wrote_any: bool,
    /// The last byte written was `\n` (or nothing was written).
    at_line_start: bool,
}

impl MarkdownRenderer {
    /// Create a renderer; cheap (syntect is loaded on the first code fence).
    pub(crate) fn new(opts: RenderOptions) -> Self {
        // The user's theme file is only read when something will be coloured.
        let custom = if opts.highlight {
            super::themes::custom(opts.light)
        } else {
            None
        };
        Self {
            palette: match &custom {
                Some(theme) => Palette::from_theme(theme, opts.light),
                None => Palette::new(opts.light),
            },
            highlighter: Highlighter::new(opts.light, custom),
            opts,
            tail: String::new(),
            shown: 0,
            cursor: TailCursor::default(),
            frozen: false,
            fence: None,
            in_table: false,
            wrote_any: false,
            at_line_start: true,
        }
    }

    /// Feed a delta of streamed answer text. Appends terminal bytes to `out`.
    pub(crate) fn push(&mut self, delta: &str, out: &mut Vec<u8>) {
        if delta.is_empty() {
            return;
        }
        self.wrote_any = true;
        if !self.opts.highlight && self.opts.wrap.is_none() {
            out.extend_from_slice(delta.as_bytes());
            self.at_line_start = delta.ends_with('\n');
            return;
        }
        let mut rest = delta;
        while let Some(nl) = rest.find('\n') {
            push_without_cr(&mut self.tail, &rest[..nl]);
            self.commit(out);
            rest = &rest[nl + 1..];
        }
        let before = self.tail.len();
        push_without_cr(&mut self.tail, rest);
        if self.opts.highlight && self.tail.len() > before {
            let new = &self.tail[before..];
            out.extend_from_slice(new.as_bytes());
            self.shown = self.tail.len();
            self.at_line_start = false;
            if !self.frozen {
                self.cursor.advance(new, cols_of(self.opts.term_width));
                self.frozen = self.cursor.row > max_erase_rows(self.opts.term_height);
            }
        }
    }

    /// The terminal now has this size. A raw tail shown at another width is left as printed
    /// (where the terminal put it is unknown), so nothing is erased or printed twice.
    pub(crate) fn resize(&mut self, term_width: usize, term_height: usize) {
        if term_width != self.opts.term_width && self.shown > 0 {
            self.frozen = true;
        }
        self.opts.term_width = term_width;
        self.opts.term_height = term_height;
    }

    /// The stream ended (or was interrupted): commit the tail. Output ends with a newline if
    /// any text was written.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
        if !self.tail.is_empty() || self.shown > 0 {
            self.commit(out);
        }
        if self.wrote_any && !self.at_line_start {
            out.push(b'\n');
            self.at_line_start = true;
        }
        self.fence = None;
        (self.in_table, self.wrote_any) = (false, false);
        self.highlighter.end_block();
    }

    /// Render a complete, non-streamed markdown text in one go; same look as streaming.
    #[cfg(test)]
    pub(crate) fn render_all(opts: RenderOptions, text: &str) -> Vec<u8> {
        let mut renderer = Self::new(opts);
        let mut out = Vec::with_capacity(text.len() * 2);
        renderer.push(text, &mut out);
        renderer.finish(&mut out);
        out
    }

    /// Erase the raw tail (if printed) and write the complete line, rendered, plus `\n`.
    fn commit(&mut self, out: &mut Vec<u8>) {
        let mut line = std::mem::take(&mut self.tail);
        if self.frozen {
            // Already on screen as typed: print only what was not shown yet. The line is
            // still rendered (into nothing) so block state such as an open fence follows it.
            out.extend_from_slice(&line.as_bytes()[self.shown..]);
            out.push(b'\n');
            let mut discard = Vec::new();
            self.render_line(&line, &mut discard);
            (self.shown, self.frozen, self.cursor) = (0, false, TailCursor::default());
            self.at_line_start = true;
            line.clear();
            self.tail = line;
            return;
        }
        if self.shown > 0 {
            let rows = self.cursor.row;
            self.cursor = TailCursor::default();
            out.push(b'\r');
            if rows > 0 {
                out.extend_from_slice(format!("\x1b[{rows}A").as_bytes());
            }
            out.extend_from_slice(b"\x1b[J");
            self.shown = 0;
        }
        self.render_line(&line, out);
        self.at_line_start = true;
        line.clear();
        self.tail = line; // keep the allocation
    }

    /// Render one complete line (followed by `\n`) according to its block kind.
    fn render_line(&mut self, line: &str, out: &mut Vec<u8>) {
        let block = classify(line, self.fence.as_ref(), self.in_table);
        self.in_table = matches!(block, Block::TableRow(_) | Block::TableSep);
        let (p, none, wrap) = (&self.palette, Styled::default(), self.opts.wrap);
        let (prefix, body) = line.split_at(match block {
            Block::Heading(at) | Block::Quote(at) | Block::List(_, _, at) => at,
            _ => 0,
        });
        let cont = Styled::of(&" ".repeat(display_width(prefix)), Style::default());
        let dim = Style::new(None, DIM);
        match block {
            Block::Code => self.code_line(line, out),
            Block::FenceOpen(fence, info) => {
                if self.opts.highlight {
                    self.highlighter.start_block(info);
                }
                self.fence = Some(fence);
                self.layout(&Styled::of(line, dim), &none, &none, None, out);
            }
            Block::FenceClose => {
                self.fence = None;
                self.highlighter.end_block();
                self.layout(&Styled::of(line, dim), &none, &none, None, out);
            }
            Block::Blank | Block::Rule | Block::TableSep => {
                let style = if matches!(block, Block::Blank) {
                    Style::default()
                } else {
                    dim
                };
                self.layout(&Styled::of(line, style), &none, &none, None, out);
            }
            Block::TableRow(header) => {
                let base = Style::new(None, if header { BOLD } else { 0 });
                self.layout(&self.inline(line, base, true), &none, &none, None, out);
            }
            Block::Heading(_) => {
                let head = Styled::of(prefix, Style::new(Some(p.heading), 0));
                let text = self.inline(body, Style::new(Some(p.heading), BOLD), false);
                self.layout(&head, &cont, &text, wrap, out);
            }
            Block::Quote(_) => {
                let marks = Styled::of(prefix, Style::new(Some(p.quote), 0));
                let text = self.inline(body, Style::new(Some(p.quote), ITALIC), false);
                self.layout(&marks, &marks, &text, wrap, out);
            }
            Block::List(ref marker, ref task, _) => {
                let mut head = Styled::of(&line[..marker.start], Style::default());
                head.push(&line[marker.clone()], Style::new(Some(p.bullet), 0));
                let mut at = marker.end;
                if let Some((range, checked)) = task {
                    head.push(&line[at..range.start], Style::default());
                    let style = if *checked {
                        Style::new(Some(p.done), 0)
                    } else {
                        dim
                    };
                    head.push(&line[range.clone()], style);
                    at = range.end;
                }
                head.push(&line[at..prefix.len()], Style::default());
                let text = self.inline(body, Style::default(), false);
                self.layout(&head, &cont, &text, wrap, out);
            }
            Block::Para => {
                let text = self.inline(line, Style::default(), false);
                self.layout(&none, &none, &text, wrap, out);
            }
        }
    }

    /// Render one line inside a code block: highlighted, wrapped only with `wrap_code`.
    fn code_line(&mut self, line: &str, out: &mut Vec<u8>) {
        let wrap = self.opts.wrap.filter(|_| self.opts.wrap_code);
        let none = Styled::default();
        if !self.opts.highlight {
            return self.layout(&Styled::of(line, Style::default()), &none, &none, wrap, out);
        }
        match wrap {
            Some(w) if display_width(line) > w => {
                let mut text = Styled::default();
                match self.highlighter.highlight_spans(line) {
                    Some(spans) => spans.into_iter().for_each(|(cs, r)| {
                        let attrs = [
                            (cs.bold, BOLD),
                            (cs.italic, ITALIC),
                            (cs.underline, UNDERLINE),
                        ];
                        let bits = attrs.iter().filter(|a| a.0).fold(0, |acc, a| acc | a.1);
                        text.push(&line[r], Style::new(Some(cs.fg), bits));
                    }),
                    None => text.push(line, Style::default()),
                }
                self.layout(&none, &none, &text, wrap, out);
            }
            _ => {
                self.highlighter.highlight_line(line, out);
                out.push(b'\n');
            }
        }
    }

    /// Write `head` + `body`, word-wrapped to `wrap` columns with `cont` before each
    /// continuation line, each physical line ending in an SGR reset (when styled) and `\n`.
    fn layout(
        &self,
        head: &Styled,
        cont: &Styled,
        body: &Styled,
        wrap: Option<usize>,
        out: &mut Vec<u8>,
    ) {
        let head_w = display_width(&head.text);
        let pieces = match wrap {
            Some(w) if w > 0 && head_w + display_width(&body.text) > w => {
                wrap_ranges(&body.text, w.saturating_sub(head_w).max(w / 2).max(1))
            }
            _ => std::iter::once(0..body.text.len()).collect(),
        };
        for (i, piece) in pieces.into_iter().enumerate() {
            let lead = if i == 0 { head } else { cont };
            let mut current = None;
            lead.emit(0..lead.text.len(), self.opts.highlight, &mut current, out);
            body.emit(piece, self.opts.highlight, &mut current, out);
            if current.is_some() {
                out.extend_from_slice(b"\x1b[0m");
            }
            out.push(b'\n');
        }
    }

    /// Inline styling of `text` over `base` (emphasis markers hidden); when `pipes`, unescaped
    /// `|` outside code spans are dimmed. Unstyled raw text when highlight is off.
    fn inline(&self, text: &str, base: Style, pipes: bool) -> Styled {
        let mut s = Styled::default();
        if !self.opts.highlight || text.len() > MAX_INLINE {
            s.push(text, base);
        } else {
            self.inline_into(text, base, pipes, &mut s);
        }
        s
    }

    /// Recursive worker of `inline`, appending to `s`.
    fn inline_into(&self, text: &str, base: Style, pipes: bool, s: &mut Styled) {
        let bytes = text.as_bytes();
        let (mut i, mut plain) = (0, 0);
        while i < bytes.len() {
            let start = i;
            match bytes[i] {
                b'\\' => i += 2,
                b'`' => {
                    let n = run_len(&text[i..], b'`');
                    i += n;
                    if let Some(close) = find_code_close(text, i, n) {
                        s.push(&text[plain..start], base);
                        s.push(
                            &text[start..close + n],
                            Style::new(Some(self.palette.code), 0),
                        );
                        (i, plain) = (close + n, close + n);
                    }
                }
                b'[' => {
                    i += 1;
                    if let Some((label_end, url_end)) = find_link(text, start) {
                        let dim = base.with(None, DIM);
                        s.push(&text[plain..start], base);
                        s.push("[", dim);
                        let link = base.with(Some(self.palette.link), UNDERLINE);
                        self.inline_into(&text[i..label_end], link, false, s);
                        s.push(&text[label_end..=url_end], dim);
                        (i, plain) = (url_end + 1, url_end + 1);
                    }
                }
                ch @ (b'*' | b'_') => {
                    let n = run_len(&text[i..], ch);
                    i += n;
                    if let Some(close) = find_emphasis_close(text, start, n, ch) {
                        let attrs = [0, ITALIC, BOLD, BOLD | ITALIC][n];
                        s.push(&text[plain..start], base);
                        self.inline_into(&text[i..close], base.with(None, attrs), pipes, s);
                        (i, plain) = (close + n, close + n);
                    }
                }
                b'|' if pipes => {
                    s.push(&text[plain..i], base);
                    s.push("|", Style::new(None, DIM));
                    (i, plain) = (i + 1, i + 1);
                }
                _ => i += 1,
            }
        }
        s.push(&text[plain..], base);
    }
}

/// Append `s` to `tail`, dropping every `\r`.
fn push_without_cr(tail: &mut String, s: &str) {
    if s.contains('\r') {
        tail.extend(s.chars().filter(|&c| c != '\r'));
    } else {
        tail.push_str(s);
    }
}

/// Start of the backtick run of exactly `n` closing a code span whose content starts at `from`.
fn find_code_close(text: &str, from: usize, n: usize) -> Option<usize> {
    let mut i = from;
    while let Some(off) = text[i..].find('`') {
        let len = run_len(&text[i + off..], b'`');
        if len == n {
            return Some(i + off);
        }
        i += off + len;
    }
    None
}

/// For `[label](url)` starting at `open`: the offsets of `]` and of the closing `)`.
fn find_link(text: &str, open: usize) -> Option<(usize, usize)> {
    let label_end = open + text[open..].find(']')?;
    if text.as_bytes().get(label_end + 1) != Some(&b'(') {
        return None;
    }
    let mut depth = 0usize;
    for (off, c) in text[label_end + 1..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 1 => return Some((label_end, label_end + 1 + off)),
            ')' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// Start of the delimiter run closing emphasis opened by the run of `n` × `ch` at `open`.
/// Word boundaries are required on both ends (so `snake_case` and `2*3*4` stay literal), the
/// content may not start or end with whitespace, and code spans are skipped over.
fn find_emphasis_close(text: &str, open: usize, n: usize, ch: u8) -> Option<usize> {
    let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    let space = |c: Option<char>| c.is_none_or(char::is_whitespace);
    let content = open + n;
    if n > 3 || alnum(text[..open].chars().next_back()) || space(text[content..].chars().next()) {
        return None;
    }
    let mut i = content;
    while i < text.len() {
        match text.as_bytes()[i] {
            b'\\' => i += 2,
            b'`' => {
                let len = run_len(&text[i..], b'`');
                i = find_code_close(text, i + len, len).map_or(i + len, |c| c + len);
            }
            b if b == ch => {
                let len = run_len(&text[i..], ch);
                let closes = len == n && i > content && !space(text[..i].chars().next_back());
                if closes && !alnum(text[i + len..].chars().next()) {
                    return Some(i);
                }
                i += len;
            }
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document exercising every construct the renderer styles.
    const DOC: &str = r#"# Title with `code`

Some **bold** text, some *italic* and _under_ words; snake_case_word and 2*3*4 stay.
A [link](https://example.com/a_(b)) and a very long line that keeps going on and on past the forty column width, so the raw tail spans rows.

## List

- first item
- [ ] open task
- [x] done task
  * nested **bold** item
1. numbered
2. second with `in*line*`

> quoted *text* here
> > nested quote

| Name | Value |
|------|------:|
| **a** | `x|y` |
| b | 2 |

---

```rust
fn main() {
    let s = "hi"; // comment
    println!("{s}");
}
```

~~~unknownlang
plain code *not italic*
~~~

CJK: 漢字かな交じり文 and done.
"#;

    /// `DOC` as it must look on screen: emphasis markers hidden, all else kept.
    fn visible() -> String {
        let doc = DOC
            .replace("**bold**", "bold")
            .replace("*italic* and _under_", "italic and under");
        doc.replace("**a**", "a").replace("*text*", "text")
    }

    /// Dark-theme options with the given highlight / wrap / terminal width.
    fn opts(highlight: bool, wrap: Option<usize>, term_width: usize) -> RenderOptions {
        RenderOptions {
            highlight,
            light: false,
            wrap,
            wrap_code: false,
            term_width,
            term_height: 0,
        }
    }

    /// Stream `chunks` through a fresh renderer and return everything it wrote.
    fn stream<'a>(opts: RenderOptions, chunks: impl IntoIterator<Item = &'a str>) -> Vec<u8> {
        stream_into(&mut MarkdownRenderer::new(opts), chunks)
    }

    /// Stream `chunks` through `r` (reused: `finish` must reset it) and return its output.
    fn stream_into<'a>(
        r: &mut MarkdownRenderer,
        chunks: impl IntoIterator<Item = &'a str>,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        chunks.into_iter().for_each(|c| r.push(c, &mut out));
        r.finish(&mut out);
        out
    }

    /// Split `text` into pieces whose byte lengths come from `next` (rounded up to chars).
    fn split(text: &str, mut next: impl FnMut() -> usize) -> Vec<&str> {
        let (mut pieces, mut i) = (Vec::new(), 0);
        while i < text.len() {
            let mut j = (i + next().max(1)).min(text.len());
            while !text.is_char_boundary(j) {
                j += 1;
            }
            pieces.push(&text[i..j]);
            i = j;
        }
        pieces
    }

    /// Deterministic pseudo-random sizes in 1..=max (64-bit LCG).
    fn lcg(mut seed: u64, max: u64) -> impl FnMut() -> usize {
        move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % max + 1) as usize
        }
    }

    /// Every way the tests split a text: whole, 1-byte, 3-byte, and three random splits.
    fn splits(text: &str) -> Vec<Vec<&str>> {
        let random = [lcg(1, 9), lcg(7, 40), lcg(42, 200)].map(|g| split(text, g));
        [
            vec![vec![text], split(text, || 1), split(text, || 3)],
            random.to_vec(),
        ]
        .concat()
    }

    /// Interpret `bytes` like a `width`-column terminal for the subset the renderer emits
    /// (`\r`, `\n`, auto-wrap, `ESC[nA`, `ESC[J`; SGR ignored; anything else panics) and return
    /// the visible text, soft-wrapped rows joined back into their logical lines.
    fn screen(bytes: &[u8], width: usize) -> String {
        let text = String::from_utf8_lossy(bytes);
        let mut rows: Vec<(Vec<char>, bool)> = vec![(Vec::new(), false)];
        let (mut row, mut col, mut chars) = (0usize, 0usize, text.chars());
        while let Some(c) = chars.next() {
            let w = char_width(c);
            if c == '\x1b' {
                assert_eq!(chars.next(), Some('['), "only CSI sequences");
                let param: String = chars
                    .clone()
                    .take_while(|d| d.is_ascii_digit() || *d == ';')
                    .collect();
                match chars.nth(param.len()) {
                    Some('m') => {}
                    Some('A') => row -= param.parse::<usize>().unwrap_or(1),
                    Some('J') => {
                        rows[row] = (rows[row].0.iter().copied().take(col).collect(), false);
                        rows.truncate(row + 1);
                    }
                    other => panic!("unexpected sequence {param:?} {other:?}"),
                }
            } else if c == '\r' {
                col = 0;
            } else if c == '\n' || col + w > width {
                rows[row].1 = c != '\n';
                (row, col) = (row + 1, 0);
                if rows.len() <= row {
                    rows.push((Vec::new(), false));
                }
            }
            if c >= ' ' {
                let cells = &mut rows[row].0;
                cells.resize(cells.len().max(col + w), ' ');
                cells[col..col + w].fill('\0');
                cells[col] = c;
                col += w;
            }
        }
        let last = rows.len() - 1;
        let mut s = String::new();
        for (i, (cells, wrapped)) in rows.into_iter().enumerate() {
            s.extend(cells.into_iter().filter(|&c| c != '\0'));
            if i < last && !wrapped {
                s.push('\n');
            }
        }
        s
    }

    #[test]
    fn plain_output_is_exactly_the_input() {
        for chunks in splits(DOC) {
            assert_eq!(
                String::from_utf8_lossy(&stream(opts(false, None, 80), chunks)),
                DOC
            );
        }
        assert_eq!(
            stream(opts(false, None, 80), ["no newline"]),
            b"no newline\n"
        );
        assert_eq!(stream(opts(true, None, 80), [""]), b"");
    }

    #[test]
    fn final_screen_is_the_same_for_every_split() {
        for width in [17, 40, 80] {
            // One renderer per width, reused: syntect compiles its regexes once, and reuse
            // after `finish` is checked too.
            let mut r = MarkdownRenderer::new(opts(true, None, width));
            for chunks in splits(DOC) {
                let out = stream_into(&mut r, chunks);
                assert_eq!(screen(&out, width), visible(), "width {width}");
            }
        }
    }

    #[test]
    fn crlf_is_treated_as_lf() {
        let crlf = DOC.replace('\n', "\r\n");
        let mut r = MarkdownRenderer::new(opts(true, None, 40));
        for chunks in splits(&crlf) {
            let out = stream_into(&mut r, chunks.iter().copied());
            assert_eq!(screen(&out, 40), visible());
            let plain = stream(opts(false, Some(1000), 40), chunks);
            assert_eq!(String::from_utf8_lossy(&plain), DOC);
        }
    }

    #[test]
    fn markers_split_across_deltas_and_word_boundaries() {
        let out = stream(
            opts(true, None, 80),
            ["**bo", "ld** and\n``", "`rust\nlet x = 1;\n``", "`\n"],
        );
        let text = String::from_utf8_lossy(&out);
        assert!(text.contains("\x1b[0;1mbold\x1b[0m and"), "{text:?}");
        assert_eq!(screen(&out, 80), "bold and\n```rust\nlet x = 1;\n```\n");
        let doc = "snake_case_word 2*3*4 a * b * c **x**y _ok_\n";
        let out = stream(opts(true, None, 80), [doc]);
        assert_eq!(
            screen(&out, 80),
            "snake_case_word 2*3*4 a * b * c **x**y ok\n"
        );
    }

    #[test]
    fn styled_lines_end_with_reset_and_finish_adds_newline() {
        let out = MarkdownRenderer::render_all(opts(true, None, 80), "# Head\n- item\ntail `code`");
        let text = String::from_utf8_lossy(&out);
        assert!(
            text.lines().all(|line| line.ends_with("\x1b[0m")),
            "{text:?}"
        );
        assert!(text.ends_with("\x1b[0m\n"));
        assert_eq!(screen(&out, 80), "# Head\n- item\ntail `code`\n");
    }

    #[test]
    fn wrapping_committed_lines() {
        let doc = "- alpha beta gamma delta\n> one two three four\n|a|b c d e f g h i j|\n```\nlet long = code_line;\n```\n";
        let expected = "- alpha beta\n  gamma delta\n> one two\n> three four\n|a|b c d e f g h i j|\n```\nlet long = code_line;\n```\n";
        let plain = stream(opts(false, Some(14), 80), split(doc, || 2));
        assert_eq!(String::from_utf8_lossy(&plain), expected);
        assert_eq!(
            screen(&stream(opts(true, Some(14), 80), split(doc, || 2)), 80),
            expected
        );
        let code = RenderOptions {
            wrap_code: true,
            ..opts(true, Some(14), 80)
        };
        let text = screen(&MarkdownRenderer::render_all(code, doc), 80);
        assert!(
            text.ends_with("```\nlet long =\ncode_line;\n```\n"),
            "{text}"
        );
    }

    #[test]
    fn erase_rows_matches_terminal_wrap() {
        let x = |n| "x".repeat(n);
        assert_eq!(
            [0, 3, 10, 11, 20, 21].map(|n| erase_rows(&x(n), 10)),
            [0, 0, 0, 1, 1, 2]
        );
        assert_eq!((erase_rows(&x(80), 0), erase_rows(&x(81), 0)), (0, 1));
        // A wide character that does not fit in the last column wraps early.
        assert_eq!((erase_rows("abcd漢", 5), erase_rows("abc漢", 5)), (1, 0));
    }

    #[test]
    fn snapshots_dark_and_light() {
        let mut settings = insta::Settings::clone_current();
        settings.set_prepend_module_to_snapshot(false);
        settings.bind(|| {
            for (light, name) in [(false, "markdown_dark"), (true, "markdown_light")] {
                let out = MarkdownRenderer::render_all(
                    RenderOptions {
                        light,
                        ..opts(true, None, 80)
                    },
                    DOC,
                );
                insta::assert_snapshot!(name, String::from_utf8_lossy(&out).replace('\x1b', "␛"));
            }
        });
    }

    #[test]
    fn cost_per_delta_does_not_grow() {
        let words: Vec<&str> = (0..20_000)
            .map(|i| match i % 97 {
                0 => "\n\n- ",
                13 => "**strong** ",
                51 => "`code` ",
                96 => "end.\n\n",
                _ => "word ",
            })
            .collect();
        let input: usize = words.iter().map(|w| w.len()).sum();
        let start = std::time::Instant::now();
        let out = stream(opts(true, Some(100), 80), words);
        let elapsed = start.elapsed();
        assert!(out.len() < 4 * input, "{} bytes for {input}", out.len());
        // Linear work takes tens of milliseconds even in a debug build; re-rendering the
        // answer per delta would take seconds. The margin absorbs a loaded CI machine.
        assert!(elapsed.as_millis() < 1000, "{elapsed:?}");
    }
}
