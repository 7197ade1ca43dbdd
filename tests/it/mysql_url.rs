//! `--workload mysql --mysql-url` against a MariaDB the test starts itself
//! (Debian's mariadb-server, a unix socket only): dbio works only in a
//! database `dbio` it created (marked by its comment), changes no setting
//! (they are reported), refuses a database `dbio` it did not make, and `dbio
//! clean --mysql-url` drops its own database and nothing else.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::run::num;
use crate::common::server::{dbio, json};
use crate::common::store::temp_store;
use crate::mysql::setting;

/// A MariaDB the test starts itself (for --mysql-url), on a unix socket
/// only; stopped and removed when dropped.
struct OtherServer {
    dir: tempfile::TempDir,
    server: Child,
}

impl OtherServer {
    fn as_mysql(program: &str) -> Command {
        use std::os::unix::process::CommandExt;
        let pw = fs::read_to_string("/etc/passwd").unwrap();
        let f: Vec<&str> = pw
            .lines()
            .find(|l| l.starts_with("mysql:"))
            .unwrap()
            .split(':')
            .collect();
        let mut c = Command::new(program);
        c.uid(f[2].parse().unwrap())
            .gid(f[3].parse().unwrap())
            .current_dir("/");
        c
    }

    fn start() -> OtherServer {
        let dir = tempfile::Builder::new()
            .prefix("dbio-myurl-")
            .tempdir_in("/dev/shm")
            .unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
        let p = dir.path();
        fs::write(
            p.join("my.cnf"),
            format!(
                "[mariadbd]\ndatadir={0}/data\nsocket={0}/s.sock\nlog_error={0}/log\nskip_networking=1\ninnodb_buffer_pool_size=32M\n",
                p.display()
            ),
        )
        .unwrap();
        let cnf = format!("--defaults-file={}", p.join("my.cnf").display());
        let ok = Self::as_mysql("/usr/bin/mariadb-install-db")
            .args([
                cnf.as_str(),
                "--auth-root-authentication-method=socket",
                "--skip-test-db",
            ])
            .output()
            .unwrap();
        assert!(
            ok.status.success(),
            "{}",
            String::from_utf8_lossy(&ok.stdout)
        );
        let server = Self::as_mysql("/usr/sbin/mariadbd")
            .arg(&cnf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let s = OtherServer { dir, server };
        let t0 = Instant::now();
        while mysql::Conn::new(s.opts()).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "the other server never started"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        s
    }

    fn url(&self) -> String {
        format!(
            "mysql://root@localhost/?socket={}/s.sock",
            self.dir.path().display()
        )
    }

    fn opts(&self) -> mysql::Opts {
        mysql::Opts::from_url(&self.url()).unwrap()
    }

    fn query(&self, sql: &str) -> Vec<String> {
        use mysql::prelude::Queryable;
        mysql::Conn::new(self.opts()).unwrap().query(sql).unwrap()
    }
}

impl Drop for OtherServer {
    fn drop(&mut self) {
        // SAFETY: stopping the test's own server.
        unsafe { libc::kill(self.server.id() as i32, libc::SIGTERM) };
        let _ = self.server.wait();
    }
}

fn mysql_url_uses_only_a_database_of_its_own() {
    let _store = temp_store();
    let other = OtherServer::start();
    let url = other.url();
    let run = |args: &[&str]| {
        dbio()
            .args(["run", "--workload", "mysql", "--json", "--mysql-url", &url])
            .args(args)
            .output()
            .unwrap()
    };
    let base = [
        "--sessions",
        "2",
        "--scale",
        "500",
        "--update-pct",
        "50",
        "--work-loop",
        "20",
    ];
    let r = json(&run(&base));
    let my = &r["mysql"];
    assert_eq!(num(my, "updates"), 20.0);
    assert_eq!(
        num(my, "server.Com_commit"),
        20.0,
        "nobody else works there"
    );
    // The server's own settings, reported, not changed.
    assert_eq!(
        setting(my, "innodb_buffer_pool_size"),
        (32 << 20).to_string()
    );
    assert_eq!(
        r["config"]["mysql"]["url_redacted"].as_str(),
        Some(url.as_str())
    );
    assert!(other.query("SHOW DATABASES").contains(&"dbio".to_string()));
    // Own-server options are refused in one line.
    let out = run(&["--cache", "1G"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--cache does not apply with --mysql-url")
    );
    // dbio clean --mysql-url drops dbio's database and nothing else.
    let clean = || {
        dbio()
            .args(["clean", "--mysql-url", &url])
            .output()
            .unwrap()
    };
    assert!(clean().status.success());
    let dbs = other.query("SHOW DATABASES");
    assert!(
        !dbs.contains(&"dbio".to_string()) && dbs.contains(&"mysql".to_string()),
        "{dbs:?}"
    );
    // A database dbio that dbio did not make is refused and left alone.
    other.query("CREATE DATABASE dbio");
    let out = run(&base);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did not create"), "{err}");
    let out = clean();
    assert_eq!(out.status.code(), Some(2));
    assert!(other.query("SHOW DATABASES").contains(&"dbio".to_string()));
}

crate::tests! {
    mysql_url_uses_only_a_database_of_its_own [Root, MariaDB],
}
