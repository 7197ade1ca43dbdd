//! `dbio run --workload pg`'s part of the one run path: find PostgreSQL,
//! make or reuse the cluster on the target, start the server (stopped again
//! whatever happens: the [`Server`] guard), load or reuse SLOB's tables,
//! run the sessions through the harness, and join what they and the server
//! measured into the report (`pg`) and the stored histograms.

use super::CommandError;
use super::run_db::{Histograms, announce_load, command_error, report};
use crate::config::RunConfig;
use crate::harness::{self, Options};
use crate::report::Report;
use crate::report::db::Setup;
use crate::report::pg::{PgSummary, ServerFacts};
use crate::storage::Target;
use crate::workload::Shared;
use crate::workload::pg::endpoint::Endpoint;
use crate::workload::pg::run::Pg;
use crate::workload::pg::server::{self, Binaries, Paths, Server, ServerError};
use crate::workload::pg::{PgConfig, data};

/// Runs a pg workload: the report and the latency histograms to store.
pub fn run(
    cfg: &RunConfig,
    pg: &PgConfig,
    target: &Target,
    shared: &Shared,
    opts: Options,
    progress: bool,
) -> Result<(Report, Histograms), CommandError> {
    let load_msg = || announce_load(progress, pg.slob.schemas, pg.slob.scale_blocks, "");
    let (facts, out) = match &pg.server.url {
        Some(url) => {
            // An existing server: nothing started, nothing changed but the
            // schema dbio owns there.
            let ep = Endpoint::url(url).map_err(command_error)?;
            let version = server_version(&ep).map_err(command_error)?;
            load_msg();
            let load = data::ensure(&ep, pg.slob.schemas, pg.slob.scale_blocks, opts.interrupt)
                .map_err(command_error)?;
            let settings = applied_settings(&ep).map_err(command_error)?;
            let storage = ep.local_storage();
            let (data_dir, wal_dir) = match storage.as_slice() {
                [d, w] => (d.display().to_string(), w.display().to_string()),
                _ => ("(not on this host, or not readable)".into(), String::new()),
            };
            let work = Pg::new(cfg, pg, &ep, storage, shared);
            let out = harness::run(&work, shared, opts);
            let facts = ServerFacts {
                version,
                bin_dir: String::new(),
                data_dir,
                wal_dir,
                cluster_reused: true,
                setup: Setup::new(settings, None, load),
            };
            (facts, out)
        }
        None => {
            let bin = Binaries::find(pg.server.bin.as_deref()).map_err(command_error)?;
            let paths = Paths::new(&cfg.target, pg.wal_dir.as_deref());
            let settings = server::settings(
                &paths,
                pg.slob.cache_bytes,
                pg.slob.sessions(),
                &pg.server.set,
            );
            if progress {
                eprintln!("starting {} on {}", bin.version, paths.data.display());
            }
            let mut srv = Server::start(bin, paths, &settings, pg.server.memory_bytes)
                .map_err(command_error)?;
            let ep = Endpoint::of(&srv);
            load_msg();
            let load = data::ensure(&ep, pg.slob.schemas, pg.slob.scale_blocks, opts.interrupt)
                .map_err(command_error)?;
            let applied = applied_settings(&ep).map_err(command_error)?;
            let storage = vec![srv.paths.data.clone(), srv.paths.wal.clone()];
            let work = Pg::new(cfg, pg, &ep, storage, shared);
            let out = harness::run(&work, shared, opts);
            srv.stop();
            let facts = ServerFacts {
                version: srv.bin.version.clone(),
                bin_dir: srv.bin.dir.display().to_string(),
                data_dir: srv.paths.data.display().to_string(),
                wal_dir: srv.paths.wal.display().to_string(),
                cluster_reused: srv.reused,
                setup: Setup::new(applied, srv.cgroup.as_ref(), load),
            };
            (facts, out)
        }
    };
    let (mut report, summary, histograms) =
        report(cfg, target, out, "pg", None, |parts, secs, cpu, window| {
            PgSummary::new(facts, parts, secs, cpu, window)
        });
    report.pg = Some(summary);
    Ok((report, histograms))
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
