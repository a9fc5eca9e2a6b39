//! Skills and project instructions: context a conversation gets from files.
//!
//! A **skill** is `skills/<name>/SKILL.md` (or `skills/<name>.md`): instructions for one
//! kind of task, with front matter in YAML (`---`) or TOML (`+++`) giving its `name`,
//! `description`, `disable_model_invocation` and `user_invocable`. Skills come from the
//! config directory, from the user's Claude Code `~/.claude/skills/` and
//! `~/.claude/commands/`, and from `.loki/skills/`, `.claude/skills/` and
//! `.claude/commands/` in the project (the working directory or an ancestor; a project's
//! skill wins over one of the same name). A command's front matter may name the `model`
//! its turn runs with, the `allowed-tools` that run unasked in that turn, and an
//! `argument-hint` shown where commands are listed. The model sees a compact
//! index and reads a skill with `load_skills`; a person runs one as a prompt with
//! `/name args` (`$ARGUMENTS`, `$0`, `$1`, … filled in, quote-aware).
//!
//! **Project instructions** are the `AGENTS.md` files (or `CLAUDE.md` where a directory has
//! no `AGENTS.md`) from the filesystem root down to the working directory, included in the
//! system prompt (capped at [`MAX_PROJECT_BYTES`] in all, the nearest files first).

use std::path::{Path, PathBuf};

/// The most bytes of project instructions included.
pub const MAX_PROJECT_BYTES: usize = 32 * 1024;
/// The largest skill file read.
const MAX_SKILL_BYTES: u64 = 256 * 1024;

/// One skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name (`/name`).
    pub name: String,
    /// One line about it.
    pub description: String,
    /// Its instructions (after the front matter).
    pub body: String,
    /// Where it was read from.
    pub path: PathBuf,
    /// Not offered to the model (only `/name` runs it).
    pub disable_model_invocation: bool,
    /// `/name` runs it (default true).
    pub user_invocable: bool,
    /// Front matter `model`: the model `/name`'s turn runs with (Claude Code's command
    /// front matter).
    pub model: Option<String>,
    /// Front matter `allowed-tools`: permission rules (`Bash(git add:*)`, `Read`) that
    /// let calls run unasked during `/name`'s turn.
    pub allowed_tools: Vec<String>,
    /// Front matter `argument-hint`: what `/name` takes, for completion and listings.
    pub argument_hint: Option<String>,
    /// The project directory it was found in (none for the user's own): its
    /// `allowed-tools` apply only once that project is trusted.
    pub project: Option<PathBuf>,
}

/// What `/name args` runs: the prompt, and the turn's model and allowed tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The skill's instructions, arguments filled in.
    pub prompt: String,
    /// The model for the turn, if the skill names one.
    pub model: Option<String>,
    /// Rules allowing calls without asking during the turn.
    pub allowed_tools: Vec<String>,
    /// The project the command comes from (none for the user's own).
    pub project: Option<PathBuf>,
}

/// Front matter: `---` YAML or `+++` TOML (flat `key = value`).
pub(crate) fn front_matter(text: &str) -> (Vec<(String, String)>, &str) {
    let text = text.trim_start_matches('\u{feff}');
    for fence in ["---", "+++"] {
        let Some(rest) = text.strip_prefix(fence) else {
            continue;
        };
        let Some(rest) = rest
            .strip_prefix('\n')
            .or_else(|| rest.strip_prefix("\r\n"))
        else {
            continue;
        };
        let Some(end) = rest.find(&format!("\n{fence}")) else {
            continue;
        };
        let header = &rest[..end];
        let body = rest[end + 1 + fence.len()..].trim_start_matches(['\r', '\n']);
        let separator = if fence == "---" { ':' } else { '=' };
        let mut fields: Vec<(String, String)> = Vec::new();
        for line in header.lines() {
            // A YAML list under the previous key (`allowed-tools:` then `  - Read`).
            if let Some(item) = line.trim().strip_prefix("- ")
                && let Some((_, value)) = fields.last_mut()
            {
                if !value.is_empty() {
                    value.push_str(", ");
                }
                value.push_str(unquote(item));
                continue;
            }
            if let Some((k, v)) = line.split_once(separator) {
                fields.push((k.trim().replace('-', "_"), unquote(v).to_string()));
            }
        }
        return (fields, body);
    }
    (Vec::new(), text)
}

