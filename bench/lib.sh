# bench/lib.sh: what every bench script does before it measures. Source it
# after `set -euo pipefail`, with root set to the repository:
#
#   root=$(cd "$(dirname "$0")/../.." && pwd)
#   . "$root/bench/lib.sh"
#   bench_init NAME          # $work: a temp dir, removed on exit with every
#                            # process in $bench_pids (osb server among them)
#   need TOOL [PACKAGE]...   # a tool, or exit 1 (as root: apt-get PACKAGE)
#   bench_osb                # $osb: $OSB, or osb built into $work
#   bench_tool DIR           # $work/BASE built from bench/DIR (a Go main)
#   bench_server [FLAGS]     # `osb server` on a free loopback port (pass
#                            # --host-programs or --image-dir: no registry
#                            # is asked for image "bench"), data dir $data
#                            # in $work; exports OPEN_SANDBOX_DOMAIN,
#                            # OPEN_SANDBOX_API_KEY and HOME; sets $addr,
#                            # $server_pid
#   id=$(bench_sandbox -t 30m)   # a sandbox's id (image "bench")
#
# and for rows: execd_lookup ID (sets $execd, $execd_secret), curl_command
# ID COMMAND (POST /command until the terminal frame), until_terminal
# CMD..., make_tree DIR N, listing_setup N.
#
# say and die print "bench: ..." on stderr; die exits 1.

say() { echo "bench: $*" >&2; }
die() { say "$*"; exit 1; }

# now_us: the wall clock in microseconds (bash 5's EPOCHREALTIME).
now_us() { local t=${EPOCHREALTIME/[.,]/}; echo "$t"; }

bench_pids=()

bench_cleanup() {
	local pid
	for pid in "${bench_pids[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$work"
}

# bench_init NAME: the temp dir every file of the run lives in. Go's
# caches are pinned where they are now, because bench_server moves HOME and
# Go would then look for its module cache (and go online) under the new one.
bench_init() {
	work=$(mktemp -d "${TMPDIR:-/tmp}/osb-bench-$1.XXXXXX")
	trap bench_cleanup EXIT INT TERM
	if command -v go >/dev/null; then
		GOPATH=$(go env GOPATH) GOCACHE=$(go env GOCACHE) GOMODCACHE=$(go env GOMODCACHE)
		export GOPATH GOCACHE GOMODCACHE
	fi
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
	need make make
	say "building osb…"
	local version
	version=$(cd "$root" && git describe --tags --always --dirty 2>/dev/null || echo 0.0.0-dev)
	# As make build does: osb carrying the sandbox program.
	(cd "$root" && make -s sandbox-program &&
		CGO_ENABLED=0 go build -tags sandboxprogram -trimpath -ldflags "-s -w -X github.com/osb-dev/osb/internal/build.Version=$version" -o "$work/osb" ./cmd/osb)
	osb="$work/osb"
}

# bench_tool DIR: one of bench's Go programs, built into $work.
bench_tool() {
	[ -x "$work/${1##*/}" ] || (cd "$root" && go build -o "$work/${1##*/}" "./bench/$1")
}

# bench_server [SERVER-FLAGS]: starts `osb server` and waits until it says
# where it listens. The key goes through the environment, never the
# command line.
bench_server() {
	export OPEN_SANDBOX_API_KEY="bench-key" HOME="$work/home"
	mkdir -p "$HOME"
	data=$(mktemp -d "$work/data.XXXXXX")
	"$osb" server --listen 127.0.0.1:0 --data-dir "$data" "$@" 2>"$data.log" &
	server_pid=$!
	bench_pids+=("$server_pid")
	addr=""
	for _ in $(seq 600); do # up to a minute: a loaded machine
		addr=$(sed -n 's|^osb server listening on http://||p' "$data.log" 2>/dev/null) || true # the log may not be there yet
		[ -n "$addr" ] && break
		sleep 0.1
	done
	[ -n "$addr" ] || { cat "$data.log" >&2; die "osb server did not start"; }
	export OPEN_SANDBOX_DOMAIN="$addr"
}

# bench_sandbox [CREATE-FLAGS]: creates a sandbox and prints its id.
bench_sandbox() {
	local id
	id=$("$osb" sandbox create -i bench "$@" -q id) && [ -n "$id" ] ||
		{ cat "$data.log" >&2; die "could not create a sandbox"; }
	echo "$id"
}

