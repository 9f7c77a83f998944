# Server: a sandbox created from the host's programs (POST /v1/sandboxes
# until its answer), against an unshare of the same namespaces, which has
# no root filesystem, no execd and no API in front. One create at a time:
# each run starts 0.1 s after the last, when the server has its next
# spare sandbox ready (create-burst: creates back to back).
title='server: create, host programs, one at a time (curl POST)'
settle=0.1
runs=$((RUNS * 3))  # quick pairs: more of them for a steadier median
baseline='`unshare` of the same namespaces, running `true`'
setup() {
	bench_server --host-programs
	wire="$out.wire" # post_sandbox's times on the wire, for the note
	body='{"image":{"uri":"bench"},"entrypoint":["sleep","1000"],"resourceLimits":{"cpu":"1","memory":"512Mi"}}'
}
run_osb() { post_sandbox; }
note() { wire_note; }
run_baseline() { unshare_namespaces; }
