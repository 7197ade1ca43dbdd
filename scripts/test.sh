#!/usr/bin/env bash
# Runs dbio's whole test suite on a fresh Debian machine: installs the tools
# the tests drive (mkfs.xfs, mkfs.btrfs, fio, iostat, chromium) when missing, then checks
# formatting and lints, then runs every test. Loop-device tests need root.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v mkfs.ext4 >/dev/null || need+=(e2fsprogs)
command -v mkfs.xfs >/dev/null || need+=(xfsprogs)
command -v mkfs.btrfs >/dev/null || need+=(btrfs-progs)
command -v fio >/dev/null || need+=(fio)
command -v iostat >/dev/null || need+=(sysstat)
command -v losetup >/dev/null || need+=(mount)
command -v sfdisk >/dev/null || need+=(fdisk)
command -v sgdisk >/dev/null || need+=(gdisk)
command -v mkfs.vfat >/dev/null || need+=(dosfstools)
command -v cryptsetup >/dev/null || need+=(cryptsetup-bin)
# mkfs.jfs: a real JFS signature for the write gate tests (tests/target_safety.rs, signatures.rs)
command -v mkfs.jfs >/dev/null || need+=(jfsutils)
command -v partx >/dev/null || need+=(util-linux)
command -v sqlite3 >/dev/null || need+=(sqlite3)
command -v chromium >/dev/null || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "installing: ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "missing ${need[*]} (not root: the tests that need them will be skipped)"
  fi
fi

if cargo fmt --version >/dev/null 2>&1; then cargo fmt --check; else echo "rustfmt not installed: format check skipped"; fi
if cargo clippy --version >/dev/null 2>&1; then
  cargo clippy --all-targets --quiet -- -D warnings
else
  echo "clippy not installed: lint check skipped"
fi
cargo test --all-targets -- --test-threads="${DBIO_TEST_THREADS:-2}"
