//! The codes of doctor's findings (KSM6xx), with their documentation.

pub const SMP_MISSING: &str = "KSM601";
pub const SMP_NOT_READY: &str = "KSM602";
pub const SMP_SUSPENDED: &str = "KSM603";
pub const SELECTOR_MISMATCH: &str = "KSM604";
pub const SERVICESET_PAUSED: &str = "KSM605";
pub const SERVICE_FAILED: &str = "KSM606";
pub const SERVICE_STUCK: &str = "KSM607";
pub const STATUS_DISAGREES: &str = "KSM608";
pub const FLUX_MISSING: &str = "KSM609";
pub const FLUX_STALLED: &str = "KSM610";
pub const FLUX_FAILING: &str = "KSM611";
pub const FLUX_SUSPENDED: &str = "KSM612";
pub const FLUX_OLD_GENERATION: &str = "KSM613";
pub const DEPENDENCY_NOT_READY: &str = "KSM614";
pub const SOURCE_FAILING: &str = "KSM615";
pub const TEMPLATE_INVALID: &str = "KSM616";
pub const KUBECONFIG_MISSING: &str = "KSM617";
pub const SMP_STATUS_STALE: &str = "KSM618";
