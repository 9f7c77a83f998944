package sandbox_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestGet(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	id := env.NewSandbox("-t", "30m", "-m", "team=ml", "--entrypoint", "sleep", "--entrypoint", "3600")
	for _, format := range []string{"table", "json", "yaml"} {
		// Any unique prefix will do.
		golden(t, "get_"+format, env.Run("sandbox", "get", id[:8], "-o", format).ExpectCode(t, 0), id)
	}
	// A paused sandbox, and one without expiry, as a table.
	other := env.NewSandbox("-t", "none")
	env.Must("sandbox", "pause", other)
	golden(t, "get_paused_table", env.Run("sandbox", "get", other).ExpectCode(t, 0), other)
}

func TestKill(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	for _, format := range []string{"table", "json", "yaml"} {
		a, b := env.NewSandbox(), env.NewSandbox()
		golden(t, "kill_"+format, env.Run("sandbox", "kill", a, b[:10], "-o", format).ExpectCode(t, 0), a, b)
		expectSandboxes(t, env, 0)
	}
	// The first failure stops the command; earlier kills stand.
	a, b := env.NewSandbox(), env.NewSandbox()
	env.Run("sandbox", "kill", a, "feedface", b).ExpectError(t, 4, "not found")
	if ids := sandboxIDs(t, env); len(ids) != 1 || ids[0] != b {
		t.Errorf("after a failed kill the server holds %v, want only %s", ids, b)
	}
	env.Run("sandbox", "kill").ExpectError(t, 2, "missing SANDBOX_ID")
}

func TestPauseResume(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	for _, format := range []string{"table", "json", "yaml"} {
		id := env.NewSandbox()
		golden(t, "pause_"+format, env.Run("sandbox", "pause", id, "-o", format).ExpectCode(t, 0), id)
		if sb := getJSON(t, env, id); sb.Status.State != "Paused" {
			t.Errorf("state after pause: %s", sb.Status.State)
		}
		golden(t, "resume_"+format, env.Run("sandbox", "resume", id[:6], "-o", format).ExpectCode(t, 0), id)
		if sb := getJSON(t, env, id); sb.Status.State != "Running" {
			t.Errorf("state after resume: %s", sb.Status.State)
		}
		// Ready means execd answers.
		want := "{\n  \"sandbox_id\": \"" + id + "\",\n  \"healthy\": true\n}\n"
		if out := env.Must("sandbox", "health", id, "-o", "json"); out != want {
			t.Errorf("health after resume:\n%s\nwant:\n%s", out, want)
		}
	}
	id := env.NewSandbox()
	env.Run("sandbox", "resume", id).ExpectError(t, 1, "SANDBOX_NOT_PAUSED")
	env.Must("sandbox", "pause", id)
	env.Run("sandbox", "pause", id).ExpectError(t, 1, "SANDBOX_NOT_RUNNING")
	env.Must("sandbox", "resume", id, "--skip-health-check")
	env.Must("sandbox", "pause", id)
	// A wait of 0 is refused before the resume is sent.
	env.Run("sandbox", "resume", id, "--resume-timeout", "0").ExpectError(t, 2, `invalid argument "0" for "--resume-timeout" flag: a timeout of 0 would end at once`)
	if sb := getJSON(t, env, id); sb.Status.State != "Paused" {
		t.Errorf("state after a refused resume: %s", sb.Status.State)
	}
	env.Run("sandbox", "resume", id, "--resume-timeout", "soon").ExpectError(t, 2, "invalid duration 'soon'")
}

