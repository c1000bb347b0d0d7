//! Ids that become path components: checked when a person or the model gave them, made safe
//! when taskhook derived them itself (CONTRACT §3).
//!
//! Safe means safe on every system a repository is checked out on: besides `/`, `\`, `..`,
//! NUL and a leading `.`, what Windows cannot name (`CON`, `NUL`, `COM1`, `LPT1`, …, with or
//! without an extension; `<>:"|?*`; a trailing dot or space) and bidirectional-text controls
//! (which make a name display as another) are refused.
//!
//! A new unit's id ([`check_unit_id`], [`check_word`]) must also be one word: `<task>` and
//! `<signal>` tags ignore a name with whitespace, and a printed command would split it.

// Bidirectional-text controls: the one set, which `display` also escapes.
use crate::display::is_bidi_control;
use crate::error::{Error, Result};

/// Longest id accepted as a path component, in bytes (NAME_MAX is 255; room is left for the
/// suffixes taskhook adds).
pub const MAX_ID_LEN: usize = 200;

/// Characters Windows does not allow in a file name.
const WINDOWS_RESERVED_CHARS: &[char] = &['<', '>', ':', '"', '|', '?', '*'];

/// Whether `name` is a Windows device name (`CON`, `nul.txt`, `COM1`, `LPT9.json`, …).
fn is_windows_device(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or("").trim_end_matches(' ');
    let is = |w: &str| stem.eq_ignore_ascii_case(w);
    if ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"]
        .into_iter()
        .any(is)
    {
        return true;
    }
    let digit = |d: &str| {
        matches!(
            d,
            "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "0" | "¹" | "²" | "³"
        )
    };
    ["COM", "LPT"].into_iter().any(|p| {
        stem.get(..3)
            .is_some_and(|head| head.eq_ignore_ascii_case(p))
            && stem.get(3..).is_some_and(digit)
    })
}

/// The error refusing `id` (cut to 80 characters) for `reason`.
pub fn unsafe_id(kind: &'static str, id: &str, reason: &'static str) -> Error {
    Error::UnsafeId {
        kind,
        id: id.chars().take(80).collect(),
        reason,
    }
}

/// `id` unchanged, or refused for `reason`.
fn verdict<'a>(kind: &'static str, id: &'a str, reason: Option<&'static str>) -> Result<&'a str> {
    match reason {
        Some(reason) => Err(unsafe_id(kind, id, reason)),
        None => Ok(id),
    }
}

/// Checks an id given by a person or the model; returns it unchanged when it is safe.
///
/// Refused: empty, longer than [`MAX_ID_LEN`] bytes, containing `/`, `\`, `..`, NUL or another
/// control character, a bidi control or one of `<>:"|?*`, starting with `.`, ending with `.`
/// or a space, or a Windows device name.
pub fn check_id<'a>(kind: &'static str, id: &'a str) -> Result<&'a str> {
    // One pass over the bytes for what is ASCII (a store lists thousands of names); the
    // characters are walked only when there is more than ASCII.
    let (mut separator, mut control, mut reserved, mut ascii) = (false, false, false, true);
    for &c in id.as_bytes() {
        match c {
            b'/' | b'\\' => separator = true,
            0..=0x1f | 0x7f => control = true,
            b'<' | b'>' | b':' | b'"' | b'|' | b'?' | b'*' => reserved = true,
            0x80.. => ascii = false,
            _ => {}
        }
    }
    let control = control || (!ascii && id.chars().any(char::is_control));
    let bidi = !ascii && id.chars().any(is_bidi_control);
    let reason = if id.is_empty() {
        Some("it is empty")
    } else if id.len() > MAX_ID_LEN {
        Some("it is longer than 200 bytes")
    } else if separator {
        Some("it contains a path separator")
    } else if id.as_bytes().windows(2).any(|w| w == b"..") {
        Some("it contains `..`")
    } else if id.starts_with('.') {
        Some("it starts with `.`")
    } else if control {
        Some("it contains a control character")
    } else if bidi {
        Some("it contains a bidirectional-text control")
    } else if reserved {
        Some("it contains one of < > : \" | ? *, which Windows does not allow in a name")
    } else if id.ends_with('.') || id.ends_with(' ') {
        Some("it ends with a dot or a space, which Windows drops")
    } else if is_windows_device(id) {
        Some("it is a Windows device name (CON, NUL, COM1, LPT1, …)")
    } else {
        None
    };
    verdict(kind, id, reason)
}

