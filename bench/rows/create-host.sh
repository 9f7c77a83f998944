# Server: a sandbox created from the host's programs (POST /v1/sandboxes
# until its answer), against an unshare of the same namespaces, which has
# no root filesystem, no execd and no API in front. One create at a time:
# each run starts 0.3 s after the last, when the server has its next
# spare sandbox ready (create-burst: creates back to back).
title='server: create, host programs, one at a time (curl POST)'
settle=0.1
runs=$((RUNS * 3))  # quick pairs: more of them for a steadier median
baseline='`unshare` of the same namespaces, running `true`'
setup() {
	bench_server --host-programs
	body='{"image":{"uri":"bench"},"entrypoint":["sleep","1000"],"resourceLimits":{"cpu":"1","memory":"512Mi"}}'
}
run_osb() { curl -fsS -o /dev/null -H "OPEN-SANDBOX-API-KEY: $OPEN_SANDBOX_API_KEY" -d "$body" "http://$addr/v1/sandboxes"; }
run_baseline() { unshare --user --map-root-user --mount --pid --uts --ipc --net --fork true; }
