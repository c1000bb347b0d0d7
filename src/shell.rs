//! Shell words, both ways and without I/O: [`quote`] makes any text one word of a command
//! taskhook prints (an id with a space, a path), and [`programs`] reads which programs a Bash
//! command line would run, with their arguments.
//!
//! The reader is small, not a shell: it knows words and quotes (`'…'`, `"…"`, `$'…'`, `\`),
//! the operators that separate commands (`;`, `&`, `&&`, `||`, `|`, newlines), subshells and
//! groups, `$(…)`, backquotes and `<(…)`, redirections (their targets are not arguments),
//! here-documents, and comments. It expands nothing. It then looks through what only runs
//! another program (`env VAR=x`, `command`, `exec`, `nohup`, `timeout`, `xargs`, `sudo`,
//! `nice`, `npx`, `find -exec`, …) and into the scripts a shell is given (`bash -c '…'`,
//! `eval`, a here-document or `echo '…' |` fed to `sh`).

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` never needs quoting in a shell word.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_-./,:@%+=".contains(c)
}

/// `s` as one shell word: as it is when nothing in it needs quoting, else in single quotes (a
/// `'` inside becomes `'\''`). A control character (newline, escape, …) makes it an ANSI-C
/// `$'…'` word with the character escaped, so a printed command never carries it raw.
pub fn quote(s: &str) -> Cow<'_, str> {
    if !s.is_empty() && s.chars().all(plain) {
        return Cow::Borrowed(s);
    }
    if !s.chars().any(char::is_control) {
        return Cow::Owned(format!("'{}'", s.replace('\'', r"'\''")));
    }
    let mut out = String::from("$'");
    for c in s.chars() {
        match c {
            '\n' => out.push_str(r"\n"),
            '\t' => out.push_str(r"\t"),
            '\r' => out.push_str(r"\r"),
            '\\' => out.push_str(r"\\"),
            '\'' => out.push_str(r"\'"),
            c if c.is_control() && (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    Cow::Owned(out)
}

/// Why a command line could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unparsed {
    /// A `'` or `"` that is never closed.
    Quote,
    /// A `$(`, `(` or backquote that is never closed.
    Unclosed,
    /// Subshells, substitutions or `sh -c` nested deeper than [`MAX_DEPTH`].
    TooDeep,
}

impl Unparsed {
    pub fn as_str(self) -> &'static str {
        match self {
            Unparsed::Quote => "an unbalanced quote",
            Unparsed::Unclosed => "an unclosed `$(`, `(` or backquote",
            Unparsed::TooDeep => "nesting too deep",
        }
    }
}

/// Deepest nesting read (subshells, substitutions, scripts given to a shell).
pub const MAX_DEPTH: usize = 32;

/// One simple command as written: its words (quotes removed, nothing expanded; a `$` expansion
/// is kept as written) and what its here-documents feed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Simple {
    words: Vec<String>,
    /// Here-document and here-string bodies.
    stdin: Vec<String>,
    /// The simple command before it in its pipeline (`a | b`: b's is a's).
    piped_from: Option<usize>,
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
fn simples(line: &str, depth: usize) -> Result<Vec<Simple>, Unparsed> {
    let mut p = Parser::new(line, depth)?;
    p.list(false)?;
    let mut none = Simple::default();
    p.heredoc_bodies(&mut none)?;
    Ok(p.out)
}

/// The words of a command line's first simple command (as `env -S` splits its string).
fn split(line: &str, depth: usize) -> Result<Vec<String>, Unparsed> {
    Ok(simples(line, depth)?
        .into_iter()
        .next()
        .map(|s| s.words)
        .unwrap_or_default())
}

/// The last path component of a program, without a Windows `.exe`.
pub fn base(program: &str) -> &str {
    let b = program.rsplit(['/', '\\']).next().unwrap_or(program);
    b.strip_suffix(".exe").unwrap_or(b)
}

/// Shells that run a script given with `-c`, a file, or their input.
const SHELLS: [&str; 8] = ["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"];

