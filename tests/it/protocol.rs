//! The hook protocol through the real binary: every captured payload, malformed input, unknown
//! events, and the no-op path touching nothing.

use serde_json::json;

use crate::common::{reference_payload_files, Project};

#[test]
fn every_captured_payload_parses_and_exits_zero() {
    let files = reference_payload_files();
    assert!(files.len() >= 50, "only {} payloads found", files.len());
    for file in files {
        let p = Project::new();
        let run = p.hook(&p.payload(&file));
        assert_eq!(run.code, 0, "{file}: {run:?}");
        assert!(run.stderr.is_empty(), "{file}: {run:?}");
        let out = run.stdout.trim();
        if !out.is_empty() {
            assert_eq!(
                run.stdout.lines().count(),
                1,
                "{file}: one JSON line: {run:?}"
            );
            assert!(run.json().is_object(), "{file}: {run:?}");
        }
    }
}

#[test]
fn no_op_events_touch_nothing() {
    for file in [
        "PostToolUse.Read.json",
        "PostToolUse.Bash.json",
        "PreToolUse.Bash.json",
        "UserPromptSubmit.json",
        "Stop.json",
        "MessageDisplay.json",
        "PermissionRequest.Write.json",
    ] {
        let p = Project::new();
        let before = p.snapshot();
        let run = p.hook(&p.payload(file));
        assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{file}: {run:?}");
        assert_eq!(p.snapshot(), before, "{file} changed files");
    }
}

#[test]
fn unknown_event_is_silent() {
    let p = Project::new();
    let before = p.snapshot();
    let run =
        p.hook(&json!({"hook_event_name": "TeleportStart", "session_id": "s", "cwd": p.root}));
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
    assert_eq!(p.snapshot(), before);
}

#[test]
fn unknown_fields_and_enum_values_are_tolerated() {
    let p = Project::new();
    let run = p.hook(&json!({
        "hook_event_name": "SessionStart", "source": "teleport", "cwd": p.root,
        "brand_new_field": {"nested": [1, 2]}, "session_id": "s"
    }));
    assert_eq!(run.code, 0, "{run:?}");
    let run = p.hook(&json!({
        "hook_event_name": "PostToolUse", "tool_name": "QuantumEdit", "cwd": p.root,
        "tool_input": {"x": 1}, "tool_response": "weird"
    }));
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
}

#[test]
fn malformed_input_is_one_line_exit_one_and_changes_nothing() {
    let garbage: Vec<u8> = (0..50 * 1024 * 1024u32)
        .map(|i| b"#%!x\x01"[(i % 5) as usize])
        .collect();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("blank", b"  \n\t".to_vec()),
        ("not json", b"hello there".to_vec()),
        ("array", b"[{\"hook_event_name\":\"Stop\"}]".to_vec()),
        ("string", b"\"SessionStart\"".to_vec()),
        ("no event name", b"{}".to_vec()),
        ("null event name", b"{\"hook_event_name\": null}".to_vec()),
        ("truncated", b"{\"hook_event_name\": \"Stop\", ".to_vec()),
        (
            "invalid utf-8",
            b"{\"hook_event_name\": \"Stop\xff\xfe\"}".to_vec(),
        ),
        (
            "wrong type",
            br#"{"hook_event_name": "SessionStart", "source": 5}"#.to_vec(),
        ),
        ("50 MB of garbage", garbage),
    ];
    for (what, input) in cases {
        let p = Project::new();
        let before = p.snapshot();
        let run = p.run(&["hook"], input);
        run.assert_one_line_error();
        assert_eq!(p.snapshot(), before, "{what} changed files");
    }
}

#[test]
fn oversized_payload_is_refused_cleanly() {
    let p = Project::new();
    let mut big =
        br#"{"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_input": {"content": ""#
            .to_vec();
    big.extend(std::iter::repeat_n(b'a', 65 * 1024 * 1024));
    big.extend(br#""}}"#);
    let run = p.run(&["hook"], big);
    run.assert_one_line_error();
    assert!(run.stderr.contains("larger than"), "{run:?}");
}

#[test]
fn bad_environment_fails_only_what_uses_it() {
    let p = Project::new();
    let run_env = |key: &str, value: &str, payload: &str| {
        let mut c = p.cmd();
        c.env(key, value);
        p.run_with(
            c,
            &["hook"],
            serde_json::to_vec(&p.payload(payload)).unwrap(),
        )
    };
    // The no-op path never looks at the clock or a lock: a bad value costs it nothing.
    for (key, value) in [
        ("TASKHOOK_NOW", "not a time"),
        ("TASKHOOK_LOCK_TIMEOUT", "soon"),
    ] {
        let run = run_env(key, value, "PostToolUse.Read.json");
        assert_eq!(
            (run.code, run.stdout.as_str(), run.stderr.as_str()),
            (0, "", ""),
            "{key}: {run:?}"
        );
    }
    // A store to reconcile reads the clock; a write locks: both report the variable.
    let dir = p.new_slug("s", &["T1"], 5);
    assert_eq!(
        p.run(&["iterative", "signal", "s", "T1", "DONE"], "").code,
        0
    );
    std::fs::remove_file(dir.join("state.json")).unwrap();
    let before = p.snapshot();
    for (key, value) in [
        ("TASKHOOK_NOW", "not a time"),
        ("TASKHOOK_LOCK_TIMEOUT", "soon"),
    ] {
        let run = run_env(key, value, "SessionStart.startup.json");
        let all = format!("{}{}", run.stdout, run.stderr);
        assert!(all.contains(key), "{key}: {run:?}");
        assert_eq!(p.snapshot(), before, "{key}: files changed");
    }
    // Commands check the environment at once.
    let mut c = p.cmd();
    c.env("TASKHOOK_NOW", "not a time");
    let run = p.run_with(c, &["status"], "");
    run.assert_one_line_error();
    assert!(run.stderr.contains("TASKHOOK_NOW"), "{run:?}");
}

#[test]
fn usage_errors_exit_two_with_clap_whole_message() {
    let p = Project::new();
    for args in [&["frobnicate"][..], &["replay"], &["status", "--nope"]] {
        let run = p.run(args, "");
        run.assert_usage_error();
    }
    let help = p.run(&["--help"], "");
    assert_eq!(help.code, 0);
    assert!(help.stdout.contains("replay"), "{help:?}");
}

#[test]
fn hook_refuses_a_terminal_stdin_instead_of_waiting() {
    let p = Project::new();
    let (mut stdin, mut stdout, mut stderr) = (std::io::empty(), Vec::new(), Vec::new());
    let mut io = taskhook::cli::Io {
        stdin: &mut stdin,
        stdin_is_terminal: true,
        color: false,
        stdout: &mut stdout,
        stderr: &mut stderr,
    };
    let env = taskhook::env::Env::from_pairs([("HOME", p.home.as_os_str())]);
    let code = taskhook::cli::run(
        ["taskhook", "hook"].map(Into::into),
        env,
        p.root.clone(),
        &mut io,
    );
    assert_eq!(code, 2, "a usage error");
    assert!(stdout.is_empty());
    let err = String::from_utf8(stderr).unwrap();
    assert_eq!(err.lines().count(), 1);
    assert!(
        err.starts_with("taskhook: `taskhook hook` reads one hook payload on stdin"),
        "{err}"
    );
}
