#!/usr/bin/env bash
# Transfer benchmark: osb against curl, on the same local `osb server`.
#
#   bench/transfer/bench.sh            # 1 GiB of random data, 3 runs each
#   SIZE_MB=256 RUNS=5 bench/transfer/bench.sh
#   SPARSE=1 bench/transfer/bench.sh   # a sparse file of zeros (no disk needed for the source)
#   OSB=/path/to/osb bench/transfer/bench.sh   # an existing binary instead of building one
#
# It builds osb (unless OSB is set), starts `osb server` on a free loopback
# port with a throwaway data dir, creates a sandbox, then for each run
# uploads and downloads the file with `osb file upload/download` and with
# curl making the same execd requests (multipart POST /files/upload, GET
# /files/download). It prints each tool's median throughput, the osb/curl
# ratio, and osb's peak RSS (from /usr/bin/time -v). Everything it creates
# lives in one temp dir, removed on exit. Needs: go, curl, /usr/bin/time.
# Numbers from a shared machine are noisy: compare ratios, not absolutes.
set -euo pipefail

SIZE_MB=${SIZE_MB:-1024}
RUNS=${RUNS:-3}
SPARSE=${SPARSE:-0}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/bench/lib.sh"
bench_init transfer

need curl curl
need /usr/bin/time time
need python3

bench_osb
bench_server --host-programs

json_field() { python3 -c 'import json,sys; v=json.load(sys.stdin); print(eval("v"+sys.argv[1]))' "$1"; }
id=$(bench_sandbox -t 30m)
execd="http://$("$osb" sandbox endpoint "$id" -p 44772 -o json | json_field '["endpoint"]')"
headers=()
while IFS= read -r h; do [ -n "$h" ] && headers+=(-H "$h"); done < <(
	"$osb" sandbox endpoint "$id" -p 44772 -o json | python3 -c 'import json,sys; [print(k+": "+v) for k,v in (json.load(sys.stdin).get("headers") or {}).items()]')

src="$work/source.bin"
echo "generating ${SIZE_MB} MiB ($([ "$SPARSE" = 1 ] && echo sparse || echo random))…" >&2
if [ "$SPARSE" = 1 ]; then
	truncate -s "${SIZE_MB}M" "$src"
else
	head -c "$((SIZE_MB * 1024 * 1024))" /dev/urandom >"$src"
fi
bytes=$(stat -c %s "$src")
printf '{"path":"/tmp/curl.bin","mode":644}' >"$work/meta.json"

# timed CMD... → "seconds maxrss_kb" of CMD, which must succeed.
timed() {
	/usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" || {
		echo "bench: failed: $*" >&2
		cat "$work/err" >&2
		exit 1
	}
	cat "$work/time"
}

osb_up() { timed "$osb" file upload "$id" "$src" /tmp/osb.bin; }
osb_down() { timed "$osb" file download "$id" /tmp/osb.bin "$work/osb.out"; rm -f "$work/osb.out"; }
curl_up() {
	timed curl -fsS "${headers[@]}" -F "metadata=@$work/meta.json;filename=metadata;type=application/json" \
		-F "file=@$src;type=application/octet-stream" "$execd/files/upload"
}
curl_down() { timed curl -fsS "${headers[@]}" -o "$work/curl.out" "$execd/files/download?path=/tmp/curl.bin"; rm -f "$work/curl.out"; }

declare -A secs rss
for name in osb_up curl_up osb_down curl_down; do secs[$name]=""; rss[$name]=0; done
for run in $(seq "$RUNS"); do
	echo "run $run/$RUNS…" >&2
	for name in osb_up curl_up osb_down curl_down; do
		read -r s m < <($name)
		secs[$name]+="$s "
		[ "$m" -gt "${rss[$name]}" ] && rss[$name]=$m
	done
done

"$osb" file download "$id" /tmp/osb.bin "$work/check.bin" >/dev/null
cmp -s "$src" "$work/check.bin" || { echo "bench: the downloaded file differs from the source" >&2; exit 1; }
rm -f "$work/check.bin"

python3 - "$bytes" "${secs[osb_up]}" "${secs[curl_up]}" "${secs[osb_down]}" "${secs[curl_down]}" \
	"${rss[osb_up]}" "${rss[osb_down]}" "${rss[curl_up]}" "${rss[curl_down]}" <<'EOF'
import statistics, sys
size = int(sys.argv[1])
med = lambda s: statistics.median(max(float(x), 0.01) for x in s.split())
up_o, up_c, dn_o, dn_c = (med(a) for a in sys.argv[2:6])
rss_up, rss_dn, crss_up, crss_dn = (int(a) for a in sys.argv[6:10])
mib = size / 2**20
print(f"file: {mib:.0f} MiB; median of each tool's runs; MiB/s (seconds)")
print(f"{'':10}{'osb':>22}{'curl':>22}{'osb/curl':>10}{'osb peak RSS':>15}{'curl peak RSS':>15}")
for what, o, c, r, cr in (("upload", up_o, up_c, rss_up, crss_up), ("download", dn_o, dn_c, rss_dn, crss_dn)):
    print(f"{what:10}{mib/o:>12.0f} ({o:6.2f}s){mib/c:>12.0f} ({c:6.2f}s){c/o:>10.2f}{r/1024:>12.1f} MiB{cr/1024:>12.1f} MiB")
EOF