/// Options of a wrapper that take a value (`-n 5`, `--signal KILL`); others are flags.
fn takes_value(wrapper: &str, opt: &str) -> bool {
    let list: &[&str] = match wrapper {
        "env" => &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
        "exec" => &["-a"],
        "nice" => &["-n", "--adjustment"],
        "ionice" => &["-c", "--class", "-n", "--classdata", "-p", "-P", "-u"],
        "timeout" => &["-s", "--signal", "-k", "--kill-after"],
        "stdbuf" => &["-i", "-o", "-e", "--input", "--output", "--error"],
        "time" => &["-f", "--format", "-o", "--output"],
        "sudo" => &[
            "-u",
            "--user",
            "-g",
            "--group",
            "-C",
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
            "-U",
            "--other-user",
            "-T",
            "--command-timeout",
        ],
        "doas" => &["-u", "-C"],
        "xargs" => &[
            "-a",
            "--arg-file",
            "-d",
            "--delimiter",
            "-E",
            "-I",
            "-L",
            "-n",
            "--max-args",
            "-P",
            "--max-procs",
            "-s",
            "--max-chars",
        ],
        "npx" | "bunx" | "pnpx" => &["-p", "--package", "--call", "-c"],
        "watch" => &["-n", "--interval", "-d", "--differences", "-q", "--equexit"],
        "su" => &["-c", "--command", "-s", "--shell", "-g", "--group", "-G"],
        // setsid, nohup, command, chronic, builtin and the rest: no option takes a value.
        _ => &[],
    };
    list.contains(&opt)
}

/// Skips a wrapper's options from `at`; returns where its command starts, and the value of
/// option `want` if it was given.
fn skip_options<'a>(
    wrapper: &str,
    argv: &'a [String],
    mut at: usize,
    want: &[&str],
) -> (usize, Option<&'a str>) {
    let mut found = None;
    while let Some(w) = argv.get(at) {
        if w == "--" {
            return (at + 1, found);
        }
        if !w.starts_with('-') || w == "-" {
            break;
        }
        let (name, inline) = match w.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (w.as_str(), None),
        };
        let value = if inline.is_some() {
            inline
        } else if takes_value(wrapper, name) {
            at += 1;
            argv.get(at).map(String::as_str)
        } else {
            None
        };
        if want.contains(&name) {
            found = value.or(Some(""));
        }
        at += 1;
    }
    (at, found)
}

/// What a program a pipe feeds prints, when it is plain text: `echo …`, `printf …`, or a
/// here-document given to `cat`.
fn printed(s: &Simple) -> Option<String> {
    let program = s.words.first().map(|w| base(w))?;
    match program {
        "echo" | "printf" => {
            let args: Vec<&str> = s.words[1..]
                .iter()
                .map(String::as_str)
                .skip_while(|a| program == "echo" && a.starts_with('-'))
                .collect();
            Some(args.join(" ").replace("\\n", "\n"))
        }
        "cat" if !s.stdin.is_empty() => Some(s.stdin.concat()),
        _ => None,
    }
}

/// The programs a Bash command line would run, each with its arguments (quotes removed,
/// nothing expanded), seen through wrappers and into the scripts given to a shell. A shell
/// given a file runs it: it is listed with the file as its argument.
pub fn programs(line: &str) -> Result<Vec<Vec<String>>, Unparsed> {
    let mut out = Vec::new();
    programs_at(line, 0, &mut out)?;
    Ok(out)
}

fn programs_at(line: &str, depth: usize, out: &mut Vec<Vec<String>>) -> Result<(), Unparsed> {
    let all = simples(line, depth)?;
    for s in &all {
        let input = if s.stdin.is_empty() {
            s.piped_from.and_then(|k| all.get(k)).and_then(printed)
        } else {
            Some(s.stdin.concat())
        };
        unwrap(&s.words, input.as_deref(), depth, out)?;
    }
    Ok(())
}

