//! `kubectl ksm doctor --watch`: the chains followed as they change. One watch per kind
//! doctor reads (and one on Events), no list per change; after each batch of changes the
//! diagnosis is made again and what changed is printed with the new Events about the
//! chains' objects, in one timeline, oldest first.

use std::collections::HashSet;

use chrono::{SecondsFormat, Utc};

use super::doctor::{DoctorArgs, Snapshot, select_service_sets, without_secret_data};
use super::{CliError, CliResult, EXIT_OK, GlobalArgs, Io, OutputFormat};
use crate::cluster::Cluster;
use crate::core::doctor::{self, Options};
use crate::core::provider;
use crate::core::timeline::{self, Frame};
use crate::output::eval::Paint;

pub fn run(args: &DoctorArgs, global: &GlobalArgs, io: &mut Io) -> CliResult {
    if args.output != OutputFormat::Human {
        return Err(CliError::Fatal(
            "--watch prints a timeline for people: -o is not taken with it".into(),
        ));
    }
    let mut cluster = Cluster::connect(&global.cluster)?;
    let namespace = if args.every_namespace() {
        None
    } else {
        Some(
            global
                .cluster
                .namespace
                .clone()
                .unwrap_or_else(|| cluster.default_namespace.clone()),
        )
    };
    let mut watch = cluster
        .watch_doctor(namespace.as_deref(), &provider::provider_apis(), true)
        .map_err(|e| CliError::Fatal(e.message))?;
    let focus = args.focus();
    let service_set = super::doctor::focus_service_set(focus.as_ref());
    let p = Paint { color: io.color };
    let mut seen = HashSet::new();
    let mut last: Option<Frame> = None;
    loop {
        let snap = cluster
            .next_snapshot(&mut watch, None)
            .map_err(|e| CliError::Fatal(e.message))?
            .ok_or_else(|| CliError::Fatal("the watches stopped".into()))?;
        let snap = Snapshot::live(snap, namespace.clone(), io)?;
        let objects = super::doctor::of_focus(
            select_service_sets(without_secret_data(snap.objects), args.selector.as_ref()),
            focus.as_ref(),
        );
        let now = Utc::now();
        let report = doctor::diagnose(
            &objects,
            &Options {
                now,
                stuck_after: args.stuck_after,
                namespace: namespace.clone(),
                service_set: service_set.clone(),
                secrets_collected: snap.secrets,
                unread: snap.unread,
            },
        );
        let frame = timeline::frame(&report);
        let at = now.to_rfc3339_opts(SecondsFormat::Secs, true);
        let mut entries = timeline::events(&objects, &mut seen);
        entries.extend(match &last {
            None => timeline::first(&frame, &at),
            Some(prev) => timeline::changes(prev, &frame, &at),
        });
        entries.sort();
        for e in &entries {
            crate::output::doctor::timeline_entry(io.stdout, e, io.color)?;
        }
        io.stdout.flush()?;
        last = Some(frame);
        if args.until_healthy && timeline::healthy(&report) {
            writeln!(
                io.stdout,
                "{}",
                p.green("healthy: every service Deployed, no finding")
            )?;
            return Ok(EXIT_OK);
        }
    }
}
