//! Text from files a repository may have planted (titles, ids, reasons) made safe for a
//! terminal: control characters other than a newline and a tab, and the bidirectional-text
//! controls, are shown as escapes (`\u{1b}`) rather than acted on.

/// Whether `c` must not reach a terminal as it is.
fn unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every unsafe character escaped (`\u{1b}`); newlines and tabs kept.
pub fn text(s: &str) -> String {
    if !s.chars().any(unsafe_char) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_char(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_but_keeps_lines() {
        assert_eq!(text("a\x1b[31mb\nc\td"), "a\\u{1b}[31mb\nc\td");
        assert_eq!(text("\u{202E}x\x07"), "\\u{202e}x\\u{7}");
        assert_eq!(text("plain"), "plain");
    }
}
