//! The durable primitives, proven at library level and across processes: atomic replace under
//! SIGKILL, no lost updates under contention, bounded lock waits, checkpoints, corrupt files.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use taskhook::error::Error;
use taskhook::store::checkpoint::Ring;
use taskhook::store::{self, lock_path_for, schema, Clock, Loaded, Store};

/// A store trusting the temp folder every test here works in. Its lock wait is long: eight
/// processes polling one lock on a loaded machine can starve one of them past 10 s, and what
/// these tests prove is that no update is lost (bounded waits are proven on their own).
fn store() -> Store {
    trusting(Store::new(Clock::system(), Duration::from_secs(120)))
}

fn trusting(s: Store) -> Store {
    s.trust(&std::env::temp_dir(), false);
    s
}

/// A claude-tasks document whose bytes are a function of `n` (sizes vary, to expose torn writes).
fn render(n: u64) -> Vec<u8> {
    store::to_pretty(&doc(n))
}

fn doc(n: u64) -> Value {
    json!({
        "tasks": [
            {"id": "counter", "description": format!("n={n}"), "status": "pending",
             "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"},
            {"id": "pad", "description": "x".repeat((n % 7919) as usize), "status": "pending",
             "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}
        ],
        "version": 2,
        "last_updated": "2026-01-01T00:00:00Z"
    })
}

fn counter_of(v: &Value) -> u64 {
    v["tasks"][0]["description"].as_str().unwrap()[2..]
        .parse()
        .unwrap()
}

/// One locked read-modify-write increment through `Store`, logging to an append-only file.
/// Each is one invocation, with its own lock deadline (a store's locks share one otherwise).
fn increment(s: &Store, state: &Path, log: &Path) -> u64 {
    s.begin_invocation();
    s.with_lock(&lock_path_for(state), || {
        let n = match s.load_json(state, "claude-tasks")? {
            Loaded::Valid(v) => counter_of(&v),
            Loaded::Missing => 0,
            Loaded::Invalid(why) => panic!("state went bad: {why}"),
        };
        s.replace_json(state, "claude-tasks", &doc(n + 1))?;
        s.append(log, format!("entry {}\n", n + 1).as_bytes())?;
        Ok(n + 1)
    })
    .unwrap()
}

fn child(test: &str, dir: &Path) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "--exact",
        test,
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("TASKHOOK_TEST_CHILD_DIR", dir)
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    c
}

fn child_dir() -> Option<PathBuf> {
    std::env::var_os("TASKHOOK_TEST_CHILD_DIR").map(PathBuf::from)
}

/// Child process of [`crash_safety_under_sigkill`]: rewrites the state file forever.
#[test]
#[ignore = "child process of crash_safety_under_sigkill"]
fn crash_child() {
    let Some(dir) = child_dir() else { return };
    let s = store();
    loop {
        increment(&s, &dir.join("tasks.json"), &dir.join("log.md"));
    }
}

