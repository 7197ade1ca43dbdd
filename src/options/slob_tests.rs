//! Tests of `options.rs`.

use super::*;

fn cfg(f: impl FnOnce(&mut SlobArgs)) -> Result<SlobConfig, crate::options::Refused> {
    let mut a = SlobArgs::default();
    f(&mut a);
    a.into_config(None, 8192, 1, None, Some(Path::new("/tmp/x")))
}

#[test]
fn defaults_follow_slob_conf() {
    let c = cfg(|_| {}).unwrap();
    assert_eq!(c.sessions(), 4);
    assert_eq!(c.scale_blocks, (80 << 20) / 8192);
    assert_eq!(c.work_unit, 64);
    assert_eq!(c.update_pct, 25);
    assert_eq!(c.cache_buffers(), 2048);
    assert_eq!(c.redo_dir, PathBuf::from("/tmp/x"));
}

#[test]
fn scale_is_blocks_or_a_size() {
    assert_eq!(
        cfg(|a| a.scale = Some("10000".into()))
            .unwrap()
            .scale_blocks,
        10000
    );
    assert_eq!(
        cfg(|a| a.scale = Some("1G".into())).unwrap().scale_blocks,
        131072
    );
}

#[test]
fn schemas_and_threads_give_sessions() {
    let mut a = SlobArgs {
        schemas: Some(2),
        threads_per_schema: Some(8),
        ..Default::default()
    };
    let c = a
        .clone()
        .into_config(None, 8192, 1, None, Some(Path::new("/t")))
        .unwrap();
    assert_eq!((c.schemas, c.threads_per_schema, c.sessions()), (2, 8, 16));
    a.schemas = None;
    let c = a
        .clone()
        .into_config(Some(16), 8192, 1, None, Some(Path::new("/t")))
        .unwrap();
    assert_eq!(c.schemas, 2);
    let e = a
        .into_config(Some(15), 8192, 1, None, Some(Path::new("/t")))
        .unwrap_err();
    assert!(e.contains("multiple"), "{e}");
}

