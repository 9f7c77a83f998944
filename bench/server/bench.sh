#!/usr/bin/env bash
# Server benchmark: what a sandbox costs `osb server` (create, delete,
# memory), each beside an outside baseline, in one run.
#
#   bench/server/bench.sh                  # LIVE=1000 idle sandboxes, RUNS=20 samples
#   LIVE=200 RUNS=10 bench/server/bench.sh
#   OSB=/path/to/osb bench/server/bench.sh # an existing binary instead of building one
#
# It builds osb (unless OSB is set), starts `osb server` (root: isolated
# sandboxes with cgroups) and measures, with curl as the client:
#   create   POST /v1/sandboxes until it answers (the sandbox runs),
#            against `unshare` of the same namespaces running `true`; RUNS
#            pairs, interleaved, back to back. Two figures: the request on
#            the wire (curl's time_total: connect, send, the server's work,
#            the answer), and the whole curl process, whose own start-up
#            (the "curl GET /health" row: a request the server answers at
#            once) is more than unshare takes here. CPU is the server's own
#            CPU plus the new sandbox's cgroup (cpuacct), against unshare's
#            CPU as a child of this shell.
#   delete   DELETE /v1/sandboxes/{id} (204 once its processes are dead and
#            its files gone), RUNS times with no other sandbox, RUNS times
#            with LIVE idle sandboxes, and RUNS times again with none; the
#            baseline is the two runs with none.
#   memory   PSS and RSS of the server and every process of its sandboxes'
#            cgroups, with LIVE idle sandboxes, less the server's alone,
#            divided by LIVE; beside it the entrypoint's own (sleep) and a
#            per-process breakdown by program name (argv[0]).
# Output: one line per figure, tab-separated: name, value, baseline, ratio
# (value/baseline), unit, note. Everything it creates lives in one temp dir,
# removed on exit. Needs: bash 5, go, curl, unshare (util-linux), root.
# A shared machine is noisy: compare ratios, not absolutes.
set -euo pipefail