#[test]
fn crash_safety_under_sigkill() {
    const KILLS: u64 = 200;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let state = dir.join("tasks.json");
    let log = dir.join("log.md");
    let mut last_n = 0;
    let mut last_log = Vec::new();
    let mut advanced = 0;
    for i in 0..KILLS {
        let mut c = child("store::crash_child", dir).spawn().unwrap();
        // Wait until the child is writing (its log grew), then kill it at a varied moment
        // (0 to 6 ms later) so every kill lands inside the rewrite loop.
        let len = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let start_len = len(&log);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while len(&log) == start_len && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_micros(200));
        }
        std::thread::sleep(Duration::from_micros((i * 7919) % 6000));
        c.kill().unwrap(); // SIGKILL
        c.wait().unwrap();
        let Some(bytes) = std::fs::read(&state).ok() else {
            assert_eq!(last_n, 0, "state file vanished after kill {i}");
            continue;
        };
        let v: Value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("kill {i}: state does not parse: {e}"));
        assert_eq!(
            schema::check("claude-tasks", &v).unwrap(),
            Ok(()),
            "kill {i}"
        );
        let n = counter_of(&v);
        assert_eq!(bytes, render(n), "kill {i}: content is not a whole version");
        assert!(n >= last_n, "kill {i}: went back from {last_n} to {n}");
        if n > last_n {
            advanced += 1;
        }
        last_n = n;
        let log_now = std::fs::read(&log).unwrap_or_default();
        assert!(
            log_now.starts_with(&last_log),
            "kill {i}: log was rewritten"
        );
        // Every entry is whole and in order, and none is ahead of the state (a kill between the
        // state write and the append skips that entry; the log never claims a lost write).
        let entries = String::from_utf8(log_now.clone()).unwrap();
        assert!(
            entries.is_empty() || entries.ends_with('\n'),
            "kill {i}: torn entry"
        );
        let numbers: Vec<u64> = entries
            .lines()
            .map(|l| l.strip_prefix("entry ").unwrap().parse().unwrap())
            .collect();
        assert!(
            numbers.windows(2).all(|w| w[0] < w[1]),
            "kill {i}: log out of order"
        );
        let last = numbers.last().copied().unwrap_or(0);
        assert!(last <= n, "kill {i}: last log entry {last}, state {n}");
        last_log = log_now;
    }
    assert_eq!(
        advanced, KILLS,
        "some kills did not land inside the write loop"
    );
    eprintln!("crash test: {KILLS} kills, final counter {last_n}");
    // Kills leave stray temp files behind; clean-up removes exactly those.
    let removed = store()
        .clean_stale_temps(dir, &store::temp_prefix(&state), Duration::ZERO)
        .unwrap();
    let left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let mut left_sorted = left.clone();
    left_sorted.sort();
    assert_eq!(
        left_sorted,
        [".tasks.json.lock", "log.md", "tasks.json"],
        "removed {}",
        removed.len()
    );
}

/// Child process of [`no_lost_updates`]: 100 increments.
#[test]
#[ignore = "child process of no_lost_updates"]
fn increment_child() {
    let Some(dir) = child_dir() else { return };
    let s = store();
    for _ in 0..100 {
        increment(&s, &dir.join("tasks.json"), &dir.join("log.md"));
    }
}

#[test]
fn no_lost_updates() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let children: Vec<_> = (0..8)
        .map(|_| child("store::increment_child", dir).spawn().unwrap())
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let v: Value = serde_json::from_slice(&std::fs::read(dir.join("tasks.json")).unwrap()).unwrap();
    assert_eq!(counter_of(&v), 800);
    let log = std::fs::read_to_string(dir.join("log.md")).unwrap();
    let want: String = (1..=800).map(|i| format!("entry {i}\n")).collect();
    assert_eq!(log, want);
}

#[test]
fn lock_wait_is_bounded_and_names_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("tasks.json");
    let lock = lock_path_for(&state);
    assert!(lock.ends_with(".tasks.json.lock"));
    let holder = store();
    let (tx, rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let lock2 = lock.clone();
    let t = std::thread::spawn(move || {
        holder
            .with_lock(&lock2, || {
                tx.send(()).unwrap();
                done_rx.recv().unwrap();
                Ok(())
            })
            .unwrap();
    });
    rx.recv().unwrap();
    let waiter = trusting(Store::new(Clock::system(), Duration::from_millis(200)));
    let start = std::time::Instant::now();
    let err = waiter.with_lock(&lock, || Ok(())).unwrap_err();
    let waited = start.elapsed();
    done_tx.send(()).unwrap();
    t.join().unwrap();
    assert!(matches!(err, Error::LockTimeout { .. }), "{err}");
    assert!(err.to_string().contains(".tasks.json.lock"), "{err}");
    assert!(err.to_string().contains("TASKHOOK_LOCK_TIMEOUT"), "{err}");
    assert!(
        waited >= Duration::from_millis(200) && waited < Duration::from_secs(2),
        "{waited:?}"
    );
    // Once released, it is free again.
    waiter.with_lock(&lock, || Ok(())).unwrap();
}

#[test]
fn schema_invalid_write_is_refused_and_old_file_intact() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("tasks.json");
    let s = store();
    assert!(s.replace_json(&path, "claude-tasks", &doc(1)).unwrap());
    let before = std::fs::read(&path).unwrap();
    let mut bad = doc(2);
    bad["tasks"][0]["status"] = json!("finished");
    let err = s.replace_json(&path, "claude-tasks", &bad).unwrap_err();
    assert!(matches!(err, Error::SchemaInvalid { .. }), "{err}");
    assert!(err.to_string().contains("/tasks/0/status"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let names: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "no temp file left behind");
}

