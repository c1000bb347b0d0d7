//! One execute-state.json as taskhook reads it: the file's paths (state, `.bak`, lock), a
//! bounded, schema-checked read that never opens a special file, and the helpers every other
//! room uses over layers (which layer a task belongs to, layer order). A state is read as its
//! typed model ([`super::model`]) beside the document it came from, and written back over that
//! document, so fields taskhook does not know and the file's key order survive every rewrite.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::model::{Keyed, Metrics, QueueEntry, State, Task};
use crate::context::Ctx;
use crate::error::{Error, Result};
pub use crate::layouts::json::Source;
use crate::layouts::json::{write_back, write_in_place, Shape, Splice};
use crate::layouts::StoreRef;
use crate::store::base::{Base, Src};
use crate::store::strict::Records;
use crate::store::Bytes;
use crate::store::{fs, lock_path_for, parsed};

/// The schema of execute-state.json.
pub const SCHEMA: &str = "execute-state";
/// The state file's name (seed 001: `{tasks_path}/execute-state.json`).
pub const FILE: &str = "execute-state.json";
/// The seed's "backup before reset" copy (`reset-task`, `reset --all`): the state before the
/// last reset, never what a corrupt state is rebuilt from.
pub const BAK: &str = "execute-state.json.bak";
/// taskhook's copy of the latest valid state it wrote or saw, byte for byte: what a corrupt
/// state is rebuilt from.
pub const LAST_GOOD: &str = ".execute-state.json.last-good";
/// Largest state file read: the cap of every JSON state file (a run of 100,000 tasks in the
/// seed's shape is about 30 MB).
pub const MAX_STATE_BYTES: usize = crate::store::limits::MAX_STATE_BYTES as usize;
/// Attempts before a task is abandoned (seed 001).
pub const MAX_ATTEMPTS: u64 = 5;

/// The state file of a store.
pub fn state_path(root: &Path) -> PathBuf {
    root.join(FILE)
}

/// The backup beside it.
pub fn bak_path(root: &Path) -> PathBuf {
    root.join(BAK)
}

/// The copy of the latest valid state beside it.
pub fn last_good_path(root: &Path) -> PathBuf {
    root.join(LAST_GOOD)
}

/// The sidecar lock every write of the store takes.
pub fn lock_path(root: &Path) -> PathBuf {
    lock_path_for(&state_path(root))
}

/// A state file as read: what it was read from (its checked bytes, for the write back: key
/// order and the fields taskhook does not know) and its typed model.
#[derive(Debug, Clone)]
pub struct Doc {
    pub source: Source,
    pub state: State,
}

/// A state file as found.
#[derive(Debug, Clone)]
pub enum Read {
    Missing,
    Valid(Box<Doc>),
    /// Present but unusable: why, in one line.
    Invalid(String),
    /// Over [`MAX_STATE_BYTES`] (its size): never read, rebuilt or moved aside, only refused.
    TooBig(u64),
}

/// Reads a state (or copy) file: capped, never a FIFO or device, parsed, schema-checked and
/// typed, its bytes held ([`Doc::source`]: a command that writes the document back whole).
pub fn read(cx: &Ctx, path: &Path) -> Result<Read> {
    Ok(match read_doc(cx, path)? {
        Ok(doc) => Read::Valid(Box::new(doc)),
        Err(unread) => unread.into(),
    })
}

/// [`read`]: the document, or why there is none.
fn read_doc(cx: &Ctx, path: &Path) -> Result<std::result::Result<Doc, Unread>> {
    if let Some(unread) = unreadable(cx, path) {
        return Ok(Err(unread));
    }
    let Some(bytes) = cx.store.read(path)? else {
        return Ok(Err(Unread::Missing));
    };
    let digest = parsed::Digest::of(&bytes);
    let state = match parsed::latest_digest::<State>(SHARED).filter(|(d, _)| *d == digest) {
        // Read before in this invocation: copied (its tasks shared), not parsed again.
        Some((_, state)) => state,
        None => match state_of(&bytes)? {
            Ok(state) => {
                let state = Rc::new(state);
                parsed::remember_digest(SHARED, digest, state.clone());
                state
            }
            Err(why) => return Ok(Err(Unread::Invalid(why))),
        },
    };
    Ok(Ok(Doc {
        source: Source::Bytes(Bytes::new(bytes)),
        state: (*state).clone(),
    }))
}

