#!/usr/bin/env bash
# osb cp against a loop of `osb file upload`, on the same local `osb server`.
#
#   bench/cp/bench.sh                        # 10,000 small files, and 1 GiB in 50 files
#   SMALL_FILES=2000 BIG_MB=256 bench/cp/bench.sh
#   OSB=/path/to/osb bench/cp/bench.sh       # an existing binary instead of building one
#
# For each tree it times, once each (a loop of 10,000 uploads takes minutes):
#   osb cp DIR ID:/dst                       (the tree up, --jobs 8)
#   osb cp ID:/dst DIR                       (and back)
#   for f in DIR/*; do osb file upload ID f /loop/f; done
# and prints one line per tree: "tree NAME files N bytes B cp_up_s S cp_down_s S
# loop_up_s S peak_rss_mib M", osb's peak RSS from /usr/bin/time -v of the
# upload. Everything lives in one temp dir, removed on exit. Numbers from a
# shared machine are noisy: compare ratios, not absolutes.
set -euo pipefail

SMALL_FILES=${SMALL_FILES:-10000}
BIG_MB=${BIG_MB:-1024}
BIG_FILES=${BIG_FILES:-50}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/bench/lib.sh"
bench_init cp

need /usr/bin/time time
need python3

bench_osb
bench_server --host-programs
id=$(bench_sandbox -t 60m)

# seconds CMD...: wall time of a command, in seconds with milliseconds.
seconds() {
	local start end
	start=$(date +%s.%N)
	"$@" >/dev/null
	end=$(date +%s.%N)
	python3 -c "print(f'{$end - $start:.3f}')"
}

# bench_tree NAME DIR: the three ways, and osb's peak RSS on the way up.
bench_tree() {
	local name=$1 dir=$2 files bytes up down loop rss
	files=$(find "$dir" -type f | wc -l)
	bytes=$(du -sb "$dir" | cut -f1)
	up=$(seconds "$osb" cp "$dir" "$id:/workspace/cp-$name")
	"$osb" file rmdir "$id" "/workspace/cp-$name" >/dev/null
	rss=$(/usr/bin/time -v "$osb" cp "$dir" "$id:/workspace/cp-$name" 2>&1 >/dev/null | awk '/Maximum resident/ {printf "%.1f", $6/1024}')
	down=$(seconds "$osb" cp "$id:/workspace/cp-$name" "$work/back-$name")
	rm -rf "$work/back-$name"
	loop=$(seconds bash -c 'for f in "$2"/*; do "$1" file upload "$3" "$f" "/workspace/loop-$4/${f##*/}" >/dev/null || exit 1; done' _ "$osb" "$dir" "$id" "$name")
	echo "tree $name files $files bytes $bytes cp_up_s $up cp_down_s $down loop_up_s $loop peak_rss_mib $rss"
}

echo "making $SMALL_FILES small files…" >&2
mkdir -p "$work/small"
python3 - "$work/small" "$SMALL_FILES" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(os.path.join(d, f"f{i:05d}.txt"), "wb") as f:
        f.write(os.urandom(1024))
PY
bench_tree small "$work/small"
rm -rf "$work/small"

echo "making ${BIG_MB} MiB in $BIG_FILES files…" >&2
mkdir -p "$work/big"
each=$((BIG_MB * 1024 / BIG_FILES))
for i in $(seq 1 "$BIG_FILES"); do
	head -c "$((each * 1024))" /dev/urandom >"$work/big/part$i.bin"
done
bench_tree big "$work/big"