#[test]
fn identical_rewrite_writes_nothing_and_mode_is_kept() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("tasks.json");
    let s = store();
    assert!(s.replace_json(&path, "claude-tasks", &doc(1)).unwrap());
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let ino = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&path).unwrap());
    assert!(!s.replace_json(&path, "claude-tasks", &doc(1)).unwrap());
    let ino2 = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&path).unwrap());
    assert_eq!(ino, ino2, "an identical rewrite replaced the file");
    assert!(s.replace_json(&path, "claude-tasks", &doc(2)).unwrap());
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    assert_eq!(s.take_changed(), vec![path.clone()]);
}

#[test]
fn append_never_rewrites_and_heals_a_torn_line() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("progress").join("log.md");
    let s = store();
    s.append(&log, b"## one\n").unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"## torn"))
        .unwrap();
    s.append(&log, b"## two\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "## one\n## torn\n## two\n"
    );
}

#[test]
fn checkpoint_ring_keeps_ten_and_finds_newest_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let ring = Ring::seed000(tmp.path().join("checkpoints"));
    let s = store();
    for n in 1..=12u64 {
        ring.write(&s, &render(n)).unwrap();
    }
    let names: Vec<String> = ring
        .list(&s)
        .unwrap()
        .iter()
        .map(|c| c.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.first().unwrap(), "checkpoint-003.json");
    assert_eq!(names.last().unwrap(), "checkpoint-012.json");
    assert_eq!(names.len(), 10);
    // Lexicographic order is age order.
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(sorted, names);
    // A corrupt newest checkpoint falls back to the one before.
    std::fs::write(ring.path_of(12), b"{\"tasks\": [").unwrap();
    let valid = |b: &[u8]| serde_json::from_slice::<Value>(b).is_ok();
    let (cp, bytes) = ring.newest_valid(&s, valid).unwrap().unwrap();
    assert_eq!(cp.number, 11);
    assert_eq!(bytes, render(11));
}

#[test]
fn checkpoint_order_survives_the_padding_width() {
    let tmp = tempfile::tempdir().unwrap();
    let ring = Ring::seed000(tmp.path());
    let s = store();
    std::fs::write(ring.path_of(999), render(999)).unwrap();
    let cp = ring.write(&s, &render(1000)).unwrap();
    assert_eq!(cp.number, 1000);
    assert!(cp.path.ends_with("checkpoint-1000.json"));
    let cp = ring.write(&s, &render(1001)).unwrap();
    assert_eq!(cp.number, 1001);
}

#[test]
fn corrupt_files_are_detected_and_moved_aside_never_deleted() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("tasks.json");
    let s = trusting(Store::new(
        Clock::fixed(store::clock::parse_time("2026-02-03T04:05:06Z").unwrap()),
        Duration::from_secs(1),
    ));
    std::fs::write(&path, b"{ half").unwrap();
    assert!(
        matches!(s.load_json(&path, "claude-tasks").unwrap(), Loaded::Invalid(m) if m.contains("not valid JSON"))
    );
    std::fs::write(&path, br#"{"tasks": 3}"#).unwrap();
    match s.load_json(&path, "claude-tasks").unwrap() {
        Loaded::Invalid(m) => assert!(
            m.contains("schema claude-tasks") && m.contains("/tasks"),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
    let err = s
        .load_or_refuse(&path, "claude-tasks", tmp.path())
        .unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("tasks.json")
            && msg.contains("taskhook validate")
            && msg.contains("taskhook recover"),
        "{msg}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        br#"{"tasks": 3}"#,
        "refusing never touches the file"
    );
    let aside = s.quarantine(&path).unwrap();
    assert!(
        aside.ends_with("tasks.json.corrupt-20260203T040506Z"),
        "{aside:?}"
    );
    assert_eq!(std::fs::read(&aside).unwrap(), br#"{"tasks": 3}"#);
    assert!(!path.exists());
    std::fs::write(&path, b"x").unwrap();
    let aside2 = s.quarantine(&path).unwrap();
    assert!(
        aside2.ends_with("tasks.json.corrupt-20260203T040506Z-2"),
        "{aside2:?}"
    );
}

#[test]
fn dry_run_keeps_writes_in_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("a");
    let path = dir.join("tasks.json");
    let s = trusting(Store::dry_run(Clock::system(), Duration::from_secs(1)));
    s.with_lock(&lock_path_for(&path), || {
        s.replace_json(&path, "claude-tasks", &doc(5))?;
        s.append(&dir.join("log.md"), b"x\n")
    })
    .unwrap();
    assert!(!tmp.path().join("a").exists(), "dry run touched the disk");
    assert!(
        matches!(s.load_json(&path, "claude-tasks").unwrap(), Loaded::Valid(v) if counter_of(&v) == 5)
    );
    let names: Vec<String> = s
        .list_dir(&dir)
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(names, ["log.md", "tasks.json"]);
    assert!(s.is_dir(&dir));
    assert_eq!(s.take_changed(), vec![path, dir.join("log.md")]);
}

#[test]
fn stale_temp_files_are_cleaned_by_age_only() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store();
    std::fs::write(tmp.path().join(".write-abc"), b"partial").unwrap();
    std::fs::write(tmp.path().join("keep.json"), b"{}").unwrap();
    assert!(s
        .clean_stale_temps(tmp.path(), ".write-", Duration::from_secs(300))
        .unwrap()
        .is_empty());
    let removed = s
        .clean_stale_temps(tmp.path(), ".write-", Duration::ZERO)
        .unwrap();
    assert_eq!(removed, vec![tmp.path().join(".write-abc")]);
    assert!(tmp.path().join("keep.json").exists());
}

