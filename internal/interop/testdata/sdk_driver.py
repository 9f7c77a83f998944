"""Drive the official OpenSandbox Python SDK against a server.

The server's address and key come from OPEN_SANDBOX_DOMAIN and
OPEN_SANDBOX_API_KEY. The test made two sandboxes beforehand, so that a
failing create fails only the steps about creating: OSB_INTEROP_SANDBOX (its
env holds GREETING) and OSB_INTEROP_EGRESS_SANDBOX (made with a network
policy and the credential proxy). Every step prints one JSON line,
{"step": NAME, "ok": true, "value": ...} or {"step": NAME, "ok": false,
"error": ...}; the Go test checks the values. A failed step does not stop
the run: later steps that need what it would have made fail on their own.
sdk_driver.mjs runs the same steps through the JavaScript SDK, with the
same names and values.
"""

import json
import os
import sys
import time
import traceback
from datetime import datetime, timedelta, timezone

from opensandbox import SandboxManagerSync, SandboxSync
from opensandbox.models.execd import RunCommandOpts
from opensandbox.models.filesystem import (
    ContentReplaceEntry,
    MoveEntry,
    SearchEntry,
    SetPermissionEntry,
    WriteEntry,
)
from opensandbox.models.sandboxes import (
    NetworkRule,
    SandboxFilter,
    SnapshotFilter,
)
from opensandbox.models.templates import CreateTemplateRequest, TemplateFilter

STEPS = []
state = {}
manager = SandboxManagerSync.create()


def step(fn):
    STEPS.append(fn)
    return fn


def texts(messages):
    return [m.text for m in messages]


def outcome(execution):
    """What a run gave back: the events as they came, and the exit."""
    error = None
    if execution.error is not None:
        error = {"name": execution.error.name, "value": execution.error.value}
    return {
        "stdout": texts(execution.logs.stdout),
        "stderr": texts(execution.logs.stderr),
        "exit_code": execution.exit_code,
        "error": error,
    }


def wait(what, cond, seconds=60):
    deadline = time.monotonic() + seconds
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError("gave up waiting for " + what)
        time.sleep(0.1)


def entry(info):
    return {"path": info.path, "type": info.entry_type, "mode": info.mode, "size": info.size}


@step
def connect():
    state["sb"] = SandboxSync.connect(os.environ["OSB_INTEROP_SANDBOX"])
    return {"healthy": state["sb"].is_healthy()}


@step
def create():
    sb = SandboxSync.create(
        "python:3.11",
        timeout=timedelta(minutes=20),
        env={"GREETING": "hi there"},
        metadata={"suite": "sdk"},
    )
    state["created"] = sb
    return {"id": sb.id}


@step
def get_info():
    info = state["created"].get_info()
    return {
        "id": info.id,
        "state": info.status.state,
        "image": info.image.image if info.image else None,
        "metadata": info.metadata,
        "entrypoint": info.entrypoint,
        "has_expiry": info.expires_at is not None,
    }


@step
def list_sandboxes():
    page = manager.list_sandbox_infos(SandboxFilter(states=["Running"], metadata={"suite": "sdk"}))
    return {"ids": [s.id for s in page.sandbox_infos], "total": page.pagination.total_items}


@step
def endpoint():
    ep = state["sb"].get_endpoint(44772)
    return {"has_endpoint": bool(ep.endpoint)}


@step
def run_lines():
    return outcome(state["sb"].commands.run("echo a; echo; printf 'b\\r\\nc\\n'; printf tail"))


@step
def run_env():
    return outcome(state["sb"].commands.run('echo "$GREETING"'))


@step
def run_failure():
    return outcome(state["sb"].commands.run("echo out; echo err >&2; exit 3"))


@step
def run_workdir():
    return outcome(state["sb"].commands.run("pwd", opts=RunCommandOpts(working_directory="/tmp")))


@step
def run_timeout():
    return outcome(state["sb"].commands.run("sleep 300", opts=RunCommandOpts(timeout=timedelta(seconds=1))))


