//! `kubectl ksm doctor`: diagnose stuck or failed services, live or from a saved dump (the
//! same pure diagnosis either way).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde_json::Value;

use super::input;
use super::{
    CliError, CliResult, EXIT_FINDINGS, EXIT_OK, GlobalArgs, Io, OutputFormat, SelectorArg,
    formats, selector_flag,
};
use crate::cluster::Cluster;
use crate::core::doctor::{self, Options};
use crate::core::provider;
use crate::core::secret;
use crate::core::tree::Focus;
use crate::output::{doctor as render, github, sarif, yaml};

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  kubectl get statemanagementproviders,servicesets,servicetemplates,helmreleases,kustomizations,\\
helmcharts,helmrepositories,gitrepositories,ocirepositories,buckets -A -o yaml > dump.yaml
  kubectl ksm doctor -A
  kubectl ksm doctor dev-cluster -n kcm-system
  kubectl ksm doctor clusterdeployment/dev-cluster -n kcm-system
  kubectl ksm doctor mcs/ingress
  kubectl ksm doctor -n kcm-system --serviceset dev-cluster --stuck-after 30m
  kubectl ksm doctor -A -l team=platform
  kubectl ksm doctor -A --save bundle.yaml   # later: kubectl ksm doctor --from bundle.yaml
  kubectl ksm doctor --from dump.yaml
  kubectl ksm doctor --from dump.yaml -n kcm-system --serviceset dev-cluster -o json

Live, it reads the cluster of the current kubeconfig context (read-only: get and list only,
one list per kind). Exit codes: 0 healthy, 1 problems found, 2 could not run.")]
pub struct DoctorArgs {
    /// Only the ServiceSet of this name (as --serviceset), or the ServiceSets of one
    /// ClusterDeployment or MultiClusterService: serviceset/NAME, clusterdeployment/NAME
    /// (cld/NAME), multiclusterservice/NAME (mcs/NAME; its ServiceSets in every namespace)
    #[arg(value_name = "[KIND/]NAME", conflicts_with = "serviceset", value_parser = focus_arg)]
    pub name: Option<Focus>,
    /// Diagnose saved objects instead of the cluster: files or directories of
    /// `kubectl get ... -o yaml` output (Lists or single objects)
    #[arg(long = "from", value_name = "PATH", num_args = 1..)]
    pub from: Vec<PathBuf>,
    /// ServiceSets of every namespace (the default for a dump; live, the default is the
    /// context's namespace, as with kubectl; -n chooses another; -A wins over -n, as kubectl's)
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// Only this ServiceSet
    #[arg(long, value_name = "NAME")]
    pub serviceset: Option<String>,
    /// Only the ServiceSets whose labels match (kubectl's syntax: a=b,c!=d)
    #[arg(short = 'l', long, value_name = "SELECTOR", value_parser = selector_flag)]
    pub selector: Option<SelectorArg>,
    /// A service Pending or Provisioning longer than this is stuck (Go duration)
    #[arg(long, value_name = "DURATION", default_value = DEFAULT_STUCK_AFTER, value_parser = crate::api::duration::flag)]
    pub stuck_after: Duration,
    /// The time to judge ages against (RFC 3339); default: now, or for a bundle saved with
    /// --save the time it was captured
    #[arg(long, value_name = "TIME")]
    pub now: Option<chrono::DateTime<chrono::Utc>>,
    /// Write the objects used as a support bundle (a YAML stream of the objects' JSON; Secret data removed; the capture
    /// time recorded for --from): one file, or with a directory (an existing one, or a path
    /// ending in /) files of at most 16 MiB in it, for a fleet larger than one file may be
    #[arg(long, value_name = "PATH")]
    pub save: Option<PathBuf>,
    /// Stay on the chains and print each change as it happens (a service's state, what the
    /// provider's objects say, the first failing link) with the Events kcm, Sveltos and Flux
    /// record about their objects, in one timeline, oldest first (live only; Ctrl-C ends it)
    #[arg(short = 'w', long, conflicts_with_all = ["from", "save"])]
    pub watch: bool,
    /// With --watch: end (exit 0) once everything is healthy (no error or warning, every
    /// service Deployed)
    #[arg(long, requires = "watch")]
    pub until_healthy: bool,
    /// Print the documentation of a finding code (e.g. KSM609) and exit
    #[arg(long, value_name = "CODE")]
    pub explain: Option<String>,
    /// Output format
    #[arg(short = 'o', long = "output", value_name = "FORMAT", default_value = "human", value_parser = formats(FORMATS))]
    pub output: OutputFormat,
}