#[test]
fn temp_files_can_live_in_a_separate_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("tasks.json");
    let temp = tmp.path().join("temp");
    let s = store();
    assert!(s.replace_via(&target, b"{}\n", &temp, ".write-").unwrap());
    assert_eq!(std::fs::read(&target).unwrap(), b"{}\n");
    assert_eq!(
        std::fs::read_dir(&temp).unwrap().count(),
        0,
        "temp file was renamed away"
    );
}

#[test]
fn hostile_ids_are_refused() {
    for bad in ["../../etc/x", "..", "a/b", ".claude", "x\0y", ""] {
        let err = store::check_id("project id", bad).unwrap_err();
        assert!(matches!(err, Error::UnsafeId { .. }), "{bad:?}");
    }
    assert_eq!(store::sanitize_id("@org/pkg"), "org-pkg");
}

/// A write over bytes the caller read (`replace_from`) is undone to what the file held: the
/// caller's bytes when the file still held them, the file's own when someone changed it since.
#[test]
fn a_failed_operation_puts_back_what_the_file_held_before_a_write_from_bytes_read() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state.json");
    let s = store();
    let fail = || Err::<(), _>(Error::BadInput("a later write failed".into()));
    for foreign in [false, true] {
        std::fs::write(&path, b"as read").unwrap();
        let was = store::Bytes::new(std::fs::read(&path).unwrap());
        if foreign {
            std::fs::write(&path, b"changed by another writer").unwrap();
        }
        let out = s.with_lock(&lock_path_for(&path), || {
            assert!(s.replace_from(&path, b"new", Some(&was))?);
            assert_eq!(std::fs::read(&path).unwrap(), b"new");
            fail()
        });
        assert!(out.is_err());
        let expected: &[u8] = if foreign {
            b"changed by another writer"
        } else {
            b"as read"
        };
        assert_eq!(
            std::fs::read(&path).unwrap(),
            expected,
            "foreign: {foreign}"
        );
    }
    // The same bytes write nothing, as `replace` does.
    let was = store::Bytes::new(std::fs::read(&path).unwrap());
    let same = was.to_vec();
    assert!(!s.replace_from(&path, &same, Some(&was)).unwrap());
}

