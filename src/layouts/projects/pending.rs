//! One change that writes tasks.json and appends to `progress/log.md` is one transaction:
//! tasks.json is written first, the log after, and between the two a kill would leave the
//! state changed with its entries missing (a TASK_COMPLETE velocity never counts). So before
//! tasks.json is written, the entries to append go to `temp/.log-pending.json` with a digest
//! of the tasks.json about to be written, and the file is removed once the commit is whole.
//!
//! The next write to the store, or the next session start, settles a file left by a kill: when
//! tasks.json is the one it names, the write happened and the commit is finished (the entries
//! appended unless they already are, project.json, velocity.json and a due checkpoint
//! written); otherwise tasks.json was never replaced, nothing of the change took effect, and
//! the file is dropped. Either way the file is removed and what was done is said.

use crate::layouts::json::find_bytes;
use serde::{Deserialize, Serialize};

use super::files::{self, Change, Paths};
use super::log::{self, Entry};
use super::model::TaskList;
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::json::lenient;
use crate::store::parse_json;

/// The file's name inside `temp/`.
pub const NAME: &str = ".log-pending.json";

/// The record of a change under way, as written to `temp/.log-pending.json`. Read back, the
/// entries and the digest must be there; the rest reads as none when missing or odd.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    #[serde(default, skip_deserializing)]
    about: String,
    tasks_json: Digest,
    #[serde(default, with = "lenient")]
    log_len: Option<u64>,
    entries: String,
    #[serde(default, with = "lenient")]
    completions: Option<u64>,
    #[serde(default, with = "lenient")]
    phases: Option<Vec<String>>,
    #[serde(default, with = "lenient")]
    started: Option<String>,
}

/// What tasks.json is once the change is written.
#[derive(Debug, Serialize, Deserialize)]
struct Digest {
    #[serde(default, with = "lenient")]
    bytes: Option<u64>,
    fnv1a64: String,
}

/// A 64-bit FNV-1a digest (stable across builds, unlike std's hasher).
fn digest(bytes: &[u8]) -> String {
    format!("{:016x}", crate::fnv::hash(bytes))
}

/// Records, before tasks.json is replaced with `tasks`, the `block` of entries to append after
/// it and what else the commit writes (`c`). Nothing in a dry run.
pub fn begin(cx: &Ctx, p: &Paths, len: u64, fnv: u64, block: &str, c: &Change) -> Result<bool> {
    if cx.store.is_dry_run() {
        return Ok(false);
    }
    let log_len = cx.store.len(&p.log).unwrap_or(0);
    let v = files::to_doc(&Record {
        about: "taskhook: the progress/log.md entries of a change whose tasks.json write is under way; removed once they are appended".to_string(),
        tasks_json: Digest {
            bytes: Some(len),
            fnv1a64: format!("{fnv:016x}"),
        },
        log_len: Some(log_len),
        entries: block.to_string(),
        completions: Some(c.completions as u64),
        phases: Some(c.phases.clone()),
        started: c.started.clone(),
    });
    cx.store.replace_via(
        &p.pending(),
        &crate::store::to_pretty(&v),
        &p.temp,
        files::TEMP_PREFIX,
    )?;
    Ok(true)
}

/// Removes the record once its commit is whole: a file the commit wrote and removed again is
/// not a change it made.
pub fn end(cx: &Ctx, p: &Paths) -> Result<()> {
    cx.store.remove(&p.pending())?;
    cx.store.forget_change(&p.pending());
    Ok(())
}

/// Whether a record left by an interrupted commit waits to be settled (one stat).
pub fn waiting(cx: &Ctx, p: &Paths) -> bool {
    cx.store.exists(&p.pending())
}

/// The event and task of each entry, for a report (`TASK_COMPLETE T1, PHASE_COMPLETE`).
fn names(entries: &[Entry]) -> String {
    let all: Vec<String> = entries
        .iter()
        .map(|e| match &e.task {
            Some(t) => format!("{} {t}", e.event),
            None => e.event.clone(),
        })
        .collect();
    all.join(", ")
}