impl Skill {
    /// Its description for listings and completion, led by its `argument-hint` when it
    /// has one (`NAME — Greet someone`).
    pub fn summary(&self) -> String {
        match &self.argument_hint {
            Some(hint) => format!("{hint} — {}", self.description),
            None => self.description.clone(),
        }
    }
}

fn unquote(value: &str) -> &str {
    value.trim().trim_matches('"').trim_matches('\'')
}

/// `allowed-tools` as written (`Bash(git add:*), Read`, or `[Read, Grep]`): the rules,
/// split at commas outside parentheses.
fn tool_list(value: &str) -> Vec<String> {
    let value = value.trim().trim_start_matches('[').trim_end_matches(']');
    crate::config::permissions::split_rule_list(value, |c| c == ',')
        .into_iter()
        .map(|r| unquote(&r).to_string())
        .filter(|r| !r.is_empty())
        .collect()
}

/// Parses a skill file; `fallback` names it when the front matter does not.
pub fn parse(text: &str, fallback: &str, path: &Path) -> Skill {
    let (fields, body) = front_matter(text);
    let field = |key: &str| {
        fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let flag = |key: &str, default: bool| {
        field(key).map_or(default, |v| matches!(v.as_str(), "true" | "yes" | "1"))
    };
    let description = field("description").unwrap_or_else(|| {
        body.lines()
            .map(|l| l.trim_start_matches('#').trim())
            .find(|l| !l.is_empty())
            .unwrap_or_default()
            .chars()
            .take(120)
            .collect()
    });
    Skill {
        name: field("name")
            .filter(|n| valid_name(n))
            .unwrap_or_else(|| fallback.to_string()),
        description,
        body: body.to_string(),
        path: path.to_path_buf(),
        disable_model_invocation: flag("disable_model_invocation", false),
        user_invocable: flag("user_invocable", true),
        model: field("model").filter(|m| !m.is_empty() && m != "inherit"),
        allowed_tools: field("allowed_tools")
            .map(|v| tool_list(&v))
            .unwrap_or_default(),
        argument_hint: field("argument_hint").filter(|h| !h.is_empty()),
        project: None,
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The skills of one `skills/` directory, in the order of their entries' names (not the
/// filesystem's, which varies), at most `limit` of them; also how many entries that may
/// hold a skill were left unread past the limit.
fn read_dir(dir: &Path, project: Option<&Path>, limit: usize) -> (Vec<Skill>, usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (Vec::new(), 0);
    };
    let mut candidates: Vec<(PathBuf, String)> = entries
        .flatten()
        .filter_map(|entry| {
            let path = entry.path();
            let (file, fallback) = if path.is_dir() {
                (path.join("SKILL.md"), entry.file_name())
            } else if path.extension().is_some_and(|e| e == "md") {
                let stem = path.file_stem().map(std::ffi::OsStr::to_os_string);
                (path, stem.unwrap_or_default())
            } else {
                return None;
            };
            let fallback = fallback.to_str().filter(|n| valid_name(n))?.to_string();
            Some((file, fallback))
        })
        .collect();
    candidates.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    let mut skills = Vec::new();
    for (at, (file, fallback)) in candidates.iter().enumerate() {
        if skills.len() == limit {
            return (skills, candidates.len() - at);
        }
        let fallback = fallback.as_str();
        // A project's files must resolve inside the project: a link to a secret
        // elsewhere (`~/.aws/credentials`) is skipped with a warning.
        if let Some(root) = project {
            let inside = std::fs::canonicalize(file)
                .ok()
                .zip(std::fs::canonicalize(root).ok())
                .is_some_and(|(f, r)| f.starts_with(r));
            if !inside {
                if file.exists() {
                    tracing::warn!(
                        "skipped {}: it resolves outside the project",
                        file.display()
                    );
                }
                continue;
            }
        }
        // Regular files of a bounded size only.
        let Ok(meta) = std::fs::metadata(file) else {
            continue;
        };
        if !meta.is_file() || meta.len() > MAX_SKILL_BYTES {
            continue;
        }
        if let Ok(text) = std::fs::read_to_string(file) {
            let mut skill = parse(&text, fallback, file);
            skill.project = project.map(Path::to_path_buf);
            skills.push(skill);
        }
    }
    (skills, 0)
}

/// How deep below a `commands/` directory command files are found.
const COMMAND_DEPTH: usize = 3;

/// The commands of a `commands/` directory and of its subdirectories, which only sort
/// them (Claude Code: `.claude/commands/frontend/component.md` is `/component`); the
/// nearest of two with one name wins. At most `limit`, and how many were left out.
fn read_commands(
    dir: &Path,
    project: Option<&Path>,
    limit: usize,
    depth: usize,
) -> (Vec<Skill>, usize) {
    let (mut found, mut left_out) = read_dir(dir, project, limit);
    if depth + 1 >= COMMAND_DEPTH {
        return (found, left_out);
    }
    let mut subdirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .filter(|p| !p.join("SKILL.md").exists())
                .collect()
        })
        .unwrap_or_default();
    subdirs.sort();
    for subdir in subdirs {
        let room = limit.saturating_sub(found.len());
        let (nested, more) = read_commands(&subdir, project, room, depth + 1);
        left_out += more;
        for command in nested {
            if !found.iter().any(|c| c.name == command.name) {
                found.push(command);
            }
        }
    }
    (found, left_out)
}

