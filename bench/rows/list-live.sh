# `sandbox list --all` over LIST_SANDBOXES (default 200) live sandboxes of
# osb server (each a process tree of its own, hence not more).
LIST_SANDBOXES=${LIST_SANDBOXES:-200}
title="\`sandbox list --all -o json\`, $LIST_SANDBOXES live sandboxes"
baseline='one curl fetching every page of 200'
setup() {
	local body='{"image":{"uri":"bench"},"entrypoint":["sleep","infinity"],"resourceLimits":{"cpu":"1","memory":"64Mi"},"timeout":3600}'
	seq "$LIST_SANDBOXES" | xargs -P 8 -I{} curl -fsS -o /dev/null -H "OPEN-SANDBOX-API-KEY: $OPEN_SANDBOX_API_KEY" \
		-H 'Content-Type: application/json' -d "$body" "http://$OPEN_SANDBOX_DOMAIN/v1/sandboxes"
	pages=$(((LIST_SANDBOXES + 199) / 200))
}
run_osb() { "$osb" sandbox list --all -o json; }
run_baseline() {
	curl -fsS -H "OPEN-SANDBOX-API-KEY: $OPEN_SANDBOX_API_KEY" "http://$OPEN_SANDBOX_DOMAIN/v1/sandboxes?pageSize=200&page=[1-$pages]"
}
note() { echo "$("$osb" sandbox list --all -q 'items.#') sandboxes listed"; }
teardown() { "$osb" sandbox list --all -q 'items.#.id' | tr -d '[]",' | xargs -r "$osb" sandbox kill >/dev/null; }
