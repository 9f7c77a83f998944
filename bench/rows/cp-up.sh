# A tree of CP_FILES (default 10,000) files of 1 KiB into the sandbox, a
# new directory each run.
CP_FILES=${CP_FILES:-10000}
title="\`cp\` up, $CP_FILES files of 1 KiB"
baseline='tar | curl POST /files/upload, curl POST /command `tar -x`'
runs=$RUNS warmup=1
setup() {
	id=$(bench_sandbox -t 60m)
	tree=$work/cp-up
	make_tree "$tree" "$CP_FILES"
	printf '{"path":"/tmp/up.tar","mode":644}' >"$work/cp-up.meta"
}
run_osb() { "$osb" cp "$tree" "$id:/workspace/osb-$$"; }
run_baseline() {
	execd_lookup "$id"
	tar -C "$tree" -cf - . | curl -fsS -H "OpenSandbox-Secure-Access: $execd_secret" \
		-F "metadata=@$work/cp-up.meta;filename=metadata;type=application/json" \
		-F "file=@-;filename=up.tar;type=application/octet-stream" "$execd/files/upload"
	curl_command "$id" "mkdir -p /workspace/tar-$$ && tar -xf /tmp/up.tar -C /workspace/tar-$$"
}
note() {
	local counts
	counts=$("$osb" command run "$id" -o raw -- sh -c 'for d in /workspace/osb-* /workspace/tar-*; do ls "$d" | wc -l; done | sort -u')
	[ "$counts" = "$CP_FILES" ] || { echo "copies hold $counts files" >&2; return 1; }
	echo "every copy checked: $CP_FILES files"
}
teardown() { "$osb" sandbox kill "$id"; rm -rf "$tree"; }
