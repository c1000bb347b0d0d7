//! Issue 20 item 17: titles, ids and reasons from a cloned repository's files never reach a
//! terminal, Claude Code or the model raw. One store per layout, planted with an SGR colour
//! (`\x1b[35m`), an OSC window title ended by BEL (`\x1b]0;…\x07`), a bare BEL, a C1 CSI
//! (`\u{9b}`) and bidirectional-text controls (`\u{202e}`, `\u{2066}`), checked in `status` (for
//! people, with colour, and `--json`), the status line, `log` and a SessionStart reply; plus a
//! planted journal read by `log`, and the one-line errors and refusals on stderr.

use serde_json::{json, Value};

use crate::claude_tasks::write;
use crate::common::{Project, Run, NOW};

/// What a cloned repository might put in a title or an id.
const HOSTILE: &str = "Fix \x1b[35mred\x1b]0;pwned\x07 bell\x07 \u{9b}2J \u{202e}gnp.exe\u{2066}";
/// How taskhook shows it.
const SHOWN: &str =
    "Fix \\u{1b}[35mred\\u{1b}]0;pwned\\u{7} bell\\u{7} \\u{9b}2J \\u{202e}gnp.exe\\u{2066}";

/// A character that must never be printed as it is (tab and newline may).
fn raw(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

fn assert_clean(what: &str, s: &str) {
    assert!(!s.chars().any(raw), "{what} prints a raw control: {s:?}");
}

/// Every string in a JSON value.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => m.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// Runs `taskhook ARGS` in `p` with `stdin` and the extra environment.
fn run(p: &Project, env: &[(&str, String)], args: &[&str], stdin: impl Into<Vec<u8>>) -> Run {
    let mut c = p.cmd();
    for (k, v) in env {
        c.env(k, v);
    }
    p.run_with(c, args, stdin)
}

/// The checks every layout's store must pass. `in_line`: the status line shows the hostile
/// text (it shows only the unit in progress, its id and title).
fn check_everywhere(layout: &str, p: &Project, env: &[(&str, String)], in_line: bool) {
    // status, for people: escaped, visibly.
    let st = run(p, env, &["status"], "");
    assert_eq!(st.code, 0, "{st:?}");
    assert_clean(&format!("{layout}: status"), &st.stdout);
    assert!(st.stdout.contains(SHOWN), "{layout}: {}", st.stdout);
    // With colour, the only raw escapes are taskhook's own styles.
    let st = run(p, env, &["status", "--color", "always"], "");
    let mut plain = st.stdout.clone();
    for style in [
        "\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[0m",
    ] {
        plain = plain.replace(style, "");
    }
    assert_clean(&format!("{layout}: status --color always"), &plain);
    assert!(plain.contains(SHOWN), "{layout}: {plain}");
    // --json: escaped as JSON (the text is safe), the value exactly what the file holds.
    let js = run(p, env, &["status", "--json"], "");
    assert_clean(&format!("{layout}: status --json"), &js.stdout);
    let mut all = Vec::new();
    strings(&js.json(), &mut all);
    assert!(
        all.iter().any(|s| s.contains(HOSTILE)),
        "{layout}: {}",
        js.stdout
    );
    // The status line: one line, escaped.
    let input = serde_json::to_vec(&json!({"session_id": "s", "cwd": p.root,
        "workspace": {"current_dir": p.root, "project_dir": p.root}}))
    .unwrap();
    let line = run(p, env, &["statusline"], input);
    assert_eq!(line.code, 0, "{line:?}");
    assert_eq!(line.stdout.lines().count(), 1, "{layout}: {line:?}");
    assert_clean(&format!("{layout}: statusline"), &line.stdout);
    if in_line {
        // (It cuts a title at 40 characters.)
        let start = "\\u{1b}[35mred\\u{1b}]0;pwned\\u{7} bell\\u{7} \\u{9b}2J";
        assert!(line.stdout.contains(start), "{layout}: {line:?}");
    }
    // SessionStart: every string of the reply is safe, and the context shows it escaped.
    let start = run(
        p,
        env,
        &["hook"],
        serde_json::to_vec(&p.payload("SessionStart.startup.json")).unwrap(),
    );
    assert_eq!(start.code, 0, "{start:?}");
    assert_clean(&format!("{layout}: SessionStart"), &start.stdout);
    let mut all = Vec::new();
    strings(&start.json(), &mut all);
    for s in &all {
        assert_clean(&format!("{layout}: SessionStart reply"), s);
    }
    assert!(start.context().contains(SHOWN), "{layout}: {start:?}");
    // The other commands that print what a store holds.
    for args in [
        &["doctor"][..],
        &["doctor", "--json"],
        &["reconcile", "--dry-run"],
        &["validate"],
        &["validate", "--json"],
    ] {
        let r = run(p, env, args, "");
        assert_clean(&format!("{layout}: {args:?}"), &r.stdout);
        assert_clean(&format!("{layout}: {args:?} stderr"), &r.stderr);
    }
    // log, both ways, whatever the journal holds by now.
    for args in [&["log"][..], &["log", "--json"]] {
        let log = run(p, env, args, "");
        assert_eq!(log.code, 0, "{log:?}");
        assert_clean(&format!("{layout}: {args:?}"), &log.stdout);
    }
}

fn ok(r: &Run) {
    assert_eq!(r.code, 0, "{r:?}");
}

#[test]
fn claude_tasks_titles_and_ids_are_escaped() {
    let p = Project::new();
    let id = format!("t-{HOSTILE}");
    let w = write(
        &p,
        &[
            "--id",
            &id,
            "--description",
            HOSTILE,
            "--status",
            "in_progress",
        ],
    );
    ok(&w);
    assert_clean("tasks write", &w.stdout);
    ok(&write(
        &p,
        &["--id", "b", "--description", "B", "--dependency", &id],
    ));
    let r = p.run(&["tasks", "read"], "");
    assert_clean("tasks read", &r.stdout);
    assert_eq!(r.json()["tasks"][0]["description"], HOSTILE);
    // Completing it: the "now ready" line on stderr is safe too.
    let w = p.run(
        &["tasks", "write", "--id", &id, "--status", "completed"],
        "",
    );
    ok(&w);
    assert_clean("tasks write stderr", &w.stderr);
    ok(&p.run(
        &["tasks", "write", "--id", &id, "--status", "in_progress"],
        "",
    ));
    check_everywhere("claude-tasks", &p, &[], true);
}

#[test]
fn projects_titles_are_escaped() {
    let p = Project::new();
    ok(&p.run(&["projects", "new", "web"], ""));
    let add = p.run(&["projects", "add", "web", "T1", "--title", HOSTILE], "");
    ok(&add);
    assert_clean("projects add", &add.stdout);
    ok(&p.run(
        &[
            "projects",
            "add",
            "web",
            "T2",
            "--title",
            HOSTILE,
            "--depends",
            "T1",
        ],
        "",
    ));
    ok(&p.run(&["projects", "start", "web", "T1"], ""));
    let next = p.run(&["projects", "next", "web"], "");
    assert_clean("projects next", &next.stdout);
    check_everywhere("projects", &p, &[], true);
}

/// Replaces `from` by `to` in a JSON file (as a JSON string) and in the other files of `dir`.
fn plant(dir: &std::path::Path, from: &str, to: &str) {
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if !path.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let text = if path.extension().is_some_and(|x| x == "json") {
            text.replace(
                &serde_json::to_string(from).unwrap(),
                &serde_json::to_string(to).unwrap(),
            )
        } else {
            text.replace(from, to)
        };
        std::fs::write(&path, text).unwrap();
    }
}

