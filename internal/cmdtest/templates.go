package cmdtest

import (
	"encoding/json"
	"net/http"
	"time"
)

// Template creates a template for image on the env's server and waits
// until it is Succeeded; it returns the template id.
func (e *Env) Template(image string) string {
	e.T.Helper()
	_, b := e.API(http.MethodPost, "/templates", map[string]string{"image": image, "publish": "s3://osb-test/templates"})
	var t struct {
		TemplateID string `json:"templateId"`
		Status     struct{ Phase, Message string }
	}
	if err := json.Unmarshal(b, &t); err != nil || t.TemplateID == "" {
		e.T.Fatalf("create template: %s", b)
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		e.APIGet("/templates/"+t.TemplateID, &t)
		switch t.Status.Phase {
		case "Succeeded":
			return t.TemplateID
		case "Failed":
			e.T.Fatalf("template %s failed: %s", t.TemplateID, t.Status.Message)
		}
	}
	e.T.Fatalf("template %s is still %s", t.TemplateID, t.Status.Phase)
	return ""
}
