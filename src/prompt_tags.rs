//! Text that loki places between the XML-like tags of the prompts it writes
//! (`<context uri="…">` for an editor's embedded resources, `<context>`, `<sources>`
//! and `<question>` in the knowledge-base template): what a file, a tool or a document
//! holds must not end its element early and have what follows read as loki's own
//! words or the user's.

/// `value` as an attribute value between double quotes.
pub fn escape_attribute(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
    out
}

/// `text` with anything that could pass for the closing tag of one of `tags` — `</tag`
/// in any case, with spaces around the `/` or not — written `<\/tag`.
pub fn defuse_closing(text: &str, tags: &[&str]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let slashed = after.trim_start().strip_prefix('/').map(str::trim_start);
        let closes = slashed.is_some_and(|tail| {
            tags.iter().any(|tag| {
                tail.get(..tag.len())
                    .is_some_and(|word| word.eq_ignore_ascii_case(tag))
            })
        });
        out.push_str(if closes { "<\\" } else { "<" });
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closing_tags_are_defused_in_any_spelling() {
        let text = "a </context> b < / CONTEXT> c </sources> d </contextual> e <b>";
        assert_eq!(
            defuse_closing(text, &["context", "sources"]),
            "a <\\/context> b <\\ / CONTEXT> c <\\/sources> d <\\/contextual> e <b>"
        );
        assert_eq!(
            defuse_closing("x </question>", &["context"]),
            "x </question>"
        );
    }

    #[test]
    fn attributes_cannot_be_left() {
        assert_eq!(
            escape_attribute("a\"><b x='1'>&\n"),
            "a&quot;&gt;&lt;b x=&apos;1&apos;&gt;&amp;&#10;"
        );
    }
}