/// A state file as the invocation's reads share it: the digest of its bytes (which are not
/// held) and the state they hold.
pub type Shared = (parsed::Digest, Rc<State>);

/// The state of a file, shared with the invocation's other reads of the same bytes, read as a
/// stream (issue 23): the file's bytes are never held beside the tasks they give, only hashed
/// as they pass ([`crate::store::Store::read_hashed`]). A later read of the same bytes (the
/// step's peek and its locked re-read) hashes the file and finds the state without a parse. A
/// file the streamed reading refuses is read again whole, and that reading words why.
pub fn read_shared(cx: &Ctx, path: &Path) -> Result<std::result::Result<Shared, Unread>> {
    if let Some(unread) = unreadable(cx, path) {
        return Ok(Err(unread));
    }
    if let Some(known) = cx.store.still_written::<State>(SHARED, path) {
        return Ok(Ok(known));
    }
    let Some((digest, typed)) = cx.store.read_hashed(path, state_from)? else {
        return Ok(Err(Unread::Missing));
    };
    if let Some(state) = typed? {
        let state = Rc::new(state);
        parsed::remember_digest(SHARED, digest, state.clone());
        return Ok(Ok((digest, state)));
    }
    Ok(match read_doc(cx, path)? {
        // Valid after all: a document only the whole reading takes (a task given twice: the
        // last one holds), or one a writer replaced in between.
        Ok(_) => cx
            .store
            .still_written::<State>(SHARED, path)
            .ok_or_else(|| Unread::Invalid("it changed while taskhook read it".into())),
        Err(unread) => Err(unread),
    })
}

/// What the file is when it is not to be read (a special file, over the cap).
fn unreadable(cx: &Ctx, path: &Path) -> Option<Unread> {
    if fs::exists(path) && !fs::is_file(path) {
        return Some(Unread::Invalid("it is not a regular file".into()));
    }
    let n = cx.store.len(path).filter(|n| *n > MAX_STATE_BYTES as u64)?;
    Some(Unread::TooBig(n))
}

/// A state file that gave no state: the [`Read`]s other than a valid one.
pub enum Unread {
    Missing,
    Invalid(String),
    TooBig(u64),
}

impl From<Unread> for Read {
    fn from(u: Unread) -> Read {
        match u {
            Unread::Missing => Read::Missing,
            Unread::Invalid(why) => Read::Invalid(why),
            Unread::TooBig(n) => Read::TooBig(n),
        }
    }
}

/// The bytes parsed, schema-checked and typed, or why they are unusable.
fn state_of(bytes: &[u8]) -> Result<std::result::Result<State, String>> {
    // Task by task, each straight into its type (no tree, no schema check per task:
    // `reading`); the whole reading words a refusal.
    crate::store::entries::read_strict(bytes, SCHEMA, "tasks", add_task, queue(), fill)
}

/// A file read as a stream, parsed, schema-checked and typed as [`state_of`] reads bytes;
/// `None` when anything is refused.
fn state_from(stream: crate::store::Stream<'_>) -> Result<Option<State>> {
    crate::store::entries::read_strict_stream(stream, SCHEMA, "tasks", add_task, queue(), fill)
}

/// A task read, under its id: one given twice is refused here (the whole reading then decides).
fn add_task(tasks: &mut Keyed<Task>, id: Option<String>, t: Task) -> bool {
    id.is_some_and(|id| tasks.add(id, t))
}

/// The merge queue (an entry per task merged), read straight into its type too.
fn queue() -> Records<QueueEntry> {
    Records::new(QUEUE)
}

