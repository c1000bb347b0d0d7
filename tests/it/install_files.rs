//! `taskhook install` and the files around the settings: backups with the original's
//! permission bits, a symlinked user settings file written through (issue 9 item 8), links out
//! of the project and special files refused, the home folder refused, the `.gitignore` recipe.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::json;

use crate::common::Project;
use crate::install::{backups, names, read_json, EVENTS};

#[test]
fn backup_keeps_the_permission_bits() {
    let p = Project::new();
    let path = p.write(
        ".claude/settings.json",
        "{\"env\": {\"API_KEY\": \"secret\"}}\n",
    );
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(p.run(&["install"], "").code, 0);
    let b = backups(&p.root.join(".claude"));
    let mode = |f: &Path| std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&p.root.join(".claude").join(&b[0])), 0o600);
    assert_eq!(mode(&path), 0o600, "the new file keeps them too");
}

#[test]
fn project_install_from_the_home_folder_is_refused() {
    let p = Project::new();
    std::fs::create_dir_all(p.home.join(".claude")).unwrap();
    let user_settings = p.home.join(".claude/settings.json");
    std::fs::write(&user_settings, "{\"model\": \"opus\"}\n").unwrap();
    for args in [
        &["install"][..],
        &["install", "--local"],
        &["install", "--uninstall"],
    ] {
        let mut c = p.cmd();
        c.current_dir(&p.home);
        let run = p.run_with(c, args, "");
        run.assert_one_line_error();
        assert!(run.stderr.contains("--user"), "{run:?}");
        assert!(run.stderr.contains("home folder"), "{run:?}");
    }
    assert_eq!(
        std::fs::read_to_string(&user_settings).unwrap(),
        "{\"model\": \"opus\"}\n"
    );
    assert_eq!(names(&p.home.join(".claude")), ["settings.json"]);
    let mut c = p.cmd();
    c.current_dir(&p.home);
    assert_eq!(p.run_with(c, &["install", "--user"], "").code, 0);
    assert_eq!(read_json(&user_settings)["model"], "opus");
}

