//! Options written after the prompt. Claude Code's documentation puts them there, after a
//! quoted prompt (`claude -p "query" --output-format json`), while loki's text takes every
//! word after the first as the prompt (`loki what does ls -la do`). When the prompt is one
//! word of the command line (quoted) and one of loki's long options (`--name` or
//! `--name=value`) follows it, that option and the ones after it are taken as options,
//! with their values, and the other words stay the prompt, in order. Prose written
//! without quotes (`loki what does --model do`) stays the prompt; short options stay
//! prompt words (`-r` of `grep -r` is no role); everything after `--` is text.

use clap::CommandFactory;

use super::args::Args;

/// `argv` (without the program name) with the long options that follow the prompt's
/// first word moved before it, and the prompt's words after a `--`; unchanged when none
/// follows it.
pub fn hoist(argv: &[String]) -> Option<Vec<String>> {
    // Most command lines have no long option after a word that is not an option: they
    // are left alone without building clap's description of every option (a few
    // megabytes of a one-shot run's memory).
    let first_word = argv.iter().position(|w| !w.starts_with('-'))?;
    if !argv[first_word + 1..]
        .iter()
        .any(|w| w.starts_with("--") && w.len() > 2)
    {
        return None;
    }
    let command = Args::command();
    let arity = Arity { command: &command };
    let start = arity.text_start(argv)?;
    let text = &argv[start..];
    let first = text
        .iter()
        .take_while(|w| *w != "--")
        .position(|w| arity.long(w).is_some())
        // Only right after a quoted prompt, Claude's order.
        .filter(|at| *at == 1)?;
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
            Some(value) => {
                options.push(word.clone());
                let taken = value.taken(&text[i + 1..]);
                options.extend(text[i + 1..i + 1 + taken].iter().cloned());
                i += taken;
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
    /// For one of loki's long options (`--name`, an alias, or `--name=value`): what it
    /// takes of the next word.
    fn long(&self, word: &str) -> Option<Value> {
        let name = word.strip_prefix("--").filter(|n| !n.is_empty())?;
        let (name, inline) = match name.split_once('=') {
            Some((name, _)) => (name, true),
            None => (name, false),
        };
        let arg = self.command.get_arguments().find(|a| {
            a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|all| all.contains(&name))
        })?;
        Some(if inline { Value::None } else { value_of(arg) })
    }

    /// For a short option cluster (`-p`, `-m`, `-pm`): what it takes of the next word
    /// (its last letter's value, when nothing follows that letter in the cluster).
    fn short(&self, word: &str) -> Value {
        let letters: Vec<char> = word.chars().skip(1).collect();
        for (at, letter) in letters.iter().enumerate() {
            let Some(arg) = self
                .command
                .get_arguments()
                .find(|a| a.get_short() == Some(*letter))
            else {
                return Value::None;
            };
            let value = value_of(arg);
            if value != Value::None {
                // `-mVALUE` holds its value; `-m VALUE` takes the next word.
                return if at + 1 == letters.len() {
                    value
                } else {
                    Value::None
                };
            }
        }
        Value::None
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
            let value = if word.starts_with("--") {
                self.long(word).unwrap_or(Value::None)
            } else if word.starts_with('-') && word.len() > 1 {
                self.short(word)
            } else {
                return Some(i);
            };
            i += 1 + value.taken(&argv[i + 1..]);
        }
        None
    }
}

/// What an option takes of the word after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    /// Nothing: a flag.
    None,
    /// Always this many words (`--model NAME`, `--agent-variable NAME VALUE`).
    Required(usize),
    /// Its value unless it looks like an option (`-s [NAME]`, `--serve [ADDR]`).
    Optional,
}

impl Value {
    /// How many of the words `after` the option are its values.
    fn taken(self, after: &[String]) -> usize {
        match self {
            Value::None => 0,
            Value::Required(n) => n.min(after.len()),
            Value::Optional => usize::from(after.first().is_some_and(|w| !w.starts_with('-'))),
        }
    }
}

fn value_of(arg: &clap::Arg) -> Value {
    if !arg.get_action().takes_values() {
        return Value::None;
    }
    match arg.get_num_args() {
        Some(n) if n.min_values() == 0 => Value::Optional,
        Some(n) => Value::Required(n.min_values()),
        None => Value::Required(1),
    }
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
            hoist(&[
                "tidy up".to_string(),
                "--disallowedTools".into(),
                "Bash(rm:*)".into(),
                "now".into()
            ]),
            Some(vec![
                "--disallowedTools".to_string(),
                "Bash(rm:*)".into(),
                "--".into(),
                "tidy up".into(),
                "now".into()
            ])
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
        // Prose without quotes keeps loki's option names as words.
        assert_eq!(hoist(&words("what does --model do")), None);
        // `-s` takes an optional name: `-s chat --rag lore hi` is all options but `hi`.
        assert_eq!(hoist(&words("-s chat --rag lore hi")), None);
        assert_eq!(
            hoist(&words("-a demo --agent-variable user Bob --yolo hi")),
            None
        );
        assert_eq!(
            hoist(&words("-a demo hi --agent-variable user Bob")),
            Some(words("-a demo --agent-variable user Bob -- hi"))
        );
        assert_eq!(
            hoist(&words("-s chat hi --rag lore")),
            Some(words("-s chat --rag lore -- hi"))
        );
        // After `--` inside the text, the rest is the prompt.
        assert_eq!(
            hoist(&words("hi --model fake:x -- --model stays")),
            Some(words("--model fake:x -- hi --model stays"))
        );
    }
}
