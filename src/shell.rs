//! Shell words, without I/O: [`quote`] makes any text one word of a command taskhook prints
//! (an id with a space, a path).

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

#[cfg(test)]
mod tests {
    use super::*;

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
