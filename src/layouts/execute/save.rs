//! One execute-state.json as taskhook writes it: a state written back over what it was read
//! from ([`Origin`]), so fields taskhook does not know and the file's key order survive every
//! rewrite; in place where only tasks changed ([`write_in_place`]), and over the file itself
//! where the state was read as a stream ([`super::state::read_shared`]), every byte of it
//! hashed on the way; and the copy of the latest state ([`LAST_GOOD`]) written just before the
//! state, so it is never older. The read side, paths and layers are [`super::state`].
//!
//! [`LAST_GOOD`]: super::state::LAST_GOOD

use std::path::Path;
use std::rc::Rc;

use super::model::State;
use super::state::{last_good_path, state_path, Source, QUEUE, SCHEMA, SHARED};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::json::{write_back, write_in_place, Shape, Splice};
use crate::layouts::StoreRef;
use crate::store::base::{Base, Src};
use crate::store::parsed;
use crate::store::Bytes;

/// What a state to write was read from: a document (its bytes, or one made in memory), or the
/// state file's bytes known by their digest alone (read as a stream, never held).
pub enum Origin {
    Source(Source),
    Known(parsed::Digest),
}

impl From<Source> for Origin {
    fn from(s: Source) -> Origin {
        Origin::Source(s)
    }
}

/// Writes `state` back over what it was read from (`origin`: key order and unknown fields
/// kept), validated first, and the same bytes to the copy of the latest state ([`LAST_GOOD`](super::state::LAST_GOOD))
/// just before it: the copy is never older than the state. `before` is the state `origin`
/// holds: with it, a change that keeps every task in its place is written in place
/// ([`write_in_place`]: only the changed tasks' bytes replaced), as a stream over the bytes as
/// read (the new file is never held whole). Over bytes known by their digest, the file itself
/// is that base, hashed as it is copied: one that is no longer those bytes is not written.
pub fn save(
    cx: &Ctx,
    store: &StoreRef,
    origin: impl Into<Origin>,
    before: Option<&State>,
    state: &mut State,
) -> Result<bool> {
    let (wrote, written) = write(cx, store, origin.into(), before, state)?;
    // What the file now holds is the state (a typed parse gives it back): the status a notice
    // records after the step is not a parse.
    written.remember(Rc::new(state.clone()));
    Ok(wrote)
}

/// [`save`] for a state the caller lets go of: it is what later reads of the file share (not
/// a copy).
pub fn save_owned(
    cx: &Ctx,
    store: &StoreRef,
    origin: impl Into<Origin>,
    before: Option<&State>,
    mut state: State,
) -> Result<Rc<State>> {
    let (_, written) = write(cx, store, origin.into(), before, &mut state)?;
    let state = Rc::new(state);
    written.remember(state.clone());
    Ok(state)
}

/// What a save left in the file: the digest of its bytes (not held: a later read hashes the
/// file to know them).
struct Written(parsed::Digest);

impl Written {
    /// Remembers that the file's bytes give `state`: a later read of them is not a parse.
    fn remember(self, state: Rc<State>) {
        parsed::remember_digest(SHARED, self.0, state);
    }
}

/// What [`save`] writes: whether the file changed, and what it now holds.
fn write(
    cx: &Ctx,
    store: &StoreRef,
    origin: Origin,
    before: Option<&State>,
    state: &mut State,
) -> Result<(bool, Written)> {
    let source = match origin {
        Origin::Source(source) => source,
        Origin::Known(digest) => {
            if let Some(before) = before {
                if let Some(written) = write_known(cx, store, digest, before, state)? {
                    return Ok(written);
                }
            }
            // Not in place: the whole document, from the bytes read again.
            Source::Bytes(bytes_again(cx, store, digest)?)
        }
    };
    let path = state_path(&store.root);
    let old = source.bytes().cloned();
    if let (Some(bytes), Some(before)) = (&old, before) {
        if let Some(splice) = in_place(&bytes[..], before, state)? {
            return write_spliced(cx, store, bytes, &splice);
        }
    }
    let mut doc = match source {
        Source::Value(v) => v,
        bytes => bytes.to_value().map_err(Error::BadInput)?,
    };
    write_back(&mut doc, &*state).map_err(|why| Error::SchemaInvalid {
        path: path.clone(),
        schema: SCHEMA,
        details: why,
    })?;
    let bytes = cx.store.checked_json(&path, SCHEMA, &doc)?;
    // The copy holds the state as read (when it does not, it is read for the undo).
    cx.store
        .replace_from(&last_good_path(&store.root), &bytes, old.as_ref())?;
    let wrote = cx.store.replace_from(&path, &bytes, old.as_ref())?;
    Ok((wrote, Written(parsed::Digest::of(&bytes))))
}

