# SHELL_MB (default 100) MiB of base64 text through `cat` in the sandbox:
# in on stdin, back out on stdout; osb's output is checked.
SHELL_MB=${SHELL_MB:-100}
title="\`osb shell -- cat\`, $SHELL_MB MiB in and out"
baseline='curl POST /files/upload, curl POST /command `cat` to the terminal frame'
runs=$(((RUNS + 1) / 2))
setup() {
	id=$(bench_sandbox -t 60m)
	head -c $((SHELL_MB * 786432)) /dev/urandom | base64 -w 76 >"$work/shell.in"
	bytes=$(stat -c %s "$work/shell.in")
	printf '{"path":"/tmp/in","mode":644}' >"$work/shell.meta"
	"$osb" shell "$id" -- cat <"$work/shell.in" | cmp - "$work/shell.in"
}
run_osb() { "$osb" shell "$id" -- cat <"$work/shell.in"; }
run_baseline() {
	execd_lookup "$id"
	curl -fsS -H "OpenSandbox-Secure-Access: $execd_secret" \
		-F "metadata=@$work/shell.meta;filename=metadata;type=application/json" \
		-F "file=@$work/shell.in;type=application/octet-stream" "$execd/files/upload"
	curl_command "$id" "cat /tmp/in"
}
teardown() { "$osb" sandbox kill "$id"; rm -f "$work/shell.in"; }
