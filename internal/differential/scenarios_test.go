package differential

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// create is the first step of most scenarios: a sandbox of the image both
// servers know (the real stack tags its one local image with this name),
// saved as {sb}.
func create(extra string) step {
	return step{osb: words("sandbox create -i debian:bookworm -m scenario={run} -q id " + extra), save: "sb"}
}

func o(line string) step { return step{osb: words(line)} }

// words splits a command line as a shell would: at spaces, except inside
// single quotes.
func words(line string) []string {
	var out []string
	var cur strings.Builder
	quoted, started := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, started = !quoted, true
		case r == ' ' && !quoted:
			if started {
				out = append(out, cur.String())
				cur.Reset()
				started = false
			}
		default:
			cur.WriteRune(r)
			started = true
		}
	}
	if started {
		out = append(out, cur.String())
	}
	return out
}

// until repeats an osb command line until its output matches re.
func until(line, re string) step { return step{osb: words(line), until: re} }

// The same pseudo-random bytes on both sides.
func binaryInput(n int) func() []byte {
	return func() []byte {
		r := rand.New(rand.NewPCG(1, 2))
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
}

// scenarios is what a user does with osb, each a list of command lines.
func scenarios() []scenario {
	return []scenario{
		{name: "sandbox-lifecycle", steps: []step{
			create("-e GREETING=hello -m team=diff --resource cpu=500m --resource memory=512Mi -t 30m"),
			o("sandbox get {sb} -o json"),
			o("command run {sb} -- sh -c 'echo $GREETING'"),
			o("sandbox list -m scenario={run} -o json"),
			o("sandbox list -m scenario={run} -m team=diff -s running -q items.#.metadata"),
			o("sandbox list -m scenario={run} -s paused -o json"),
			o("sandbox list --all -m scenario={run} -q items.#.status.state"),
			o("sandbox list -m scenario={run} --page-size 1 --page 2 -o json"),
			o("sandbox renew {sb} -t 1h -o json"),
			o("sandbox health {sb}"),
			o("sandbox metrics {sb} -q @keys"),
			{name: "endpoint", osb: words("sandbox endpoint {sb} -p 8000 -o json")},
			o("sandbox kill {sb}"),
			until("sandbox get {sb} -q status.state", "^$"),
			o("sandbox kill {sb}"),
		}},
		{name: "sandbox-pause-resume", steps: []step{
			create(""),
			o("sandbox pause {sb}"),
			until("sandbox get {sb} -q status.state", "Paused"),
			o("sandbox get {sb} -q status.reason"),
			{name: "while-paused", osb: words("command run {sb} -- echo while-paused")},
			o("sandbox pause {sb}"),
			o("sandbox resume {sb}"),
			o("sandbox get {sb} -q status.state"),
			o("command run {sb} -- echo resumed"),
			o("sandbox resume {sb}"),
		}},
		{name: "entrypoint-crashes", steps: []step{
			create("--skip-health-check --entrypoint sh --entrypoint -c --entrypoint 'echo started; echo giving-up >&2; exit 3'"),
			until("sandbox get {sb} -q status.state", "Failed|Terminated"),
			o("sandbox get {sb} -q status"),
			o("sandbox list -m scenario={run} -s failed -q items.#.status.reason"),
			o("diagnostics events {sb} --scope runtime"),
			{name: "logs", osb: words("diagnostics logs {sb} --scope container"), filter: grep("giving-up")}, // its stderr: Docker keeps no order between the two streams
			{name: "command", osb: words("command run {sb} -- echo hello")},
			{name: "health", osb: words("sandbox health {sb}")},
		}},
		{name: "entrypoint-exits", steps: []step{
			create("--skip-health-check --entrypoint true"),
			until("sandbox get {sb} -q status.state", "Failed|Terminated"),
			o("sandbox get {sb} -q status"),
			o("diagnostics events {sb} --scope runtime"),
		}},
		{name: "sandbox-errors", steps: []step{
			o("sandbox get 00000000-0000-0000-0000-000000000000"),
			o("sandbox get 00000000-0000-0000-0000-000000000000 -o json"),
			o("sandbox kill 00000000-0000-0000-0000-000000000000"),
			o("sandbox renew 00000000-0000-0000-0000-000000000000 -t 1h"),
			o("diagnostics logs 00000000-0000-0000-0000-000000000000 --scope container"),
			o("sandbox list -s bogus -m scenario={run} -o json"),
			create("-t none"),
			o("sandbox get {sb} -q expires_at"),
			o("sandbox renew {sb} -t 1h"),
		}},
		{name: "command-run", steps: []step{
			create(""),
			o("command run {sb} -- echo hello"),
			o("command run {sb} -- sh -c 'echo out; echo err >&2; exit 3'"),
			o("command run {sb} -o json -- sh -c 'echo out; echo err >&2; exit 3'"),
			o("command run {sb} -- printf 'h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93\\n\\n\\n  indented\\nlast'"),
			o("command run {sb} --argv -- printf '%s|' 'two words' '$HOME' ''"),
			o("command run {sb} -w /tmp -e X=1 -- sh -c 'pwd; echo X=$X'"),
			o("command run {sb} -t 2s -- sleep 30"),
			{name: "1mib", osb: words("command run {sb} -- sh -c 'head -c 1048576 /dev/zero | tr \"\\0\" x | fold -w 1000'"), filter: digest},
			// Piped input, then the same asked for with -i (docs/scripting.md):
			// the real execd has no way to end a command's input.
			{name: "stdin-given", osb: words("command run {sb} -- wc -c"), stdin: "hello\n", timeout: stdinWait},
			{name: "stdin-asked", osb: words("command run -i {sb} -- wc -c"), stdin: "hello\n", timeout: stdinWait},
			{name: "stdin-not-given", osb: words("command run {sb} -- sh -c 'cat; echo done'"), timeout: stdinWait},
			o("command run {sb} -- sh -c 'exit 130'"),
		}},
		{name: "command-background", steps: []step{
			create(""),
			{osb: words("command run -d {sb} -q execution_id -- sh -c 'echo one; echo two >&2; exit 4'"), save: "job"},
			until("command status {sb} {job} -q running", "false"),
			o("command status {sb} {job} -o json"),
			o("command logs {sb} {job}"),
			o("command logs {sb} {job} -o json"),
			{osb: words("command run -d {sb} -q execution_id -- sleep 300"), save: "sleeper"},
			o("command status {sb} {sleeper} -q running"),
			o("command interrupt {sb} {sleeper}"),
			until("command status {sb} {sleeper} -q running", "false"),
			o("command status {sb} {sleeper} -q exit_code"),
			o("command status {sb} 00000000-0000-0000-0000-000000000000"),
		}},
		{name: "command-session", steps: []step{
			create(""),
			{osb: words("command session create {sb} -w /tmp/work -q id"), save: "session"},
			o("command session run {sb} {session} -- pwd"),
			o("command session run {sb} {session} -- export KEPT=yes"),
			o("command session run {sb} {session} -- cd /"),
			o("command session run {sb} {session} -- sh -c 'echo $KEPT; pwd'"),
			o("command session run {sb} {session} -- printf 'a\\n\\nb\\n'"),
			o("command session run {sb} {session} -- false"),
			o("command session delete {sb} {session}"),
			o("command session run {sb} {session} -- pwd"),
		}},
		{name: "shell-pipe", steps: []step{
			create(""),
			{name: "stdin-to-eof", osb: words("command shell {sb} -- sh -c 'cat; echo end'"), stdin: "one\ntwo\n", timeout: stdinWait},
			{name: "8mb-binary", osb: words("command shell {sb} -- sh -c 'cat >/tmp/in; wc -c </tmp/in; sha256sum </tmp/in'"), input: binaryInput(8 << 20), timeout: stdinWait},
			{name: "seq", osb: words("command shell {sb} -- seq 1 200000"), filter: digest},
			{name: "apart", osb: words("command shell {sb} -- sh -c 'echo out; echo err >&2; exit 5'")},
			{name: "early-exit", osb: words("command shell {sb} -- sh -c 'exit 3'"), input: binaryInput(3 << 20), timeout: stdinWait},
		}},
		{name: "shell-terminal", steps: []step{
			create(""),
			{name: "terminal", osb: words("command shell {sb} -- sh -c 'stty size; printf \"name> \"; read a; echo \"got [$a]\"; printf \"resize> \"; read b; stty size; trap \"echo INT\" INT; echo sleeping; sleep 10; exit 7'"),
				tty: []key{{expect: "name> ", send: "world\r"}, {expect: "resize> ", cols: 100, rows: 30, send: "\r"}, {expect: "sleeping", send: "\x03"}}},
		}},
		{name: "files", steps: []step{
			create(""),
			o("file write {sb} /workspace/a.txt -c 'line one\nline two\n'"),
			o("file cat {sb} /workspace/a.txt"),
			{osb: words("file write {sb} /workspace/b.txt --mode 600"), stdin: "from stdin\n"},
			o("file info {sb} /workspace/a.txt /workspace/b.txt -q #.mode"),
			o("file mkdir {sb} /workspace/d/e"),
			o("file mv {sb} /workspace/b.txt /workspace/d/e/b.txt"),
			o("file replace {sb} /workspace/a.txt --old two --new 2"),
			o("file cat {sb} /workspace/a.txt"),
			o("file chmod {sb} /workspace/a.txt --mode 640"),
			o("file info {sb} /workspace/a.txt -q mode"),
			o("file search {sb} /workspace -p '*.txt' -q #.path"),
			o("file ls {sb} /workspace -q #.path"),
			o("file upload {sb} local.txt /workspace/up.txt"),
			o("file download {sb} /workspace/up.txt down.txt"),
			{host: words("cat down.txt")},
			o("file rm {sb} /workspace/up.txt"),
			o("file cat {sb} /workspace/up.txt"),
			o("file rmdir {sb} /workspace/d"),
			o("file ls {sb} /workspace/d"),
			o("file cat {sb} /workspace/missing"),
			o("file rm {sb} /workspace/missing"),
		}, local: func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "local.txt"), []byte("uploaded\n"), 0o644)
		}},
		{name: "cp", steps: []step{
			create(""),
			o("cp tree {sb}:/workspace/tree"),
			{osb: words("command run {sb} -- sh -c 'cd /workspace/tree && find . | sort && stat -c \"%n %a %s %Y\" a.txt sub/x.sh sub empty && readlink link'"), filter: mtimeKept},
			o("cp {sb}:/workspace/tree back"),
			{host: words("sh -c 'cd back && find . | sort && stat -c \"%n %a %s %Y\" a.txt sub/x.sh sub empty && readlink link'"), filter: mtimeKept},
			o("cp {sb}:/workspace/tree/a.txt one.txt"),
			{host: words("cat one.txt")},
			{osb: words("cp {sb}:/workspace/tree -"), filter: tarNames},
			o("cp {sb}:/workspace/nothing here"),
		}, local: makeTree},
		{name: "port-forward", steps: []step{
			create(""),
			o("file write {sb} /workspace/site/hello.txt -c 'hello through the forward\n'"),
			o("command run -d {sb} -o json -- python3 -m http.server 8000 --bind 127.0.0.1 -d /workspace/site"),
			until("command run {sb} -- python3 -c 'import urllib.request as u; print(u.urlopen(\"http://127.0.0.1:8000/hello.txt\").read().decode())'", "hello"),
			{name: "forward", osb: words("sandbox port-forward {sb} 0:8000"), background: true, ready: `127\.0\.0\.1:(\d+)`, save: "port"},
			{host: words("curl -s -i http://127.0.0.1:{port}/hello.txt"), filter: grep(`^HTTP/|^Content-Length|hello`)},
			{host: words("curl -s -o /dev/null -w %{http_code} http://127.0.0.1:{port}/missing")},
		}},
		{name: "diagnostics", steps: []step{
			create("--entrypoint sh --entrypoint -c --entrypoint 'echo booted; exec sleep infinity'"),
			// osb server's create can answer before the entrypoint has printed.
			{osb: words("diagnostics logs {sb} --scope container"), until: "booted", filter: grep("booted")},
			{name: "logs", osb: words("diagnostics logs {sb} --scope container"), filter: grep("booted")},
			{name: "logs-all", osb: words("diagnostics logs {sb} --scope all"), filter: grep("booted")},
			o("diagnostics logs {sb} --scope runtime"),
			o("diagnostics events {sb} --scope container"),
			{osb: words("diagnostics events {sb} --scope runtime"), filter: grep("^Status:|^Event:")},
			{name: "devops-logs", osb: words("devops logs {sb}"), filter: grep("booted")},
			{osb: words("devops events {sb}"), filter: grep("^Status:|^Event:")},
			{osb: words("devops inspect {sb}"), filter: grep("^Status:|^Running:|^Paused:|^Exit Code:")},
			{name: "summary", osb: words("devops summary {sb}"), filter: grep(`^\S+ booted$|^Status:`)},
		}},
		{name: "snapshots", steps: []step{
			create(""),
			o("file write {sb} /workspace/state.txt -c 'before the snapshot\n'"),
			{name: "create", osb: words("snapshot create {sb} --name diff --wait -q id"), save: "snap"},
			{name: "get", osb: words("snapshot get {snap} -o json")},
			{name: "list", osb: words("snapshot list --sandbox-id {sb} -o json")},
			{osb: words("sandbox create --snapshot-id {snap} -m scenario={run} -q id"), save: "sb2"},
			o("command run {sb2} -- cat /workspace/state.txt"),
			o("sandbox get {sb2} -q snapshot_id"),
			o("sandbox kill {sb2}"),
			o("snapshot delete {snap}"),
			until("snapshot get {snap} -q status.state", "^$"),
		}},
		// One named volume, a directory of its own per run (both servers
		// make a missing subPath), mounted twice: writable and read-only.
		{name: "volumes", steps: []step{
			{host: []string{"sh", "-c", `printf '[{"name":"data","pvc":{"claimName":"osb-differential"},"mountPath":"/data","subPath":"%s"},{"name":"ro","pvc":{"claimName":"osb-differential"},"mountPath":"/ro","readOnly":true,"subPath":"%s"}]' {run} {run} >volumes.json`}},
			create("--volumes-file volumes.json"),
			o("command run {sb} -- sh -c 'echo kept >/data/kept.txt; cat /ro/kept.txt; echo no >/ro/no.txt; echo $?'"),
			o("sandbox kill {sb}"),
			{osb: words("sandbox create -i debian:bookworm -m scenario={run} -q id --volumes-file volumes.json"), save: "sb2"},
			o("command run {sb2} -- sh -c 'find /data /ro | sort; cat /data/kept.txt'"),
			o("sandbox kill {sb2}"),
			{name: "host-path", host: []string{"sh", "-c", `printf '[{"name":"h","host":{"path":"/tmp"},"mountPath":"/h"}]' >host.json`}},
			o("sandbox create -i debian:bookworm -m scenario={run} --volumes-file host.json"),
			{host: []string{"sh", "-c", `printf '[{"name":"Bad_Name","pvc":{"claimName":"x"},"mountPath":"/x"}]' >bad.json`}},
			o("sandbox create -i debian:bookworm -m scenario={run} --volumes-file bad.json"),
			{host: []string{"sh", "-c", `printf '[{"name":"a","pvc":{"claimName":"x"},"mountPath":"relative"}]' >rel.json`}},
			o("sandbox create -i debian:bookworm -m scenario={run} --volumes-file rel.json"),
		}},
		// The key syscalls, which Docker's default seccomp profile refuses
		// in every container and osb server's init in every sandbox:
		// add_key, request_key and keyctl (x86_64 numbers) as perl (in
		// every Debian image, perl-base) calls them.
		{name: "key-syscalls", steps: []step{
			create(""),
			o("command run {sb} -- perl -e '" + keyCalls + "'"),
		}},
		// execd killed from inside the sandbox, as the OOM killer or a
		// crash would end it: the command that killed it, then what the
		// sandbox says and does a moment later, and once more after a
		// command. The sleep lets the command's id reach osb before its
		// execd dies.
		{name: "execd-killed", steps: []step{
			create(""),
			{name: "kill", osb: words("command run {sb} -- sh -c 'sleep 2; " + killExecd + "'")},
			{name: "status", osb: words("sandbox get {sb} -o json")},
			{name: "command", osb: words("command run {sb} -- echo alive")},
			{name: "health", osb: words("sandbox health {sb}")},
			{name: "status-after", osb: words("sandbox get {sb} -o json")},
		}},
		{name: "platform-limits", steps: []step{
			create(""),
			{name: "egress", osb: words("egress get {sb}")},
			{name: "templates", osb: words("template list")},
		}},
		{name: "mcp", needs: "mcp", steps: []step{
			{mcp: []string{
				`{"tool": "sandbox_create", "args": {"image": "debian:bookworm"}}`,
				`{"tool": "sandbox_healthcheck", "args": {"sandbox_id": "$sid"}}`,
				`{"tool": "sandbox_get_info", "args": {"sandbox_id": "$sid"}}`,
				`{"tool": "sandbox_renew", "args": {"sandbox_id": "$sid", "timeout_seconds": 7200}}`,
				`{"tool": "command_run", "args": {"sandbox_id": "$sid", "command": "echo one; echo; echo two >&2; exit 4"}}`,
				`{"tool": "file_write", "args": {"sandbox_id": "$sid", "path": "/workspace/m.txt", "content": "from mcp\n"}}`,
				`{"tool": "file_read", "args": {"sandbox_id": "$sid", "path": "/workspace/m.txt"}}`,
				`{"tool": "file_search", "args": {"sandbox_id": "$sid", "path": "/workspace", "pattern": "*.txt"}}`,
				`{"tool": "file_replace_contents", "args": {"sandbox_id": "$sid", "entries": [{"path": "/workspace/m.txt", "old_content": "mcp", "new_content": "MCP"}]}}`,
				`{"tool": "file_create_directories", "args": {"sandbox_id": "$sid", "entries": [{"path": "/workspace/a/b", "mode": 700}]}}`,
				`{"tool": "file_delete_directories", "args": {"sandbox_id": "$sid", "paths": ["/workspace/a"]}}`,
				`{"tool": "file_move", "args": {"sandbox_id": "$sid", "entries": [{"source": "/workspace/m.txt", "destination": "/workspace/n.txt"}]}}`,
				`{"tool": "file_delete", "args": {"sandbox_id": "$sid", "paths": ["/workspace/n.txt"]}}`,
				`{"tool": "file_read", "args": {"sandbox_id": "$sid", "path": "/workspace/n.txt"}}`,
				`{"tool": "sandbox_kill", "args": {"sandbox_id": "$sid"}}`,
			}},
		}},
	}
}

