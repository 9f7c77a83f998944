package template

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/ops"
)

// fileKeys are the CreateTemplateRequest keys, with the snake_case
// spellings the official client also accepts mapped to the wire names.
var fileKeys = map[string]string{
	"image": "image", "publish": "publish", "resourceLimits": "resourceLimits", "resource_limits": "resourceLimits",
	"entrypoint": "entrypoint", "env": "env", "metadata": "metadata", "format": "format", "readiness": "readiness",
}

// requestFromFile reads and validates a -f file. Unknown keys are not an
// error (the official client drops them silently); they are returned so the
// caller can say they were ignored.
func requestFromFile(path string) (*client.CreateTemplateRequest, []string, error) {
	raw, err := ops.ReadJSONObjectFile(path)
	if err != nil {
		return nil, nil, err
	}
	obj := map[string]any{}
	var ignored []string
	for k, v := range raw {
		if wire, ok := fileKeys[k]; ok {
			obj[wire] = v
		} else {
			ignored = append(ignored, k)
		}
	}
	slices.Sort(ignored)
	var c checker
	req := &client.CreateTemplateRequest{
		Image:          c.requiredString(obj, "image"),
		Publish:        c.requiredString(obj, "publish"),
		ResourceLimits: c.stringMap(obj, "resourceLimits"),
		Entrypoint:     c.stringList(obj, "entrypoint"),
		Env:            c.stringMap(obj, "env"),
		Metadata:       c.stringMap(obj, "metadata"),
		Format:         c.format(obj),
		Readiness:      c.readiness(obj),
	}
	if len(c.problems) > 0 {
		return nil, nil, ops.UsageErrorf("Invalid request file '%s': %s", path, strings.Join(c.problems, "; "))
	}
	return req, ignored, nil
}

// checker collects every problem of a request file as "loc: message".
type checker struct{ problems []string }

func (c *checker) fail(loc, msg string) { c.problems = append(c.problems, loc+": "+msg) }

func (c *checker) requiredString(obj map[string]any, key string) string {
	v, ok := obj[key]
	if !ok {
		c.fail(key, "field required")
		return ""
	}
	s, ok := v.(string)
	switch {
	case !ok:
		c.fail(key, "must be a string")
	case strings.TrimSpace(s) == "":
		c.fail(key, "must not be blank")
	}
	return s
}

func (c *checker) stringMap(obj map[string]any, key string) map[string]string {
	v := obj[key]
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		c.fail(key, "must be an object of strings")
		return nil
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		s, ok := e.(string)
		if !ok {
			c.fail(key+"."+k, "must be a string")
			continue
		}
		out[k] = s
	}
	return out
}

func (c *checker) stringList(obj map[string]any, key string) []string {
	v := obj[key]
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		c.fail(key, "must be an array of strings")
		return nil
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			c.fail(key, "must be an array of strings")
			return nil
		}
		out = append(out, s)
	}
	return out
}

func (c *checker) format(obj map[string]any) string {
	v := obj["format"]
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok && slices.Contains(imageFormats, s) {
		return s
	}
	c.fail("format", "must be 'native' or 'overlaybd'")
	return ""
}

func (c *checker) readiness(obj map[string]any) *client.Readiness {
	v := obj["readiness"]
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		c.fail("readiness", "must be an object")
		return nil
	}
	r := &client.Readiness{}
	if p := m["probe"]; p != nil {
		if s, ok := p.(string); ok {
			r.Probe = &s
		} else {
			c.fail("readiness.probe", "must be a string")
		}
	}
	w := m["warmupSeconds"]
	if w == nil {
		w = m["warmup_seconds"]
	}
	if w != nil {
		n, isNumber := w.(json.Number)
		i, err := n.Int64()
		switch {
		case !isNumber || err != nil:
			c.fail("readiness.warmupSeconds", "must be an integer")
		case i < 0:
			c.fail("readiness.warmupSeconds", "must be 0 or more")
		default:
			r.WarmupSeconds = &i
		}
	}
	return r
}