#[test]
fn out_of_range_values_are_refused_in_one_line() {
    type Case = (Box<dyn FnOnce(&mut SlobArgs)>, &'static str);
    let cases: Vec<Case> = vec![
        (
            Box::new(|a| a.work_unit = Some(2)),
            "--work-unit 2 is out of range",
        ),
        (
            Box::new(|a| a.update_pct = Some(101)),
            "--update-pct 101 is out of range",
        ),
        (
            Box::new(|a| a.cache = Some(32 << 10)),
            "minimum the model needs",
        ),
        (
            Box::new(|a| a.redo_file_size = Some(1 << 20)),
            "smaller than one log write",
        ),
        (Box::new(|a| a.redo_block = Some(1024)), "512, 4096 or 8192"),
        (
            Box::new(|a| a.log_buffer = Some(8 << 10)),
            "must hold one update's redo",
        ),
    ];
    for (f, want) in cases {
        let e = cfg(f).unwrap_err();
        assert!(e.contains(want), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn the_cache_minimum_is_named() {
    // 4 sessions x 1 pinned block x 2 = 8 buffers of 8 KiB = 64 KiB.
    let e = cfg(|a| a.cache = Some(56 << 10)).unwrap_err();
    assert!(
        e.contains("minimum the model needs to make progress: 64 KiB"),
        "{e}"
    );
    assert!(cfg(|a| a.cache = Some(64 << 10)).is_ok());
}

/// The DB writers are raised only where the sessions keep every core busy:
/// at a few sessions per CPU a writer above them only takes their CPU.
#[test]
fn the_db_writers_are_raised_only_when_sessions_outnumber_the_cpus() {
    assert_eq!(default_dbwr_nice(2, 2), 0);
    assert_eq!(default_dbwr_nice(8, 2), 0);
    assert_eq!(default_dbwr_nice(9, 2), DEFAULT_DBWR_NICE);
    assert_eq!(default_dbwr_nice(512, 2), DEFAULT_DBWR_NICE);
    assert_eq!(default_dbwr_nice(513, 2), CROWDED_DBWR_NICE);
    assert_eq!(default_dbwr_nice(4096, 2), CROWDED_DBWR_NICE);
    assert_eq!(default_dbwr_nice(64, 64), 0);
    // No CPU count (available_parallelism failed) is one CPU.
    assert_eq!(default_dbwr_nice(5, 0), DEFAULT_DBWR_NICE);
}

/// More DB writers only where fewer fall behind the misses: a second with
/// more than four sessions per CPU (as the writers' priority), four with
/// more than 256.
#[test]
fn more_db_writers_only_when_sessions_outnumber_the_cpus() {
    assert_eq!(default_db_writers(1, 2), 1);
    assert_eq!(default_db_writers(8, 2), 1);
    assert_eq!(default_db_writers(9, 2), 2);
    assert_eq!(default_db_writers(512, 2), 2);
    assert_eq!(default_db_writers(513, 2), 4);
    assert_eq!(default_db_writers(4096, 2), 4);
    assert_eq!(default_db_writers(64, 64), 1);
    assert_eq!(default_db_writers(4096, 64), 2);
    // No CPU count (available_parallelism failed) is one CPU.
    assert_eq!(default_db_writers(5, 0), 2);
    assert_eq!(default_db_writers(257, 0), 4);
}

/// Without `--db-writers` the run's config holds the default for its
/// sessions; given, it holds what was given.
#[test]
fn the_db_writers_default_is_recorded_in_the_config() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    // Above 32 sessions per CPU, so that the same holds if /tmp is a tmpfs.
    let many = (MEMORY_FS_SESSIONS_PER_CPU * cpus + 8) / 8 * 8;
    let c = cfg(|a| {
        a.schemas = Some(8);
        a.threads_per_schema = Some(many / 8);
    })
    .unwrap();
    assert_eq!(c.db_writers, 2);
    assert_eq!(cfg(|a| a.schemas = Some(1)).unwrap().db_writers, 1);
    let c = cfg(|a| {
        a.schemas = Some(8);
        a.threads_per_schema = Some(many / 8);
        a.db_writers = Some(1);
    })
    .unwrap();
    assert_eq!(c.db_writers, 1);
}

#[test]
fn db_writers_write_with_psync_on_a_memory_filesystem() {
    use crate::config::EngineKind;
    // A directory not made yet is judged by the filesystem it would be on.
    let shm = Path::new("/dev/shm/dbio-not-made-yet/data");
    assert_eq!(default_dbwr_engine(Some(shm)), EngineKind::Psync);
    let want = if crate::engine::uring::available() {
        EngineKind::IoUring
    } else {
        EngineKind::Psync
    };
    // A block device (no directory): io_uring where the kernel allows it.
    assert_eq!(default_dbwr_engine(None), want);
    // Up to 32 sessions per CPU one psync writer; beyond, several, still
    // with psync.
    assert_eq!(default_dbwr_engine(Some(shm)), EngineKind::Psync);
    assert!(one_psync_writer(Some(shm), 64, 2));
    assert!(!one_psync_writer(Some(shm), 65, 2));
    assert!(!one_psync_writer(None, 1, 2));
}

/// On a memory filesystem one psync DB writer is the default up to 32
/// sessions per CPU; asking for io_uring brings back the writers for devices.
#[test]
fn one_psync_writer_on_a_memory_filesystem_unless_io_uring_is_asked() {
    use crate::config::EngineKind;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let shm = Path::new("/dev/shm/dbio-not-made-yet");
    let on_shm = |f: &dyn Fn(&mut SlobArgs)| {
        let mut a = SlobArgs {
            schemas: Some(8),
            threads_per_schema: Some(2),
            ..SlobArgs::default()
        };
        f(&mut a);
        a.into_config(None, 8192, 1, None, Some(shm)).unwrap()
    };
    let c = on_shm(&|_| {});
    assert_eq!((c.db_writers, c.dbwr_engine), (1, EngineKind::Psync));
    let c = on_shm(&|a| a.dbwr_engine = Some(EngineKind::IoUring));
    assert_eq!(c.db_writers, default_db_writers(16, cpus));
    let c = on_shm(&|a| a.db_writers = Some(3));
    assert_eq!((c.db_writers, c.dbwr_engine), (3, EngineKind::Psync));
}

#[test]
fn postgres_caps_its_db_writers_as_the_background_writer_and_memory_holds_the_cache() {
    assert_eq!(cfg(|_| {}).unwrap().dbwr_rate, None, "Oracle's: no cap");
    let pg = cfg(|a| a.flavor = Some(Flavor::Postgres)).unwrap();
    assert_eq!(
        pg.dbwr_rate,
        Some(500),
        "bgwriter_lru_maxpages 100 per 200 ms"
    );
    let asked = cfg(|a| {
        a.flavor = Some(Flavor::Postgres);
        a.dbwr_rate = Some(7);
    });
    assert_eq!(asked.unwrap().dbwr_rate, Some(7));
    // --memory holds the 16 MiB cache and 64 MiB beside it.
    assert_eq!(
        cfg(|a| a.memory = Some(80 << 20)).unwrap().memory,
        Some(80 << 20)
    );
    let e = cfg(|a| a.memory = Some((80 << 20) - 1))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--memory") && e.contains("give --memory 80 MiB or more"),
        "{e}"
    );
}

/// `--flavor innodb` has one DB writer whatever the session count, as
/// MariaDB has one page cleaner; `--db-writers` still chooses, and the
/// other flavors keep the session count's default.
#[test]
fn innodb_has_one_page_cleaner_unless_asked() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let many = |f: &dyn Fn(&mut SlobArgs)| {
        let mut a = SlobArgs {
            schemas: Some(1),
            threads_per_schema: Some(64),
            ..SlobArgs::default()
        };
        f(&mut a);
        a.into_config(None, 16384, 1, None, Some(Path::new("/tmp/x")))
            .unwrap()
    };
    let innodb = many(&|a| a.flavor = Some(Flavor::Innodb));
    assert_eq!(innodb.db_writers, 1);
    let asked = many(&|a| {
        a.flavor = Some(Flavor::Innodb);
        a.db_writers = Some(3);
    });
    assert_eq!(asked.db_writers, 3);
    let pg = many(&|a| a.flavor = Some(Flavor::Postgres));
    assert_eq!(pg.db_writers, default_db_writers(64, cpus));
}
