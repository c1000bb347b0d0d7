//! The write side of a project's files: a change written as one transaction ([`commit`]),
//! tasks.json replaced as a stream or spliced over the bytes as read (its `splice`), the log's
//! entries recorded until both are written ([`pending`]). Reading, paths and the other files
//! are [`super::files`]'s.

use std::rc::Rc;

use super::files::{
    after_completions, append, append_block, check_dirs, update_project, Change, Doc, Paths, Tasks,
    TEMP_PREFIX, TYPED,
};
use super::log::{self, Entry};
use super::model::TaskList;
use super::pending;
use super::restore;
use super::SCHEMA_TASKS;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::json::{write_back, write_in_place, Shape, Splice};
use crate::store::{parsed, schema, to_pretty, Bytes};

/// What [`commit`] did besides the change itself.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Committed {
    /// The restoration of an unusable tasks.json, described.
    pub restored: Option<String>,
    /// The checkpoint written, described.
    pub checkpoint: Option<String>,
    /// A change an earlier kill interrupted, settled first ([`pending::settle`]), described.
    pub settled: Option<String>,
}

/// Writes a change as one transaction: settles a change an earlier kill interrupted, validates
/// the new list (an invalid one writes nothing but the ERROR entry), keeps the bad bytes of a
/// restored list aside, records the entries to append ([`pending`]), writes tasks.json and
/// project.json, appends the entries (the restoration's ERROR entry first), and after
/// completions recomputes velocity.json and writes a checkpoint when one is due. Call under the
/// project's lock.
pub fn commit(cx: &Ctx, p: &Paths, t: &mut Tasks, c: &Change) -> Result<Committed> {
    let mut notes = Committed {
        settled: pending::settle(cx, p)?,
        ..Default::default()
    };
    let now = cx.store.clock().stamp();
    let write_tasks = c.tasks_changed || t.restored.is_some();
    let task = c
        .task
        .as_ref()
        .map(|(a, b, d)| (a.as_str(), b.as_str(), d.as_str()));
    // The new document: spliced over the bytes as read when the change kept the tasks in
    // their places, else written back whole.
    let mut written = None;
    if write_tasks {
        let in_place = match t.doc.read() {
            Some((bytes, list)) => splice(&bytes, list, &t.list)?.map(|s| (bytes, s)),
            None => None,
        };
        written = Some(match in_place {
            Some((base, splice)) => Doc::Spliced {
                base,
                splice: Rc::new(splice),
                list: t.list.clone(),
            },
            None => {
                let mut doc = t.doc.to_value()?;
                write_back(&mut doc, &*t.list).map_err(Error::BadInput)?;
                if let Err(issues) = schema::check(SCHEMA_TASKS, &doc)? {
                    let e = Error::SchemaInvalid {
                        path: p.tasks.clone(),
                        schema: SCHEMA_TASKS,
                        details: schema::summarize(&issues),
                    };
                    // The ERROR entry stays even though the operation it records is undone.
                    cx.store.keep_through_failure(|| {
                        append(cx, p, &[Entry::refused(&now, task, &e.one_line())])
                    })?;
                    return Err(e);
                }
                Doc::Read {
                    bytes: Bytes::new(to_pretty(&doc)),
                    list: t.list.clone(),
                }
            }
        });
    }
    let mut entries = Vec::new();
    if let Some(r) = &t.restored {
        let (msg, entry) = restore::keep_aside(cx, p, r, &now)?;
        notes.restored = Some(msg);
        entries.push(entry);
    }
    entries.extend(c.entries.iter().cloned());
    let block = log::render_all(&entries);
    let mut recorded = false;
    if let Some(new) = written {
        check_dirs(cx, p)?;
        // A change that leaves the bytes as they are writes nothing.
        let unchanged = match (&new, &t.doc) {
            (Doc::Spliced { base, splice, .. }, _) => splice.is_base(base).then(|| base.clone()),
            (Doc::Read { bytes, .. }, Doc::Read { bytes: old, .. }) => {
                (bytes == old).then(|| bytes.clone())
            }
            _ => None,
        };
        if let Some(bytes) = unchanged {
            if !block.is_empty() {
                let fnv = crate::fnv::hash(&bytes);
                recorded = pending::begin(cx, p, bytes.len() as u64, fnv, &block, c)?;
            }
            parsed::remember_shared(TYPED, bytes.clone(), t.list.clone());
            update_project(cx, p, &t.list, c, &now)?;
            t.doc = Doc::Read {
                bytes,
                list: t.list.clone(),
            };
        } else {
            write_tasks_json(cx, p, t, new, &block, c, &mut recorded)?;
            update_project(cx, p, &t.list, c, &now)?;
        }
    }
    append_block(cx, p, &block)?;
    if c.completions > 0 {
        let doc = &t.doc;
        notes.checkpoint = after_completions(
            cx,
            p,
            &t.list,
            &mut |w| doc.write_to(w, &mut |_| {}),
            &c.phases,
            &now,
        )?;
    }
    if recorded {
        pending::end(cx, p)?;
    }
    Ok(notes)
}

