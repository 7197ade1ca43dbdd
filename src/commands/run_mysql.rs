//! `dbio run --workload mysql`'s [`Arm`] of a server run (`run_db.rs` has
//! the flow): find MariaDB, install or reuse the instance on the target,
//! start the server (stopped again whatever happens: the [`Server`] guard),
//! load or reuse SLOB's tables, run the sessions through the harness; what
//! they and the server measured is the report's `mysql` section. A server
//! that died under the run fails it (the sessions' errors say so; what was
//! measured is kept).

use mysql::prelude::Queryable;

use super::run_db::{Arm, Ctx, Ran};
use crate::harness;
use crate::report::Report;
use crate::report::db::Setup;
use crate::report::mysql::{MysqlSummary, ServerFacts};
use crate::samplers::telemetry::TelemetrySummary;
use crate::workload::db::ServerError;
use crate::workload::mysql::args::PLACED;
use crate::workload::mysql::endpoint::Endpoint;
use crate::workload::mysql::run::{Mysql, MysqlPart};
use crate::workload::mysql::server::{self, Binaries, Paths, Server};
use crate::workload::mysql::stats::Snapshot;
use crate::workload::mysql::{MysqlConfig, data};

/// The variables reported for an existing server (`--mysql-url`).
const REPORTED: [&str; 12] = [
    "datadir",
    "innodb_log_group_home_dir",
    "innodb_page_size",
    "innodb_buffer_pool_size",
    "innodb_flush_method",
    "innodb_flush_log_at_trx_commit",
    "innodb_doublewrite",
    "innodb_log_file_size",
    "innodb_file_per_table",
    "innodb_io_capacity",
    "performance_schema",
    "max_connections",
];

impl Arm for MysqlConfig {
    type Facts = ServerFacts;
    type Stats = Snapshot;
    type Summary = MysqlSummary;
    const NAME: &'static str = "mysql";

    fn url(&self) -> Option<&str> {
        self.server.url.as_deref()
    }

