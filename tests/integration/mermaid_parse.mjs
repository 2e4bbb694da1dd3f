// Parse a Mermaid file with mermaid's own parser (the one GitHub and mermaid-cli run), in Node with jsdom.
// Usage: KG_NODE_MODULES=<folder>/node_modules node mermaid_parse.mjs FILE  (after `npm install mermaid@11 jsdom@24`)
// Prints {"ok": true, "type": ...} or {"ok": false, "error": ...} (exit 1).
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.KG_NODE_MODULES, "x.js"));
const { JSDOM } = require("jsdom");
const dom = new JSDOM("<!doctype html><html><body></body></html>");
globalThis.window = dom.window; globalThis.document = dom.window.document;
globalThis.DOMParser = dom.window.DOMParser;
const { default: mermaid } = await import(require.resolve("mermaid"));
mermaid.initialize({ startOnLoad: false });
const text = fs.readFileSync(process.argv[2], "utf8");
try {
  const r = await mermaid.parse(text);
  console.log(JSON.stringify({ ok: true, type: r.diagramType, chars: text.length }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e.message || e).slice(0, 300) }));
  process.exitCode = 1;
}