/// [`write`] in place over the state file known by `digest` (read as a stream, never held):
/// the file itself is the base of the splice, read where the splice needs it; the copy, then
/// the state, each written from it and the splice, every byte of it hashed on the way, and
/// refused (nothing written) when that is not `digest`. The old files are kept for the undo
/// by a second name, not read ([`crate::store::Store::replace_filled_kept`]). `None` when the
/// change cannot be written in place.
fn write_known(
    cx: &Ctx,
    store: &StoreRef,
    digest: parsed::Digest,
    before: &State,
    state: &mut State,
) -> Result<Option<(bool, Written)>> {
    let Some(mut base) = cx.store.base_of(&state_path(&store.root))? else {
        return Ok(None);
    };
    let Some(splice) = in_place(&mut base, before, state)? else {
        return Ok(None);
    };
    // Unchanged, or (a document whose members the head would reorder) not one pass over the
    // file: the whole write, from the bytes read again.
    if splice.is_whole_base(Src::len(&base)) || !splice.runs_in_order() {
        return Ok(None);
    }
    write_over_known(cx, &last_good_path(&store.root), &mut base, &splice, digest)?;
    let new = write_over_known(cx, &state_path(&store.root), &mut base, &splice, digest)?;
    Ok(Some((true, Written(new))))
}

/// Replaces `path` with `splice` over `base` (the state file known by `digest`), every byte of
/// the base hashed on the way: refused, nothing written, when that is not `digest`. The old
/// file is kept for the undo by a second name, not read. Returns the digest of what it wrote.
fn write_over_known(
    cx: &Ctx,
    path: &Path,
    base: &mut Base,
    splice: &Splice,
    digest: parsed::Digest,
) -> Result<parsed::Digest> {
    let mut new = parsed::Digester::default();
    let mut moved = false;
    let wrote = cx.store.replace_filled_kept(path, &mut |w| {
        new = parsed::Digester::default();
        let mut seen = parsed::Digester::default();
        splice.write_from(base, &mut seen, &mut |piece| {
            new.add(piece);
            w.write_all(piece)
        })?;
        moved = seen.finish() != digest;
        if moved {
            return Err(std::io::Error::other("the state changed"));
        }
        Ok(())
    });
    match wrote {
        Err(_) if moved => Err(changed(path)),
        Err(e) => Err(e),
        Ok(()) => Ok(new.finish()),
    }
}

/// Makes the copy of the latest state hold the state file's bytes, known by their digest (a
/// valid state written by someone else, the seed's skill or an edit, is kept too): written from
/// the file as it is read (never held), refused when the file is no longer those bytes.
pub fn refresh_copy_known(cx: &Ctx, store: &StoreRef, digest: parsed::Digest) -> Result<()> {
    let path = state_path(&store.root);
    let Some(mut base) = cx.store.base_of(&path)? else {
        return Err(changed(&path));
    };
    let whole = Splice::whole(Src::len(&base));
    write_over_known(cx, &last_good_path(&store.root), &mut base, &whole, digest).map(drop)
}

/// [`write`] of a state spliced over the bytes it was read from (`base`): the copy, then the
/// state, each written as a stream from the base and the splice; the state's bytes hashed on
/// the way. A splice that is its base is written as those bytes (nothing, where a file holds
/// them already).
fn write_spliced(
    cx: &Ctx,
    store: &StoreRef,
    base: &Bytes,
    splice: &Splice,
) -> Result<(bool, Written)> {
    if splice.is_base(base) {
        // The bytes as read, unchanged: written where a file does not hold them (`source` may
        // be the copy a rebuild starts from), compared as read where it does.
        cx.store
            .replace_from(&last_good_path(&store.root), base, Some(base))?;
        let wrote = cx
            .store
            .replace_from(&state_path(&store.root), base, Some(base))?;
        return Ok((wrote, Written(parsed::Digest::of(base))));
    }
    let digest = std::cell::RefCell::new(parsed::Digester::default());
    for (path, hashed) in [
        (last_good_path(&store.root), false),
        (state_path(&store.root), true),
    ] {
        cx.store.replace_filled_from(&path, Some(base), &mut |w| {
            *digest.borrow_mut() = parsed::Digester::default();
            splice.pieces(base).try_for_each(|piece| {
                if hashed {
                    digest.borrow_mut().add(piece);
                }
                w.write_all(piece)
            })
        })?;
    }
    let digest = digest.borrow().finish();
    Ok((true, Written(digest)))
}

