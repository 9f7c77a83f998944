package sandbox

import (
	"encoding/json"
	"strings"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/output"
)

// sandboxJSON writes a sandbox of a streamed listing in the bytes JSON
// gives its view, without reflection (see output.IndentedJSON); the
// listing tests hold the two to the same output.
type sandboxJSON ops.SandboxView

// WriteIndented writes the view's keys in its order.
func (v *sandboxJSON) WriteIndented(w *output.IndentWriter) {
	w.Open('{', false)
	w.Key("id")
	w.String(v.ID, false)
	w.Key("status")
	w.Open('{', false)
	w.Key("state")
	w.String(v.Status.State, false)
	w.Key("reason")
	w.OptString(v.Status.Reason)
	w.Key("message")
	w.OptString(v.Status.Message)
	w.Key("last_transition_at")
	writeTime(w, v.Status.LastTransitionAt)
	w.Close('}')
	w.Key("entrypoint")
	w.Strings(v.Entrypoint)
	w.Key("expires_at")
	writeTime(w, v.ExpiresAt)
	w.Key("created_at")
	writeTime(w, v.CreatedAt)
	w.Key("image")
	writeImage(w, v.Image)
	w.Key("snapshot_id")
	w.OptString(v.SnapshotID)
	w.Key("platform")
	if p := v.Platform; p != nil {
		w.Open('{', false)
		w.Key("os")
		w.String(p.OS, false)
		w.Key("arch")
		w.String(p.Arch, false)
		w.Close('}')
	} else {
		w.Null()
	}
	w.Key("allocation")
	if a := v.Allocation; a != nil {
		w.Open('{', false)
		w.Key("mode")
		w.OptString(a.Mode)
		w.Key("pool_ref")
		w.OptString(a.PoolRef)
		w.Key("state")
		w.OptString(a.State)
		w.Close('}')
	} else {
		w.Null()
	}
	w.Key("metadata")
	w.StringMap(v.Metadata)
	w.Key("extensions")
	w.StringMap(v.Extensions)
	w.Close('}')
}

func writeImage(w *output.IndentWriter, img *ops.ImageView) {
	if img == nil {
		w.Null()
		return
	}
	w.Open('{', false)
	w.Key("image")
	w.String(img.Image, false)
	w.Key("auth")
	if a := img.Auth; a != nil {
		w.Open('{', false)
		w.Key("username")
		w.String(a.Username, false)
		w.Key("password")
		w.String(a.Password, false)
		w.Close('}')
	} else {
		w.Null()
	}
	w.Close('}')
}

// writeTime writes a time as client.Time marshals it: through
// json.Marshal, whose HTML escaping the listing's encoder keeps, so a
// text holding <, > or & goes the same way.
func writeTime(w *output.IndentWriter, t *client.Time) {
	if t == nil {
		w.Null()
		return
	}
	s := t.String()
	if strings.ContainsAny(s, "<>&") {
		b, _ := json.Marshal(s)
		w.Raw(b)
		return
	}
	w.String(s, false)
}
