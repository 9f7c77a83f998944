# bench/lib.sh: what every bench script does before it measures. Source it
# after `set -euo pipefail`, with root set to the repository:
#
#   root=$(cd "$(dirname "$0")/../.." && pwd)
#   . "$root/bench/lib.sh"
#   bench_init NAME          # $work: a temp dir, removed on exit with every
#                            # process in $bench_pids (osb server among them)
#   need TOOL [PACKAGE]...   # a tool, or exit 1 (as root: apt-get PACKAGE)
#   bench_osb                # $osb: $OSB, or osb built into $work
#   bench_server [FLAGS]     # `osb server` on a free loopback port (pass
#                            # --host-programs or --image-dir: no registry
#                            # is asked for image "bench"), data
#                            # dir in $work; exports OPEN_SANDBOX_DOMAIN,
#                            # OPEN_SANDBOX_API_KEY and HOME; sets $addr,
#                            # $server_pid
#   id=$(bench_sandbox -t 30m)   # a sandbox's id (image "bench")
#
# and for timing: now_us, elapsed_us CMD..., median_ms FILE, curl_command ID
# COMMAND.
#
# say and die print "bench: ..." on stderr; die exits 1.

say() { echo "bench: $*" >&2; }
die() { say "$*"; exit 1; }

bench_pids=()

bench_cleanup() {
	local pid
	for pid in "${bench_pids[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$work"
}

# bench_init NAME: the temp dir every file of the run lives in.
bench_init() {
	work=$(mktemp -d "${TMPDIR:-/tmp}/osb-bench-$1.XXXXXX")
	trap bench_cleanup EXIT INT TERM
}

# need TOOL [DEBIAN-PACKAGE]: find a tool, or install it where we can.
need() {
	command -v "$1" >/dev/null && return
	if [ -n "${2:-}" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		say "installing $2…"
		apt-get install -y "$2" >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y "$2" >/dev/null 2>&1; } ||
			die "could not install $2"
		return
	fi
	die "$1 is needed${2:+ (Debian package $2)}"
}

# bench_osb: $OSB, or osb built and stamped like make build, so that the
# results say what was measured.
bench_osb() {
	osb=${OSB:-}
	[ -n "$osb" ] && return
	need go
	say "building osb…"
	local version
	version=$(cd "$root" && git describe --tags --always --dirty 2>/dev/null || echo 0.0.0-dev)
	(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/osb-dev/osb/internal/build.Version=$version" -o "$work/osb" ./cmd/osb)
	osb="$work/osb"
}

# bench_server [SERVER-FLAGS]: starts `osb server` and waits until it says
# where it listens. The key goes through the environment, never the
# command line.
bench_server() {
	export OPEN_SANDBOX_API_KEY="bench-key" HOME="$work/home"
	mkdir -p "$HOME"
	"$osb" server --listen 127.0.0.1:0 --data-dir "$work/data" "$@" 2>"$work/server.log" &
	server_pid=$!
	bench_pids+=("$server_pid")
	addr=""
	for _ in $(seq 100); do
		addr=$(sed -n 's|^osb server listening on http://||p' "$work/server.log")
		[ -n "$addr" ] && break
		sleep 0.1
	done
	[ -n "$addr" ] || { cat "$work/server.log" >&2; die "osb server did not start"; }
	export OPEN_SANDBOX_DOMAIN="$addr"
}

# bench_sandbox [CREATE-FLAGS]: creates a sandbox and prints its id.
bench_sandbox() {
	local id
	id=$("$osb" sandbox create -i bench "$@" -q id) && [ -n "$id" ] ||
		{ cat "$work/server.log" >&2; die "could not create a sandbox"; }
	echo "$id"
}

# now_us: the wall clock in microseconds (bash 5).
now_us() { local t=${EPOCHREALTIME/[.,]/}; echo "$t"; }

# elapsed_us CMD...: runs CMD, its output dropped, and prints how long it
# took in microseconds.
elapsed_us() {
	local t0 t1
	t0=$(now_us)
	"$@" >/dev/null
	t1=$(now_us)
	echo $((t1 - t0))
}

# median_ms FILE: the median of the microsecond figures in FILE, one a
# line, in milliseconds.
median_ms() { sort -n "$1" | awk '{v[NR]=$1} END {m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; printf "%.1f", m/1000}'; }

# curl_command ID COMMAND: what curl does for `osb command run ID --
# COMMAND`: look up execd's endpoint, POST /command, and read the stream
# to its end; $work/terminal gets the time (now_us) the terminal frame came.
curl_command() {
	local body ep secret
	body=$(curl -fsS -H "OPEN-SANDBOX-API-KEY: $OPEN_SANDBOX_API_KEY" \
		"http://$OPEN_SANDBOX_DOMAIN/v1/sandboxes/$1/endpoints/44772?use_server_proxy=false")
	ep=$(printf '%s' "$body" | sed -n 's/.*"endpoint":"\([^"]*\)".*/\1/p')
	secret=$(printf '%s' "$body" | sed -n 's/.*"OpenSandbox-Secure-Access":"\([^"]*\)".*/\1/p')
	curl -sSN -H "OpenSandbox-Secure-Access: $secret" -H 'Content-Type: application/json' -d "{\"command\":\"$2\"}" "http://$ep/command" |
		{
			grep -q -m1 -E '"type":"(execution_complete|error)"'
			now_us >"$work/terminal"
			cat >/dev/null
		}
}
