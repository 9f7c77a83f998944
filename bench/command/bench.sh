#!/usr/bin/env bash
# Command latency benchmark: `osb command run SID -o raw -- echo hi` against
# curl making the same HTTP calls, on the same local `osb server`.
#
#   bench/command/bench.sh                 # 20 runs each
#   RUNS=50 bench/command/bench.sh
#   OSB=/path/to/osb bench/command/bench.sh   # an existing binary instead of building one
#
# It builds osb (unless OSB is set), starts `osb server` on a free loopback
# port with a throwaway data dir and creates a sandbox. Then, RUNS times in
# turn, it times:
#   osb          the whole process: start-up, endpoint lookup, POST /command,
#                output, exit (it stops reading at the terminal event);
#   curl         GET /v1/sandboxes/{id}/endpoints/44772, then POST /command,
#                until the terminal frame has arrived: the same work;
#   curl to EOF  the same curl, until the server closes the stream, as a
#                client that reads streams to the end waits (execd holds the
#                /command stream open for about 1 s after the last frame).
# It prints each median in milliseconds and the osb/curl ratio. Everything
# it creates lives in one temp dir, removed on exit. Needs: bash 5, go, curl,
# grep. Numbers from a shared machine are noisy: compare ratios, not absolutes.
set -euo pipefail

RUNS=${RUNS:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/bench/lib.sh"
bench_init command

need curl curl
need grep
[ -n "${EPOCHREALTIME:-}" ] || die "bash 5 is needed (EPOCHREALTIME)"

bench_osb
bench_server --host-programs

id=$(bench_sandbox -t 30m)
[ "$("$osb" command run "$id" -o raw -- echo hi)" = hi ] || die "osb command run does not work"

osb_once() { elapsed_us "$osb" command run "$id" -o raw -- echo hi; }

# curl_once prints two durations: to the terminal frame, and to EOF.
curl_once() {
	local t0 t2
	t0=$(now_us)
	curl_command "$id" "echo hi"
	t2=$(now_us)
	echo "$(($(cat "$work/terminal") - t0)) $((t2 - t0))"
}

: >"$work/t-osb"; : >"$work/t-curl"; : >"$work/t-curl-eof"
for _ in $(seq "$RUNS"); do
	osb_once >>"$work/t-osb"
	read -r term eof < <(curl_once)
	echo "$term" >>"$work/t-curl"
	echo "$eof" >>"$work/t-curl-eof"
done

osb_ms=$(median_ms "$work/t-osb")
curl_ms=$(median_ms "$work/t-curl")
eof_ms=$(median_ms "$work/t-curl-eof")
printf 'command run -- echo hi, %d runs each (median ms)\n' "$RUNS"
printf '  osb command run -o raw   %8s\n' "$osb_ms"
printf '  curl, to terminal frame  %8s\n' "$curl_ms"
printf '  curl, to end of stream   %8s\n' "$eof_ms"
awk -v a="$osb_ms" -v b="$curl_ms" -v c="$eof_ms" 'BEGIN { printf "  osb/curl %.2f   osb/curl-to-EOF %.2f\n", a/b, a/c }'
