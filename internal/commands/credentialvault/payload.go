package credentialvault

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

// Payloads hold secrets. Every message below names a field by its path,
// never quotes a value, and parse errors report a line number only.

const maxPayload = 8 << 20

// readPayload reads a JSON or YAML object from path, or stdin for "-", and
// turns it into a request with check: every problem is found before any
// request is sent.
func readPayload[T any](f *cmdutil.Factory, path string, check func(map[string]any) (T, error)) (T, error) {
	var none T
	data, err := readPayloadBytes(f, path)
	if err != nil {
		return none, err
	}
	v, err := decodePayload(data)
	if err != nil {
		return none, ops.UsageErrorf("Failed to read credential vault payload from %s: %v.", path, err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return none, ops.UsageErrorf("Credential vault payload must be a JSON/YAML object.")
	}
	return check(obj)
}

func readPayloadBytes(f *cmdutil.Factory, path string) ([]byte, error) {
	var r io.Reader = f.IOStreams.In
	if path != "-" {
		if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
			return nil, ops.UsageErrorf("Payload file not found: %s", path)
		}
		file, err := os.Open(path)
		if err != nil {
			return nil, ops.UsageErrorf("Failed to read credential vault payload from %s: %v.", path, unwrapPathError(err))
		}
		defer file.Close()
		r = file
	}
	data, err := io.ReadAll(io.LimitReader(r, maxPayload+1))
	switch {
	case err != nil:
		return nil, ops.UsageErrorf("Failed to read credential vault payload from %s: %v.", path, unwrapPathError(err))
	case len(data) > maxPayload:
		return nil, ops.UsageErrorf("Failed to read credential vault payload from %s: larger than %d MiB.", path, maxPayload>>20)
	}
	return data, nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// decodePayload parses JSON (any layout, tabs included, numbers exact),
// else YAML.
func decodePayload(data []byte) (any, error) {
	if v, err := ops.DecodeJSON(data); err == nil {
		return v, nil
	}
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		// The YAML error's own text quotes the source around the problem,
		// which may be a secret: only its line is shown.
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil {
			return nil, fmt.Errorf("not valid JSON or YAML (line %d)", ye.GetToken().Position.Line)
		}
		return nil, errors.New("not valid JSON or YAML")
	}
	return v, nil
}

// invalid is a problem at a path inside the payload.
func invalid(path, format string, args ...any) error {
	if path != "" {
		path += ": "
	}
	return ops.UsageErrorf("Invalid credential vault payload: %s%s.", path, fmt.Sprintf(format, args...))
}

// object checks that x is a mapping with only the allowed keys.
func object(x any, path string, allowed ...string) (map[string]any, error) {
	m, ok := x.(map[string]any)
	if !ok {
		return nil, invalid(path, "must be an object")
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(allowed, k) {
			return nil, invalid(path, "unknown field '%s' (allowed: %s)", k, strings.Join(allowed, ", "))
		}
	}
	return m, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// optString reads an optional string field.
func optString(m map[string]any, key, path string) (string, error) {
	switch v := m[key].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	}
	return "", invalid(join(path, key), "must be a string")
}

// name reads a required, non-blank string field.
func name(m map[string]any, key, path string) (string, error) {
	s, err := optString(m, key, path)
	if err == nil && strings.TrimSpace(s) == "" {
		err = invalid(join(path, key), "must be a non-blank string")
	}
	return s, err
}