/// The state written over `bytes` (which hold `before`) in place, when its tasks are the same
/// keys in the same order. A merge queue the change left alone keeps its bytes too: it grows
/// with the run (an entry per task merged) and is not read into a tree to be written back.
fn in_place(bytes: impl Src, before: &State, state: &mut State) -> Result<Option<Splice>> {
    if before.tasks.keys().ne(state.tasks.keys()) {
        return Ok(None);
    }
    let tasks = std::mem::take(&mut state.tasks);
    let queue = match &state.merge_queue {
        Some(q) if !q.is_empty() && state.merge_queue == before.merge_queue => {
            state.merge_queue.replace(Default::default())
        }
        _ => None,
    };
    let kept: &[&str] = if queue.is_some() { &[QUEUE] } else { &[] };
    let out = write_in_place(
        bytes,
        "tasks",
        &*state,
        before.tasks.values(),
        tasks.values(),
        Shape {
            schema: SCHEMA,
            last: &[],
            kept,
        },
    );
    state.tasks = tasks;
    if queue.is_some() {
        state.merge_queue = queue;
    }
    out
}

/// Whether the copy of the latest state holds exactly the state file's bytes, known by their
/// digest ([`read_shared`](super::state::read_shared)): the copy hashed as it is read.
pub fn copy_is_known(cx: &Ctx, store: &StoreRef, digest: parsed::Digest) -> bool {
    cx.store.holds(&last_good_path(&store.root), digest)
}

/// The state file's bytes again, to write the whole document over them: they must still be
/// those known by `digest` ([`read_shared`](super::state::read_shared)); a file changed meanwhile (by a writer that does
/// not take the lock) is refused, and nothing is written.
pub fn bytes_again(cx: &Ctx, store: &StoreRef, digest: parsed::Digest) -> Result<Bytes> {
    let path = state_path(&store.root);
    match cx.store.read(&path)? {
        Some(bytes) if parsed::Digest::of(&bytes) == digest => Ok(Bytes::new(bytes)),
        _ => Err(changed(&path)),
    }
}

/// The refusal of a write over a state file that is no longer the bytes the change was made
/// over.
fn changed(path: &Path) -> Error {
    Error::refused(
        "write",
        path,
        "the state changed while taskhook held its lock (a writer that does not take it); nothing was written: run the command again",
    )
}

#[cfg(test)]
mod tests {
    use super::super::state::testing::{project, seed};
    use super::super::state::{lock_path, read_shared, FILE};
    use super::*;
    use serde_json::{json, Value};

