//! From tokens to the simple commands a script runs, wherever they stand: in pipelines
//! and lists, subshells and groups, `if`/`while`/`until`/`for`/`select`/`case` bodies and
//! function bodies. Loop and case headers, test expressions (`[[ ]]`) and arithmetic are
//! not commands; the code their substitutions run is kept.

use super::lexer::{Token, Unclear, Word};

/// One simple command as written: its assignments, words and redirections.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Simple {
    /// `NAME=value` words before the command.
    pub assignments: Vec<Word>,
    /// The command's words.
    pub words: Vec<Word>,
    /// Redirections: the operator and its target (a here-document's body for `<<`).
    pub redirects: Vec<(&'static str, Word)>,
}

/// The simple commands of a script, and code run outside any of them (loop headers,
/// `[[ ]]`, `(( ))`).
#[derive(Debug, Default)]
pub(super) struct Script {
    pub commands: Vec<Simple>,
    pub loose_code: Vec<String>,
}

/// Words that open or continue a compound command where a command could start.
const RESERVED: &[&str] = &[
    "!", "{", "}", "if", "then", "elif", "else", "fi", "do", "done", "while", "until", "time",
    "coproc",
];

/// Parses tokens into the script's simple commands.
pub(super) fn parse(tokens: Vec<Token>) -> Result<Script, Unclear> {
    let mut script = Script::default();
    let mut current = Simple::default();
    let mut tokens = tokens.into_iter().peekable();
    // Inside `case … in`: the next words up to `)` are a pattern.
    let mut case_depth = 0usize;
    let mut expect_pattern = false;
    while let Some(token) = tokens.next() {
        match token {
            Token::Newline | Token::Op(";" | "&" | "&&" | "||" | "|" | "|&") => {
                finish(&mut script, &mut current);
            }
            Token::Op(";;" | ";&" | ";;&") => {
                finish(&mut script, &mut current);
                expect_pattern = case_depth > 0;
            }
            Token::Op("(") => {
                if current.words.len() == 1
                    && current.assignments.is_empty()
                    && matches!(tokens.peek(), Some(Token::Op(")")))
                {
                    // `name() { … }`: a function definition; its body follows.
                    tokens.next();
                    current = Simple::default();
                } else if expect_pattern {
                    // `(pattern)` in a case.
                } else {
                    finish(&mut script, &mut current);
                }
            }
            Token::Op(")") => {
                if expect_pattern {
                    expect_pattern = false;
                    current = Simple::default();
                } else {
                    finish(&mut script, &mut current);
                }
            }
            Token::Op(_) => finish(&mut script, &mut current),
            Token::Arith(code) => script.loose_code.extend(code),
            Token::Redirect(op) => {
                let Some(Token::Word(target)) = tokens.next() else {
                    return Err(Unclear);
                };
                current.redirects.push((op, target));
            }
            Token::Word(word) => {
                if expect_pattern {
                    if !word.quoted && word.value == "esac" {
                        expect_pattern = false;
                        case_depth = case_depth.saturating_sub(1);
                    } else {
                        script.loose_code.extend(word.code);
                    }
                    continue;
                }
                let at_start = current.words.is_empty();
                if at_start && !word.quoted {
                    let keyword = word.value.as_str();
                    if keyword == "esac" {
                        case_depth = case_depth.saturating_sub(1);
                        continue;
                    }
                    if RESERVED.contains(&keyword) {
                        continue;
                    }
                    if matches!(keyword, "for" | "select" | "case") {
                        let is_case = keyword == "case";
                        header(&mut tokens, &mut script, is_case);
                        if is_case {
                            case_depth += 1;
                            expect_pattern = true;
                        }
                        continue;
                    }
                    if keyword == "function" {
                        // `function name [()]`: the body follows.
                        tokens.next();
                        if matches!(tokens.peek(), Some(Token::Op("("))) {
                            tokens.next();
                            tokens.next();
                        }
                        continue;
                    }
                    if keyword == "[[" {
                        test_expression(&mut tokens, &mut script);
                        continue;
                    }
                    if is_assignment(&word) {
                        current.assignments.push(word);
                        continue;
                    }
                }
                current.words.push(word);
            }
        }
    }
    finish(&mut script, &mut current);
    Ok(script)
}

