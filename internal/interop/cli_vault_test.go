package interop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// vaultPayload is a credential vault with one credential and one binding;
// the secret value must never come back.
const vaultPayload = `{
  "credentials": [{"name": "gh", "source": {"type": "inline", "value": "s3cret-value"}}],
  "bindings": [{"name": "ghb", "match": {"hosts": ["api.example.com"], "paths": ["/v1/*"]},
                "auth": {"type": "apiKey", "name": "x-api-key", "credential": "gh"}}]
}`

func TestOfficialCLICredentialVault(t *testing.T) {
	h := start(t)
	tw := h.twins(t, map[string]any{"networkPolicy": policy, "credentialProxy": map[string]bool{"enabled": true}})
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	create := file("vault.json", vaultPayload)
	on := func(words ...string) cmp { return cmp{label: "<SANDBOX>", args: args(words...)} }
	noSecret := func(t *testing.T, out any) {
		if s := render(out); strings.Contains(s, "s3cret") {
			t.Errorf("the secret came back: %s", s)
		}
	}

	t.Run("create", func(t *testing.T) {
		off, _ := h.compare(t, tw, on("credential-vault", "create", "ID", "--file", create))
		noSecret(t, off)
	})
	t.Run("get", func(t *testing.T) { h.same(t, tw[0], on("credential-vault", "get", "ID")) })
	t.Run("credentials", func(t *testing.T) {
		h.same(t, tw[0], on("credential-vault", "credential", "list", "ID"))
		h.same(t, tw[0], on("credential-vault", "credential", "get", "ID", "gh"))
	})
	t.Run("bindings", func(t *testing.T) {
		h.same(t, tw[0], on("credential-vault", "binding", "list", "ID"))
		// The sidecar stores header names in canonical form, as Go spells them.
		off, _ := h.same(t, tw[0], on("credential-vault", "binding", "get", "ID", "ghb"))
		if s := render(off); !strings.Contains(s, `"paths":["/v1/*"]`) || !strings.Contains(s, `"name":"X-Api-Key"`) {
			t.Errorf("official binding get: %s", s)
		}
	})
	t.Run("patch from stdin", func(t *testing.T) {
		// The official CLI reads the payload as YAML, and YAML allows no tabs.
		patch := `{"expectedRevision": 1, "bindings": {"delete": ["ghb"]},
  "credentials": {"add": [{"name": "k2", "source": {"type": "inline", "value": "s3cret-two"}}]}}`
		r := h.run(t, patch, "", h.osb, "credential-vault", "patch", tw[0], "--file", "-", "-o", "json")
		if r.Code != 0 {
			t.Fatalf("official patch: exit %d: %s", r.Code, r.Stderr)
		}
		ours := h.ours.RunStdin(patch, "credential-vault", "patch", tw[1], "--file", "-", "-o", "json")
		if ours.Code != 0 {
			t.Fatalf("our patch: exit %d: %s", ours.Code, ours.Stderr)
		}
		if d := diffJSON("", decodeOutput(t, "official", r.Stdout), decodeOutput(t, "our", ours.Stdout)); len(d) > 0 {
			t.Errorf("credential-vault patch: the official CLI and ours differ:\n  %s", strings.Join(d, "\n  "))
		}
		if strings.Contains(r.Stdout, "s3cret") || !strings.Contains(r.Stdout, `"revision": 2`) {
			t.Errorf("official patch printed %s", r.Stdout)
		}
	})
	t.Run("delete", func(t *testing.T) {
		h.compare(t, tw, on("credential-vault", "delete", "ID"))
		for _, id := range tw {
			if r := h.ours.Run("credential-vault", "get", id); r.Code == 0 {
				t.Errorf("vault of %s still there after delete", id)
			}
		}
	})
}
