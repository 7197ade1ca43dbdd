//! `dbio run --workload pg`'s [`Arm`] of a server run (`run_db.rs` has the
//! flow): find PostgreSQL, make or reuse the cluster on the target, start
//! the server (stopped again whatever happens: the [`Server`] guard), load
//! or reuse SLOB's tables, run the sessions through the harness; what they
//! and the server measured is the report's `pg` section.

use super::run_db::{Arm, Ctx, Ran};
use crate::harness;
use crate::report::Report;
use crate::report::db::Setup;
use crate::report::pg::{PgSummary, ServerFacts};
use crate::samplers::telemetry::TelemetrySummary;
use crate::workload::db::cause;
use crate::workload::db::data::LoadReport;
use crate::workload::pg::endpoint::Endpoint;
use crate::workload::pg::run::{Pg, PgPart};
use crate::workload::pg::server::{self, Binaries, Paths, Server, ServerError};
use crate::workload::pg::space::Estimate;
use crate::workload::pg::stats::Snapshot;
use crate::workload::pg::{PgConfig, data};

impl Arm for PgConfig {
    type Facts = ServerFacts;
    type Stats = Snapshot;
    type Summary = PgSummary;
    const NAME: &'static str = "pg";

    fn url(&self) -> Option<&str> {
        self.server.url.as_deref()
    }

    /// An existing server: nothing changed but the schema dbio owns there.
    fn existing(&self, url: &str, ctx: Ctx) -> Result<Ran<ServerFacts, Snapshot>, ServerError> {
        let ep = Endpoint::url(url)?;
        let version = server_version(&ep)?;
        let (load, settings) = load(self, &ep, &ctx)?;
        let storage = ep.local_storage();
        let (data_dir, wal_dir) = match storage.as_slice() {
            [d, w] => (d.display().to_string(), w.display().to_string()),
            _ => ("(not on this host, or not readable)".into(), String::new()),
        };
        let work = Pg::new(ctx.cfg, self, &ep, storage, ctx.shared);
        let out = harness::run_synced(&work, ctx.shared, ctx.opts, ctx.sync);
        let facts = ServerFacts {
            version,
            bin_dir: String::new(),
            data_dir,
            wal_dir,
            cluster_reused: true,
            setup: Setup::new(settings, None, load).with_departures(server::departures(
                &[],
                false,
                self.autovacuum,
            )),
            window: self.server.window,
        };
        Ok(Ran {
            facts,
            out,
            died: None,
        })
    }

    fn own(&self, ctx: Ctx) -> Result<Ran<ServerFacts, Snapshot>, ServerError> {
        let bin = Binaries::find(self.server.bin.as_deref())?;
        let paths = Paths::new(&ctx.cfg.target, self.wal_dir.as_deref());
        let room = Estimate::new(
            &paths,
            self.slob.schemas,
            self.slob.scale_blocks,
            &self.server.set,
        )
        .map_err(|e| server::failed("examine the target's free space", e))?;
        let settings = server::settings(
            &paths,
            self.slob.cache_bytes,
            self.slob.sessions(),
            &room.wal_settings(),
            &self.server.set,
        )?;
        if ctx.progress {
            eprintln!(
                "starting {} on {}",
                bin.version,
                crate::terminal::path(&paths.data)
            );
        }
        let mut srv = Server::start(bin, paths, &settings, self.server.memory_bytes)?;
        let ep = Endpoint::of(&srv);
        let (load, applied) = load(self, &ep, &ctx).map_err(|e| with_cause(e, &srv.paths))?;
        let storage = vec![srv.paths.data.clone(), srv.paths.wal.clone()];
        let work = Pg::new(ctx.cfg, self, &ep, storage, ctx.shared);
        let mut out = harness::run_synced(&work, ctx.shared, ctx.opts, ctx.sync);
        if let Some(e) = out.result.error.take() {
            out.result.error = Some(named_cause(e, &srv.paths));
        }
        srv.stop();
        let facts = ServerFacts {
            version: srv.bin.version.clone(),
            bin_dir: srv.bin.dir.display().to_string(),
            data_dir: srv.paths.data.display().to_string(),
            wal_dir: srv.paths.wal.display().to_string(),
            cluster_reused: srv.reused,
            setup: Setup::new(applied, srv.cgroup.as_ref(), load)
                .with_departures(server::departures(&settings, true, self.autovacuum)),
            window: self.server.window,
        };
        Ok(Ran {
            facts,
            out,
            died: None,
        })
    }

    fn summary(
        facts: ServerFacts,
        parts: &[PgPart],
        secs: f64,
        cpu_s: f64,
        window: Option<&TelemetrySummary>,
    ) -> PgSummary {
        PgSummary::new(facts, parts, secs, cpu_s, window)
    }

    fn put(report: &mut Report, summary: PgSummary) {
        report.pg = Some(summary);
    }
}

/// Loads or reuses SLOB's tables (saying so), then reads the settings the
/// server runs with.
fn load(
    pg: &PgConfig,
    ep: &Endpoint,
    ctx: &Ctx,
) -> Result<(LoadReport, Vec<(String, String)>), ServerError> {
    ctx.announce_load(pg.slob.schemas, pg.slob.scale_blocks, "");
    let load = data::ensure(
        ep,
        pg.slob.schemas,
        pg.slob.scale_blocks,
        ctx.opts.interrupt,
    )?;
    data::set_autovacuum(ep, pg.slob.schemas, pg.autovacuum)?;
    Ok((load, applied_settings(ep)?))
}

/// A failure with the operating-system error behind it, when the server's
/// words or its log name one ("could not extend file ...: No space left
/// on device"), or its filesystem is full.
fn with_cause(e: ServerError, paths: &Paths) -> ServerError {
    match e {
        ServerError::Failed(m) => ServerError::Failed(named_cause(m, paths)),
        e => e,
    }
}

/// `message`, then the operating-system error it or the server log names.
fn named_cause(message: String, paths: &Paths) -> String {
    let log = std::fs::read_to_string(&paths.log).unwrap_or_default();
    let dir = paths.named_in(&message);
    let named = cause::describe(&message, dir)
        .or_else(|| cause::describe(&log, paths.named_in(&log)))
        .or_else(|| cause::describe_nearly_full(dir));
    match named {
        Some(c) => format!("{message}: {c}"),
        None => message,
    }
}

/// "PostgreSQL 16.4 ...": the server's version, its first words.
fn server_version(ep: &Endpoint) -> Result<String, ServerError> {
    let mut c = ep.connect_monitor()?;
    let v: String = c
        .query_one("SELECT version()", &[])
        .map_err(|e| ServerError::Failed(format!("read the server's version: {e}")))?
        .get(0);
    Ok(v.split(" on ").next().unwrap_or(&v).to_string())
}

/// The settings not at their default, as the server reports them.
fn applied_settings(ep: &Endpoint) -> Result<Vec<(String, String)>, ServerError> {
    let mut c = ep.connect_monitor()?;
    let rows = c
        .query(
            "SELECT name, current_setting(name) FROM pg_settings \
             WHERE source NOT IN ('default', 'override') ORDER BY name",
            &[],
        )
        .map_err(|e| ServerError::Failed(format!("read pg_settings: {e}")))?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}
