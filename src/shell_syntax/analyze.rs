//! Every program a command line would run, by its resolved name: through wrappers
//! (`env`, `command`, `sudo`, `nice`, `timeout`, `xargs`, …), `find -exec`, shells given
//! code (`sh -c`, `eval`, a here-document or here-string fed to a shell) and
//! substitutions. What cannot be known (a program named by a variable, code that only
//! exists at run time, a shell reading a pipe) makes the analysis uncertain.

use super::lexer::{self, Word};
use super::parser::{self, Simple};

/// How deep shells within shells are followed before giving up.
const MAX_DEPTH: usize = 8;

/// One program run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The program as written (`/bin/rm`, `./build.sh`).
    pub program: String,
    /// Its file name (`rm`, `build.sh`): what rules name.
    pub name: String,
    /// Its arguments (expansions left as written).
    pub args: Vec<String>,
    /// Every word of it is literal: no expansion can change what runs.
    pub literal: bool,
    /// It writes files through redirections (other than `/dev/null` and descriptors).
    pub writes: bool,
}

/// What a command line runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// Every program, in order of appearance (nested ones after the one holding them).
    pub invocations: Vec<Invocation>,
    /// Everything that runs is known: the text parsed, and no program is hidden behind
    /// an expansion, a pipe into a shell or a script the analysis cannot read.
    pub certain: bool,
}

/// Analyses `command`.
pub fn analyze(command: &str) -> Analysis {
    let mut analysis = Analysis {
        invocations: Vec::new(),
        certain: true,
    };
    script(command, 0, &mut analysis);
    analysis
}

fn script(code: &str, depth: usize, out: &mut Analysis) {
    if depth > MAX_DEPTH {
        out.certain = false;
        return;
    }
    let parsed = lexer::tokenize(code).and_then(parser::parse);
    let Ok(parsed) = parsed else {
        out.certain = false;
        return;
    };
    for code in &parsed.loose_code {
        script(code, depth + 1, out);
    }
    for command in &parsed.commands {
        simple(command, depth, out);
    }
}

fn simple(command: &Simple, depth: usize, out: &mut Analysis) {
    for word in command
        .assignments
        .iter()
        .chain(&command.words)
        .chain(command.redirects.iter().map(|(_, w)| w))
    {
        for code in &word.code {
            script(code, depth + 1, out);
        }
    }
    let writes = command
        .redirects
        .iter()
        .any(|(op, target)| writes_file(op, target));
    if command.words.is_empty() {
        return;
    }
    let stdin_code = command.redirects.iter().find_map(|(op, target)| match *op {
        "<<" | "<<-" | "<<<" => Some(target),
        _ => None,
    });
    invocation(&command.words, writes, stdin_code, depth, out);
}

/// Whether a redirection writes a file.
fn writes_file(op: &str, target: &Word) -> bool {
    match op {
        ">" | ">>" | ">|" | "&>" | "&>>" | "<>" => {
            !(target.literal
                && matches!(
                    target.value.as_str(),
                    "/dev/null" | "/dev/stdout" | "/dev/stderr"
                ))
        }
        // `>&2` duplicates a descriptor; `>&file` (bash) writes a file.
        ">&" | "<&" => {
            !(target.literal
                && (target.value == "-" || target.value.chars().all(|c| c.is_ascii_digit())))
        }
        _ => false,
    }
}

/// Records the program `words` run (after unwrapping wrappers) and follows code it is
/// given.
fn invocation(
    words: &[Word],
    writes: bool,
    stdin: Option<&Word>,
    depth: usize,
    out: &mut Analysis,
) {
    let Some((first, rest)) = words.split_first() else {
        return;
    };
    if !first.literal {
        // `$CMD x`, `"$(which rm)" y`: the program is not known.
        out.certain = false;
        out.invocations.push(Invocation {
            program: first.value.clone(),
            name: first.value.clone(),
            args: rest.iter().map(|w| w.value.clone()).collect(),
            literal: false,
            writes,
        });
        return;
    }
    let program = first.value.clone();
    let name = program.rsplit('/').next().unwrap_or(&program).to_string();
    out.invocations.push(Invocation {
        program,
        name: name.clone(),
        args: rest.iter().map(|w| w.value.clone()).collect(),
        literal: words.iter().all(|w| w.literal),
        writes,
    });
    match name.as_str() {
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash" | "busybox-sh" => {
            shell(rest, stdin, depth, out);
        }
        "eval" => {
            if rest.iter().all(|w| w.literal) {
                let code: Vec<&str> = rest.iter().map(|w| w.value.as_str()).collect();
                script(&code.join(" "), depth + 1, out);
            } else {
                out.certain = false;
            }
        }
        "source" | "." => out.certain = false,
        "find" => find(rest, writes, depth, out),
        "busybox" => invocation(rest, writes, stdin, depth + 1, out),
        _ => {
            if let Some(inner) = unwrap(&name, rest, out) {
                invocation(inner, writes, stdin, depth + 1, out);
            }
        }
    }
}

