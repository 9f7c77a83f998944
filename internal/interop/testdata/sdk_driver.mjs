// Drive the official OpenSandbox JavaScript SDK against a server: the same
// steps, names, values and sandboxes made beforehand as sdk_driver.py (read
// its header), one JSON line per step. The SDK is imported from the directory in OSB_INTEROP_NODE_MODULES.
// This SDK version has no templates API and no setEnv, so those steps are
// not here.

import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.OSB_INTEROP_NODE_MODULES, "x.js"));
const { Sandbox, SandboxManager } = await import(require.resolve("@alibaba-group/opensandbox"));

const steps = [];
const state = {};
const manager = SandboxManager.create({});
const step = (name, fn) => steps.push([name, fn]);

const texts = (messages) => messages.map((m) => m.text);
const outcome = (ex) => ({
  stdout: texts(ex.logs.stdout),
  stderr: texts(ex.logs.stderr),
  exit_code: ex.exitCode ?? null,
  error: ex.error ? { name: ex.error.name, value: ex.error.value } : null,
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function wait(what, cond, seconds = 60) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await sleep(100);
  }
}
const need = (key) => {
  if (!state[key]) throw new Error(`needs ${key}, which an earlier step did not make`);
  return state[key];
};

step("connect", async () => {
  state.sb = await Sandbox.connect({ sandboxId: process.env.OSB_INTEROP_SANDBOX });
  return { healthy: await state.sb.isHealthy() };
});

step("create", async () => {
  const sb = await Sandbox.create({
    image: "python:3.11",
    timeoutSeconds: 20 * 60,
    env: { GREETING: "hi there" },
    metadata: { suite: "sdk" },
  });
  state.created = sb;
  return { id: sb.id };
});

step("get_info", async () => {
  const info = await need("created").getInfo();
  return {
    id: info.id,
    state: info.status.state,
    image: info.image ? info.image.uri : null,
    metadata: info.metadata,
    entrypoint: info.entrypoint,
    has_expiry: info.expiresAt != null,
  };
});

step("list_sandboxes", async () => {
  const page = await manager.listSandboxInfos({ states: ["Running"], metadata: { suite: "sdk" } });
  return { ids: page.items.map((s) => s.id), total: page.pagination.totalItems };
});

step("endpoint", async () => {
  const ep = await need("sb").getEndpoint(44772);
  return { has_endpoint: Boolean(ep.endpoint) };
});

step("run_lines", async () => outcome(await need("sb").commands.run("echo a; echo; printf 'b\\r\\nc\\n'; printf tail")));
step("run_env", async () => outcome(await need("sb").commands.run('echo "$GREETING"')));
step("run_failure", async () => outcome(await need("sb").commands.run("echo out; echo err >&2; exit 3")));
step("run_workdir", async () => outcome(await need("sb").commands.run("pwd", { workingDirectory: "/tmp" })));
step("run_timeout", async () => outcome(await need("sb").commands.run("sleep 300", { timeoutSeconds: 1 })));

step("background", async () => {
  const cmds = need("sb").commands;
  const started = await cmds.run("echo one; echo two >&2; exit 4", { background: true });
  await wait("the background command", async () => !(await cmds.getCommandStatus(started.id)).running);
  const status = await cmds.getCommandStatus(started.id);
  const logs = await cmds.getBackgroundCommandLogs(started.id);
  const rest = await cmds.getBackgroundCommandLogs(started.id, logs.cursor);
  return { running: status.running, exit_code: status.exitCode, content: logs.content, after_cursor: rest.content };
});

step("interrupt", async () => {
  const cmds = need("sb").commands;
  const started = await cmds.run("sleep 300", { background: true });
  await cmds.interrupt(started.id);
  await wait("the interrupted command", async () => !(await cmds.getCommandStatus(started.id)).running);
  return { running: (await cmds.getCommandStatus(started.id)).running };
});

step("session", async () => {
  const cmds = need("sb").commands;
  const sid = await cmds.createSession({ workingDirectory: "/tmp" });
  const first = outcome(await cmds.runInSession(sid, "pwd; cd /workspace; export X=kept"));
  const second = outcome(await cmds.runInSession(sid, 'pwd; echo "$X"; echo err >&2'));
  const elsewhere = outcome(await cmds.runInSession(sid, "pwd", { workingDirectory: "/root" }));
  await cmds.deleteSession(sid);
  return { first: first.stdout, second: second.stdout, elsewhere: elsewhere.stdout };
});