/// `doctor NAME`: a ServiceSet's name, or KIND/NAME of a ServiceSet, ClusterDeployment or
/// MultiClusterService as kubectl takes it.
fn focus_arg(text: &str) -> Result<Focus, String> {
    if text.contains('/') {
        super::tree::focus_arg(text)
    } else if text.is_empty() {
        Err("the ServiceSet's name is empty".into())
    } else {
        Ok(Focus::ServiceSet(text.into()))
    }
}

impl DoctorArgs {
    /// What doctor narrows to: the name or KIND/NAME given, or --serviceset.
    pub(super) fn focus(&self) -> Option<Focus> {
        self.name
            .clone()
            .or_else(|| self.serviceset.clone().map(Focus::ServiceSet))
    }

    /// Whether to read every namespace: -A, or a MultiClusterService named (cluster-scoped,
    /// its ServiceSets are in the namespaces of its clusters).
    pub(super) fn every_namespace(&self) -> bool {
        self.all_namespaces || matches!(self.name, Some(Focus::MultiClusterService(_)))
    }
}

/// The ServiceSet's name a focus names, for doctor's options (a ClusterDeployment or
/// MultiClusterService narrows the objects instead: [`of_focus`]).
pub(super) fn focus_service_set(focus: Option<&Focus>) -> Option<String> {
    match focus {
        Some(Focus::ServiceSet(n)) => Some(n.clone()),
        _ => None,
    }
}

/// Leaves out the ServiceSets of other ClusterDeployments or MultiClusterServices than the
/// one named (a ClusterDeployment's are all those deploying to it, its own and those of
/// MultiClusterServices); the other objects stay, as with [`select_service_sets`].
pub(super) fn of_focus(objects: Vec<Value>, focus: Option<&Focus>) -> Vec<Value> {
    let keep: &dyn Fn(crate::api::kcm::ServiceSet) -> bool = match focus {
        Some(Focus::ClusterDeployment(n)) => &move |s| s.cluster() == n,
        Some(Focus::MultiClusterService(n)) => &move |s| s.multi_cluster_service() == n,
        _ => return objects,
    };
    objects
        .into_iter()
        .filter(|o| {
            crate::api::meta::Object(o).kind() != crate::api::kinds::SERVICE_SET.kind
                || keep(crate::api::kcm::ServiceSet(o))
        })
        .collect()
}

/// How long a service may be Pending or Provisioning before doctor calls it stuck.
pub const DEFAULT_STUCK_AFTER: &str = "10m";

/// The formats of `doctor -o`.
pub const FORMATS: &[OutputFormat] = &[
    OutputFormat::Human,
    OutputFormat::Json,
    OutputFormat::Yaml,
    OutputFormat::Sarif,
    OutputFormat::Github,
    OutputFormat::Html,
];

/// Leaves out the ServiceSets whose labels do not match `-l` (the other objects stay: they
/// are what the chosen ServiceSets are diagnosed against).
pub(super) fn select_service_sets(
    objects: Vec<Value>,
    selector: Option<&SelectorArg>,
) -> Vec<Value> {
    let Some(s) = selector else { return objects };
    objects
        .into_iter()
        .filter(|o| {
            let o = crate::api::Object(o);
            o.kind() != crate::api::kinds::SERVICE_SET.kind || s.selector.matches_json(o.labels())
        })
        .collect()
}

/// The objects with the content of Secrets removed, in lists at any depth too: a support
/// bundle must never carry them.
pub fn without_secret_data(mut objects: Vec<Value>) -> Vec<Value> {
    for o in &mut objects {
        secret::scrub(o);
    }
    objects
}

/// The first line of a bundle written by --save: when its objects were read.
const CAPTURED_PREFIX: &str = "# kubectl ksm doctor --save; captured at ";