fn entries_word(n: usize) -> &'static str {
    if n == 1 {
        "entry"
    } else {
        "entries"
    }
}

/// Settles a record an interrupted commit left (see the module doc); returns what was done,
/// `None` when there was none. Call under the project's lock, before any other write.
pub fn settle(cx: &Ctx, p: &Paths) -> Result<Option<String>> {
    let path = p.pending();
    if !waiting(cx, p) {
        return Ok(None);
    }
    // Anything else in its place (a link, a FIFO, a file over the cap) is not one.
    let record = files::read_file(cx, &path)
        .ok()
        .flatten()
        .and_then(|b| parse_json(&b).ok())
        .and_then(|v| crate::layouts::json::typed::<Record>(&v).ok());
    let msg = match record {
        None => format!(
            "removed temp/{NAME}, which is not a record taskhook wrote (nothing of it was applied)"
        ),
        Some(r) => finish(cx, p, &r)?,
    };
    cx.store.remove(&path)?;
    Ok(Some(msg))
}

/// Finishes (or drops) the commit a record describes.
fn finish(cx: &Ctx, p: &Paths, r: &Record) -> Result<String> {
    let block = r.entries.as_str();
    let entries = log::parse(block);
    let what = names(&entries);
    let n = entries.len();
    let tasks = files::read_file(cx, &p.tasks)?;
    let written = tasks.as_deref().is_some_and(|b| {
        r.tasks_json.bytes == Some(b.len() as u64) && r.tasks_json.fnv1a64 == digest(b)
    });
    let list = tasks
        .as_deref()
        .and_then(|b| parse_json(b).ok())
        .and_then(|d| crate::layouts::json::typed::<TaskList>(&d).ok());
    let (true, Some(tasks), Some(list)) = (written, tasks, list) else {
        return Ok(format!(
            "a change interrupted before tasks.json was written took no effect: its {n} log {} ({what}) {} not written",
            entries_word(n),
            if n == 1 { "was" } else { "were" }
        ));
    };
    let log = files::read_file(cx, &p.log)?.unwrap_or_default();
    let from = usize::try_from(r.log_len.unwrap_or(0))
        .unwrap_or(usize::MAX)
        .min(log.len());
    let at = find_bytes(&log[from..], block.as_bytes()).map(|i| from + i);
    let c = Change {
        completions: r.completions.unwrap_or(0) as usize,
        phases: r.phases.clone().unwrap_or_default(),
        started: r.started.clone(),
        tasks_changed: true,
        ..Default::default()
    };
    let mut phases_checkpointed = false;
    if let Some(i) = at {
        let after = log::parse(&String::from_utf8_lossy(&log[i + block.len()..]));
        phases_checkpointed = after.iter().any(|e| e.event == log::CHECKPOINT_WRITTEN);
    }
    let now = cx.store.clock().stamp();
    files::update_project(cx, p, &list, &c, &now)?;
    if at.is_none() {
        files::append_block(cx, p, block)?;
    }
    if c.completions > 0 {
        let phases = if phases_checkpointed {
            Vec::new()
        } else {
            c.phases.clone()
        };
        files::after_completions(cx, p, &list, &mut |w| w.write_all(&tasks), &phases, &now)?;
    }
    Ok(match at {
        None => format!(
            "finished a change interrupted after tasks.json was written: appended its {n} log {} ({what})",
            entries_word(n)
        ),
        Some(_) => format!(
            "finished a change interrupted after its log {} ({what}) {} appended",
            entries_word(n),
            if n == 1 { "was" } else { "were" }
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_fnv1a() {
        assert_eq!(digest(b""), "cbf29ce484222325");
        assert_eq!(digest(b"a"), "af63dc4c8601ec8c");
        assert_eq!(find_bytes(b"xxabcx", b"abc"), Some(2));
        assert_eq!(find_bytes(b"xxab", b"abc"), None);
    }
}
