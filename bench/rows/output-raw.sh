# Command output: OUTPUT_MB (default 50) random megabytes in base64, 76
# columns a line, streamed to /dev/null (-o raw; output-json.sh is the
# same row with -o json, one event a line).
format=${format:-raw}
OUTPUT_MB=${OUTPUT_MB:-50}
title="command output, $OUTPUT_MB MB in base64, \`-o $format\`"
baseline='curl: POST /command to the terminal frame'
runs=$(((RUNS + 1) / 2))
script="head -c $((OUTPUT_MB * 1000000)) /dev/urandom | base64"
setup() {
	id=$(bench_sandbox -t 60m)
	bytes=$("$osb" command run "$id" -o raw -- sh -c "$script" | wc -c)
}
run_osb() { "$osb" command run "$id" -o "$format" -- sh -c "$script"; }
run_baseline() { curl_command "$id" "$script"; }
teardown() { "$osb" sandbox kill "$id"; }
