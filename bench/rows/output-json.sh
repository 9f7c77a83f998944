# Command output as JSON lines (one event a line): OUTPUT_MB (default 50)
# random megabytes in base64, 76 columns a line, to /dev/null.
OUTPUT_MB=${OUTPUT_MB:-50}
title="command output, $OUTPUT_MB MB in base64, \`-o json\`"
baseline='curl: POST /command to the terminal frame'
runs=$(((RUNS + 1) / 2))
script="head -c $((OUTPUT_MB * 1000000)) /dev/urandom | base64"
setup() {
	id=$(bench_sandbox -t 60m)
	bytes=$("$osb" command run "$id" -o raw -- sh -c "$script" | wc -c)
}
run_osb() { "$osb" command run "$id" -o json -- sh -c "$script"; }
run_baseline() { curl_command "$id" "$script"; }
teardown() { "$osb" sandbox kill "$id"; }
