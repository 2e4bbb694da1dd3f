"""The OpenClaw hook kg installs (`hooks/kaizen-kg/HOOK.md` and `handler.js`), as text. Pure.

OpenClaw's hooks are in-process handlers with no exit codes; a handler that waits blocks the gateway. This one
returns at once and runs `kg` detached, except for the very first brief (no saved copy yet), which it awaits
without blocking the event loop.
"""

from __future__ import annotations

import json
from typing import Any

SERVER_NAME = "kaizen-kg"
OPENCLAW_MARK = "<!-- kaizen-kg managed: remove with `kg uninstall openclaw` -->"


# session:end is listed by OpenClaw's docs as a planned internal event (today the plugin hook `session_end`): the
# handler listens for it so a session that ends without /new, /reset or /stop is reflected on once it exists.
OPENCLAW_EVENTS = ["agent:bootstrap", "command:new", "command:reset", "command:stop", "session:end",
                   "gateway:startup"]


def openclaw_hook_md() -> str:
    meta = json.dumps({"openclaw": {"emoji": "🧠", "events": OPENCLAW_EVENTS}}, ensure_ascii=False)
    return f"""---
name: {SERVER_NAME}
description: "kaizen-kg learning memory: kg's brief at session start; reflection and a summary when a session ends"
metadata: {meta}
---

# kaizen-kg

{OPENCLAW_MARK}

Connects OpenClaw to kaizen-kg, the learning memory kept in the kg workspace.

## What it does

- **agent:bootstrap**: adds kg's brief (pending high-priority items, verifications due, patterns ready for
  promotion, proposals waiting, the watch list) to the agent's AGENTS.md context. It uses the brief kg saved
  in `memory/.hook-context.txt` when the handler saved it for this same session, and refreshes it in the
  background; the first bootstrap of a session asks kg for its own brief (right after /new or /reset, once the
  ending session's end answered, within 5 s), else is shown the saved one without its Session line, so the
  agent is never told the ended session is its own. It passes the conversation's sessionKey: OpenClaw's daily
  reset and idle expiry start a new sessionId with no event, and kg then ends the session before on the same
  conversation, reflecting on its transcript as /new does.
- **command:new / command:reset / command:stop / session:end**: runs `kg hook session-end` on the session's
  transcript in the background (the entry's `sessionFile`, else
  `~/.openclaw/agents/<agentId>/sessions/<sessionId>.jsonl` or its `.reset.` archive): the corrections, errors
  and requests in it are logged once each, the session summary is written to `memory/sessions/` (not on
  /stop, which aborts a run while the session goes on), and the saved brief is refreshed, so the next session
  starts with what this one taught. kg answers as soon as it has named the session it ends (the reflection goes
  on in the background); the next session start (a bootstrap right after /new) waits for that answer, so it
  opens a new session instead of going on with the one being ended. Each kg session is tied to OpenClaw's
  sessionId: an end ends the session started for the id it names, even after the next session started.
- **gateway:startup**: refreshes `memory/.hook-context.txt`.

The handler never waits for kg except for the very first brief and a bootstrap right after a session end: kg
runs detached, so the gateway is not held up
(`KG_HOOK_WAIT=1` makes it wait, to see kg's errors while debugging).

## Requirements

The `kg` command (the path is set in handler.js; the `KG_BIN` and `KG_WORKSPACE` environment variables
override it). Remove with `kg uninstall openclaw`.
"""


