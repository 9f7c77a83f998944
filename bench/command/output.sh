#!/usr/bin/env bash
# Command output throughput: `osb command run` printing tens of megabytes of
# short lines, against curl reading the same stream, on the same local
# `osb server`, in interleaved pairs.
#
#   bench/command/output.sh                     # 50 MB of random bytes in base64: 67 MB of output
#   SIZE_MB=10 RUNS=3 bench/command/output.sh
#   OSB=/path/to/osb bench/command/output.sh    # an existing binary instead of building one
#
# It builds osb (unless OSB is set), starts `osb server` on a free loopback
# port with a throwaway data dir and creates a sandbox whose command is
#   head -c SIZE_MB MB /dev/urandom | base64       (76-column lines: one event each)
# Then, RUNS times, one of each in turn (medians over the runs):
#   null    the same command with its output to /dev/null inside the
#           sandbox: what the command itself costs, the ceiling;
#   osb     osb command run -o raw, output to /dev/null: the whole process;
#   curl    GET .../endpoints/44772, then POST /command, until the terminal
#           frame has arrived (grep stops reading there): the same work,
#           without decoding a frame.
# For osb and curl it reports the wall time, the output's MB/s, the
# client's CPU time, and the CPU time the server and the sandbox's execd
# (its agent process) spent on the run: output MB per CPU second of those
# two is the figure a loaded machine does not distort. Once each, with
# /usr/bin/time, osb's peak RSS: -o raw and -o json at this size, and -o raw
# at four times the size (it must not grow).
#
# Output: one "name value" line per figure:
#   output_mb                    bytes of output of one run, in MB
#   null_ms                      median wall time of the /dev/null run
#   osb_raw_ms curl_ms ratio     median wall times, and osb/curl
#   osb_mbps curl_mbps           output MB/s from those medians
#   osb_cpu_ms curl_cpu_ms       median client CPU time (user + system)
#   server_cpu_ms_osb server_cpu_ms_curl
#                                median CPU time of osb server + execd per run
#   server_mb_per_cpu_s          output MB per CPU second of server + execd (curl runs)
#   rss_json_mib rss_raw_mib rss_raw_4x_mib
# Everything it creates lives in one temp dir, removed on exit. Needs: bash
# 5, go, curl, grep, GNU time. Numbers from a shared machine are noisy:
# compare ratios, not absolutes.
set -euo pipefail

RUNS=${RUNS:-5}
SIZE_MB=${SIZE_MB:-50}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/bench/lib.sh"
bench_init output

need curl curl
need grep
need /usr/bin/time time
[ -n "${EPOCHREALTIME:-}" ] || die "bash 5 is needed (EPOCHREALTIME)"

bench_osb
bench_server --host-programs

id=$(bench_sandbox -t 30m)

script() { echo "head -c $(($1 * 1000000)) /dev/urandom | base64"; }
cmd=$(script "$SIZE_MB")
bytes=$("$osb" command run "$id" -o raw -- sh -c "$cmd" | wc -c)

