//! `-c/--code`: pulling the code out of an answer.

/// Code extracted from an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Code {
    /// Fence language, empty when none.
    pub lang: String,
    /// The code, without fences.
    pub text: String,
}

/// The first fenced code block of `answer` (after dropping a leading `<think>` block);
/// the whole trimmed answer when it has no fences.
pub fn extract(answer: &str) -> Code {
    let answer = loki_wire::openai_wire::strip_think(answer);
    let mut lines = answer.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        let fence = if trimmed.starts_with("```") {
            "```"
        } else if trimmed.starts_with("~~~") {
            "~~~"
        } else {
            continue;
        };
        let lang = trimmed.trim_start_matches(fence.chars().next().unwrap_or('`'));
        let lang = lang.split_whitespace().next().unwrap_or("").to_string();
        let mut text = String::new();
        for line in lines.by_ref() {
            if line.trim_start().starts_with(fence) {
                break;
            }
            text.push_str(line);
            text.push('\n');
        }
        return Code { lang, text };
    }
    Code {
        lang: String::new(),
        text: answer.trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fenced_block() {
        let c = extract("Here:\n```bash\nls -la\necho hi\n```\nmore\n```py\nx\n```");
        assert_eq!(c.lang, "bash");
        assert_eq!(c.text, "ls -la\necho hi\n");
    }

    #[test]
    fn no_fence_returns_answer() {
        assert_eq!(extract("  ls -la \n").text, "ls -la");
    }

    #[test]
    fn think_is_dropped_and_unterminated_fence_kept() {
        let c = extract("<think>```no```</think>\n~~~\ncode\n");
        assert_eq!(c.text, "code\n");
        assert_eq!(c.lang, "");
    }
}
