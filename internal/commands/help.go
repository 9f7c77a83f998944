package commands

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

const exitCodesHelp = `osb exits with a code that says what happened:

  0    success
  1    the server reported an error not listed below, or an unexpected failure
  2    usage: a bad flag, argument, value or payload file, found before any request
  3    authentication or permission (HTTP 401, 403)
  4    not found (HTTP 404)
  5    timed out (request timeout, a stream or transfer idle too long, or a
       ready/resume/wait timeout)
  6    cannot reach the server (refused, DNS, TLS, reset before a response)

'osb command run', 'osb command session run' and 'osb command shell' in the
foreground exit with the remote command's (or shell's) own exit code, and so
does 'osb command logs --follow' once the background command ended (the
official client has no --follow; its 'command logs' exits 0). Otherwise:

  124  the remote command hit its --timeout
  125  osb failed before the remote exit code was known
  130  interrupted from the keyboard (Ctrl-C); the remote command is stopped
  129, 143  osb got SIGHUP (its terminal closed) or SIGTERM: the remote
       command is stopped as for Ctrl-C (other commands stop too, with
       the same codes)
  128+n  the remote command was killed by signal n (137: SIGKILL) with no
       --timeout of osb's in play
  141  osb's own output was closed (e.g. piped into head); the remote
       command was stopped
  143, 129  'osb command shell' on a terminal got SIGTERM or SIGHUP: it
       detached, and the remote shell goes on (--session attaches again)

'osb code run' exits 0 when the code ran without error, and otherwise:

  1    the code raised an error (its traceback is on stderr), or its kernel
       died (the context lost its state)
  125  osb could not run the code: the server failed (e.g. the sandbox has
       no Jupyter) or the stream broke
  130  interrupted from the keyboard (Ctrl-C); the kernel is interrupted and
       the context keeps its state
  2, 3, 4  usage, authentication, an unknown sandbox or context, as above

Some results are not failures and exit 0: 'osb sandbox health' on an unhealthy
sandbox (read the output), 'osb config init' when the file already exists, and
a command group run without a subcommand (it prints its help, as 'osb help
GROUP' does). A word that names no command, after osb, a group or 'osb help',
is a usage error (2), and the message suggests the nearest name ("Did you
mean ...?"). osb run with no command at all prints its help and exits 2.

Under -o json or -o yaml an error is printed on stderr as an object with
status, message, exit_code and, for server errors, http_status, code and
request_id; stdout only ever holds the result.`

const environmentHelp = `Settings are resolved per key, first set wins: flag, environment, config file,
default. An empty value, or a request timeout of 0, counts as not set.

  OPEN_SANDBOX_API_KEY           --api-key            connection.api_key
  OPEN_SANDBOX_DOMAIN            --domain             connection.domain (default localhost:8080)
  OPEN_SANDBOX_PROTOCOL          --protocol           connection.protocol (default http)
  OPEN_SANDBOX_REQUEST_TIMEOUT   --request-timeout    connection.request_timeout (default 30)
  OPEN_SANDBOX_IDLE_TIMEOUT      --idle-timeout       connection.idle_timeout (default 60)
  OPEN_SANDBOX_USE_SERVER_PROXY  --[no-]use-server-proxy  connection.use_server_proxy (default false)
                                 --config             the file (default ~/.opensandbox/config.toml)

  NO_COLOR                       set and not empty: no colour (icons and borders stay);
                                 --no-color or [output] color = false: plain text
  OPEN_SANDBOX_EXECD_ACCESS_TOKEN  sent as X-EXECD-ACCESS-TOKEN to execd when set
  OSB_MCP_TOKEN                  the bearer token 'osb mcp --http' requires (else
                                 --token-file, else ~/.opensandbox/mcp-token)`

