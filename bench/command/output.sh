#!/usr/bin/env bash
# Large command output: `osb command run` printing tens of megabytes, against
# curl reading the same stream, on the same local `osb server`.
#
#   bench/command/output.sh                     # 50 MB of random bytes in base64: 67 MB of output
#   SIZE_MB=10 RUNS=3 bench/command/output.sh
#   OSB=/path/to/osb bench/command/output.sh    # an existing binary instead of building one
#
# It builds osb (unless OSB is set), starts `osb server` on a free loopback
# port with a throwaway data dir and creates a sandbox whose command is
#   head -c SIZE_MB MB /dev/urandom | base64       (76-column lines)
# Then it measures, RUNS times in turn (medians):
#   osb -o raw     the whole process, output to /dev/null;
#   curl           GET .../endpoints/44772, then POST /command, until the
#                  terminal frame has arrived (grep stops reading there):
#                  the same work, without decoding a frame;
# and once each, with /usr/bin/time, osb's peak RSS: -o raw and -o json at
# this size, and -o raw at four times the size (it must not grow).
# Output: one "name value" line per figure. Everything it creates lives in
# one temp dir, removed on exit. Needs: bash 5, go, curl, grep, GNU time.
# Numbers from a shared machine are noisy: compare ratios, not absolutes.
set -euo pipefail

RUNS=${RUNS:-5}
SIZE_MB=${SIZE_MB:-50}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/bench/lib.sh"
bench_init output

need curl curl
need grep
need /usr/bin/time time
[ -n "${EPOCHREALTIME:-}" ] || die "bash 5 is needed (EPOCHREALTIME)"

bench_osb
bench_server --host-programs

id=$(bench_sandbox -t 30m)

script() { echo "head -c $(($1 * 1000000)) /dev/urandom | base64"; }
cmd=$(script "$SIZE_MB")
bytes=$("$osb" command run "$id" -o raw -- sh -c "$cmd" | wc -c)

osb_once() { elapsed_us "$osb" command run "$id" -o raw -- sh -c "$cmd"; }

# curl_once prints the time to the terminal frame: the server may hold the
# stream open after it (execd does for about a second), osb does not wait.
curl_once() {
	local t0
	t0=$(now_us)
	curl_command "$id" "$cmd"
	echo $(($(cat "$work/terminal") - t0))
}

: >"$work/t-osb"; : >"$work/t-curl"
for _ in $(seq "$RUNS"); do
	osb_once >>"$work/t-osb"
	curl_once >>"$work/t-curl"
done

# rss FORMAT SIZE_MB: osb's peak RSS in MiB for that output.
rss() {
	/usr/bin/time -f %M -o "$work/rss" "$osb" command run "$id" -o "$1" -- sh -c "$(script "$2")" >/dev/null
	awk '{ printf "%.1f", $1 / 1024 }' "$work/rss"
}

osb_ms=$(median_ms "$work/t-osb")
curl_ms=$(median_ms "$work/t-curl")
printf 'output_mb %s\n' "$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')"
printf 'osb_raw_ms %s\n' "$osb_ms"
printf 'curl_ms %s\n' "$curl_ms"
printf 'ratio %s\n' "$(awk -v a="$osb_ms" -v b="$curl_ms" 'BEGIN { printf "%.2f", a / b }')"
printf 'rss_json_mib %s\n' "$(rss json "$SIZE_MB")"
printf 'rss_raw_mib %s\n' "$(rss raw "$SIZE_MB")"
printf 'rss_raw_4x_mib %s\n' "$(rss raw $((SIZE_MB * 4)))"
