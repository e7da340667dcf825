// sv-mcp end to end with the official MCP TypeScript SDK client: it connects over stdio, lists
// every tool, calls every read-only tool on a scene made from a drawing (the SDK validates each
// structuredContent against the tool's outputSchema and throws when it does not fit), applies
// an edit and reverts it, and checks that a view arrives as a PNG image block.
//   node client.mjs BIN_DIR DRAWING.png
// Exits non-zero on any failure; prints one line per tool and a summary.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const [binDir, drawing] = process.argv.slice(2).map((p) => resolve(p));
if (!binDir || !drawing) {
  console.error("usage: node client.mjs BIN_DIR DRAWING.png");
  process.exit(2);
}

let sdk;
try {
  sdk = {
    ...(await import("@modelcontextprotocol/sdk/client/index.js")),
    ...(await import("@modelcontextprotocol/sdk/client/stdio.js")),
  };
} catch (e) {
  console.error(`mcp client test: the MCP SDK is not installed (${e.message}); run scripts/setup (npm ci in test/mcp)`);
  process.exit(1);
}

const sdkVersion = JSON.parse(
  readFileSync(new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url)),
).version;

// A store whose HEAD is the drawing through the pipeline.
const dir = mkdtempSync(join(tmpdir(), "sv-mcp-sdk-"));
const sv = (exe, args, input) => execFileSync(join(binDir, exe), args, { cwd: dir, input, maxBuffer: 1 << 30 });
sv("sv-commit", ["init"]);
let scene = sv("sv-skeleton", [drawing]);
for (const stage of ["sv-fit", "sv-route", "sv-simulate"]) scene = sv(stage, [], scene);
const head = () => JSON.parse(sv("sv-commit", ["status", "--json"])).current_revision_id;
const start = head();
const firstPrimitive = JSON.parse(sv("sv-commit", ["show", "HEAD"])).primitives[0].id;

const client = new sdk.Client({ name: "sv-sdk-test", version: "1.0.0" });
const transport = new sdk.StdioClientTransport({ command: join(binDir, "sv-mcp"), args: [], cwd: dir, stderr: "pipe" });
let log = "";
transport.stderr?.on("data", (d) => (log += d));

