//! `dbio run --workload mysql`'s part of the one run path: find MariaDB,
//! install or reuse the instance on the target, start the server (stopped
//! again whatever happens: the [`Server`] guard), load or reuse SLOB's
//! tables, run the sessions through the harness, and join what they and the
//! server measured into the report (`mysql`) and the stored histograms. A
//! server that died under the run fails it (the sessions' errors say so;
//! what was measured is kept).

use mysql::prelude::Queryable;

use super::CommandError;
use super::run_db::{Histograms, announce_load, command_error, report};
use crate::config::RunConfig;
use crate::harness::{self, Options};
use crate::report::Report;
use crate::report::db::Setup;
use crate::report::mysql::{MysqlSummary, ServerFacts};
use crate::storage::Target;
use crate::workload::Shared;
use crate::workload::db::ServerError;
use crate::workload::mysql::endpoint::Endpoint;
use crate::workload::mysql::run::Mysql;
use crate::workload::mysql::server::{self, Binaries, Paths, Server};
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

/// Runs a mysql workload: the report and the latency histograms to store.
pub fn run(
    cfg: &RunConfig,
    my: &MysqlConfig,
    target: &Target,
    shared: &Shared,
    opts: Options,
    progress: bool,
) -> Result<(Report, Histograms), CommandError> {
    let load_msg = || {
        let files = format!(" in {} data file(s) each", my.files);
        announce_load(progress, my.slob.schemas, my.slob.scale_blocks, &files);
    };
    let (facts, out, died) = match &my.server.url {
        Some(url) => {
            // An existing server: nothing started, nothing changed but the
            // database dbio owns there.
            let ep = Endpoint::url(url).map_err(command_error)?;
            let names: Vec<String> = REPORTED.iter().map(|s| s.to_string()).collect();
            let applied = applied_settings(&ep, &names).map_err(command_error)?;
            let var = |k: &str| {
                applied
                    .iter()
                    .find(|(n, _)| n == k)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            };
            let page_size: u32 = var("innodb_page_size").parse().unwrap_or(my.page_size);
            let version = server_version(&ep).map_err(command_error)?;
            load_msg();
            let load = data::ensure(
                &ep,
                data::Shape {
                    schemas: my.slob.schemas,
                    scale: my.slob.scale_blocks,
                    page: page_size,
                    files: my.files,
                },
                opts.interrupt,
            )
            .map_err(command_error)?;
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
                cfg,
                my,
                page_size,
                ep.work.clone(),
                ep.monitor.clone(),
                storage,
                shared,
            );
            let out = harness::run(&work, shared, opts);
            let facts = ServerFacts {
                version,
                direct: var("innodb_flush_method") == "O_DIRECT",
                data_dir,
                redo_dir: redo,
                instance_reused: true,
                setup: Setup::new(applied, None, load),
                page_size,
            };
            (facts, out, false)
        }
        None => {
            let bin = Binaries::find(my.server.bin.as_deref()).map_err(command_error)?;
            let paths = Paths::new(&cfg.target, my.redo_dir.as_deref());
            let settings = server::settings(
                &paths,
                my.page_size,
                my.flush_method,
                my.slob.cache_bytes,
                my.slob.sessions(),
                &my.server.set,
            );
            if progress {
                eprintln!(
                    "starting MariaDB {} on {}",
                    bin.version,
                    paths.data.display()
                );
            }
            let mut srv =
                Server::start(bin, paths, &settings, my.page_size, my.server.memory_bytes)
                    .map_err(command_error)?;
            let ep = srv.endpoint();
            load_msg();
            let load = data::ensure(
                &ep,
                data::Shape {
                    schemas: my.slob.schemas,
                    scale: my.slob.scale_blocks,
                    page: my.page_size,
                    files: my.files,
                },
                opts.interrupt,
            )
            .map_err(command_error)?;
            let names: Vec<String> = settings.iter().map(|(k, _)| k.clone()).collect();
            let applied = applied_settings(&ep, &names).map_err(command_error)?;
            let storage = vec![srv.paths.data.clone(), srv.paths.redo.clone()];
            let work = Mysql::new(
                cfg,
                my,
                my.page_size,
                ep.work.clone(),
                ep.monitor.clone(),
                storage,
                shared,
            );
            let out = harness::run(&work, shared, opts);
            let died = !srv.alive();
            srv.stop();
            let facts = ServerFacts {
                version: srv.bin.version.clone(),
                data_dir: srv.paths.data.display().to_string(),
                redo_dir: srv.paths.redo.display().to_string(),
                instance_reused: srv.reused,
                setup: Setup::new(applied, srv.cgroup.as_ref(), load),
                page_size: my.page_size,
                direct: my.flush_method == "O_DIRECT",
            };
            (facts, out, died)
        }
    };
    let died = died.then_some("MariaDB died during the run");
    let (mut report, summary, histograms) = report(
        cfg,
        target,
        out,
        "mysql",
        died,
        |parts, secs, cpu, window| MysqlSummary::new(facts, parts, secs, cpu, window),
    );
    report.mysql = Some(summary);
    Ok((report, histograms))
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
