#!/usr/bin/env bash
# bench/images/bench.sh: what a sandbox of a cached image costs beside one
# of the host's programs and beside a bare `unshare`. Two servers run at
# once, one on images (--image-dir) and one with --host-programs, and the
# creates (POST until the 202) and deletes alternate between them, so a
# noisy machine slows both alike; their ratio is the figure to read. Then
# a first pull: a fresh server pulls the image from a registry on
# loopback (bench/images/mklayout -registry) and unpacks it. And the disk
# each kind of sandbox takes. Needs root (or unprivileged user
# namespaces) and busybox-static.
#
#   bench/images/bench.sh            # RUNS=5 creates of each kind; OSB=path to use a built osb
#
# Prints a Markdown table on stdout (nothing else there), progress on
# stderr; exit 1 when something could not be measured.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/bench/lib.sh"
bench_init images
need curl curl
need unshare util-linux
[ -x /bin/busybox ] || need busybox busybox-static
bench_osb
runs=${RUNS:-5}
(cd "$root" && go build -o "$work/mklayout" ./bench/images/mklayout)
"$work/mklayout" "$work/images/bb" 1
# After the builds, which need the user's Go caches: the servers get a
# home of their own (no ~/.docker/config.json of the user's).
export OPEN_SANDBOX_API_KEY=bench-key HOME="$work/home"
mkdir -p "$HOME"

# start NAME FLAGS...: an osb server with its own data dir and log; sets
# addr_NAME to where it listens.
start() {
	local name=$1 a=""
	shift
	"$osb" server --listen 127.0.0.1:0 --data-dir "$work/$name" "$@" 2>"$work/$name.log" &
	bench_pids+=("$!")
	for _ in $(seq 100); do
		a=$(sed -n 's|^osb server listening on http://||p' "$work/$name.log")
		[ -n "$a" ] && break
		sleep 0.1
	done
	[ -n "$a" ] || { cat "$work/$name.log" >&2; die "osb server ($name) did not start"; }
	printf -v "addr_$name" %s "$a"
}

# once NAME IMAGE: one create and delete on server NAME; appends the
# times (µs) to $work/NAME.times and .delete, the sandbox's disk to .disk.
once() {
	local addr_var=addr_$1
	local addr=${!addr_var}
	local body="{\"image\":{\"uri\":\"$2\"},\"entrypoint\":[\"sleep\",\"1000\"],\"resourceLimits\":{\"cpu\":\"1\",\"memory\":\"512Mi\"}}"
	local id t0
	t0=$(now_us)
	id=$(curl -sf -H "OPEN-SANDBOX-API-KEY: $OPEN_SANDBOX_API_KEY" -d "$body" "http://$addr/v1/sandboxes" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
	[ -n "$id" ] || { cat "$work/$1.log" >&2; die "$1: create failed"; }
	echo $(( $(now_us) - t0 )) >>"$work/$1.times"
	du -sk "$work/$1/sandboxes/$id" | cut -f1 >"$work/$1.disk"
	t0=$(now_us)
	curl -sf -X DELETE -H "OPEN-SANDBOX-API-KEY: $OPEN_SANDBOX_API_KEY" "http://$addr/v1/sandboxes/$id" >/dev/null
	echo $(( $(now_us) - t0 )) >>"$work/$1.delete"
}

say "first pull from a loopback registry…"
"$work/mklayout" -registry "$work/registry.addr" bench/bb:1 &
bench_pids+=("$!")
for _ in $(seq 100); do [ -s "$work/registry.addr" ] && break; sleep 0.1; done
[ -s "$work/registry.addr" ] || die "the registry did not start"
registry=$(head -n1 "$work/registry.addr")
start pull
once pull "$registry/bench/bb:1"
layers=$(du -sk "$work/pull/images/layers" | cut -f1)

say "cached image and host programs, $runs creates each, alternating…"
start image --image-dir "$work/images"
start host --host-programs
once image bb:1 # fills the cache; not counted
: >"$work/image.times"
: >"$work/image.delete"
for i in $(seq "$runs"); do
	if (( i % 2 )); then once image bb:1; once host bb:1; else once host bb:1; once image bb:1; fi
done

: >"$work/unshare.times"
for _ in $(seq "$runs"); do
	t0=$(now_us)
	unshare --user --map-root-user --mount --pid --uts --ipc --net --fork true
	echo $(( $(now_us) - t0 )) >>"$work/unshare.times"
done

image=$(median_ms "$work/image.times")
host=$(median_ms "$work/host.times")
echo "| measurement | median of $runs | notes |"
echo "|---|---|---|"
echo "| create, first pull | $(median_ms "$work/pull.times") ms | one run: pulls the image (busybox, one layer, $layers KiB unpacked) from a loopback registry and unpacks it |"
echo "| create, cached image | $image ms | delete $(median_ms "$work/image.delete") ms; sandbox dir $(cat "$work/image.disk") KiB |"
echo "| create, host programs | $host ms | delete $(median_ms "$work/host.delete") ms; sandbox dir $(cat "$work/host.disk") KiB |"
echo "| cached image ÷ host programs | $(awk -v a="$image" -v b="$host" 'BEGIN {printf "%.2f×", a/b}') | creates alternated between two servers in one run |"
echo "| unshare of the same namespaces | $(median_ms "$work/unshare.times") ms | no root filesystem, no execd |"