def openclaw_handler(ws: Any, kg_bin: str) -> str:
    """handler.js calling `kg_bin` (the KG_BIN environment variable overrides it) on `ws`."""
    return """// kaizen-kg managed hook (kg install openclaw); remove with `kg uninstall openclaw`.
import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const KG = process.env.KG_BIN || %(kg)s;
const WORKSPACE = process.env.KG_WORKSPACE || %(ws)s;
const BRIEF = path.join(WORKSPACE, "memory", ".hook-context.txt");
const FIRST_BRIEF_MS = 10000;
const HAND_OVER_MS = 30000;
const AFTER_END_MS = 5000;
const SAFE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function args(rest) {
  return ["-w", WORKSPACE, ...rest, "--runtime", "openclaw"];
}

// Settles once the last session end kg was started for has answered: by then it has named the session it ends
// and that session is no longer current. A session start waits for it (without holding up the handler): /new and
// the next run's bootstrap come back to back, and a start that ran first went on with the old session, which
// the late end then closed.
let handedOver = Promise.resolve();
// Session ends started and not yet answered.
let endsInFlight = 0;

// Run kg in its own process group, not waited for: the handler returns at once. (KG_HOOK_WAIT=1 waits for it,
// to see its errors while debugging a hook.) Settles once kg is started; `answered`, once it has exited.
function detached(rest, answered = () => {}) {
  return new Promise((resolve) => {
    try {
      const wait = process.env.KG_HOOK_WAIT === "1";
      const stdio = wait ? ["ignore", "ignore", "inherit"] : "ignore";
      const child = spawn(KG, args(rest), { detached: !wait, stdio });
      child.on("error", (err) => { console.error(`kaizen-kg: ${err.message}`); answered(null); resolve(); });
      child.on("exit", (code) => { answered(code); if (wait) resolve(); });
      if (!wait) { child.unref(); resolve(); }
    } catch (err) {
      console.error(`kaizen-kg: ${err && err.message ? err.message : err}`);
      answered(null);
      resolve();
    }
  });
}

// A session end: started once the ends before it have answered, in event order; not waited for. (A kg that has
// not answered after HAND_OVER_MS is waited for no longer, so that one stuck process does not hold back every
// session start after it.)
function sessionEnd(rest) {
  const before = handedOver;
  let answered;
  endsInFlight += 1;
  handedOver = new Promise((resolve) => {
    let done = false;
    answered = () => { if (!done) { done = true; endsInFlight -= 1; } resolve(); };
    const timer = setTimeout(answered, HAND_OVER_MS);
    if (timer.unref) timer.unref();
  });
  const started = before.then(() => detached(rest, answered));
  return process.env.KG_HOOK_WAIT === "1" ? started : Promise.resolve();
}

// A session start (or brief refresh) once every session end before it has answered; not waited for.
// `answered(code)` once kg has exited.
function afterEnds(rest, answered = () => {}) {
  const started = handedOver.then(() => detached(rest, answered));
  return process.env.KG_HOOK_WAIT === "1" ? started : Promise.resolve();
}

// The OpenClaw session the saved brief was last written for by a session start of this handler, or null: that
// brief names the kg session of that OpenClaw session, so only its own bootstraps are shown it. Any other (the
// first after /new or /reset, after the daily reset or an idle expiry, after the gateway restarted) asks kg for
// its own brief; when kg cannot answer in time it is shown the saved one without its Session line.
let savedFor = null;
let sessionEnds = 0; // session ends handed over (/new, /reset, session:end): a start begun before one is stale

function withoutSession(text) {
  return text.split("\\n").filter((line) => !/^- Session: /.test(line)).join("\\n");
}

// The first brief ever has no saved copy: ask kg without blocking the event loop (given up after FIRST_BRIEF_MS;
// KG_HOOK_WAIT=1 waits however long kg takes, as on a loaded machine), after any session end before it answered.
async function briefNow(start, id) {
  await handedOver;
  const ends = sessionEnds;
  return new Promise((resolve) => {
    const wait = process.env.KG_HOOK_WAIT === "1";
    execFile(KG, args([...start, "--json"]),
      { encoding: "utf8", timeout: wait ? 0 : FIRST_BRIEF_MS },
      (err, stdout) => {
        if (err) { console.error(`kaizen-kg: ${err.message}`); resolve(null); return; }
        try {
          const text = JSON.parse(stdout).text;
          if (ends === sessionEnds) savedFor = id;
          resolve(text);
        } catch { resolve(null); }
      });
  });
}

// Whether `promise` settles within `ms`.
function settledWithin(promise, ms) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms); // (not unref'd: the handler is awaiting it)
    promise.then(() => { clearTimeout(timer); resolve(true); });
  });
}

// The session's transcript. OpenClaw's session entry names it in sessionFile only when it overrides the default,
// ~/.openclaw/agents/<agentId>/sessions/<sessionId>.jsonl (the agent id is the second part of the session key,
// agent:<agentId>:...); /stop gives only the sessionId. A /reset may have archived it as <file>.reset.<time>.
// The id of the session an event is about: the pre-reset entry's on /new and /reset, else the event's.
function sessionIdOf(ctx) {
  const entry = ctx.previousSessionEntry || ctx.sessionEntry || {};
  return String(entry.sessionId || ctx.sessionId || "");
}

// kg ties the session it starts to OpenClaw's sessionId, and a session end ends the kg session tied to the id it
// names, not whichever is current (a session:end can come after the next session started).
function naming(rest, id) {
  return SAFE.test(id) ? [...rest, "--runtime-session", id] : rest;
}

function transcriptOf(event, ctx) {
  const entry = ctx.previousSessionEntry || ctx.sessionEntry || {};
  let file = entry.sessionFile || ctx.sessionFile || null;
  const id = sessionIdOf(ctx);
  if (!file && SAFE.test(id)) {
    const key = /^agent:([^:]+):/.exec(String(event.sessionKey || ctx.sessionKey || ""));
    const agent = String(ctx.agentId || (key ? key[1] : "main"));
    if (SAFE.test(agent)) file = path.join(os.homedir(), ".openclaw", "agents", agent, "sessions", `${id}.jsonl`);
  }
  if (!file || existsSync(file)) return file;
  try {
    const stem = path.basename(file) + ".reset.";
    const archived = readdirSync(path.dirname(file)).filter((n) => n.startsWith(stem)).sort();
    if (archived.length) return path.join(path.dirname(file), archived[archived.length - 1]);
  } catch {
    // no such folder: kg says it cannot read the transcript and still writes the summary
  }
  return file;
}

// A bootstrap's session start: tied to the OpenClaw session (`naming`), on its conversation (the sessionKey) with its
// transcript, so that kg ends the session before it on that conversation when OpenClaw started this one without
// an event (its daily reset at 04:00, an idle expiry), reflecting on that session's transcript as /new would.
function startOf(event, ctx, id) {
  const rest = ["hook", "session-start", "--start-session", "--write"];
  const thread = String(event.sessionKey || ctx.sessionKey || "");
  if (thread && SAFE.test(id)) {
    rest.push(`--thread=${thread}`);
    const transcript = transcriptOf(event, ctx);
    if (transcript) rest.push(`--transcript=${transcript}`);
  }
  return naming(rest, id);
}

function addToBootstrap(ctx, text) {
  if (!Array.isArray(ctx.bootstrapFiles)) return false;
  const agents = ctx.bootstrapFiles.find((f) => f && f.name === "AGENTS.md");
  if (agents && !agents.missing && typeof agents.content === "string") {
    agents.content = agents.content + "\\n\\n" + text;
  } else if (agents) {
    agents.content = text;
    agents.missing = false;
  } else {
    const file = path.join(WORKSPACE, "AGENTS.md");
    ctx.bootstrapFiles.push({ name: "AGENTS.md", path: file, content: text, missing: false });
  }
  return true;
}

const handler = async (event) => {
  try {
    const ctx = event.context || {};
    const key = `${event.type}:${event.action}`;
    if (key === "agent:bootstrap") {
      const id = sessionIdOf(ctx);
      const start = startOf(event, ctx, id);
      const saved = existsSync(BRIEF) ? readFileSync(BRIEF, "utf8") : null;
      let text = null;
      if (saved && id && savedFor === id) {
        // this session's own saved brief: shown at once, refreshed in the background
        text = saved;
        const ends = sessionEnds;
        await afterEnds(start, (code) => { if (code === 0 && ends === sessionEnds) savedFor = id; });
      } else {
        // A new session here (or one this handler has not started): the saved brief names another session, the
        // ended one right after /new (QA1 #7). Asked for now, once the ends before it have answered (within
        // AFTER_END_MS); else the saved one without its Session line, the start going on in the background.
        if (endsInFlight === 0 || !saved || await settledWithin(handedOver, AFTER_END_MS)) {
          text = await briefNow(start, id);
        }
        if (!text && saved) {
          text = withoutSession(saved);
          const ends = sessionEnds;
          await afterEnds(start, (code) => { if (code === 0 && ends === sessionEnds) savedFor = id; });
        }
      }
      if (text) addToBootstrap(ctx, text.trim());
    } else if (key === "gateway:startup") {
      await afterEnds(["hook", "session-start", "--write"]);
    } else if (["command:new", "command:reset", "command:stop", "session:end"].includes(key)) {
      const transcript = transcriptOf(event, ctx);
      const rest = ["hook", "session-end"];
      if (transcript) rest.push("--transcript", transcript);
      if (key === "command:stop") {
        rest.push("--no-summary"); // /stop aborts a run; the session goes on
      } else {
        sessionEnds += 1; // the saved brief names the session this ends: no bootstrap is shown it as its own
        savedFor = null;
      }
      await sessionEnd(naming(rest, sessionIdOf(ctx)));
    }
  } catch (err) {
    console.error(`kaizen-kg hook error: ${err && err.message ? err.message : err}`);
  }
};

export default handler;
""" % {"kg": json.dumps(kg_bin), "ws": json.dumps(str(ws.root))}  # noqa: UP031 - JS braces