# ticks PID...: the CPU time (user + system, clock ticks) the processes used so far.
ticks() { local p t=0; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$t"; }
hz=$(getconf CLK_TCK)
# The sandbox's execd: the server's descendant named osb-sandbox-agent.
agent=""
for p in $(pgrep -f '^osb-sandbox-agent'); do
	q=$p
	while [ "$q" -gt 1 ]; do
		q=$(awk '{print $4}' "/proc/$q/stat" 2>/dev/null || echo 1)
		[ "$q" = "$server_pid" ] && { agent=$p; break 2; }
	done
done
[ -n "$agent" ] || say "no execd process of the sandbox found: its CPU time is left out"
side=("$server_pid" $agent)

# child_cpu_ms: the CPU time (user + system) this shell's finished
# children used so far. `times` runs in this shell, not in a subshell,
# whose children would be others.
child_cpu_ms() {
	times >"$work/times"
	awk 'NR == 2 { split($1, u, "m"); split($2, s, "m"); printf "%d\n", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000 }' "$work/times"
}

# timed NAME CMD...: runs CMD, output dropped; appends to $work/NAME the
# wall time (µs) until CMD ended, or until the terminal frame when CMD
# wrote its time to $work/terminal, the client's CPU time (ms) and the
# server side's (ms).
timed() {
	local name=$1 t0 t1 s0 s1 c0 c1
	shift
	rm -f "$work/terminal"
	s0=$(ticks "${side[@]}")
	child_cpu_ms >"$work/c0"
	t0=$(now_us)
	"$@" >/dev/null
	t1=$(now_us)
	child_cpu_ms >"$work/c1"
	s1=$(ticks "${side[@]}")
	[ -s "$work/terminal" ] && t1=$(cat "$work/terminal")
	c0=$(cat "$work/c0") c1=$(cat "$work/c1")
	echo "$((t1 - t0)) $((c1 - c0)) $(((s1 - s0) * 1000 / hz))" >>"$work/$name"
}

osb_run() { "$osb" command run "$id" -o raw -- sh -c "$cmd"; }
null_run() { "$osb" command run "$id" -o raw -- sh -c "$cmd >/dev/null"; }
# curl_run reads the stream to its end, but its time is taken at the
# terminal frame: execd holds the stream open about a second after it,
# osb does not wait for that.
curl_run() { curl_command "$id" "$cmd"; }

: >"$work/null"; : >"$work/osb"; : >"$work/curl"
for _ in $(seq "$RUNS"); do
	timed null null_run
	timed osb osb_run
	timed curl curl_run
done

# med FILE COLUMN: the median of a column.
med() { awk -v c="$2" '{ print $c }' "$1" | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
mbps() { awk -v b="$bytes" -v us="$1" 'BEGIN { printf "%.0f", b / us }'; }

# rss FORMAT SIZE_MB: osb's peak RSS in MiB for that output.
rss() {
	/usr/bin/time -f %M -o "$work/rss" "$osb" command run "$id" -o "$1" -- sh -c "$(script "$2")" >/dev/null
	awk '{ printf "%.1f", $1 / 1024 }' "$work/rss"
}

osb_us=$(med "$work/osb" 1)
curl_us=$(med "$work/curl" 1)
printf 'output_mb %s\n' "$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')"
printf 'null_ms %s\n' "$(awk -v u="$(med "$work/null" 1)" 'BEGIN { printf "%.1f", u / 1000 }')"
printf 'osb_raw_ms %s\n' "$(awk -v u="$osb_us" 'BEGIN { printf "%.1f", u / 1000 }')"
printf 'curl_ms %s\n' "$(awk -v u="$curl_us" 'BEGIN { printf "%.1f", u / 1000 }')"
printf 'ratio %s\n' "$(awk -v a="$osb_us" -v b="$curl_us" 'BEGIN { printf "%.2f", a / b }')"
printf 'osb_mbps %s\n' "$(mbps "$osb_us")"
printf 'curl_mbps %s\n' "$(mbps "$curl_us")"
printf 'osb_cpu_ms %s\n' "$(med "$work/osb" 2)"
printf 'curl_cpu_ms %s\n' "$(med "$work/curl" 2)"
printf 'server_cpu_ms_osb %s\n' "$(med "$work/osb" 3)"
printf 'server_cpu_ms_curl %s\n' "$(med "$work/curl" 3)"
printf 'server_mb_per_cpu_s %s\n' "$(awk -v b="$bytes" -v ms="$(med "$work/curl" 3)" 'BEGIN { if (ms > 0) printf "%.0f", b / 1000 / ms; else print "n/a" }')"
printf 'rss_json_mib %s\n' "$(rss json "$SIZE_MB")"
printf 'rss_raw_mib %s\n' "$(rss raw "$SIZE_MB")"
printf 'rss_raw_4x_mib %s\n' "$(rss raw $((SIZE_MB * 4)))"