@step
def set_env():
    sb = state["sb"]
    sb.commands.set_env("LATER", "set by the SDK's set_env")
    return outcome(sb.commands.run('echo "$LATER"'))


@step
def background():
    cmds = state["sb"].commands
    started = cmds.run("echo one; echo two >&2; exit 4", opts=RunCommandOpts(background=True))
    wait("the background command", lambda: not cmds.get_command_status(started.id).running)
    status = cmds.get_command_status(started.id)
    logs = cmds.get_background_command_logs(started.id)
    rest = cmds.get_background_command_logs(started.id, cursor=logs.cursor)
    return {
        "running": status.running,
        "exit_code": status.exit_code,
        "content": logs.content,
        "after_cursor": rest.content,
    }


@step
def interrupt():
    cmds = state["sb"].commands
    started = cmds.run("sleep 300", opts=RunCommandOpts(background=True))
    cmds.interrupt(started.id)
    wait("the interrupted command", lambda: not cmds.get_command_status(started.id).running)
    return {"running": cmds.get_command_status(started.id).running}


@step
def session():
    cmds = state["sb"].commands
    sid = cmds.create_session(working_directory="/tmp")
    first = outcome(cmds.run_in_session(sid, "pwd; cd /workspace; export X=kept"))
    second = outcome(cmds.run_in_session(sid, 'pwd; echo "$X"; echo err >&2'))
    elsewhere = outcome(cmds.run_in_session(sid, "pwd", working_directory="/root"))
    cmds.delete_session(sid)
    return {"first": first["stdout"], "second": second["stdout"], "elsewhere": elsewhere["stdout"]}


@step
def files():
    fs = state["sb"].files
    fs.create_directories([WriteEntry(path="/workspace/sdk/sub", mode=700)])
    fs.write_file("/workspace/sdk/notes.txt", "hello world\nsecond line\n", mode=640)
    fs.write_file("/workspace/sdk/data.bin", b"\x00\xffbytes\r\n")
    out = {
        "read": fs.read_file("/workspace/sdk/notes.txt"),
        "bytes": list(fs.read_bytes("/workspace/sdk/data.bin")),
        "range": fs.read_file("/workspace/sdk/notes.txt", range_header="bytes=6-10"),
    }
    info = fs.get_file_info(["/workspace/sdk/notes.txt"])
    out["info"] = entry(info["/workspace/sdk/notes.txt"])
    out["search"] = sorted(e.path for e in fs.search(SearchEntry(path="/workspace/sdk", pattern="*.txt")))
    fs.set_permissions([SetPermissionEntry(path="/workspace/sdk/notes.txt", mode=600)])
    out["mode_after_chmod"] = fs.get_file_info(["/workspace/sdk/notes.txt"])["/workspace/sdk/notes.txt"].mode
    fs.replace_contents([ContentReplaceEntry(path="/workspace/sdk/notes.txt", old_content="world", new_content="there")])
    fs.move_files([MoveEntry(src="/workspace/sdk/notes.txt", dest="/workspace/sdk/sub/moved.txt")])
    out["after_move"] = fs.read_file("/workspace/sdk/sub/moved.txt")
    fs.delete_files(["/workspace/sdk/data.bin"])
    out["after_delete"] = sorted(e.path for e in fs.search(SearchEntry(path="/workspace/sdk", pattern="*")))
    fs.delete_directories(["/workspace/sdk"])
    out["dir_gone"] = not any(
        e.path.startswith("/workspace/sdk") for e in fs.search(SearchEntry(path="/workspace", pattern="*"))
    )
    return out


@step
def read_os_release():
    return {"has_id": "ID=" in state["sb"].files.read_file("/etc/os-release")}


@step
def metrics():
    m = state["sb"].get_metrics()
    return {"cpus_positive": m.cpu_count > 0, "memory_positive": m.memory_total_in_mib > 0}


@step
def renew():
    renewed = state["sb"].renew(timedelta(minutes=45))
    left = renewed.expires_at - datetime.now(timezone.utc)
    return {"extended": timedelta(minutes=44) < left <= timedelta(minutes=45)}