/// The tasks and the queue put into the rest of the state.
fn fill(state: &mut State, tasks: Keyed<Task>, _: bool, queue: Records<QueueEntry>) {
    state.tasks = tasks;
    if let Some(q) = queue.items {
        state.merge_queue = Some(q.into());
    }
}

/// What [`shared`] remembers: the typed state of the last bytes read or written.
const SHARED: &str = "execute-state.json, typed";

/// A valid state for a reader that only looks (which units a store has, a task's status):
/// `None` when it is missing or cannot be used ([`read`] says why). The same bytes read again
/// in this invocation (the step's peek and its locked re-read) are not parsed again.
pub fn shared(cx: &Ctx, path: &Path) -> Result<Option<Rc<State>>> {
    Ok(read_shared(cx, path)?.ok().map(|(_, state)| state))
}

/// The refusal for a corrupt state (CONTRACT §3), naming the fixes.
pub fn corrupt(store: &StoreRef, details: String) -> Error {
    Error::Corrupt {
        path: state_path(&store.root),
        store: store.root.display().to_string(),
        details,
    }
}

/// The refusal of a state over [`MAX_STATE_BYTES`]: taskhook reads none of it, and neither
/// rebuilds it nor moves it aside (it may be a real run's state).
pub fn too_big(store: &StoreRef, bytes: u64) -> Error {
    Error::refused(
        "read",
        state_path(&store.root),
        format!(
            "it is {bytes} bytes, over taskhook's {} cap for an execute state; taskhook leaves it untouched and skips this run until it is smaller (shrink it, e.g. its long `errors` details, or restore a smaller copy)",
            fs::human(MAX_STATE_BYTES as u64)
        ),
    )
}

/// The valid state of a store; a corrupt one is refused, a missing one is not found.
pub fn load(cx: &Ctx, store: &StoreRef) -> Result<Doc> {
    let found = read_doc(cx, &state_path(&store.root))?;
    found.map_err(|unread| unloaded(store, unread))
}

/// [`load`]: the state, shared with the invocation's other reads of its bytes (not copied),
/// and their digest (the bytes are not held).
pub fn load_shared(cx: &Ctx, store: &StoreRef) -> Result<Shared> {
    let found = read_shared(cx, &state_path(&store.root))?;
    found.map_err(|unread| unloaded(store, unread))
}

/// Why a store's state could not be loaded.
fn unloaded(store: &StoreRef, unread: Unread) -> Error {
    match unread {
        Unread::Missing => Error::NotFound(format!(
            "`{}` does not exist (create it with `taskhook execute init`)",
            state_path(&store.root).display()
        )),
        Unread::Invalid(why) => corrupt(store, why),
        Unread::TooBig(n) => too_big(store, n),
    }
}

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
/// kept), validated first, and the same bytes to the copy of the latest state ([`LAST_GOOD`])
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

/// The merge queue's member.
const QUEUE: &str = "merge_queue";

/// Whether the state file still holds the bytes known by `digest` (hashed as it is read).
pub fn still_known(cx: &Ctx, store: &StoreRef, digest: parsed::Digest) -> bool {
    let path = state_path(&store.root);
    unreadable(cx, &path).is_none() && cx.store.holds(&path, digest)
}

/// Whether the copy of the latest state holds exactly the state file's bytes, known by their
/// digest ([`read_shared`]): the copy hashed as it is read.
pub fn copy_is_known(cx: &Ctx, store: &StoreRef, digest: parsed::Digest) -> bool {
    cx.store.holds(&last_good_path(&store.root), digest)
}

/// The state file's bytes again, to write the whole document over them: they must still be
/// those known by `digest` ([`read_shared`]); a file changed meanwhile (by a writer that does
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

/// The seed's own temp file (`execute-state.json.tmp`, its "Atomic Updates" step 1).
pub const SEED_TEMP: &str = "execute-state.json.tmp";

