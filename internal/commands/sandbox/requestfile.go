package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/ops"
)

// requestFileFields are the CreateSandboxRequest keys a request file may
// hold, in the order messages list them.
var requestFileFields = []string{
	"image", "templateId", "snapshotId", "platform", "timeout", "resourceLimits",
	"resourceRequests", "env", "metadata", "lifecycle", "entrypoint", "networkPolicy",
	"credentialProxy", "secureAccess", "volumes", "extensions",
}

// templateFixedFields are the workload keys a template decides.
var templateFixedFields = []string{
	"resourceLimits", "resourceRequests", "env", "entrypoint", "volumes",
	"platform", "credentialProxy", "secureAccess", "lifecycle",
}

// fieldCheckers validate (and put in wire form) the non-null value of a key.
var fieldCheckers = map[string]func(any) (any, error){
	"platform":         checkPlatform,
	"resourceLimits":   checkStringMap,
	"resourceRequests": checkStringMap,
	"env":              checkStringMap,
	"metadata":         checkStringMap,
	"extensions":       checkStringMap,
	"lifecycle":        checkObject,
	"entrypoint":       checkEntrypoint,
	"networkPolicy":    checkNetworkPolicy,
	"credentialProxy":  checkCredentialProxy,
	"secureAccess":     checkBool,
	"volumes":          checkVolumes,
}

// requestFile is a parsed -f file.
type requestFile struct {
	path string
	obj  map[string]any
}

// planFromFile validates a request file in the official client's order and
// builds the request from it; config defaults do not apply.
func planFromFile(path string) (*createPlan, error) {
	obj, err := ops.ReadJSONObjectFile(path)
	if err != nil {
		return nil, err
	}
	rf := &requestFile{path: path, obj: obj}
	if err := rf.checkKeys(); err != nil {
		return nil, err
	}
	source, err := rf.source()
	if err != nil {
		return nil, err
	}
	life, err := rf.lifetime()
	if err != nil {
		return nil, err
	}
	_, fromTemplate := rf.value("templateId")
	if fromTemplate {
		if err := rf.checkTemplateFields(); err != nil {
			return nil, err
		}
	}
	body, err := rf.body()
	if err != nil {
		return nil, err
	}
	if cp, ok := body["credentialProxy"].(map[string]any); ok && cp["enabled"] == true && body["networkPolicy"] == nil {
		return nil, ops.UsageErrorf("Request file '%s' enables 'credentialProxy' without 'networkPolicy'; Credential Vault injection needs an egress policy.", path)
	}
	if fromTemplate {
		if err := life.checkTemplate(); err != nil {
			return nil, err
		}
	}
	req := &client.CreateSandboxRequest{}
	if err := decodeInto(body, req); err != nil {
		return nil, ops.UsageErrorf("Invalid request file '%s': %v", path, err)
	}
	req.Timeout = life.seconds()
	if req.Image != nil || req.SnapshotID != "" {
		if req.ResourceLimits == nil {
			req.ResourceLimits = defaultResources
		}
	}
	if req.Image != nil && req.Entrypoint == nil {
		req.Entrypoint = defaultEntrypoint
	}
	return &createPlan{Body: req, TimeoutText: life.text(), Source: source}, nil
}

// decodeInto puts a checked JSON value into its typed form.
func decodeInto(v, dst any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(dst)
}

// value returns a key's value when it is present and not null.
func (rf *requestFile) value(key string) (any, bool) {
	v, ok := rf.obj[key]
	return v, ok && v != nil
}

