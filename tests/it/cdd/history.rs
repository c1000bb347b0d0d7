//! history.jsonl lines taskhook cannot read (not UTF-8, a NUL byte, not JSON): every command
//! says so in its reply, SessionStart reports them, and `taskhook recover` sets them aside.

use serde_json::json;

use super::{code, ok, payload, Ws};
use crate::common::snapshot;

/// The seeded workspace's history with a line of invalid UTF-8 (inside a JSON string) and a
/// line holding a NUL byte appended: lines 4 and 5.
fn spoiled() -> Ws {
    let w = Ws::seeded();
    let mut bytes = std::fs::read(w.path("tasks/history.jsonl")).unwrap();
    bytes.extend_from_slice(
        b"{\"timestamp\": \"2026-03-01T11:00:00Z\", \"action\": \"error\", \"message\": \"\xff\xfe\"}\n",
    );
    bytes.extend_from_slice(b"{\"action\": \"start\", \"task\": \"foo\0.md\"}\n");
    std::fs::write(w.path("tasks/history.jsonl"), bytes).unwrap();
    w
}

fn warning(w: &Ws) -> String {
    format!(
        "history.jsonl has 2 line(s) taskhook cannot read, which it skips (new lines go after them): 4 (not UTF-8), 5 (a NUL byte); `taskhook recover {}` sets them aside",
        w.path("tasks").display()
    )
}

#[test]
fn every_command_says_when_the_history_has_lines_it_cannot_read() {
    let w = spoiled();
    let lines = w.history_lines().len();
    let start = ok(&w.cdd(&["start", "foo.md"]));
    assert_eq!(start["warnings"], json!([warning(&w)]), "{start}");
    assert_eq!(
        w.history_lines().len(),
        lines + 1,
        "the move is still logged"
    );
    for args in [
        &["done", "foo.md"][..],
        &["next"],
        &["list"],
        &["stats"],
        &["escalate", "bar.md", "why"],
        &["fail", "bar.md"],
        &["continue", "verify-core"],
        &["import"],
    ] {
        let d = ok(&w.cdd(args));
        assert_eq!(d["warnings"], json!([warning(&w)]), "{args:?}: {d}");
    }
    // A refusal is still one object with exactly success, error and code.
    assert_eq!(code(&w.cdd(&["done", "foo.md"])), "WRONG_STATUS");
    // --human: the warning on stderr.
    let h = w.cdd(&["list", "--human"]);
    assert_eq!(h.code, 0, "{h:?}");
    assert_eq!(h.stderr, format!("taskhook: warning: {}\n", warning(&w)));
    // SessionStart reports the same lines.
    let ctx = w.hook(&payload(&w, "SessionStart.startup.json")).context();
    assert!(ctx.contains(&warning(&w)), "{ctx}");
}

#[test]
fn recover_sets_the_lines_aside_and_dry_run_only_says_so() {
    let w = spoiled();
    let tasks = w.path("tasks");
    let original = std::fs::read(w.path("tasks/history.jsonl")).unwrap();
    let mut c = w.p.cmd();
    c.env("CDD_DIR", &w.dir);
    let before = snapshot(&w.dir);
    let dry =
        w.p.run_with(c, &["recover", tasks.to_str().unwrap(), "--dry-run"], "");
    assert_eq!(dry.code, 0, "{dry:?}");
    let aside = w.path("tasks/history.jsonl.corrupt-20260301T120000Z");
    assert_eq!(
        dry.stdout.trim(),
        format!(
            "cdd ws: would move 2 line(s) of history.jsonl that taskhook cannot read (4: not UTF-8, 5: a NUL byte) to `{}`; history.jsonl would keep its 3 other line(s)",
            aside.display()
        )
    );
    assert_eq!(snapshot(&w.dir), before, "a dry run writes nothing");

    let mut c = w.p.cmd();
    c.env("CDD_DIR", &w.dir);
    let run = w.p.run_with(c, &["recover", tasks.to_str().unwrap()], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("cdd ws: moved 2 line(s)"), "{run:?}");
    // Nothing lost: the kept lines and the lines set aside are the original, byte for byte.
    let kept = std::fs::read(w.path("tasks/history.jsonl")).unwrap();
    let moved = std::fs::read(&aside).unwrap();
    let mut both = kept.clone();
    both.extend_from_slice(&moved);
    assert_eq!(both, original);
    assert_eq!(w.history_lines().len(), 3);
    // The warning is gone, and a second recover has nothing to do.
    let d = ok(&w.cdd(&["next"]));
    assert!(d.get("warnings").is_none(), "{d}");
    let mut c = w.p.cmd();
    c.env("CDD_DIR", &w.dir);
    let again = w.p.run_with(c, &["recover", tasks.to_str().unwrap()], "");
    assert_eq!(
        again.stdout.trim(),
        "cdd ws: history.jsonl has no line taskhook cannot read; nothing to recover"
    );
}

/// history.jsonl planted as a FIFO, a link to `/dev/zero` or a sparse file past its cap: every
/// read of it (a command, `stats` reading its lines again, SessionStart) refuses it in one line
/// naming it, without hanging, and nothing moves.
#[test]
fn a_history_that_is_no_regular_file_or_too_big_is_refused_and_nothing_moves() {
    for kind in ["fifo", "zero", "giant"] {
        let w = Ws::seeded();
        let h = w.path("tasks/history.jsonl");
        std::fs::remove_file(&h).unwrap();
        match kind {
            "fifo" => crate::hostile::mkfifo(&h),
            "zero" => crate::hostile::plant_link(std::path::Path::new("/dev/zero"), &h),
            _ => std::fs::File::create(&h)
                .unwrap()
                .set_len(70 << 20)
                .unwrap(),
        }
        let order = std::fs::read(w.path("tasks/order.json")).unwrap();
        let folders = |w: &Ws| ["foo.md", "bar.md"].map(|n| w.folders_of(n));
        let before = folders(&w);
        for args in [&["list"][..], &["stats"], &["next"], &["start", "foo.md"]] {
            let run = w.cdd(args);
            assert_eq!(code(&run), "REFUSED", "{kind} {args:?}: {run:?}");
            assert!(
                run.stdout.contains("tasks/history.jsonl`: it is"),
                "{kind} {args:?}: {run:?}"
            );
        }
        let ss = w.hook(&payload(&w, "SessionStart.startup.json"));
        assert!(
            format!("{}{}", ss.stdout, ss.stderr).contains("tasks/history.jsonl`: it is"),
            "{kind}: {ss:?}"
        );
        assert_eq!(std::fs::read(w.path("tasks/order.json")).unwrap(), order);
        assert_eq!(folders(&w), before, "{kind}");
    }
}
