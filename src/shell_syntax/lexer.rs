//! Shell tokens: words (with their quoting removed, and what in them is not literal),
//! operators, newlines and here-document bodies — POSIX sh plus the bash forms a command
//! line meets (`$'…'`, `&>`, `|&`, `<<<`, `<(…)`, `[[ ]]`, `(( ))`, arrays).

/// A word as the shell would see it before expansion.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Word {
    /// The word with quotes and escapes removed; expansions left as written.
    pub value: String,
    /// Nothing in it expands: no `$`, no backticks, no unquoted glob or brace.
    pub literal: bool,
    /// It was quoted (in part), so it is never a reserved word.
    pub quoted: bool,
    /// Code it runs when expanded: `$(…)`, `` `…` ``, `<(…)`, `>(…)`.
    pub code: Vec<String>,
}

/// One token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    /// A word.
    Word(Word),
    /// A redirection operator, with the descriptor written before it (`2>`).
    Redirect(&'static str),
    /// A control operator: `;`, `&`, `&&`, `||`, `|`, `|&`, `;;`, `;&`, `;;&`, `(`, `)`.
    Op(&'static str),
    /// `(( … ))`: arithmetic, with the code its substitutions run.
    Arith(Vec<String>),
    /// A line end.
    Newline,
}

/// What went wrong: the text cannot be read with certainty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Unclear;

/// A here-document waiting for its body.
struct PendingHeredoc {
    delimiter: String,
    strip_tabs: bool,
    expands: bool,
    /// Index of its redirection target in the tokens.
    token: usize,
}

/// Splits `src` into tokens. Here-document bodies become the word after their `<<`
/// operator (its `code` holds what their substitutions run).
pub(super) fn tokenize(src: &str) -> Result<Vec<Token>, Unclear> {
    let mut lexer = Lexer {
        chars: src.chars().collect(),
        pos: 0,
        tokens: Vec::new(),
        heredocs: Vec::new(),
    };
    lexer.run()?;
    Ok(lexer.tokens)
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    tokens: Vec<Token>,
    heredocs: Vec<PendingHeredoc>,
}

const REDIRECTS: &[&str] = &[
    "&>>", "<<<", "<<-", "&>", ">>", ">|", ">&", "<&", "<>", "<<", ">", "<",
];
const CONTROLS: &[&str] = &[";;&", ";;", ";&", "&&", "||", "|&", "|", "&", ";", "(", ")"];

impl Lexer {
    fn peek(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars().enumerate().all(|(i, c)| self.peek(i) == Some(c))
    }

    fn run(&mut self) -> Result<(), Unclear> {
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' => self.pos += 1,
                '\\' if self.peek(1) == Some('\n') => self.pos += 2,
                '\n' => {
                    self.pos += 1;
                    self.tokens.push(Token::Newline);
                    self.read_heredoc_bodies()?;
                }
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '(' if self.peek(1) == Some('(') && self.at_command_start() => {
                    self.pos += 2;
                    let inner = self.balanced('(', ')')?;
                    // `(( … ))`: the inner text up to the first of the two closing parens.
                    if self.peek(0) != Some(')') {
                        return Err(Unclear);
                    }
                    self.pos += 1;
                    self.tokens.push(Token::Arith(substitutions(&inner)?));
                }
                '<' | '>' if self.peek(1) == Some('(') => {
                    let word = self.word()?;
                    self.tokens.push(Token::Word(word));
                }
                _ => {
                    if let Some(op) = REDIRECTS.iter().find(|op| self.starts_with(op)) {
                        self.pos += op.chars().count();
                        self.tokens.push(Token::Redirect(op));
                        if matches!(*op, "<<" | "<<-") {
                            self.heredoc_start(*op == "<<-")?;
                        }
                    } else if let Some(op) = CONTROLS.iter().find(|op| self.starts_with(op)) {
                        self.pos += op.chars().count();
                        self.tokens.push(Token::Op(op));
                    } else {
                        let word = self.word()?;
                        // `2>file`: a number right before a redirection is its descriptor.
                        let io_number = !word.quoted
                            && !word.value.is_empty()
                            && word.value.chars().all(|c| c.is_ascii_digit())
                            && matches!(self.peek(0), Some('<' | '>'));
                        if !io_number {
                            self.tokens.push(Token::Word(word));
                        }
                    }
                }
            }
        }
        if self.heredocs.is_empty() {
            Ok(())
        } else {
            // A here-document whose body never came (the text ended on its line).
            self.read_heredoc_bodies()
        }
    }

    /// Whether the last token ends a command (so `((` opens arithmetic, not two
    /// subshells).
    fn at_command_start(&self) -> bool {
        matches!(
            self.tokens.last(),
            None | Some(Token::Newline | Token::Op(_))
        ) || matches!(self.tokens.last(), Some(Token::Word(w)) if !w.quoted && matches!(w.value.as_str(), "do" | "then" | "else" | "{" | "!"))
    }

    /// The delimiter word after `<<`; its body is read at the next newline.
    fn heredoc_start(&mut self, strip_tabs: bool) -> Result<(), Unclear> {
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.pos += 1;
        }
        let word = self.word()?;
        if word.value.is_empty() {
            return Err(Unclear);
        }
        self.heredocs.push(PendingHeredoc {
            delimiter: word.value,
            strip_tabs,
            expands: !word.quoted,
            token: self.tokens.len(),
        });
        self.tokens.push(Token::Word(Word::default()));
        Ok(())
    }

    fn read_heredoc_bodies(&mut self) -> Result<(), Unclear> {
        for heredoc in std::mem::take(&mut self.heredocs) {
            let mut body = String::new();
            let mut closed = false;
            while self.pos < self.chars.len() {
                let start = self.pos;
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                if self.peek(0) == Some('\n') {
                    self.pos += 1;
                }
                let check = if heredoc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if check == heredoc.delimiter {
                    closed = true;
                    break;
                }
                body.push_str(check);
                body.push('\n');
            }
            // bash runs a here-document that reaches the end without its delimiter.
            let _ = closed;
            let code = if heredoc.expands {
                substitutions(&body)?
            } else {
                Vec::new()
            };
            let literal = !heredoc.expands || !body.contains(['$', '`']);
            self.tokens[heredoc.token] = Token::Word(Word {
                value: body,
                literal,
                quoted: true,
                code,
            });
        }
        Ok(())
    }

    /// Reads text up to the `close` that balances an `open` already consumed, honouring
    /// quotes and escapes; the closing character is consumed, not returned.
    fn balanced(&mut self, open: char, close: char) -> Result<String, Unclear> {
        let mut depth = 1usize;
        let mut out = String::new();
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '\\' => {
                    out.push(c);
                    if let Some(next) = self.peek(0) {
                        out.push(next);
                        self.pos += 1;
                    }
                }
                '\'' | '"' => {
                    out.push(c);
                    self.copy_quoted(c, &mut out)?;
                }
                c if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(out);
                    }
                    out.push(c);
                }
                c if c == open => {
                    depth += 1;
                    out.push(c);
                }
                c => out.push(c),
            }
        }
        Err(Unclear)
    }

    /// Copies a quoted string, its quotes and escapes kept, up to and including the
    /// closing `quote` (the opening one already consumed). Only `"` strings have escapes.
    fn copy_quoted(&mut self, quote: char, out: &mut String) -> Result<(), Unclear> {
        loop {
            let q = self.peek(0).ok_or(Unclear)?;
            self.pos += 1;
            out.push(q);
            if q == quote {
                return Ok(());
            }
            if q == '\\'
                && quote == '"'
                && let Some(next) = self.peek(0)
            {
                out.push(next);
                self.pos += 1;
            }
        }
    }

    /// The text of a `'…'` string up to the closing quote (consumed, not kept).
    fn single_quoted(&mut self, value: &mut String) -> Result<(), Unclear> {
        loop {
            let q = self.peek(0).ok_or(Unclear)?;
            self.pos += 1;
            if q == '\'' {
                return Ok(());
            }
            value.push(q);
        }
    }

    /// A backslash outside quotes: the next character taken as it is, a line
    /// continuation dropped.
    fn escaped(&mut self, word: &mut Word) {
        self.pos += 1;
        match self.peek(0) {
            Some('\n') => self.pos += 1,
            Some(next) => {
                self.pos += 1;
                word.value.push(next);
                word.quoted = true;
            }
            None => {}
        }
    }

    /// `name=(a b c)`: an array, whose elements may hold code that runs.
    fn array(&mut self, word: &mut Word) -> Result<(), Unclear> {
        self.pos += 1;
        let inner = self.balanced('(', ')')?;
        for token in tokenize(&inner)? {
            if let Token::Word(w) = token {
                word.code.extend(w.code);
            }
        }
        word.literal = false;
        word.value.push_str(&format!("({inner})"));
        Ok(())
    }

    /// One word, up to an unquoted metacharacter.
    fn word(&mut self) -> Result<Word, Unclear> {
        let mut word = Word {
            literal: true,
            ..Word::default()
        };
        let mut first = true;
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' => break,
                '<' | '>' if self.peek(1) == Some('(') => {
                    // Process substitution: code that runs, a path as the word.
                    self.pos += 2;
                    let inner = self.balanced('(', ')')?;
                    word.code.push(inner);
                    word.literal = false;
                    word.value.push_str("/dev/fd/N");
                }
                '<' | '>' => break,
                '(' if word.value.ends_with('=') && !word.quoted => self.array(&mut word)?,
                '(' if word.value.ends_with(['@', '?', '*', '+', '!']) && !word.quoted => {
                    // An extended glob: `!(x)`, `*(y)`.
                    self.pos += 1;
                    let inner = self.balanced('(', ')')?;
                    word.literal = false;
                    word.value.push_str(&format!("({inner})"));
                }
                '(' | ')' => break,
                '#' if first => break,
                '\\' => self.escaped(&mut word),
                '\'' => {
                    self.pos += 1;
                    word.quoted = true;
                    self.single_quoted(&mut word.value)?;
                }
                '$' if self.peek(1) == Some('\'') => {
                    self.pos += 2;
                    word.quoted = true;
                    self.ansi_c(&mut word)?;
                }
                '"' => {
                    self.pos += 1;
                    word.quoted = true;
                    self.double_quoted(&mut word)?;
                }
                '$' | '`' => self.expansion(&mut word)?,
                // A glob, or a brace expansion (`{a,b}`).
                '*' | '?' | '[' | '{' if c != '{' || self.brace_expansion_ahead() => {
                    self.pos += 1;
                    word.value.push(c);
                    word.literal = false;
                }
                '~' if first => {
                    self.pos += 1;
                    word.value.push(c);
                    // `~user` names another home: not something to reason about.
                    if self.peek(0).is_some_and(|n| n != '/' && !n.is_whitespace()) {
                        word.literal = false;
                    }
                }
                c => {
                    self.pos += 1;
                    word.value.push(c);
                }
            }
            first = false;
        }
        Ok(word)
    }

    /// Whether an unquoted `{` starts a brace expansion (`{a,b}`, `{1..3}`).
    fn brace_expansion_ahead(&self) -> bool {
        let mut i = 1;
        let mut depth = 1;
        while let Some(c) = self.peek(i) {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return false;
                    }
                }
                ',' if depth == 1 => return true,
                '.' if depth == 1 && self.peek(i + 1) == Some('.') => return true,
                ' ' | '\t' | '\n' | ';' | '&' | '|' => return false,
                _ => {}
            }
            i += 1;
        }
        false
    }

    fn ansi_c(&mut self, word: &mut Word) -> Result<(), Unclear> {
        loop {
            let c = self.peek(0).ok_or(Unclear)?;
            self.pos += 1;
            match c {
                '\'' => return Ok(()),
                '\\' => {
                    let e = self.peek(0).ok_or(Unclear)?;
                    self.pos += 1;
                    match e {
                        'n' => word.value.push('\n'),
                        't' => word.value.push('\t'),
                        'r' => word.value.push('\r'),
                        'a' => word.value.push('\x07'),
                        'b' => word.value.push('\x08'),
                        'e' | 'E' => word.value.push('\x1b'),
                        'f' => word.value.push('\x0c'),
                        'v' => word.value.push('\x0b'),
                        '\\' | '\'' | '"' | '?' => word.value.push(e),
                        // Numeric and control escapes: the value is not plain text.
                        _ => {
                            word.literal = false;
                            word.value.push(e);
                        }
                    }
                }
                c => word.value.push(c),
            }
        }
    }

    fn double_quoted(&mut self, word: &mut Word) -> Result<(), Unclear> {
        loop {
            let c = self.peek(0).ok_or(Unclear)?;
            match c {
                '"' => {
                    self.pos += 1;
                    return Ok(());
                }
                '\\' => {
                    self.pos += 1;
                    let next = self.peek(0).ok_or(Unclear)?;
                    self.pos += 1;
                    match next {
                        '$' | '`' | '"' | '\\' => word.value.push(next),
                        '\n' => {}
                        other => {
                            word.value.push('\\');
                            word.value.push(other);
                        }
                    }
                }
                '$' | '`' => self.expansion(word)?,
                c => {
                    self.pos += 1;
                    word.value.push(c);
                }
            }
        }
    }

    /// `$name`, `${…}`, `$(…)`, `$((…))`, `` `…` ``, or a lone `$`.
    fn expansion(&mut self, word: &mut Word) -> Result<(), Unclear> {
        let c = self.peek(0).ok_or(Unclear)?;
        self.pos += 1;
        if c == '`' {
            let mut inner = String::new();
            loop {
                let q = self.peek(0).ok_or(Unclear)?;
                self.pos += 1;
                match q {
                    '`' => break,
                    '\\' => {
                        let next = self.peek(0).ok_or(Unclear)?;
                        self.pos += 1;
                        if !matches!(next, '$' | '`' | '\\') {
                            inner.push('\\');
                        }
                        inner.push(next);
                    }
                    q => inner.push(q),
                }
            }
            word.code.push(inner.clone());
            word.value.push_str(&format!("`{inner}`"));
            word.literal = false;
            return Ok(());
        }
        match self.peek(0) {
            Some('(') if self.peek(1) == Some('(') => {
                self.pos += 2;
                let inner = self.balanced('(', ')')?;
                if self.peek(0) != Some(')') {
                    return Err(Unclear);
                }
                self.pos += 1;
                word.code.extend(substitutions(&inner)?);
                word.value.push_str(&format!("$(({inner}))"));
            }
            Some('(') => {
                self.pos += 1;
                let inner = self.balanced('(', ')')?;
                word.value.push_str(&format!("$({inner})"));
                word.code.push(inner);
            }
            Some('{') => {
                self.pos += 1;
                let inner = self.balanced('{', '}')?;
                word.code.extend(substitutions(&inner)?);
                word.value.push_str(&format!("${{{inner}}}"));
            }
            Some(n) if n.is_ascii_alphanumeric() || "_@*#?$!-".contains(n) => {
                word.value.push('$');
                if n.is_ascii_alphabetic() || n == '_' {
                    while self
                        .peek(0)
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        word.value.push(self.chars[self.pos]);
                        self.pos += 1;
                    }
                } else {
                    word.value.push(n);
                    self.pos += 1;
                }
            }
            _ => {
                // A `$` followed by nothing that expands is itself.
                word.value.push('$');
                return Ok(());
            }
        }
        word.literal = false;
        Ok(())
    }
}