/// The bytes of one file of a bundle saved into a directory: half of what one file read
/// `--from` may hold.
const SAVED_FILE_BYTES: usize = (input::MAX_INPUT_BYTES / 2) as usize;

/// The capture time of the first bundle among `paths` (and the files of the directories
/// among them, in name order) that records one.
fn capture_time(paths: &[PathBuf]) -> Option<chrono::DateTime<chrono::Utc>> {
    use std::io::{BufRead, Read};
    let files = paths.iter().flat_map(|p| {
        let mut inside: Vec<PathBuf> = std::fs::read_dir(p)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_else(|_| vec![p.clone()]);
        inside.sort();
        inside
    });
    files.into_iter().find_map(|p| {
        // Regular files only: opening a FIFO would wait for a writer.
        if !std::fs::metadata(&p).is_ok_and(|m| m.is_file()) {
            return None;
        }
        let file = std::fs::File::open(p).ok()?;
        let mut line = String::new();
        std::io::BufReader::new(file)
            .take(256)
            .read_line(&mut line)
            .ok()?;
        let t = line.strip_prefix(CAPTURED_PREFIX)?;
        chrono::DateTime::parse_from_rfc3339(t.trim())
            .ok()
            .map(|t| t.with_timezone(&chrono::Utc))
    })
}

/// What doctor diagnoses (and tree draws): the objects, whether Secret names are among them,
/// the namespace filter, the kinds it could not read, and when a bundle was captured.
pub(super) struct Snapshot {
    pub objects: Vec<Value>,
    pub secrets: bool,
    pub namespace: Option<String>,
    pub unread: Vec<doctor::Unread>,
    pub captured: Option<chrono::DateTime<chrono::Utc>>,
    /// Where the objects were read: the cluster's server, or the saved files.
    pub source: String,
}

/// Where tree, trace and wait read objects: the cluster, or saved objects; the namespaces;
/// the time ages are judged at.
#[derive(Debug, clap::Args)]
pub struct ObjectsArgs {
    /// Read saved objects instead of the cluster: files or directories of
    /// `kubectl get ... -o yaml` output or `doctor --save` bundles
    #[arg(long = "from", value_name = "PATH", num_args = 1..)]
    pub from: Vec<PathBuf>,
    /// Every namespace (the default for a dump; live, the default is the context's
    /// namespace, as with kubectl)
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// The time to judge ages against (RFC 3339); default: now, or for a bundle saved with
    /// doctor --save the time it was captured
    #[arg(long, value_name = "TIME")]
    pub now: Option<chrono::DateTime<chrono::Utc>>,
}

/// The objects of the cluster, or of the saved files `from` when there are any; Secret data
/// removed either way.
pub(super) fn snapshot(
    from: &[PathBuf],
    all_namespaces: bool,
    global: &GlobalArgs,
    io: &mut Io,
) -> Result<Snapshot, CliError> {
    let mut snap = if from.is_empty() {
        live_snapshot(all_namespaces, global, io)?
    } else {
        let objects = input::load_dump(from, io)?;
        let secrets = objects.iter().any(secret::is_secret);
        let namespace = global.cluster.namespace.clone();
        Snapshot {
            objects,
            secrets,
            namespace: namespace.filter(|_| !all_namespaces),
            unread: Vec::new(),
            captured: capture_time(from),
            source: input::paths_text(from),
        }
    };
    snap.objects = without_secret_data(std::mem::take(&mut snap.objects));
    Ok(snap)
}

/// Reads the cluster.
fn live_snapshot(
    all_namespaces: bool,
    global: &GlobalArgs,
    io: &mut Io,
) -> Result<Snapshot, CliError> {
    let mut cluster = Cluster::connect(&global.cluster)?;
    let namespace = if all_namespaces {
        None
    } else {
        Some(cluster.default_namespace.clone())
    };
    if io.stderr_tty {
        write!(io.stderr, "reading {} ...\r", cluster.server)?;
    }
    let snap = cluster
        .doctor_snapshot(namespace.as_deref(), &provider::provider_apis())
        .map_err(|e| CliError::Fatal(e.message))?;
    if io.stderr_tty {
        write!(io.stderr, "\x1b[2K")?;
    }
    let mut snap = Snapshot::live(snap, namespace, io)?;
    snap.source = format!("the cluster at {}", cluster.server);
    Ok(snap)
}

