package mcp

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/ops"
)

func codeRunTool() toolSpec {
	return toolSpec{name: "code_run", extra: true, destructive: true, add: handler((*Server).runCode),
		desc: "Run code on a Jupyter kernel in a sandbox (its code interpreter) and wait for it to end; returns " +
			"its output in logs, the values it produced in result (as text), its execution_count, and error " +
			"(name, value, traceback) when it raised. With a context_id (from an earlier call's id) the code " +
			"sees what earlier runs there left; without one it runs in the language's default context, which " +
			"keeps its state too. The sandbox needs Jupyter (see osb's docs/server.md)."}
}

type codeRunArgs struct {
	target
	Code      string  `json:"code" jsonschema:"The code to run, e.g. \"import math\\nmath.pi\"."`
	Language  string  `json:"language,omitempty" default:"python" jsonschema:"Language of the kernel: python, bash, java, javascript, typescript or go, as the sandbox has them."`
	ContextID *string `json:"context_id,omitempty" jsonschema:"Run in this context (the id of an earlier run) to keep its state."`
}

// runCode follows a code run to its end; the answer is the official SDK's
// Execution, with no exit code (code has none).
func (s *Server) runCode(ctx context.Context, _ *mcp.CallToolRequest, a codeRunArgs) (*execution, error) {
	if strings.TrimSpace(a.Code) == "" {
		return nil, usage("code must not be empty")
	}
	dp, err := s.execd(ctx, a.target)
	if err != nil {
		return nil, err
	}
	req := &client.RunCodeRequest{Context: client.CodeContext{Language: a.Language}, Code: a.Code}
	if req.Context.Language == "" {
		req.Context.Language = "python"
	}
	if a.ContextID != nil {
		req.Context.ID = *a.ContextID
	}
	run := &codeRun{out: newOutputTail(s.serverBudget()), result: []executionResult{}}
	end, err := ops.RunCode(ctx, dp, req, ops.CommandRun{Output: run, Grace: interruptWait})
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err() // the kernel was interrupted
	case err != nil:
		return nil, err
	}
	ex := newExecution(end, run.out, codeReadOn)
	ex.ExecutionCount, ex.Result = run.count, run.result
	return ex, nil
}

// codeReadOn tells how to get output that the budget cut from a run.
const codeReadOn = "To read all of it, have the code write its output to a file and read that with file_read, range_header for each part."

// codeRun keeps one code run's events (ops.CommandOutput) for the official
// SDK's Execution.
type codeRun struct {
	ops.Unbuffered
	out    *outputTail
	count  *int
	result []executionResult
}

// Write adds one event before the terminal one to the execution.
func (r *codeRun) Write(ev *client.Event) {
	switch ev.Type {
	case client.EventStdout, client.EventStderr:
		if len(ev.Data) > 0 {
			r.out.add(string(ev.Data), ev.Timestamp, ev.Type == client.EventStderr)
		}
	case client.EventCount:
		n := ev.ExecutionCount
		r.count = &n
	case client.EventResult:
		var bundle struct {
			Text *string `json:"text"`
		}
		json.Unmarshal(ev.Results, &bundle)
		r.result = append(r.result, executionResult{Text: bundle.Text, Timestamp: ev.Timestamp})
	}
}
