# One file of TRANSFER_MB (default 512) random MiB, down: GET
# /files/download to a local file; osb's copy is checked against the source.
TRANSFER_MB=${TRANSFER_MB:-512}
title="\`file download\`, $TRANSFER_MB MiB"
baseline='curl: endpoint, GET /files/download'
runs=$(((RUNS + 1) / 2))
setup() {
	id=$(bench_sandbox -t 60m)
	src=$work/download.bin
	head -c $((TRANSFER_MB << 20)) /dev/urandom >"$src"
	bytes=$((TRANSFER_MB << 20))
	"$osb" file upload "$id" "$src" /tmp/down.bin
	"$osb" file download "$id" /tmp/down.bin "$work/download.check"
	cmp "$src" "$work/download.check"
	rm -f "$work/download.check"
}
run_osb() { "$osb" file download "$id" /tmp/down.bin "$work/download.osb"; rm -f "$work/download.osb"; }
run_baseline() {
	execd_lookup "$id"
	curl -fsS -H "OpenSandbox-Secure-Access: $execd_secret" -o "$work/download.curl" "$execd/files/download?path=/tmp/down.bin"
	rm -f "$work/download.curl"
}
teardown() { "$osb" sandbox kill "$id"; rm -f "$src"; }