/// The code run by the substitutions in `text` (a here-document body, a `${…}` or an
/// arithmetic expression), read as the inside of double quotes.
fn substitutions(text: &str) -> Result<Vec<String>, Unclear> {
    let mut lexer = Lexer {
        chars: text.chars().collect(),
        pos: 0,
        tokens: Vec::new(),
        heredocs: Vec::new(),
    };
    let mut word = Word::default();
    while let Some(c) = lexer.peek(0) {
        match c {
            '\\' => lexer.pos += 2,
            '$' | '`' => lexer.expansion(&mut word)?,
            _ => lexer.pos += 1,
        }
    }
    Ok(word.code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(src: &str) -> Vec<String> {
        tokenize(src)
            .unwrap()
            .into_iter()
            .filter_map(|t| match t {
                Token::Word(w) => Some(w.value),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn quotes_and_escapes_are_removed() {
        assert_eq!(
            words(r#"\rm 'a b' "c\"d" $'e\tf' g\ h"#),
            ["rm", "a b", "c\"d", "e\tf", "g h"]
        );
    }

    #[test]
    fn operators_redirections_and_substitutions() {
        let tokens = tokenize("a && b 2>/dev/null | c; echo $(rm x) `ls` >out").unwrap();
        assert!(tokens.contains(&Token::Op("&&")));
        assert!(tokens.contains(&Token::Op("|")));
        assert!(tokens.contains(&Token::Redirect(">")));
        let codes: Vec<String> = tokens
            .iter()
            .filter_map(|t| match t {
                Token::Word(w) => Some(w.code.clone()),
                _ => None,
            })
            .flatten()
            .collect();
        assert_eq!(codes, ["rm x", "ls"]);
    }

    #[test]
    fn heredocs_carry_their_bodies() {
        let tokens = tokenize("bash <<'EOF'\nrm -rf x\nEOF\necho done\n").unwrap();
        let body = tokens.iter().find_map(|t| match t {
            Token::Word(w) if w.value.contains("rm") => Some(w.clone()),
            _ => None,
        });
        assert_eq!(body.unwrap().value, "rm -rf x\n");
        assert!(words("cat <<EOF\n$(rm y)\nEOF\n").len() == 2);
        let expanding = tokenize("cat <<EOF\n$(rm y)\nEOF\n").unwrap();
        assert!(
            expanding
                .iter()
                .any(|t| matches!(t, Token::Word(w) if w.code == ["rm y"]))
        );
    }

    #[test]
    fn unfinished_text_is_unclear() {
        assert_eq!(tokenize("echo 'open"), Err(Unclear));
        assert_eq!(tokenize("echo $(rm"), Err(Unclear));
    }
}