/// What to say about the seed's own temp file left beside the state (a write by the seed's
/// skill that never reached its rename): what it holds, and that taskhook leaves it (it may be
/// the newest state); `None` when there is none.
pub fn seed_temp_note(cx: &Ctx, store: &StoreRef, state_updated: Option<&str>) -> Option<String> {
    let path = store.root.join(SEED_TEMP);
    if !fs::exists(&path) {
        return None;
    }
    let size = cx
        .store
        .len(&path)
        .map(|n| format!("{n} bytes, "))
        .unwrap_or_default();
    let what = match read(cx, &path) {
        Ok(Read::Valid(d)) => format!(
            "a valid state updated {}; the state's is {}",
            d.state
                .updated_at
                .as_deref()
                .unwrap_or("at an unknown time"),
            state_updated.unwrap_or("unknown")
        ),
        Ok(Read::Invalid(why)) => format!("not a valid state: {why}"),
        Ok(Read::TooBig(_)) => format!("over the {} cap", fs::human(MAX_STATE_BYTES as u64)),
        Ok(Read::Missing) => return None,
        Err(e) => format!("not readable: {}", e.one_line()),
    };
    Some(format!(
        "{SEED_TEMP} is left beside the state ({size}{what}): the seed's own write that never reached its rename. taskhook leaves it: if it is the state you want, `mv` it over {FILE}; otherwise remove it"
    ))
}

/// Whether two states differ in more than the clock (`updated_at`, elapsed seconds). Compared
/// in place: no copy of either state.
pub fn differs(a: &State, b: &State) -> bool {
    let State {
        worktree_dir,
        status,
        current_layer,
        current_batch,
        started_at,
        updated_at: _,
        completed_at,
        layers,
        tasks,
        merge_queue,
        metrics,
        stop,
        rest,
    } = a;
    let same_metrics = match (metrics, &b.metrics) {
        (Some(x), Some(y)) => {
            let Metrics {
                total_tasks,
                completed_tasks,
                failed_tasks,
                total_attempts,
                total_commits,
                elapsed_time_seconds: _,
                rest,
            } = x;
            *total_tasks == y.total_tasks
                && *completed_tasks == y.completed_tasks
                && *failed_tasks == y.failed_tasks
                && *total_attempts == y.total_attempts
                && *total_commits == y.total_commits
                && *rest == y.rest
        }
        (x, y) => x == y,
    };
    !(same_metrics
        && *worktree_dir == b.worktree_dir
        && *status == b.status
        && *current_layer == b.current_layer
        && *current_batch == b.current_batch
        && *started_at == b.started_at
        && *completed_at == b.completed_at
        && *layers == b.layers
        && *tasks == b.tasks
        && *merge_queue == b.merge_queue
        && *stop == b.stop
        && *rest == b.rest)
}

// ---- layers ------------------------------------------------------------------------------

/// The leading number of a layer key (`2-backend` → 2) or of a task id (`L2-003` → 2).
pub(super) fn leading_number(s: &str) -> Option<u64> {
    s[..s.bytes().take_while(u8::is_ascii_digit).count()]
        .parse()
        .ok()
}

/// The layer number a seed-style task id names (`L2-003` → 2).
pub(super) fn id_layer_number(id: &str) -> Option<u64> {
    let rest = id.strip_prefix('L')?;
    let n = leading_number(rest)?;
    let after = &rest[rest.chars().take_while(char::is_ascii_digit).count()..];
    (after.is_empty() || after.starts_with('-')).then_some(n)
}

/// The layer keys in execution order: by their leading number when every key has one (the
/// seed's `0-setup`, `1-foundation`, …), else as the file lists them.
pub fn layer_order(state: &State) -> Vec<String> {
    let mut keys: Vec<String> = state
        .layers
        .as_ref()
        .map(|m| m.keys().map(str::to_string).collect())
        .unwrap_or_default();
    if keys.iter().all(|k| leading_number(k).is_some()) {
        keys.sort_by_key(|k| leading_number(k).unwrap_or(0));
    }
    keys
}