@step
def egress():
    sb = SandboxSync.connect(os.environ["OSB_INTEROP_EGRESS_SANDBOX"])
    state["egress_sb"] = sb
    before = sb.get_egress_policy()
    sb.patch_egress_rules([NetworkRule(action="allow", target="pypi.org")])
    after = sb.get_egress_policy()
    return {
        "before": [[r.action, r.target] for r in before.egress or []],
        "default": after.default_action,
        "after": [[r.action, r.target] for r in after.egress or []],
    }


@step
def credential_vault():
    vault = state["egress_sb"].credential_vault
    created = vault.create(
        credentials=[{"name": "gh", "source": {"type": "inline", "value": "s3cret-value"}}],
        bindings=[{
            "name": "ghb",
            "match": {"hosts": ["api.example.com"], "paths": ["/v1/*"]},
            "auth": {"type": "bearer", "credential": "gh"},
        }],
    )
    patched = vault.patch(
        expected_revision=created.revision,
        credentials={"add": [{"name": "k2", "source": {"type": "inline", "value": "s3cret-two"}}]},
    )
    out = {
        "created_revision": created.revision,
        "revision": patched.revision,
        "credentials": sorted(c.name for c in vault.list_credentials()),
        "credential": vault.get_credential("gh").name,
        "binding_hosts": vault.get_binding("ghb").match.hosts,
        "bindings": [b.name for b in vault.list_bindings()],
    }
    dump = json.dumps(vault.get().model_dump(mode="json"))
    out["secret_hidden"] = "s3cret" not in dump
    vault.delete()
    return out


@step
def pause_resume():
    sb = state["sb"]
    sb.pause()
    paused = wait("Paused", lambda: sb.get_info().status.state == "Paused" and "Paused")
    resumed = SandboxSync.resume(sb.id)
    state["sb"] = resumed
    return {"paused": paused, "state": resumed.get_info().status.state,
            "echo": outcome(resumed.commands.run("echo back"))["stdout"]}


@step
def snapshots():
    sb = state["sb"]
    sb.files.write_file("/workspace/kept.txt", "kept")
    snap = manager.create_snapshot(sb.id, name="sdk-snap")
    ready = wait("the snapshot", lambda: manager.get_snapshot(snap.id).status.state == "Ready" and "Ready")
    listed = manager.list_snapshots(SnapshotFilter(sandbox_id=sb.id))
    restored = SandboxSync.create(snapshot_id=snap.id)
    kept = restored.files.read_file("/workspace/kept.txt")
    restored.kill()
    manager.delete_snapshot(snap.id)
    return {"name": snap.name, "ready": ready, "listed": [s.id == snap.id for s in listed.snapshot_infos], "kept": kept}


@step
def templates():
    tpl = manager.create_template(CreateTemplateRequest(image="python:3.11", publish="s3://bucket/publish", metadata={"suite": "sdk"}))
    got = manager.get_template(tpl.template_id)
    listed = manager.list_templates(TemplateFilter(metadata={"suite": "sdk"}))
    sb = SandboxSync.create_from_template(tpl.template_id, timeout=timedelta(minutes=10))
    echo = outcome(sb.commands.run("echo from template"))["stdout"]
    sb.patch_egress_rules([NetworkRule(action="allow", target="example.org")])
    rules = [[r.action, r.target] for r in sb.get_egress_policy().egress or []]
    sb.kill()
    manager.delete_template(tpl.template_id)
    return {"image": got.image, "listed": [t.template_id == tpl.template_id for t in listed.template_infos],
            "echo": echo, "rules": rules}


@step
def kill():
    sb = state["created"]
    sb.kill()
    try:
        sb.get_info()
        gone = False
    except Exception:
        gone = True
    return {"gone": gone}


for fn in STEPS:
    try:
        line = {"step": fn.__name__, "ok": True, "value": fn()}
    except Exception:
        line = {"step": fn.__name__, "ok": False, "error": traceback.format_exc(limit=6)}
    print(json.dumps(line), flush=True)
sys.exit(0)
