//! `--workload mysql`'s options into a [`RunConfig`]: SLOB's shape and mix
//! options (shared with `--workload slob`), `--cache` as
//! innodb_buffer_pool_size, `--bs` as innodb_page_size, `--io` as
//! innodb_flush_method, `--redo-dir` as innodb_log_group_home_dir. Options
//! that mean nothing to a real server are refused in one line (`db::options`).

use crate::options::Refused;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::config::{IoMode, RunConfig, WorkloadConfig};
use crate::options::RunArgs;
use crate::options::db::{Instead, ServerArgs, refuse_model_options, refuse_with_url, resolve};
use crate::workload::mysql::args::PLACED;
use crate::workload::mysql::{DEFAULT_PAGE, MAX_FILES, MysqlConfig};

/// InnoDB's flush method for an `--io` mode.
fn flush_method(io: IoMode) -> Result<&'static str, Refused> {
    match io {
        IoMode::Direct => Ok("O_DIRECT"),
        IoMode::Fsync => Ok("fsync"),
        IoMode::Dsync => Ok("O_DSYNC"),
        other => Err(format!(
            "--io {} does not apply to --workload mysql: InnoDB's flush methods are --io direct (O_DIRECT), fsync (fsync) or dsync (O_DSYNC)",
            other.name()
        ).into()),
    }
}

/// MariaDB in dbio's words.
const MYSQL: Instead = Instead {
    workload: "mysql",
    makes: "the instance",
    cache: "the buffer pool",
    processes: "the server",
    processes_bytes: 256 << 20,
    files: None,
    redo: "the server writes its own redo",
    redo_files: "the redo log is InnoDB's",
    redo_file_size: "use --mysql-set innodb_log_file_size=...",
    redo_block: "the redo log is InnoDB's",
    redo_sync: "the redo is synced at each commit (innodb_flush_log_at_trx_commit=1)",
    log_buffer: "use --mysql-set innodb_log_buffer_size=...",
};

#[derive(Args, Debug, Default, Clone)]
#[command(next_help_heading = "MariaDB (--workload mysql)")]
pub struct MysqlArgs {
    /// Directory holding mariadbd, its SQL scripts in ../share/mysql [default: /usr/sbin and /usr/share/mysql, Debian's mariadb-server].
    #[arg(long, value_name = "DIR")]
    pub mysql_bin: Option<PathBuf>,

    /// A server setting, NAME=VALUE (repeatable), given to mariadbd as --NAME=VALUE after dbio's own, byte for byte (e.g. --mysql-set innodb_doublewrite=0).
    #[arg(long = "mysql-set", value_name = "NAME=VALUE", value_parser = parse_setting)]
    pub mysql_set: Vec<(String, String)>,

    /// Use this existing server instead of starting one (mysql://USER:PASSWORD@HOST:PORT/, or mysql://USER@localhost/?socket=/path): dbio works in a database dbio of its own there and changes no settings.
    #[arg(long, value_name = "URL")]
    pub mysql_url: Option<String>,

    /// Bound the memory of the server, page cache included (a memory cgroup), e.g. 512M: with --io fsync, reads then reach the device.
    #[arg(long, value_name = "SIZE", value_parser = crate::units::parse_size)]
    pub mysql_memory: Option<u64>,
}

impl MysqlArgs {
    /// The options every server workload has, under their mysql names.
    pub fn server(self) -> ServerArgs {
        ServerArgs {
            names: [
                "--mysql-bin",
                "--mysql-set",
                "--mysql-memory",
                "--mysql-url",
            ],
            bin: self.mysql_bin,
            set: self.mysql_set,
            memory: self.mysql_memory,
            url: self.mysql_url,
        }
    }

    /// The first mysql option given, for refusing them with other workloads.
    pub fn first_given(&self) -> Option<&'static str> {
        self.clone().server().first_given()
    }
}

