//! `--workload pg`'s options into a [`RunConfig`]: SLOB's shape and mix
//! options (shared with `--workload slob`), `--cache` as shared_buffers,
//! `--redo-dir` as the WAL directory, and the pg options. Options that mean
//! nothing to a real server are refused in one line.

use crate::options::Refused;
use std::path::PathBuf;

use clap::Args;

use crate::config::{RunConfig, WorkloadConfig};
use crate::options::RunArgs;
use crate::options::db::{Instead, ServerArgs, refuse_model_options, refuse_with_url, resolve};
use crate::workload::pg::{PAGE, PgConfig};

/// PostgreSQL in dbio's words.
const PG: Instead = Instead {
    workload: "pg",
    makes: "the cluster",
    cache: "shared_buffers",
    processes: "the server's processes",
    processes_bytes: 64 << 20,
    files: Some("PostgreSQL lays out its own files"),
    redo: "the server writes its own WAL",
    redo_files: "WAL segments are the server's",
    redo_file_size: "use --pg-set max_wal_size=...",
    redo_block: "WAL pages are the server's",
    redo_sync: "use --pg-set wal_sync_method=...",
    log_buffer: "use --pg-set wal_buffers=...",
};

#[derive(Args, Debug, Default, Clone)]
#[command(next_help_heading = "PostgreSQL (--workload pg)")]
pub struct PgArgs {
    /// Directory of PostgreSQL's binaries [default: the highest /usr/lib/postgresql/*/bin].
    #[arg(long, value_name = "DIR")]
    pub pg_bin: Option<PathBuf>,

    /// A server setting, NAME=VALUE (repeatable); wins over dbio's own (e.g. --pg-set wal_compression=on).
    #[arg(long = "pg-set", value_name = "NAME=VALUE", value_parser = parse_setting)]
    pub pg_set: Vec<(String, String)>,

    /// Bound the memory of the server's processes, page cache included (a memory cgroup), e.g. 256M: physical reads then reach the device.
    #[arg(long, value_name = "SIZE", value_parser = crate::units::parse_size)]
    pub pg_memory: Option<u64>,

    /// Autovacuum on dbio's tables: on (the stock server's default) or off (no background vacuum in the window).
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    pub pg_autovacuum: Option<bool>,

    /// Use this existing server instead of starting one (postgresql://USER@HOST/DB, or postgresql:///DB?host=/socket/dir): dbio works in a schema dbio of its own there and changes no settings.
    #[arg(long, value_name = "URL")]
    pub pg_url: Option<String>,
}

impl PgArgs {
    /// The options every server workload has, under their pg names.
    pub fn server(self) -> ServerArgs {
        ServerArgs {
            names: ["--pg-bin", "--pg-set", "--pg-memory", "--pg-url"],
            bin: self.pg_bin,
            set: self.pg_set,
            memory: self.pg_memory,
            url: self.pg_url,
        }
    }

    /// The first pg option given, for refusing them with other workloads.
    pub fn first_given(&self) -> Option<&'static str> {
        match self.pg_autovacuum {
            Some(_) => Some("--pg-autovacuum"),
            None => self.clone().server().first_given(),
        }
    }
}

/// `on` or `off` (`--pg-autovacuum`).
fn parse_on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!(
            "{s:?} is neither on nor off (the stock server's default is on)"
        )),
    }
}

/// `NAME=VALUE` with a setting-like name, and a value postgresql.conf can
/// carry (`conf::quote`).
fn parse_setting(s: &str) -> Result<(String, String), String> {
    let (k, v) =
        crate::workload::db::parse_setting(s, "wal_compression=on").map_err(|e| e.to_string())?;
    crate::workload::pg::conf::quote(&v).map_err(|e| format!("the value {e}"))?;
    Ok((k, v))
}