/// Where a project keeps skills, nearest ancestor of `cwd` first: `.loki/skills/`,
/// Claude Code's `.claude/skills/`, and `.claude/commands/` (slash commands: run with
/// `/name args`, not offered to the model). Each with the project directory it is in.
fn project_dirs(cwd: &Path) -> Vec<(PathBuf, PathBuf, bool)> {
    [
        (".loki", "skills", false),
        (".claude", "skills", false),
        (".claude", "commands", true),
    ]
    .into_iter()
    .filter_map(|(folder, kind, commands)| {
        cwd.ancestors()
            .find(|d| d.join(folder).join(kind).is_dir())
            .map(|root| (root.join(folder).join(kind), root.to_path_buf(), commands))
    })
    .collect()
}

/// The user's Claude Code skills and commands (`~/.claude/skills`, `~/.claude/commands`),
/// each with whether it holds commands.
fn user_dirs() -> Vec<(PathBuf, bool)> {
    let Some(home) = dirs::home_dir() else {
        return Vec::new();
    };
    let claude = home.join(".claude");
    vec![
        (claude.join("skills"), false),
        (claude.join("commands"), true),
    ]
}

/// Marks a skill read from a commands directory: run with `/name`, not offered to the
/// model.
fn as_command(mut skill: Skill) -> Skill {
    skill.disable_model_invocation = true;
    skill.user_invocable = true;
    skill
}

/// The skills of the config directory's `skills/`, the user's `~/.claude/skills` and
/// `~/.claude/commands`, and the project's (a project's win over the user's, the
/// user's Claude ones over the config directory's; `.loki/skills` over `.claude/`),
/// sorted by name.
pub fn discover(config_skills: &Path, cwd: &Path) -> Vec<Skill> {
    discover_noting(config_skills, cwd).0
}

/// [`discover`], with a line for the user about each project directory that holds more
/// than [`MAX_PROJECT_SKILLS`] (the first by name are used; the rest are left out).
pub fn discover_noting(config_skills: &Path, cwd: &Path) -> (Vec<Skill>, Vec<String>) {
    let (mut skills, _) = read_dir(config_skills, None, usize::MAX);
    for (dir, commands) in user_dirs() {
        if dir == config_skills {
            continue;
        }
        let found = if commands {
            read_commands(&dir, None, usize::MAX, 0).0
        } else {
            read_dir(&dir, None, usize::MAX).0
        };
        for skill in found {
            let skill = if commands { as_command(skill) } else { skill };
            skills.retain(|s| s.name != skill.name);
            skills.push(skill);
        }
    }
    let mut project = Vec::new();
    let mut notes = Vec::new();
    for (dir, root, commands) in project_dirs(cwd) {
        if dir == config_skills {
            continue;
        }
        let (found, left_out) = if commands {
            read_commands(&dir, Some(&root), MAX_PROJECT_SKILLS, 0)
        } else {
            read_dir(&dir, Some(&root), MAX_PROJECT_SKILLS)
        };
        if left_out > 0 {
            let note = format!(
                "{}: {left_out} more skills left out; a project directory contributes at most \
                 {MAX_PROJECT_SKILLS} (the first by name)",
                dir.display()
            );
            tracing::warn!("{note}");
            notes.push(note);
        }
        for skill in found {
            let skill = if commands { as_command(skill) } else { skill };
            if !project.iter().any(|s: &Skill| s.name == skill.name) {
                project.push(skill);
            }
        }
    }
    for skill in project {
        skills.retain(|s| s.name != skill.name);
        skills.push(skill);
    }
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    (skills, notes)
}

/// Most skills one project directory contributes (a repository cannot fill every prompt
/// with thousands of entries).
pub const MAX_PROJECT_SKILLS: usize = 100;

