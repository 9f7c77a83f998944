"""Drive the official OpenSandbox code-interpreter SDK (Python) against a server.

The server's address and key come from OPEN_SANDBOX_DOMAIN and
OPEN_SANDBOX_API_KEY; OSB_INTEROP_SANDBOX is a sandbox the test made. Every
step prints one JSON line, {"step": NAME, "ok": true, "value": ...} or
{"step": NAME, "ok": false, "error": ...}, as sdk_driver.py does; the Go
test (code_interpreter_test.go) checks the values.
"""

import json
import os
import threading
import traceback

from code_interpreter import CodeInterpreterSync
from code_interpreter.models.code_sync import CodeContextSync
from opensandbox import SandboxSync
from opensandbox.models.execd_sync import ExecutionHandlersSync

STEPS = []
state = {}


def step(fn):
    STEPS.append(fn)
    return fn


def outcome(execution):
    """What a run gave back, as the SDK shows it."""
    error = None
    if execution.error is not None:
        error = {"name": execution.error.name, "value": execution.error.value}
    return {
        "stdout": [m.text for m in execution.logs.stdout],
        "stderr": [m.text for m in execution.logs.stderr],
        "results": [r.text for r in execution.result],
        "count": execution.execution_count,
        "error": error,
        "complete": execution.complete is not None,
    }


@step
def create_context():
    sb = SandboxSync.connect(os.environ["OSB_INTEROP_SANDBOX"])
    state["ci"] = CodeInterpreterSync.create(sandbox=sb)
    ctx = state["ci"].codes.create_context("python")
    state["ctx"] = ctx
    return {"language": ctx.language, "has_id": bool(ctx.id)}


@step
def get_context():
    got = state["ci"].codes.get_context(state["ctx"].id)
    return {"same_id": got.id == state["ctx"].id, "language": got.language}


@step
def state_kept():
    codes, ctx = state["ci"].codes, state["ctx"]
    first = codes.run("x = 40\nprint('set x')", context=ctx)
    second = codes.run("x + 2", context=ctx)
    return {"first": outcome(first), "second": outcome(second)}


@step
def error():
    return outcome(state["ci"].codes.run("print('before')\n1/0", context=state["ctx"]))


@step
def interrupt():
    codes, ctx = state["ci"].codes, state["ctx"]
    ids = []

    def on_stdout(_):
        # The loop has begun: interrupt it, once.
        if len(ids) == 1:
            ids.append("sent")
            codes.interrupt(ids[0])

    handlers = ExecutionHandlersSync(on_init=lambda init: ids.append(init.id), on_stdout=on_stdout)
    result = [None]
    run = threading.Thread(target=lambda: result.__setitem__(0, codes.run(
        # One write: print() writes the text and the newline apart, and the
        # kernel may send them as two stream messages.
        "import sys, time\nsys.stdout.write('looping\\n')\nsys.stdout.flush()\nwhile True:\n    time.sleep(0.05)",
        context=ctx, handlers=handlers)))
    run.start()
    run.join(180)
    if run.is_alive():
        raise TimeoutError("the interrupted run did not end")
    after = codes.run("x", context=ctx)
    return {"interrupted": outcome(result[0]), "id_is_context": ids[0] == ctx.id, "after": outcome(after)}


@step
def default_context():
    return outcome(state["ci"].codes.run("'no context given'", language="python"))


@step
def unknown_context():
    try:
        state["ci"].codes.run("1", context=CodeContextSync(id="no-such-context", language="python"))
    except Exception as e:
        return {"raised": type(e).__name__, "status": getattr(e, "status_code", None)}
    return {"raised": None}


@step
def list_and_delete():
    codes = state["ci"].codes
    other = codes.create_context("python")
    listed = {c.id for c in codes.list_contexts("python")}
    codes.delete_context(state["ctx"].id)
    after_one = {c.id for c in codes.list_contexts("python")}
    codes.delete_contexts("python")
    return {
        "listed_both": state["ctx"].id in listed and other.id in listed,
        "deleted_one": state["ctx"].id not in after_one and other.id in after_one,
        "after_all": len(codes.list_contexts("python")),
    }


def main():
    for fn in STEPS:
        try:
            line = {"step": fn.__name__, "ok": True, "value": fn()}
        except Exception:
            line = {"step": fn.__name__, "ok": False, "error": traceback.format_exc()}
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
