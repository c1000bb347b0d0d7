//! Every command's exact output, JSON and `--human`, over one run of the seed's example: the
//! bytes the orchestrator and a person read, pinned (`tests/fixtures/cdd/transcript.txt`).
//! Regenerate it on purpose with `TASKHOOK_BLESS=1`.

use super::{Ws, SEED_ORDER};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/cdd/transcript.txt"
);

#[test]
fn every_commands_output_is_pinned_byte_for_byte() {
    let mut out = String::new();
    for human in [false, true] {
        out.push_str(&run_the_example(human));
    }
    if std::env::var_os("TASKHOOK_BLESS").is_some() {
        std::fs::write(FIXTURE, &out).unwrap();
    }
    let want = std::fs::read_to_string(FIXTURE).unwrap();
    assert!(out == want, "output changed:\n{out}");
}

/// The seed's example, every verb (and a refusal or two), as one transcript.
fn run_the_example(human: bool) -> String {
    let w = Ws::new();
    let ws = w.dir.display().to_string();
    let mut out = String::new();
    let mut say = |h: &str, args: &[&str]| {
        let mut all = args.to_vec();
        if human {
            all.push("--human");
        }
        let r = w.cdd_at(&format!("2025-12-24T{h}Z"), &all);
        out.push_str(&format!("$ cdd {} (exit {})\n", all.join(" "), r.code));
        for (name, text) in [("out", &r.stdout), ("err", &r.stderr)] {
            for line in text.lines() {
                out.push_str(&format!("{name}| {}\n", line.replace(&ws, "$WS")));
            }
        }
    };
    say("10:00:00", &["init"]);
    w.write_tasks(SEED_ORDER, &["foo.md", "bar.md", "baz.md"]);
    say("10:30:00", &["import"]);
    say("10:30:40", &["next"]);
    say("10:31:00", &["start", "foo.md"]);
    say("10:45:00", &["done", "foo.md"]);
    say("10:50:00", &["start", "bar.md"]);
    say("11:00:00", &["escalate", "bar.md", "tests flaky"]);
    say("11:01:00", &["list"]);
    say("11:02:00", &["list", "pending"]);
    say("11:03:00", &["fail", "bar.md", "no way"]);
    say("11:04:00", &["next"]);
    say("11:05:00", &["continue", "verify-core"]);
    say("11:05:30", &["continue", "verify-core"]);
    say("11:06:00", &["continue", "nope"]);
    say("11:07:00", &["start", "baz.md"]);
    for _ in 0..5 {
        say("11:08:00", &["escalate", "baz.md", "again"]);
    }
    say("11:09:00", &["next"]);
    say("11:10:00", &["stats"]);
    // A history line no event can be read from: every verb warns.
    std::fs::OpenOptions::new()
        .append(true)
        .open(w.path("tasks/history.jsonl"))
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"not json\n"))
        .unwrap();
    say("11:11:00", &["list", "failed"]);
    out
}
