//! Special and giant files planted in a hostile repository (issue 9 item 2): FIFOs, links to
//! `/dev/zero` and `/dev/tty`, sparse files past their cap, and transcripts that are a FIFO, a
//! device or 300 MiB. Each run ends within the bound of [`crate::hostile::LIMIT`], names the
//! file, and (when `/usr/bin/time` is there) stays far below the file's size in memory.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::hostile::{mkfifo, plant_link, record_special, refused, Scene, WORST};

#[test]
fn special_and_giant_files_are_refused_within_bounds() {
    let mut cases = 0;
    let dev_zero = Path::new("/dev/zero");
    // state.json, progress.md and context.md as a FIFO, a link to /dev/zero, a link to /dev/tty.
    for (file, kind) in [
        ("state.json", "fifo"),
        ("progress.md", "fifo"),
        ("state.json", "zero"),
        ("progress.md", "zero"),
        ("context.md", "tty"),
        ("tasks.md", "fifo"),
    ] {
        let s = Scene::new();
        let dir = s.slug("x");
        let target = dir.join(file);
        let _ = std::fs::remove_file(&target);
        match kind {
            "fifo" => mkfifo(&target),
            "zero" => plant_link(dev_zero, &target),
            _ => plant_link(Path::new("/dev/tty"), &target),
        }
        let before = s.snapshot();
        let t = s.hook(&s.payload("SessionStart.startup.json"));
        refused(
            &s,
            &format!("{file} {kind}, SessionStart"),
            &t,
            0,
            file,
            &before,
        );
        record_special(&t);
        cases += 1;
        if file == "context.md" {
            continue; // read at SessionStart only
        }
        let t = s.hook(&s.stop("<signal>T1_DONE</signal>"));
        refused(
            &s,
            &format!("{file} {kind}, SubagentStop"),
            &t,
            1,
            file,
            &before,
        );
        record_special(&t);
        cases += 1;
    }
    // agents.json (read at every main-agent tool call) and package.json (the list id).
    for (rel, payload, kind) in [
        (
            ".claude/taskhook/agents.json",
            "PostToolUse.Read.json",
            "fifo",
        ),
        (
            ".claude/taskhook/agents.json",
            "PostToolUse.Read.json",
            "zero",
        ),
        ("package.json", "PostToolUse.TodoWrite.json", "fifo"),
        ("package.json", "PostToolUse.TodoWrite.json", "zero"),
    ] {
        let s = Scene::new();
        let target = s.p.root.join(rel);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        match kind {
            "fifo" => mkfifo(&target),
            _ => plant_link(dev_zero, &target),
        }
        let before = s.snapshot();
        let t = s.hook(&s.payload(payload));
        let name = Path::new(rel).file_name().unwrap().to_str().unwrap();
        refused(&s, &format!("{rel} {kind}"), &t, 1, name, &before);
        record_special(&t);
        cases += 1;
    }
    // Giant (sparse) files: over their cap, an error naming the cap, never read.
    for (rel, size, cap) in [
        (".claude/iterative/x/state.json", 65 << 20, "64 MiB"),
        (".claude/iterative/x/progress.md", 100 << 20, "64 MiB"),
        (".claude/iterative/x/guardrails.md", 5 << 20, "4 MiB"),
        (".claude/taskhook/agents.json", 5 << 20, "4 MiB"),
    ] {
        let s = Scene::new();
        s.slug("x");
        let target = s.p.root.join(rel);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::File::create(&target)
            .unwrap()
            .set_len(size)
            .unwrap();
        let before = s.snapshot();
        let payload = if rel.ends_with("agents.json") {
            s.payload("PostToolUse.Read.json")
        } else {
            s.payload("SessionStart.startup.json")
        };
        let t = s.hook(&payload);
        let code = if rel.ends_with("agents.json") { 1 } else { 0 };
        refused(&s, rel, &t, code, cap, &before);
        record_special(&t);
        if let Some(kib) = t.rss_kib {
            assert!(kib < 64 * 1024, "{rel}: {kib} KiB");
        }
        cases += 1;
    }
    // Transcripts: a FIFO, /dev/zero and a missing file end within the bound, and a giant
    // one is read from its head and tail only.
    for transcript in ["fifo", "/dev/zero", "/dev/null"] {
        let s = Scene::new();
        s.slug("x");
        let path = match transcript {
            "fifo" => {
                let f = s.outside.join("agent.jsonl");
                mkfifo(&f);
                f
            }
            other => PathBuf::from(other),
        };
        let mut stop = s.stop("No signal here.");
        stop["agent_transcript_path"] = json!(path);
        let before = s.snapshot();
        let t = s.hook(&stop);
        assert_eq!(
            (t.run.code, t.run.stderr.as_str()),
            (0, ""),
            "{transcript}: {t:?}"
        );
        assert_eq!(s.snapshot(), before, "{transcript}");
        record_special(&t);
        cases += 1;
    }
    let s = Scene::new();
    let dir = s.slug("x");
    let transcript = s.outside.join("giant.jsonl");
    let first = json!({"type": "user", "message": {"content": "Work on <task>T1</task>."}});
    let last = json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "Done.\n<signal>T1_DONE</signal>"}]}});
    let mut f = std::fs::File::create(&transcript).unwrap();
    writeln!(f, "{first}").unwrap();
    f.set_len(300 << 20).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap();
    writeln!(f, "\n{last}").unwrap();
    let mut stop = s.stop("");
    stop.as_object_mut()
        .unwrap()
        .remove("last_assistant_message");
    stop["agent_transcript_path"] = json!(transcript);
    let t = s.hook(&stop);
    assert_eq!(t.run.code, 0, "{t:?}");
    assert!(t.run.stdout.contains("confirmation pass"), "{t:?}");
    let state: Value =
        serde_json::from_slice(&std::fs::read(dir.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["tasks"]["T1"]["status"], "confirming");
    if let Some(kib) = t.rss_kib {
        assert!(kib < 64 * 1024, "300 MiB transcript: {kib} KiB");
    }
    record_special(&t);
    cases += 1;
    let w = *WORST.lock().unwrap();
    eprintln!(
        "hostile: {cases} special-file cases; worst of {} runs on special files: {:.0} ms, \
         peak RSS {} KiB",
        w.2,
        w.0 * 1000.0,
        w.1
    );
}
