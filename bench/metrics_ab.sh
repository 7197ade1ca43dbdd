#!/usr/bin/env bash
# metrics_ab.sh — what watching a run live costs: bench/ab.sh with one dbio
# build as A (no endpoint; a curl a second at a closed port) and the same
# build as B (--metrics-listen on a free loopback port, scraped every second
# for OpenMetrics, as Prometheus does), taking turns. The executes/s ratio B/A is the cost (issue 32:
# ≥ 0.98).
#
# Usage: bench/metrics_ab.sh DBIO [PAIRS] -- SLOB OPTIONS…
#   bench/metrics_ab.sh target/release/dbio 3 -- --target /dev/shm/ab \
#       --sessions 2 --scale 300000 --cache 2G --update-pct 50 \
#       --redo-file-size 16M --time 15
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: bench/metrics_ab.sh DBIO [PAIRS] -- SLOB OPTIONS…" >&2; exit 2; }
DBIO=$(realpath "$1"); shift
WRAP=$(mktemp -d)
trap 'rm -rf "$WRAP"' EXIT INT TERM
# Both arms run the same scraper loop (a curl a second), so that its own
# process cost falls on both: A's scrapes a port nobody listens on.
cat > "$WRAP/plain" <<SH
#!/usr/bin/env bash
port=\$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$DBIO" "\$@" &
pid=\$!
(
  while kill -0 "\$pid" 2>/dev/null; do
    curl -s -o /dev/null -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' "http://127.0.0.1:\$port/metrics" || true
    sleep 1
  done
) &
scraper=\$!
wait "\$pid"; rc=\$?
kill "\$scraper" 2>/dev/null || true
exit \$rc
SH
cat > "$WRAP/scraped" <<SH
#!/usr/bin/env bash
port=\$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$DBIO" "\$@" --metrics-listen "127.0.0.1:\$port" &
pid=\$!
(
  while kill -0 "\$pid" 2>/dev/null; do
    curl -s -o /dev/null -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' "http://127.0.0.1:\$port/metrics" || true
    sleep 1
  done
) &
scraper=\$!
wait "\$pid"; rc=\$?
kill "\$scraper" 2>/dev/null || true
exit \$rc
SH
chmod +x "$WRAP/plain" "$WRAP/scraped"
"$(dirname "$0")/ab.sh" "$WRAP/plain" "$WRAP/scraped" "$@"