// list reads an optional list, checking every item with item.
func list[T any](x any, path string, item func(any, string) (T, error)) ([]T, error) {
	if x == nil {
		return nil, nil
	}
	items, ok := x.([]any)
	if !ok {
		return nil, invalid(path, "must be a list")
	}
	out := make([]T, 0, len(items))
	for i, it := range items {
		v, err := item(it, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func stringItem(x any, path string) (string, error) {
	if s, ok := x.(string); ok {
		return s, nil
	}
	return "", invalid(path, "must be a string")
}

func nonBlankItem(x any, path string) (string, error) {
	s, err := stringItem(x, path)
	if err == nil && strings.TrimSpace(s) == "" {
		err = invalid(path, "must not be blank")
	}
	return s, err
}

func intItem(x any, path string) (int, error) {
	if n, ok := toInt(x); ok {
		return int(n), nil
	}
	return 0, invalid(path, "must be an integer")
}

// toInt accepts integers only: not booleans, not 3.0.
func toInt(x any) (int64, bool) {
	switch n := x.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case uint64:
		return int64(n), n <= 1<<63-1
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

func credentialItem(x any, path string) (client.Credential, error) {
	m, err := object(x, path, "name", "source")
	if err != nil {
		return client.Credential{}, err
	}
	n, err := name(m, "name", path)
	if err != nil {
		return client.Credential{}, err
	}
	src, err := object(m["source"], join(path, "source"), "type", "value")
	if err != nil {
		return client.Credential{}, err
	}
	typ, err := optString(src, "type", join(path, "source"))
	if err != nil {
		return client.Credential{}, err
	}
	if typ == "" {
		typ = "inline"
	}
	if typ != "inline" {
		return client.Credential{}, invalid(join(path, "source.type"), "must be 'inline'")
	}
	value, ok := src["value"].(string)
	if !ok || value == "" {
		return client.Credential{}, invalid(join(path, "source.value"), "must be a non-empty string")
	}
	return client.Credential{Name: n, Source: client.CredentialSource{Type: typ, Value: client.Secret(value)}}, nil
}

func bindingItem(x any, path string) (client.CredentialBinding, error) {
	var b client.CredentialBinding
	m, err := object(x, path, "name", "match", "auth")
	if err != nil {
		return b, err
	}
	if b.Name, err = name(m, "name", path); err != nil {
		return b, err
	}
	if b.Match, err = matchOf(m["match"], join(path, "match")); err != nil {
		return b, err
	}
	b.Auth, err = authOf(m["auth"], join(path, "auth"))
	return b, err
}

func matchOf(x any, path string) (client.CredentialMatch, error) {
	var mt client.CredentialMatch
	m, err := object(x, path, "schemes", "ports", "hosts", "methods", "paths")
	if err != nil {
		return mt, err
	}
	if mt.Schemes, err = list(m["schemes"], join(path, "schemes"), func(x any, p string) (string, error) {
		s, err := stringItem(x, p)
		if err == nil && s != "https" && s != "http" {
			err = invalid(p, "must be 'https' or 'http'")
		}
		return s, err
	}); err != nil {
		return mt, err
	}
	if mt.Ports, err = list(m["ports"], join(path, "ports"), intItem); err != nil {
		return mt, err
	}
	if mt.Hosts, err = list(m["hosts"], join(path, "hosts"), nonBlankItem); err != nil {
		return mt, err
	}
	if len(mt.Hosts) == 0 {
		return mt, invalid(join(path, "hosts"), "must be a non-empty list of host names")
	}
	if mt.Methods, err = list(m["methods"], join(path, "methods"), stringItem); err != nil {
		return mt, err
	}
	mt.Paths, err = list(m["paths"], join(path, "paths"), stringItem)
	return mt, err
}

var authTypes = []string{"bearer", "basic", "apiKey", "customHeaders", "passthrough"}

func authOf(x any, path string) (client.CredentialAuth, error) {
	var a client.CredentialAuth
	m, err := object(x, path, "type", "credential", "name", "headers", "substitutions")
	if err != nil {
		return a, err
	}
	if a.Type, err = optString(m, "type", path); err != nil {
		return a, err
	}
	if !slices.Contains(authTypes, a.Type) {
		return a, invalid(join(path, "type"), "must be one of %s", strings.Join(authTypes, ", "))
	}
	if a.Credential, err = optString(m, "credential", path); err != nil {
		return a, err
	}
	if a.Name, err = optString(m, "name", path); err != nil {
		return a, err
	}
	if a.Headers, err = list(m["headers"], join(path, "headers"), headerItem); err != nil {
		return a, err
	}
	a.Substitutions, err = list(m["substitutions"], join(path, "substitutions"), substitutionItem)
	return a, err
}

func headerItem(x any, path string) (client.CredentialHeader, error) {
	var h client.CredentialHeader
	m, err := object(x, path, "name", "credential")
	if err != nil {
		return h, err
	}
	if h.Name, err = name(m, "name", path); err != nil {
		return h, err
	}
	h.Credential, err = name(m, "credential", path)
	return h, err
}

func substitutionItem(x any, path string) (client.CredentialSubstitution, error) {
	var s client.CredentialSubstitution
	m, err := object(x, path, "credential", "placeholder", "in")
	if err != nil {
		return s, err
	}
	if s.Credential, err = name(m, "credential", path); err != nil {
		return s, err
	}
	if s.Placeholder, err = optString(m, "placeholder", path); err == nil && s.Placeholder == "" {
		err = invalid(join(path, "placeholder"), "must be a non-empty string")
	}
	if err != nil {
		return s, err
	}
	if s.In, err = list(m["in"], join(path, "in"), stringItem); err == nil && len(s.In) == 0 {
		err = invalid(join(path, "in"), "must be a non-empty list (path, query, header, body)")
	}
	return s, err
}

// createRequest checks a create payload: lists of credentials and bindings.
func createRequest(payload map[string]any) (*client.CredentialVaultCreate, error) {
	if _, err := object(payload, "", "credentials", "bindings"); err != nil {
		return nil, err
	}
	for _, key := range []string{"credentials", "bindings"} {
		if _, ok := payload[key].([]any); !ok {
			return nil, ops.UsageErrorf("Credential vault payload field '%s' must be a list.", key)
		}
	}
	creds, err := list(payload["credentials"], "credentials", credentialItem)
	if err != nil {
		return nil, err
	}
	binds, err := list(payload["bindings"], "bindings", bindingItem)
	if err != nil {
		return nil, err
	}
	return &client.CredentialVaultCreate{Credentials: creds, Bindings: binds}, nil
}

// patchRequest checks a patch payload: optional credentials and bindings
// mutation objects (at least one), an optional integer expectedRevision
// (expected_revision also accepted).
func patchRequest(payload map[string]any) (*client.CredentialVaultPatch, error) {
	if _, err := object(payload, "", "expectedRevision", "expected_revision", "credentials", "bindings"); err != nil {
		return nil, err
	}
	for _, key := range []string{"credentials", "bindings"} {
		if v := payload[key]; v != nil {
			if _, ok := v.(map[string]any); !ok {
				return nil, ops.UsageErrorf("Credential vault patch field '%s' must be an object.", key)
			}
		}
	}
	if payload["credentials"] == nil && payload["bindings"] == nil {
		return nil, ops.UsageErrorf("Credential vault patch payload must include credentials or bindings.")
	}
	req := &client.CredentialVaultPatch{}
	rev := payload["expectedRevision"]
	if rev == nil {
		rev = payload["expected_revision"]
	}
	if rev != nil {
		n, ok := toInt(rev)
		if !ok {
			return nil, ops.UsageErrorf("Credential vault expectedRevision must be an integer.")
		}
		req.ExpectedRevision = &n
	}
	var err error
	if req.Credentials, err = credentialMutations(payload["credentials"]); err != nil {
		return nil, err
	}
	req.Bindings, err = bindingMutations(payload["bindings"])
	return req, err
}

// mutations reads the add, replace and delete lists of one part of a patch
// (path is "credentials" or "bindings"); item checks an added or replaced one.
func mutations[T any](x any, path string, item func(any, string) (T, error)) (add, replace []T, del []string, err error) {
	m, err := object(x, path, "add", "replace", "delete")
	if err != nil {
		return nil, nil, nil, err
	}
	if add, err = list(m["add"], join(path, "add"), item); err != nil {
		return nil, nil, nil, err
	}
	if replace, err = list(m["replace"], join(path, "replace"), item); err != nil {
		return nil, nil, nil, err
	}
	del, err = list(m["delete"], join(path, "delete"), nonBlankItem)
	return add, replace, del, err
}

func credentialMutations(x any) (*client.CredentialMutations, error) {
	if x == nil {
		return nil, nil
	}
	add, replace, del, err := mutations(x, "credentials", credentialItem)
	if err != nil {
		return nil, err
	}
	return &client.CredentialMutations{Add: add, Replace: replace, Delete: del}, nil
}

func bindingMutations(x any) (*client.BindingMutations, error) {
	if x == nil {
		return nil, nil
	}
	add, replace, del, err := mutations(x, "bindings", bindingItem)
	if err != nil {
		return nil, err
	}
	return &client.BindingMutations{Add: add, Replace: replace, Delete: del}, nil
}
