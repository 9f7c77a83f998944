package agentconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Entry is the MCP server entry written into an agent's configuration: a
// stdio server started as Command Args.
type Entry struct {
	Name    string
	Command string
	Args    []string
}

// Install outcomes, as `osb skills install` names them.
const (
	StatusInstalled      = "installed"
	StatusUpdated        = "updated"
	StatusAlreadyPresent = "already_present"
)

type configFormat int

const (
	claudeFormat     configFormat = iota // {"mcpServers": {name: {"type": "stdio", ...}}}
	mcpServersFormat                     // {"mcpServers": {name: {"command", "args"}}}
	vscodeFormat                         // {"servers": {name: {"type": "stdio", ...}}}
	opencodeFormat                       // {"mcp": {name: {"type": "local", "command": [...]}}}
	codexFormat                          // [mcp_servers.name] in TOML
)

// Install writes e into the agent configuration file at path, keeping every
// other entry and setting. It returns what it did; a file it cannot read as
// the format it expects is left untouched and the error says so.
func (a Agent) Install(path string, e Entry) (string, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	var updated []byte
	var existed bool
	if a.format == codexFormat {
		updated, existed, err = setTOMLServer(old, e)
	} else {
		updated, existed, err = setJSONServer(old, a.format, e)
	}
	if err != nil {
		return "", fmt.Errorf("cannot update %s: %w", path, err)
	}
	switch {
	case updated == nil:
		return StatusAlreadyPresent, nil
	case existed:
		return StatusUpdated, writeKeepingMode(path, updated)
	}
	return StatusInstalled, writeKeepingMode(path, updated)
}

// serverEntry is the JSON object of e for a format.
func serverEntry(f configFormat, e Entry) any {
	args := append([]string{}, e.Args...)
	switch f {
	case claudeFormat, vscodeFormat:
		return map[string]any{"type": "stdio", "command": e.Command, "args": args}
	case opencodeFormat:
		return map[string]any{"type": "local", "command": append([]string{e.Command}, args...), "enabled": true}
	}
	return map[string]any{"command": e.Command, "args": args}
}

func serversKey(f configFormat) string {
	switch f {
	case vscodeFormat:
		return "servers"
	case opencodeFormat:
		return "mcp"
	}
	return "mcpServers"
}

// setJSONServer sets the entry in a JSON file's servers object. The file's
// keys keep their order; it is re-indented with two spaces. A nil result
// means the same entry is already there.
func setJSONServer(old []byte, f configFormat, e Entry) (out []byte, existed bool, err error) {
	want, err := json.Marshal(serverEntry(f, e))
	if err != nil {
		return nil, false, err
	}
	if len(bytes.TrimSpace(old)) == 0 {
		old = []byte("{}")
	}
	root, err := decodeObject(old)
	if err != nil {
		return nil, false, fmt.Errorf("it is not a plain JSON object (comments and trailing commas are not supported): %w", err)
	}
	key := serversKey(f)
	var servers jsonObject
	if raw, ok := root.get(key); ok {
		if servers, err = decodeObject(raw); err != nil {
			return nil, false, fmt.Errorf("%q is not an object", key)
		}
	}
	cur, existed := servers.get(e.Name)
	if existed && sameJSON(cur, want) {
		return nil, true, nil
	}
	servers = servers.set(e.Name, want)
	root = root.set(key, servers.encode())
	var buf bytes.Buffer
	if err := json.Indent(&buf, root.encode(), "", "  "); err != nil {
		return nil, false, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), existed, nil
}

// member is one key of a JSON object, its value as written.
type member struct {
	key   string
	value json.RawMessage
}

type jsonObject []member

func decodeObject(data []byte) (jsonObject, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("expected a JSON object")
	}
	var obj jsonObject
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		obj = append(obj, member{key: tok.(string), value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the jsonObject")
	}
	return obj, nil
}

func (o jsonObject) get(key string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// set replaces key's value, or adds key at the end.
func (o jsonObject) set(key string, v json.RawMessage) jsonObject {
	for i := range o {
		if o[i].key == key {
			o[i].value = v
			return o
		}
	}
	return append(o, member{key: key, value: v})
}

func (o jsonObject) encode() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		json.Compact(&b, m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// sameJSON compares two JSON values whatever their key order and spacing.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return bytes.Equal(xs, ys)
}

// setTOMLServer sets [mcp_servers.<name>] in a Codex config. The file is
// edited as text, so comments and the layout of everything else stay as
// they are; the result must still parse.
func setTOMLServer(old []byte, e Entry) (out []byte, existed bool, err error) {
	var before map[string]any
	if err := toml.Unmarshal(old, &before); err != nil {
		return nil, false, fmt.Errorf("it is not valid TOML: %w", err)
	}
	block := tomlBlock(e)
	lines := strings.SplitAfter(string(old), "\n")
	start, end := findTOMLTable(lines, "mcp_servers."+e.Name)
	var text string
	if start >= 0 {
		existed = true
		if strings.TrimSpace(strings.Join(lines[start:end], "")) == strings.TrimSpace(block) {
			return nil, true, nil
		}
		text = strings.Join(lines[:start], "") + block + strings.Join(lines[end:], "")
	} else {
		text = string(old)
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if text != "" {
			text += "\n"
		}
		text += block
	}
	var after struct {
		Servers map[string]struct {
			Command string   `toml:"command"`
			Args    []string `toml:"args"`
		} `toml:"mcp_servers"`
	}
	if err := toml.Unmarshal([]byte(text), &after); err != nil {
		return nil, false, fmt.Errorf("mcp_servers.%s is defined in a way osb cannot edit (%v); set it by hand", e.Name, err)
	}
	if s := after.Servers[e.Name]; s.Command != e.Command {
		return nil, false, fmt.Errorf("mcp_servers.%s is defined in a way osb cannot edit; set it by hand", e.Name)
	}
	return []byte(text), existed, nil
}

func tomlBlock(e Entry) string {
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		args[i] = quote(a)
	}
	return fmt.Sprintf("[mcp_servers.%s]\ncommand = %s\nargs = [%s]\n", tomlKey(e.Name), quote(e.Command), strings.Join(args, ", "))
}

// tomlKey quotes a key that is not a bare TOML key.
func tomlKey(k string) string {
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b, _ := json.Marshal(k)
			return string(b)
		}
	}
	return k
}

// findTOMLTable returns the lines [start, end) of a table with its
// subtables and trailing blank lines, or -1.
func findTOMLTable(lines []string, name string) (start, end int) {
	parts := strings.SplitN(name, ".", 2)
	header := "[" + parts[0] + "." + tomlKey(parts[1]) + "]"
	sub := "[" + parts[0] + "." + tomlKey(parts[1]) + "."
	start = -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case start < 0 && t == header:
			start = i
		case start >= 0 && strings.HasPrefix(t, "[") && !strings.HasPrefix(t, sub):
			end = i
			for end > start+1 && strings.TrimSpace(lines[end-1]) == "" {
				end--
			}
			return start, end
		}
	}
	if start < 0 {
		return -1, -1
	}
	return start, len(lines)
}

// writeKeepingMode replaces path whole, keeping the mode of the file it
// replaces (0644 for a new one).
func writeKeepingMode(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	if info, err := os.Stat(path); err == nil {
		mode = info.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