/// Longest description of a skill in the index; the rest is in the skill's file.
const MAX_INDEX_DESCRIPTION: usize = 300;

/// The index the model sees: one line per skill it may load.
pub fn index(skills: &[Skill]) -> Option<String> {
    let lines: Vec<String> = skills
        .iter()
        .filter(|s| !s.disable_model_invocation)
        .map(|s| {
            let mut description: String =
                s.description.chars().take(MAX_INDEX_DESCRIPTION).collect();
            if description.len() < s.description.len() {
                description.push('…');
            }
            format!("- {}: {}", s.name, description.replace('\n', " "))
        })
        .collect();
    (!lines.is_empty()).then(|| {
        format!(
            "## Skills\nInstructions for particular tasks. When one matches what you are asked, read it with the load_skills tool first:\n{}",
            lines.join("\n")
        )
    })
}

/// `/name args`: the skill `text` invokes, if it names one a person may run, with its
/// arguments filled in.
pub fn invoke(skills: &[Skill], text: &str) -> Option<String> {
    invocation(skills, text).map(|i| i.prompt)
}

/// `/name args`: what the skill `text` names runs — its prompt, and the model and
/// allowed tools of its turn.
pub fn invocation(skills: &[Skill], text: &str) -> Option<Invocation> {
    let rest = text.strip_prefix('/')?;
    let (name, args) = rest
        .split_once(char::is_whitespace)
        .map_or((rest, ""), |(n, a)| (n, a.trim()));
    let skill = skills.iter().find(|s| s.name == name && s.user_invocable)?;
    Some(Invocation {
        prompt: expand(&skill.body, args),
        model: skill.model.clone(),
        allowed_tools: skill.allowed_tools.clone(),
        project: skill.project.clone(),
    })
}

/// Fills in `$ARGUMENTS` (all of `args`) and `$0`, `$1`, … (its words, quote-aware).
/// A skill that uses none of them gets the arguments appended.
pub fn expand(body: &str, args: &str) -> String {
    let words = crate::shell_words::split(args);
    let mut out = String::with_capacity(body.len() + args.len());
    let mut used = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            used = true;
            rest = tail;
            continue;
        }
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        if digits.is_empty() {
            out.push('$');
            rest = after;
            continue;
        }
        let index: usize = digits.parse().unwrap_or(usize::MAX);
        out.push_str(words.get(index).map_or("", String::as_str));
        used = true;
        rest = &after[digits.len()..];
    }
    out.push_str(rest);
    if !used && !args.is_empty() {
        out.push_str("\n\n");
        out.push_str(args);
    }
    out
}

/// A directory's instruction file: the first of these it has (Claude Code keeps its
/// project file at `CLAUDE.md` or `.claude/CLAUDE.md`).
const INSTRUCTION_FILES: [&str; 3] = ["AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md"];

/// A directory's personal instructions, read besides its instruction file (Claude Code's
/// `CLAUDE.local.md`, kept out of the repository).
const LOCAL_INSTRUCTION_FILE: &str = "CLAUDE.local.md";

