//! Headless Chromium (Debian's `chromium`, installed by `scripts/bootstrap.sh`): loads a page
//! from a file, with a fresh profile, no network use by the page (its policy forbids it) and a
//! deadline, and returns the rendered DOM or a screenshot together with every console message.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one browser run may take.
const DEADLINE: Duration = Duration::from_secs(90);

/// What one run of the browser gave.
pub(crate) struct Run {
    /// Standard output (the DOM with `--dump-dom`).
    pub(crate) stdout: String,
    /// Console messages (`console.*`, uncaught errors, policy violations), one per line.
    pub(crate) console: Vec<String>,
}

/// The browser: `AUTOCODER_CHROMIUM`, else `chromium` on `PATH`. Fails (never skips) when
/// missing, saying how to install it.
fn executable() -> PathBuf {
    if let Some(path) = std::env::var_os("AUTOCODER_CHROMIUM") {
        return PathBuf::from(path);
    }
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("chromium"))
            .find(|candidate| candidate.is_file())
    });
    found.unwrap_or_else(|| {
        panic!(
            "chromium is not installed: run scripts/bootstrap.sh (or `apt-get install chromium`), \
             or set AUTOCODER_CHROMIUM to a Chromium binary; the report's browser tests need it"
        )
    })
}

/// Opens `page` with `args` (e.g. `--dump-dom`, `--screenshot=...`).
#[allow(clippy::disallowed_methods)] // a test helper starts the browser
pub(crate) fn open(page: &Path, args: &[String]) -> Run {
    let profile_dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(executable())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile_dir.path().display()))
        .args(args)
        .arg(format!("file://{}", page.canonicalize().unwrap().display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start chromium: {e}; run scripts/bootstrap.sh"));
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).unwrap();
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).unwrap();
        text
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > DEADLINE {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!(
                "chromium did not finish within {DEADLINE:?} on {}",
                page.display()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = out.join().unwrap();
    let stderr = err.join().unwrap();
    assert!(status.success(), "chromium failed ({status}):\n{stderr}");
    let console = stderr
        .lines()
        .filter(|line| line.contains(":CONSOLE"))
        .map(str::to_owned)
        .collect();
    Run { stdout, console }
}

/// The rendered DOM of `page`.
pub(crate) fn dom(page: &Path) -> Run {
    open(page, &["--dump-dom".to_owned()])
}

/// A `width` x `height` screenshot of `page`, as PNG at `png`.
pub(crate) fn screenshot(page: &Path, png: &Path, width: u32, height: u32) -> Run {
    open(
        page,
        &[
            format!("--screenshot={}", png.display()),
            format!("--window-size={width},{height}"),
        ],
    )
}
