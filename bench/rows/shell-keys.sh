# Keystroke echo: KEYS (default 200) keys typed one at a time into a shell
# on a pseudo-terminal, each waited for until its echo shows.
KEYS=${KEYS:-200}
title="\`osb shell\`, $KEYS keystrokes echoed"
baseline='a local bash on a pseudo-terminal'
runs=$(((RUNS + 1) / 2))
setup() {
	bench_tool shell/keystroke
	id=$(bench_sandbox -t 60m)
}
run_osb() { "$work/keystroke" -n "$KEYS" -- "$osb" shell "$id"; }
run_baseline() { "$work/keystroke" -n "$KEYS" -- bash --norc --noprofile; }
note() { echo "one key's echo, median and p90: $("$work/keystroke" -n "$KEYS" -- "$osb" shell "$id") (local bash: $("$work/keystroke" -n "$KEYS" -- bash --norc --noprofile))"; }
teardown() { "$osb" sandbox kill "$id"; }
