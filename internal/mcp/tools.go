package mcp

import (
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolSpec is one tool osb can serve.
type toolSpec struct {
	name        string
	extra       bool // not in the official set: served only when --tools names it
	desc        string
	readOnly    bool
	destructive bool
	add         func(*Server, *mcp.Tool)
}

func (t toolSpec) tool() *mcp.Tool {
	ann := &mcp.ToolAnnotations{ReadOnlyHint: t.readOnly}
	if !t.readOnly {
		ann.DestructiveHint = &t.destructive
	}
	return &mcp.Tool{Name: t.name, Description: t.desc, Annotations: ann}
}

// catalog is every tool: the official set in the official server's order,
// then osb's extras.
func catalog() []toolSpec {
	return slices.Concat(sandboxTools(), commandTools(), fileTools(), endpointTools(), extraTools())
}

// ToolNames lists the official tools and osb's opt-in extras.
func ToolNames() (official, extras []string) {
	for _, t := range catalog() {
		if t.extra {
			extras = append(extras, t.name)
		} else {
			official = append(official, t.name)
		}
	}
	return official, extras
}

// SelectTools reads --tools: tool names, "default" (the official set),
// "all" (every tool), and "-NAME" to leave one out. A list that starts by
// leaving tools out starts from the official set; no list at all is the
// official set. It returns the names in catalogue order.
func SelectTools(items []string) ([]string, error) {
	official, extras := ToolNames()
	all := slices.Concat(official, extras)
	if len(items) == 0 {
		return official, nil
	}
	chosen := map[string]bool{}
	addAll := func(names []string) {
		for _, n := range names {
			chosen[n] = true
		}
	}
	if strings.HasPrefix(strings.TrimSpace(items[0]), "-") {
		addAll(official)
	}
	for _, raw := range items {
		item := strings.TrimSpace(raw)
		name, remove := strings.CutPrefix(item, "-")
		switch {
		case item == "default":
			addAll(official)
		case item == "all":
			addAll(all)
		case !slices.Contains(all, name):
			return nil, usage("unknown tool %q in --tools; known tools: %s (or default, all, -NAME)", item, strings.Join(all, ", "))
		case remove:
			delete(chosen, name)
		default:
			chosen[name] = true
		}
	}
	var out []string
	for _, n := range all {
		if chosen[n] {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, usage("--tools %s leaves no tool to serve", strings.Join(items, ","))
	}
	return out, nil
}