func (rf *requestFile) checkKeys() error {
	var unknown []string
	for k := range rf.obj {
		if !slices.Contains(requestFileFields, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return ops.UsageErrorf("Request file '%s' has unsupported fields: %s. Supported fields: %s.",
		rf.path, strings.Join(unknown, ", "), strings.Join(requestFileFields, ", "))
}

// source checks that exactly one of image, templateId and snapshotId is set,
// and says which, for the result panel.
func (rf *requestFile) source() (createdView, error) {
	var set []string
	for _, k := range []string{"image", "templateId", "snapshotId"} {
		if _, ok := rf.value(k); ok {
			set = append(set, k)
		}
	}
	switch len(set) {
	case 0:
		return createdView{}, ops.UsageErrorf("Request file '%s' must set one of 'image', 'templateId', or 'snapshotId'.", rf.path)
	case 1:
	default:
		return createdView{}, ops.UsageErrorf("Request file '%s' must set only one of 'image', 'templateId', 'snapshotId'; got %s.", rf.path, strings.Join(set, ", "))
	}
	v, _ := rf.value(set[0])
	if set[0] == "image" {
		uri, err := rf.imageURI(v)
		return createdView{Image: uri}, err
	}
	id, ok := v.(string)
	if !ok || strings.TrimSpace(id) == "" {
		return createdView{}, ops.UsageErrorf("Request file field '%s' in '%s' must be a non-empty string.", set[0], rf.path)
	}
	if set[0] == "templateId" {
		return createdView{Template: id}, nil
	}
	return createdView{SnapshotID: id}, nil
}

// imageURI checks the image, a reference string or {uri, auth}, and returns
// the reference.
func (rf *requestFile) imageURI(v any) (string, error) {
	if s, ok := v.(string); ok {
		if strings.TrimSpace(s) == "" {
			return "", ops.UsageErrorf("Request file field 'image' in '%s' must be a non-empty image reference or an object with 'uri'.", rf.path)
		}
		return s, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return "", ops.UsageErrorf("Request file field 'image' in '%s' must be a non-empty image reference or an object with 'uri'.", rf.path)
	}
	err := requireString(obj, "uri")
	if err == nil {
		err = checkImageAuth(obj["auth"])
	}
	if err != nil {
		return "", rf.invalid("image", err)
	}
	return obj["uri"].(string), nil
}

func checkImageAuth(v any) error {
	if v == nil {
		return nil
	}
	auth, ok := v.(map[string]any)
	if !ok {
		return errAt("must be an object with username and password", "auth")
	}
	for _, key := range []string{"username", "password"} {
		if err := requireString(auth, key); err != nil {
			return within(err, "auth")
		}
	}
	return nil
}

// lifetime reads timeout: absent is the SDK default, null manual cleanup,
// otherwise a positive whole number of seconds.
func (rf *requestFile) lifetime() (lifetime, error) {
	v, present := rf.obj["timeout"]
	if !present {
		return lifetime{}, nil
	}
	if v == nil {
		return lifetime{Given: true, Manual: true}, nil
	}
	if n, ok := v.(json.Number); ok {
		if secs, err := n.Int64(); err == nil && secs > 0 {
			return lifetime{Given: true, D: time.Duration(secs) * time.Second}, nil
		}
	}
	return lifetime{}, ops.UsageErrorf("Request file field 'timeout' in '%s' must be a positive integer of seconds, or null for manual cleanup.", rf.path)
}

func (rf *requestFile) checkTemplateFields() error {
	var bad []string
	for _, k := range templateFixedFields {
		if _, ok := rf.value(k); ok {
			bad = append(bad, "'"+k+"'")
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return ops.UsageErrorf("Template mode fixes the workload shape on the server; request file cannot combine 'templateId' with %s.", strings.Join(bad, ", "))
}

// body validates every other field and returns the request in wire form,
// null fields left out.
func (rf *requestFile) body() (map[string]any, error) {
	body := map[string]any{}
	for _, k := range requestFileFields {
		v, ok := rf.value(k)
		if !ok || k == "timeout" {
			continue
		}
		if check := fieldCheckers[k]; check != nil {
			var err error
			if v, err = check(v); err != nil {
				return nil, rf.invalid(k, err)
			}
		}
		body[k] = v
	}
	if s, ok := body["image"].(string); ok {
		body["image"] = map[string]any{"uri": s}
	}
	return body, nil
}

func (rf *requestFile) invalid(key string, err error) error {
	return ops.UsageErrorf("Invalid '%s' in request file '%s': %v", key, rf.path, err)
}

func checkStringMap(v any) (any, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errAt("must be an object of strings, got " + jsonType(v))
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if _, ok := obj[k].(string); !ok {
			return nil, errAt("must be a string, got "+jsonType(obj[k]), k)
		}
	}
	return obj, nil
}

func checkObject(v any) (any, error) {
	if _, ok := v.(map[string]any); !ok {
		return nil, errAt("must be an object, got " + jsonType(v))
	}
	return v, nil
}

func checkBool(v any) (any, error) {
	if _, ok := v.(bool); !ok {
		return nil, errAt("must be true or false, got " + jsonType(v))
	}
	return v, nil
}

func checkEntrypoint(v any) (any, error) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, errAt("must be a non-empty array of strings")
	}
	for i, item := range list {
		if _, ok := item.(string); !ok {
			return nil, errAt("must be a string, got "+jsonType(item), fmt.Sprint(i))
		}
	}
	return list, nil
}

func checkPlatform(v any) (any, error) {
	v = camelKeys(v)
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errAt("must be an object with os and arch, got " + jsonType(v))
	}
	for _, key := range []string{"os", "arch"} {
		if err := requireString(obj, key); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// checkCredentialProxy takes true/false or {enabled}; the wire wants the object.
func checkCredentialProxy(v any) (any, error) {
	switch t := v.(type) {
	case bool:
		return map[string]any{"enabled": t}, nil
	case map[string]any:
		if e, ok := t["enabled"]; ok && e != nil {
			if _, ok := e.(bool); !ok {
				return nil, errAt("must be true or false", "enabled")
			}
		}
		return t, nil
	}
	return nil, errAt("must be true, false or an object, got " + jsonType(v))
}
