# A tree of CP_FILES (default 10,000) files of 1 KiB out of the sandbox,
# into a new local directory each run, on a tmpfs: on ext4, the inodes an
# earlier row or run deleted in the last minutes make each file create
# scan for them (one osb copy took 2.6 s instead of 0.25 there), which
# times the filesystem's recent past more than either side.
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
	dest=$(mktemp -d /dev/shm/osb-bench-down.XXXXXX)
}
run_osb() { "$osb" cp "$id:/workspace/tree" "$dest/osb-$$"; }
run_baseline() {
	curl_command "$id" "tar -cf /tmp/down.tar -C /workspace/tree ."
	mkdir "$dest/tar-$$"
	curl -fsS -H "OpenSandbox-Secure-Access: $execd_secret" "$execd/files/download?path=/tmp/down.tar" |
		tar -xf - -C "$dest/tar-$$"
}
note() {
	local d
	for d in "$dest"/*; do
		[ "$(find "$d" -type f | wc -l)" = "$CP_FILES" ] || { echo "$d is short" >&2; return 1; }
	done
	echo "every copy checked: $CP_FILES files"
}
teardown() { "$osb" sandbox kill "$id"; rm -rf "$dest"; }
