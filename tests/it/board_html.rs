//! `taskhook board --html`: the page rendered by headless Chromium (the DOM it builds holds
//! every store, unit and state; a screenshot that is not blank; nothing loaded from outside
//! the page), hostile text inert in the rendered DOM, 10,000 units in a page of a few MB, and
//! `--watch` rewriting the page when the state changes.
//!
//! Without a Chromium binary the Chromium parts are skipped with a printed reason (`.ci/run`
//! installs Debian's `chromium`; it may be missing only where it cannot be installed).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::board::{assert_inert, big_store, five_stores, hostile_stores, ok, which, UNITS};
use crate::common::Project;

/// The Chromium binary, when one is on PATH.
fn chromium() -> Option<PathBuf> {
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
        "chrome",
        "headless_shell",
    ]
    .iter()
    .find_map(|n| which(n))
}

/// Runs headless Chromium on a page with `args`; returns its stdout. `None` (and a printed
/// reason) when there is no Chromium.
fn chrome(test: &str, page: &Path, args: &[&str]) -> Option<String> {
    let Some(bin) = chromium() else {
        eprintln!(
            "SKIPPED {test} (the Chromium part): no Chromium binary on PATH (chromium, \
             chromium-browser, google-chrome); `apt-get install chromium` (.ci/run does)"
        );
        return None;
    };
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The DOM Chromium built for a page.
fn dom(test: &str, page: &Path) -> Option<String> {
    chrome(test, page, &["--dump-dom"])
}

/// A screenshot of the page, 1280×900: its IHDR size and its compressed image data.
fn screenshot(test: &str, page: &Path) -> Option<((u32, u32), Vec<u8>)> {
    let png = page.with_extension("png");
    chrome(
        test,
        page,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1280,900",
        ],
    )?;
    Some(png_parts(&std::fs::read(&png).unwrap()))
}

/// A PNG's width and height and its IDAT bytes (decoded no further).
fn png_parts(png: &[u8]) -> ((u32, u32), Vec<u8>) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let mut at = 8;
    let mut size = (0, 0);
    let mut idat = Vec::new();
    while at + 8 <= png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        let kind = &png[at + 4..at + 8];
        let data = &png[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                size = (
                    u32::from_be_bytes(data[0..4].try_into().unwrap()),
                    u32::from_be_bytes(data[4..8].try_into().unwrap()),
                )
            }
            b"IDAT" => idat.extend_from_slice(data),
            _ => {}
        }
        at += 12 + len;
    }
    (size, idat)
}

/// The page references nothing outside itself: no tag loads or links anything (no `src`,
/// `href`, `srcset`, `action`, `data` attribute; no `link`, `img`, `iframe`, `object`, `embed`
/// element), its style imports nothing and its only `url()` are its own fragments, and its
/// policy forbids any fetch. Text is not markup: a store's `<img src=…>` is escaped text.
fn assert_self_contained(what: &str, html: &str) {
    let lower = html.to_lowercase();
    let mut rest = lower.as_str();
    while let Some(i) = rest.find('<') {
        let tag = &rest[i + 1..];
        let end = tag.find('>').unwrap_or(tag.len());
        let inside = &tag[..end];
        let name: String = inside
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        assert!(
            ![
                "link", "img", "iframe", "object", "embed", "frame", "audio", "video", "source",
                "base", "form"
            ]
            .contains(&name.as_str()),
            "{what}: a <{name}> element"
        );
        for attr in [
            " src=",
            " href=",
            " srcset=",
            " action=",
            " data=",
            " xlink:href=",
        ] {
            assert!(!inside.contains(attr), "{what}: {attr:?} in <{inside}>");
        }
        for (k, _) in inside.match_indices("url(") {
            assert!(inside[k..].starts_with("url(#"), "{what}: <{inside}>");
        }
        rest = &tag[end..];
    }
    let style = lower
        .split("<style>")
        .nth(1)
        .and_then(|s| s.split("</style>").next())
        .unwrap_or("");
    assert!(
        !style.contains("@import") && !style.contains("url("),
        "{what}: style"
    );
    assert!(
        html.contains("content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'\""),
        "{what}: the page's policy"
    );
}

/// The column (`data-phase`) each card's reference sits in, from a page or its DOM.
fn columns(html: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for section in html.split("<section class=\"col ").skip(1) {
        let phase = section.split('"').next().unwrap().to_string();
        let body = section.split("</section>").next().unwrap();
        for li in body.split("<li ").skip(1) {
            let b = li
                .split("<b>")
                .nth(1)
                .unwrap()
                .split("</b>")
                .next()
                .unwrap();
            out.push((b.to_string(), phase.clone()));
        }
    }
    out
}

fn phase_of(label: &str) -> &'static str {
    match label {
        "ready" => "ready",
        "in progress" => "in_progress",
        "waiting for a person" => "person",
        "blocked" => "blocked",
        _ => "done",
    }
}

