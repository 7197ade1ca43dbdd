//! `dbio run --workload mysql`'s part of the one run path: find MariaDB,
//! install or reuse the instance on the target, start the server (stopped
//! again whatever happens: the [`Server`] guard), load or reuse SLOB's
//! tables, run the sessions through the harness, and join what they and the
//! server measured into the report (`mysql`) and the stored histograms. A
//! server that died under the run fails it (the sessions' errors say so;
//! what was measured is kept).

use mysql::prelude::Queryable;

use super::CommandError;
use super::run_db::{Histograms, command_error, histograms};
use crate::config::RunConfig;
use crate::environment::Environment;
use crate::harness::{self, Options};
use crate::report::Report;
use crate::report::mysql::{MysqlSummary, ServerFacts};
use crate::target::Target;
use crate::workload::Shared;
use crate::workload::db::ServerError;
use crate::workload::mysql::run::Mysql;
use crate::workload::mysql::server::{self, Binaries, DATABASE, Paths, Server};
use crate::workload::mysql::{MysqlConfig, data};

/// Runs a mysql workload: the report and the latency histograms to store.
pub fn run(
    cfg: &RunConfig,
    my: &MysqlConfig,
    target: &Target,
    shared: &Shared,
    opts: Options,
    progress: bool,
) -> Result<(Report, Histograms), CommandError> {
    let bin = Binaries::find(my.bin.as_deref()).map_err(command_error)?;
    let paths = Paths::new(&cfg.target, my.redo_dir.as_deref());
    let settings = server::settings(
        &paths,
        my.page_size,
        my.flush_method,
        my.slob.cache_bytes,
        my.slob.sessions(),
        &my.set,
    );
    if progress {
        eprintln!(
            "starting MariaDB {} on {}",
            bin.version,
            paths.data.display()
        );
    }
    let mut srv = Server::start(bin, paths, &settings, my.page_size, my.memory_bytes)
        .map_err(command_error)?;
    if progress {
        eprintln!(
            "loading {} table(s) of {} rows (or reusing them)",
            my.slob.schemas, my.slob.scale_blocks
        );
    }
    let load = data::ensure(
        &srv,
        my.slob.schemas,
        my.slob.scale_blocks,
        my.page_size,
        opts.interrupt,
    )
    .map_err(command_error)?;
    let applied = applied_settings(&srv, &settings).map_err(command_error)?;
    let storage = vec![srv.paths.data.clone(), srv.paths.redo.clone()];
    let work = Mysql::new(
        cfg,
        my,
        srv.opts(Some(DATABASE)),
        srv.opts(None),
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
        settings: applied,
        memory_limit_bytes: srv.cgroup.as_ref().map(|c| c.limit_bytes),
        cgroup: srv
            .cgroup
            .as_ref()
            .map(|c| format!("{} ({})", c.path.display(), c.version)),
        load,
        page_size: my.page_size,
        direct: my.flush_method == "O_DIRECT",
    };
    let summary = MysqlSummary::new(
        facts,
        &out.parts,
        out.result.measured_s,
        out.result.cpu.total_s(),
        out.result.window.as_ref(),
    );
    let histograms = histograms("mysql", &out.parts);
    let mut result = out.result;
    if died && result.status != harness::Status::Failed {
        result.status = harness::Status::Failed;
        result.error = Some("MariaDB died during the run".into());
    }
    let mut report = Report::new(cfg, target, result, Environment::capture());
    report.mysql = Some(summary);
    Ok((report, histograms))
}

/// The server's variables dbio set (and `--mysql-set`'s), as it applied them.
fn applied_settings(
    srv: &Server,
    settings: &[(String, String)],
) -> Result<Vec<(String, String)>, ServerError> {
    let mut c = srv.connect(None)?;
    let names: Vec<String> = settings
        .iter()
        .map(|(k, _)| format!("'{}'", k.replace('-', "_").replace('\'', "")))
        .collect();
    c.query(format!(
        "SELECT LOWER(VARIABLE_NAME), VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES \
         WHERE LOWER(VARIABLE_NAME) IN ({}) ORDER BY 1",
        names.join(", ")
    ))
    .map_err(|e| ServerError::Failed(format!("read the server's variables: {e}")))
}