/// Keeps `current` as a command if it has anything in it.
fn finish(script: &mut Script, current: &mut Simple) {
    let simple = std::mem::take(current);
    if !simple.words.is_empty() || !simple.assignments.is_empty() || !simple.redirects.is_empty() {
        script.commands.push(simple);
    }
}

/// Skips a `for`/`select` header up to the end of its word list, or a `case` header up to
/// `in`, keeping the code of substitutions in it.
fn header(
    tokens: &mut std::iter::Peekable<std::vec::IntoIter<Token>>,
    script: &mut Script,
    is_case: bool,
) {
    while let Some(token) = tokens.peek() {
        match token {
            Token::Word(w) if is_case && !w.quoted && w.value == "in" => {
                tokens.next();
                return;
            }
            Token::Word(w) if !is_case && !w.quoted && w.value == "do" => return,
            Token::Newline | Token::Op(";") if !is_case => {
                tokens.next();
                return;
            }
            Token::Arith(code) => {
                script.loose_code.extend(code.iter().cloned());
                tokens.next();
            }
            Token::Word(w) => {
                script.loose_code.extend(w.code.iter().cloned());
                tokens.next();
            }
            _ => {
                tokens.next();
            }
        }
    }
}

/// Skips `[[ … ]]`, keeping the code of substitutions in it.
fn test_expression(
    tokens: &mut std::iter::Peekable<std::vec::IntoIter<Token>>,
    script: &mut Script,
) {
    for token in tokens.by_ref() {
        if let Token::Word(w) = token {
            if !w.quoted && w.value == "]]" {
                return;
            }
            script.loose_code.extend(w.code);
        }
    }
}

/// `NAME=value` or `NAME+=value` (and `NAME[i]=value`).
fn is_assignment(word: &Word) -> bool {
    let Some((name, _)) = word.value.split_once('=') else {
        return false;
    };
    let name = name.strip_suffix('+').unwrap_or(name);
    let name = name.split_once('[').map_or(name, |(n, _)| n);
    !name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::super::lexer::tokenize;
    use super::*;

    fn commands(src: &str) -> Vec<Vec<String>> {
        parse(tokenize(src).unwrap())
            .unwrap()
            .commands
            .into_iter()
            .map(|c| c.words.into_iter().map(|w| w.value).collect())
            .filter(|w: &Vec<String>| !w.is_empty())
            .collect()
    }

    #[test]
    fn compound_commands_yield_their_simple_commands() {
        assert_eq!(
            commands("if true; then rm a; elif x; then :; else rm b; fi"),
            [
                vec!["true"],
                vec!["rm", "a"],
                vec!["x"],
                vec![":"],
                vec!["rm", "b"]
            ]
        );
        assert_eq!(
            commands("for f in a b; do rm \"$f\"; done"),
            [vec!["rm", "$f"]]
        );
        assert_eq!(
            commands("while read l; do echo $l; done < list"),
            [vec!["read", "l"], vec!["echo", "$l"]]
        );
        assert_eq!(
            commands("case $x in a|b) rm a;; (c) ls ;; esac; echo end"),
            [vec!["rm", "a"], vec!["ls"], vec!["echo", "end"]]
        );
        assert_eq!(
            commands("f() { rm -rf x; }; f"),
            [vec!["rm", "-rf", "x"], vec!["f"]]
        );
        assert_eq!(commands("function g { rm y; }"), [vec!["rm", "y"]]);
        assert_eq!(
            commands("(cd /; rm z) && { ls; } || ! rm w"),
            [
                vec!["cd", "/"],
                vec!["rm", "z"],
                vec!["ls"],
                vec!["rm", "w"]
            ]
        );
        assert_eq!(commands("[[ -f x ]] && rm x"), [vec!["rm", "x"]]);
        assert_eq!(commands("(( i++ )); rm q"), [vec!["rm", "q"]]);
    }

    #[test]
    fn assignments_and_redirections_are_set_apart() {
        let script = parse(tokenize("X=1 Y=$(id) rm a >out 2>&1").unwrap()).unwrap();
        let command = &script.commands[0];
        assert_eq!(command.assignments.len(), 2);
        assert_eq!(command.words.len(), 2);
        assert_eq!(command.redirects.len(), 2);
        assert_eq!(command.assignments[1].code, ["id"]);
    }
}
