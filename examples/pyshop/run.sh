#!/usr/bin/env bash
# Starts pyshop and everything it needs on loopback, for drilling it by hand:
#
#   bash examples/pyshop/run.sh [safe|naive|careful|compensating]  # in one terminal
#   gameday run --system examples/pyshop/gameday.yaml \
#       examples/pyshop/drills/postgres-reset.yaml         # in another
#
# A redis-server (stock), a PostgreSQL server (orders), the payment stand-in
# (the gateway) and the shop, each on its own loopback port, the addresses
# examples/pyshop/gameday.yaml uses by default. The shop talks to each
# through the proxy address a drill's Toxiproxy creates, so it answers 503
# between drills. Ctrl-C stops everything and removes the data.
# Needs redis-server, postgresql, python3-psycopg2 and python3-redis
# (scripts/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/../.."
mode="${1:-safe}"
dir="$(mktemp -d /tmp/pyshop-XXXXXX)"
pids=()
stop() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap stop EXIT INT TERM

pgbin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
as=()
if [ "$(id -u)" -eq 0 ]; then
	chown postgres "$dir"
	as=(runuser -u postgres --)
fi
"${as[@]}" "$pgbin/initdb" -D "$dir/pg" -U gameday --auth=trust -E UTF8 --no-sync >/dev/null
"${as[@]}" "$pgbin/postgres" -D "$dir/pg" -k "$dir" -h 127.0.0.1 -p 15440 -c fsync=off >"$dir/pg.log" 2>&1 &
pids+=($!)
redis-server --bind 127.0.0.1 --port 16390 --save '' --appendonly no --dir "$dir" >"$dir/redis.log" 2>&1 &
pids+=($!)
go build -o "$dir/gameday" ./cmd/gameday
"$dir/gameday" serve payment -listen 127.0.0.1:18090 -min-latency 20ms -max-latency 60ms >"$dir/payment.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do "$pgbin/pg_isready" -h 127.0.0.1 -p 15440 -q && break; sleep 0.1; done
/usr/bin/python3 examples/pyshop/shop.py --listen 127.0.0.1:18095 --mode "$mode" \
	--redis redis://127.0.0.1:16391 --pg "postgres://gameday@127.0.0.1:15441/postgres?sslmode=disable" \
	--gateway http://127.0.0.1:18091 --init-db "postgres://gameday@127.0.0.1:15440/postgres?sslmode=disable" &
pids+=($!)
echo "pyshop ($mode) on http://127.0.0.1:18095; Ctrl-C stops everything" >&2
wait