    /// An existing server: nothing changed but the database dbio owns there.
    fn existing(&self, url: &str, ctx: Ctx) -> Result<Ran<ServerFacts, Snapshot>, ServerError> {
        let my = self;
        let ep = Endpoint::url(url)?;
        let names: Vec<String> = REPORTED.iter().map(|s| s.to_string()).collect();
        let applied = applied_settings(&ep, &names)?;
        let var = |k: &str| {
            applied
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let page_size: u32 = var("innodb_page_size").parse().unwrap_or(my.page_size);
        let version = server_version(&ep)?;
        announce_load(my, &ctx);
        let load = data::ensure(&ep, shape(my, page_size), ctx.opts.interrupt)?;
        let (data_dir, redo_dir) = (var("datadir"), var("innodb_log_group_home_dir"));
        let redo = match redo_dir.as_str() {
            "" | "./" => data_dir.clone(),
            r => r.to_string(),
        };
        let storage: Vec<std::path::PathBuf> = [&data_dir, &redo]
            .into_iter()
            .map(std::path::PathBuf::from)
            .filter(|p| p.is_dir())
            .collect();
        let work = Mysql::new(
            ctx.cfg,
            my,
            page_size,
            ep.work.clone(),
            ep.monitor.clone(),
            storage,
            ctx.shared,
        );
        let out = harness::run_synced(&work, ctx.shared, ctx.opts, ctx.sync);
        let facts = ServerFacts {
            version,
            direct: var("innodb_flush_method") == "O_DIRECT",
            data_dir,
            redo_dir: redo,
            instance_reused: true,
            setup: Setup::new(applied, None, load),
            page_size,
            window: my.server.window,
        };
        Ok(Ran {
            facts,
            out,
            died: None,
        })
    }

    /// A server that died under the run fails it.
    fn own(&self, ctx: Ctx) -> Result<Ran<ServerFacts, Snapshot>, ServerError> {
        let my = self;
        let bin = Binaries::find(my.server.bin.as_deref())?;
        let paths = Paths::new(&ctx.cfg.target, my.redo_dir.as_deref());
        let settings = server::settings(
            my.page_size,
            my.flush_method,
            my.slob.cache_bytes,
            my.slob.sessions(),
            &my.server.set,
        );
        if ctx.progress {
            eprintln!(
                "starting MariaDB {} on {}",
                bin.version,
                crate::terminal::path(&paths.data)
            );
        }
        let mut srv = Server::start(bin, paths, &settings, my.page_size, my.server.memory_bytes)?;
        let ep = srv.endpoint();
        announce_load(my, &ctx);
        let load = data::ensure(&ep, shape(my, my.page_size), ctx.opts.interrupt)
            .map_err(|e| with_cause(e, &srv))?;
        let names: Vec<String> = PLACED
            .iter()
            .map(|s| s.to_string())
            .chain(settings.iter().map(|(k, _)| k.clone()))
            .collect();
        let applied = applied_settings(&ep, &names)?;
        let storage = vec![srv.paths.data.clone(), srv.paths.redo.clone()];
        let work = Mysql::new(
            ctx.cfg,
            my,
            my.page_size,
            ep.work.clone(),
            ep.monitor.clone(),
            storage,
            ctx.shared,
        );
        let mut out = harness::run_synced(&work, ctx.shared, ctx.opts, ctx.sync);
        let died = !srv.alive();
        srv.stop();
        if let (Some(err), Some(c)) = (&out.result.error, srv.log_cause()) {
            out.result.error = Some(format!("{err}: {c}"));
        }
        let facts = ServerFacts {
            version: srv.bin.version.clone(),
            data_dir: srv.paths.data.display().to_string(),
            redo_dir: srv.paths.redo.display().to_string(),
            instance_reused: srv.reused,
            setup: Setup::new(applied, srv.cgroup.as_ref(), load)
                .with_departures(server::departures(&settings)),
            page_size: my.page_size,
            direct: my.flush_method == "O_DIRECT",
            window: my.server.window,
        };
        Ok(Ran {
            facts,
            out,
            died: died.then_some("MariaDB died during the run"),
        })
    }

    fn summary(
        facts: ServerFacts,
        parts: &[MysqlPart],
        secs: f64,
        cpu_s: f64,
        window: Option<&TelemetrySummary>,
    ) -> MysqlSummary {
        MysqlSummary::new(facts, parts, secs, cpu_s, window)
    }

    fn put(report: &mut Report, summary: MysqlSummary) {
        report.mysql = Some(summary);
    }
}

/// A failure of the server's (the load's statements) with the OS error its
/// log names, on the filesystem of its data, when it names one.
fn with_cause(e: ServerError, srv: &Server) -> ServerError {
    match (e, srv.log_cause()) {
        (ServerError::Failed(m), Some(c)) => ServerError::Failed(format!("{m}: {c}")),
        (e, _) => e,
    }
}

/// "loading N table(s) of M rows in F data file(s) each (or reusing them)".
fn announce_load(my: &MysqlConfig, ctx: &Ctx) {
    let files = format!(" in {} data file(s) each", my.files);
    ctx.announce_load(my.slob.schemas, my.slob.scale_blocks, &files);
}

/// SLOB's tables in InnoDB pages of `page`.
fn shape(my: &MysqlConfig, page: u32) -> data::Shape {
    data::Shape {
        schemas: my.slob.schemas,
        scale: my.slob.scale_blocks,
        page,
        files: my.files,
    }
}

/// "10.11.19-MariaDB-...": the server's version.
fn server_version(ep: &Endpoint) -> Result<String, ServerError> {
    let mut c = ep.connect_monitor()?;
    let v: Option<String> = c
        .query_first("SELECT VERSION()")
        .map_err(|e| ServerError::Failed(format!("read the server's version: {e}")))?;
    Ok(v.unwrap_or_default())
}

/// Variables `names` (dbio's settings, `--mysql-set`'s), as the server
/// applied them.
fn applied_settings(ep: &Endpoint, names: &[String]) -> Result<Vec<(String, String)>, ServerError> {
    let mut c = ep.connect_monitor()?;
    let names: Vec<String> = names
        .iter()
        .map(|k| format!("'{}'", k.replace('-', "_").replace('\'', "")))
        .collect();
    c.query(format!(
        "SELECT LOWER(VARIABLE_NAME), VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES \
         WHERE LOWER(VARIABLE_NAME) IN ({}) ORDER BY 1",
        names.join(", ")
    ))
    .map_err(|e| ServerError::Failed(format!("read the server's variables: {e}")))
}