/// The layer a task belongs to: its `layer` field when it names a layer, else the layer whose
/// number its seed-style id carries (`L2-003` → `2-backend`).
pub fn layer_of(state: &State, id: &str) -> Option<String> {
    let layers = state.layers.as_ref()?;
    if let Some(l) = state
        .task(id)
        .and_then(|t| t.layer.as_deref())
        .filter(|l| layers.contains_key(l))
    {
        return Some(l.to_string());
    }
    let n = id_layer_number(id)?;
    layers
        .keys()
        .find(|k| leading_number(k) == Some(n))
        .map(str::to_string)
}

/// The layer among `layers` a seed-style task id falls into by its number alone.
pub fn layer_by_convention(layers: &[String], id: &str) -> Option<String> {
    let n = id_layer_number(id)?;
    layers
        .iter()
        .find(|k| leading_number(k) == Some(n))
        .cloned()
}

/// The tasks of a layer, in the file's order.
pub fn layer_tasks(state: &State, layer: &str) -> Vec<String> {
    state
        .tasks
        .keys()
        .filter(|id| layer_of(state, id).as_deref() == Some(layer))
        .map(str::to_string)
        .collect()
}

/// Whether `text` names task `id` as a word (`L2-003` in `feat(L2-003): x` or
/// `worktree-L2-003`, not in `L2-0031`).
pub fn mentions(text: &str, id: &str) -> bool {
    if id.is_empty() {
        return false;
    }
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(i) = text[from..].find(id) {
        let at = from + i;
        let before = text[..at].chars().next_back();
        let rest = &text[at + id.len()..];
        let mut after = rest.chars();
        let next = after.next();
        let continues_id = next == Some('-') && after.next().is_some_and(|c| c.is_ascii_digit());
        if !before.is_some_and(word) && !next.is_some_and(word) && !continues_id {
            return true;
        }
        from = at + id.len();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn seed() -> Value {
        let text = include_str!(
            "../../../tests/fixtures/schemas/execute-state/valid/seed-full-example.json"
        );
        serde_json::from_str(text).unwrap()
    }

    /// A state read as a stream is known by its digest, not its bytes (a second read finds it
    /// without a parse), and a change to it is written over the file itself: the bytes the
    /// whole write makes, to the copy too, with no second name left behind. A file changed
    /// since is refused and left as it is; a failed operation puts the old file back.
    #[test]
    #[allow(clippy::disallowed_methods)] // The test's own files, made and changed directly.
    fn a_state_read_as_a_stream_is_written_over_its_file() {
        use super::super::model::TaskStatus;
        let tmp = tempfile::tempdir().unwrap();
        let proj = tmp.path().join("proj");
        let root = proj.join("docs/tasks/shop");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(proj.join(".git")).unwrap();
        let path = state_path(&root);
        let text = crate::store::to_pretty(&seed());
        std::fs::write(&path, &text).unwrap();
        let cx = Ctx::new(
            crate::env::Env::default(),
            None,
            Some(tmp.path().join("home")),
            proj.clone(),
            false,
        )
        .unwrap();
        let store = StoreRef::new("execute", "shop", root.clone(), &proj);
        cx.store.trust(&proj, false);
        let (digest, peek) = read_shared(&cx, &path).unwrap().ok().unwrap();
        assert!(parsed::latest::<State>(SHARED).is_none(), "bytes not held");
        let (again, state) = read_shared(&cx, &path).unwrap().ok().unwrap();
        assert!(
            again == digest && Rc::ptr_eq(&peek, &state),
            "not parsed again"
        );
        assert!(!copy_is_known(&cx, &store, digest));
        std::fs::write(last_good_path(&root), &text).unwrap();
        assert!(copy_is_known(&cx, &store, digest));
        assert_eq!(
            bytes_again(&cx, &store, digest).unwrap().as_slice(),
            &text[..]
        );

        let mut after = (*state).clone();
        let id = after.tasks.keys().next().unwrap().to_string();
        after.tasks.get_mut(&id).unwrap().status = Some(TaskStatus::Failed);
        let mut whole = seed();
        write_back(&mut whole, &after).unwrap();
        let whole = crate::store::to_pretty(&whole);
        let lock = lock_path(&root);
        let kept_left = || {
            std::fs::read_dir(&root)
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
                save(&cx, &store, origin, Some(&state), &mut after.clone())?;
                and()
            })
        };
        // A failed operation: the old files back, nothing kept.
        let failed = save_then(&|| {
            assert_eq!(std::fs::read(&path).unwrap(), whole);
            assert_eq!(kept_left(), 2, "the state and its copy kept");
            Err(Error::BadInput("a later step failed".into()))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), text);
        assert_eq!(std::fs::read(last_good_path(&root)).unwrap(), text);
        assert_eq!(kept_left(), 0);
        // A file changed since it was read: refused, left as it is.
        let mut edited = text.clone();
        edited.push(b'\n');
        std::fs::write(&path, &edited).unwrap();
        let refused = save_then(&|| Ok(())).unwrap_err();
        assert!(matches!(refused, Error::Refused { .. }), "{refused}");
        assert_eq!(std::fs::read(&path).unwrap(), edited);
        assert_eq!(std::fs::read(last_good_path(&root)).unwrap(), text);
        // The file as read again: written in place, the copy with it, nothing kept.
        std::fs::write(&path, &text).unwrap();
        save_then(&|| Ok(())).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), whole);
        assert_eq!(std::fs::read(last_good_path(&root)).unwrap(), whole);
        assert_eq!(kept_left(), 0);
        let (_, read) = read_shared(&cx, &path).unwrap().ok().unwrap();
        assert_eq!(read.task(&id).map(|t| t.status()), Some(TaskStatus::Failed));
        assert!(copy_is_known(&cx, &store, parsed::Digest::of(&whole)));
        // What only the whole reading takes (a task given twice: the last one holds) is read
        // whole after the stream refuses it; what neither takes is worded by the whole reading.
        std::fs::write(&path, TWICE).unwrap();
        let (_, twice) = read_shared(&cx, &path).unwrap().ok().unwrap();
        assert_eq!(
            twice.task("A").map(|t| t.status()),
            Some(TaskStatus::Failed)
        );
        std::fs::write(&path, b"{\"tasks\": 1}").unwrap();
        assert!(matches!(
            read_shared(&cx, &path).unwrap(),
            Err(Unread::Invalid(_))
        ));
    }

    /// A state whose task A is given twice.
    const TWICE: &[u8] = br#"{"schema_version": "2.0", "status": "pending", "tasks": {"A": {"status": "pending"}, "B": {"status": "pending"}, "A": {"status": "failed"}}}"#;

    /// A task given twice is read as the whole document reads it: the last value, in the
    /// first one's place.
    #[test]
    fn a_task_given_twice_is_read_as_the_whole_document() {
        assert_eq!(
            streamed(TWICE),
            None,
            "the stream leaves it to the whole reading"
        );
        let state = state_of(TWICE).unwrap().unwrap();
        assert_eq!(state.tasks.keys().collect::<Vec<_>>(), ["A", "B"]);
        assert_eq!(
            state.task("A").map(|t| t.status()),
            Some(super::super::model::TaskStatus::Failed)
        );
    }

    /// The state read as a stream, entry by entry ([`state_from`]).
    fn streamed(bytes: &[u8]) -> Option<State> {
        let mut r = bytes;
        let r: &mut dyn std::io::Read = &mut r;
        state_from(std::io::BufReader::with_capacity(7, r)).unwrap()
    }

    /// Every fixture, valid or not, pretty or compact, reads as a stream as it reads whole.
    #[test]
    #[allow(clippy::disallowed_methods)] // The repository's own fixtures, read directly.
    fn the_fixtures_read_as_a_stream_as_they_read_whole() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/schemas/execute-state");
        let mut seen = 0;
        for kind in ["valid", "invalid"] {
            for e in std::fs::read_dir(dir.join(kind)).unwrap() {
                let doc: Value =
                    serde_json::from_slice(&std::fs::read(e.unwrap().path()).unwrap()).unwrap();
                for bytes in [
                    crate::store::to_pretty(&doc),
                    serde_json::to_vec(&doc).unwrap(),
                ] {
                    let whole = state_of(&bytes).unwrap().ok();
                    assert_eq!(
                        streamed(&bytes),
                        whole,
                        "{}",
                        String::from_utf8_lossy(&bytes)
                    );
                    assert_eq!(whole.is_some(), kind == "valid");
                    seen += 1;
                }
            }
        }
        assert!(seen >= 20);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// A state read as a stream, entry by entry, is the state read whole: whatever the
        /// stream reading takes, the whole reading takes and gives the same state, and it takes
        /// every document the whole reading takes that keeps the layout taskhook writes. The
        /// documents: the seed's, pretty or compact, with edits at random places (bytes
        /// inserted, removed, replaced or put after the end, each one of JSON's own: brackets,
        /// quotes, escapes, digits, commas, spaces, letters).
        #[test]
        fn a_state_read_as_a_stream_is_the_state_read_whole(
            compact in proptest::prelude::any::<bool>(),
            edits in proptest::collection::vec((0.0..=1.0f64, 0..4u8, 0..20usize), 0..4),
        ) {
            let doc = seed();
            let mut bytes = if compact { serde_json::to_vec(&doc).unwrap() } else { crate::store::to_pretty(&doc) };
            let unedited = edits.is_empty();
            const SET: &[u8] = b"{}[],:\"\\ \n0-9.eatrufnlsL";
            for (at, what, c) in edits {
                let i = ((bytes.len() as f64) * at) as usize;
                let c = SET[c % SET.len()];
                match what {
                    0 => bytes.insert(i.min(bytes.len()), c),
                    1 if i < bytes.len() => { bytes.remove(i); }
                    2 if i < bytes.len() => bytes[i] = c,
                    _ => bytes.push(c),
                }
            }
            let whole = state_of(&bytes).unwrap().ok();
            let stream = streamed(&bytes);
            if let Some(s) = &stream {
                proptest::prop_assert_eq!(Some(s), whole.as_ref());
            }
            if unedited {
                proptest::prop_assert!(stream.is_some());
            }
        }
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

    #[test]
    fn layers_by_field_or_convention() {
        let s: State = crate::layouts::json::typed(
            &json!({"layers": {"1-foundation": {}, "0-setup": {}, "2-backend": {}},
            "tasks": {"L2-001": {}, "X": {"layer": "0-setup"}, "Y": {}, "L20-1": {}}}),
        )
        .unwrap();
        assert_eq!(layer_order(&s), ["0-setup", "1-foundation", "2-backend"]);
        assert_eq!(layer_of(&s, "L2-001").as_deref(), Some("2-backend"));
        assert_eq!(layer_of(&s, "X").as_deref(), Some("0-setup"));
        assert_eq!(layer_of(&s, "Y"), None);
        assert_eq!(layer_of(&s, "L20-1"), None);
        let named: State =
            crate::layouts::json::typed(&json!({"layers": {"b": {}, "a": {}}})).unwrap();
        assert_eq!(layer_order(&named), ["b", "a"]);
    }

    #[test]
    fn mentions_are_words() {
        assert!(mentions("feat(L2-003): parser", "L2-003"));
        assert!(mentions("Merge branch 'worktree-L2-003'", "L2-003"));
        assert!(!mentions("L2-0031 done", "L2-003"));
        assert!(!mentions("XL2-003", "L2-003"));
        assert!(!mentions("L2-003-2 split", "L2-003"));
        assert!(mentions("L2-003-fix and more", "L2-003"));
    }
}