/// Replaces tasks.json with `new` as a stream, hashed on the way: FNV-1a for the pending
/// record of `block` (which a later process checks; written once the temp file is whole, before
/// the rename), a keyed digest for this invocation's later reads. The document is then the
/// file as written (what a checkpoint copies, and what a later write is spliced over); the
/// bytes as read are left to the undo.
fn write_tasks_json(
    cx: &Ctx,
    p: &Paths,
    t: &mut Tasks,
    new: Doc,
    block: &str,
    c: &Change,
    recorded: &mut bool,
) -> Result<()> {
    // The undo keeps the bytes as read (still the file's: compared, not read again).
    let was = match &t.doc {
        Doc::Read { bytes, .. } => Some(bytes.clone()),
        Doc::Spliced { .. } | Doc::Made(_) => None,
    };
    let fnv = std::cell::Cell::new(crate::fnv::OFFSET);
    let digest = std::cell::RefCell::new(parsed::Digester::default());
    cx.store.replace_filled(
        &p.tasks,
        &p.temp,
        TEMP_PREFIX,
        was.as_ref(),
        &mut |w| {
            fnv.set(crate::fnv::OFFSET);
            *digest.borrow_mut() = parsed::Digester::default();
            new.write_to(w, &mut |piece| {
                fnv.set(crate::fnv::add(fnv.get(), piece));
                digest.borrow_mut().add(piece);
            })
        },
        &mut || {
            if !block.is_empty() {
                let len = digest.borrow().len();
                *recorded = pending::begin(cx, p, len, fnv.get(), block, c)?;
            }
            Ok(())
        },
    )?;
    // What the file now holds is the list (a typed parse of the bytes gives it back): a later
    // look in this event (the status a notice records) is not a parse.
    match &new {
        Doc::Read { bytes, .. } => parsed::remember_shared(TYPED, bytes.clone(), t.list.clone()),
        _ => parsed::remember_digest(TYPED, digest.borrow().finish(), t.list.clone()),
    }
    t.doc = new;
    Ok(())
}

/// The new bytes of tasks.json written in place ([`write_in_place`]): the bytes of the tasks
/// the change left alone kept as read, each task it changed written over its own old bytes.
/// `None` when the list changed shape (tasks added or removed, the document's other keys) or
/// cannot be written so: the whole document is then written back.
pub(super) fn splice(bytes: &[u8], was: &TaskList, now: &TaskList) -> Result<Option<Splice>> {
    if was.rest != now.rest {
        return Ok(None);
    }
    let head = TaskList {
        tasks: Vec::new(),
        rest: now.rest.clone(),
    };
    write_in_place(
        bytes,
        "tasks",
        &head,
        &was.tasks,
        &now.tasks,
        Shape::schema(SCHEMA_TASKS),
    )
}

/// [`splice`], made whole.
#[cfg(test)]
pub(super) fn spliced(bytes: &[u8], was: &TaskList, now: &TaskList) -> Result<Option<Vec<u8>>> {
    Ok(splice(bytes, was, now)?.map(|s| s.to_vec(bytes)))
}