/// One simple command's words: the program it finally runs, or the commands of the script it
/// runs.
fn unwrap(
    argv: &[String],
    input: Option<&str>,
    depth: usize,
    out: &mut Vec<Vec<String>>,
) -> Result<(), Unparsed> {
    if depth > MAX_DEPTH {
        return Err(Unparsed::TooDeep);
    }
    let script = |text: &str, out: &mut Vec<Vec<String>>| programs_at(text, depth + 1, out);
    let assignment = |w: &str| {
        w.split_once('=').is_some_and(|(n, _)| {
            let n = n.strip_suffix('+').unwrap_or(n);
            !n.is_empty()
                && !n.starts_with(|c: char| c.is_ascii_digit())
                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    const KEYWORDS: [&str; 13] = [
        "!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time",
    ];
    let mut at = 0;
    while argv
        .get(at)
        .is_some_and(|w| assignment(w) || KEYWORDS.contains(&w.as_str()))
    {
        at += 1;
        // `time -p cmd`.
        if argv.get(at - 1).is_some_and(|w| w == "time") && argv.get(at).is_some_and(|w| w == "-p")
        {
            at += 1;
        }
    }
    let Some(program) = argv.get(at) else {
        return Ok(());
    };
    let rest = &argv[at..];
    let name = base(program);
    match name {
        "for" | "case" | "select" | "function" | "in" | "esac" => Ok(()),
        "env" => {
            let (next, split_string) = skip_options("env", rest, 1, &["-S", "--split-string"]);
            let mut words = Vec::new();
            if let Some(s) = split_string {
                words = split(s, depth + 1)?;
            }
            let mut tail = &rest[next..];
            if let Some(s) = rest[1..next]
                .iter()
                .find_map(|w| w.strip_prefix("-S").filter(|v| !v.is_empty()))
            {
                words = split(s, depth + 1)?;
            }
            while tail.first().is_some_and(|w| assignment(w)) {
                tail = &tail[1..];
            }
            words.extend(tail.iter().cloned());
            unwrap(&words, input, depth + 1, out)
        }
        "command" | "builtin" => {
            let (next, shows) = skip_options("command", rest, 1, &["-v", "-V"]);
            if shows.is_some() {
                // `command -v taskhook` only prints where it is.
                return Ok(());
            }
            unwrap(&rest[next..], input, depth + 1, out)
        }
        "exec" | "nohup" | "setsid" | "chronic" | "nice" | "ionice" | "stdbuf" | "time"
        | "sudo" | "doas" => {
            let (next, _) = skip_options(name, rest, 1, &[]);
            unwrap(&rest[next..], input, depth + 1, out)
        }
        "timeout" => {
            // Options, then the duration, then the command.
            let (next, _) = skip_options("timeout", rest, 1, &[]);
            unwrap(rest.get(next + 1..).unwrap_or(&[]), input, depth + 1, out)
        }
        "xargs" => {
            let (next, _) = skip_options("xargs", rest, 1, &[]);
            unwrap(&rest[next..], None, depth + 1, out)
        }
        "npx" | "bunx" | "pnpx" => {
            let (next, call) = skip_options(name, rest, 1, &["-c", "--call"]);
            if let Some(c) = call.filter(|c| !c.is_empty()) {
                script(c, out)?;
            }
            unwrap(&rest[next..], input, depth + 1, out)
        }
        "npm" | "pnpm" | "yarn"
            if matches!(rest.get(1).map(String::as_str), Some("exec" | "x" | "dlx")) =>
        {
            let (next, _) = skip_options("npx", rest, 2, &[]);
            unwrap(&rest[next..], input, depth + 1, out)
        }
        "find" => {
            let mut i = 1;
            while i < rest.len() {
                if matches!(rest[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                    let end = rest[i + 1..]
                        .iter()
                        .position(|w| w == ";" || w == "+")
                        .map_or(rest.len(), |n| i + 1 + n);
                    unwrap(&rest[i + 1..end], None, depth + 1, out)?;
                    i = end;
                }
                i += 1;
            }
            out.push(rest.to_vec());
            Ok(())
        }
        "eval" => script(&rest[1..].join(" "), out),
        "watch" => {
            let (next, _) = skip_options("watch", rest, 1, &[]);
            script(&rest[next..].join(" "), out)
        }
        "su" => {
            let (_, command) = skip_options("su", rest, 1, &["-c", "--command"]);
            match command {
                Some(c) => script(c, out),
                None => Ok(()),
            }
        }
        shell if SHELLS.contains(&shell) => {
            // Options (`-e`, `-o pipefail`, `-lc`); `-c` takes the script from the first operand.
            let mut i = 1;
            let mut from_arg = false;
            while let Some(w) = rest.get(i) {
                if w == "--" {
                    i += 1;
                    break;
                }
                if !(w.starts_with('-') || w.starts_with('+')) || w == "-" {
                    break;
                }
                if matches!(
                    w.as_str(),
                    "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file"
                ) {
                    i += 1;
                } else if !w.starts_with("--") && w.contains('c') {
                    from_arg = true;
                }
                i += 1;
            }
            match (from_arg, rest.get(i), input) {
                (true, Some(text), _) => script(text, out),
                (false, Some(_), _) => {
                    out.push(rest.to_vec());
                    Ok(())
                }
                (false, None, Some(text)) => script(text, out),
                _ => Ok(()),
            }
        }
        _ => {
            out.push(rest.to_vec());
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The programs of a line, each as one string of its words joined by spaces.
    fn run(line: &str) -> Vec<String> {
        programs(line)
            .unwrap_or_else(|e| panic!("{line:?}: {e:?}"))
            .into_iter()
            .filter(|argv| !argv.is_empty())
            .map(|argv| argv.join(" "))
            .collect()
    }

    #[test]
    fn programs_are_found_through_operators_and_quotes() {
        let table: &[(&str, &[&str])] = &[
            ("taskhook cdd done foo.md", &["taskhook cdd done foo.md"]),
            (
                "a; b && c || d | e & f\ng",
                &["a", "b", "c", "d", "e", "f", "g"],
            ),
            (
                "git commit -m 'taskhook cdd done foo.md'",
                &["git commit -m taskhook cdd done foo.md"],
            ),
            (
                "echo \"run taskhook cdd done later\"",
                &["echo run taskhook cdd done later"],
            ),
            (
                "echo a\\ b 'c d' \"e\\\"f\" $'g\\nh'",
                &["echo a b c d e\"f g\nh"],
            ),
            (
                "(cd x && taskhook cdd start a.md)",
                &["cd x", "taskhook cdd start a.md"],
            ),
            ("{ a; b; }", &["a", "b"]),
            (
                "echo $(taskhook cdd done a.md)",
                &["taskhook cdd done a.md", "echo $(taskhook cdd done a.md)"],
            ),
            (
                "echo \"$(taskhook cdd done a.md)\"",
                &["taskhook cdd done a.md", "echo $(taskhook cdd done a.md)"],
            ),
            (
                "echo `taskhook cdd done a.md`",
                &["taskhook cdd done a.md", "echo `taskhook cdd done a.md`"],
            ),
            (
                "echo '$(taskhook cdd done a.md)'",
                &["echo $(taskhook cdd done a.md)"],
            ),
            (
                "diff <(taskhook cdd list) x",
                &["taskhook cdd list", "diff x"],
            ),
            (
                "taskhook cdd list > out.txt 2>&1 < in",
                &["taskhook cdd list"],
            ),
            ("cat < .claude/scripts/task/done.ts", &["cat"]),
            ("echo hi # taskhook cdd done x", &["echo hi"]),
            ("echo a#b", &["echo a#b"]),
            ("x=1 FOO=bar taskhook cdd done a", &["taskhook cdd done a"]),
            (
                "if taskhook cdd done a; then echo ok; fi",
                &["taskhook cdd done a", "echo ok"],
            ),
            (
                "for f in a b; do taskhook cdd done $f; done",
                &["taskhook cdd done $f"],
            ),
            (
                "echo $((1 + 2)) ${HOME} $X",
                &["echo $((1 + 2)) ${HOME} $X"],
            ),
            ("a \\\n b", &["a b"]),
        ];
        for (line, want) in table {
            assert_eq!(run(line), *want, "{line:?}");
        }
    }

    #[test]
    fn programs_are_found_through_wrappers_and_shells() {
        let table: &[(&str, &[&str])] = &[
            ("env taskhook cdd done a", &["taskhook cdd done a"]),
            (
                "env -i -u X A=1 B=2 taskhook cdd done a",
                &["taskhook cdd done a"],
            ),
            ("env -S 'taskhook cdd done' a", &["taskhook cdd done a"]),
            ("command taskhook cdd done a", &["taskhook cdd done a"]),
            ("command -v taskhook", &[]),
            ("exec -a x taskhook cdd done a", &["taskhook cdd done a"]),
            ("nohup taskhook cdd done a &", &["taskhook cdd done a"]),
            ("timeout 10 taskhook cdd done a", &["taskhook cdd done a"]),
            (
                "timeout -s KILL --preserve-status 5s taskhook cdd done a",
                &["taskhook cdd done a"],
            ),
            (
                "echo a.md | xargs -n 1 taskhook cdd done",
                &["echo a.md", "taskhook cdd done"],
            ),
            (
                "sudo -u me nice -n 5 stdbuf -oL taskhook cdd done a",
                &["taskhook cdd done a"],
            ),
            ("time -p taskhook cdd done a", &["taskhook cdd done a"]),
            ("bash -c 'taskhook cdd done a'", &["taskhook cdd done a"]),
            (
                "sh -ec \"cd x; taskhook cdd done 'a b'\"",
                &["cd x", "taskhook cdd done a b"],
            ),
            (
                "bash -o pipefail -c 'taskhook cdd done a'",
                &["taskhook cdd done a"],
            ),
            (
                "bash -c \"bash -c 'taskhook cdd done a'\"",
                &["taskhook cdd done a"],
            ),
            ("bash script.sh a", &["bash script.sh a"]),
            ("eval 'taskhook cdd done a'", &["taskhook cdd done a"]),
            (
                "bash <<'EOF'\ntaskhook cdd done a\nEOF\necho after",
                &["taskhook cdd done a", "echo after"],
            ),
            ("cat <<'EOF' > notes.md\ntaskhook cdd done a\nEOF", &["cat"]),
            (
                "cat <<EOF\n$(taskhook cdd done a)\nEOF",
                &["taskhook cdd done a", "cat"],
            ),
            ("bash <<< 'taskhook cdd done a'", &["taskhook cdd done a"]),
            (
                "echo 'taskhook cdd done a' | sh",
                &["echo taskhook cdd done a", "taskhook cdd done a"],
            ),
            (
                "npx tsx .claude/scripts/task/done.ts a",
                &["tsx .claude/scripts/task/done.ts a"],
            ),
            ("npm exec -- tsx x.ts", &["tsx x.ts"]),
            (
                "find . -name '*.md' -exec taskhook cdd done {} \\;",
                &[
                    "taskhook cdd done {}",
                    "find . -name *.md -exec taskhook cdd done {} ;",
                ],
            ),
            ("su -c 'taskhook cdd done a' me", &["taskhook cdd done a"]),
        ];
        for (line, want) in table {
            assert_eq!(run(line), *want, "{line:?}");
        }
    }

    #[test]
    fn what_cannot_be_parsed_says_why() {
        for (line, why) in [
            ("echo 'unclosed", Unparsed::Quote),
            ("echo \"unclosed", Unparsed::Quote),
            ("echo $'x", Unparsed::Quote),
            ("echo $(taskhook cdd done a", Unparsed::Unclosed),
            ("(taskhook cdd done a", Unparsed::Unclosed),
            ("echo `taskhook", Unparsed::Unclosed),
            ("bash -c 'echo \"x'", Unparsed::Quote),
        ] {
            assert_eq!(programs(line), Err(why), "{line:?}");
        }
        let deep = "(".repeat(100) + &")".repeat(100);
        assert_eq!(programs(&deep), Err(Unparsed::TooDeep));
        let nested = "eval ".repeat(40) + "taskhook cdd done a";
        assert_eq!(programs(&nested), Err(Unparsed::TooDeep));
        let wrapped = "nohup ".repeat(40) + "taskhook cdd done a";
        assert_eq!(programs(&wrapped), Err(Unparsed::TooDeep));
    }

    proptest::proptest! {
        /// Any word, quoted, is read back as itself, whatever surrounds it.
        #[test]
        fn a_quoted_word_reads_back_as_itself(word in "\\PC*", before in "prog[a-z]{0,3}") {
            let line = format!("{before} {}; true", quote(&word));
            let got = programs(&line).unwrap();
            proptest::prop_assert_eq!(got[0].clone(), vec![before, word]);
        }

        /// No text makes the reader panic or loop, and a parse is all or nothing.
        #[test]
        fn any_text_is_read_or_refused(line in "[ -~\\n\\t]{0,80}") {
            let _ = programs(&line);
        }

        /// Text inside single quotes is never a program, whatever it says.
        #[test]
        fn quoted_text_is_never_run(text in "[ -&(-~]{0,40}") {
            let line = format!("echo '{text}'");
            let got = programs(&line).unwrap();
            proptest::prop_assert_eq!(got.len(), 1);
            proptest::prop_assert_eq!(got[0][0].as_str(), "echo");
        }
    }

    #[test]
    fn words_are_quoted_only_when_they_must_be() {
        assert_eq!(quote("foo.md"), "foo.md");
        assert_eq!(quote("ws/L2-003"), "ws/L2-003");
        assert_eq!(quote("my task.md"), "'my task.md'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("$HOME"), "'$HOME'");
        assert_eq!(quote("défi"), "'défi'");
        assert_eq!(quote("a\nb"), r"$'a\nb'");
        assert_eq!(quote("\u{1b}[31mx'"), r"$'\x1b[31mx\''");
        assert_eq!(quote("a\u{85}b"), r"$'a\u0085b'");
    }
}