# execd_lookup ID: sets execd (http://HOST:PORT) and execd_secret for
# sandbox ID's execd, as osb looks them up: GET .../endpoints/44772.
execd_lookup() {
	local body
	body=$(curl -fsS -H "OPEN-SANDBOX-API-KEY: $OPEN_SANDBOX_API_KEY" \
		"http://$OPEN_SANDBOX_DOMAIN/v1/sandboxes/$1/endpoints/44772?use_server_proxy=false")
	# bash's own matching: a baseline should not pay for extra processes.
	[[ $body =~ \"endpoint\":\"([^\"]*)\" ]] && execd="http://${BASH_REMATCH[1]}"
	[[ $body =~ \"OpenSandbox-Secure-Access\":\"([^\"]*)\" ]] && execd_secret=${BASH_REMATCH[1]}
}

# curl_command ID COMMAND: what curl does for `osb command run ID --
# COMMAND`: look up execd's endpoint, POST /command, and read the stream
# until its terminal frame.
curl_command() {
	execd_lookup "$1"
	until_terminal curl -sSN -H "OpenSandbox-Secure-Access: $execd_secret" -H 'Content-Type: application/json' \
		-d "{\"command\":\"$2\"}" "$execd/command"
}

# until_terminal CMD...: reads CMD's output, a command's event stream, up
# to its terminal frame, where osb stops too (execd may hold the stream
# open for a while after it), then stops CMD. Fails when none came.
until_terminal() {
	local pid rc=0
	exec 3< <("$@")
	pid=$!
	grep -q -m1 -E '"type":"(execution_complete|error)"' <&3 || rc=$?
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	exec 3<&-
	return "$rc"
}

# make_tree DIR N: N files of 1 KiB of random bytes in DIR.
make_tree() {
	mkdir -p "$1"
	head -c $(($2 * 1024)) /dev/urandom | split -b 1024 -a 5 -d - "$1/f"
}

# listing_setup N: bench/listing serving N copies of a real sandbox record
# from osb server (one sandbox is created for it and deleted); sets
# $listing (its address) and $pages (of 200).
listing_setup() {
	local id
	bench_tool listing
	id=$(bench_sandbox -t 10m)
	curl -fsS -H "OPEN-SANDBOX-API-KEY: $OPEN_SANDBOX_API_KEY" "http://$OPEN_SANDBOX_DOMAIN/v1/sandboxes/$id" >"$work/record.json"
	"$osb" sandbox kill "$id" >/dev/null
	"$work/listing" "$work/record.json" "$1" >"$work/listing-$1.addr" &
	bench_pids+=($!)
	listing_pid=$!
	for _ in $(seq 100); do
		[ -s "$work/listing-$1.addr" ] && break
		sleep 0.1
	done
	listing=$(cat "$work/listing-$1.addr")
	[ -n "$listing" ] || die "bench/listing did not start"
	pages=$((($1 + 199) / 200))
	# Every page rendered once before anything is timed.
	curl -fsS -o /dev/null "http://$listing/v1/sandboxes?pageSize=200&page=[1-$pages]"
}

# post_sandbox: one create of $body on the server at $addr, its answer
# dropped: the create rows' osb side. Where wire names a file, curl's
# time_total for the request (seconds) is added to it: the create on the
# wire, without curl's own start-up and exit.
post_sandbox() {
	curl -fsS -o /dev/null -w '%{time_total}\n' -H "OPEN-SANDBOX-API-KEY: $OPEN_SANDBOX_API_KEY" -d "$body" \
		"http://$addr/v1/sandboxes" >>"${wire:-/dev/null}"
}

# median FILE: the median of the numbers in FILE.
median() { sort -n "$1" | awk '{v[NR]=$1} END {if (NR == 0) {print 0; exit} m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; print m}'; }

# wire_note: a create row's note, the median of its creates on the wire
# (the file wire, less the warm-up pairs'). curl's start-up, in the osb
# column, is more than unshare takes on a small machine.
wire_note() {
	tail -n +$((warmup + 1)) "$wire" >"$wire.counted"
	awk -v s="$(median "$wire.counted")" 'BEGIN { printf "on the wire (curl time_total, without its start-up): median %.1f ms\n", s * 1000 }'
}

# unshare_namespaces: an unshare of a sandbox's namespaces running `true`,
# the create rows' baseline (no root filesystem, no execd, no API).
unshare_namespaces() { unshare --user --map-root-user --mount --pid --uts --ipc --net --fork true; }
