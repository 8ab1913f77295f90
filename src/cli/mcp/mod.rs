//! `kubectl ksm mcp`: a read-only Model Context Protocol server on stdio, for assistants.
//! Each tool ([`tools`]) is one of this CLI's verbs run in the process with `-o json`, on the
//! cluster of the server's flags or on the saved objects it was given (`--from`), so a tool's
//! result is the CLI's JSON for the same question. The protocol is the official Rust SDK's
//! (rmcp); the stdio framing is [`stdio`]'s, which answers unreadable lines as JSON-RPC says.

mod stdio;
mod tools;

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use super::{CliError, CliResult, EXIT_ERROR, EXIT_OK, GlobalArgs, Io, Terminal};
use tools::Reads;

/// The most of a result sent back (its JSON text); a longer one is cut, with a note.
pub const MAX_RESULT_BYTES: usize = 1 << 20;

/// How many verbs run at once; more calls wait for one to end (within their time).
const CONCURRENT_CALLS: usize = 4;

#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  kubectl ksm mcp                               # the current context's cluster
  kubectl ksm mcp --context prod -n kcm-system
  kubectl ksm mcp --from bundle.yaml            # a saved dump (doctor --save)

Register it with an assistant as a stdio server whose command is `kubectl` with the arguments
`ksm mcp` (or `kubectl-ksm mcp`). The tools are doctor, tree, trace, check, eval, lint,
render and explain; none writes to the cluster (get and list only), and Secret data never
leaves the process. The server ends when its input ends.

Exit codes: 0 the client closed the session, 2 the session could not start or broke.")]
pub struct McpArgs {
    /// Answer from saved objects instead of the cluster: files or directories of
    /// `kubectl get ... -o yaml` output or `doctor --save` bundles
    #[arg(long = "from", value_name = "PATH", num_args = 1..)]
    pub from: Vec<PathBuf>,
    /// How long one tool call may take before it is answered with a timeout error (0: no
    /// limit)
    #[arg(long, value_name = "DURATION", default_value = "2m", value_parser = crate::api::duration::request_timeout)]
    pub call_timeout: Duration,
    /// The time doctor, tree and trace judge ages against (RFC 3339); default: now, or for a
    /// bundle saved with doctor --save the time it was captured
    #[arg(long, value_name = "TIME")]
    pub now: Option<chrono::DateTime<chrono::Utc>>,
}

/// The server: where its verbs read, and how long they may take.
#[derive(Clone)]
struct Server {
    /// `--from PATH...`, or the cluster flags, given to every verb that reads objects.
    source: Arc<Vec<OsString>>,
    from_dump: bool,
    /// The namespace of the server's `-n`, the default of the calls'.
    namespace: Option<String>,
    now: Option<String>,
    timeout: Duration,
    slots: Arc<tokio::sync::Semaphore>,
}

impl Server {
    fn new(args: &McpArgs, global: &GlobalArgs) -> Server {
        let c = &global.cluster;
        let mut source: Vec<OsString> = Vec::new();
        if !args.from.is_empty() {
            source.push("--from".into());
            source.extend(args.from.iter().map(|p| p.clone().into_os_string()));
        } else {
            if let Some(k) = &c.kubeconfig {
                source.extend(["--kubeconfig".into(), k.clone().into_os_string()]);
            }
            if let Some(x) = &c.context {
                source.extend(["--context".into(), x.into()]);
            }
            // A call that runs out of time leaves its verb to end by itself: each of its
            // requests ends within the call's time too, unless the server was told otherwise.
            let request = c.request_timeout.unwrap_or(if args.call_timeout.is_zero() {
                crate::cluster::DEFAULT_REQUEST_TIMEOUT
            } else {
                args.call_timeout
                    .min(crate::cluster::DEFAULT_REQUEST_TIMEOUT)
            });
            source.extend([
                "--request-timeout".into(),
                format!("{}ms", request.as_millis()).into(),
            ]);
            if let Some(u) = &c.as_user {
                source.extend(["--as".into(), u.into()]);
            }
            for g in &c.as_group {
                source.extend(["--as-group".into(), g.into()]);
            }
        }
        Server {
            source: Arc::new(source),
            from_dump: !args.from.is_empty(),
            namespace: c.namespace.clone(),
            now: args.now.map(|t| t.to_rfc3339()),
            timeout: if args.call_timeout.is_zero() {
                Duration::MAX
            } else {
                args.call_timeout
            },
            slots: Arc::new(tokio::sync::Semaphore::new(CONCURRENT_CALLS)),
        }
    }
}

