"""The OpenClaw part of bench/runtime_hooks.py: kg's installed handler.js driven by node with each event."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

DRIVER = r"""// Drive kg's installed OpenClaw handler as the gateway does:
// import it, await it with each event (KG_HOOK_WAIT=1).
const [handlerPath, home, ids] = [process.argv[2], process.argv[3], process.argv[4].split(",")];
const { default: handler } = await import(handlerPath);
const events = [];
const main = "agent:main:main";
const boot = (files) => ({ type: "agent", action: "bootstrap", sessionKey: main,
                           context: { bootstrapFiles: files, workspaceDir: "/x" } });
events.push(boot([]), boot([{ name: "AGENTS.md", path: "/x/AGENTS.md", content: "# mine", missing: false }]),
            boot(undefined),
            { type: "agent", action: "bootstrap" }, { type: "gateway", action: "startup", context: {} });
for (const id of ids) {
  const file = `${home}/.openclaw/agents/main/sessions/${id}.jsonl`;
  events.push({ type: "command", action: "new", sessionKey: main,
                context: { previousSessionEntry: { sessionId: id } } });
  events.push({ type: "command", action: "stop", sessionKey: main, context: { sessionEntry: { sessionId: id } } });
  events.push({ type: "command", action: "reset", sessionKey: main,
                context: { sessionEntry: { sessionId: id, sessionFile: file } } });
  events.push({ type: "session", action: "end", sessionKey: main, context: { sessionId: id } });
}
events.push({ type: "command", action: "new", sessionKey: "agent:../../etc:main",
              context: { previousSessionEntry: { sessionId: "../../etc/passwd" } } });
events.push({ type: "command", action: "new", context: { previousSessionEntry: { sessionFile: "/etc/passwd" } } });
events.push({ type: "command", action: "new", context: null },
            { type: "message", action: "received", context: {} }, {});
let n = 0;
for (const e of events) {
  const t = Date.now();
  await handler(e);
  n++;
  if (e.context && Array.isArray(e.context.bootstrapFiles)) {
    const a = e.context.bootstrapFiles.find((f) => f.name === "AGENTS.md");
    console.log(`bootstrap: AGENTS.md ${a ? a.content.length : "none"} chars, ${Date.now() - t} ms`);
  }
}
console.log(`events ${n}`);
"""
DATA = Path("/work/shared/data/runtimes/openclaw/transcripts")
KG = str(Path(sys.executable).with_name("kg"))
base = Path(sys.argv[sys.argv.index("--dir") + 1] if "--dir" in sys.argv else "/tmp/kg-hooks-openclaw")
shutil.rmtree(base, ignore_errors=True)
base.mkdir(parents=True)
home, ws = base / "home", base / "project"
home.mkdir()
ws.mkdir()
env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {
    "HOME": str(home),
    "KG_SERVER": "0",
    "KG_HOOK_WAIT": "1",
}
subprocess.run([KG, "-w", str(ws), "init"], env=env, cwd=ws, capture_output=True, check=True)
subprocess.run([KG, "-w", str(ws), "install", "openclaw"], env=env, cwd=ws, capture_output=True, check=True)
sess = home / ".openclaw" / "agents" / "main" / "sessions"
sess.mkdir(parents=True)
ids = []
for t in sorted(DATA.glob("*.jsonl")):
    shutil.copy(t, sess / t.name)
    ids.append(t.stem)


def snap():
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(home.rglob("*"))
        if p.is_file() and ".cache" not in p.parts
    }


before = snap()
mjs = base / "drive.mjs"
mjs.write_text(DRIVER)
r = subprocess.run(
    ["node", str(mjs), str(ws / "hooks/kaizen-kg/handler.js"), str(home), ",".join(ids)],
    env=env,
    cwd=ws,
    capture_output=True,
    text=True,
    timeout=900,
)
print("node exit", r.returncode)
print(r.stdout[-1500:])
print("STDERR", r.stderr[-3000:])
print("home unchanged", snap() == before)
print("outside:", [str(p) for p in base.iterdir()])
rows = json.loads(
    subprocess.run(
        [KG, "-w", str(ws), "list", "--limit", "300", "--json"], env=env, capture_output=True, text=True
    ).stdout
)
print("entries", len(rows), "sessions", sorted(p.name for p in (ws / "memory/sessions").glob("*.md")))
