//! The failures of seed 004's commands, each with a stable `code` (the orchestrator branches on
//! it; the README lists them all). A crate [`Error`] becomes a [`Failure`] with the code its kind
//! implies; a failure reaching the hook side becomes an [`Error`] naming its code.

use std::fmt;

use crate::error::Error;

/// A stable failure code, printed as `"code"` in `{"success":false,…}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// Neither `CDD_DIR` nor `cdd_dir` in `.claude/taskhook.json`.
    CddDirNotSet,
    /// `.claude/taskhook.json` is not valid settings.
    ConfigInvalid,
    /// `$CDD_DIR/tasks/` does not exist (run `init`).
    NotInitialized,
    /// `tasks/order.json` does not exist.
    NoOrder,
    /// An order that does not parse, fails its schema, repeats a name or names an unsafe file.
    InvalidOrder,
    /// A task or stop not in `order.json`; an import source that does not exist.
    NotFound,
    /// The task is not in the folder the command moves it from.
    WrongStatus,
    /// `start` while another task is in `in_progress/`.
    TaskInProgress,
    /// `start` of a task behind a stop that has not been passed.
    StopNotPassed,
    /// A task of `order.json` whose file is in no status folder.
    NotImported,
    /// `import`: a new task's file is not beside the order.
    TaskFileMissing,
    /// A task's file is in several status folders (SessionStart or `taskhook reconcile` repairs it).
    Inconsistent,
    /// A task name that cannot be a file name (`/`, `..`, leading `.`, …).
    InvalidName,
    /// `list` with a status that is not one of the four folders.
    InvalidStatus,
    /// Wrong arguments.
    Usage,
    /// The workspace lock was not free within `TASKHOOK_LOCK_TIMEOUT`.
    LockTimeout,
    /// A file could not be read or written.
    IoError,
    /// A path taskhook will not use: a planted symbolic link, a special file, or a place
    /// outside every folder it may write (a cloned repository can plant these).
    Refused,
}

impl Code {
    /// The code as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::CddDirNotSet => "CDD_DIR_NOT_SET",
            Code::ConfigInvalid => "CONFIG_INVALID",
            Code::NotInitialized => "NOT_INITIALIZED",
            Code::NoOrder => "NO_ORDER",
            Code::InvalidOrder => "INVALID_ORDER",
            Code::NotFound => "NOT_FOUND",
            Code::WrongStatus => "WRONG_STATUS",
            Code::TaskInProgress => "TASK_IN_PROGRESS",
            Code::StopNotPassed => "STOP_NOT_PASSED",
            Code::NotImported => "NOT_IMPORTED",
            Code::TaskFileMissing => "TASK_FILE_MISSING",
            Code::Inconsistent => "INCONSISTENT",
            Code::InvalidName => "INVALID_NAME",
            Code::InvalidStatus => "INVALID_STATUS",
            Code::Usage => "USAGE",
            Code::LockTimeout => "LOCK_TIMEOUT",
            Code::IoError => "IO_ERROR",
            Code::Refused => "REFUSED",
        }
    }
}

/// One failure: its code and a one-line message (and the crate error it came from, which the
/// hook side gets back whole: a lock timeout stays a lock timeout for the exit policy).
#[derive(Debug)]
pub struct Failure {
    pub code: Code,
    pub message: String,
    source: Option<Error>,
}

impl Failure {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: crate::error::one_line(&message.into()),
            source: None,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code.as_str())
    }
}

/// Results of the cdd operations.
pub type CResult<T> = std::result::Result<T, Failure>;

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let code = match &e {
            Error::LockTimeout { .. } => Code::LockTimeout,
            Error::UnsafeId { .. } => Code::InvalidName,
            Error::NotFound(_) => Code::NotFound,
            Error::Usage(_) => Code::Usage,
            Error::Corrupt { .. } | Error::SchemaInvalid { .. } => Code::InvalidOrder,
            Error::Io { .. } | Error::BadInput(_) | Error::Rule(_) => Code::IoError,
            Error::Refused { .. } => Code::Refused,
        };
        Failure {
            source: None,
            ..Failure::new(code, e.one_line())
        }
        .with_source(e)
    }
}

impl Failure {
    fn with_source(mut self, e: Error) -> Self {
        self.source = Some(e);
        self
    }
}

impl From<Failure> for Error {
    fn from(f: Failure) -> Self {
        match f.source {
            Some(e) => e,
            None => Error::Rule(f.to_string()),
        }
    }
}