#[test]
fn iterative_ids_are_escaped() {
    let p = Project::new();
    ok(&p.run(
        &["iterative", "new", "s", "--task", "T1", "--task", "T2"],
        "",
    ));
    plant(
        &p.root.join(".claude/iterative/s"),
        "T1",
        &format!("T1 {HOSTILE}"),
    );
    check_everywhere("iterative", &p, &[], true);
}

#[test]
fn execute_ids_are_escaped() {
    let p = Project::new();
    ok(&p.run(
        &[
            "execute",
            "init",
            "docs/tasks/run",
            "--layer",
            "0-setup=L0-001,L0-002",
        ],
        "",
    ));
    ok(&p.run(&["execute", "start", "L0-001"], ""));
    plant(
        &p.root.join("docs/tasks/run"),
        "L0-001",
        &format!("L0-001 {HOSTILE}"),
    );
    let st = p.run(&["execute", "status"], "");
    assert_clean("execute status", &st.stdout);
    check_everywhere("execute", &p, &[], true);
}

#[test]
fn cdd_groups_models_and_stop_messages_are_escaped() {
    let p = Project::new();
    // The workspace named by the repository itself.
    p.write(".claude/taskhook.json", r#"{"cdd_dir": "cdd"}"#);
    ok(&p.run(&["cdd", "init"], ""));
    let order = json!({"tasks": [
        {"task": "a.md", "group": HOSTILE, "model": HOSTILE, "thinking": "none"},
        {"stop": "check", "message": HOSTILE},
        {"task": "b.md", "group": "G", "model": "sonnet", "thinking": "none"}
    ]});
    p.write(
        "cdd/tasks/order.json",
        serde_json::to_vec_pretty(&order).unwrap(),
    );
    p.write("cdd/tasks/in_progress/a.md", "# a\n");
    p.write("cdd/tasks/pending/b.md", "# b\n");
    for args in [&["cdd", "list", "--human"][..], &["cdd", "list"]] {
        let l = p.run(args, "");
        ok(&l);
        assert_clean(&format!("{args:?}"), &l.stdout);
        assert!(
            l.stdout.contains(SHOWN) || l.stdout.contains("\\u009b2J"),
            "{l:?}"
        );
    }
    check_everywhere("cdd", &p, &[], false);
    // The stop, once reached, waits for a person: the status line names it, safely.
    ok(&p.run(&["cdd", "done", "a.md"], ""));
    check_everywhere("cdd", &p, &[], false);
}

#[test]
fn a_planted_journal_is_shown_escaped_by_log() {
    let p = Project::new();
    let entry = json!({"at": NOW, "session": format!("s{HOSTILE}"), "event": "PostToolUse",
        "tool": HOSTILE, "agent_id": HOSTILE, "changed": [format!("/x/{HOSTILE}")],
        "reply": {"systemMessage": HOSTILE, "decision": "block", "reason": HOSTILE,
                  "continue": false, "stopReason": HOSTILE,
                  "hookSpecificOutput": {"hookEventName": "PostToolUse",
                                         "additionalContext": format!("{HOSTILE}\nline two")}},
        "stderr": HOSTILE, "exit": 0});
    // serde_json writes C1 and bidi controls raw, as a repository's file may hold them.
    p.write(
        ".claude/taskhook/journal.jsonl",
        format!("{}\n", serde_json::to_string(&entry).unwrap()),
    );
    let log = p.run(&["log"], "");
    assert_eq!(log.code, 0, "{log:?}");
    assert_clean("log", &log.stdout);
    assert_eq!(
        log.stdout,
        format!(
            "{NOW}  PostToolUse:{SHOWN} sFix \\u{{1b}}[3 (subagent {SHOWN})\n    changed: \
             /x/{SHOWN}\n    told the agent to go on: {SHOWN}\n    halted the agent: {SHOWN}\n    \
             told the model: {SHOWN}\n    told the user: {SHOWN}\n    exit 0: {SHOWN}\n"
        )
    );
    let js = p.run(&["log", "--json"], "");
    assert_clean("log --json", &js.stdout);
    assert_eq!(js.json(), entry, "the same entry, escaped as JSON");
}

#[test]
fn errors_and_refusals_on_stderr_are_escaped() {
    let p = Project::new();
    // An error naming a hostile id.
    ok(&p.run(&["projects", "new", "web"], ""));
    let r = p.run(&["projects", "start", "web", HOSTILE], "");
    r.assert_one_line_error();
    assert_clean("error line", &r.stderr);
    // TaskCompleted refused (exit 2): the reason names the task's description.
    ok(&write(&p, &["--id", "a", "--description", HOSTILE]));
    ok(&write(
        &p,
        &["--id", "b", "--description", "B", "--dependency", "a"],
    ));
    let r = p.hook(&crate::claude_tasks::completed_event(&p, "b"));
    assert_eq!(r.code, 2, "{r:?}");
    assert_clean("TaskCompleted refusal", &r.stderr);
    assert!(r.stderr.contains(SHOWN), "{r:?}");
}
