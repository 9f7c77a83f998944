# A short command: start-up, endpoint lookup, POST /command, the output,
# the terminal frame.
title='`command run -o raw -- echo hi`'
baseline='curl: endpoint, POST /command to the terminal frame'
runs=$((RUNS * 2))
setup() {
	id=$(bench_sandbox -t 60m)
	[ "$("$osb" command run "$id" -o raw -- echo hi)" = hi ]
}
run_osb() { "$osb" command run "$id" -o raw -- echo hi; }
run_baseline() { curl_command "$id" "echo hi"; }
teardown() { "$osb" sandbox kill "$id"; }
