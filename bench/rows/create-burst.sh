# Server: creates from the host's programs back to back, each right after
# the last (and its baseline): the server has no spare sandbox ready, and
# makes the next while the following runs go on. Else as create-host.
title='server: create, host programs, back to back (curl POST)'
runs=$((RUNS * 3))  # quick pairs: more of them for a steadier median
baseline='`unshare` of the same namespaces, running `true`'
setup() {
	bench_server --host-programs
	body='{"image":{"uri":"bench"},"entrypoint":["sleep","1000"],"resourceLimits":{"cpu":"1","memory":"512Mi"}}'
}
run_osb() { curl -fsS -o /dev/null -H "OPEN-SANDBOX-API-KEY: $OPEN_SANDBOX_API_KEY" -d "$body" "http://$addr/v1/sandboxes"; }
run_baseline() { unshare --user --map-root-user --mount --pid --uts --ipc --net --fork true; }
