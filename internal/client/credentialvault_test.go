package client

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestSecretGoesOnTheWireOnly(t *testing.T) {
	const value = "sk-live-42"
	req := CredentialVaultCreate{Credentials: []Credential{{Name: "token", Source: CredentialSource{Type: "inline", Value: Secret(value)}}}}
	b, err := json.Marshal(req)
	if err != nil || !strings.Contains(string(b), `"value":"sk-live-42"`) {
		t.Errorf("wire form %s (%v)", b, err)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if got := fmt.Sprintf(verb, req); strings.Contains(got, value) {
			t.Errorf("%s prints the secret: %s", verb, got)
		}
	}
}
