#!/usr/bin/env bash
# Shell benchmark: the keystroke echo round trip of `osb shell`, and SIZE_MB
# of data piped through `cat` in a sandbox, on one local `osb server`.
#
#   bench/shell/bench.sh                  # 200 keystrokes, 100 MiB
#   KEYS=500 SIZE_MB=50 bench/shell/bench.sh
#   OSB=/path/to/osb bench/shell/bench.sh   # an existing binary instead of building one
#
# It builds osb (unless OSB is set) and bench/shell/keystroke, starts `osb
# server` on a free loopback port with a throwaway data dir and creates a
# sandbox. Then it measures:
#   keystroke   one key typed into `osb shell` on a pseudo-terminal until its
#               echo is shown (median and p90), beside the same in a local
#               bash on a pseudo-terminal (no network: the floor);
#   pipe        SIZE_MB of base64 text through `osb shell SB -- cat` (in and
#               back out, streamed), and through `osb command run SB -- cat`
#               (stdin), beside the two-step way without stdin: `osb file
#               upload`, then `osb command run SB -- cat FILE`. Each with its
#               wall time, throughput (MiB moved one way per second) and osb's
#               peak RSS; every output is compared with the input.
# Everything it creates lives in one temp dir, removed on exit. Needs: bash,
# go, base64, cmp, /usr/bin/time. Numbers from a shared machine are noisy: compare
# ratios, not absolutes.
set -euo pipefail

KEYS=${KEYS:-200}
SIZE_MB=${SIZE_MB:-100}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/bench/lib.sh"
bench_init shell

need base64
need cmp
need go
need /usr/bin/time time

bench_osb
(cd "$root" && go build -o "$work/keystroke" ./bench/shell/keystroke)

bench_server --host-programs
sb=$(bench_sandbox --timeout 30m)

echo "keystroke echo round trip ($KEYS keys)"
printf '  %-28s %s\n' "osb shell" "$("$work/keystroke" -n "$KEYS" -- "$osb" shell "$sb")"
printf '  %-28s %s\n' "local bash" "$("$work/keystroke" -n "$KEYS" -- bash --norc --noprofile)"

# Text (base64 lines): POST /command carries output as lines of JSON text,
# so binary bytes would not survive the two-step way that is compared.
head -c $((SIZE_MB * 786432)) /dev/urandom | base64 -w 76 >"$work/in"

# timed LABEL CMD...: runs CMD (a shell line) with /usr/bin/time, checks
# $work/out against the input, prints seconds, MiB/s and peak RSS in MiB.
timed() {
	local label=$1 start end secs rss
	shift
	rm -f "$work/out"
	start=$EPOCHREALTIME
	/usr/bin/time -f %M -o "$work/rss" bash -c "$*"
	end=$EPOCHREALTIME
	cmp -s "$work/in" "$work/out" || { echo "bench: $label: the output differs from the input" >&2; exit 1; }
	secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
	rss=$(awk '{ printf "%.1f", $1 / 1024 }' "$work/rss")
	printf '  %-28s %6s s  %7s MiB/s  peak RSS %s MiB\n' "$label" "$secs" \
		"$(awk -v m="$SIZE_MB" -v s="$secs" 'BEGIN { printf "%.1f", m / s }')" "$rss"
}

echo "$SIZE_MB MiB through cat"
timed "osb shell -- cat" "'$osb' shell '$sb' -- cat <'$work/in' >'$work/out'"
timed "osb command run -- cat" "'$osb' command run '$sb' -- cat <'$work/in' >'$work/out'"
# The two steps without stdin; the larger of the two RSS figures is the
# second step's (the upload's is printed by the transfer bench).
timed "file upload + command run" "'$osb' file upload '$sb' '$work/in' /tmp/in >/dev/null && '$osb' command run '$sb' -o raw -- cat /tmp/in >'$work/out' </dev/null"
