// sv-mcp end to end with the official MCP TypeScript SDK client: it connects over stdio, lists
// every tool, calls every read-only tool on a scene made from a drawing (the SDK validates each
// structuredContent against the tool's outputSchema and throws when it does not fit), applies
// an edit and reverts it, and checks that a view arrives as a PNG image block. A second session
// starts from a directory with no store: TraceImage is refused naming sv-commit init, then, once
// the store is made, traces a second drawing; ExportDrawing gives its G-code inline and as a
// file, both equal to what the command-line pipeline writes; SuggestOptimizations lists what fits
// a loss budget, ApplyEdits applies the first by its id and a two-edit batch SimulateEdit measured
// as one call, each exactly as predicted; the edited drawing's G-code comes out. Every reply's
// size is printed.
//   node client.mjs BIN_DIR DRAWING.png TRACED_DRAWING.png
// Exits non-zero on any failure; prints one line per tool and a summary.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadSdk } from "./sdk.mjs";

// The first drawing for the read tools; the second, one with time to save, from an empty store.
const [binDir, drawing, tracedDrawing] = process.argv.slice(2).map((p) => resolve(p));
if (!binDir || !drawing || !tracedDrawing) {
  console.error("usage: node client.mjs BIN_DIR DRAWING.png TRACED_DRAWING.png");
  process.exit(2);
}

const sdk = await loadSdk("mcp client test");

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
    assert.ok(bytes <= 100 * 1024, `${t.name}: a ${bytes}-byte reply, over 100 KB`);
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

