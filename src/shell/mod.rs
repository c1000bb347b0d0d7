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

mod parse;
mod programs;

use std::borrow::Cow;
use std::fmt::Write as _;

pub use programs::programs;

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

/// The last path component of a program, without a Windows `.exe`.
pub fn base(program: &str) -> &str {
    let b = program.rsplit(['/', '\\']).next().unwrap_or(program);
    b.strip_suffix(".exe").unwrap_or(b)
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