pub fn run(args: &McpArgs, global: &GlobalArgs, io: &mut Io) -> CliResult {
    // The verbs run here free what they read after each call instead of leaving it to the
    // process's exit.
    super::SERVING.store(true, std::sync::atomic::Ordering::Relaxed);
    let server = Server::new(args, global);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Fatal(format!("cannot start the runtime: {e}")))?;
    let served = runtime.block_on(async move {
        let transport = stdio::LineTransport::new(
            tokio::io::BufReader::new(tokio::io::stdin()),
            tokio::io::stdout(),
        );
        let service = server.serve(transport).await.map_err(|e| e.to_string())?;
        service.waiting().await.map_err(|e| e.to_string())
    });
    // Verbs still running past their call's time are not waited for.
    runtime.shutdown_background();
    match served {
        Ok(_) => Ok(EXIT_OK),
        Err(e) => {
            writeln!(io.stderr, "error: the MCP session ended: {e}")?;
            Ok(EXIT_ERROR)
        }
    }
}

/// What a verb run in the process gave.
struct Ran {
    code: u8,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

fn run_verb(argv: Vec<OsString>, stdin: Vec<u8>) -> Ran {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let mut stdin = std::io::Cursor::new(stdin);
    let code = super::run(
        argv,
        &mut stdout,
        &mut stderr,
        &mut stdin,
        Terminal {
            dumb: true,
            ..Terminal::default()
        },
    );
    Ran {
        code,
        stdout,
        stderr,
    }
}

/// A text cut at `max` bytes (on a character boundary), with a note saying so.
fn bounded(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let total = text.len();
    text.truncate(cut);
    text.push_str(&format!(
        "\n[cut: the result is {total} bytes, more than the {max} a call answers with; the first {cut} are above. Ask about less: one ServiceSet, ClusterDeployment or namespace.]"
    ));
    text
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim_end().to_string()
}

/// The tool's answer from what its verb gave: its JSON report (with what the verb said on
/// stderr as a second text), or an error with the verb's message.
fn answer(ran: Ran) -> CallToolResult {
    let notes = text(&ran.stderr);
    if ran.code == EXIT_ERROR {
        let message = if notes.is_empty() {
            "the command failed without a message".to_string()
        } else {
            notes
        };
        return CallToolResult::error(vec![ContentBlock::text(bounded(message, MAX_RESULT_BYTES))]);
    }
    if ran.stdout.len() > MAX_RESULT_BYTES {
        // Cut JSON is no report: the text goes back as an error, so no client takes it for
        // one.
        return CallToolResult::error(vec![ContentBlock::text(bounded(
            text(&ran.stdout),
            MAX_RESULT_BYTES,
        ))]);
    }
    let report: Value = match serde_json::from_slice(&ran.stdout) {
        Ok(v) => v,
        Err(e) => {
            return CallToolResult::error(vec![ContentBlock::text(format!(
                "the command's report is not JSON ({e}); it said: {}",
                bounded(notes, MAX_RESULT_BYTES)
            ))]);
        }
    };
    let mut result = CallToolResult::structured(report);
    if !notes.is_empty() {
        result
            .content
            .push(ContentBlock::text(bounded(notes, MAX_RESULT_BYTES)));
    }
    result
}

impl Server {
    /// The verb's whole command line for a call.
    fn argv(
        &self,
        spec: &'static tools::Spec,
        args: &rmcp::model::JsonObject,
        command: tools::Command,
    ) -> Result<Vec<OsString>, McpError> {
        let mut argv: Vec<OsString> = vec!["kubectl-ksm".into()];
        argv.extend(command.flags);
        if spec.reads == Reads::Objects {
            argv.extend(self.source.iter().cloned());
            if !self.from_dump && spec.name == "render" {
                argv.push("--live".into());
            }
        }
        if command.namespaced {
            argv.extend(tools::namespace_flags(
                args,
                spec,
                self.namespace.as_deref(),
            )?);
        }
        if command.judged_at_now
            && let Some(now) = &self.now
        {
            argv.extend(["--now".into(), now.into()]);
        }
        argv.extend(["--output".into(), "json".into(), "--".into()]);
        argv.extend(command.positional);
        Ok(argv)
    }

