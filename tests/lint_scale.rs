//! Regression: `lint`'s human output must stay linear in the number of findings. With 1,000
//! SMPs and 4,000 warnings in one file it once took 57 s while `-o json` took 0.3 s: every
//! rendered excerpt scanned the file from its start. The test compares the two formats on the
//! same input in the same process environment, in CPU time (what the process itself did, not
//! how long a loaded machine made it wait), so it measures the renderer, not the machine.

use std::process::{Command, Stdio};
use std::time::Duration;

use insta_cmd::get_cargo_bin;

/// One SMP whose adapter and three provisioners all have unguarded rules (KSM204 each).
fn smp(i: usize) -> String {
    let mut doc = format!(
        "---\napiVersion: k0rdent.mirantis.com/v1beta1\nkind: StateManagementProvider\n\
         metadata:\n  name: ksm-{i}\nspec:\n  adapter:\n    apiVersion: apps/v1\n    kind: Deployment\n\
         \x20   name: adapter-{i}\n    namespace: kcm-system\n    readinessRule: self.status.availableReplicas == self.status.replicas\n\
         \x20 provisioner:\n"
    );
    for c in [
        "helm-controller",
        "kustomize-controller",
        "source-controller",
    ] {
        doc.push_str(&format!(
            "  - apiVersion: apps/v1\n    kind: Deployment\n    name: {c}\n    namespace: flux-{i}\n    readinessRule: self.status.readyReplicas > 0\n"
        ));
    }
    doc.push_str(&format!(
        "  selector:\n    matchLabels:\n      ksm.k0rdent.mirantis.com/adapter: adapter-{i}\n"
    ));
    doc
}

fn run(path: &std::path::Path, json: bool) -> (Duration, String) {
    let mut cmd = Command::new(get_cargo_bin("kubectl-ksm"));
    cmd.env_clear().arg("lint").arg(path).arg("--color=never");
    if json {
        cmd.args(["-o", "json"]);
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let reader = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            r.read_to_end(&mut v).unwrap();
            v
        })
    };
    let stdout = reader(Box::new(child.stdout.take().unwrap()));
    let stderr = reader(Box::new(child.stderr.take().unwrap()));
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 writes the status and the child's resource usage into our variables.
    assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut usage) }, pid);
    // The child was reaped with wait4: keep std from waiting for it again.
    std::mem::forget(child);
    let cpu = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let took = cpu(usage.ru_utime) + cpu(usage.ru_stime);
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    assert!(
        libc::WIFEXITED(status) && matches!(libc::WEXITSTATUS(status), 0 | 1),
        "{}",
        String::from_utf8_lossy(&stderr)
    );
    (took, String::from_utf8_lossy(&stdout).into_owned())
}

#[test]
fn human_lint_output_of_thousands_of_findings_is_as_fast_as_json() {
    let dir = std::env::temp_dir().join(format!("ksm-lint-scale-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("smps.yaml");
    std::fs::write(&path, (0..1_000).map(smp).collect::<String>()).unwrap();

    let (json_time, json) = run(&path, true);
    let (human_time, human) = run(&path, false);
    let _ = std::fs::remove_dir_all(&dir);

    let findings = json.matches("\"code\": \"KSM204\"").count();
    assert!(findings >= 4_000, "{findings} KSM204 findings");
    assert!(human.contains("4000 warnings") || human.contains(&format!("{findings} warnings")));
    // The same findings, drawn with excerpts: a constant factor more work than JSON. When
    // each excerpt scanned the file from its start, this ratio was about 190.
    assert!(
        human_time <= json_time * 6 + Duration::from_secs(5),
        "human output took {human_time:?} of CPU, JSON {json_time:?}"
    );
}
