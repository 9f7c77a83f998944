# A tree of CP_FILES (default 10,000) files of 1 KiB out of the sandbox,
# into a new local directory each run.
CP_FILES=${CP_FILES:-10000}
title="\`cp\` down, $CP_FILES files of 1 KiB"
baseline='curl POST /command `tar -c`, curl GET /files/download | tar -x'
runs=$RUNS warmup=1
setup() {
	id=$(bench_sandbox -t 60m)
	# Made and removed on a tmpfs: 10,000 inodes just deleted where the
	# copies land would have ext4 scan for them at each create, and time
	# that more than either side.
	src=$(mktemp -d /dev/shm/osb-bench-tree.XXXXXX)
	make_tree "$src/tree" "$CP_FILES"
	"$osb" cp "$src/tree" "$id:/workspace/tree"
	rm -rf "$src"
	mkdir -p "$work/cp-down"
}
run_osb() { "$osb" cp "$id:/workspace/tree" "$work/cp-down/osb-$$"; }
run_baseline() {
	curl_command "$id" "tar -cf /tmp/down.tar -C /workspace/tree ."
	mkdir "$work/cp-down/tar-$$"
	curl -fsS -H "OpenSandbox-Secure-Access: $execd_secret" "$execd/files/download?path=/tmp/down.tar" |
		tar -xf - -C "$work/cp-down/tar-$$"
}
note() {
	local d
	for d in "$work"/cp-down/*; do
		[ "$(find "$d" -type f | wc -l)" = "$CP_FILES" ] || { echo "$d is short" >&2; return 1; }
	done
	echo "every copy checked: $CP_FILES files"
}
teardown() { "$osb" sandbox kill "$id"; rm -rf "$work/cp-down"; }
