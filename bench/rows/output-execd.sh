# Server: OUTPUT_MB (default 50) random megabytes in base64 streamed by
# osb server's execd, against the real execd (../shared/peers/opensandbox,
# a process on a loopback port) streaming the same command; curl reads
# both to the terminal frame, so this row compares the two servers.
OUTPUT_MB=${OUTPUT_MB:-50}
title="server: command output, $OUTPUT_MB MB in base64, osb server's execd (curl)"
baseline='the real execd, same command (curl)'
runs=$(((RUNS + 1) / 2))
script="head -c $((OUTPUT_MB * 1000000)) /dev/urandom | base64"
setup() {
	real=${REAL_EXECD:-$root/../shared/peers/opensandbox/execd}
	[ -x "$real" ] || die "the real execd is not at $real (REAL_EXECD=…)"
	id=$(bench_sandbox -t 60m)
	token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
	port=$((20000 + RANDOM % 30000))
	"$real" --port "$port" --access-token "$token" >"$work/execd.log" 2>&1 &
	bench_pids+=($!)
	for _ in $(seq 100); do
		curl -fsS -o /dev/null -H "X-EXECD-ACCESS-TOKEN: $token" "http://127.0.0.1:$port/ping" 2>/dev/null && break
		sleep 0.1
	done
	bytes=$("$osb" command run "$id" -o raw -- sh -c "$script" | wc -c)
}
# real_command: the command on the real execd, its stream on stdout (curl
# is exec'd, so that until_terminal stops curl itself).
real_command() {
	exec curl -sSN -H "X-EXECD-ACCESS-TOKEN: $token" -H 'Content-Type: application/json' \
		-d "{\"command\":\"$script\"}" "http://127.0.0.1:$port/command"
}
run_osb() { curl_command "$id" "$script"; }
run_baseline() { until_terminal real_command; }
teardown() { "$osb" sandbox kill "$id"; }
