//! The reader of command lines: words, quotes, operators, subshells, substitutions,
//! redirections, here-documents and comments, into simple commands (nothing expanded).

use super::{Unparsed, MAX_DEPTH};

/// One simple command as written: its words (quotes removed, nothing expanded; a `$` expansion
/// is kept as written) and what its here-documents feed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Simple {
    pub(super) words: Vec<String>,
    /// Here-document and here-string bodies.
    pub(super) stdin: Vec<String>,
    /// The simple command before it in its pipeline (`a | b`: b's is a's).
    pub(super) piped_from: Option<usize>,
}

/// How a simple command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// `;`, `&`, `&&`, `||`, a newline.
    Sep,
    /// `|` or `|&`.
    Pipe,
    /// The `)` closing the list being read.
    Close,
    /// The end of the text.
    Eof,
}

/// A here-document waiting for its body: the command it feeds (`None`: the one being read),
/// its delimiter, whether leading tabs are stripped (`<<-`), and whether its body is expanded
/// (an unquoted delimiter).
struct Pending {
    simple: Option<usize>,
    delim: String,
    strip_tabs: bool,
    expands: bool,
}

struct Parser {
    src: Vec<char>,
    i: usize,
    depth: usize,
    out: Vec<Simple>,
    pending: Vec<Pending>,
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t' || c == '\r'
}

/// Characters that end an unquoted word.
fn is_operator(c: char) -> bool {
    is_blank(c) || matches!(c, '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>')
}

impl Parser {
    fn new(src: &str, depth: usize) -> Result<Parser, Unparsed> {
        if depth > MAX_DEPTH {
            return Err(Unparsed::TooDeep);
        }
        Ok(Parser {
            src: src.chars().collect(),
            i: 0,
            depth,
            out: Vec::new(),
            pending: Vec::new(),
        })
    }

    fn peek(&self) -> Option<char> {
        self.src.get(self.i).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.src.get(self.i + n).copied()
    }

    /// Reads a list of commands up to `)` (`closed`) or the end of the text.
    fn list(&mut self, closed: bool) -> Result<(), Unparsed> {
        if self.depth > MAX_DEPTH {
            return Err(Unparsed::TooDeep);
        }
        let mut piped_from = None;
        loop {
            let (simple, end) = self.simple(closed)?;
            let at = self.out.len();
            self.out.push(Simple {
                piped_from,
                ..simple
            });
            for p in self.pending.iter_mut().filter(|p| p.simple.is_none()) {
                p.simple = Some(at);
            }
            piped_from = (end == End::Pipe).then_some(at);
            match end {
                End::Close if closed => return Ok(()),
                End::Eof if closed => return Err(Unparsed::Unclosed),
                End::Eof => return Ok(()),
                _ => {}
            }
        }
    }

    /// A nested list: `( … )`, `$( … )`, `<( … )`.
    fn nested(&mut self) -> Result<(), Unparsed> {
        self.depth += 1;
        let r = self.list(true);
        self.depth -= 1;
        r
    }