impl Snapshot {
    /// The cluster layer's snapshot (a list, or a watch's batch), its notes said on stderr.
    /// Secret data is still in it: [`snapshot`] and the watchers remove it.
    pub(super) fn live(
        snap: crate::cluster::Snapshot,
        namespace: Option<String>,
        io: &mut Io,
    ) -> Result<Snapshot, CliError> {
        for note in &snap.notes {
            writeln!(io.stderr, "note: {note}")?;
        }
        Ok(Snapshot {
            objects: snap.objects,
            secrets: snap.secrets_listed,
            namespace,
            unread: snap
                .unread
                .into_iter()
                .map(|(kind, reason)| doctor::Unread { kind, reason })
                .collect(),
            captured: None,
            source: "a live cluster".to_string(),
        })
    }

    /// When ages are judged: `now` if given, else when the bundle was captured, else now.
    pub(super) fn judged_at(
        &self,
        now: Option<chrono::DateTime<chrono::Utc>>,
    ) -> chrono::DateTime<chrono::Utc> {
        now.or(self.captured).unwrap_or_else(chrono::Utc::now)
    }

    /// Doctor's report of the objects at `now`, with the default stuck-after: what tree,
    /// trace and wait build on.
    pub(super) fn report(
        &self,
        now: chrono::DateTime<chrono::Utc>,
        namespace: Option<String>,
        service_set: Option<String>,
    ) -> Result<doctor::Report, CliError> {
        let options = Options {
            now,
            stuck_after: crate::api::duration::flag(DEFAULT_STUCK_AFTER)
                .map_err(CliError::Fatal)?,
            namespace,
            service_set,
            secrets_collected: self.secrets,
            unread: self.unread.clone(),
        };
        Ok(doctor::diagnose(&self.objects, &options))
    }
}

/// Writes the support bundle: a YAML stream of one document per object, each document the
/// object's JSON on one line (kubectl reads it as any YAML stream; `--from` reads a stream of JSON
/// documents with the JSON reader, about twice as fast as block YAML), each file headed by
/// the capture time. Into
/// a directory (an existing one, or a path ending in `/`), files of at most
/// [`SAVED_FILE_BYTES`]; else one file, which must be one that `--from` reads.
fn save(
    path: &std::path::Path,
    objects: &[Value],
    now: chrono::DateTime<chrono::Utc>,
    io: &mut Io,
) -> Result<(), CliError> {
    let header = format!(
        "{CAPTURED_PREFIX}{}\n",
        now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    );
    let fail =
        |p: &std::path::Path, e: std::io::Error| CliError::Fatal(format!("{}: {e}", p.display()));
    let into_directory = path.is_dir() || path.as_os_str().to_string_lossy().ends_with('/');
    let files = bundle_files(
        objects,
        &header,
        if into_directory {
            SAVED_FILE_BYTES
        } else {
            usize::MAX
        },
    );
    let written = if into_directory {
        std::fs::create_dir_all(path).map_err(|e| fail(path, e))?;
        for (i, text) in files.iter().enumerate() {
            let file = path.join(format!("objects-{i:03}.yaml"));
            std::fs::write(&file, text).map_err(|e| fail(&file, e))?;
        }
        format!(
            "{} in {}",
            crate::output::count(files.len(), "file"),
            path.display()
        )
    } else {
        let text = &files[0];
        if text.len() as u64 > input::MAX_INPUT_BYTES {
            return Err(CliError::Fatal(format!(
                "{}: the bundle is {:.1} MiB, more than one file read with --from may hold \
                 ({} MiB): save it into a directory (--save DIR/), which splits it into \
                 files --from reads",
                path.display(),
                text.len() as f64 / (1024.0 * 1024.0),
                input::MAX_INPUT_BYTES / (1024 * 1024)
            )));
        }
        std::fs::write(path, text).map_err(|e| fail(path, e))?;
        path.display().to_string()
    };
    writeln!(
        io.stderr,
        "saved {} to {written} (Secret data removed)",
        crate::output::count(objects.len(), "object"),
    )?;
    Ok(())
}

