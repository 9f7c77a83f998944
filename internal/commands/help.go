package commands

import "github.com/spf13/cobra"

const exitCodesHelp = `osb exits with a code that says what happened:

  0    success
  1    the server reported an error not listed below, or an unexpected failure
  2    usage: a bad flag, argument, value or payload file, found before any request
  3    authentication or permission (HTTP 401, 403)
  4    not found (HTTP 404)
  5    timed out (request timeout, or a ready/resume/wait timeout)
  6    cannot reach the server (refused, DNS, TLS, reset before a response)

'osb command run', 'osb command session run' and 'osb command shell' in the
foreground exit with the remote command's (or shell's) own exit code, and
otherwise:

  124  the remote command hit its --timeout
  125  osb failed before the remote exit code was known
  130  interrupted from the keyboard (Ctrl-C)
  128+n  the remote command was killed by signal n (137: SIGKILL) with no
       --timeout of osb's in play
  141  osb's own output was closed (e.g. piped into head); the remote
       command was stopped
  143, 129  'osb command shell' on a terminal got SIGTERM or SIGHUP: it
       detached, and the remote shell goes on (--session attaches again)

Some results are not failures and exit 0: 'osb sandbox health' on an unhealthy
sandbox (read the output), 'osb config init' when the file already exists, and
a command group run without a subcommand.

Under -o json or -o yaml an error is printed on stderr as an object with
status, message, exit_code and, for server errors, http_status, code and
request_id; stdout only ever holds the result.`

const environmentHelp = `Settings are resolved per key, first set wins: flag, environment, config file,
default. An empty value, or a request timeout of 0, counts as not set.

  OPEN_SANDBOX_API_KEY           --api-key            connection.api_key
  OPEN_SANDBOX_DOMAIN            --domain             connection.domain (default localhost:8080)
  OPEN_SANDBOX_PROTOCOL          --protocol           connection.protocol (default http)
  OPEN_SANDBOX_REQUEST_TIMEOUT   --request-timeout    connection.request_timeout (default 30)
  OPEN_SANDBOX_USE_SERVER_PROXY  --[no-]use-server-proxy  connection.use_server_proxy (default false)
                                 --config             the file (default ~/.opensandbox/config.toml)

  NO_COLOR                       set and not empty: no colour (icons and borders stay);
                                 --no-color or [output] color = false: plain text
  OPEN_SANDBOX_EXECD_ACCESS_TOKEN  sent as X-EXECD-ACCESS-TOKEN to execd when set`

const formattingHelp = `Every command takes -o/--output with the formats it supports.

  table  for people: aligned columns, or key/value rows for one record. On a
         terminal it has borders, icons and colour; piped, it is plain text.
  json   the result as one JSON document (keys in snake_case). Parse this.
  yaml   the same data as YAML, keys sorted.
  raw    bytes as they are: command output, file contents, diagnostics text.

Messages such as "OK: ..." go to stdout in table mode; warnings and errors go
to stderr, as objects under json and yaml.`

func addHelpTopics(root *cobra.Command) {
	for _, t := range []struct{ name, short, long string }{
		{"exit-codes", "What each exit code of osb means", exitCodesHelp},
		{"environment", "Environment variables, flags and config keys", environmentHelp},
		{"formatting", "Output formats and where messages go", formattingHelp},
	} {
		root.AddCommand(&cobra.Command{Use: t.name, Short: t.short, Long: t.long, Annotations: map[string]string{"osb:no-config": ""}})
	}
}
