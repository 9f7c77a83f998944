# Server: `osb sandbox create` (to ready) on osb server from a cached image,
# against the same command on the real OpenSandbox (official server, Docker,
# the real execd: ../shared/peers/opensandbox/realstack.sh up), whose local
# Debian image is its cached image. Fails, saying so, when that stack is
# not up.
REAL_DOMAIN=${REAL_DOMAIN:-127.0.0.1:18090}
REAL_KEY=${REAL_KEY:-realstack-key}
title='server: `osb sandbox create` to ready, cached image'
baseline='the real OpenSandbox, same command'
runs=$(((RUNS + 1) / 2))
setup() {
	curl -fsS -o /dev/null -H "OPEN-SANDBOX-API-KEY: $REAL_KEY" "http://$REAL_DOMAIN/v1/sandboxes" ||
		die "the real OpenSandbox does not answer at $REAL_DOMAIN (realstack.sh up)"
	[ -x /bin/busybox ] || need busybox busybox-static
	(cd "$root" && go run ./bench/images/mklayout "$work/images/bb" 1)
	bench_server --image-dir "$work/images"
	label="bench-run=$$"
}
run_osb() { "$osb" sandbox create -i bb:1 -m "$label" -q id >/dev/null; }
run_baseline() {
	OPEN_SANDBOX_DOMAIN=$REAL_DOMAIN OPEN_SANDBOX_API_KEY=$REAL_KEY OPEN_SANDBOX_PROTOCOL=http \
		"$osb" sandbox create -i debian:bookworm -m "$label" -q id >/dev/null
}
teardown() {
	local id
	for id in $(OPEN_SANDBOX_DOMAIN=$REAL_DOMAIN OPEN_SANDBOX_API_KEY=$REAL_KEY OPEN_SANDBOX_PROTOCOL=http \
		"$osb" sandbox list -m "$label" -q 'items.#.id' 2>/dev/null); do
		OPEN_SANDBOX_DOMAIN=$REAL_DOMAIN OPEN_SANDBOX_API_KEY=$REAL_KEY OPEN_SANDBOX_PROTOCOL=http \
			"$osb" sandbox kill "$id" >/dev/null 2>&1 || true
	done
}
