#!/usr/bin/env bash
# `osb sandbox list --all -o json` against curl fetching the same pages from
# the same server, in interleaved pairs.
#
#   bench/list/bench.sh                      # 10,000 and 20,000 records, 10 pairs each
#   RECORDS="1000 5000" RUNS=5 bench/list/bench.sh
#   OSB=/path/to/osb bench/list/bench.sh     # an existing binary instead of building one
#
# Thousands of live sandboxes would take more processes than a shared
# machine has, and `osb server` building each page would time the server,
# not the client. So one sandbox is made on `osb server`, its record taken
# as the API sends it, and bench/list/pages serves RECORDS copies of it
# (fresh ids) from pages rendered before it listens. osb and curl read the
# same pages from it: osb with --all, curl as one process fetching every
# page in turn over one connection.
#
# Prints one `row` line per record count (see bench/pairs.sh; A is osb, B
# curl), then checks osb listed every record. Exit status 1 when anything
# fails; everything lives in one temp dir, removed on exit.
set -euo pipefail

RECORDS=${RECORDS:-10000 20000}
RUNS=${RUNS:-10}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/bench/lib.sh"
. "$root/bench/pairs.sh"
bench_init list

need curl curl
need jq jq
need /usr/bin/time time

bench_osb
bench_server
bench_sandbox -t 30m >/dev/null
printf 'OPEN-SANDBOX-API-KEY: %s\n' "$OPEN_SANDBOX_API_KEY" >"$work/key.header"
curl -fsS -H "@$work/key.header" "http://$addr/v1/sandboxes?pageSize=1" | jq -c '.items[0]' >"$work/record.json"

(cd "$root" && go build -o "$work/pages" ./bench/list/pages)
status=0
for n in $RECORDS; do
	"$work/pages" "$work/record.json" "$n" >"$work/pages.$n.addr" &
	pid=$!
	bench_pids+=("$pid")
	for _ in $(seq 300); do
		[ -s "$work/pages.$n.addr" ] && break
		sleep 0.1
	done
	laddr=$(cat "$work/pages.$n.addr")
	[ -n "$laddr" ] || die "the page server did not start"
	pages=$(((n + 199) / 200))
	listed=$("$osb" --domain "$laddr" sandbox list --all -o json | jq '.items | length')
	[ "$listed" = "$n" ] || die "osb listed $listed of $n records"
	pair_row "list_all_json_$n" "$RUNS" \
		"$osb --domain $laddr sandbox list --all -o json" \
		"curl -fsS -o /dev/null -H @$work/key.header http://$laddr/v1/sandboxes?pageSize=200&page=[1-$pages]" || status=1
	kill "$pid" 2>/dev/null || true
done
exit "$status"
