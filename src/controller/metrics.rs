//! Prometheus metrics of the controller (`/metrics`, text exposition format).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabel {
    /// `success` or `error`.
    pub result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WriteLabel {
    /// `apply`, `delete`, `status`, `finalizer`, `lease`.
    pub verb: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct FromLabel {
    /// `rendered`, or `recalled` from what the last reconcile kept.
    pub from: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabel {
    pub kind: &'static str,
}

pub struct Metrics {
    pub registry: Registry,
    pub reconciles: Family<ResultLabel, Counter>,
    pub errors: Family<KindLabel, Counter>,
    pub duration: Histogram,
    pub writes: Family<WriteLabel, Counter>,
    pub managed: Family<KindLabel, Gauge>,
    pub leader: Gauge,
    pub desired: Family<FromLabel, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("kubectl_ksm");
        let reconciles = Family::<ResultLabel, Counter>::default();
        registry.register(
            "reconciles",
            "ServiceSet reconciles, by result",
            reconciles.clone(),
        );
        let errors = Family::<KindLabel, Counter>::default();
        registry.register(
            "reconcile_errors",
            "Reconcile errors, by kind (conflict, transient, api)",
            errors.clone(),
        );
        let duration = Histogram::new([
            0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
        ]);
        registry.register(
            "reconcile_duration_seconds",
            "Duration of one ServiceSet reconcile",
            duration.clone(),
        );
        let writes = Family::<WriteLabel, Counter>::default();
        registry.register(
            "writes",
            "Write requests sent to the API server, by verb",
            writes.clone(),
        );
        let managed = Family::<KindLabel, Gauge>::default();
        registry.register(
            "managed_objects",
            "Objects the adapter manages, by kind (ServiceSet, HelmRelease, Kustomization)",
            managed.clone(),
        );
        let leader = Gauge::default();
        registry.register(
            "leader",
            "1 while this replica leads (or runs without leader election)",
            leader.clone(),
        );
        let desired = Family::<FromLabel, Counter>::default();
        registry.register(
            "desired",
            "What reconciles want of their ServiceSets, rendered and validated, or recalled \
             from what the ServiceSet's last reconcile kept (nothing changed since)",
            desired.clone(),
        );
        Metrics {
            registry,
            desired,
            reconciles,
            errors,
            duration,
            writes,
            managed,
            leader,
        }
    }
}

impl Metrics {
    pub fn write(&self, verb: &'static str) {
        self.writes.get_or_create(&WriteLabel { verb }).inc();
    }

    /// A reconcile's [`crate::core::adapter::Desired`], `rendered` or `recalled`.
    pub fn desired(&self, from: &'static str) {
        self.desired.get_or_create(&FromLabel { from }).inc();
    }

    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Encoding into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