/// Refuses a `--mysql-set` of a path dbio places (`args::PLACED`): dbio
/// finds, stops and cleans the server through them.
fn refuse_placed(set: &[(String, String)]) -> Result<(), Refused> {
    match set.iter().find(|(n, _)| PLACED.contains(&n.as_str())) {
        Some((n, _)) => Err(format!(
            "--mysql-set {n}: dbio places the server's {n} under --target (the redo under --redo-dir); give --target or --redo-dir instead"
        )
        .into()),
        None => Ok(()),
    }
}

/// Refuses a `;` in the redo log's directory (the target's, or
/// `--redo-dir`): InnoDB reads innodb_log_group_home_dir as a list and
/// refuses one ("syntax error in innodb_log_group_home_dir").
fn refuse_semicolon_in_redo(target: &Path, redo_dir: Option<&PathBuf>) -> Result<(), Refused> {
    let (opt, dir) = match redo_dir {
        Some(r) => ("--redo-dir", r.as_path()),
        None => ("--target", target),
    };
    if !dir.as_os_str().as_bytes().contains(&b';') {
        return Ok(());
    }
    let fix = match redo_dir {
        Some(_) => "give a --redo-dir without ';'",
        None => "give a --target without ';', or --redo-dir elsewhere",
    };
    Err(format!(
        "{opt} {dir:?} has a ';', which InnoDB cannot take in the redo log's directory (innodb_log_group_home_dir); {fix}; nothing was created"
    )
    .into())
}

fn parse_setting(s: &str) -> Result<(String, String), crate::workload::db::SettingError> {
    crate::workload::db::parse_setting(s, "innodb_doublewrite=0")
}

