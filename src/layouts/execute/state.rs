//! One execute-state.json as taskhook reads it: the file's paths (state, `.bak`, lock), a
//! bounded, schema-checked read that never opens a special file (read whole beside the
//! document it came from, or as a stream and known by its digest alone), and the helpers every
//! other room uses over layers (which layer a task belongs to, layer order). How a state is
//! written back over what it was read from is [`super::save`].

use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::model::{Keyed, Metrics, QueueEntry, State, Task};
use crate::context::Ctx;
use crate::error::{Error, Result};
pub use crate::layouts::json::Source;
use crate::layouts::StoreRef;
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
pub(super) const SHARED: &str = "execute-state.json, typed";

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

/// The merge queue's member.
pub(super) const QUEUE: &str = "merge_queue";

/// Whether the state file still holds the bytes known by `digest` (hashed as it is read).
pub fn still_known(cx: &Ctx, store: &StoreRef, digest: parsed::Digest) -> bool {
    let path = state_path(&store.root);
    unreadable(cx, &path).is_none() && cx.store.holds(&path, digest)
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

/// What the tests of this room and of [`super::save`] start from: the seed's state, and a
/// project whose one store holds a state file.
#[cfg(test)]
pub(super) mod testing {
    use super::*;

    /// The seed's full example state.
    pub fn seed() -> serde_json::Value {
        let text = include_str!(
            "../../../tests/fixtures/schemas/execute-state/valid/seed-full-example.json"
        );
        serde_json::from_str(text).unwrap()
    }

    /// A trusted project in a temp directory, its store `shop` holding a state file.
    pub struct Project {
        pub cx: Ctx,
        pub store: StoreRef,
        pub path: PathBuf,
        _tmp: tempfile::TempDir,
    }

    /// The project, its state file holding `text`.
    #[allow(clippy::disallowed_methods)] // The test's own files, made directly.
    pub fn project(text: &[u8]) -> Project {
        let tmp = tempfile::tempdir().unwrap();
        let proj = tmp.path().join("proj");
        let root = proj.join("docs/tasks/shop");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(proj.join(".git")).unwrap();
        let path = state_path(&root);
        std::fs::write(&path, text).unwrap();
        let cx = crate::context::testing(tmp.path(), &proj);
        let store = StoreRef::new("execute", "shop", root, &proj);
        Project {
            cx,
            store,
            path,
            _tmp: tmp,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{project, seed};
    use super::*;
    use serde_json::{json, Value};

    /// A state read as a stream is known by its digest, not its bytes: a second read of the
    /// same bytes finds it without a parse. What only the whole reading takes (a task given
    /// twice: the last one holds) is read whole after the stream refuses it; what neither
    /// takes is worded by the whole reading.
    #[test]
    #[allow(clippy::disallowed_methods)] // The test's own file, changed directly.
    fn a_state_read_as_a_stream_is_known_by_its_digest() {
        use super::super::model::TaskStatus;
        let p = project(&crate::store::to_pretty(&seed()));
        let (digest, peek) = read_shared(&p.cx, &p.path).unwrap().ok().unwrap();
        assert!(parsed::latest::<State>(SHARED).is_none(), "bytes not held");
        let (again, state) = read_shared(&p.cx, &p.path).unwrap().ok().unwrap();
        assert!(
            again == digest && Rc::ptr_eq(&peek, &state),
            "not parsed again"
        );
        assert!(still_known(&p.cx, &p.store, digest));
        std::fs::write(&p.path, TWICE).unwrap();
        assert!(!still_known(&p.cx, &p.store, digest));
        let (_, twice) = read_shared(&p.cx, &p.path).unwrap().ok().unwrap();
        assert_eq!(
            twice.task("A").map(|t| t.status()),
            Some(TaskStatus::Failed)
        );
        std::fs::write(&p.path, b"{\"tasks\": 1}").unwrap();
        assert!(matches!(
            read_shared(&p.cx, &p.path).unwrap(),
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