/// A shell: `-c CODE` is followed; reading a here-document or here-string runs it; a
/// shell that reads code from a pipe or a script file is uncertain.
fn shell(args: &[Word], stdin: Option<&Word>, depth: usize, out: &mut Analysis) {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if !arg.literal {
            out.certain = false;
            return;
        }
        let value = arg.value.as_str();
        if value == "-c"
            || (value.starts_with('-') && !value.starts_with("--") && value.contains('c'))
        {
            match args.next() {
                Some(code) if code.literal => script(&code.value, depth + 1, out),
                _ => out.certain = false,
            }
            return;
        }
        if value == "-o" || value == "+o" || value == "-O" || value == "+O" {
            args.next();
            continue;
        }
        if value.starts_with('-') || value.starts_with('+') {
            continue;
        }
        // A script file: its code is not on the command line.
        out.certain = false;
        return;
    }
    match stdin {
        Some(code) if code.literal => script(&code.value, depth + 1, out),
        // Code from a pipe, a file or an expanding here-document.
        _ => out.certain = false,
    }
}

/// `find … -exec CMD … ;` / `-execdir` / `-ok` / `-okdir` run CMD; `-delete` removes
/// like `rm`; `-fprint…`/`-fls` write files.
fn find(args: &[Word], writes: bool, depth: usize, out: &mut Analysis) {
    let mut i = 0;
    while i < args.len() {
        let value = args[i].value.as_str();
        match value {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let end = args[i + 1..]
                    .iter()
                    .position(|w| w.value == ";" || w.value == "+")
                    .map_or(args.len(), |p| i + 1 + p);
                let inner: Vec<Word> = args[i + 1..end]
                    .iter()
                    .filter(|w| w.value != "{}")
                    .cloned()
                    .collect();
                invocation(&inner, writes, None, depth + 1, out);
                i = end + 1;
                continue;
            }
            "-delete" => out.invocations.push(Invocation {
                program: "find -delete".into(),
                name: "rm".into(),
                args: Vec::new(),
                literal: true,
                writes: true,
            }),
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                if let Some(found) = out.invocations.iter_mut().rev().find(|v| v.name == "find") {
                    found.writes = true;
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// What a wrapper command's own arguments look like, to find the command it runs.
struct Wrapper {
    /// Options that take a value (the next word, when not `--opt=value`).
    with_value: &'static [&'static str],
    /// Words before the command that are not options (`timeout 5 rm`: one).
    positional: usize,
}

/// The wrappers known, and the shape of their arguments; none for other commands.
fn wrapper(name: &str) -> Option<Wrapper> {
    let (with_value, positional): (&'static [&'static str], usize) = match name {
        "command" | "builtin" | "exec" | "nohup" | "setsid" | "time" | "unbuffer" => (&["-a"], 0),
        "env" => (
            &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
            0,
        ),
        "nice" => (&["-n", "--adjustment"], 0),
        "ionice" => (&["-c", "--class", "-n", "--classdata", "-p", "-P", "-u"], 0),
        "timeout" => (&["-s", "--signal", "-k", "--kill-after"], 1),
        "stdbuf" => (&["-i", "-o", "-e", "--input", "--output", "--error"], 0),
        "taskset" => (&[], 1),
        "chrt" => (&[], 1),
        "flock" => (&["-w", "--timeout", "-E", "--conflict-exit-code"], 1),
        "sudo" | "doas" => (
            &[
                "-u",
                "--user",
                "-g",
                "--group",
                "-C",
                "--close-from",
                "-D",
                "--chdir",
                "-h",
                "--host",
                "-p",
                "--prompt",
                "-r",
                "--role",
                "-t",
                "--type",
                "-T",
                "--command-timeout",
                "-U",
                "--other-user",
            ],
            0,
        ),
        "xargs" => (
            &[
                "-a",
                "--arg-file",
                "-d",
                "--delimiter",
                "-E",
                "-e",
                "-I",
                "-i",
                "-L",
                "-l",
                "-n",
                "--max-args",
                "-P",
                "--max-procs",
                "-s",
                "--max-chars",
                "--process-slot-var",
            ],
            0,
        ),
        "watch" => (&["-n", "--interval", "-d", "--differences"], 0),
        "chroot" => (&["--userspec", "--groups"], 1),
        _ => return None,
    };
    Some(Wrapper {
        with_value,
        positional,
    })
}

/// The command a wrapper runs (`env X=1 rm` → `rm`), or none when `name` is not a
/// wrapper or runs nothing. Marks the analysis uncertain when the wrapped command cannot
/// be found in the words.
fn unwrap<'w>(name: &str, args: &'w [Word], out: &mut Analysis) -> Option<&'w [Word]> {
    let Wrapper {
        with_value,
        positional,
    } = wrapper(name)?;
    let mut i = 0;
    let mut left = positional;
    while i < args.len() {
        let word = &args[i];
        let value = word.value.as_str();
        if !word.literal {
            out.certain = false;
            return None;
        }
        if value == "--" {
            i += 1;
            break;
        }
        if name == "env" && (value.contains('=') && !value.starts_with('-')) {
            i += 1;
            continue;
        }
        if name == "env" && matches!(value, "-S" | "--split-string")
            || value.starts_with("--split-string=")
        {
            // `env -S "rm -rf x"`: the string is split into a command line.
            out.certain = false;
            return None;
        }
        if name == "command" && matches!(value, "-v" | "-V") {
            // A lookup, not a run.
            return None;
        }
        if (name == "sudo" || name == "doas")
            && matches!(value, "-s" | "-i" | "--shell" | "--login" | "-e" | "--edit")
        {
            out.certain = false;
            return None;
        }
        if value.starts_with('-') && value.len() > 1 {
            let takes = with_value.contains(&value);
            i += if takes { 2 } else { 1 };
            continue;
        }
        if left > 0 {
            left -= 1;
            i += 1;
            continue;
        }
        break;
    }
    let inner = &args[i.min(args.len())..];
    if name == "watch" && !inner.is_empty() {
        // `watch` runs its words through `sh -c`.
        out.certain = false;
    }
    (!inner.is_empty()).then_some(inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(command: &str) -> (Vec<String>, bool) {
        let a = analyze(command);
        (
            a.invocations.into_iter().map(|i| i.name).collect(),
            a.certain,
        )
    }

    fn runs_rm(command: &str) -> bool {
        analyze(command).invocations.iter().any(|i| i.name == "rm")
    }

    #[test]
    fn twenty_spellings_of_rm_are_all_found() {
        for command in [
            "rm -rf x",
            "/bin/rm -rf x",
            "\\rm -rf x",
            "'rm' -rf x",
            "command rm -rf x",
            "X=1 rm -rf x",
            "rm\t-rf x",
            "env rm -rf x",
            "env -i PATH=/bin rm x",
            "xargs rm < list",
            "find . -name '*.o' -delete",
            "find . -exec rm {} \\;",
            "echo ok && rm x",
            "echo $(rm x)",
            "echo `rm x`",
            "sh -c 'rm -rf x'",
            "bash -lc \"rm -rf x\"",
            "eval rm -rf x",
            "nice -n 5 timeout 10 rm x",
            "sudo -u root rm x",
            "(cd / && rm x)",
            "if true; then rm x; fi",
            "bash <<'EOF'\nrm -rf x\nEOF",
            "bash <<< 'rm x'",
            "cat <<EOF\n$(rm x)\nEOF",
            "busybox rm x",
            "for f in *; do rm \"$f\"; done",
            "exec rm x",
            "stdbuf -o0 rm x",
            "nohup rm x &",
        ] {
            assert!(runs_rm(command), "missed: {command:?}");
        }
    }

    #[test]
    fn what_cannot_be_known_is_uncertain() {
        for command in [
            "$CMD x",
            "\"$(which rm)\" x",
            "curl http://x | sh",
            "bash script.sh",
            "source ./env.sh",
            "env -S 'rm x'",
            "eval \"$X\"",
            "sh -c \"$1\"",
            "echo 'unterminated",
        ] {
            assert!(!analyze(command).certain, "certain: {command:?}");
        }
        assert_eq!(names("git diff --stat"), (vec!["git".to_string()], true));
        assert_eq!(
            names("git diff | head -n 5"),
            (vec!["git".to_string(), "head".to_string()], true)
        );
        assert!(!runs_rm("command -v rm"));
        assert!(!runs_rm("echo rm"));
    }

    #[test]
    fn redirections_to_files_are_writes() {
        let writes = |c: &str| analyze(c).invocations.iter().any(|i| i.writes);
        assert!(writes("git diff > out.patch"));
        assert!(writes("ls &>log"));
        assert!(!writes("git diff 2>/dev/null"));
        assert!(!writes("ls 2>&1"));
        assert!(writes("find . -fprint list"));
    }
}