    /// Runs the verb within the call's time: a call that waits for a slot or runs longer
    /// is answered with a timeout error (its verb, left running, still holds its slot).
    async fn call_verb(&self, argv: Vec<OsString>, stdin: Vec<u8>) -> CallToolResult {
        let slots = self.slots.clone();
        let job = async move {
            let permit = slots.acquire_owned().await;
            tokio::task::spawn_blocking(move || {
                let _permit = permit;
                run_verb(argv, stdin)
            })
            .await
        };
        match tokio::time::timeout(self.timeout, job).await {
            Ok(Ok(ran)) => answer(ran),
            Ok(Err(e)) => CallToolResult::error(vec![ContentBlock::text(format!(
                "the command stopped: {e}"
            ))]),
            Err(_) => CallToolResult::error(vec![ContentBlock::text(format!(
                "timed out after {}: the {} did not answer in time (the server's --call-timeout)",
                seconds(self.timeout),
                if self.from_dump {
                    "saved objects' reading"
                } else {
                    "cluster"
                },
            ))]),
        }
    }
}

/// A duration in seconds: `120s`, `1.5s`.
fn seconds(d: Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

fn explain(code: &str) -> CallToolResult {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut stdin = std::io::empty();
    let mut io = Io {
        stdout: &mut out,
        stderr: &mut err,
        stdin: &mut stdin,
        color: false,
        stderr_tty: false,
        stdout_tty: false,
        width: super::DEFAULT_WIDTH,
    };
    match super::explain(code, &mut io) {
        Ok(_) => CallToolResult::success(vec![ContentBlock::text(text(&out))]),
        Err(CliError::Fatal(m)) => CallToolResult::error(vec![ContentBlock::text(m)]),
        Err(CliError::BrokenPipe) => CallToolResult::error(vec![]),
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("kubectl-ksm", env!("CARGO_PKG_VERSION"))
                    .with_title("kubectl-ksm: k0rdent Service Management"),
            )
            .with_instructions(
                "Read-only diagnosis of k0rdent Service Management (kcm) and its providers \
                 (Sveltos, the default; Flux with ksm-flux). Start with doctor for why services \
                 are not deployed, tree for what is deployed where, trace for who deployed an \
                 object; check and eval judge StateManagementProviders' CEL rules as kcm does; \
                 lint checks manifests; render shows what an adapter writes; explain documents \
                 a finding's code. No tool writes to the cluster.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(
            tools::SPECS.iter().map(tools::Spec::tool).collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::spec(name).map(tools::Spec::tool)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(spec) = tools::spec(&request.name) else {
            return Err(McpError::invalid_params(
                format!(
                    "no tool named {:?} (the tools: {})",
                    request.name,
                    tools::SPECS
                        .iter()
                        .map(|s| s.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None,
            ));
        };
        let args = request.arguments.unwrap_or_default();
        if spec.name == "explain" {
            let a = tools::Arguments::new(spec, &args)?;
            let code = a.string("code")?.unwrap_or_default();
            return Ok(explain(code).into());
        }
        let mut command = tools::command(spec, &args)?;
        let stdin = std::mem::take(&mut command.stdin);
        let argv = self.argv(spec, &args, command)?;
        Ok(self.call_verb(argv, stdin).await.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(argv: &[&str]) -> Server {
        use clap::Parser;
        let cli = super::super::Cli::try_parse_from(argv).unwrap();
        let super::super::Command::Mcp(args) = &cli.command else {
            panic!("not mcp")
        };
        Server::new(args, &cli.global)
    }

    fn words(v: &[OsString]) -> Vec<&str> {
        v.iter().map(|s| s.to_str().unwrap()).collect()
    }

    #[test]
    fn the_servers_cluster_flags_go_to_every_verb_that_reads_and_its_namespace_is_the_default() {
        let s = server(&[
            "kubectl-ksm",
            "mcp",
            "--kubeconfig",
            "/k",
            "--context",
            "prod",
            "-n",
            "kcm-system",
            "--as",
            "me",
            "--as-group",
            "ops",
            "--call-timeout",
            "30s",
        ]);
        assert_eq!(
            words(&s.source),
            [
                "--kubeconfig",
                "/k",
                "--context",
                "prod",
                "--request-timeout",
                "30000ms",
                "--as",
                "me",
                "--as-group",
                "ops"
            ]
        );
        assert_eq!(s.namespace.as_deref(), Some("kcm-system"));
        let doctor = tools::spec("doctor").unwrap();
        let args = serde_json::Map::new();
        let argv = s
            .argv(doctor, &args, tools::command(doctor, &args).unwrap())
            .unwrap();
        assert_eq!(
            words(&argv[1..]),
            [
                "doctor",
                "--kubeconfig",
                "/k",
                "--context",
                "prod",
                "--request-timeout",
                "30000ms",
                "--as",
                "me",
                "--as-group",
                "ops",
                "--namespace",
                "kcm-system",
                "--output",
                "json",
                "--"
            ]
        );
        // lint reads only its text.
        let lint = tools::spec("lint").unwrap();
        let args = serde_json::json!({"manifests": "x"})
            .as_object()
            .unwrap()
            .clone();
        let argv = s
            .argv(lint, &args, tools::command(lint, &args).unwrap())
            .unwrap();
        assert_eq!(words(&argv[1..]), ["lint", "--output", "json", "--", "-"]);
        // A dump instead of the cluster; render reads it instead of --live.
        let s = server(&[
            "kubectl-ksm",
            "mcp",
            "--from",
            "a.yaml",
            "b/",
            "--now",
            "2026-11-21T12:00:00Z",
        ]);
        let render = tools::spec("render").unwrap();
        let args = serde_json::json!({"serviceset": "x"})
            .as_object()
            .unwrap()
            .clone();
        let argv = s
            .argv(render, &args, tools::command(render, &args).unwrap())
            .unwrap();
        assert_eq!(
            words(&argv[1..]),
            [
                "render", "--from", "a.yaml", "b/", "--output", "json", "--", "x"
            ]
        );
        let s = server(&["kubectl-ksm", "mcp", "--call-timeout", "0"]);
        assert_eq!(s.timeout, Duration::MAX);
        assert_eq!(words(&s.source), ["--request-timeout", "60000ms"]);
    }

    #[test]
    fn a_result_over_the_bound_is_cut_on_a_character_with_a_note() {
        let t = bounded("ééé".into(), 3);
        assert!(t.starts_with("é\n[cut: the result is 6 bytes"), "{t}");
        assert_eq!(bounded("short".into(), 10), "short");
    }

    #[test]
    fn a_verbs_answer_is_its_report_its_notes_or_its_error() {
        let ok = answer(Ran {
            code: 1,
            stdout: br#"{"kind":"DoctorReport"}"#.to_vec(),
            stderr: b"note: x\n".to_vec(),
        });
        assert_eq!(ok.is_error, Some(false));
        assert_eq!(ok.structured_content.unwrap()["kind"], "DoctorReport");
        assert_eq!(ok.content.len(), 2);
        let failed = answer(Ran {
            code: EXIT_ERROR,
            stdout: Vec::new(),
            stderr: b"error: no ServiceSet \"x\"\n".to_vec(),
        });
        assert_eq!(failed.is_error, Some(true));
        assert!(failed.structured_content.is_none());
        let big = answer(Ran {
            code: 0,
            stdout: vec![b' '; MAX_RESULT_BYTES + 1],
            stderr: Vec::new(),
        });
        assert_eq!(big.is_error, Some(true));
    }
}
