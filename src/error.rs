//! The one error type of taskhook, and how each kind maps to an exit code.
//!
//! Every message is a single line (the CLI prints it as `taskhook: <message>`), names the
//! file or value it is about, and where there is a fix, says it.

use std::path::PathBuf;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong inside taskhook.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The hook payload or a command's input is not what the protocol allows.
    #[error("{0}")]
    BadInput(String),

    /// A command-line usage problem that clap could not catch (bad flag combination, unknown name).
    #[error("{0}")]
    Usage(String),

    /// A filesystem call failed; names the operation and the path.
    #[error("failed to {op} `{path}`: {source}")]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The sidecar lock could not be taken within `TASKHOOK_LOCK_TIMEOUT`.
    #[error(
        "timed out after {waited_secs:.1}s waiting for lock `{path}`; is another taskhook running? \
         (TASKHOOK_LOCK_TIMEOUT sets the wait in seconds)"
    )]
    LockTimeout { path: PathBuf, waited_secs: f64 },

    /// A value about to be written fails its schema; nothing was written.
    #[error("refusing to write `{path}`: it would not match schema {schema}: {details}")]
    SchemaInvalid {
        path: PathBuf,
        schema: &'static str,
        details: String,
    },

    /// A state file on disk does not parse or fails its schema, and the layout cannot rebuild it.
    #[error(
        "`{path}` is corrupt ({details}); taskhook will not write to it: \
         run `taskhook validate` to see why, or `taskhook recover {store}` (with `--dry-run` \
         first: it shows what recovery would keep and drop)"
    )]
    Corrupt {
        path: PathBuf,
        store: String,
        details: String,
    },

    /// An id that would become a path is unsafe (`/`, `\`, `..`, NUL, leading `.`, empty).
    #[error("invalid {kind} {id:?}: {reason}")]
    UnsafeId {
        kind: &'static str,
        id: String,
        reason: &'static str,
    },

    /// taskhook will not read or write a path of an untrusted repository: a symbolic link, a
    /// file with several hard links, a special file (FIFO, device), a file over its size cap, or
    /// a path outside every folder taskhook may write. Nothing was read or written through it.
    #[error("refusing to {op} `{path}`: {reason}")]
    Refused {
        op: &'static str,
        path: PathBuf,
        reason: String,
    },

    /// A rule of a layout refused the operation (cycle, unknown dependency, …); nothing was written.
    #[error("{0}")]
    Rule(String),

    /// A named thing (schema, store, task) does not exist.
    #[error("{0}")]
    NotFound(String),
}

impl Error {
    /// Wraps an I/O error with the operation and the path it was about.
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// A [`Error::Refused`] for `op` on `path`.
    pub fn refused(op: &'static str, path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Error::Refused {
            op,
            path: path.into(),
            reason: reason.into(),
        }
    }

    /// Renders the error as exactly one line (newlines folded), for stderr.
    pub fn one_line(&self) -> String {
        one_line(&self.to_string())
    }
}

/// Folds a message onto one line: newlines and tabs become spaces, runs of blanks collapse;
/// any other control character, and any bidirectional-text control, is shown escaped
/// ([`crate::display::line`]: `\u{1b}`), so a line naming what a repository holds is safe on a
/// terminal.
pub fn one_line(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut blank = false;
    let mut buf = [0u8; 4];
    for ch in msg.chars() {
        if ch == ' ' || (ch.is_control() && ch.is_whitespace()) {
            if !blank && !out.is_empty() {
                out.push(' ');
            }
            blank = true;
        } else {
            out.push_str(&crate::display::line(ch.encode_utf8(&mut buf)));
            blank = false;
        }
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_folds_newlines_and_controls() {
        assert_eq!(one_line("a\nb\r\n\tc  d\n"), "a b c d");
        assert_eq!(
            one_line("x\x1b[31m\u{9b}\u{202e}\x07y"),
            "x\\u{1b}[31m\\u{9b}\\u{202e}\\u{7}y"
        );
        assert_eq!(one_line(""), "");
    }

    #[test]
    fn io_error_names_path() {
        let e = Error::io(
            "read",
            "/x/y.json",
            std::io::Error::from(std::io::ErrorKind::NotFound),
        );
        assert!(e.to_string().starts_with("failed to read `/x/y.json`"));
    }
}
