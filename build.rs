//! Build metadata for `kubectl ksm version`: the git commit and the build date, taken here
//! without network. Outside a git checkout (a crates.io package, a source archive) the commit
//! is "unknown"; SOURCE_DATE_EPOCH, when set, fixes the date for reproducible builds.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// Days since 1970-01-01 to (year, month, day) (the civil calendar, proleptic Gregorian).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn rfc3339(epoch: i64) -> String {
    let (days, secs) = (epoch.div_euclid(86_400), epoch.rem_euclid(86_400));
    let (y, m, d) = civil(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

fn main() {
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    println!("cargo:rerun-if-env-changed=KSM_BUILD_COMMIT");
    // The tree state follows the sources (not the docs or testdata: they do not change the
    // binary).
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    // Rebuild the metadata when HEAD moves (a commit, a checkout), when in a git checkout.
    if let Some(git_dir) = git(&["rev-parse", "--git-dir"]) {
        let head = std::path::Path::new(&git_dir).join("HEAD");
        println!("cargo:rerun-if-changed={}", head.display());
        if let Some(reference) = git(&["symbolic-ref", "-q", "HEAD"]) {
            let common = git(&["rev-parse", "--git-common-dir"]).unwrap_or(git_dir.clone());
            for dir in [&git_dir, &common] {
                let r = std::path::Path::new(dir).join(&reference);
                if r.exists() {
                    println!("cargo:rerun-if-changed={}", r.display());
                }
            }
        }
    }
    // A packager may pass the commit (a build from a source archive has no git).
    let commit = std::env::var("KSM_BUILD_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| git(&["rev-parse", "HEAD"]))
        .unwrap_or_else(|| "unknown".into());
    let tree = match git(&["status", "--porcelain", "--untracked-files=no"]) {
        _ if commit == "unknown" => "unknown",
        Some(_) => "dirty",
        None => "clean",
    };
    let epoch = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64)
        });
    println!("cargo:rustc-env=KSM_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=KSM_GIT_TREE_STATE={tree}");
    println!("cargo:rustc-env=KSM_BUILD_DATE={}", rfc3339(epoch));
    println!(
        "cargo:rustc-env=KSM_BUILD_TARGET={}",
        std::env::var("TARGET").unwrap_or_default()
    );
}
