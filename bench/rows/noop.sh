# The smallest request: one page of an empty list.
title='no-op request (`sandbox list -o json`)'
baseline='curl GET /v1/sandboxes'
runs=$((RUNS * 4))
run_osb() { "$osb" sandbox list -o json; }
run_baseline() { curl -fsS -H "OPEN-SANDBOX-API-KEY: $OPEN_SANDBOX_API_KEY" "http://$OPEN_SANDBOX_DOMAIN/v1/sandboxes"; }
