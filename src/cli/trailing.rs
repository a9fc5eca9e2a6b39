//! Options written after the prompt. Claude Code's documentation puts them there
//! (`claude -p "query" --output-format json`), while loki's text takes every word after
//! the first as the prompt (`loki explain ls -la`). A word of the text that is one of
//! loki's long options (`--name` or `--name=value`) is taken as that option, with its
//! value, and the words between stay the prompt, in order; short options stay prompt
//! words (`-r` of `grep -r` is no role), and everything after `--` is text.

use clap::CommandFactory;

use super::args::Args;

/// `argv` (without the program name) with the long options that follow the prompt's
/// first word moved before it, and the prompt's words after a `--`; unchanged when none
/// follows it.
pub fn hoist(argv: &[String]) -> Option<Vec<String>> {
    let command = Args::command();
    let arity = Arity { command: &command };
    let start = arity.text_start(argv)?;
    let text = &argv[start..];
    let first = text
        .iter()
        .take_while(|w| *w != "--")
        .position(|w| arity.long(w).is_some())?;
    let mut options = Vec::new();
    let mut words: Vec<String> = text[..first].to_vec();
    let mut i = first;
    while i < text.len() {
        let word = &text[i];
        if word == "--" {
            words.extend(text[i + 1..].iter().cloned());
            break;
        }
        match arity.long(word) {
            Some(takes_value) => {
                options.push(word.clone());
                if takes_value && let Some(value) = text.get(i + 1) {
                    options.push(value.clone());
                    i += 1;
                }
            }
            None => words.push(word.clone()),
        }
        i += 1;
    }
    let mut hoisted = argv[..start].to_vec();
    hoisted.extend(options);
    hoisted.push("--".into());
    hoisted.extend(words);
    Some(hoisted)
}

/// What loki's options take.
struct Arity<'a> {
    command: &'a clap::Command,
}

impl Arity<'_> {
    /// For one of loki's long options (`--name`, an alias, or `--name=value`): whether
    /// the next word is its value.
    fn long(&self, word: &str) -> Option<bool> {
        let name = word.strip_prefix("--").filter(|n| !n.is_empty())?;
        let (name, inline) = match name.split_once('=') {
            Some((name, _)) => (name, true),
            None => (name, false),
        };
        let arg = self.command.get_arguments().find(|a| {
            a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|all| all.contains(&name))
        })?;
        Some(!inline && takes_value(arg))
    }

    /// For a short option cluster (`-p`, `-m`, `-pm`): whether the next word is a value
    /// (its last letter takes one and nothing follows it in the cluster).
    fn short(&self, word: &str) -> bool {
        let letters: Vec<char> = word.chars().skip(1).collect();
        for (at, letter) in letters.iter().enumerate() {
            let Some(arg) = self
                .command
                .get_arguments()
                .find(|a| a.get_short() == Some(*letter))
            else {
                return false;
            };
            if takes_value(arg) {
                // `-mVALUE` holds its value; `-m VALUE` takes the next word.
                return at + 1 == letters.len();
            }
        }
        false
    }

    /// Where the prompt's words begin: the first word that is no option or option value;
    /// none when there is no text or it comes after `--`.
    fn text_start(&self, argv: &[String]) -> Option<usize> {
        let mut i = 0;
        while i < argv.len() {
            let word = &argv[i];
            if word == "--" {
                return None;
            }
            let takes_next = if word.starts_with("--") {
                self.long(word).unwrap_or(false)
            } else if word.starts_with('-') && word.len() > 1 {
                self.short(word)
            } else {
                return Some(i);
            };
            i += if takes_next { 2 } else { 1 };
        }
        None
    }
}

/// Whether an option always takes a value (an optional one, `--serve [ADDR]`, does not
/// take the next word).
fn takes_value(arg: &clap::Arg) -> bool {
    arg.get_action().takes_values() && arg.get_num_args().is_none_or(|n| n.min_values() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn long_options_after_the_prompt_are_moved_before_it() {
        assert_eq!(
            hoist(&words("-p hello --output-format json")),
            Some(words("-p --output-format json -- hello"))
        );
        assert_eq!(
            hoist(&words("tidy up --disallowedTools Bash(rm:*) now")),
            Some(words("--disallowedTools Bash(rm:*) -- tidy up now"))
        );
        assert_eq!(
            hoist(&words("-m fake:x hi --output-format=json")),
            Some(words("-m fake:x --output-format=json -- hi"))
        );
    }

    #[test]
    fn prompts_without_loki_s_long_options_are_left_alone() {
        assert_eq!(hoist(&words("explain ls -la")), None);
        assert_eq!(hoist(&words("what does grep -r do")), None);
        assert_eq!(hoist(&words("explain git --amend")), None);
        assert_eq!(hoist(&words("-- what does --model do")), None);
        assert_eq!(hoist(&words("-m fake:x")), None);
        assert_eq!(hoist(&words("explain grep -r -- --model")), None);
        // After `--` inside the text, the rest is the prompt.
        assert_eq!(
            hoist(&words("hi --model fake:x -- --model stays")),
            Some(words("--model fake:x -- hi --model stays"))
        );
    }
}