/// The project instructions for `cwd`: every `AGENTS.md` (or `CLAUDE.md`, or
/// `.claude/CLAUDE.md`), and every `CLAUDE.local.md`, from the root down, outermost first, at most [`MAX_PROJECT_BYTES`] in all (filled from `cwd`
/// upward, so the nearest files are the ones kept whole). Inside the project (the
/// repository holding `cwd`, else `cwd`) a file must resolve inside it; above it, a file
/// another user owns or others may write is not the user's word. Either is skipped with
/// a warning, as is anything but a regular file.
pub fn project_instructions(cwd: &Path) -> Option<String> {
    let project = project_root(cwd);
    let mut found: Vec<(PathBuf, String)> = Vec::new();
    for dir in cwd.ancestors() {
        // Found from `cwd` upward and shown reversed: a directory's personal file
        // (`CLAUDE.local.md`) goes in first so that it is shown after its main one.
        let main = INSTRUCTION_FILES
            .iter()
            .map(|n| dir.join(n))
            .find(|p| std::fs::symlink_metadata(p).is_ok());
        let local =
            Some(dir.join(LOCAL_INSTRUCTION_FILE)).filter(|p| std::fs::symlink_metadata(p).is_ok());
        for file in [local, main].into_iter().flatten() {
            if let Some(why) = instruction_file_refused(&file, &project) {
                tracing::warn!("skipped {}: {why}", file.display());
                continue;
            }
            let text = read_capped(&file, MAX_PROJECT_BYTES);
            let text = with_imports(text, &file, &project, 0, &mut vec![file.clone()]);
            if !text.trim().is_empty() {
                found.push((file, text));
            }
        }
    }
    if found.is_empty() {
        return None;
    }
    // The budget goes to the nearest file first (`found` runs from `cwd` up): the
    // project's own instructions are kept whole, and a large file in an ancestor (a home
    // directory's `AGENTS.md`) is cut or left out instead of crowding them out.
    let mut left = MAX_PROJECT_BYTES;
    let mut kept = Vec::new();
    for (path, mut text) in found {
        if left == 0 {
            tracing::warn!(
                "skipped {}: instruction files nearer the working directory fill the \
                 {MAX_PROJECT_BYTES} bytes allowed",
                path.display()
            );
            continue;
        }
        if text.len() > left {
            let mut end = left;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push_str("\n[… cut: instruction files are capped]");
            tracing::warn!(
                "{}: instruction files past {MAX_PROJECT_BYTES} bytes in all are cut",
                path.display()
            );
        }
        left = left.saturating_sub(text.len());
        kept.push((path, text));
    }
    // Shown outermost first: nearer files refine what farther ones say.
    kept.reverse();
    let mut out = String::from(
        "## Project instructions\nFrom the project's instruction files; follow them unless the user says otherwise.\n",
    );
    for (path, text) in kept {
        out.push_str(&format!("\n### {}\n{}\n", path.display(), text.trim_end()));
    }
    Some(out)
}

/// The repository holding `cwd` (the nearest directory with `.git`), else `cwd`.
fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

/// Why an instruction file is not read, if it is not.
fn instruction_file_refused(file: &Path, project: &Path) -> Option<String> {
    let Ok(meta) = std::fs::metadata(file) else {
        return Some("it is a link to nothing".into());
    };
    if !meta.is_file() {
        return Some("it is not a regular file".into());
    }
    let resolved = std::fs::canonicalize(file).ok()?;
    let inside_project = file.parent().is_some_and(|dir| dir.starts_with(project));
    if inside_project {
        let root = std::fs::canonicalize(project).ok()?;
        if !resolved.starts_with(&root) {
            return Some(format!(
                "it resolves outside the project, to {}",
                resolved.display()
            ));
        }
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let me = rustix::process::getuid().as_raw();
        if meta.uid() != me && meta.uid() != 0 {
            return Some("another user owns it".into());
        }
        if meta.mode() & 0o022 != 0 {
            return Some("others may write it".into());
        }
    }
    None
}

/// Most hops of `@path` imports followed from an instruction file (as in Claude Code).
const MAX_IMPORT_DEPTH: usize = 5;

/// `text`, of the instruction file `file`, followed by the files it imports with
/// `@path` (Claude Code's `CLAUDE.md` imports: relative to the file, `~/` for the home
/// directory; not inside code spans or fenced blocks), each under a line naming it, and
/// theirs in turn, [`MAX_IMPORT_DEPTH`] hops at most. A file of the project imports only
/// from the project; any import passes the checks an instruction file does. One that
/// fails them is skipped with a warning in the log.
fn with_imports(
    text: String,
    file: &Path,
    project: &Path,
    depth: usize,
    seen: &mut Vec<PathBuf>,
) -> String {
    if depth >= MAX_IMPORT_DEPTH {
        return text;
    }
    let from_project = file.parent().is_some_and(|dir| dir.starts_with(project));
    let root = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
    let mut out = text.clone();
    for target in import_paths(&text) {
        let path = match (target.strip_prefix("~/"), dirs::home_dir()) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => file
                .parent()
                .map_or_else(|| PathBuf::from(&target), |dir| dir.join(&target)),
        };
        let Ok(resolved) = std::fs::canonicalize(&path) else {
            continue;
        };
        if seen.contains(&resolved) {
            continue;
        }
        let refused = if from_project && !resolved.starts_with(&root) {
            Some(format!(
                "a project file imports only from the project, not {}",
                resolved.display()
            ))
        } else {
            instruction_file_refused(&path, project)
        };
        if let Some(why) = refused {
            tracing::warn!("skipped the import @{target} of {}: {why}", file.display());
            continue;
        }
        seen.push(resolved);
        let imported = read_capped(&path, MAX_PROJECT_BYTES);
        let imported = with_imports(imported, &path, project, depth + 1, seen);
        if !imported.trim().is_empty() {
            out.push_str(&format!(
                "\n\n(imported from {}:)\n{}",
                path.display(),
                imported.trim_end()
            ));
        }
    }
    out
}

