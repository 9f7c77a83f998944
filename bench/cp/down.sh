#!/usr/bin/env bash
# `osb cp` of a tree of many small files out of a sandbox, against curl +
# tar moving the same tree from the same sandbox, in interleaved pairs.
#
#   bench/cp/down.sh                         # 10,000 files of 1 KiB, 5 pairs
#   FILES=2000 SIZE=4096 RUNS=3 bench/cp/down.sh
#   OSB=/path/to/osb bench/cp/down.sh        # an existing binary instead of building one
#
# The tree is made here and put in the sandbox once with `osb cp`. Then:
#   A  osb cp ID:/workspace/small DIR
#   B  curl running `tar -cf` of the tree in the sandbox (execd POST
#      /command), curl downloading that archive (GET /files/download)
#      into `tar -xf` here
# each into an empty DIR (emptied untimed before every run). Prints one
# `row` line (see bench/pairs.sh; A is osb, B curl + tar), after checking
# that osb's copy holds every file. Exit status 1 when anything fails;
# everything lives in one temp dir, removed on exit.
set -euo pipefail

FILES=${FILES:-10000}
SIZE=${SIZE:-1024}
RUNS=${RUNS:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/bench/lib.sh"
. "$root/bench/pairs.sh"
bench_init cpdown

need curl curl
need tar tar
need /usr/bin/time time

bench_osb
bench_server
id=$(bench_sandbox -t 60m)

say "making $FILES files of $SIZE bytes…"
mkdir -p "$work/small"
head -c $((FILES * SIZE)) /dev/urandom | split -a 5 -d -b "$SIZE" - "$work/small/f"
"$osb" cp "$work/small" "$id:/workspace/small" >/dev/null

body=$(curl -fsS -H "OPEN-SANDBOX-API-KEY: $OPEN_SANDBOX_API_KEY" \
	"http://$addr/v1/sandboxes/$id/endpoints/44772?use_server_proxy=false")
ep=$(printf '%s' "$body" | sed -n 's/.*"endpoint":"\([^"]*\)".*/\1/p')
secret=$(printf '%s' "$body" | sed -n 's/.*"OpenSandbox-Secure-Access":"\([^"]*\)".*/\1/p')
printf 'OpenSandbox-Secure-Access: %s\n' "$secret" >"$work/secret.header"
cat >"$work/curl-tar" <<SH
#!/bin/sh
set -e
curl -fsS -o /dev/null -H @$work/secret.header -H 'Content-Type: application/json' \\
	-d '{"command":"tar -cf /tmp/small.tar -C /workspace small"}' http://$ep/command
curl -fsS -H @$work/secret.header "http://$ep/files/download?path=/tmp/small.tar" | tar -xf - -C "\$1"
SH
chmod +x "$work/curl-tar"

"$osb" cp "$id:/workspace/small" "$work/check" >/dev/null
got=$(find "$work/check" -type f | wc -l)
[ "$got" = "$FILES" ] || die "osb copied $got of $FILES files"
rm -rf "$work/check"
mkdir -p "$work/check"
"$work/curl-tar" "$work/check"
got=$(find "$work/check/small" -type f | wc -l)
[ "$got" = "$FILES" ] || die "curl + tar copied $got of $FILES files"

pair_row "cp_down_${FILES}x${SIZE}" "$RUNS" \
	"$osb cp $id:/workspace/small $work/a" \
	"$work/curl-tar $work/b" \
	'rm -rf "$work/a" "$work/b"; mkdir -p "$work/b"'