/// Issue 9 item 8: a dotfiles link stays a link; the content goes to its target.
#[test]
fn user_install_writes_through_a_symlinked_settings_file() {
    let p = Project::new();
    let dotfiles = p.tmp.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    let real = dotfiles.join("claude-settings.json");
    std::fs::write(&real, "{\n  \"model\": \"opus\"\n}\n").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::fs::create_dir_all(p.home.join(".claude")).unwrap();
    let link = p.home.join(".claude/settings.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let run = p.run(&["install", "--user"], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("a link; written to"), "{run:?}");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_link(&link).unwrap(), real);
    let s = read_json(&real);
    assert_eq!(s["model"], "opus");
    assert_eq!(s["hooks"].as_object().unwrap().len(), EVENTS.len());
    assert_eq!(
        std::fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o640
    );
    assert_eq!(
        names(&dotfiles),
        ["claude-settings.json"],
        "no temp file left"
    );
    let b = backups(&p.home.join(".claude"));
    assert_eq!(b.len(), 1, "backup beside the path the user knows");
    assert_eq!(
        std::fs::read_to_string(p.home.join(".claude").join(&b[0])).unwrap(),
        "{\n  \"model\": \"opus\"\n}\n"
    );

    // A dangling link is refused, and stays as it was.
    std::fs::remove_file(&real).unwrap();
    let run = p.run(&["install", "--user"], "");
    run.assert_one_line_error();
    assert!(run.stderr.contains("does not exist"), "{run:?}");
    assert!(!real.exists());
}

#[test]
fn project_links_are_written_through_only_inside_the_project() {
    let p = Project::new();
    let victim = p.tmp.path().join("victim.json");
    std::fs::write(&victim, "{}\n").unwrap();
    std::fs::create_dir_all(p.root.join(".claude")).unwrap();
    let link = p.root.join(".claude/settings.json");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let run = p.run(&["install"], "");
    run.assert_one_line_error();
    assert!(run.stderr.contains("outside the project"), "{run:?}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "{}\n");
    assert_eq!(names(&p.root.join(".claude")), ["settings.json"]);

    // A link to a file inside the project is a layout choice: written through.
    std::fs::remove_file(&link).unwrap();
    let inside = p.write("config/claude.json", "{}\n");
    std::os::unix::fs::symlink("../config/claude.json", &link).unwrap();
    assert_eq!(p.run(&["install"], "").code, 0);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        read_json(&inside)["hooks"].as_object().unwrap().len(),
        EVENTS.len()
    );

    // A FIFO is not read (no hang), a giant file is not read (no OOM).
    std::fs::remove_file(&link).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(&link)
        .status()
        .unwrap();
    assert!(fifo.success());
    let run = p.run(&["install"], "");
    run.assert_one_line_error();
    assert!(run.stderr.contains("not a regular file"), "{run:?}");
}

#[test]
fn gitignore_recipe_is_offered_and_appended_on_request() {
    let p = Project::new();
    p.write(".gitignore", "/target\n.claude/*.taskhook-backup-*");
    let run = p.run(&["install"], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(".gitignore lacks these lines"),
        "{run:?}"
    );
    assert!(run.stdout.contains("  .*.lock\n"), "{run:?}");
    assert!(
        !run.stdout.contains("  .claude/*.taskhook-backup-*"),
        "{run:?}"
    );
    assert!(
        run.stdout.contains("taskhook install --gitignore"),
        "{run:?}"
    );
    assert_eq!(
        std::fs::read_to_string(p.root.join(".gitignore")).unwrap(),
        "/target\n.claude/*.taskhook-backup-*",
        "offering writes nothing"
    );
    let dry = p.run(&["install", "--gitignore", "--dry-run"], "");
    assert!(dry.stdout.contains("Would add to"), "{dry:?}");
    let run = p.run(&["install", "--gitignore"], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("Added 8 lines to"), "{run:?}");
    let text = std::fs::read_to_string(p.root.join(".gitignore")).unwrap();
    assert!(
        text.starts_with("/target\n.claude/*.taskhook-backup-*\n\n# taskhook: "),
        "{text}"
    );
    for l in [
        ".*.lock",
        "*.corrupt-*",
        ".claude/settings.local.json",
        ".claude/taskhook/agents.json",
        ".claude/taskhook/journal.jsonl*",
        ".claude/taskhook/applied.json",
        ".claude/taskhook/claims.json",
        ".execute-state.json.last-good",
    ] {
        assert!(text.lines().any(|x| x == l), "{l} in {text}");
    }
    let again = p.run(&["install", "--gitignore", "--json"], "");
    assert_eq!(again.json()["gitignore"]["missing"], json!([]));
    assert_eq!(
        std::fs::read_to_string(p.root.join(".gitignore")).unwrap(),
        text
    );
    // The recipe really ignores what taskhook leaves behind.
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(&p.root)
            .env("HOME", &p.home)
            .output()
            .unwrap()
    };
    std::fs::remove_dir_all(p.root.join(".git")).unwrap();
    assert!(git(&["init", "-q"]).status.success());
    for f in [
        ".claude/iterative/x/.taskhook.lock",
        "tasks/.tasks.json.lock",
        ".claude/iterative/x/state.json.corrupt-20260301T120000Z",
        ".claude/settings.json.taskhook-backup-20260301T120000Z-2",
        ".claude/taskhook/journal.jsonl.1",
        ".claude/taskhook/applied.json",
        ".claude/taskhook/claims.json",
        "docs/tasks/auth/.execute-state.json.last-good",
    ] {
        let out = git(&["check-ignore", "-q", "--no-index", f]);
        assert!(out.status.success(), "{f} is not ignored by\n{text}");
    }
    let out = git(&[
        "check-ignore",
        "-q",
        "--no-index",
        ".claude/iterative/x/state.json",
    ]);
    assert!(!out.status.success(), "state is not ignored");
}

#[test]
fn an_unreadable_gitignore_costs_only_the_offer_unless_asked_for() {
    let p = Project::new();
    let gi = p.root.join(".gitignore");
    let made = std::process::Command::new("mkfifo")
        .arg(&gi)
        .status()
        .unwrap();
    assert!(made.success());
    let run = p.run(&["install", "--gitignore"], "");
    run.assert_one_line_error();
    assert!(run.stderr.contains("not a regular file"), "{run:?}");
    assert!(!p.root.join(".claude").exists(), "nothing written");
    let run = p.run(&["install"], "");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("note: no .gitignore check: "),
        "{run:?}"
    );
    assert!(p.root.join(".claude/settings.json").exists());
    let un = p.run(&["install", "--uninstall"], "");
    assert_eq!(un.code, 0);
    let again = p.run(&["install", "--uninstall"], "");
    assert!(
        again
            .stdout
            .contains("has no taskhook hooks; nothing changed"),
        "{again:?}"
    );
}
