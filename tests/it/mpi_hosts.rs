//! `dbio run --mpi` across two "hosts" on one machine: two network
//! namespaces on a bridge, each with a UTS namespace of its own (its own
//! host name), and Open MPI's rsh launcher pointed at a script that starts
//! its daemon (`orted`) inside the namespace instead of over ssh. The ranks
//! talk TCP between the namespaces (no shared memory), `{host}` expands to
//! each namespace's name, and rank 0 stores one run of 2 hosts.
//! Compiled only with `--features mpi`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::store::{store_path, temp_store};
use crate::mpi::{alone, stderr};

crate::tests! {
    two_namespaces_are_two_hosts_over_tcp [Root, Tool("mpirun"), Tool("ip"), Tool("unshare")],
}

/// A bridge and two network namespaces on it, removed on drop.
struct Hosts {
    tag: String,
    /// The namespaces' addresses, by host.
    addrs: [String; 2],
    subnet: String,
}

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        stderr(&out)
    );
}

impl Hosts {
    fn new() -> Hosts {
        let pid = std::process::id();
        let tag = format!("dbmp{}", pid % 100_000);
        let net = format!("10.98.{}", 20 + pid % 200);
        let hosts = Hosts {
            addrs: [format!("{net}.2"), format!("{net}.3")],
            subnet: format!("{net}.0/24"),
            tag: tag.clone(),
        };
        let br = format!("{tag}b");
        ip(&["link", "add", &br, "type", "bridge"]);
        ip(&["addr", "add", &format!("{net}.1/24"), "dev", &br]);
        ip(&["link", "set", &br, "up"]);
        for (i, addr) in hosts.addrs.iter().enumerate() {
            let (ns, veth) = (format!("{tag}n{i}"), format!("{tag}v{i}"));
            ip(&["netns", "add", &ns]);
            ip(&[
                "link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns", &ns,
            ]);
            ip(&["link", "set", &veth, "master", &br, "up"]);
            ip(&[
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{addr}/24"),
                "dev",
                "eth0",
            ]);
            ip(&["-n", &ns, "link", "set", "eth0", "up"]);
            ip(&["-n", &ns, "link", "set", "lo", "up"]);
        }
        hosts
    }

    /// The launcher agent: `agent [options] HOST COMMAND...` runs COMMAND in
    /// HOST's namespace, with the host name `<tag>h<i>`.
    fn agent(&self, dir: &Path) -> String {
        let mut cases = String::new();
        for (i, a) in self.addrs.iter().enumerate() {
            cases.push_str(&format!(
                "  {a}) ns={t}n{i}; name={t}h{i} ;;\n",
                t = self.tag
            ));
        }
        let script = format!(
            "#!/bin/sh\nwhile [ \"${{1#-}}\" != \"$1\" ]; do shift; done\nhost=$1; shift\ncase $host in\n{cases}  *) echo \"agent: unknown host $host\" >&2; exit 1 ;;\nesac\nexec ip netns exec $ns unshare --uts sh -c \"hostname $name; $*\"\n"
        );
        let path = dir.join("agent.sh");
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for i in 0..2 {
            let _ = Command::new("ip")
                .args(["netns", "del", &format!("{}n{i}", self.tag)])
                .output();
            let _ = Command::new("ip")
                .args(["link", "del", &format!("{}v{i}", self.tag)])
                .output();
        }
        let _ = Command::new("ip")
            .args(["link", "del", &format!("{}b", self.tag)])
            .output();
    }
}

fn two_namespaces_are_two_hosts_over_tcp() {
    let _store = temp_store();
    let hosts = Hosts::new();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let agent = hosts.agent(dir.path());
    let hostfile = dir.path().join("hosts");
    std::fs::write(
        &hostfile,
        hosts
            .addrs
            .iter()
            .map(|a| format!("{a} slots=1\n"))
            .collect::<String>(),
    )
    .unwrap();
    let target = format!("{}/{{host}}", dir.path().display());
    let (out, left) = alone(|| {
        Command::new("mpirun")
            .args(["--allow-run-as-root", "-q", "--timeout", "120"])
            .arg("--hostfile")
            .arg(&hostfile)
            .args(["-np", "2", "--mca", "plm_rsh_agent", &agent])
            .args(["--mca", "oob_tcp_if_include", &hosts.subnet])
            .args(["--mca", "btl_tcp_if_include", &hosts.subnet])
            .args(["--mca", "pml", "ob1", "--mca", "btl", "self,tcp"])
            .args(["-x", "DBIO_DB"])
            .arg(assert_cmd::cargo::cargo_bin("dbio"))
            .args(["run", "--mpi", "--target", &target, "--size", "4m"])
            .args(["--sessions", "1", "--ops", "2000", "--json"])
            .env("DBIO_DB", store_path())
            .output()
            .unwrap()
    });
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(left.is_empty(), "segments left: {left:?}");
    let r: Value = serde_json::from_slice(&out.stdout).expect("one JSON document from rank 0");
    assert_eq!(r["mpi"]["ranks"], 2);
    assert_eq!(r["mpi"]["hosts"], 2, "two host names");
    let ranks = r["ranks"].as_array().unwrap();
    for (i, k) in ranks.iter().enumerate() {
        let host = format!("{}h{i}", hosts.tag);
        assert_eq!(k["host"], host.as_str());
        assert_eq!(k["environment"]["hostname"], host.as_str());
        assert_eq!(k["total"]["requests"], 2000);
        assert!(dir.path().join(&host).is_dir(), "{{host}} became {host}");
    }
    assert_eq!(r["total"]["requests"], 4000);
    let store = dbio::store::Store::open(&store_path()).unwrap();
    assert_eq!(store.list(&Default::default()).unwrap().len(), 1);
    println!(
        "start skew over TCP between namespaces: {} us",
        r["mpi"]["start_skew_us"]
    );
}
