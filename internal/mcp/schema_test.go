package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	osbmcp "github.com/osb-dev/osb/internal/mcp"
)

// Every tool's name, description, annotations and schemas, as tools/list
// gives them, are those recorded in testdata/tools.golden (the official
// server's, for its tools): a change to an argument struct cannot change
// what an agent is told without that file changing with it.
func TestToolsListAsRecorded(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{Tools: []string{"all"}})
	res, err := h.session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(res.Tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	cmdtest.Golden(t, "tools", string(got)+"\n")
}
