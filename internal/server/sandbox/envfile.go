package sandbox

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// EnvFile is the file that EXECD_ENVS names in every sandbox process unless
// the sandbox env sets it. On the real platform the sandbox bootstrap exports
// EXECD_ENVS (there /opt/opensandbox/.env; here /opt is the host's, shared
// read-only) and execd merges the file's entries into each command it
// starts: over the sandbox env, under the request's own envs. The official
// SDKs' set_env appends to it.
const EnvFile = "/root/.opensandbox/.env"

const maxEnvFile = 1 << 20

// fileEnv reads the entries of the file env["EXECD_ENVS"] names; nil when it
// is unset, outside the sandbox's own files, or unreadable. Values expand
// $NAME against env.
func (s *Sandbox) fileEnv(env map[string]string) map[string]string {
	p := env["EXECD_ENVS"]
	if p == "" {
		return nil
	}
	name, err := s.ResolvePath(p)
	if rel, ok := strings.CutPrefix(p, s.FSDir()+string(filepath.Separator)); ok && !s.isolated {
		name, err = filepath.ToSlash(rel), nil // unisolated processes see host paths
	}
	if err != nil {
		return nil
	}
	f, err := s.root.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxEnvFile))
	if err != nil {
		return nil
	}
	return parseEnvFile(string(data), func(k string) string { return env[k] })
}

// parseEnvFile reads KEY=VALUE entries as execd does. Blank lines and lines
// starting with # are skipped, and so are malformed or unterminated entries.
// A bare value is trimmed and $NAME-expanded; "double quotes" keep spaces,
// decode \n \r \t \\ \" and expand; 'single quotes' are literal and may span
// lines.
func parseEnvFile(data string, lookup func(string) string) map[string]string {
	out := map[string]string{}
	for data != "" {
		line, rest, _ := strings.Cut(data, "\n")
		data = rest
		trimmed := strings.TrimSpace(line)
		key, value, found := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") || !found || key == "" {
			continue
		}
		value = strings.TrimLeft(value, " \t\r\v\f")
		if value == "" || (value[0] != '\'' && value[0] != '"') {
			out[key] = os.Expand(strings.TrimSpace(value), lookup)
			continue
		}
		// A quoted value may run past this line: look for its end in the
		// rest of the file too.
		whole := value[1:]
		if rest != "" {
			whole += "\n" + rest
		}
		v, after, ok := unquote(value[0], whole, lookup)
		if !ok {
			continue
		}
		tail, next, _ := strings.Cut(after, "\n")
		if strings.TrimSpace(tail) != "" {
			continue
		}
		out[key] = v
		data = next
	}
	return out
}

// unquote reads a value after its opening quote q up to the closing one and
// returns it with what follows the closing quote.
func unquote(q byte, s string, lookup func(string) string) (value, after string, ok bool) {
	if q == '\'' {
		i := strings.IndexByte(s, '\'')
		if i < 0 {
			return "", "", false
		}
		return s[:i], s[i+1:], true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return os.Expand(b.String(), lookup), s[i+1:], true
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case '\\', '"':
				b.WriteByte(s[i])
			default:
				b.WriteByte('\\')
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}