// From an image to a robot file without a shell, in a directory that has no store yet.
const empty = mkdtempSync(join(tmpdir(), "sv-mcp-sdk-empty-"));
const cliDir = mkdtempSync(join(tmpdir(), "sv-mcp-sdk-cli-"));
const client2 = new sdk.Client({ name: "sv-sdk-test-empty", version: "1.0.0" });
const transport2 = new sdk.StdioClientTransport({ command: join(binDir, "sv-mcp"), args: [], cwd: empty, stderr: "pipe" });
let log2 = "";
transport2.stderr?.on("data", (d) => (log2 += d));
try {
  // The G-code of the pipeline on the command line, without a store.
  const cli = (exe, args, input) => execFileSync(join(binDir, exe), args, { cwd: cliDir, input, maxBuffer: 1 << 30 });
  let piped = cli("sv-skeleton", ["--no-store", tracedDrawing]);
  for (const stage of ["sv-fit", "sv-route"]) piped = cli(stage, ["--no-store"], piped);
  cli("sv-simulate", ["--no-store", "--gcode", join(cliDir, "cli.gcode"), "-o", "/dev/null"], piped);
  const cliGcode = readFileSync(join(cliDir, "cli.gcode"), "utf8");

  await client2.connect(transport2);
  const sizes = [];
  const call = async (name, args) => {
    const r = await client2.callTool({ name, arguments: args });
    const size = Buffer.byteLength(JSON.stringify(r));
    sizes.push(`${name}${args.format ? " " + args.format : ""}${args.path ? " to a file" : ""}${r.isError ? " (refused)" : ""} ${size} B`);
    console.log(`${name} ${JSON.stringify(args)}: ${r.isError ? "tool error" : "ok"}, reply ${size} bytes`);
    return r;
  };
  // No store: refused, naming the command that makes one; nothing is made.
  const refused = await call("TraceImage", { image: tracedDrawing });
  assert.equal(refused.isError, true);
  assert.equal(refused.structuredContent.error.code, "not_found");
  assert.match(refused.structuredContent.error.message, /sv-commit init/);
  assert.ok(!existsSync(join(empty, ".svrev")));

  execFileSync(join(binDir, "sv-commit"), ["init"], { cwd: empty });
  const traced = await call("TraceImage", { image: tracedDrawing });
  assert.equal(traced.isError, false, JSON.stringify(traced.structuredContent));
  const status = () => JSON.parse(execFileSync(join(binDir, "sv-commit"), ["status", "--json"], { cwd: empty }));
  assert.equal(traced.structuredContent.revision_id, status().current_revision_id);
  assert.ok(traced.structuredContent.primitive_count > 0);
  assert.ok(traced.structuredContent.draw_time_s > 0);

  // Inline: the G-code once, as an embedded resource, not again in the structured content.
  const inline = await call("ExportDrawing", { format: "gcode" });
  assert.equal(inline.isError, false, JSON.stringify(inline.structuredContent));
  const resource = inline.content.find((b) => b.type === "resource");
  assert.ok(resource, "the G-code arrives as an embedded resource");
  assert.equal(resource.resource.text, cliGcode, "inline G-code equals the command line's");
  assert.equal(inline.structuredContent.text, undefined);
  assert.equal(inline.structuredContent.bytes, Buffer.byteLength(cliGcode));

  const file = await call("ExportDrawing", { format: "gcode", path: "drawing.gcode" });
  assert.equal(file.isError, false, JSON.stringify(file.structuredContent));
  assert.equal(readFileSync(join(empty, "drawing.gcode"), "utf8"), cliGcode, "the G-code file equals the command line's");

  const view = await call("ExportDrawing", { format: "view" });
  const png = view.content.find((b) => b.type === "image");
  assert.ok(png, "the view arrives as an image");
  assert.equal(Buffer.from(png.data, "base64").subarray(1, 4).toString(), "PNG");

  const escape = await call("ExportDrawing", { format: "gcode", path: "../escape.gcode" });
  assert.equal(escape.isError, true);
  assert.equal(escape.structuredContent.error.code, "invalid_selection");
  // Suggestions within a budget; the first applied by its id gives what it predicted.
  const budget = { max_f1_loss: 0.005, max_f1_1px_loss: 0.05, max_chamfer_gain_px: 0.5 };
  const suggested = await call("SuggestOptimizations", { ...budget, max_candidates: 5 });
  assert.equal(suggested.isError, false, JSON.stringify(suggested.structuredContent));
  const base = (await call("EvaluateRevision", {})).structuredContent.metrics;
  const candidates = suggested.structuredContent.candidates;
  assert.ok(candidates.length > 0, "a suggestion within the budget");
  for (const c of candidates) {
    assert.ok(base.f1 - c.predicted_after.f1 <= budget.max_f1_loss + 1e-9, `${c.candidate_id}: within max_f1_loss`);
    assert.ok(base.f1_1px - c.predicted_after.f1_1px <= budget.max_f1_1px_loss + 1e-9, `${c.candidate_id}: within max_f1_1px_loss`);
  }
  const applied = await call("ApplyEdits", candidates[0].request.apply);
  assert.equal(applied.isError, false, JSON.stringify(applied.structuredContent));
  assert.deepEqual(applied.structuredContent.after, candidates[0].predicted_after, "applied by id as predicted");

  // A two-edit batch simulated, then applied by its id as one call: one revision, the simulation's result.
  const first = (await call("ListPrimitives", {})).structuredContent.primitives[0].id;
  const batch = [{ tool: "ReverseDirection", primitive_ids: [first] }, { tool: "RerunStage", stage: "route_optimize" }];
  const simulated = await call("SimulateEdit", { edits: batch });
  assert.equal(simulated.isError, false, JSON.stringify(simulated.structuredContent));
  const beforeBatch = status();
  const batched = await call("ApplyEdits", simulated.structuredContent.apply);
  assert.equal(batched.isError, false, JSON.stringify(batched.structuredContent));
  for (const [k, v] of Object.entries(simulated.structuredContent.after))
    assert.deepEqual(batched.structuredContent.after[k], v, `the batch applied as simulated: ${k}`);
  assert.equal(batched.structuredContent.parent_revision_id, beforeBatch.current_revision_id, "one revision for the batch");
  assert.equal(status().current_revision_id, batched.structuredContent.revision_id);

  // The edited drawing's G-code, for the robot.
  const edited = await call("ExportDrawing", { format: "gcode" });
  assert.equal(edited.isError, false, JSON.stringify(edited.structuredContent));
  assert.ok(edited.content.find((b) => b.type === "resource").resource.text.includes("G1"));
  console.log(`mcp client test: from an empty store ok; reply sizes: ${sizes.join(", ")}`);
  await client2.close();
} catch (e) {
  console.error(`mcp client test (empty store) FAILED: ${e.stack ?? e}\nserver log:\n${log2.slice(-4000)}`);
  process.exitCode = 1;
  await client2.close().catch(() => {});
} finally {
  rmSync(empty, { recursive: true, force: true });
  rmSync(cliDir, { recursive: true, force: true });
}
