//! Every change to a list goes through [`update`]: read the file once, unlocked; parse it once
//! ([`List`]); make the change in place; check, recompute and stamp ([`super::lifecycle`]). A
//! change that changes nothing ends there: no lock, no write. Otherwise the sidecar lock is
//! taken and the file compared with what was read (chunk by chunk, no second copy): when it is
//! the same, the parsed, changed list is written as it is (no second parse); when another
//! writer got there first, the file is read again and the change made on what is there now. Only the tasks re-serialised are checked before the write (the
//! typed check of [`super::model`], never looser than the item schema, else the schema itself);
//! the rest were vouched for when the file was read, and `taskhook validate` checks the whole
//! file. The write itself does not read the old file again (it is known to differ).
//!
//! The verbs on top of it (seed 002's TodoWrite / TodoRead as `taskhook tasks write|read`) are
//! in [`super::commands`]; completing tasks is in [`super::hooks`](mod@super::hooks).

use std::path::Path;

use super::doc::*;
use super::lifecycle::{check_graph, finalize, Outcome};
use super::list::List;
use super::scope::Keys;
use super::{FORMAT_VERSION, NAME};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::StoreRef;
use crate::store::{lock_path_for, schema};

/// What a write did.
#[derive(Debug, Clone)]
pub struct Applied<T> {
    /// What the change returned, as `finish` made it.
    pub value: T,
    /// Whether the file changed.
    pub changed: bool,
    /// Tasks this change unblocked (all their dependencies now completed), as ids.
    pub unblocked: Vec<String>,
    /// The same, as labels (`id (description)`).
    pub unblocked_labels: Vec<String>,
    /// Tasks blocked again because a dependency was reopened, as labels.
    pub reblocked: Vec<String>,
}

/// Plans a change on a list's text (pure: no I/O): the list after the change, what `change`
/// returned, and what finishing found. `path` and `store_root` name the file in errors.
pub(crate) fn plan<'t, T>(
    path: &Path,
    store_root: &str,
    text: Option<&'t str>,
    (now, keys): (&str, &Keys),
    change: &impl Fn(&mut List<'t>, &str) -> Result<T>,
) -> Result<(List<'t>, T, Outcome)> {
    let mut list = match load_list(path, store_root, text)? {
        Some(l) => {
            check_version(path, &l)?;
            l
        }
        None => List::empty(FORMAT_VERSION, now),
    };
    list.keys = keys.clone();
    let value = change(&mut list, now)?;
    check_graph(&list)?;
    let out = finalize(&mut list, now);
    Ok((list, value, out))
}

/// Refuses a planned list that might not match the schema: every task it re-serialises passes
/// the typed check (never looser than the schema), or the document goes through the schema
/// itself, whose errors refuse the write.
pub(crate) fn check_before_write(path: &Path, list: &List<'_>) -> Result<()> {
    if list.vouched() {
        return Ok(());
    }
    match schema::check(NAME, &list.for_schema())? {
        Ok(()) => Ok(()),
        Err(issues) => Err(Error::SchemaInvalid {
            path: path.to_path_buf(),
            schema: NAME,
            details: schema::summarize(&issues),
        }),
    }
}

/// The bytes a planned list is written as, once checked.
#[cfg(test)]
pub(crate) fn render(path: &Path, list: &List<'_>) -> Result<Vec<u8>> {
    check_before_write(path, list)?;
    Ok(list.to_bytes())
}

fn applied<T, U>(
    list: &List<'_>,
    value: T,
    out: Outcome,
    finish: &impl Fn(&List<'_>, T) -> U,
) -> Applied<U> {
    Applied {
        unblocked_labels: out.unblocked.iter().map(|id| label(list, id)).collect(),
        reblocked: out.reblocked.iter().map(|id| label(list, id)).collect(),
        value: finish(list, value),
        changed: out.changed,
        unblocked: out.unblocked,
    }
}

/// Applies `change(list, now)` to the list of `store` (see the module doc); `finish` turns what
/// it returned into the result, looking at the list as written.
pub fn update<T, U>(
    cx: &Ctx,
    store: &StoreRef,
    change: impl Fn(&mut List<'_>, &str) -> Result<T>,
    finish: impl Fn(&List<'_>, T) -> U,
) -> Result<Applied<U>> {
    let path = tasks_path(store);
    let lock = lock_path_for(&path);
    let now = cx.store.clock().stamp();
    let root = store.root.display().to_string();
    let keys = Keys::of(cx);
    let a = read_text(cx, &path)?;
    let first = match plan(&path, &root, a.as_deref(), (&now, &keys), &change) {
        Ok((list, value, out)) if !out.changed => return Ok(applied(&list, value, out, &finish)),
        Ok(planned) => Some(planned),
        Err(e @ Error::Corrupt { .. }) => return Err(e),
        // Never locked before: a refused first write creates nothing, not even the lock file.
        Err(e) if !cx.store.exists(&lock) => return Err(e),
        Err(_) => None,
    };
    cx.store.with_lock(&lock, || {
        let same = first.is_some()
            && cx
                .store
                .has_content(&path, a.as_deref().map(str::as_bytes))?;
        match first.filter(|_| same) {
            Some((list, value, out)) => commit(cx, &path, list, value, out, &finish),
            None => {
                let b = read_text(cx, &path)?;
                let (list, value, out) = plan(&path, &root, b.as_deref(), (&now, &keys), &change)?;
                commit(cx, &path, list, value, out, &finish)
            }
        }
    })
}

fn commit<T, U>(
    cx: &Ctx,
    path: &Path,
    list: List<'_>,
    value: T,
    out: Outcome,
    finish: &impl Fn(&List<'_>, T) -> U,
) -> Result<Applied<U>> {
    let result = applied(&list, value, out, finish);
    if result.changed {
        check_before_write(path, &list)?;
        // Streamed into the temp file: the new list is never held in memory whole.
        cx.store.replace_streamed(path, &mut |w| {
            let mut out = std::io::BufWriter::with_capacity(1 << 20, w);
            list.write_to(&mut out)?;
            std::io::Write::flush(&mut out)
        })?;
    }
    Ok(result)
}

pub(crate) fn check_version(path: &Path, list: &List<'_>) -> Result<()> {
    match list.version() {
        Some(v) if v > FORMAT_VERSION => Err(Error::Rule(format!(
            "`{}` has format version {v}; this taskhook writes version {FORMAT_VERSION} and will \
             not rewrite it (upgrade taskhook)",
            path.display()
        ))),
        _ => Ok(()),
    }
}
