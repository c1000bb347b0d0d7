//! The embedded schemas: every fixture that should pass passes, every one that should fail
//! fails, no schema file is left unregistered, and `taskhook schema` prints them.

use std::path::PathBuf;

use serde_json::Value;
use taskhook::store::schema::{check, SCHEMAS};

use crate::common::Project;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_schema_file_is_embedded() {
    let mut on_disk: Vec<String> = std::fs::read_dir(root().join("schemas"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|n| n.strip_suffix(".schema.json").map(str::to_string))
        .collect();
    on_disk.sort();
    let mut embedded: Vec<String> = SCHEMAS.iter().map(|s| s.name.to_string()).collect();
    embedded.sort();
    assert_eq!(on_disk, embedded);
}

#[test]
fn fixtures_pass_and_fail_as_named() {
    let mut checked = 0;
    for s in SCHEMAS {
        let dir = root().join("tests/fixtures/schemas").join(s.name);
        for (kind, want_valid) in [("valid", true), ("invalid", false)] {
            let files: Vec<_> = std::fs::read_dir(dir.join(kind))
                .unwrap_or_else(|e| panic!("{}: {e}", s.name))
                .map(|e| e.unwrap().path())
                .collect();
            assert!(!files.is_empty(), "{} has no {kind} fixtures", s.name);
            for f in files {
                let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
                let result = check(s.name, &v).unwrap();
                assert_eq!(result.is_ok(), want_valid, "{}: {result:?}", f.display());
                checked += 1;
            }
        }
    }
    assert!(checked >= 50, "{checked}");
}

#[test]
fn schema_command_prints_one_or_all() {
    let p = Project::new();
    let run = p.run(&["schema", "execute-state"], "");
    assert_eq!(run.code, 0);
    assert_eq!(
        run.json()["$id"],
        "https://taskhook.dev/schemas/execute-state.schema.json"
    );
    let all = p.run(&["schema"], "").json();
    assert_eq!(all.as_object().unwrap().len(), SCHEMAS.len());
    let bad = p.run(&["schema", "nope"], "");
    bad.assert_one_line_error();
    assert!(bad.stderr.contains("claude-tasks"), "{bad:?}");
}