/// A re-read of bytes already parsed is a comparison as the file is read: the parse is
/// reused only while the file holds exactly those bytes.
#[test]
fn what_was_parsed_is_reused_only_while_the_file_holds_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state.json");
    let s = store();
    std::fs::write(&path, b"[1, 2, 3]").unwrap();
    let bytes = store::Bytes::new(std::fs::read(&path).unwrap());
    store::parsed::remember_shared("test: still parsed", bytes, std::rc::Rc::new(3usize));
    let still = |s: &Store| s.still_parsed::<usize>("test: still parsed", &path);
    assert_eq!(
        still(&s).map(|(b, v)| (b.to_vec(), *v)),
        Some((b"[1, 2, 3]".to_vec(), 3))
    );
    std::fs::write(&path, b"[1, 2, 4]").unwrap();
    assert!(still(&s).is_none(), "same length, other bytes");
    std::fs::write(&path, b"[1, 2, 3, 4]").unwrap();
    assert!(still(&s).is_none(), "the same bytes and more");
    std::fs::remove_file(&path).unwrap();
    assert!(still(&s).is_none(), "no file");
    std::fs::write(&path, b"[1, 2, 3]").unwrap();
    assert!(still(&s).is_some(), "the same bytes again");
    let other_type = s.still_parsed::<String>("test: still parsed", &path);
    assert!(other_type.is_none(), "what was parsed is not a String");
}

/// A write filled as a stream (`replace_filled`): its record runs once the temp file is whole
/// and before the rename, a failure in either leaves the file as it was, and a later failure
/// of the operation undoes it to the bytes as read.
#[test]
fn a_filled_write_records_before_its_rename_and_is_undone_like_any_other() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state.json");
    let temp = tmp.path().join("temp");
    let s = store();
    std::fs::write(&path, b"as read").unwrap();
    let was = store::Bytes::new(std::fs::read(&path).unwrap());
    let fill = |w: &mut dyn std::io::Write| {
        w.write_all(b"new ")?;
        w.write_all(b"bytes")
    };
    // The record sees the temp file whole and the target untouched.
    let mut seen = None;
    s.replace_filled(
        &path,
        &temp,
        ".write-",
        Some(&was),
        &mut { fill },
        &mut || {
            let temps: Vec<_> = std::fs::read_dir(&temp).unwrap().flatten().collect();
            seen = Some((
                std::fs::read(&path).unwrap(),
                std::fs::read(temps[0].path()).unwrap(),
            ));
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(seen, Some((b"as read".to_vec(), b"new bytes".to_vec())));
    assert_eq!(std::fs::read(&path).unwrap(), b"new bytes");
    assert_eq!(std::fs::read_dir(&temp).unwrap().count(), 0);
    // A record that fails, or a fill that fails: nothing moves, no temp file stays.
    std::fs::write(&path, b"as read").unwrap();
    let refused = s.replace_filled(
        &path,
        &temp,
        ".write-",
        Some(&was),
        &mut { fill },
        &mut || Err(Error::BadInput("the record failed".into())),
    );
    assert!(refused.is_err());
    let broken = s.replace_filled(
        &path,
        &temp,
        ".write-",
        Some(&was),
        &mut |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("the fill failed"))
        },
        &mut || Ok(()),
    );
    assert!(broken.is_err());
    assert_eq!(std::fs::read(&path).unwrap(), b"as read");
    assert_eq!(std::fs::read_dir(&temp).unwrap().count(), 0);
    // Inside an operation that fails later: undone to the bytes as read.
    let out = s.with_lock(&lock_path_for(&path), || {
        s.replace_filled(
            &path,
            &temp,
            ".write-",
            Some(&was),
            &mut { fill },
            &mut || Ok(()),
        )?;
        assert_eq!(std::fs::read(&path).unwrap(), b"new bytes");
        Err::<(), _>(Error::BadInput("a later write failed".into()))
    });
    assert!(out.is_err());
    assert_eq!(std::fs::read(&path).unwrap(), b"as read");
    // A dry run keeps it in memory.
    let dry = trusting(Store::dry_run(Clock::system(), Duration::from_secs(5)));
    dry.replace_filled(&path, &temp, ".write-", None, &mut { fill }, &mut || Ok(()))
        .unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"as read");
    assert_eq!(dry.read(&path).unwrap().unwrap(), b"new bytes");
}

