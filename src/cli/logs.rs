//! `-v LEVEL`: kubectl's log levels, as lines on stderr.
//!
//! - 1 to 3: more detail in the output itself (the subcommands read the level);
//! - 4 and 5: debug logs of what the tool reads and decides (`kubectl_ksm` at debug);
//! - 6: every HTTP request to the API server: method, URL, status, time (kubectl's -v=6);
//! - 7 and above: with the request headers, credentials redacted (kubectl's -v=7).

use tracing_subscriber::EnvFilter;

/// The target of the HTTP request lines (see `cluster::http`).
pub const HTTP_TARGET: &str = "kubectl_ksm::http";

/// The log filter for a level: `None` when nothing is logged.
pub fn filter(level: u8) -> Option<String> {
    match level {
        0..=3 => None,
        4 | 5 => Some(format!("warn,kubectl_ksm=debug,{HTTP_TARGET}=off")),
        6 => Some(format!("warn,kubectl_ksm=debug,{HTTP_TARGET}=debug")),
        _ => Some(format!("warn,kubectl_ksm=debug,{HTTP_TARGET}=trace")),
    }
}

/// Sends log lines of `level` to stderr (once per process; later calls do nothing).
pub fn init(level: u8, ansi: bool) {
    let Some(f) = filter(level) else { return };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::new(f))
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(ansi)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_kubectl() {
        assert_eq!(filter(0), None);
        assert_eq!(filter(3), None);
        assert!(filter(4).unwrap().contains("kubectl_ksm::http=off"));
        assert!(filter(6).unwrap().contains("kubectl_ksm::http=debug"));
        assert!(filter(9).unwrap().contains("kubectl_ksm::http=trace"));
        for l in 4..=10 {
            EnvFilter::try_new(filter(l).unwrap()).expect("a valid filter");
        }
    }
}
