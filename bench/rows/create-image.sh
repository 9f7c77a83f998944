# Server: a sandbox created from a cached image (busybox, one layer, from
# --image-dir; the warm-up pair unpacks it), against an unshare of the
# same namespaces. One create at a time, as in create-host.
title='server: create, cached image, one at a time (curl POST)'
settle=0.1
runs=$((RUNS * 3))  # quick pairs: more of them for a steadier median
baseline='`unshare` of the same namespaces, running `true`'
setup() {
	[ -x /bin/busybox ] || need busybox busybox-static
	(cd "$root" && go run ./bench/images/mklayout "$work/images/bb" 1)
	bench_server --image-dir "$work/images"
	wire="$out.wire" # post_sandbox's times on the wire, for the note
	body='{"image":{"uri":"bb:1"},"entrypoint":["sleep","1000"],"resourceLimits":{"cpu":"1","memory":"512Mi"}}'
}
run_osb() { post_sandbox; }
note() { wire_note; }
run_baseline() { unshare_namespaces; }