impl RunArgs {
    /// Validates a `--workload pg` run.
    pub(crate) fn into_pg_config(mut self) -> Result<RunConfig, Refused> {
        refuse_model_options(&self, &PG)?;
        self.target = pg_path("--target", &self.target)?;
        if let Some(dir) = &self.slob.redo_dir {
            self.slob.redo_dir = Some(pg_path("--redo-dir", dir)?);
        }
        if let Some(bin) = &self.pg.pg_bin {
            crate::workload::pg::binaries::check_bin_dir(bin).map_err(|e| e.to_string())?;
        }
        let server = self.pg.clone().server();
        refuse_with_url(&self, &server, &[])?;
        if let Some(bs) = self.bs
            && bs != PAGE
        {
            return Err(format!(
                "--bs {bs} does not apply to --workload pg: PostgreSQL's page is 8k; drop --bs"
            )
            .into());
        }
        let autovacuum = self.pg.pg_autovacuum.unwrap_or(true);
        resolve(self, server, &PG, (PAGE, 1), |slob, wal_dir, server| {
            WorkloadConfig::Pg(PgConfig {
                slob,
                wal_dir,
                autovacuum,
                server,
            })
        })
    }
}

/// A directory (`--target`, `--redo-dir`) as the server's processes
/// (which work in `/`) and its report reach it: an absolute path, in UTF-8
/// (a run's report and the cluster's record are UTF-8 text).
fn pg_path(option: &str, path: &std::path::Path) -> Result<PathBuf, Refused> {
    super::utf8_path(option, path)?;
    std::path::absolute(path).map_err(|e| format!("{option} {}: {e}", path.display()).into())
}

#[cfg(test)]
mod tests {
    use crate::config::RunConfig;
    use crate::options::Refused;
    use crate::options::db::{SHAPE, config_of, run_config};

    fn config(args: &[&str]) -> Result<RunConfig, Refused> {
        config_of("pg", args)
    }

    /// A pg run's own settings.
    fn pg_of(c: RunConfig) -> crate::workload::pg::PgConfig {
        match c.workload {
            crate::config::WorkloadConfig::Pg(pg) => pg,
            w => panic!("a {} run, not pg", w.name()),
        }
    }

    #[test]
    fn pg_options_resolve() {
        let c = config(
            &[
                &SHAPE[..],
                &["--pg-set", "wal_compression=on", "--work-loop", "10"][..],
            ]
            .concat(),
        )
        .unwrap();
        assert_eq!(c.workload.name(), "pg");
        let pg = pg_of(c.clone());
        let set = &pg.server.set;
        assert_eq!(pg.slob.schemas, 4);
        assert_eq!(pg.slob.scale_blocks, 1000);
        assert_eq!(pg.slob.update_pct, 20);
        assert_eq!(pg.slob.cache_bytes, 64 << 20);
        assert_eq!(
            *set,
            vec![("wal_compression".to_string(), "on".to_string())]
        );
        assert_eq!(c.length, crate::config::RunLength::Ops { ops: 40 });
    }

    #[test]
    fn options_that_mean_nothing_to_a_server_are_refused() {
        let e = config(&["--db-writers", "2"]).unwrap_err();
        assert!(
            e.contains("--db-writers") && e.contains("--workload pg"),
            "{e}"
        );
        let e = config(&["--bs", "4k"]).unwrap_err();
        assert!(e.contains("--bs") && e.contains("8k"), "{e}");
        let e = config(&["--pg-set", "oops"]).unwrap_err();
        assert!(e.contains("NAME=VALUE"), "{e}");
        let e = config(&["--pg-set", "a=x\ry"]).unwrap_err();
        assert!(e.contains("line break"), "{e}");
        let wal = std::path::absolute("wal-here").unwrap();
        let c = config(&["--redo-dir", "wal-here"]).unwrap();
        assert_eq!(pg_of(c).wal_dir, Some(wal), "made absolute");
        let e = config(&["--update-pct", "101"]).unwrap_err();
        assert!(e.contains("--update-pct"), "{e}");
        let e = run_config(&["--pg-set", "a=b", "--sessions", "2"]).unwrap_err();
        assert!(e.contains("--pg-set applies to --workload pg"), "{e}");
    }
}

#[cfg(test)]
mod setting_tests {
    use super::*;

    #[test]
    fn settings_parse_or_say_what_is_wrong() {
        assert_eq!(
            parse_setting("Wal_Compression = on").unwrap(),
            ("wal_compression".into(), "on".into())
        );
        assert_eq!(
            parse_setting("shared_buffers=1GB").unwrap().1,
            "1GB".to_string()
        );
        assert!(
            parse_setting("nothing")
                .unwrap_err()
                .to_string()
                .contains("NAME=VALUE")
        );
        assert!(
            parse_setting("a b=1")
                .unwrap_err()
                .to_string()
                .contains("not a setting name")
        );
    }
}
