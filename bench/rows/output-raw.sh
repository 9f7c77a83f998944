# Command output: OUTPUT_MB (default 50) random megabytes in base64, 76
# columns a line, streamed to /dev/null (-o raw; output-json.sh is the
# same row with -o json, one event a line; output-lines.sh the same
# number of bytes in lines of zeros, lines=zeros).
format=${format:-raw}
OUTPUT_MB=${OUTPUT_MB:-50}
if [ "${lines:-}" = zeros ]; then
	title="command output, $((OUTPUT_MB * 27 / 20)) MB in 76-byte lines of zeros, \`-o $format\`"
	script="yes \$(printf %075d 0) | head -c $((OUTPUT_MB * 1350000))"
else
	title="command output, $OUTPUT_MB MB in base64, \`-o $format\`"
	script="head -c $((OUTPUT_MB * 1000000)) /dev/urandom | base64"
fi
baseline='curl: POST /command to the terminal frame'
runs=$(((RUNS + 1) / 2))
setup() {
	id=$(bench_sandbox -t 60m)
	bytes=$("$osb" command run "$id" -o raw -- sh -c "$script" | wc -c)
}
run_osb() { "$osb" command run "$id" -o "$format" -- sh -c "$script"; }
run_baseline() { curl_command "$id" "$script"; }
teardown() { "$osb" sandbox kill "$id"; }
