//! `doctor -o html` in headless Chromium (Debian's `chromium` package): the page refers to
//! nothing outside itself and loads offline with no console message; it renders as its
//! reference screenshot does (testdata/html/, within a tolerance: anti-aliasing differs from
//! one machine to another); its text, the picture's included, is selectable.
//!
//! Chromium is `KSM_CHROMIUM` or `chromium` on PATH. Without it the test says it is SKIPPED,
//! and with CI=true (or KSM_CHROMIUM=require) it fails instead: `.ci/run` installs it.
//! `KSM_UPDATE_SCREENSHOTS=1` rewrites the reference screenshots.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const NOW: &str = "2026-11-21T12:00:00Z";
const WIDTH: u32 = 1280;
const HEIGHT: u32 = 1400;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn required() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
        || std::env::var("KSM_CHROMIUM").is_ok_and(|v| v == "require")
}

/// The browser, or None (said on stderr) when there is none and none is required.
fn chromium() -> Option<PathBuf> {
    let named = std::env::var_os("KSM_CHROMIUM")
        .filter(|v| v != "require")
        .map(PathBuf::from);
    let found = named.or_else(|| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join("chromium"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            !required(),
            "headless Chromium is required here (CI=true or KSM_CHROMIUM=require): install \
             Debian's chromium package or set KSM_CHROMIUM to the browser"
        );
        eprintln!("SKIPPED: no chromium on PATH (set KSM_CHROMIUM, or install Debian's chromium)");
    }
    found
}

/// The report of a testdata/doctor case, as a file in `dir`.
fn report(case: &str, dir: &Path) -> (PathBuf, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .current_dir(root())
        .args(["doctor", "-o", "html", "--now", NOW, "--from"])
        .arg(format!("testdata/doctor/{case}"))
        .output()
        .expect("kubectl-ksm runs");
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "doctor -o html: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = String::from_utf8(out.stdout).expect("UTF-8");
    let path = dir.join(format!("{case}.html"));
    std::fs::write(&path, &html).unwrap();
    (path, html)
}

/// Runs the browser headless and offline on `page` with `args`: its stderr.
fn browse(browser: &Path, dir: &Path, page: &Path, args: &[String]) -> (String, String) {
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            // Offline: any name resolves to nothing.
            "--host-resolver-rules=MAP * ~NOTFOUND",
            &format!("--window-size={WIDTH},{HEIGHT}"),
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    // A guard against a browser that never ends, not a measure: ten minutes.
    let guard = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if guard.elapsed() > Duration::from_secs(600) {
            let _ = child.kill();
            panic!("chromium did not end in ten minutes");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Pixels of a PNG as RGBA.
fn pixels(path: &Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let rgba: Vec<u8> = match info.color_type {
        png::ColorType::Rgba => buf[..info.buffer_size()].to_vec(),
        png::ColorType::Rgb => buf[..info.buffer_size()]
            .chunks(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        other => panic!("{}: unexpected PNG colour type {other:?}", path.display()),
    };
    (info.width, info.height, rgba)
}

/// The share of pixels that differ visibly (by more than 48 in a channel).
fn difference(a: &Path, b: &Path) -> f64 {
    let (wa, ha, pa) = pixels(a);
    let (wb, hb, pb) = pixels(b);
    assert_eq!((wa, ha), (wb, hb), "screenshot sizes");
    let differing = pa
        .chunks(4)
        .zip(pb.chunks(4))
        .filter(|(x, y)| x.iter().zip(*y).any(|(p, q)| p.abs_diff(*q) > 48))
        .count();
    differing as f64 / (wa as f64 * ha as f64)
}

fn check_case(browser: &Path, case: &str, expect_selected: &[&str]) {
    let dir = std::env::temp_dir().join(format!("ksm-html-{case}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (page, html) = report(case, &dir);

    // Self-contained: nothing to fetch, no script.
    for outside in [
        "src=", "url(", "@import", "<script", "<link", "<iframe", "<object",
    ] {
        assert!(!html.contains(outside), "{case}: the page has {outside:?}");
    }
    for href in html.split("href=\"").skip(1) {
        assert!(
            href.starts_with('#'),
            "{case}: a link out of the page: {href:.40}"
        );
    }

    // Loads with no console message, and renders as the reference does.
    let shot = dir.join("screenshot.png");
    let (_, log) = browse(
        browser,
        &dir,
        &page,
        &[format!("--screenshot={}", shot.display())],
    );
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "{case}: console messages: {console:#?}");
    let reference = root().join(format!("testdata/html/{case}.png"));
    if std::env::var("KSM_UPDATE_SCREENSHOTS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(reference.parent().unwrap()).unwrap();
        std::fs::copy(&shot, &reference).unwrap();
    }
    let diff = difference(&shot, &reference);
    let kept = root().join(format!("target/html-{case}.png"));
    if diff > 0.01 {
        let _ = std::fs::copy(&shot, &kept);
    }
    assert!(
        diff <= 0.01,
        "{case}: {:.2} % of the pixels differ from {} (this run's screenshot: {}; \
         KSM_UPDATE_SCREENSHOTS=1 rewrites the reference)",
        diff * 100.0,
        reference.display(),
        kept.display()
    );

    // Selectable: everything selected, the selection's text holds the page's words, the
    // picture's labels among them.
    let selecting = dir.join("selecting.html");
    std::fs::write(
        &selecting,
        html.replace(
            "</body>",
            "<script>getSelection().selectAllChildren(document.body);\
             document.body.setAttribute('data-selected', getSelection().toString());</script>\n</body>",
        ),
    )
    .unwrap();
    let (dom, _) = browse(browser, &dir, &selecting, &["--dump-dom".to_string()]);
    let selected = dom
        .split("data-selected=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("the selection's text in the DOM");
    for text in expect_selected {
        assert!(
            selected.contains(text),
            "{case}: {text:?} not selected in {selected:.400}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_page_loads_offline_renders_and_its_text_is_selectable() {
    let Some(browser) = chromium() else {
        return;
    };
    // The picture's boxes (SVG text) and the findings (HTML).
    check_case(
        &browser,
        "multi-problem",
        &[
            "ServiceSet team-a/prod-eu",
            "Kustomization",
            "team-a/prod-eu-podinfo",
            "KSM603",
            "hint: kubectl patch statemanagementprovider ksm-flux-edge",
        ],
    );
    check_case(
        &browser,
        "sveltos-conflict",
        &["ClusterSummary", "Sveltos chain"],
    );
}