try {
  await client.connect(transport);
  assert.equal(client.getServerVersion().name, "sv-mcp");
  assert.ok(client.getServerCapabilities().tools, "the server offers tools");
  const { tools } = await client.listTools();
  const listed = JSON.stringify({ tools }).length;
  console.log(`tools/list: ${tools.length} tools, ${listed} bytes`);
  assert.ok(listed < 64000, "tools/list loads in under 64 KB");
  const catalog = JSON.parse(sv("sv-diagnose", ["tools", "--all"]));
  assert.deepEqual(tools.map((t) => t.name).sort(), catalog.tools.map((t) => t.name).sort(), "every registered tool is listed");

  // Request values a scene made from a drawing has: its first primitive, HEAD, a harmless edit.
  const known = {
    id: firstPrimitive,
    primitive_id: firstPrimitive,
    primitive_ids: [firstPrimitive],
    edits: [{ tool: "ReverseDirection", primitive_ids: [firstPrimitive] }],
  };
  const valueFor = (name, s) => {
    if (name in known) return known[name];
    if (s.default !== undefined) return s.default;
    if (s.const !== undefined) return s.const;
    if (s.enum) return s.enum[0];
    if (s.oneOf || s.anyOf) return valueFor(name, (s.oneOf || s.anyOf)[0]);
    const type = Array.isArray(s.type) ? s.type.find((t) => t !== "null") : s.type;
    if (type === "string") return /revision/.test(name) ? start : firstPrimitive;
    if (type === "integer" || type === "number") return s.minimum ?? 1;
    if (type === "boolean") return false;
    if (type === "array") return [valueFor(name, Array.isArray(s.items) ? s.items[0] : s.items ?? {})];
    if (type === "object") return argumentsFor(s);
    return null;
  };
  // The required fields, and those of the values above a tool takes (ExplainThreshold needs a
  // primitive or a region without requiring either).
  const argumentsFor = (s) =>
    Object.fromEntries(
      Object.keys(s.properties ?? {})
        .filter((k) => (s.required ?? []).includes(k) || k in known)
        .map((k) => [k, valueFor(k, s.properties[k])]),
    );

  // Every read-only tool; the SDK's callTool rejects a structuredContent outside outputSchema.
  const readOnly = tools.filter((t) => t.annotations?.readOnlyHint);
  assert.ok(readOnly.length > 0);
  const failed = [];
  let images = 0;
  for (const t of readOnly) {
    const r = await client.callTool({ name: t.name, arguments: argumentsFor(t.inputSchema) });
    assert.ok(r.structuredContent, `${t.name}: structuredContent`);
    assert.equal(r.content[0].type, "text");
    // The text a model reads: the compact text, then each warning.
    const warned = (r.structuredContent.warnings ?? []).map((w) => `\nwarning: ${w}`).join("");
    assert.equal(r.content[0].text, r.structuredContent.llm_text + warned);
    for (const block of r.content.slice(1)) {
      assert.equal(block.type, "image");
      assert.equal(block.mimeType, "image/png");
      const png = Buffer.from(block.data, "base64");
      assert.equal(png.subarray(1, 4).toString(), "PNG");
      // By default only the views the model needs travel inline, each within 64 KB.
      assert.deepEqual(block.annotations.audience, ["user", "assistant"]);
      assert.ok(png.length <= 64 * 1024, `${t.name}: a ${png.length}-byte image`);
      images++;
    }
    if (r.isError) failed.push(`${t.name} (${r.structuredContent.error.code}: ${r.structuredContent.error.message})`);
    const bytes = JSON.stringify(r).length;
    console.log(`${t.name}: ${r.isError ? "tool error" : "ok"}, ${r.content.length - 1} image(s), ${bytes} bytes`);
  }
  // The tools every session starts with must succeed; a new tool whose required fields the
  // values above do not satisfy may refuse, as long as its refusal fits its schema.
  for (const name of ["GetSourceImage", "GetCurrentRender", "ListPrimitives", "GetPrimitive", "SimulateEdit"])
    assert.ok(!failed.some((f) => f.startsWith(name + " ")), `${name} failed: ${failed.join("; ")}`);

  const source = await client.callTool({ name: "GetSourceImage", arguments: {} });
  const picture = source.content.find((b) => b.type === "image");
  assert.ok(picture, "GetSourceImage returns its view as an image block");
  assert.equal(picture.mimeType, "image/png");
  assert.deepEqual(picture.annotations.audience, ["user", "assistant"]);

  // An edit, then its revert: HEAD moves to a new revision, then to one with the start's content.
  const edit = await client.callTool({ name: "ReverseDirection", arguments: { primitive_ids: [firstPrimitive], note: "sdk test" } });
  assert.equal(edit.isError, false, JSON.stringify(edit.structuredContent));
  assert.equal(edit.structuredContent.parent_revision_id, start);
  assert.equal(head(), edit.structuredContent.revision_id);
  const revert = await client.callTool({ name: "Revert", arguments: { to_revision_id: start } });
  assert.equal(revert.isError, false, JSON.stringify(revert.structuredContent));
  assert.equal(revert.structuredContent.previous_revision_id, edit.structuredContent.revision_id);
  const shown = (rev) => JSON.parse(sv("sv-commit", ["show", rev])).primitives;
  assert.deepEqual(shown("HEAD"), shown(start));

  // A failing call is a result with isError and the error envelope, which the SDK validates too.
  const bad = await client.callTool({ name: "GetPrimitive", arguments: { id: "p_9999" } });
  assert.equal(bad.isError, true);
  assert.equal(bad.structuredContent.error.code, "not_found");

  await client.ping();
  console.log(
    `mcp client test: SDK ${sdkVersion} ok: ${tools.length} tools listed, ${readOnly.length} read-only ` +
      `called (${readOnly.length - failed.length} ok, ${images} images), edit and revert ok` +
      (failed.length ? `; tool errors: ${failed.join("; ")}` : ""),
  );
  await client.close();
} catch (e) {
  console.error(`mcp client test FAILED: ${e.stack ?? e}\nserver log:\n${log.slice(-4000)}`);
  process.exitCode = 1;
  await client.close().catch(() => {});
} finally {
  rmSync(dir, { recursive: true, force: true });
}