/// Why an id cannot be one word of a tag or a command: whitespace of any kind.
const WHITESPACE: &str =
    "it contains whitespace, which <task> and <signal> tags and printed commands cannot carry";

/// Checks an id a person or a plan gives a new unit that never becomes a path (a cdd stop id):
/// one word of `<task>` / `<signal>` tags and of printed commands, so not empty, and no
/// control character or whitespace of any kind.
pub fn check_word<'a>(kind: &'static str, id: &'a str) -> Result<&'a str> {
    let reason = if id.is_empty() {
        Some("it is empty")
    } else if id.chars().any(char::is_control) {
        Some("it contains a control character")
    } else if id.chars().any(char::is_whitespace) {
        Some(WHITESPACE)
    } else {
        None
    };
    verdict(kind, id, reason)
}

/// Checks the id of a new unit that becomes a path (a project id, slug, task id or cdd task
/// name), given by a person or a plan: [`check_word`] and [`check_id`]. Ids already on disk
/// are read with [`check_id`] alone, so a store written by hand keeps working (its status
/// reports such an id, and every command printed for it is quoted).
pub fn check_unit_id<'a>(kind: &'static str, id: &'a str) -> Result<&'a str> {
    check_word(kind, id)?;
    check_id(kind, id)
}

/// Makes a name taskhook derived itself (a `package.json` name, a folder name) safe as a path
/// component: `@org/pkg` becomes `org-pkg`. Never fails; an empty result becomes `default`, a
/// Windows device name gets a `_` suffix, and the result is cut to [`MAX_ID_LEN`] bytes on a
/// character boundary.
pub fn sanitize_id(raw: &str) -> String {
    let mapped: String = raw
        .chars()
        .map(|c| match c {
            '/' | '\\' => '-',
            c if c.is_control() || is_bidi_control(c) || WINDOWS_RESERVED_CHARS.contains(&c) => '-',
            c => c,
        })
        .collect();
    let mut s = mapped;
    while s.contains("..") {
        s = s.replace("..", ".");
    }
    let mut s = s.trim_start_matches(['.', '@', '-']).to_string();
    s.truncate(floor_char_boundary(&s, MAX_ID_LEN));
    s.truncate(s.trim_end_matches(['-', '.', ' ']).len());
    if s.is_empty() {
        return "default".to_string();
    }
    if is_windows_device(&s) {
        // `CON` → `CON_`; `nul.txt` → `nul_.txt`.
        let stem_len = s.split('.').next().unwrap_or("").len();
        s.insert(stem_len, '_');
    }
    s
}

