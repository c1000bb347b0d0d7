//! `install.sh`, driven with a stand-in `cargo` on PATH (it records its arguments and copies
//! the test build of taskhook where `cargo install` would put it), so the script's own logic is
//! tested without a multi-minute release build: progress shown (no `--quiet`), where the
//! binary went and whether that is on PATH, `--dry-run` installing nothing, hooks registered
//! only with `--register`, the static build's arguments on x86_64 Linux with glibc (a stand-in
//! `rustc` names the host) and the dynamic build when that fails or is declined.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::common::{Project, Run};

struct Setup {
    p: Project,
    fake_bin: PathBuf,
    cargo_home: PathBuf,
    log: PathBuf,
}

fn setup() -> Setup {
    let p = Project::new();
    let fake_bin = p.tmp.path().join("fakebin");
    std::fs::create_dir_all(&fake_bin).unwrap();
    let cargo = fake_bin.join("cargo");
    std::fs::write(
        &cargo,
        "#!/bin/sh\necho \"$@\" >> \"$FAKE_CARGO_LOG\"\n\
         case \" $* \" in *\" --target \"*) [ -n \"$FAKE_STATIC_FAILS\" ] && exit 101 ;; esac\n\
         mkdir -p \"$CARGO_HOME/bin\" && cp \"$FAKE_TASKHOOK\" \"$CARGO_HOME/bin/taskhook\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let rustc = fake_bin.join("rustc");
    std::fs::write(
        &rustc,
        "#!/bin/sh\necho \"rustc 1.95.0\"\necho \"host: ${FAKE_HOST:-x86_64-unknown-linux-gnu}\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&rustc, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cargo_home = p.tmp.path().join("cargo");
    let log = p.tmp.path().join("cargo.log");
    Setup {
        p,
        fake_bin,
        cargo_home,
        log,
    }
}

/// The static build's extra arguments for cargo on x86_64 Linux with glibc, as the dry run
/// shows them.
const STATIC: &str =
    "--target x86_64-unknown-linux-gnu --config 'target.x86_64-unknown-linux-gnu.rustflags = \
     [\"-C\", \"target-feature=+crt-static\", \"-C\", \"relocation-model=static\"]'";

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh")
}

/// Runs install.sh from the project folder with `path` as PATH.
fn run(s: &Setup, path: &str, args: &[&str]) -> Run {
    run_env(s, path, args, &[])
}

/// [`run`] with extra environment variables.
fn run_env(s: &Setup, path: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut c = std::process::Command::new("bash");
    c.arg(script())
        .args(args)
        .current_dir(&s.p.root)
        .env_clear()
        .env("PATH", path)
        .env("HOME", &s.p.home)
        .env("SHELL", "/bin/zsh")
        .env("CARGO_HOME", &s.cargo_home)
        .env("FAKE_CARGO_LOG", &s.log)
        .env("FAKE_TASKHOOK", env!("CARGO_BIN_EXE_taskhook"))
        .envs(env.iter().copied());
    let out = c.output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn base_path(s: &Setup) -> String {
    format!("{}:/usr/bin:/bin", s.fake_bin.display())
}

#[test]
fn dry_run_installs_nothing_and_says_what_it_would_do() {
    let s = setup();
    let r = run(&s, &base_path(&s), &["--dry-run", "--register", "--local"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!s.log.exists(), "cargo ran in a dry run");
    assert!(!s.cargo_home.exists(), "something was installed");
    assert!(!s.p.root.join(".claude").exists(), "hooks registered");
    let repo = env!("CARGO_MANIFEST_DIR");
    assert!(
        r.stdout.contains(&format!(
            "Would run: cargo install --path {repo} --locked {STATIC}"
        )),
        "{r:?}"
    );
    let bindir = s.cargo_home.join("bin");
    assert!(r
        .stdout
        .contains(&format!("Would install: {}/taskhook", bindir.display())));
    assert!(r.stdout.contains("Would run in"), "{r:?}");
    assert!(r.stdout.contains("taskhook install --local"), "{r:?}");
}

#[test]
fn install_shows_progress_says_where_and_gives_the_path_line() {
    let s = setup();
    let r = run(&s, &base_path(&s), &["--no-demo"]);
    assert_eq!(r.code, 0, "{r:?}");
    let args = std::fs::read_to_string(&s.log).unwrap();
    assert_eq!(
        args.trim(),
        format!(
            "install --path {} --locked {}",
            env!("CARGO_MANIFEST_DIR"),
            STATIC.replace('\'', "")
        ),
        "no --quiet: cargo's progress is shown"
    );
    let bindir = s.cargo_home.join("bin");
    assert!(bindir.join("taskhook").exists());
    assert!(
        r.stdout
            .contains(&format!("Installed: {}/taskhook", bindir.display())),
        "{r:?}"
    );
    assert!(
        r.stdout
            .contains(&format!("{} is NOT on your PATH", bindir.display())),
        "{r:?}"
    );
    assert!(
        r.stdout.contains(&format!(
            "echo 'export PATH=\"{}:$PATH\"' >> ~/.zshrc",
            bindir.display()
        )),
        "{r:?}"
    );
    assert!(
        r.stdout.contains("cd my-project && taskhook install"),
        "{r:?}"
    );
    assert!(
        !s.p.root.join(".claude").exists(),
        "registered without being asked"
    );

    // On PATH: said so, no line to add.
    let path = format!("{}:{}", bindir.display(), base_path(&s));
    let r = run(&s, &path, &["--no-demo"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout
            .contains(&format!("{} is on your PATH.", bindir.display())),
        "{r:?}"
    );
    assert!(!r.stdout.contains("NOT on your PATH"), "{r:?}");
}

#[test]
fn register_runs_taskhook_install_in_the_current_folder() {
    let s = setup();
    let r = run(&s, &base_path(&s), &["--no-demo", "--register", "--local"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        s.p.root.join(".claude/settings.local.json").exists(),
        "{r:?}"
    );
    assert!(!s.p.root.join(".claude/settings.json").exists(), "{r:?}");
    assert!(r.stdout.contains("Registered taskhook in"), "{r:?}");
}

#[test]
fn default_run_ends_with_the_demo_or_next_steps_and_errors_are_clear() {
    let s = setup();
    let r = run(&s, &base_path(&s), &[]);
    assert_eq!(r.code, 0, "{r:?}");
    let bin = s.cargo_home.join("bin/taskhook");
    let has_demo = std::process::Command::new(&bin)
        .args(["demo", "--help"])
        .output()
        .unwrap()
        .status
        .success();
    if has_demo {
        assert!(r.stdout.contains("taskhook demo: a tour"), "{r:?}");
        assert!(!r.stdout.contains("Next: register taskhook"), "{r:?}");
    } else {
        assert!(r.stdout.contains("Next: register taskhook"), "{r:?}");
    }
    let r = run(&s, &base_path(&s), &["--frobnicate"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("unknown option '--frobnicate'"), "{r:?}");

    // No cargo: one clear line. PATH holds only what the script needs besides cargo.
    let tools = s.p.tmp.path().join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    for t in ["bash", "dirname", "sed"] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(t))
            .find(|p| p.exists())
            .unwrap();
        std::os::unix::fs::symlink(found, tools.join(t)).unwrap();
    }
    let r = run(&s, tools.to_str().unwrap(), &[]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("cargo not found"), "{r:?}");
}

#[test]
fn static_build_only_where_it_applies_and_a_dynamic_one_when_it_fails() {
    let repo = env!("CARGO_MANIFEST_DIR");
    let plain = format!("install --path {repo} --locked");
    let pie = format!(
        "{plain} --target x86_64-unknown-linux-gnu --config \
         target.x86_64-unknown-linux-gnu.rustflags = [\"-C\", \"target-feature=+crt-static\"]"
    );
    let cases = [
        (("FAKE_HOST", "aarch64-apple-darwin"), &plain),
        (("TASKHOOK_STATIC", "0"), &plain),
        (("RUSTFLAGS", "-C target-cpu=native"), &plain),
        (("TASKHOOK_PIE", "1"), &pie),
    ];
    for (env, want) in cases {
        let s = setup();
        let r = run_env(&s, &base_path(&s), &["--no-demo"], &[env]);
        assert_eq!(r.code, 0, "{env:?}: {r:?}");
        let args = std::fs::read_to_string(&s.log).unwrap();
        assert_eq!(args.trim_end(), want.as_str(), "{env:?}");
    }

    // The static build fails: said on stderr, then the dynamic build, installed.
    let s = setup();
    let r = run_env(
        &s,
        &base_path(&s),
        &["--no-demo"],
        &[("FAKE_STATIC_FAILS", "1")],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let args = std::fs::read_to_string(&s.log).unwrap();
    let lines: Vec<_> = args.lines().collect();
    assert_eq!(lines.len(), 2, "{args}");
    assert!(lines[0].contains("--target"), "{args}");
    assert_eq!(lines[1], plain);
    assert!(r.stderr.contains("the static build failed"), "{r:?}");
    assert!(s.cargo_home.join("bin/taskhook").exists());
}
