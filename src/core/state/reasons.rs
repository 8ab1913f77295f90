//! Condition types and reasons of the Flux controllers (checked against their sources).

/// fluxcd/pkg apis/meta/conditions.go.
pub const COND_READY: &str = "Ready";
pub const COND_STALLED: &str = "Stalled";
pub const COND_RECONCILING: &str = "Reconciling";
/// helm-controller api/v2/condition_types.go.
pub const COND_RELEASED: &str = "Released";
pub const COND_TEST_SUCCESS: &str = "TestSuccess";
pub const COND_REMEDIATED: &str = "Remediated";

/// `DependencyNotReady`: helm-controller api/v2/condition_types.go `DependencyNotReadyReason`,
/// fluxcd/pkg apis/meta/conditions.go `DependencyNotReadyReason` (kustomize-controller).
/// Message: `dependency '<namespace>/<name>' is not ready` (both controllers' `checkDependencies`),
/// or `unable to get '<ns>/<name>' dependency: ...` (helm) / `dependency '<ns>/<name>' not found: ...`
/// (kustomize) / `dependency '<ns>/<name>' revision is not up to date` (kustomize).
pub const REASON_DEPENDENCY_NOT_READY: &str = "DependencyNotReady";

/// Ready=False reasons that mean "waiting for the source":
/// - `ArtifactFailed`: helm-controller api/v2/condition_types.go `ArtifactFailedReason`
///   (internal/controller/helmrelease_controller.go: "could not get Source object: ...",
///   "Source not ready: artifact not found. Retrying in ...", "Could not load chart: ...");
///   fluxcd/pkg apis/meta/conditions.go `ArtifactFailedReason` for kustomize-controller
///   (internal/controller/kustomization_controller.go: the getSource error, "Source artifact not
///   found, retrying in ...", "Source is not ready, artifact not found, retrying in ...", fetch and
///   path errors).
/// - `SourceNotReady`: a string literal in helm-controller internal/controller/helmrelease_controller.go
///   (`isSourceReady`: the source is at an unobserved generation, Stalled, or has no artifact;
///   the message is `<Kind> '<ns>/<name>' is not ready: <why>`). Kustomization never uses it.
pub const SOURCE_WAIT_REASONS: &[&str] = &["ArtifactFailed", "SourceNotReady"];

/// HelmRelease Ready=False reasons that are failures (Failed even while retrying).
///
/// - Release outcomes copied into Ready by `summarize()` (internal/reconcile/release.go) from
///   `Released`, `TestSuccess` and `Remediated` (api/v2/condition_types.go):
///   `InstallFailed`, `UpgradeFailed`, `TestFailed`, `RollbackSucceeded`, `RollbackFailed`,
///   `UninstallSucceeded`, `UninstallFailed`. "Any remediated state is considered an error":
///   a Remediated condition forces Ready=False even for the *Succeeded reasons.
/// - `ValuesError` (string literal, helmrelease_controller.go: valuesFrom could not be composed).
/// - `AccessDenied` (fluxcd/pkg apis/acl/conditions.go, cross-namespace ref refused; also Stalled).
/// - `InvalidCELExpression` (fluxcd/pkg apis/meta, healthCheckExprs / dependsOn readyExpr; also Stalled).
/// - `ReconcileError` (string literal, internal/reconcile/atomic_release.go: an action failed while
///   Ready was True).
///
/// Not here although domain.md §3 lists it: `HealthCheckCanceled` (fluxcd/pkg apis/meta) is written
/// when a new reconciliation request (e.g. a new source revision) cancels the running health
/// checks, followed by an immediate requeue; it is transient (see [`HELMRELEASE_TRANSIENT_REASONS`]).
pub const HELMRELEASE_FAILURE_REASONS: &[&str] = &[
    "InstallFailed",
    "UpgradeFailed",
    "TestFailed",
    "RollbackSucceeded",
    "RollbackFailed",
    "UninstallSucceeded",
    "UninstallFailed",
    "ValuesError",
    "AccessDenied",
    "InvalidCELExpression",
    "ReconcileError",
];

/// Kustomization Ready=False reasons that are failures (fluxcd/pkg apis/meta/conditions.go,
/// used by kustomize-controller internal/controller/kustomization_controller.go):
/// `BuildFailed`, `ReconciliationFailed` (apply / decryption / post-build errors),
/// `PruneFailed`, `HealthCheckFailed`, `InvalidCELExpression` (Stalled too),
/// `FeatureGateDisabled` (Stalled too), and `AccessDenied` (fluxcd/pkg apis/acl, Stalled too).
pub const KUSTOMIZATION_FAILURE_REASONS: &[&str] = &[
    "BuildFailed",
    "ReconciliationFailed",
    "PruneFailed",
    "HealthCheckFailed",
    "AccessDenied",
    "InvalidCELExpression",
    "FeatureGateDisabled",
];