/// The `@path` words of `text` outside fenced blocks and code spans, in order.
fn import_paths(text: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Even pieces between backticks are prose; odd ones are code spans.
        for piece in line.split('`').step_by(2) {
            for word in piece.split_whitespace() {
                let Some(target) = word.strip_prefix('@') else {
                    continue;
                };
                let target = target.trim_end_matches(['.', ',', ';', ':', ')', '!', '?']);
                if !target.is_empty() && !target.contains('@') && !paths.iter().any(|p| p == target)
                {
                    paths.push(target.to_string());
                }
            }
        }
    }
    paths
}

fn read_capped(path: &Path, cap: usize) -> String {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else {
        return String::new();
    };
    let mut bytes = Vec::new();
    let _ = file.take(cap as u64 + 1).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_contributes_at_most_a_hundred_skills_with_short_descriptions() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let skills = project.join(".loki/skills");
        for n in 0..150 {
            let skill = skills.join(format!("s{n:03}"));
            std::fs::create_dir_all(&skill).unwrap();
            let long = "x".repeat(1000);
            std::fs::write(
                skill.join("SKILL.md"),
                format!("---\ndescription: {long}\n---\nDo it.\n"),
            )
            .unwrap();
        }
        let (found, notes) = discover_noting(&dir.path().join("config-skills"), &project);
        assert_eq!(found.len(), MAX_PROJECT_SKILLS);
        assert_eq!(found.last().map(|s| s.name.as_str()), Some("s099"));
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("50 more skills left out"), "{notes:?}");
        let index = index(&found).unwrap();
        assert!(index.len() < MAX_PROJECT_SKILLS * 330, "{}", index.len());
    }

    #[test]
    fn front_matter_in_yaml_or_toml() {
        let yaml = parse(
            "---\nname: review\ndescription: Review a diff\ndisable-model-invocation: true\n---\nLook at $ARGUMENTS.\n",
            "x",
            Path::new("a"),
        );
        assert_eq!(yaml.name, "review");
        assert_eq!(yaml.description, "Review a diff");
        assert!(yaml.disable_model_invocation && yaml.user_invocable);
        assert_eq!(yaml.body, "Look at $ARGUMENTS.\n");
        let toml = parse(
            "+++\nname = \"sum\"\ndescription = \"Summarise\"\nuser_invocable = false\n+++\n\nBody",
            "x",
            Path::new("b"),
        );
        assert_eq!((toml.name.as_str(), toml.user_invocable), ("sum", false));
        assert_eq!(toml.body, "Body");
        let command = parse(
            "---\nmodel: fake:other\nargument-hint: [message]\nallowed-tools: Bash(git add:*), Bash(git commit:*)\n---\nCommit.",
            "commit",
            Path::new("d"),
        );
        assert_eq!(command.model.as_deref(), Some("fake:other"));
        assert_eq!(command.argument_hint.as_deref(), Some("[message]"));
        assert_eq!(
            command.allowed_tools,
            ["Bash(git add:*)", "Bash(git commit:*)"]
        );
        let listed = parse(
            "---\nallowed-tools:\n  - Read\n  - \"Bash(ls:*)\"\n---\nList.",
            "ls",
            Path::new("e"),
        );
        assert_eq!(listed.allowed_tools, ["Read", "Bash(ls:*)"]);
        let bare = parse("# Deploy the app\nSteps…", "deploy", Path::new("c"));
        assert_eq!(
            (bare.name.as_str(), bare.description.as_str()),
            ("deploy", "Deploy the app")
        );
    }

    #[test]
    fn arguments_are_filled_in_quote_aware() {
        assert_eq!(
            expand(
                "Compare $0 with $1 ($ARGUMENTS); $5 is empty; cost $x",
                r#""a b" c"#
            ),
            r#"Compare a b with c ("a b" c);  is empty; cost $x"#
        );
        assert_eq!(expand("Summarise.", "notes.md"), "Summarise.\n\nnotes.md");
        let skills = vec![parse("Fix $ARGUMENTS", "fix", Path::new("f"))];
        assert_eq!(
            invoke(&skills, "/fix the bug").as_deref(),
            Some("Fix the bug")
        );
        assert_eq!(invoke(&skills, "/other x"), None);
        assert_eq!(invoke(&skills, "fix"), None);
    }
}