/// A file written as a stream is remembered by its digest: a later read finds what it gave
/// while the file holds exactly those bytes (hashed as read), and a read of the whole takes the
/// bytes up without a parse.
#[test]
fn what_was_written_as_a_stream_is_known_by_its_digest_only_while_the_file_holds_it() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state.json");
    let s = store();
    let kind = "test: written as a stream";
    std::fs::write(&path, b"[1, 2, 3]").unwrap();
    let mut d = store::parsed::Digester::default();
    d.add(b"[1, 2");
    d.add(b", 3]");
    assert_eq!(d.finish(), store::parsed::Digest::of(b"[1, 2, 3]"));
    store::parsed::remember_digest(kind, d.finish(), std::rc::Rc::new(3usize));
    assert!(
        s.still_parsed::<usize>(kind, &path).is_none(),
        "no bytes held"
    );
    let (digest, value) = s.still_written::<usize>(kind, &path).unwrap();
    assert_eq!((digest, *value), (d.finish(), 3));
    for other in [&b"[1, 2, 4]"[..], b"[1, 2, 3, 4]", b"[1, 2, "] {
        std::fs::write(&path, other).unwrap();
        assert!(s.still_written::<usize>(kind, &path).is_none(), "{other:?}");
    }
    std::fs::remove_file(&path).unwrap();
    assert!(s.still_written::<usize>(kind, &path).is_none(), "no file");
    // A whole read of the same bytes is not parsed again, and keeps them from then on.
    let parses = std::cell::Cell::new(0);
    let parse = |b: &store::Bytes| {
        parses.set(parses.get() + 1);
        b.len()
    };
    let (bytes, n) = store::parsed::remembered(kind, b"[1, 2, 3]".to_vec(), parse);
    assert_eq!((parses.get(), *n), (0, 3));
    let again = store::parsed::latest::<usize>(kind).unwrap();
    assert!(std::sync::Arc::ptr_eq(&again.0, &bytes));
    let (_, n) = store::parsed::remembered(kind, b"[1, 2]".to_vec(), parse);
    assert_eq!((parses.get(), *n), (1, 6));
}

/// A write over a file the caller does not hold (`replace_filled_kept`, issue 23) keeps the old
/// file under a second name only while its operation runs: a failed operation renames it
/// back (the first write's, however many followed), one that succeeds removes it, one a killed
/// process left is removed by the next, and a link planted under such a name stays. Outside
/// an operation nothing is kept; a new file's undo removes it.
#[test]
fn a_write_over_a_file_not_held_keeps_it_only_while_its_operation_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state.json");
    let s = store();
    let kept = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".kept-"))
            .collect();
        names.sort();
        names
    };
    let put = |text: &'static [u8]| move |w: &mut dyn std::io::Write| w.write_all(text);
    std::fs::write(&path, b"as read").unwrap();
    // A leftover of a killed process, and a planted link of that name.
    std::fs::write(tmp.path().join(".state.json.kept-old"), b"older").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("/etc/hostname", tmp.path().join(".state.json.kept-planted"))
        .unwrap();
    let out = s.with_lock(&lock_path_for(&path), || {
        s.replace_filled_kept(&path, &mut put(b"first"))?;
        s.replace_filled_kept(&path, &mut put(b"second"))?;
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        let names = kept(tmp.path());
        assert!(
            !names.contains(&".state.json.kept-old".to_string()),
            "{names:?}"
        );
        assert_eq!(names.len(), if cfg!(unix) { 2 } else { 1 }, "{names:?}");
        Err::<(), _>(Error::BadInput("a later write failed".into()))
    });
    assert!(out.is_err());
    assert_eq!(std::fs::read(&path).unwrap(), b"as read");
    let planted = if cfg!(unix) {
        vec![".state.json.kept-planted".to_string()]
    } else {
        vec![]
    };
    assert_eq!(kept(tmp.path()), planted);
    // An operation that succeeds: nothing kept after it.
    s.with_lock(&lock_path_for(&path), || {
        s.replace_filled_kept(&path, &mut put(b"done"))
    })
    .unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"done");
    assert_eq!(kept(tmp.path()), planted);
    // Outside an operation: written, nothing kept.
    s.replace_filled_kept(&path, &mut put(b"plain")).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"plain");
    assert_eq!(kept(tmp.path()), planted);
    // A new file, in an operation that fails: removed again.
    let new = tmp.path().join("new.json");
    let out = s.with_lock(&lock_path_for(&new), || {
        s.replace_filled_kept(&new, &mut put(b"made"))?;
        Err::<(), _>(Error::BadInput("a later write failed".into()))
    });
    assert!(out.is_err());
    assert!(!new.exists());
}