/// The largest index ≤ `max` that is a character boundary of `s`.
fn floor_char_boundary(s: &str, max: usize) -> usize {
    if max >= s.len() {
        return s.len();
    }
    (0..=max)
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The check as it was written before its one pass over the bytes (issue 23): the same
    /// first reason for every string.
    fn check_id_reference(id: &str) -> Option<&'static str> {
        let device = |name: &str| {
            let stem = name.split('.').next().unwrap_or("").trim_end_matches(' ');
            let upper = stem.to_ascii_uppercase();
            let digit = |d: &str| {
                matches!(
                    d,
                    "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "0" | "¹" | "²" | "³"
                )
            };
            matches!(
                upper.as_str(),
                "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
            ) || upper.strip_prefix("COM").is_some_and(digit)
                || upper.strip_prefix("LPT").is_some_and(digit)
        };
        if id.is_empty() {
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
        } else if id.chars().any(is_bidi_control) {
            Some("it contains a bidirectional-text control")
        } else if id.contains(WINDOWS_RESERVED_CHARS) {
            Some("it contains one of < > : \" | ? *, which Windows does not allow in a name")
        } else if id.ends_with('.') || id.ends_with(' ') {
            Some("it ends with a dot or a space, which Windows drops")
        } else if device(id) {
            Some("it is a Windows device name (CON, NUL, COM1, LPT1, …)")
        } else {
            None
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

        #[test]
        fn check_id_gives_the_reference_verdict(
            id in "(com|lpt|CON|nul|\\.|/|\\\\|<|:|\\*| |a|Z|1|¹|é|\u{202e}|\u{85}|\u{1}|\u{7f}|x){0,6}"
        ) {
            let got = match check_id("id", &id) {
                Ok(_) => None,
                Err(Error::UnsafeId { reason, .. }) => Some(reason),
                Err(e) => panic!("{e}"),
            };
            proptest::prop_assert_eq!(got, check_id_reference(&id), "{:?}", id);
        }
    }

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
            "CON",
            "nul",
            "Com1",
            "LPT9.json",
            "aux.txt",
            "COM¹",
            "x:y",
            "a<b",
            "q?",
            "star*",
            "pipe|",
            "quote\"",
            "dot.",
            "space ",
            "evil\u{202E}gpj.exe",
            "iso\u{2066}late",
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
            "console",
            "COM10",
            "nullable",
            "my app",
        ] {
            assert_eq!(check_id("id", ok).unwrap(), ok);
        }
    }

    #[test]
    fn unit_ids_are_one_word() {
        for bad in [
            "a b",
            " lead",
            "tab\tx",
            "nl\n",
            "nbsp\u{a0}x",
            "ideo\u{3000}x",
            "ls\u{2028}x",
            "",
        ] {
            assert!(check_unit_id("task id", bad).is_err(), "{bad:?} accepted");
            assert!(check_word("stop id", bad).is_err(), "{bad:?} accepted");
        }
        let e = check_unit_id("task id", "a b").unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid task id \"a b\": it contains whitespace, which <task> and <signal> tags and printed commands cannot carry"
        );
        assert!(check_unit_id("task id", "../x").is_err());
        for ok in ["T1", "foo.md", "défi", "L2-003"] {
            assert_eq!(check_unit_id("id", ok).unwrap(), ok);
        }
        // A stop id is no path: only whitespace and control characters matter.
        assert_eq!(
            check_word("stop id", "verify:core/1").unwrap(),
            "verify:core/1"
        );
    }

    #[test]
    fn derived_names_are_made_safe() {
        assert_eq!(sanitize_id("@org/pkg"), "org-pkg");
        assert_eq!(sanitize_id("../../x"), "x");
        assert_eq!(sanitize_id(".."), "default");
        assert_eq!(sanitize_id("my app"), "my app");
        assert_eq!(sanitize_id("CON"), "CON_");
        assert_eq!(sanitize_id("nul.txt"), "nul_.txt");
        assert_eq!(sanitize_id("a:b"), "a-b");
        assert_eq!(sanitize_id("trailing. "), "trailing");
        let e = "é".repeat(128);
        let s = sanitize_id(&e);
        assert!(s.len() <= MAX_ID_LEN && s.len() == 200, "{}", s.len());
        for s in [
            "@org/pkg",
            "../../x",
            "a\\..\\b",
            "\0",
            ".git",
            "CON",
            "lpt1.json",
            "x\u{202E}y",
            "<>:\"|?*",
            "name.",
            e.as_str(),
            &format!("{}.", "a".repeat(199)),
        ] {
            assert!(
                check_id("id", &sanitize_id(s)).is_ok(),
                "{s:?} -> {:?}",
                sanitize_id(s)
            );
        }
    }
}