/// HelmRelease Ready=False reasons that are transient or controller-side errors: Provisioning,
/// Failed once Ready has been False with them for longer than the timeout.
/// String literals in helm-controller internal/controller/helmrelease_controller.go
/// (`ChartMutateError`, `RESTClientError` — e.g. the kubeconfig Secret is missing or the cluster
/// unreachable —, `ResourceManagerError`, `FactoryError`, `ConfigFactoryErr` (deletion)),
/// internal/reconcile/atomic_release.go (`StateError`: "Could not determine release state"),
/// internal/reconcile/unlock.go (`PendingRelease`, copied from Released by summarize), and
/// `HealthCheckCanceled` (fluxcd/pkg apis/meta; "New reconciliation triggered by ...").
/// Any reason not listed anywhere in this module is handled the same way.
pub const HELMRELEASE_TRANSIENT_REASONS: &[&str] = &[
    "ChartMutateError",
    "RESTClientError",
    "ResourceManagerError",
    "FactoryError",
    "ConfigFactoryErr",
    "StateError",
    "PendingRelease",
    "HealthCheckCanceled",
];

/// Kustomization Ready=False reasons that are transient: `HealthCheckCanceled` (fluxcd/pkg
/// apis/meta) and `DirectoryCreationFailed` (source-controller api/v1 `DirCreationFailedReason`,
/// the controller's temp dir).
pub const KUSTOMIZATION_TRANSIENT_REASONS: &[&str] =
    &["HealthCheckCanceled", "DirectoryCreationFailed"];

/// Ready=Unknown / in-progress reasons: `Progressing`, `ProgressingWithRetry` (fluxcd/pkg
/// apis/meta), `AwaitingTests` (helm-controller internal/reconcile/install.go and upgrade.go,
/// TestSuccess=Unknown copied into Ready by summarize).
pub const PROGRESS_REASONS: &[&str] = &["Progressing", "ProgressingWithRetry", "AwaitingTests"];

/// Ready=True reasons: `InstallSucceeded`, `UpgradeSucceeded`, `TestSucceeded`
/// (helm-controller api/v2/condition_types.go), `ReconciliationSucceeded` (fluxcd/pkg apis/meta,
/// kustomize-controller). Informational: any Ready=True counts.
pub const SUCCESS_REASONS: &[&str] = &[
    "InstallSucceeded",
    "UpgradeSucceeded",
    "TestSucceeded",
    "ReconciliationSucceeded",
];

/// Stalled=True reasons. HelmRelease: `RetriesExceeded` ("Failed to <action> after <n> attempt(s)"),
/// `MissingRollbackTarget` (internal/reconcile/atomic_release.go), `AccessDenied`,
/// `InvalidCELExpression` (helmrelease_controller.go). Kustomization: `InvalidCELExpression`,
/// `FeatureGateDisabled`, `AccessDenied` (kustomization_controller.go). Informational: any
/// Stalled=True counts.
pub const STALLED_REASONS: &[&str] = &[
    "RetriesExceeded",
    "MissingRollbackTarget",
    "AccessDenied",
    "InvalidCELExpression",
    "FeatureGateDisabled",
];

/// Source Ready=False reasons that are progress, not failure. Source-controller summarizes Ready
/// from negative-polarity conditions that include `ArtifactOutdated` (reasons `NewRevision`,
/// `NewChart`) and `Reconciling` (`Progressing`, `ProgressingWithRetry`), so Ready=False with these
/// reasons is a normal revision update.
pub const SOURCE_PROGRESS_REASONS: &[&str] = &[
    "Progressing",
    "ProgressingWithRetry",
    "NewRevision",
    "NewChart",
];

/// Source-controller "abnormal-true" failure conditions (api/v1/condition_types.go):
/// a source with one of these True has failed, whatever its Ready says.
pub const SOURCE_FAILURE_CONDITIONS: &[&str] = &[
    "FetchFailed",
    "BuildFailed",
    "StorageOperationFailed",
    "IncludeUnavailable",
];

/// kustomize-controller internal/controller/kustomization_controller.go: `spec.path` does not exist
/// in the artifact (`fmt.Errorf("kustomization path not found: %w", err)`, reason ArtifactFailed).
/// A configuration error, not a source problem.
pub const KUSTOMIZATION_PATH_NOT_FOUND_PREFIX: &str = "kustomization path not found";