// keyCalls prints what add_key, request_key and keyctl return and their
// errno, in perl (no single quotes: the scenario's line holds it in them).
const keyCalls = `my ($t, $d, $p) = ("user", "osb-differential", "x");` +
	` my $r = syscall(248, $t, $d, $p, 1, -3); printf("add_key: %d errno %d\n", $r, $! + 0);` +
	` $r = syscall(249, $t, $d, 0, 0); printf("request_key: %d errno %d\n", $r, $! + 0);` +
	` $r = syscall(250, 0, -3, 0); printf("keyctl: %d errno %d\n", $r, $! + 0);`

// killExecd sends SIGKILL to the sandbox's execd, found by its program's
// name in /proc: the real one is /opt/opensandbox/execd, osb server's
// osb-sandbox-agent. The brackets keep the shell that runs it from
// matching itself.
const killExecd = `for p in /proc/[0-9]*; do read -r a <$p/cmdline; case $a in */exec[d]*|osb-sandbox-agen[t]*) kill -9 ${p#/proc/};; esac; done 2>/dev/null`

// makeTree is the local tree the cp scenario copies: modes, an mtime in
// the past, a symlink and an empty directory.
func makeTree(dir string) error {
	root := filepath.Join(dir, "tree")
	for _, d := range []string{"sub", "empty"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	if err := os.Chmod(filepath.Join(root, "empty"), 0o700); err != nil {
		return err
	}
	files := map[string]os.FileMode{"a.txt": 0o644, "sub/x.sh": 0o755}
	for name, mode := range files {
		p := filepath.Join(root, name)
		if err := os.WriteFile(p, []byte("content of "+name+"\n"), mode); err != nil {
			return err
		}
		if err := os.Chmod(p, mode); err != nil {
			return err
		}
		if err := os.Chtimes(p, past, past); err != nil {
			return err
		}
	}
	if err := os.Symlink("a.txt", filepath.Join(root, "link")); err != nil {
		return err
	}
	for _, d := range []string{"sub", "empty", "."} {
		if err := os.Chtimes(filepath.Join(root, d), past, past); err != nil {
			return err
		}
	}
	return nil
}

// stdinWait bounds a command that reads its stdin to the end: where the
// input never ends, the step shows a hang, not the whole suite.
const stdinWait = 45 * time.Second

// past is the mtime of every file of the cp scenario's tree.
var past = time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)

// mtimeKept shows, in `stat -c %Y` output, whether an mtime is the tree's
// (past) or not: a copy made now has a time that differs between runs.
func mtimeKept(s string) string {
	want := fmt.Sprint(past.Unix())
	return epochRE.ReplaceAllStringFunc(s, func(m string) string {
		if m == want {
			return "<kept>"
		}
		return "<not kept>"
	})
}

var epochRE = regexp.MustCompile(`\b1\d{9}\b`)

// tarNames lists the entries of a tar stream, as `tar -t` would.
func tarNames(s string) string {
	return listTar(s)
}