    /// Reads one simple command (words and redirections) and how it ended.
    fn simple(&mut self, closed: bool) -> Result<(Simple, End), Unparsed> {
        let mut cmd = Simple::default();
        loop {
            while self.peek().is_some_and(is_blank) {
                self.i += 1;
            }
            if self.peek() == Some('\\') && self.peek_at(1) == Some('\n') {
                self.i += 2;
                continue;
            }
            let Some(c) = self.peek() else {
                return Ok((cmd, End::Eof));
            };
            match c {
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                }
                '\n' => {
                    self.i += 1;
                    self.heredoc_bodies(&mut cmd)?;
                    return Ok((cmd, End::Sep));
                }
                ';' => {
                    self.i += 1;
                    return Ok((cmd, End::Sep));
                }
                '&' => {
                    self.i += 1;
                    match self.peek() {
                        Some('&') => self.i += 1,
                        Some('>') => {
                            self.i += 1;
                            if self.peek() == Some('>') {
                                self.i += 1;
                            }
                            self.target()?;
                            continue;
                        }
                        _ => {}
                    }
                    return Ok((cmd, End::Sep));
                }
                '|' => {
                    self.i += 1;
                    return Ok(match self.peek() {
                        Some('|') => {
                            self.i += 1;
                            (cmd, End::Sep)
                        }
                        Some('&') => {
                            self.i += 1;
                            (cmd, End::Pipe)
                        }
                        _ => (cmd, End::Pipe),
                    });
                }
                '(' => {
                    self.i += 1;
                    self.nested()?;
                }
                ')' => {
                    self.i += 1;
                    if closed {
                        return Ok((cmd, End::Close));
                    }
                }
                '<' | '>' => self.redirection(&mut cmd)?,
                _ => {
                    let word = self.word()?;
                    // `2>&1`: a number right before a redirection is its file descriptor.
                    let fd = !word.is_empty()
                        && word.chars().all(|c| c.is_ascii_digit())
                        && matches!(self.peek(), Some('<' | '>'));
                    if !fd {
                        cmd.words.push(word);
                    }
                }
            }
        }
    }

    /// A redirection: its target is no argument; a here-document's body comes after the line.
    fn redirection(&mut self, cmd: &mut Simple) -> Result<(), Unparsed> {
        let first = self.peek();
        self.i += 1;
        if self.peek() == Some('(') {
            // Process substitution: `<(cmd)`, `>(cmd)`.
            self.i += 1;
            return self.nested();
        }
        if first == Some('<') && self.peek() == Some('<') {
            self.i += 1;
            if self.peek() == Some('<') {
                self.i += 1;
                while self.peek().is_some_and(is_blank) {
                    self.i += 1;
                }
                let body = self.word()?;
                cmd.stdin.push(body);
                return Ok(());
            }
            let strip_tabs = self.peek() == Some('-');
            if strip_tabs {
                self.i += 1;
            }
            while self.peek().is_some_and(is_blank) {
                self.i += 1;
            }
            let start = self.i;
            let delim = self.word()?;
            let raw: String = self.src[start..self.i].iter().collect();
            self.pending.push(Pending {
                simple: None,
                delim,
                strip_tabs,
                expands: !raw.contains(['\'', '"', '\\']),
            });
            return Ok(());
        }
        while matches!(self.peek(), Some('>' | '<' | '&' | '|')) {
            self.i += 1;
        }
        self.target()
    }

    /// The word a redirection names (read for its substitutions, then dropped).
    fn target(&mut self) -> Result<(), Unparsed> {
        while self.peek().is_some_and(is_blank) {
            self.i += 1;
        }
        if self.peek().is_some_and(|c| !is_operator(c)) {
            self.word()?;
        }
        Ok(())
    }

    /// After a newline: the bodies of the here-documents the line opened. An expanding body's
    /// substitutions run, so they are read as commands too.
    fn heredoc_bodies(&mut self, cmd: &mut Simple) -> Result<(), Unparsed> {
        for p in std::mem::take(&mut self.pending) {
            let mut body = String::new();
            while self.i < self.src.len() {
                let end = self.src[self.i..]
                    .iter()
                    .position(|c| *c == '\n')
                    .map_or(self.src.len(), |n| self.i + n);
                let line: String = self.src[self.i..end].iter().collect();
                self.i = (end + 1).min(self.src.len());
                let line = if p.strip_tabs {
                    line.trim_start_matches('\t').to_string()
                } else {
                    line
                };
                if line == p.delim {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            if p.expands {
                let mut sub = Parser::new(&body, self.depth + 1)?;
                sub.double_quoted(false)?;
                self.out.append(&mut sub.out);
            }
            match p.simple {
                None => cmd.stdin.push(body),
                Some(k) => {
                    if let Some(s) = self.out.get_mut(k) {
                        s.stdin.push(body);
                    }
                }
            }
        }
        Ok(())
    }

    /// One word, quotes removed; `$…` kept as written, its commands read.
    fn word(&mut self) -> Result<String, Unparsed> {
        let mut w = String::new();
        while let Some(c) = self.peek() {
            if is_operator(c) {
                break;
            }
            self.i += 1;
            match c {
                '\'' => {
                    let end = self.src[self.i..]
                        .iter()
                        .position(|c| *c == '\'')
                        .ok_or(Unparsed::Quote)?;
                    w.extend(&self.src[self.i..self.i + end]);
                    self.i += end + 1;
                }
                '"' => w.push_str(&self.double_quoted(true)?),
                '\\' => match self.peek() {
                    Some('\n') => self.i += 1,
                    Some(n) => {
                        w.push(n);
                        self.i += 1;
                    }
                    None => w.push('\\'),
                },
                '$' if self.peek() == Some('\'') => {
                    self.i += 1;
                    w.push_str(&self.ansi_c()?);
                }
                '$' if self.peek() == Some('"') => {
                    self.i += 1;
                    w.push_str(&self.double_quoted(true)?);
                }
                '$' => w.push_str(&self.dollar()?),
                '`' => w.push_str(&self.backquoted()?),
                c => w.push(c),
            }
        }
        Ok(w)
    }

    /// The inside of `"…"` (after the opening quote; `closed`: up to the closing one, else to
    /// the end of the text, as a here-document's body).
    fn double_quoted(&mut self, closed: bool) -> Result<String, Unparsed> {
        let mut w = String::new();
        loop {
            let Some(c) = self.peek() else {
                return if closed { Err(Unparsed::Quote) } else { Ok(w) };
            };
            self.i += 1;
            match c {
                '"' if closed => return Ok(w),
                '\\' => match self.peek() {
                    Some('\n') => self.i += 1,
                    Some(n @ ('$' | '`' | '"' | '\\')) => {
                        w.push(n);
                        self.i += 1;
                    }
                    _ => w.push('\\'),
                },
                '$' => w.push_str(&self.dollar()?),
                '`' => w.push_str(&self.backquoted()?),
                c => w.push(c),
            }
        }
    }

    /// After a `$`: `$(…)` (its commands read), `$((…))`, `${…}` or a name, kept as written.
    fn dollar(&mut self) -> Result<String, Unparsed> {
        let start = self.i - 1;
        match self.peek() {
            Some('(') if self.peek_at(1) == Some('(') => {
                let mut open = 0usize;
                while let Some(c) = self.peek() {
                    self.i += 1;
                    match c {
                        '(' => open += 1,
                        ')' => {
                            open = open.saturating_sub(1);
                            if open == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                if open > 0 {
                    return Err(Unparsed::Unclosed);
                }
            }
            Some('(') => {
                self.i += 1;
                self.nested()?;
            }
            Some('{') => {
                let end = self.src[self.i..]
                    .iter()
                    .position(|c| *c == '}')
                    .ok_or(Unparsed::Unclosed)?;
                self.i += end + 1;
            }
            _ => {
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    self.i += 1;
                }
            }
        }
        Ok(self.src[start..self.i].iter().collect())
    }

    /// After a backquote: the command up to the closing one, read as a script of its own.
    fn backquoted(&mut self) -> Result<String, Unparsed> {
        let start = self.i - 1;
        let mut inner = String::new();
        loop {
            let c = self.peek().ok_or(Unparsed::Unclosed)?;
            self.i += 1;
            match c {
                '`' => break,
                '\\' => match self.peek() {
                    Some(n @ ('`' | '$' | '\\')) => {
                        inner.push(n);
                        self.i += 1;
                    }
                    _ => inner.push('\\'),
                },
                c => inner.push(c),
            }
        }
        let mut sub = Parser::new(&inner, self.depth + 1)?;
        sub.list(false)?;
        self.out.append(&mut sub.out);
        Ok(self.src[start..self.i].iter().collect())
    }

    /// The inside of `$'…'`, its escapes decoded.
    fn ansi_c(&mut self) -> Result<String, Unparsed> {
        let mut w = String::new();
        loop {
            let c = self.peek().ok_or(Unparsed::Quote)?;
            self.i += 1;
            match c {
                '\'' => return Ok(w),
                '\\' => {
                    let e = self.peek().ok_or(Unparsed::Quote)?;
                    self.i += 1;
                    match e {
                        'n' => w.push('\n'),
                        't' => w.push('\t'),
                        'r' => w.push('\r'),
                        'e' | 'E' => w.push('\u{1b}'),
                        'a' => w.push('\u{7}'),
                        'x' | 'u' | 'U' | '0'..='7' => {
                            let (radix, max) = match e {
                                'x' => (16, 2),
                                'u' => (16, 4),
                                'U' => (16, 8),
                                _ => (8, 2),
                            };
                            let mut digits = String::new();
                            if radix == 8 {
                                digits.push(e);
                            }
                            while digits.len() < max + usize::from(radix == 8)
                                && self.peek().is_some_and(|d| d.is_digit(radix))
                            {
                                digits.extend(self.peek());
                                self.i += 1;
                            }
                            w.extend(
                                u32::from_str_radix(&digits, radix)
                                    .ok()
                                    .and_then(char::from_u32),
                            );
                        }
                        other => w.push(other),
                    }
                }
                c => w.push(c),
            }
        }
    }
}

/// The simple commands of a command line, in the order they are found (substitutions first).
pub(super) fn simples(line: &str, depth: usize) -> Result<Vec<Simple>, Unparsed> {
    let mut p = Parser::new(line, depth)?;
    p.list(false)?;
    let mut none = Simple::default();
    p.heredoc_bodies(&mut none)?;
    Ok(p.out)
}

/// The words of a command line's first simple command (as `env -S` splits its string).
pub(super) fn split(line: &str, depth: usize) -> Result<Vec<String>, Unparsed> {
    Ok(simples(line, depth)?
        .into_iter()
        .next()
        .map(|s| s.words)
        .unwrap_or_default())
}
