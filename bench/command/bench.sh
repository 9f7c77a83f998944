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
work=$(mktemp -d "${TMPDIR:-/tmp}/osb-bench-command.XXXXXX")
server_pid=""

cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

for tool in curl grep; do
	command -v "$tool" >/dev/null || { echo "bench: $tool is needed" >&2; exit 1; }
done
[ -n "${EPOCHREALTIME:-}" ] || { echo "bench: bash 5 is needed (EPOCHREALTIME)" >&2; exit 1; }

osb=${OSB:-}
if [ -z "$osb" ]; then
	echo "building osb…" >&2
	(cd "$root" && CGO_ENABLED=0 go build -trimpath -o "$work/osb" ./cmd/osb)
	osb="$work/osb"
fi

export OPEN_SANDBOX_API_KEY="bench-key" HOME="$work/home"
mkdir -p "$HOME"
"$osb" server --listen 127.0.0.1:0 --data-dir "$work/data" 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 100); do
	addr=$(sed -n 's|^osb server listening on http://||p' "$work/server.log")
	[ -n "$addr" ] && break
	sleep 0.1
done
[ -n "$addr" ] || { echo "bench: osb server did not start" >&2; cat "$work/server.log" >&2; exit 1; }
export OPEN_SANDBOX_DOMAIN="$addr"

id=$("$osb" sandbox create -i bench -t 30m -o json | sed -n 's/^  "id": "\([^"]*\)".*/\1/p')
[ -n "$id" ] || { echo "bench: could not create a sandbox" >&2; cat "$work/server.log" >&2; exit 1; }
[ "$("$osb" command run "$id" -o raw -- echo hi)" = hi ] || { echo "bench: osb command run does not work" >&2; exit 1; }

now_us() { local t=${EPOCHREALTIME/[.,]/}; echo "$t"; }

osb_once() {
	local t0 t1
	t0=$(now_us)
	"$osb" command run "$id" -o raw -- echo hi >/dev/null
	t1=$(now_us)
	echo $((t1 - t0))
}

# curl_once prints two durations: to the terminal frame, and to EOF.
curl_once() {
	local t0 t1 t2 ep body secret
	t0=$(now_us)
	body=$(curl -fsS -H "OPEN-SANDBOX-API-KEY: $OPEN_SANDBOX_API_KEY" \
		"http://$OPEN_SANDBOX_DOMAIN/v1/sandboxes/$id/endpoints/44772?use_server_proxy=false")
	ep=$(printf '%s' "$body" | sed -n 's/.*"endpoint":"\([^"]*\)".*/\1/p')
	secret=$(printf '%s' "$body" | sed -n 's/.*"OpenSandbox-Secure-Access":"\([^"]*\)".*/\1/p')
	curl -sSN -H "OpenSandbox-Secure-Access: $secret" -H 'Content-Type: application/json' -d '{"command":"echo hi"}' "http://$ep/command" |
		{
			grep -q -m1 -E '"type":"(execution_complete|error)"'
			now_us >"$work/terminal"
			cat >/dev/null
		}
	t2=$(now_us)
	t1=$(cat "$work/terminal")
	echo "$((t1 - t0)) $((t2 - t0))"
}

: >"$work/t-osb"; : >"$work/t-curl"; : >"$work/t-curl-eof"
for _ in $(seq "$RUNS"); do
	osb_once >>"$work/t-osb"
	read -r term eof < <(curl_once)
	echo "$term" >>"$work/t-curl"
	echo "$eof" >>"$work/t-curl-eof"
done

median_ms() { sort -n "$1" | awk '{v[NR]=$1} END {m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; printf "%.1f", m/1000}'; }
osb_ms=$(median_ms "$work/t-osb")
curl_ms=$(median_ms "$work/t-curl")
eof_ms=$(median_ms "$work/t-curl-eof")
printf 'command run -- echo hi, %d runs each (median ms)\n' "$RUNS"
printf '  osb command run -o raw   %8s\n' "$osb_ms"
printf '  curl, to terminal frame  %8s\n' "$curl_ms"
printf '  curl, to end of stream   %8s\n' "$eof_ms"
awk -v a="$osb_ms" -v b="$curl_ms" -v c="$eof_ms" 'BEGIN { printf "  osb/curl %.2f   osb/curl-to-EOF %.2f\n", a/b, a/c }'