#[test]
fn chromium_renders_every_store_unit_and_state_and_nothing_comes_from_outside() {
    let p = Project::new();
    five_stores(&p);
    let page = p.tmp.path().join("board.html");
    let r = ok(&p, &["board", "--html", page.to_str().unwrap()]);
    assert!(r.stdout.contains("wrote "), "{r:?}");
    assert!(r.stdout.contains("(15 units, 5 stores)"), "{r:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("Content-Security-Policy\" content=\"default-src 'none'"));
    assert!(html.contains("<time datetime=\"2026-03-01T12:00:00Z\">"));
    assert_self_contained("page", &html);
    // The same page on stdout.
    let out = ok(&p, &["board", "--html", "-"]).stdout;
    assert_eq!(out.trim_end(), html.trim_end());
    let Some(dom) = dom("board_html", &page) else {
        return;
    };
    assert_self_contained("rendered DOM", &dom);
    let placed = columns(&dom);
    for (unit, col) in UNITS {
        assert!(
            placed.contains(&(unit.to_string(), phase_of(col).to_string())),
            "{unit} not in {col}: {placed:?}"
        );
    }
    for store in [
        "projects · web",
        "iterative · auth",
        "execute · run",
        "cdd · work",
        "claude-tasks · proj",
    ] {
        assert!(dom.contains(store), "{store}");
    }
    for state in [
        "IN_PROGRESS",
        "PENDING",
        "completed",
        "stop not_reached",
        "session aaaaaaaa",
    ] {
        assert!(dom.contains(state), "{state}");
    }
    // The script ran: the counts it writes match the cards, and none is hidden.
    assert!(dom.contains("ready <span class=\"n\">5</span>"), "{dom}");
    assert!(
        !dom.contains("<li hidden") && !dom.contains(" hidden=\"\""),
        "a card is hidden"
    );
    // The graph is drawn: a node per unit, an edge per dependency.
    assert_eq!(dom.matches("<g class=\"n ").count(), 15);
    assert_eq!(dom.matches("<path class=\"e ").count(), 10);
    // A screenshot that is not blank: its image data is several times a blank page's.
    let blank = p.tmp.path().join("blank.html");
    std::fs::write(&blank, "<!DOCTYPE html><html><body></body></html>").unwrap();
    let ((w, h), ours) = screenshot("board_html", &page).unwrap();
    let (_, white) = screenshot("board_html", &blank).unwrap();
    assert_eq!((w, h), (1280, 900));
    assert!(
        ours.len() > 4 * white.len() && ours.len() > 20_000,
        "the screenshot looks blank: {} bytes of image data, a blank page {}",
        ours.len(),
        white.len()
    );
    let variety = {
        let mut seen = [false; 256];
        ours.iter().for_each(|b| seen[*b as usize] = true);
        seen.iter().filter(|s| **s).count()
    };
    assert!(variety > 200, "{variety}");
}

#[test]
fn hostile_text_is_inert_in_the_rendered_page() {
    let p = Project::new();
    hostile_stores(&p);
    let page = p.tmp.path().join("evil.html");
    ok(&p, &["board", "--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_inert("page", &html);
    assert_self_contained("page", &html);
    let Some(dom) = dom("board_html hostile", &page) else {
        return;
    };
    // Chromium built exactly one script element (the page's own) and no image.
    assert_eq!(dom.matches("<script>").count(), 1, "{dom}");
    assert!(!dom.contains("<img"));
    assert!(
        dom.contains("&lt;script&gt;alert('x')&lt;/script&gt;"),
        "{dom}"
    );
    assert!(dom.contains("\\u{1b}]0;pwned"));
    assert!(dom.contains("problem: state.json was unusable"));
    assert!(dom.contains("cannot be read: refusing to read"));
    // The 3,000-character id and 20,000-character title are cut.
    assert!(!dom.contains(&"x".repeat(200)));
    assert!(!dom.contains(&"y".repeat(300)));
}

#[test]
fn ten_thousand_units_make_a_page_of_a_few_mb_that_renders() {
    let p = Project::new();
    big_store(&p, 10_000);
    let page = p.tmp.path().join("big.html");
    let started = Instant::now();
    ok(&p, &["board", "--html", page.to_str().unwrap()]);
    let took = started.elapsed();
    let size = std::fs::metadata(&page).unwrap().len();
    eprintln!("board --html of 10,000 units: {size} bytes in {took:?} (debug build)");
    assert!(size < 4 << 20, "{size} bytes");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("10000 units: too many to draw here"),
        "graph cut"
    );
    assert_eq!(html.matches("<li ").count(), 10_000);
    let Some(dom) = dom("board_html 10,000", &page) else {
        return;
    };
    assert!(dom.contains("<b>proj/B00001</b>"));
    assert!(dom.contains("<b>proj/B09999</b>"));
    assert!(dom.contains("done <span class=\"n\">1000</span>"), "counts");
}

#[test]
fn watch_rewrites_the_page_when_the_state_changes() {
    let p = Project::new();
    five_stores(&p);
    let page = p.tmp.path().join("live.html");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("taskhook"))
        .args(["board", "--html", page.to_str().unwrap(), "--watch"])
        .current_dir(&p.root)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &p.home)
        .env("TASKHOOK_NOW", crate::common::NOW)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !page.exists() {
        assert!(Instant::now() < deadline, "no page written");
        std::thread::sleep(Duration::from_millis(50));
    }
    let first = std::fs::read_to_string(&page).unwrap();
    assert!(first.contains(" data-watch"), "the page reloads itself");
    assert!(first.contains("location.reload()"));
    let mut c = p.cmd();
    c.env("CLAUDE_CODE_SESSION_ID", crate::board::A);
    let r = p.run_with(c, &["done", "web/T1"], "");
    assert_eq!(r.code, 0, "{r:?}");
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let now = std::fs::read_to_string(&page).unwrap_or_default();
        if now != first && columns(&now).contains(&("web/T1".into(), "done".into())) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the page was not rewritten within 2 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // SIGTERM ends it cleanly: 128 + 15.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143), "{status:?}");
    let mut said = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut said).unwrap();
    assert!(said.contains("rewrote it at"), "{said}");
}