step("files", async () => {
  const fs = need("sb").files;
  const info = async (p) => (await fs.getFileInfo([p]))[p];
  await fs.createDirectories([{ path: "/workspace/sdk/sub", mode: 700 }]);
  await fs.writeFiles([
    { path: "/workspace/sdk/notes.txt", data: "hello world\nsecond line\n", mode: 640 },
    { path: "/workspace/sdk/data.bin", data: new Uint8Array([0, 255, 98, 121, 116, 101, 115, 13, 10]) },
  ]);
  const out = {
    read: await fs.readFile("/workspace/sdk/notes.txt"),
    bytes: Array.from(await fs.readBytes("/workspace/sdk/data.bin")),
    range: await fs.readFile("/workspace/sdk/notes.txt", { range: "bytes=6-10" }),
  };
  const notes = await info("/workspace/sdk/notes.txt");
  out.info = { path: notes.path, type: notes.type, mode: notes.mode, size: notes.size };
  const search = async (p, pattern) => (await fs.search({ path: p, pattern })).map((e) => e.path).sort();
  out.search = await search("/workspace/sdk", "*.txt");
  await fs.setPermissions([{ path: "/workspace/sdk/notes.txt", mode: 600 }]);
  out.mode_after_chmod = (await info("/workspace/sdk/notes.txt")).mode;
  await fs.replaceContents([{ path: "/workspace/sdk/notes.txt", oldContent: "world", newContent: "there" }]);
  await fs.moveFiles([{ src: "/workspace/sdk/notes.txt", dest: "/workspace/sdk/sub/moved.txt" }]);
  out.after_move = await fs.readFile("/workspace/sdk/sub/moved.txt");
  await fs.deleteFiles(["/workspace/sdk/data.bin"]);
  out.after_delete = await search("/workspace/sdk", "*");
  await fs.deleteDirectories(["/workspace/sdk"]);
  out.dir_gone = !(await search("/workspace", "*")).some((p) => p.startsWith("/workspace/sdk"));
  return out;
});

step("read_os_release", async () => ({ has_id: (await need("sb").files.readFile("/etc/os-release")).includes("ID=") }));

step("metrics", async () => {
  const m = await need("sb").getMetrics();
  return { cpus_positive: m.cpuCount > 0, memory_positive: m.memoryTotalMiB > 0 };
});

step("renew", async () => {
  const renewed = await need("sb").renew(45 * 60);
  const left = new Date(renewed.expiresAt) - Date.now();
  return { extended: left > 44 * 60e3 && left <= 45 * 60e3 };
});

step("egress", async () => {
  const sb = await Sandbox.connect({ sandboxId: process.env.OSB_INTEROP_EGRESS_SANDBOX });
  state.egress_sb = sb;
  const before = await sb.getEgressPolicy();
  await sb.patchEgressRules([{ action: "allow", target: "pypi.org" }]);
  const after = await sb.getEgressPolicy();
  const rules = (p) => (p.egress ?? []).map((r) => [r.action, r.target]);
  return { before: rules(before), default: after.defaultAction, after: rules(after) };
});

step("credential_vault", async () => {
  const vault = need("egress_sb").credentialVault;
  const created = await vault.create({
    credentials: [{ name: "gh", source: { type: "inline", value: "s3cret-value" } }],
    bindings: [
      {
        name: "ghb",
        match: { hosts: ["api.example.com"], paths: ["/v1/*"] },
        auth: { type: "bearer", credential: "gh" },
      },
    ],
  });
  const patched = await vault.patch({
    expectedRevision: created.revision,
    credentials: { add: [{ name: "k2", source: { type: "inline", value: "s3cret-two" } }] },
  });
  const out = {
    created_revision: created.revision,
    revision: patched.revision,
    credentials: (await vault.listCredentials()).map((c) => c.name).sort(),
    credential: (await vault.getCredential("gh")).name,
    binding_hosts: (await vault.getBinding("ghb")).match.hosts,
    bindings: (await vault.listBindings()).map((b) => b.name),
  };
  out.secret_hidden = !JSON.stringify(await vault.get()).includes("s3cret");
  await vault.delete();
  return out;
});

step("pause_resume", async () => {
  const sb = need("sb");
  await sb.pause();
  const paused = await wait("Paused", async () => (await sb.getInfo()).status.state === "Paused" && "Paused");
  const resumed = await sb.resume();
  state.sb = resumed;
  return {
    paused,
    state: (await resumed.getInfo()).status.state,
    echo: outcome(await resumed.commands.run("echo back")).stdout,
  };
});

step("snapshots", async () => {
  const sb = need("sb");
  await sb.files.writeFiles([{ path: "/workspace/kept.txt", data: "kept" }]);
  const snap = await manager.createSnapshot(sb.id, { name: "sdk-snap" });
  const ready = await wait("the snapshot", async () => (await manager.getSnapshot(snap.id)).status.state === "Ready" && "Ready");
  const listed = await manager.listSnapshots({ sandboxId: sb.id });
  const restored = await Sandbox.create({ snapshotId: snap.id });
  const kept = await restored.files.readFile("/workspace/kept.txt");
  await restored.kill();
  await manager.deleteSnapshot(snap.id);
  return { name: snap.name, ready, listed: listed.items.map((s) => s.id === snap.id), kept };
});

step("kill", async () => {
  const sb = need("created");
  await sb.kill();
  let gone = false;
  try {
    await sb.getInfo();
  } catch {
    gone = true;
  }
  return { gone };
});

for (const [name, fn] of steps) {
  let line;
  try {
    line = { step: name, ok: true, value: await fn() };
  } catch (err) {
    line = { step: name, ok: false, error: String(err?.stack ?? err) + (err?.error ? " " + JSON.stringify(err.error) : "") };
  }
  process.stdout.write(JSON.stringify(line) + "\n");
}
process.exit(0);