const formattingHelp = `Every command takes -o/--output with the formats it supports.

  table  for people: aligned columns, or key/value rows for one record. On a
         terminal it has borders, icons and colour (plain with --no-color),
         and fits the terminal's width: list cells are cut short with …
         (never ids, paths, names or statuses), record values wrap; too
         narrow for the table, each item is a block of KEY value lines.
         Piped, it is plain text, never cut.
  json   the result as one JSON document (keys in snake_case). Parse this.
  yaml   the same data as YAML, keys sorted.
  raw    file contents and diagnostics text as the bytes they are; command
         output as lines, one per execd event, each ending in a newline.

Values are printed as the official client prints them: timestamps to the
microsecond (six digits, or none when they are zero), Z for UTC, another
offset kept, a text that is not a time as it came; numbers keep their type.
A time osb computes itself (renew, when the server does not say) is RFC 3339
in UTC.

Messages such as "OK: ..." go to stdout in table mode; warnings, notes (such
as "more pages exist") and errors go to stderr, as objects under json and
yaml (notes are left out there: the data says it).

Picking values out: -q, --jq and --template

Every command with json output also takes -q/--query PATH, --jq EXPRESSION
and --template TEXT. Each reads the document -o json prints, so -o may be
left out; any -o other than json is a usage error (exit 2), and so is giving
two of them. Errors are then printed as json objects on stderr.

-q takes a gjson path (https://github.com/tidwall/gjson, "GJSON Path
Syntax"): keys joined by dots, # for a list's length or, followed by a key,
for that key of every item, #(...) to pick items. A string prints as plain
text, a number, true, false or null as JSON, a list of such values one per
line, anything else as indented JSON.

--jq takes jq's language (as gh's --jq does; osb runs it with gojq, no jq
needed): each result prints on its own line, a string as plain text,
anything else as JSON. A null that comes from a key that is not in the
output is an error, as for -q; a computed null prints "null".

For both, a syntax error is exit 2 before any request, and the message
shows the same query in the other syntax when it has one; a path that
matches nothing in the output is exit 2 after it, naming the keys there are.

  id=$(osb sandbox create -i python:3.11 -q id)
  osb sandbox get "$id" -q status.state          # --jq .status.state
  osb sandbox list -q 'items.#.id'               # --jq '.items[].id'
  osb sandbox list -q 'items.#(status.state=="Running")#.id'
  osb sandbox list --jq '.items[] | select(.status.state == "Running") | .id'
  osb sandbox list -q pagination.total_items
  osb command run "$id" -o json -q exit_code -- make test

--template takes a Go text/template (https://pkg.go.dev/text/template) run
over the decoded document; a key that is not there is an error. Besides
Go's own functions it has:

  json VALUE              VALUE as compact JSON (object keys sorted)
  table LIST KEY...       an aligned table of those keys of each item
  tablerow VALUE...       one row of a table that tablerender prints aligned
  tablerender
  timeago TIME            "5 minutes ago" for an RFC 3339 time
  join SEP LIST           the items of LIST joined by SEP

  osb sandbox list --template '{{range .items}}{{.id}} {{.status.state}}{{"\n"}}{{end}}'
  osb sandbox list --template '{{table .items "id" "created_at"}}'
  osb sandbox get "$id" --template '{{.id}} expires {{timeago .expires_at}}{{"\n"}}'

'osb sandbox create' has its own --template (the template to create from):
there the Go template flag is --output-template.`

func addHelpTopics(root *cobra.Command) {
	for _, t := range []struct{ name, short, long string }{
		{"exit-codes", "What each exit code of osb means", exitCodesHelp},
		{"environment", "Environment variables, flags and config keys", environmentHelp},
		{"formatting", "Output formats and where messages go", formattingHelp},
	} {
		root.AddCommand(&cobra.Command{Use: t.name, Short: t.short, Long: t.long, Annotations: map[string]string{"osb:no-config": ""}})
	}
}

// strictHelp makes `osb help WORDS` behave like the command line WORDS
// would: help for a command or a topic, exit 0; for words that name none,
// a usage error (exit 2) that suggests the nearest name, as an unknown
// command gets.
func strictHelp(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() != "help" {
			continue
		}
		c.Run = nil
		c.RunE = func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return cmdutil.UnknownCommand(cmd, rest[0], "help topic")
			}
			cmd.InitDefaultHelpFlag()
			cmd.InitDefaultVersionFlag()
			return cmd.Help()
		}
	}
}
