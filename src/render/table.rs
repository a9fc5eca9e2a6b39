//! Rows of `name   value` text (`.help`, `.info`) fitted to the terminal's width: a row
//! wider than the terminal wraps, its continuation lines hanging under the value column,
//! so the table stays a table instead of the terminal breaking rows at its edge.

use super::wrap::{display_width, hanging_wrap};

/// `text` with each line that does not fit in `width` columns wrapped. A line whose value
/// starts after a gap of two or more spaces hangs its continuation under that column
/// (when the column leaves room for the value); any other line wraps as it is. The last
/// column is never written, so the terminal never wraps on its own.
pub fn fit(text: &str, width: usize) -> String {
    let room = width.saturating_sub(1).max(1);
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        for (i, piece) in fit_line(body, room).iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(piece);
        }
        out.push_str(end);
    }
    out
}

/// One line as the rows it takes in `room` columns.
fn fit_line(line: &str, room: usize) -> Vec<String> {
    if display_width(line) <= room {
        return vec![line.to_string()];
    }
    let (at, hang) = value_column(line)
        // The value needs at least a third of the width to be worth hanging.
        .filter(|&(_, hang)| hang * 3 <= room * 2)
        .unwrap_or((0, 0));
    hanging_wrap(line, at, hang, room)
}

/// Where a row's value starts (byte offset, column): after the first gap of two or more
/// spaces that follows the name.
fn value_column(line: &str) -> Option<(usize, usize)> {
    let name_start = line.len() - line.trim_start().len();
    let rest = &line[name_start..];
    let gap = rest.find("  ")?;
    let after_gap = rest[gap..].len() - rest[gap..].trim_start_matches(' ').len();
    let at = name_start + gap + after_gap;
    (at < line.len()).then(|| (at, display_width(&line[..at])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_hang_under_their_column() {
        let text = format!("{:<10}{}\nshort     row\n", "name", "word ".repeat(10));
        let fitted = fit(&text, 31);
        for line in fitted.lines() {
            assert!(display_width(line) <= 30, "{line:?}");
        }
        let lines: Vec<&str> = fitted.lines().collect();
        assert!(lines[0].starts_with("name      word"), "{fitted}");
        assert!(lines[1].starts_with("          word"), "{fitted}");
        assert_eq!(lines.last(), Some(&"short     row"));
        assert_eq!(fit("fits  fine\n", 80), "fits  fine\n");
    }

    #[test]
    fn a_line_without_a_column_wraps_as_it_is() {
        let fitted = fit(&"a".repeat(25), 11);
        assert!(fitted.lines().all(|l| display_width(l) <= 10), "{fitted}");
        assert_eq!(fitted.replace('\n', ""), "a".repeat(25));
    }
}
