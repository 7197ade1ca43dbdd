//! What every integration test shares: the fixtures (a store of its own, loop
//! devices that always clean up, the binary), and how a test is registered
//! with what it needs from the machine.
#![allow(dead_code)]
pub mod blkio;
pub mod browser;
pub mod cli;
pub mod layers;
pub mod loopdev;
pub mod prometheus;
pub mod run;
pub mod server;
pub mod store;
pub mod trace;

use libtest_mimic::Trial;

/// What a test needs from the machine. A test whose needs are not met is
/// ignored (and says why), never run to an early "pass".
#[derive(Clone, Copy, Debug)]
pub enum Need {
    /// Effective uid 0: loop devices, mkfs, mount.
    Root,
    /// An executable on PATH (or in the sbin directories).
    Tool(&'static str),
    /// A kernel with device-mapper (`/dev/mapper/control` opens).
    DeviceMapper,
    /// A directory on the root filesystem (not a mount of its own).
    OnRootFs(&'static str),
    /// PostgreSQL's server binaries where Debian puts them
    /// (`/usr/lib/postgresql/N/bin/postgres`; package postgresql-15).
    Postgres,
    /// MariaDB's server where Debian puts it (`/usr/sbin/mariadbd`; package
    /// mariadb-server).
    MariaDB,
    /// The kernel's block tracepoints (CONFIG_BLK_DEV_IO_TRACE: every
    /// block device has a `trace` directory in sysfs).
    BlockTracing,
    /// The block I/O cgroup v1 with its throttle (`blkio.throttle.read_iops_device`).
    BlkioThrottle,
}

impl Need {
    /// Why the need is not met here, or None when it is.
    fn missing(self) -> Option<String> {
        match self {
            Need::Root => (!rustix::process::geteuid().is_root()).then(|| "needs root".into()),
            Need::Tool(t) => (!loopdev::have_tool(t)).then(|| format!("needs {t}")),
            Need::DeviceMapper => std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/mapper/control")
                .is_err()
                .then(|| "needs device-mapper".into()),
            Need::OnRootFs(dir) => {
                use std::os::unix::fs::MetadataExt;
                let dev = |p: &str| std::fs::metadata(p).map(|m| m.dev()).ok();
                (dev(dir).is_none() || dev(dir) != dev("/"))
                    .then(|| format!("needs {dir} on the root filesystem"))
            }
            Need::Postgres => std::fs::read_dir("/usr/lib/postgresql")
                .into_iter()
                .flatten()
                .flatten()
                .all(|e| !e.path().join("bin/postgres").is_file())
                .then(|| "needs PostgreSQL (package postgresql-15)".into()),
            Need::MariaDB => (!std::path::Path::new("/usr/sbin/mariadbd").is_file()
                || !std::path::Path::new("/usr/bin/mariadb-install-db").is_file())
            .then(|| "needs MariaDB (package mariadb-server)".into()),
            Need::BlockTracing => (!std::fs::read_dir("/sys/block")
                .into_iter()
                .flatten()
                .flatten()
                .any(|e| e.path().join("trace").is_dir()))
            .then(|| "needs block tracing (CONFIG_BLK_DEV_IO_TRACE)".into()),
            Need::BlkioThrottle => (!std::path::Path::new(blkio::ROOT)
                .join("blkio.throttle.read_iops_device")
                .is_file())
            .then(|| "needs the blkio cgroup v1 with throttling".into()),
        }
    }
}

/// A test named `module::name` running `f`, ignored when a need is not met.
pub fn trial(module: &str, name: &str, f: fn(), needs: &[Need]) -> Trial {
    let module = module.trim_start_matches("it::");
    let missing: Vec<String> = needs.iter().filter_map(|n| n.missing()).collect();
    let t = Trial::test(format!("{module}::{name}"), move || {
        f();
        Ok(())
    });
    if missing.is_empty() {
        t
    } else {
        t.with_ignored_flag(true).with_kind(missing.join(", "))
    }
}

/// Registers a module's tests: `tests! { name, other [Root, Tool("fio")] }`.
#[macro_export]
macro_rules! tests {
    ($($name:ident $([$($need:expr),* $(,)?])?),* $(,)?) => {
        pub fn tests() -> Vec<libtest_mimic::Trial> {
            #[allow(unused_imports)]
            use $crate::common::Need::*;
            vec![$($crate::common::trial(module_path!(), stringify!($name), $name, &[$($($need),*)?])),*]
        }
    };
}

/// Says on stderr how many tests are ignored here and why.
pub fn report_ignored(trials: &[Trial]) {
    let mut why = std::collections::BTreeMap::<&str, usize>::new();
    for t in trials.iter().filter(|t| t.has_ignored_flag()) {
        *why.entry(t.kind()).or_default() += 1;
    }
    for (reason, n) in why {
        eprintln!("ignored here: {n} test(s) {reason}");
    }
}
