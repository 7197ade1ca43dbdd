#!/usr/bin/env bash
# Runs dbio's whole test suite on a fresh Debian machine: installs the tools
# the tests drive (mkfs.xfs, mkfs.btrfs, fio, iostat, chromium) when missing, then checks
# formatting and lints, then runs every test. Loop-device tests need root.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each tool the tests drive, the Debian package that has it, and why.
need=()
want() { # TOOL PACKAGE WHY (TOOL: a command on PATH, an absolute path, or dpkg:PACKAGE)
  local have
  case "$1" in
    /*) [ -x "$1" ] && have=1 || have= ;;
    dpkg:*) dpkg-query -W -f='${Status}' "${1#dpkg:}" 2>/dev/null | grep -q "ok installed" && have=1 || have= ;;
    *) command -v "$1" >/dev/null && have=1 || have= ;;
  esac
  if [ -z "$have" ]; then
    need+=("$2")
    echo "test.sh: $1 is missing: package $2 ($3)"
  fi
}
want mkfs.ext4 e2fsprogs   "ext4 on loop devices"
want mkfs.xfs  xfsprogs    "XFS on loop devices, the lab's xfs arms"
want mkfs.btrfs btrfs-progs "btrfs members in the device gate tests"
want fio       fio         "real fio output for the importer tests"
want iostat    sysstat     "iostat -x to check dbio's device statistics"
want losetup   mount       "loop devices"
want sfdisk    fdisk       "MBR partition tables in the device gate tests"
want sgdisk    gdisk       "GPT partition tables in the device gate tests"
want mkfs.vfat dosfstools  "FAT signatures in the device gate tests"
want cryptsetup cryptsetup-bin "LUKS signatures in the device gate tests"
want partx     util-linux  "partition nodes on loop devices"
want strace    strace      "counting the model's posix_fadvise calls (slob_pgmodel)"
want sqlite3   sqlite3     "querying the results store as users do"
want chromium  chromium    "rendering the HTML report headless"
want mkfs.jfs  jfsutils    "JFS signatures (libblkid knows, dbio's own table too) in the device gate tests"
want /usr/lib/postgresql/15/bin/postgres postgresql-15 "the real PostgreSQL --workload pg starts (binaries outside PATH)"
want mpirun    openmpi-bin "mpirun for dbio run --mpi (the mpi feature's tests)"
want dpkg:libopenmpi-dev libopenmpi-dev "MPI headers and libraries the mpi feature builds against"
want dpkg:libclang-dev   libclang-dev   "libclang for the mpi crate's bindgen (the mpi feature's build)"
want /usr/sbin/mariadbd mariadb-server "the real MariaDB --workload mysql starts (server outside PATH)"
want dmsetup   dmsetup     "dm-flakey faults under dbio verify (where the kernel has device-mapper)"
want prometheus prometheus  "a real Prometheus scraping --metrics-listen (tests/it/metrics_live.rs)"
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "test.sh: installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
    # Debian's postgresql package makes a cluster 15/main; dbio's tests make
    # their own, so keep that one down and off at boot.
    if [ -d /etc/postgresql/15/main ]; then
      pg_ctlcluster 15 main stop 2>/dev/null || true
      echo manual > /etc/postgresql/15/main/start.conf
    fi
    # Debian's prometheus package enables its own service (and node_exporter's);
    # the tests start Prometheus on a port and data directory of their own.
    for svc in prometheus prometheus-node-exporter; do
      if [ -e "/lib/systemd/system/$svc.service" ] || [ -e "/etc/init.d/$svc" ]; then
        systemctl disable --now "$svc" 2>/dev/null || service "$svc" stop 2>/dev/null || true
      fi
    done
  else
    echo "test.sh: not root, cannot install ${need[*]}: the tests that need them are reported as ignored"
  fi
fi

if cargo fmt --version >/dev/null 2>&1; then cargo fmt --all --check; else echo "rustfmt not installed: format check skipped"; fi
if cargo clippy --version >/dev/null 2>&1; then
  cargo clippy --workspace --all-targets --quiet -- -D warnings
  cargo clippy --workspace --all-targets --features dbio/mpi --quiet -- -D warnings
else
  echo "clippy not installed: lint check skipped"
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
# Every crate of the workspace: the core (crates/dbio-core) and dbio.
cargo test --workspace --all-targets --no-fail-fast -- --test-threads="${DBIO_TEST_THREADS:-2}" 2>&1 | tee "$log" || status=1
# The mpi feature (dbio run --mpi, plan run --mpi): its build, the unit tests
# of its MPI-only modules, and the tests that run mpirun (mpi, mpi_faults,
# mpi_hosts, mpi_html, mpi_plan, mpi_region).
cargo test --features mpi --no-fail-fast --lib -- ranks::plan:: ranks::watch:: --test-threads="${DBIO_TEST_THREADS:-2}" 2>&1 | tee -a "$log" || status=1
cargo test --features mpi --no-fail-fast --test it -- mpi --test-threads="${DBIO_TEST_THREADS:-2}" 2>&1 | tee -a "$log" || status=1
# One line over every test binary (ignored = skipped here: needs root, a tool, device-mapper).
awk '/^test result:/ { p += $4; f += $6; i += $8 }
     END { printf "tests: %d passed, %d failed, %d skipped\n", p, f, i }' "$log"
exit $status