impl RunArgs {
    /// Validates a `--workload mysql` run.
    pub(crate) fn into_mysql_config(self) -> Result<RunConfig, Refused> {
        refuse_model_options(&self, &MYSQL)?;
        if let Some(opt) = self.pg.first_given() {
            return Err(format!(
                "{opt} applies to --workload pg; use --mysql-set with --workload mysql"
            )
            .into());
        }
        let server = self.mysql.clone().server();
        refuse_with_url(&self, &server, &[(self.bs.is_some(), "--bs")])?;
        refuse_placed(&server.set)?;
        // A --target or --redo-dir that is not UTF-8 is refused for every
        // workload already (`cli::utf8_path`).
        if server.url.is_none() {
            refuse_semicolon_in_redo(&self.target, self.slob.redo_dir.as_ref())?;
        }
        let page_size = self.bs.unwrap_or(DEFAULT_PAGE);
        if !(4096..=65536).contains(&page_size) {
            return Err(format!(
                "--bs {page_size} is not an InnoDB page size; give 4k, 8k, 16k, 32k or 64k"
            )
            .into());
        }
        let flush_method = flush_method(self.io_mode)?;
        let files = self.files;
        if !(1..=MAX_FILES).contains(&files) {
            return Err(format!(
                "--files {files} is not a partition count for --workload mysql; give 1 (a table in one .ibd file) to {MAX_FILES} (its partitions, an .ibd file each)"
            ).into());
        }
        let shape = (page_size, files);
        resolve(self, server, &MYSQL, shape, |slob, redo_dir, server| {
            WorkloadConfig::Mysql(MysqlConfig {
                slob,
                page_size,
                files,
                flush_method,
                redo_dir,
                server,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::config::RunConfig;
    use crate::options::Refused;
    use crate::options::db::{SHAPE, config_of, run_config};
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    fn config(args: &[&str]) -> Result<RunConfig, Refused> {
        config_of("mysql", args)
    }

    /// A mysql run's own settings.
    fn mysql_of(c: RunConfig) -> crate::workload::mysql::MysqlConfig {
        match c.workload {
            crate::config::WorkloadConfig::Mysql(my) => my,
            w => panic!("a {} run, not mysql", w.name()),
        }
    }

    /// `dbio run --workload mysql --target TARGET` resolved.
    fn config_os(target: &OsStr) -> Result<RunConfig, Refused> {
        use clap::Parser;
        let argv = [
            OsStr::new("dbio"),
            OsStr::new("run"),
            OsStr::new("--workload"),
            OsStr::new("mysql"),
            OsStr::new("--target"),
            target,
        ];
        let cli = crate::cli::Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
        match cli.command {
            crate::cli::Command::Run(r) => (*r).into_config(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn mysql_options_resolve_to_innodb_settings() {
        let c = config(
            &[
                &SHAPE[..],
                &[
                    "--io",
                    "fsync",
                    "--mysql-set",
                    "innodb_doublewrite=0",
                    "--work-loop",
                    "10",
                ][..],
            ]
            .concat(),
        )
        .unwrap();
        assert_eq!(c.workload.name(), "mysql");
        let my = mysql_of(c.clone());
        assert_eq!(my.slob.schemas, 4);
        assert_eq!(my.slob.cache_bytes, 64 << 20);
        assert_eq!(my.page_size, 16384, "InnoDB's page unless --bs");
        assert_eq!(my.flush_method, "fsync");
        assert_eq!(
            my.server.set,
            vec![("innodb_doublewrite".into(), "0".into())]
        );
        assert_eq!(c.length, crate::config::RunLength::Ops { ops: 40 });
        let c = config(&["--bs", "4k", "--io", "dsync"]).unwrap();
        let my = mysql_of(c.clone());
        assert_eq!((my.page_size, my.flush_method), (4096, "O_DSYNC"));
        assert_eq!(mysql_of(config(&[]).unwrap()).flush_method, "O_DIRECT");
    }

    #[test]
    fn files_are_the_partitions_of_each_table() {
        let c = config(&[
            "--files",
            "4",
            "--schemas",
            "1",
            "--threads-per-schema",
            "4",
        ])
        .unwrap();
        assert_eq!((c.files, mysql_of(c.clone()).files), (4, 4));
        assert_eq!(c.sessions, 4, "four sessions on one table in four files");
        assert_eq!(mysql_of(config(&[]).unwrap()).files, 1);
        let e = config(&["--files", "65"]).unwrap_err();
        assert!(e.contains("--files 65") && e.contains("64"), "{e}");
    }

    #[test]
    fn options_that_mean_nothing_to_innodb_are_refused() {
        let e = config(&["--bs", "2k"]).unwrap_err();
        assert!(e.contains("--bs") && e.contains("16k"), "{e}");
        let e = config(&["--io", "buffered"]).unwrap_err();
        assert!(e.contains("--io buffered") && e.contains("O_DIRECT"), "{e}");
        let e = config(&["--redo-file-size", "1G"]).unwrap_err();
        assert!(e.contains("innodb_log_file_size"), "{e}");
        let e = config(&["--pg-set", "a=b"]).unwrap_err();
        assert!(e.contains("--pg-set"), "{e}");
        let e = config(&["--mysql-set", "oops"]).unwrap_err();
        assert!(e.contains("NAME=VALUE"), "{e}");
        let e = config(&["--mysql-set", "datadir=/elsewhere"]).unwrap_err();
        assert!(e.starts_with("--mysql-set datadir: dbio places"), "{e}");
        let e = config(&["--mysql-set", "Innodb_Log_Group_Home_Dir=/x"]).unwrap_err();
        assert!(e.contains("--redo-dir"), "{e}");
        let e = config_os(OsStr::from_bytes(b"/srv/n\nl\xff")).unwrap_err();
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(
            e.starts_with(r#"--target "/srv/n\nl\xFF" is not valid UTF-8"#),
            "{e}"
        );
        let e = config_os(OsStr::new("/srv/a;b")).unwrap_err();
        assert!(e.starts_with(r#"--target "/srv/a;b" has a ';'"#), "{e}");
        let e = config(&["--redo-dir", "/r;x"]).unwrap_err();
        assert!(e.starts_with(r#"--redo-dir "/r;x" has a ';'"#), "{e}");
        let e = run_config(&["--mysql-set", "a=b"]).unwrap_err();
        assert!(e.contains("--mysql-set applies to --workload mysql"), "{e}");
    }
}
