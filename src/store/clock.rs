//! The injectable clock: `TASKHOOK_NOW` fixes it, else the system time.
//!
//! Every timestamp taskhook writes comes from here, formatted as seed files want it:
//! ISO 8601 UTC with a `Z` suffix and whole seconds (`2026-01-14T10:30:00Z`).

use chrono::{DateTime, SecondsFormat, Utc};

use crate::env::{Env, TASKHOOK_NOW};
use crate::error::{Error, Result};

/// Where "now" comes from.
#[derive(Debug, Clone, Copy, Default)]
pub struct Clock {
    fixed: Option<DateTime<Utc>>,
}

impl Clock {
    /// The system clock.
    pub fn system() -> Self {
        Clock { fixed: None }
    }

    /// A clock stopped at `at`.
    pub fn fixed(at: DateTime<Utc>) -> Self {
        Clock { fixed: Some(at) }
    }

    /// Reads `TASKHOOK_NOW` (RFC 3339) from the environment; unset means the system clock.
    pub fn from_env(env: &Env) -> Result<Self> {
        match env.get(TASKHOOK_NOW) {
            None => Ok(Clock::system()),
            Some(raw) => parse_time(raw).map(Clock::fixed).ok_or_else(|| {
                Error::BadInput(format!(
                    "{TASKHOOK_NOW} must be an RFC 3339 time like 2026-01-14T10:30:00Z, got {raw:?}"
                ))
            }),
        }
    }

    /// Returns the current time.
    pub fn now(&self) -> DateTime<Utc> {
        self.fixed.unwrap_or_else(Utc::now)
    }

    /// Returns the current time as `YYYY-MM-DDTHH:MM:SSZ`.
    pub fn stamp(&self) -> String {
        stamp(self.now())
    }

    /// Returns the current time as `YYYYMMDDTHHMMSSZ`, for file names.
    pub fn file_stamp(&self) -> String {
        self.now().format("%Y%m%dT%H%M%SZ").to_string()
    }
}

/// Formats a time as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Parses an RFC 3339 / ISO 8601 time with an offset (`Z` or `+hh:mm`) into UTC.
pub fn parse_time(raw: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(raw.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_clock_from_env() {
        let env = Env::from_pairs([(TASKHOOK_NOW, "2026-01-14T10:30:00+02:00")]);
        let c = Clock::from_env(&env).unwrap();
        assert_eq!(c.stamp(), "2026-01-14T08:30:00Z");
        assert_eq!(c.file_stamp(), "20260114T083000Z");
    }

    #[test]
    fn bad_now_is_an_error() {
        let env = Env::from_pairs([(TASKHOOK_NOW, "yesterday")]);
        let err = Clock::from_env(&env).unwrap_err().to_string();
        assert!(err.contains("TASKHOOK_NOW"), "{err}");
    }
}