LIVE=${LIVE:-1000}
RUNS=${RUNS:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/bench/lib.sh"
bench_init server

need curl curl
need unshare util-linux
[ "$(id -u)" = 0 ] || die "the server figures need root (isolated sandboxes with cgroups)"
[ -n "${EPOCHREALTIME:-}" ] || die "bash 5 is needed (EPOCHREALTIME)"

bench_osb
bench_server --host-programs # the host's programs: what a sandbox costs, not an image
api="http://$OPEN_SANDBOX_DOMAIN/v1"
key_header="OPEN-SANDBOX-API-KEY: $OPEN_SANDBOX_API_KEY"
body='{"image":{"uri":"bench"},"entrypoint":["sleep","infinity"],"resourceLimits":{"cpu":"1","memory":"64Mi"},"timeout":7200}'

# post_create FILE [CURL-ARGS]: one create, its answer in FILE (curl alone,
# as timed).
post_create() {
	local out=$1
	shift
	curl -fsS -o "$out" "$@" -H "$key_header" -H 'Content-Type: application/json' -d "$body" "$api/sandboxes"
}
# id_in FILE: the sandbox id in a create's answer.
id_in() { grep -o '"id":"[^"]*"' "$1" | head -1 | cut -d'"' -f4; }
create() { post_create "$work/created" && id_in "$work/created"; }
delete() { curl -fsS -o /dev/null -X DELETE -H "$key_header" "$api/sandboxes/$1"; }

# ticks PID: utime+stime of a process (all its threads), in clock ticks.
ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
# child_ticks: CPU of this shell's reaped children, in clock ticks.
child_ticks() { awk '{ sub(/.*\) /, ""); print $14 + $15 }' /proc/$$/stat; }
hz=$(getconf CLK_TCK)

# cgroup_dir CONTROLLER: the server's level of that hierarchy, whose
# children are its sandboxes' cgroups.
cgroup_dir() {
	local d
	d=$(find "/sys/fs/cgroup" -maxdepth 5 -type d -path "*$1*/osb/$server_pid" 2>/dev/null | head -1)
	[ -n "$d" ] || d=$(find /sys/fs/cgroup -maxdepth 5 -type d -path "*/osb/$server_pid" 2>/dev/null | head -1)
	echo "$d"
}

sum() { awk '{s+=$1} END {print s+0}' "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a/b; else print "-" }'; }
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@"; }
ms() { awk -v v="$1" 'BEGIN{printf "%.1f", v/1000}'; } # µs to ms, one decimal

# Warm up: the first create loads the image and probes cgroups.
id=$(create) && [ -n "$id" ] || { cat "$data.log" >&2; die "could not create a sandbox"; }
delete "$id"

# --- create vs unshare, interleaved ---------------------------------------
: >"$work/create"; : >"$work/unshare"; : >"$work/create-cpu"; : >"$work/unshare-cpu"; : >"$work/create-wire"; : >"$work/get"
cpuacct=$(cgroup_dir cpuacct)
ids=()
for _ in $(seq "$RUNS"); do
	s0=$(ticks "$server_pid"); t0=$(now_us)
	post_create "$work/created" -w '%{time_total}\n' >>"$work/create-wire" || die "create failed"
	t1=$(now_us); s1=$(ticks "$server_pid")
	id=$(id_in "$work/created")
	ids+=("$id")
	echo $((t1 - t0)) >>"$work/create"
	ns=$(cat "$cpuacct/$id/cpuacct.usage" 2>/dev/null || echo 0)
	awk -v s=$((s1 - s0)) -v hz="$hz" -v ns="$ns" 'BEGIN { print s * 1e6 / hz + ns / 1e3 }' >>"$work/create-cpu"
	c0=$(child_ticks); t0=$(now_us)
	unshare_namespaces
	t1=$(now_us); c1=$(child_ticks)
	echo $((t1 - t0)) >>"$work/unshare"
	awk -v c=$((c1 - c0)) -v hz="$hz" 'BEGIN { print c * 1e6 / hz }' >>"$work/unshare-cpu"
	t0=$(now_us)
	curl -fsS -o /dev/null "http://$OPEN_SANDBOX_DOMAIN/health" || die "GET /health failed"
	t1=$(now_us)
	echo $((t1 - t0)) >>"$work/get"
done
for id in "${ids[@]}"; do delete "$id"; done
awk '{print $1 * 1e6}' "$work/create-wire" >"$work/create-wire-us" # seconds to µs
c=$(median "$work/create"); u=$(median "$work/unshare"); g=$(median "$work/get"); w=$(median "$work/create-wire-us")
unshare_cmd=$(declare -f unshare_namespaces | grep -o "unshare --[^;]*")
row "create p50, on the wire" "$(ms "$w")" "$(ms "$u")" "$(ratio "$w" "$u")" ms "curl's time_total for the POST; baseline: $unshare_cmd"
row "create p50, whole curl" "$(ms "$c")" "$(ms "$u")" "$(ratio "$c" "$u")" ms "the curl process timed; its own cost is the next row"
row "curl GET /health p50" "$(ms "$g")" "$(ms "$u")" "$(ratio "$g" "$u")" ms "a request answered at once: curl's own start-up and exit, against the same unshare"
cc=$(sum "$work/create-cpu"); uc=$(sum "$work/unshare-cpu")
row "create CPU" "$(awk -v v="$cc" -v n="$RUNS" 'BEGIN{printf "%.1f", v/n/1000}')" "$(awk -v v="$uc" -v n="$RUNS" 'BEGIN{printf "%.1f", v/n/1000}')" "$(ratio "$cc" "$uc")" "ms/op" "server + sandbox cgroup vs unshare (clock ticks of 1/$hz s, summed over $RUNS)"

# delete_samples FILE: RUNS deletes of fresh sandboxes, each timed.
delete_samples() {
	local id t0 t1
	for _ in $(seq "$RUNS"); do
		id=$(create)
		[ -n "$id" ] || die "create failed"
		t0=$(now_us)
		delete "$id"
		t1=$(now_us)
		echo $((t1 - t0)) >>"$1"
	done
}

# pss_kib [PID...]: the PSS and RSS of the processes, in KiB.
pss_kib() {
	local pid
	for pid; do cat "/proc/$pid/smaps_rollup" 2>/dev/null; done |
		awk '/^Pss:/ {p += $2} /^Rss:/ {r += $2} END {print p + 0, r + 0}'
}

# sandbox_pids: every process in the server's sandboxes' cgroups.
sandbox_pids() { find "$(cgroup_dir memory)" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -un; }

: >"$work/delete0"
delete_samples "$work/delete0"
read -r server_pss server_rss < <(pss_kib "$server_pid")

say "creating $LIVE idle sandboxes…"
start=$(date +%s)
seq "$LIVE" | xargs -P 4 -I{} curl -fsS -o /dev/null -H "$key_header" -H 'Content-Type: application/json' -d "$body" "$api/sandboxes" ||
	say "some creates failed"
live=$(find "$(cgroup_dir memory)" -mindepth 1 -maxdepth 1 -type d | wc -l)
say "$live sandboxes live after $(($(date +%s) - start)) s"
sleep 5 # let them settle: idle is what is measured

mapfile -t pids < <(sandbox_pids)
read -r all_pss all_rss < <(pss_kib "$server_pid" "${pids[@]}")
for pid in "${pids[@]}"; do
	# By program name (argv[0]): an init run from memory has a number for comm.
	IFS= read -r -d '' comm <"/proc/$pid/cmdline" 2>/dev/null && [ -n "$comm" ] || continue
	comm=${comm##*/}
	read -r p r < <(pss_kib "$pid")
	echo "$comm $p $r"
done | awk -v n="$live" '{p[$1] += $2; r[$1] += $3; c[$1]++} END {for (k in p) printf "%s\t%.2f\t%.2f\t%d\n", k, p[k]/n/1024, r[k]/n/1024, c[k]}' |
	sort >"$work/breakdown"
entry_pss=$(awk '$1 == "sleep" {print $2}' "$work/breakdown")
entry_rss=$(awk '$1 == "sleep" {print $3}' "$work/breakdown")
cg_bytes=$(find "$(cgroup_dir memory)" -mindepth 2 -maxdepth 2 -name memory.usage_in_bytes -exec cat {} + 2>/dev/null | awk '{s+=$1} END {print s+0}')
read -r server_pss_n server_rss_n < <(pss_kib "$server_pid")

per_pss=$(awk -v a="$all_pss" -v b="$server_pss" -v n="$live" 'BEGIN{printf "%.2f", (a-b)/n/1024}')
per_rss=$(awk -v a="$all_rss" -v b="$server_rss" -v n="$live" 'BEGIN{printf "%.2f", (a-b)/n/1024}')
row "memory per idle sandbox (PSS)" "$per_pss" "${entry_pss:-0}" "$(ratio "$per_pss" "${entry_pss:-0}")" MiB "$live sandboxes; baseline: the entrypoint (sleep) alone"
row "memory per idle sandbox (RSS)" "$per_rss" "${entry_rss:-0}" "$(ratio "$per_rss" "${entry_rss:-0}")" MiB "RSS counts shared pages once per process"
row "server growth per sandbox (PSS)" "$(awk -v a="$server_pss_n" -v b="$server_pss" -v n="$live" 'BEGIN{printf "%.3f", (a-b)/n/1024}')" - - MiB "server PSS $((server_pss / 1024)) -> $((server_pss_n / 1024)) MiB"
row "cgroup memory per sandbox" "$(awk -v a="$cg_bytes" -v n="$live" 'BEGIN{printf "%.2f", a/n/1048576}')" - - MiB "memory.usage_in_bytes (pages charged, kernel memory included)"
while IFS=$'\t' read -r comm p r c; do
	row "  per sandbox: $comm" "$p" - - "MiB PSS" "RSS $r MiB, $c processes"
done <"$work/breakdown"

: >"$work/deleteN"
delete_samples "$work/deleteN"

say "deleting them…"
curl -fsS -H "$key_header" "$api/sandboxes?pageSize=200" >/dev/null
for _ in $(seq $(((live + 199) / 200 + 1))); do
	curl -fsS -H "$key_header" "$api/sandboxes?pageSize=200" | grep -o '"id":"[^"]*"' | cut -d'"' -f4 |
		xargs -r -P 4 -I{} curl -fsS -o /dev/null -X DELETE -H "$key_header" "$api/sandboxes/{}" || true
done
delete_samples "$work/delete0"

d0=$(median "$work/delete0"); dn=$(median "$work/deleteN")
row "delete p50, $live live" "$(awk -v v="$dn" 'BEGIN{printf "%.1f", v/1000}')" "$(awk -v v="$d0" 'BEGIN{printf "%.1f", v/1000}')" "$(ratio "$dn" "$d0")" ms "baseline: delete with no other sandbox, before and after ($((RUNS * 2)) samples)"
