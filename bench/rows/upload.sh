# One file of TRANSFER_MB (default 512) random MiB, up: multipart POST
# /files/upload.
TRANSFER_MB=${TRANSFER_MB:-512}
title="\`file upload\`, $TRANSFER_MB MiB"
baseline='curl: endpoint, multipart POST /files/upload'
runs=$(((RUNS + 1) / 2))
setup() {
	id=$(bench_sandbox -t 60m)
	src=$work/upload.bin
	head -c $((TRANSFER_MB << 20)) /dev/urandom >"$src"
	bytes=$((TRANSFER_MB << 20))
	printf '{"path":"/tmp/curl.bin","mode":644}' >"$work/upload.meta"
}
run_osb() { "$osb" file upload "$id" "$src" /tmp/osb.bin; }
run_baseline() {
	execd_lookup "$id"
	curl -fsS -H "OpenSandbox-Secure-Access: $execd_secret" \
		-F "metadata=@$work/upload.meta;filename=metadata;type=application/json" \
		-F "file=@$src;type=application/octet-stream" "$execd/files/upload"
}
teardown() { "$osb" sandbox kill "$id"; rm -f "$src"; }
