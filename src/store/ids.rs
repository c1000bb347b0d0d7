//! Ids that become path components: checked when a person or the model gave them, made safe
//! when taskhook derived them itself (CONTRACT §3).

use crate::error::{Error, Result};

/// Longest id accepted as a path component, in bytes.
pub const MAX_ID_LEN: usize = 200;

/// Checks an id given by a person or the model; returns it unchanged when it is safe.
///
/// Refused: empty, longer than [`MAX_ID_LEN`], containing `/`, `\`, `..`, NUL or another
/// control character, or starting with `.`.
pub fn check_id<'a>(kind: &'static str, id: &'a str) -> Result<&'a str> {
    let reason = if id.is_empty() {
        Some("it is empty")
    } else if id.len() > MAX_ID_LEN {
        Some("it is longer than 200 bytes")
    } else if id.contains('/') || id.contains('\\') {
        Some("it contains a path separator")
    } else if id.contains("..") {
        Some("it contains `..`")
    } else if id.starts_with('.') {
        Some("it starts with `.`")
    } else if id.chars().any(char::is_control) {
        Some("it contains a control character")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(Error::UnsafeId {
            kind,
            id: id.chars().take(80).collect(),
            reason,
        }),
        None => Ok(id),
    }
}

/// Makes a name taskhook derived itself (a `package.json` name, a folder name) safe as a path
/// component: `@org/pkg` becomes `org-pkg`. Never fails; an empty result becomes `default`.
pub fn sanitize_id(raw: &str) -> String {
    let mapped: String = raw
        .chars()
        .map(|c| match c {
            '/' | '\\' => '-',
            c if c.is_control() => '-',
            c => c,
        })
        .collect();
    let mut s = mapped;
    while s.contains("..") {
        s = s.replace("..", ".");
    }
    let s = s.trim_start_matches(['.', '@', '-']).trim_end_matches('-');
    let s: String = s.chars().take(MAX_ID_LEN).collect();
    if s.is_empty() {
        "default".to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_ids_are_refused() {
        for bad in [
            "",
            "../../etc/x",
            "a/b",
            "a\\b",
            "..",
            ".hidden",
            "a\0b",
            "x..y",
            "tab\t",
        ] {
            assert!(check_id("list id", bad).is_err(), "{bad:?} accepted");
        }
        let long = "x".repeat(201);
        assert!(check_id("id", &long).is_err());
    }

    #[test]
    fn ordinary_ids_pass() {
        for ok in [
            "T1",
            "task-001",
            "user-auth",
            "foo.md",
            "L2-003",
            "défi",
            "a.b",
        ] {
            assert_eq!(check_id("id", ok).unwrap(), ok);
        }
    }

    #[test]
    fn derived_names_are_made_safe() {
        assert_eq!(sanitize_id("@org/pkg"), "org-pkg");
        assert_eq!(sanitize_id("../../x"), "x");
        assert_eq!(sanitize_id(".."), "default");
        assert_eq!(sanitize_id("my app"), "my app");
        for s in ["@org/pkg", "../../x", "a\\..\\b", "\0", ".git"] {
            assert!(check_id("id", &sanitize_id(s)).is_ok(), "{s:?}");
        }
    }
}