/// The texts of a bundle's files: each the header, then one document per object (its JSON,
/// on one line), a new file started before one would pass `max` bytes (a file holds one object
/// at least).
fn bundle_files(objects: &[Value], header: &str, max: usize) -> Vec<String> {
    let mut files = vec![header.to_string()];
    for o in objects {
        let mut doc = String::from("---\n");
        yaml::write_json_document(o, &mut doc);
        let last = files.last_mut().expect("a file");
        if last.len() > header.len() && last.len() + doc.len() > max {
            files.push(header.to_string() + &doc);
        } else {
            last.push_str(&doc);
        }
    }
    files
}

pub fn run(args: &DoctorArgs, global: &GlobalArgs, io: &mut Io) -> CliResult {
    if let Some(code) = &args.explain {
        return super::explain(code, io);
    }
    if args.watch {
        return super::doctor_watch::run(args, global, io);
    }
    let format = args.output;
    let live = args.from.is_empty();
    let Snapshot {
        objects,
        secrets: secrets_collected,
        namespace,
        unread,
        captured,
        source,
    } = snapshot(&args.from, args.every_namespace(), global, io)?;
    let focus = args.focus();
    let objects = of_focus(
        select_service_sets(objects, args.selector.as_ref()),
        focus.as_ref(),
    );
    let service_set = focus_service_set(focus.as_ref());
    let now = args.now.or(captured).unwrap_or_else(chrono::Utc::now);
    let options = Options {
        now,
        stuck_after: args.stuck_after,
        namespace: namespace.clone(),
        service_set: service_set.clone(),
        secrets_collected,
        unread,
    };
    let report = doctor::diagnose(&objects, &options);
    if report.service_sets.is_empty() {
        let where_ = match &namespace {
            Some(ns) => format!("in namespace {ns}"),
            None => "in any namespace".to_string(),
        };
        let all = if namespace.is_some() && live {
            " (-A looks in every namespace)"
        } else {
            ""
        };
        if let Some(focus) = &focus {
            return Err(CliError::Fatal(match focus {
                Focus::ServiceSet(name) => format!("no ServiceSet {name:?} {where_}{all}"),
                Focus::ClusterDeployment(name) => {
                    format!("no ServiceSet of ClusterDeployment {name:?} {where_}{all}")
                }
                Focus::MultiClusterService(name) => {
                    format!("no ServiceSet of MultiClusterService {name:?} in any namespace")
                }
            }));
        }
        if live {
            writeln!(io.stderr, "note: no ServiceSets {where_}{all}")?;
        }
    }
    if let Some(path) = &args.save {
        save(path, &objects, now, io)?;
    }
    match format {
        OutputFormat::Json => render::json(io.stdout, &report)?,
        OutputFormat::Yaml => render::yaml(io.stdout, &report)?,
        OutputFormat::Sarif => {
            let rules: Vec<_> = doctor::codes::ALL.iter().collect();
            sarif::render(io.stdout, &report.findings, &rules)?;
        }
        OutputFormat::Html => crate::output::doctor_html::html(
            io.stdout,
            &report,
            &crate::output::doctor_html::Page {
                // Live, the objects were read just now.
                captured: if live { Some(now) } else { captured },
                judged_at: now,
                source: &source,
            },
        )?,
        OutputFormat::Github => {
            github::render(io.stdout, &report.findings)?;
            writeln!(io.stdout, "{}", render::summary_line(&report))?;
        }
        _ => render::human(io.stdout, &report, io.color)?,
    }
    let code = if report.healthy() {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    };
    super::leave_to_exit((objects, report));
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_bundle_is_cut_between_objects() {
        let objects: Vec<Value> = (0..5)
            .map(|i| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("c{i}")}}))
            .collect();
        let one = bundle_files(&objects, "# h\n", usize::MAX);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].matches("---\n").count(), 5);
        let doc = one[0].len() / 5;
        let cut = bundle_files(&objects, "# h\n", 2 * doc + 8);
        assert_eq!(cut.len(), 3, "{cut:#?}");
        assert!(cut.iter().all(|f| f.starts_with("# h\n---\n")));
        assert_eq!(cut.concat().matches(r#""kind":"ConfigMap""#).count(), 5);
        // A file holds one object at least, however small the bound.
        assert_eq!(bundle_files(&objects, "# h\n", 1).len(), 5);
    }
}