    /// A change to a state read as a stream is written over the file itself: the bytes the
    /// whole write makes, to the copy too, with no second name left behind. A file changed
    /// since is refused and left as it is; a failed operation puts the old files back.
    #[test]
    #[allow(clippy::disallowed_methods)] // The test's own files, made and changed directly.
    fn a_state_read_as_a_stream_is_written_over_its_file() {
        use super::super::model::TaskStatus;
        let text = crate::store::to_pretty(&seed());
        let p = project(&text);
        let (cx, store, path, root) = (&p.cx, &p.store, &p.path, &p.store.root);
        let (digest, state) = read_shared(cx, path).unwrap().ok().unwrap();
        assert!(!copy_is_known(cx, store, digest));
        std::fs::write(last_good_path(root), &text).unwrap();
        assert!(copy_is_known(cx, store, digest));
        assert_eq!(
            bytes_again(cx, store, digest).unwrap().as_slice(),
            &text[..]
        );

        let mut after = (*state).clone();
        let id = after.tasks.keys().next().unwrap().to_string();
        after.tasks.get_mut(&id).unwrap().status = Some(TaskStatus::Failed);
        let mut whole = seed();
        write_back(&mut whole, &after).unwrap();
        let whole = crate::store::to_pretty(&whole);
        let lock = lock_path(root);
        let kept_left = || {
            std::fs::read_dir(root)
                .unwrap()
                .filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .file_name()
                        .to_string_lossy()
                        .contains(".kept-")
                })
                .count()
        };
        // The change saved over the bytes first read, under the lock (then `and`).
        let save_then = |and: &dyn Fn() -> Result<()>| {
            cx.store.with_lock(&lock, || {
                let origin = Origin::Known(digest);
                save(cx, store, origin, Some(&state), &mut after.clone())?;
                and()
            })
        };
        // A failed operation: the old files back, nothing kept.
        let failed = save_then(&|| {
            assert_eq!(std::fs::read(path).unwrap(), whole);
            assert_eq!(kept_left(), 2, "the state and its copy kept");
            Err(Error::BadInput("a later step failed".into()))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read(path).unwrap(), text);
        assert_eq!(std::fs::read(last_good_path(root)).unwrap(), text);
        assert_eq!(kept_left(), 0);
        // A file changed since it was read: refused, left as it is.
        let mut edited = text.clone();
        edited.push(b'\n');
        std::fs::write(path, &edited).unwrap();
        let refused = save_then(&|| Ok(())).unwrap_err();
        assert!(matches!(refused, Error::Refused { .. }), "{refused}");
        assert_eq!(std::fs::read(path).unwrap(), edited);
        assert_eq!(std::fs::read(last_good_path(root)).unwrap(), text);
        // The file as read again: written in place, the copy with it, nothing kept.
        std::fs::write(path, &text).unwrap();
        save_then(&|| Ok(())).unwrap();
        assert_eq!(std::fs::read(path).unwrap(), whole);
        assert_eq!(std::fs::read(last_good_path(root)).unwrap(), whole);
        assert_eq!(kept_left(), 0);
        let (_, read) = read_shared(cx, path).unwrap().ok().unwrap();
        assert_eq!(read.task(&id).map(|t| t.status()), Some(TaskStatus::Failed));
        assert!(copy_is_known(cx, store, parsed::Digest::of(&whole)));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

        /// A state written in place is the state written back whole: byte for byte over a file
        /// taskhook wrote, the same document over one formatted otherwise; tasks changed in
        /// any mix (status, attempts, a field taskhook does not know, the status removed), the
        /// run's own fields too, the merge queue left alone (its bytes kept), changed or grown;
        /// tasks added, or a change the schema refuses: the whole write.
        #[test]
        fn a_state_written_in_place_is_the_whole_write(
            changes in proptest::collection::vec((0..3usize, 0..4u8), 0..5),
            head in proptest::prelude::any::<bool>(),
            add in proptest::prelude::any::<bool>(),
            queue in 0..3u8,
        ) {
            use super::super::model::{QueueEntry, TaskStatus};
            let doc = seed();
            let before: State = crate::layouts::json::typed(&doc).unwrap();
            let mut s = before.clone();
            let ids: Vec<String> = s.tasks.keys().map(str::to_string).collect();
            for (i, what) in changes {
                let t = s.tasks.get_mut(&ids[i]).unwrap();
                match what {
                    0 => t.status = Some(TaskStatus::Completed),
                    1 => t.attempts = Some(t.attempts.unwrap_or(0) + 1),
                    2 => { t.rest.insert("x-note".into(), json!({"k": [1, null]})); }
                    _ => t.status = None,
                }
            }
            if head {
                s.updated_at.set(Some("2026-11-26T09:00:00Z".to_string()));
                s.current_batch.set(Some(9));
            }
            if add {
                s.tasks.insert("L9-001".into(), Default::default());
            }
            // The merge queue left alone (its bytes kept), an entry changed, or one added.
            let q = s.merge_queue.get_or_insert_with(Default::default);
            match queue {
                0 => {}
                1 => q[0].priority += 5,
                _ => q.push(QueueEntry { task_id: "L2-001".into(), priority: 9, ..Default::default() }),
            }
            let mut whole = doc.clone();
            write_back(&mut whole, &s).unwrap();
            let pretty = crate::store::to_pretty(&doc);
            let got = in_place(&pretty[..], &before, &mut s).unwrap().map(|g| g.to_vec(&pretty));
            // The same over the file itself, read where needed, every byte of it seen.
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join(FILE);
            crate::store::fs::write_atomic(&file, &pretty, dir.path(), "t").unwrap();
            let st = crate::store::Store::new(crate::store::Clock::system(), std::time::Duration::from_secs(1));
            let mut base = st.base_of(&file).unwrap().unwrap();
            let by_file = in_place(&mut base, &before, &mut s).unwrap().map(|g| {
                proptest::prop_assert!(g.runs_in_order());
                let (mut out, mut seen) = (Vec::new(), parsed::Digester::default());
                g.write_from(&mut base, &mut seen, &mut |p| { out.extend_from_slice(p); Ok(()) }).unwrap();
                proptest::prop_assert_eq!(seen.finish(), parsed::Digest::of(&pretty));
                Ok(out)
            }).transpose()?;
            proptest::prop_assert_eq!(&by_file, &got);
            // A change the schema refuses (a task without its status) is left to the whole
            // write, which words the refusal.
            let valid = matches!(crate::store::schema::check(SCHEMA, &whole), Ok(Ok(())));
            proptest::prop_assert_eq!(got.is_none(), add || !valid);
            if let Some(got) = got {
                proptest::prop_assert_eq!(
                    String::from_utf8(got).unwrap(),
                    String::from_utf8(crate::store::to_pretty(&whole)).unwrap()
                );
                let compact = serde_json::to_vec(&doc).unwrap();
                let got = in_place(&compact[..], &before, &mut s).unwrap().unwrap().to_vec(&compact);
                proptest::prop_assert_eq!(serde_json::from_slice::<Value>(&got).unwrap(), whole);
            }
            // The model is whole again after the write.
            proptest::prop_assert_eq!(s.tasks.len(), ids.len() + usize::from(add));
        }
    }
}
