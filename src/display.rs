//! Text from a repository, made safe to show: the one place that decides which characters never
//! reach a terminal (or Claude Code's screen, or the model) as they are.
//!
//! A cloned repository is untrusted, and titles, ids, reasons, file names and log lines come
//! from it: an escape sequence in a task title (`\x1b[31m`, `\x1b]0;title\x07`, a C1 CSI
//! `\u{9b}`) would recolour, retitle or clear the terminal of whoever runs `taskhook status`, and
//! a bidirectional-text override would make a line read otherwise than it is. Every control
//! character (C0, DEL, C1) and every bidirectional-text control is shown as a visible escape
//! instead, Rust-style: `\u{1b}`, `\u{9b}`, `\u{202e}`; newline and carriage return as `\n`,
//! `\r`. Tab is kept. Everything else (any other Unicode) is left as it is.
//!
//! - [`text`]: for what may run over several lines (a reply, a command's output): newlines kept.
//! - [`line()`]: for one field or one line (an id, a title, the status line): newlines escaped too,
//!   so a title never forges a line of its own.
//! - [`json_text`]: for JSON text (what `--json` prints): the characters serde_json leaves raw
//!   inside strings (DEL, C1, bidi controls) written as `\u` escapes; the values are unchanged.
//!
//! They are applied where text leaves taskhook: every line the CLI prints (`cli::out`,
//! `cli::out_json`), every string of a hook reply (`hook::output`), the one-line errors on
//! stderr (`error::one_line`), and field by field where one line is built from several
//! (`status`, the status line, `log`, the lists of a summary).

use std::borrow::Cow;

/// Whether `c` is a bidirectional-text control (Unicode's explicit embeddings, overrides,
/// isolates and marks): U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Whether `c` is shown escaped; `newlines`: whether `\n` is kept.
fn unsafe_char(c: char, newlines: bool) -> bool {
    match c {
        '\t' => false,
        '\n' => !newlines,
        c => c.is_control() || is_bidi_control(c),
    }
}

fn escape(s: &str, newlines: bool) -> Cow<'_, str> {
    let Some(first) = s.find(|c| unsafe_char(c, newlines)) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 16);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if unsafe_char(c, newlines) {
            // `\n`, `\r`, `\u{1b}`, `\u{9b}`, `\u{202e}` (never `\t`, `\\`, quotes: not called).
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` with every control character except newline and tab, and every bidirectional-text
/// control, shown as a visible escape (`\u{1b}`, `\r`).
pub fn text(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

/// [`text`] for one line: newlines escaped too (`\n`).
pub fn line(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

/// JSON text with DEL, C1 controls and bidirectional-text controls written as `\u` escapes
/// (serde_json escapes C0 inside strings itself; outside them, C0 is only JSON's whitespace).
/// Such characters can only stand inside strings of valid JSON, so the text parses to the same
/// value.
pub fn json_text(s: &str) -> Cow<'_, str> {
    let raw = |c: char| matches!(c, '\u{7f}'..='\u{9f}') || is_bidi_control(c);
    let Some(first) = s.find(raw) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 16);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if raw(c) {
            // Every one of them is in the Basic Multilingual Plane: one `\uXXXX`.
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = "\x1b[31mred\x1b]0;title\x07bell\x07\u{9b}2J\u{202e}gnp.exe\u{2066}x\x7f";

    #[test]
    fn controls_and_bidi_become_visible() {
        assert_eq!(
            text(HOSTILE),
            "\\u{1b}[31mred\\u{1b}]0;title\\u{7}bell\\u{7}\\u{9b}2J\\u{202e}gnp.exe\\u{2066}x\\u{7f}"
        );
        assert_eq!(text("a\r\nb\tc\x00"), "a\\r\nb\tc\\u{0}");
        assert_eq!(line("a\r\nb\tc"), "a\\r\\nb\tc");
    }

    #[test]
    fn clean_text_is_borrowed_untouched() {
        for s in ["", "T1  Write parser", "émoji 😀 ‹ok› \\u{1b}", "a\nb\tc"] {
            assert!(matches!(text(s), Cow::Borrowed(b) if b == s), "{s:?}");
        }
        assert!(matches!(line("a\tb"), Cow::Borrowed(_)));
        assert!(matches!(line("a\nb"), Cow::Owned(_)));
        assert!(matches!(
            json_text("{\"a\": \"\\u001b\"}"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn json_text_keeps_the_value() {
        let v = serde_json::json!({"title": HOSTILE, "n": [1, "\u{85}"]});
        let raw = serde_json::to_string_pretty(&v).unwrap();
        let safe = json_text(&raw);
        assert!(
            !safe
                .chars()
                .any(|c| (c.is_control() && c != '\n') || is_bidi_control(c)),
            "{safe}"
        );
        assert!(
            safe.contains("\\u009b") && safe.contains("\\u202e"),
            "{safe}"
        );
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, v);
    }
}
