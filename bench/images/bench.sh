#!/usr/bin/env bash
# bench/images/bench.sh: what a sandbox of a cached image costs beside one
# of the host's programs and beside a bare `unshare`: create (POST until
# the sandbox answers 202) and delete, RUNS times each (default 5; keep
# it small on a shared machine), and the disk a sandbox of each kind
# takes. Needs root (or unprivileged user namespaces) and busybox-static.
#
#   bench/images/bench.sh            # RUNS=5
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/bench/lib.sh"
bench_init images
need curl curl
need unshare util-linux
[ -x /bin/busybox ] || need busybox busybox-static
bench_osb
runs=${RUNS:-5}

(cd "$root" && go run ./bench/images/mklayout "$work/images/bb" 1)

# create_ms LABEL IMAGE: median create time (POST until the 202) against
# $addr; each sandbox is deleted after it, and the delete timed apart.
# The disk of the last sandbox goes to $work/LABEL.disk.
create_ms() {
	local body="{\"image\":{\"uri\":\"$2\"},\"entrypoint\":[\"sleep\",\"1000\"],\"resourceLimits\":{\"cpu\":\"1\",\"memory\":\"512Mi\"}}"
	local times=$work/$1.times dtimes=$work/$1.delete id t0
	: >"$times"
	: >"$dtimes"
	for _ in $(seq "$runs"); do
		t0=$(now_us)
		id=$(curl -sf -H "OPEN-SANDBOX-API-KEY: $OPEN_SANDBOX_API_KEY" -d "$body" "http://$addr/v1/sandboxes" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
		[ -n "$id" ] || die "$1: create failed"
		echo $(( $(now_us) - t0 )) >>"$times"
		du -sk "$work/data/sandboxes/$id" | cut -f1 >"$work/$1.disk"
		t0=$(now_us)
		curl -sf -X DELETE -H "OPEN-SANDBOX-API-KEY: $OPEN_SANDBOX_API_KEY" "http://$addr/v1/sandboxes/$id" >/dev/null
		echo $(( $(now_us) - t0 )) >>"$dtimes"
	done
	median_ms "$times"
}

bench_server --image-dir "$work/images"
runs_was=$runs runs=1
first=$(create_ms first bb:1) # the first create unpacks the image into the cache
runs=$runs_was
image=$(create_ms image bb:1)
layers=$(du -sk "$work/data/images/layers" | cut -f1)
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
bench_server --host-programs
host=$(create_ms host bb:1)

times=$work/unshare.times
: >"$times"
for _ in $(seq "$runs"); do
	t0=$(now_us)
	unshare --user --map-root-user --mount --pid --uts --ipc --net --fork true
	echo $(( $(now_us) - t0 )) >>"$times"
done
bare=$(median_ms "$times")

echo "| measurement | median of $runs | notes |"
echo "|---|---|---|"
echo "| create, image not yet cached | $first ms | unpacks the image (busybox, one layer, $layers KiB) from --image-dir |"
echo "| create, cached image | $image ms | delete $(median_ms "$work/image.delete") ms; sandbox dir $(cat "$work/image.disk") KiB |"
echo "| create, host programs | $host ms | delete $(median_ms "$work/host.delete") ms; sandbox dir $(cat "$work/host.disk") KiB |"
echo "| unshare of the same namespaces | $bare ms | no root filesystem, no execd |"