func TestRenew(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	id := env.NewSandbox("-t", "5m")
	for _, format := range []string{"table", "json", "yaml"} {
		golden(t, "renew_"+format, env.Run("sandbox", "renew", id, "-t", "1h", "-o", format).ExpectCode(t, 0), id)
	}
	var out struct {
		SandboxID string `json:"sandbox_id"`
		ExpiresAt string `json:"expires_at"`
	}
	json.Unmarshal([]byte(env.Must("sandbox", "renew", id[:5], "--timeout", "2h", "-o", "json")), &out)
	at, err := time.Parse(time.RFC3339, out.ExpiresAt)
	if err != nil || !strings.HasSuffix(out.ExpiresAt, "Z") || out.SandboxID != id {
		t.Fatalf("renew printed %+v (%v)", out, err)
	}
	// A fresh lifetime from now, not added to what was left.
	if d := time.Until(at); d < 110*time.Minute || d > 130*time.Minute {
		t.Errorf("expires_at %s is %v from now, want about 2h", out.ExpiresAt, d)
	}
	if sb := getJSON(t, env, id); *sb.ExpiresAt != out.ExpiresAt {
		t.Errorf("server says expires_at %s, renew printed %s", *sb.ExpiresAt, out.ExpiresAt)
	}
	manual := env.NewSandbox("-t", "none")
	env.Run("sandbox", "renew", manual, "-t", "1h").ExpectError(t, 1, "code DOCKER::INVALID_EXPIRATION")
	env.Run("sandbox", "renew", id).ExpectError(t, 2, `required flag(s) "timeout" not set`)
	env.Run("sandbox", "renew", id, "-t", "1d").ExpectError(t, 2, "invalid duration '1d'")
}

func TestEndpoint(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	id := env.NewSandbox()
	for _, format := range []string{"table", "json", "yaml"} {
		golden(t, "endpoint_"+format, env.Run("sandbox", "endpoint", id, "-p", "44772", "-o", format).ExpectCode(t, 0), id)
	}
	golden(t, "endpoint_proxy", env.Run("--use-server-proxy", "sandbox", "endpoint", id, "--port", "8080").ExpectCode(t, 0), id)
	for _, port := range []string{"0", "65536"} {
		env.Run("sandbox", "endpoint", id, "-p", port).ExpectError(t, 2, "--port must be between 1 and 65535, got "+port)
	}
	env.Run("sandbox", "endpoint", id).ExpectError(t, 2, `required flag(s) "port" not set`)
	env.Run("sandbox", "endpoint", "0000", "-p", "80").ExpectError(t, 4, "not found")
}

func TestHealth(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	id := env.NewSandbox()
	for _, format := range []string{"table", "json", "yaml"} {
		golden(t, "health_"+format, env.Run("sandbox", "health", id, "-o", format).ExpectCode(t, 0), id)
	}
	// Unhealthy is an answer, not a failure: exit 0.
	env.Must("sandbox", "pause", id)
	for _, format := range []string{"table", "json"} {
		golden(t, "health_unhealthy_"+format, env.Run("sandbox", "health", id, "-o", format).ExpectCode(t, 0), id)
	}
	env.Run("sandbox", "health", "0000").ExpectError(t, 4, "not found")
}

// Timestamps are printed as the official client prints them, whatever form
// the server sent: microseconds, the offset kept, and a text that is not a
// time as it came.
func TestTimestampsAsTheOfficialClientPrintsThem(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t, "sbx-1")
	fs.record = map[string]any{
		"createdAt": "2026-01-02T03:04:05.1+08:00",
		"expiresAt": "soon",
		"status":    map[string]any{"state": "Running", "lastTransitionAt": "2026-01-02T03:04:05.000Z"},
	}
	env := fs.env(t)
	r := env.Run("sandbox", "get", "sbx-1", "-o", "json")
	for _, want := range []string{`"created_at": "2026-01-02T03:04:05.100000+08:00"`, `"expires_at": "soon"`, `"last_transition_at": "2026-01-02T03:04:05Z"`} {
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Errorf("json lacks %s:\n%s", want, r.Stdout)
		}
	}
	y := env.Run("sandbox", "list", "-o", "yaml")
	if y.Code != 0 || !strings.Contains(y.Stdout, "created_at: '2026-01-02T03:04:05.100000+08:00'") || !strings.Contains(y.Stdout, "expires_at: soon") {
		t.Errorf("yaml:\n%s", y.Stdout)
	}
	if out := env.Must("sandbox", "list"); !strings.Contains(out, "2026-01-02T03:04:05.100000+08:00  soon") {
		t.Errorf("table:\n%s", out)
	}
}
