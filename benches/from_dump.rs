//! `doctor`, `tree` and `trace` reading a dump of a fleet instead of a cluster (`--from`), for
//! both providers: 2,000 ServiceSets × 5 services over 20 namespaces (benches/support/fleet.rs),
//! saved the two ways a support engineer receives them: `kubectl get ... -o json` output (JSON
//! Lists of 1,000 objects) and a `kubectl ksm doctor --save DIR/` bundle (a YAML stream of one
//! document per object, each its JSON, in files of at most 16 MiB) written by the binary
//! itself from the JSON Lists.
//!
//! Run with `cargo bench --bench from_dump`; it builds the release binary (or takes
//! `KSM_BENCH_BIN`) and runs it as a separate process. Settings (environment):
//! `KSM_BENCH_RUNS` (default 5) timed runs after an untimed one, the median reported;
//! `KSM_BENCH_SETS` (default 2000); `KSM_BENCH_DIR`: write the dumps there and keep them (for
//! profiling by hand), instead of a temporary directory removed at the end. Every output is checked: doctor and tree see every
//! ServiceSet healthy, a ServiceSet's trace has its 5 services, a release's trace every
//! ServiceSet.

#[path = "support/fleet.rs"]
mod fleet;
#[path = "support/release.rs"]
mod release;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fleet::{SERVICES, service_name};
use serde_json::Value;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs `cmd` to completion: its wall time and standard output. A failure (exit code 1 means
/// findings, which a healthy fleet has none of) stops the benchmark.
fn run(cmd: &mut Command) -> (Duration, Vec<u8>) {
    let start = Instant::now();
    let out = cmd.stdin(Stdio::null()).output().expect("spawn");
    let wall = start.elapsed();
    assert!(
        out.status.success(),
        "{cmd:?} exited with {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    (wall, out.stdout)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The fleet as JSON Lists of 1,000 objects in `dir`; its size in bytes.
fn write_lists(objects: &[Value], dir: &Path) -> u64 {
    std::fs::create_dir_all(dir).unwrap();
    let mut bytes = 0;
    for (i, chunk) in objects.chunks(1000).enumerate() {
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": chunk});
        let text = serde_json::to_vec(&list).unwrap();
        bytes += text.len() as u64;
        std::fs::write(dir.join(format!("{i:03}.json")), text).unwrap();
    }
    bytes
}

/// What a healthy fleet's output must show, checked on the untimed run.
#[derive(Clone, Copy)]
enum Check {
    /// doctor -o json: every ServiceSet, no findings.
    Doctor,
    /// tree -o json: every ServiceSet.
    Tree,
    /// trace -o json: this many services.
    Traced(usize),
    /// Human output: not checked beyond success.
    None,
}

fn check(label: &str, stdout: &[u8], check: Check, sets: usize) {
    let doc = || -> Value { serde_json::from_slice(stdout).expect("JSON output") };
    match check {
        Check::Doctor => {
            let d = doc();
            let sum = &d["summary"];
            assert_eq!(sum["serviceSets"], sets, "{label}: {sum}");
            assert_eq!(sum["healthyServices"], sets * SERVICES, "{label}: {sum}");
            assert_eq!(d["findings"], Value::Array(vec![]), "{label}: findings");
        }
        Check::Tree => {
            let d = doc();
            let n: usize = d["clusters"]
                .as_array()
                .expect("clusters")
                .iter()
                .map(|c| c["serviceSets"].as_array().map_or(0, Vec::len))
                .sum();
            assert_eq!(n, sets, "{label}: ServiceSets in the tree");
        }
        Check::Traced(n) => {
            let got = doc()["services"].as_array().map_or(0, Vec::len);
            assert_eq!(got, n, "{label}: services traced");
        }
        Check::None => {}
    }
}

fn main() {
    let runs = env_usize("KSM_BENCH_RUNS", 5).max(1);
    let sets = env_usize("KSM_BENCH_SETS", 2000);
    let bin = release::binary();
    let keep = std::env::var_os("KSM_BENCH_DIR").map(std::path::PathBuf::from);
    let dir = keep.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("ksm-bench-from-dump-{}", std::process::id()))
    });

    let fleets: [(&str, Vec<Value>); 2] = [
        ("ksm-flux", fleet::populate(&fleet::Templates::load(), sets)),
        ("ksm-projectsveltos", fleet::sveltos::populate(sets)),
    ];
    for (provider, objects) in fleets {
        let lists = dir.join(format!("{provider}-lists"));
        let json_bytes = write_lists(&objects, &lists);
        let bundle = dir.join(format!("{provider}-bundle"));
        run(Command::new(&bin)
            .args(["doctor", "-A", "-o", "json", "--from"])
            .arg(&lists)
            .arg("--save")
            .arg(format!("{}/", bundle.display()))
            .env_clear());
        let yaml_bytes: u64 = std::fs::read_dir(&bundle)
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();

        let first = &objects
            .iter()
            .find(|o| o["kind"] == "ServiceSet")
            .expect("a ServiceSet")["metadata"];
        let set = format!("serviceset/{}", first["name"].as_str().unwrap());
        let ns = first["namespace"].as_str().unwrap();
        let release = format!("{}/{}", service_name(0), service_name(0));
        let commands: [(&str, Vec<&str>, Check); 5] = [
            (
                "doctor -A -o json",
                vec!["doctor", "-A", "-o", "json"],
                Check::Doctor,
            ),
            ("tree -A", vec!["tree", "-A"], Check::None),
            (
                "tree -A -o json",
                vec!["tree", "-A", "-o", "json"],
                Check::Tree,
            ),
            (
                "trace serviceset/NAME -n NS -o json",
                vec!["trace", &set, "-n", ns, "-o", "json"],
                Check::Traced(SERVICES),
            ),
            (
                "trace --release NS/NAME -o json",
                vec!["trace", "--release", &release, "-o", "json"],
                Check::Traced(sets),
            ),
        ];
        println!();
        println!(
            "## {provider}: {sets} ServiceSets × {SERVICES}, {} objects ({:.1} MB as JSON Lists of 1,000, {:.1} MB as a doctor --save bundle in files of 16 MiB): median of {runs} runs (all runs in s)",
            objects.len(),
            json_bytes as f64 / 1e6,
            yaml_bytes as f64 / 1e6,
        );
        println!();
        println!("| command | JSON Lists | --save bundle |");
        println!("|---|---:|---:|");
        for (label, args, what) in commands {
            let mut cells = Vec::new();
            for from in [&lists, &bundle] {
                let mut cmd = Command::new(&bin);
                cmd.args(&args).arg("--from").arg(from).env_clear();
                let (_, stdout) = run(&mut cmd);
                check(label, &stdout, what, sets);
                let times: Vec<Duration> = (0..runs).map(|_| run(&mut cmd).0).collect();
                cells.push(format!(
                    "{:.3} s ({})",
                    median(times.clone()).as_secs_f64(),
                    times
                        .iter()
                        .map(|d| format!("{:.2}", d.as_secs_f64()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            println!("| `{label}` | {} | {} |", cells[0], cells[1]);
        }
    }
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
