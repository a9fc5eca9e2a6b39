//! How a command rule (`execute_command(git diff:*)`, `Bash(npm test)`) meets what a
//! command line runs ([`crate::shell_syntax::analyze`]): by program name, whatever the
//! spelling, and — for allow rules — only when nothing in the command writes files.

use crate::shell_syntax::Invocation;

/// Options by which programs usually run to read write files (or run other programs):
/// an allow rule for the program does not cover a call that uses one.
const WRITING_OPTIONS: &[(&str, &[&str])] = &[
    (
        "git",
        &[
            "--output",
            "-o",
            "--ext-diff",
            "--exec",
            "--upload-pack",
            "--receive-pack",
        ],
    ),
    ("sed", &["-i", "--in-place"]),
    ("perl", &["-i"]),
    ("sort", &["-o", "--output"]),
    ("uniq", &[]),
    ("rg", &["--pre"]),
    (
        "curl",
        &[
            "-o",
            "--output",
            "-O",
            "--remote-name",
            "--remote-name-all",
            "-D",
            "--dump-header",
            "-c",
            "--cookie-jar",
            "-K",
            "--config",
        ],
    ),
    (
        "wget",
        &[
            "-O",
            "--output-document",
            "-o",
            "--output-file",
            "-a",
            "--append-output",
            "-P",
            "--directory-prefix",
        ],
    ),
    (
        "tar",
        &["-x", "--extract", "-c", "--create", "-f", "--file"],
    ),
    ("zip", &[]),
    ("npm", &["--prefix"]),
];

/// Programs whose every file argument is written.
const WRITERS: &[&str] = &["tee", "dd"];

/// A command pattern: the words a rule names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Words(Vec<String>);

impl Words {
    /// The words of `text` as a shell would split them.
    pub(super) fn of(text: &str) -> Self {
        Self(crate::shell_words::split(text))
    }

    /// Whether `call` starts with these words (`git diff` covers `/usr/bin/git diff -p`).
    pub(super) fn prefix_of(&self, call: &Invocation) -> bool {
        let Some((program, rest)) = self.0.split_first() else {
            return false;
        };
        names_program(program, call)
            && rest.len() <= call.args.len()
            && rest.iter().zip(&call.args).all(|(a, b)| a == b)
    }

    /// Whether `call` is exactly these words.
    pub(super) fn exactly(&self, call: &Invocation) -> bool {
        self.prefix_of(call) && self.0.len() == call.args.len() + 1
    }
}

/// Whether a rule's program word names the program `call` runs: the same as written,
/// or — for a bare name — the same file name (`rm` names `/bin/rm`).
fn names_program(word: &str, call: &Invocation) -> bool {
    word == call.program || (!word.contains('/') && word == call.name)
}

/// Whether `call` writes files by its options or arguments (so no prefix allow rule
/// covers it).
pub(super) fn writes_by_options(call: &Invocation) -> bool {
    if WRITERS.contains(&call.name.as_str()) {
        return call.args.iter().any(|a| !a.starts_with('-'));
    }
    let Some((_, options)) = WRITING_OPTIONS.iter().find(|(name, _)| *name == call.name) else {
        return false;
    };
    call.args.iter().any(|arg| {
        options.iter().any(|option| {
            arg == option
                || (option.starts_with("--") && arg.starts_with(&format!("{option}=")))
                // `-ofile`, `-i.bak`, and short options bundled with it (`-xzf`).
                || (!option.starts_with("--")
                    && arg.starts_with('-')
                    && !arg.starts_with("--")
                    && arg.len() > 2
                    && arg[1..].contains(&option[1..]))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell_syntax::analyze;

    fn first(command: &str) -> Invocation {
        analyze(command).invocations.remove(0)
    }

    #[test]
    fn prefixes_match_the_program_however_it_is_spelled() {
        let git_diff = Words::of("git diff");
        assert!(git_diff.prefix_of(&first("git diff --stat")));
        assert!(git_diff.prefix_of(&first("/usr/bin/git diff")));
        assert!(!git_diff.prefix_of(&first("git diffx")));
        assert!(!git_diff.prefix_of(&first("git -c x=y diff")));
        assert!(Words::of("npm test").exactly(&first("npm test")));
        assert!(!Words::of("npm test").exactly(&first("npm test --watch")));
        assert!(Words::of("./build.sh").prefix_of(&first("./build.sh all")));
    }

    #[test]
    fn writing_options_are_seen() {
        assert!(writes_by_options(&first("git diff --output=/tmp/x")));
        assert!(writes_by_options(&first("git diff --output /tmp/x")));
        assert!(!writes_by_options(&first("git diff --stat")));
        assert!(writes_by_options(&first("sed -i.bak s/a/b/ f")));
        assert!(!writes_by_options(&first("sed -n p f")));
        assert!(writes_by_options(&first("sort -o out in")));
        assert!(writes_by_options(&first("tee out")));
        assert!(!writes_by_options(&first("tee")));
        assert!(writes_by_options(&first("tar -xzf a.tgz")));
    }
}
