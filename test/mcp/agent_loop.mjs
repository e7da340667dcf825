// A scripted agent that refines a drawing over MCP with the official SDK client, against
// `sv-edit refine`, the baseline any agent should reach. For each drawing: one store runs the
// command-line pipeline and then refine with its default budget; a fresh store is driven only
// through sv-mcp — TraceImage, then SuggestOptimizations with what is left of the budget, the
// best candidate applied by its apply id, the rest of that list re-measured with SimulateEdit on
// the new revision and applied by the simulation's apply id, a fresh list when they are used up,
// until nothing within the budget saves time; then EvaluateRevision. The agent must reach
// refine's draw time within 1 % at no worse f1 at 1 px. Its path may differ from refine's:
// refine asks for every candidate and re-measures, after a step, ones that were over the budget
// before it; a list asked with the budget leaves those out.
//   node agent_loop.mjs BIN_DIR DRAWING.png...
// Exits non-zero on any failure; prints refine's and the loop's figures for each drawing.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadSdk } from "./sdk.mjs";

const [binDir, ...drawings] = process.argv.slice(2).map((p) => resolve(p));
if (!binDir || drawings.length === 0) {
  console.error("usage: node agent_loop.mjs BIN_DIR DRAWING.png...");
  process.exit(2);
}

const sdk = await loadSdk("agent loop test");

// refine's rule (lib/cli/refine.cpp) with its defaults: the losses over all steps against the
// starting scoreboard, the least a step saves, the most steps, and how many stale candidates in
// a row are measured again before a fresh list is asked for.
const budget = { f1: 0.005, f1_1px: 0.02, chamfer_px: 0.1 };
const minGainMs = 50;
const maxSteps = 200;
const staleTries = 12;
const withinBudget = (start, after) =>
  start.f1 - after.f1 <= budget.f1 + 1e-9 &&
  start.f1_1px - after.f1_1px <= budget.f1_1px + 1e-9 &&
  after.chamfer_px - start.chamfer_px <= budget.chamfer_px + 1e-9;
const gainMs = (now, after) => 1000 * (now.draw_time_s - after.draw_time_s);
// Under the sanitizers a suggestion list takes a while; progress keeps the call alive.
const callOptions = { timeout: 600000, resetTimeoutOnProgress: true };

// The tools' warnings (relations refine's steps drop) stay out of the figures; a failure's are in its error.
const sv = (dir, exe, args, input) =>
  execFileSync(join(binDir, exe), args, { cwd: dir, input, maxBuffer: 1 << 30, stdio: "pipe" });

// The reference: the pipeline on the command line, then refine with its default budget.
function reference(drawing) {
  const dir = mkdtempSync(join(tmpdir(), "sv-agent-ref-"));
  try {
    sv(dir, "sv-commit", ["init"]);
    let scene = sv(dir, "sv-skeleton", [drawing]);
    for (const stage of ["sv-fit", "sv-route", "sv-simulate"]) scene = sv(dir, stage, [], scene);
    const traced = JSON.parse(sv(dir, "sv-commit", ["status", "--json"])).current_revision_id;
    const refined = JSON.parse(sv(dir, "sv-edit", ["refine", "--rev", "HEAD", "--json", "--quiet"]));
    return { traced, refined, primitives: JSON.parse(sv(dir, "sv-commit", ["show", "HEAD"])).primitives };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// The agent: only MCP calls, in a store of its own.
async function agent(drawing) {
  const dir = mkdtempSync(join(tmpdir(), "sv-agent-"));
  sv(dir, "sv-commit", ["init"]);
  const client = new sdk.Client({ name: "sv-agent-loop", version: "1.0.0" });
  const transport = new sdk.StdioClientTransport({ command: join(binDir, "sv-mcp"), args: [], cwd: dir, stderr: "pipe" });
  let log = "";
  transport.stderr?.on("data", (d) => (log += d));
  const calls = {};
  const call = async (name, args) => {
    calls[name] = (calls[name] ?? 0) + 1;
    return client.callTool({ name, arguments: args }, undefined, callOptions);
  };
  const ok = async (name, args) => {
    const r = await call(name, args);
    assert.equal(r.isError, false, `${name}: ${JSON.stringify(r.structuredContent?.error ?? r.content)}`);
    return r.structuredContent;
  };
  try {
    await client.connect(transport);
    const traced = await ok("TraceImage", { image: drawing });
    const start = (await ok("EvaluateRevision", {})).metrics;
    let now = start;
    const steps = [];
    // Applies what was measured on HEAD by its apply id; the revision is the prediction.
    const apply = async (measured, predicted, description) => {
      const applied = await ok("ApplyEdits", measured);
      assert.deepEqual(applied.after, predicted, `${description}: applied as predicted`);
      steps.push({ description, draw_time_delta_ms: Math.round(1000 * (predicted.draw_time_s - now.draw_time_s)) });
      now = predicted;
    };
    let pending = [];
    let next = 0;
    let fresh = false;
    while (steps.length < maxSteps) {
      if (next >= pending.length) {
        if (fresh) break; // a fresh list with nothing to take
        const left = (loss) => Math.max(0, loss);
        const suggested = await ok("SuggestOptimizations", {
          max_candidates: 1000,
          max_f1_loss: left(budget.f1 - (start.f1 - now.f1)),
          max_f1_1px_loss: left(budget.f1_1px - (start.f1_1px - now.f1_1px)),
          max_chamfer_gain_px: left(budget.chamfer_px - (now.chamfer_px - start.chamfer_px)),
        });
        pending = suggested.candidates;
        next = 0;
        fresh = true;
      }
      let took = false;
      for (let tries = 0; next < pending.length && !took; ) {
        const c = pending[next++];
        if (!(c.predicted_draw_time_delta_ms <= -minGainMs)) continue;
        let measured;
        if (fresh) {
          // Measured on HEAD and, asked so, within what is left of the budget.
          assert.ok(withinBudget(start, c.predicted_after), `${c.candidate_id} is within the budget it was asked for`);
          measured = { apply: c.request.apply, after: c.predicted_after };
        } else {
          if (++tries > staleTries) {
            next = pending.length; // the list has gone stale: ask for a new one
            break;
          }
          // Computed on an earlier revision: measure it again on HEAD.
          const r = await call("SimulateEdit", {
            edits: c.request.apply.edits,
            metrics_to_report: ["draw_time", "primitive_count", "pen_up_count", "pixel_fidelity"],
          });
          if (r.isError) continue; // an earlier step took its primitives
          measured = r.structuredContent;
        }
        if (!(gainMs(now, measured.after) >= minGainMs) || !withinBudget(start, measured.after)) continue;
        await apply(measured.apply, measured.after, c.description);
        took = true;
      }
      if (took) fresh = false;
    }
    const final = await ok("EvaluateRevision", {});
    const primitives = JSON.parse(sv(dir, "sv-commit", ["show", "HEAD"])).primitives;
    await client.close();
    return { traced, start, final: final.metrics, steps, calls, primitives };
  } catch (e) {
    await client.close().catch(() => {});
    throw new Error(`${e.stack ?? e}\nserver log:\n${log.slice(-4000)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const name = (p) => p.replace(/^.*\//, "").replace(/\.png$/, "");
let failed = 0;
for (const drawing of drawings) {
  try {
    const ref = reference(drawing);
    const a = await agent(drawing);
    const [before, after] = [ref.refined.before, ref.refined.after];
    const ncalls = Object.values(a.calls).reduce((x, y) => x + y, 0);
    console.log(
      `${name(drawing)}: refine ${ref.refined.steps.length} steps, ${before.draw_time_s.toFixed(3)} -> ` +
        `${after.draw_time_s.toFixed(3)} s, f1@1px ${before.f1_1px.toFixed(3)} -> ${after.f1_1px.toFixed(3)}; ` +
        `agent ${a.steps.length} steps in ${ncalls} calls (${Object.entries(a.calls).map(([k, v]) => `${k} ${v}`).join(", ")}), ` +
        `${a.start.draw_time_s.toFixed(3)} -> ${a.final.draw_time_s.toFixed(3)} s ` +
        `(${(100 * (a.final.draw_time_s / after.draw_time_s - 1)).toFixed(2)} % against refine), ` +
        `f1@1px ${a.start.f1_1px.toFixed(3)} -> ${a.final.f1_1px.toFixed(3)}, ` +
        `f1 ${a.final.f1.toFixed(3)}; same primitives as refine: ${JSON.stringify(a.primitives) === JSON.stringify(ref.primitives) ? "yes" : "no"}`,
    );
    for (const s of a.steps) console.log(`  ${s.description} (${s.draw_time_delta_ms > 0 ? "+" : ""}${s.draw_time_delta_ms} ms)`);
    assert.equal(a.traced.revision_id, ref.traced, "TraceImage gives the pipeline's revision");
    for (const k of ["draw_time_s", "f1", "f1_1px", "chamfer_px"]) assert.equal(a.start[k], before[k], `the start's ${k} is refine's`);
    assert.ok(a.final.draw_time_s <= 1.01 * after.draw_time_s, "draw time within 1 % of refine's");
    assert.ok(a.final.f1_1px >= after.f1_1px, "f1 at 1 px no worse than refine's");
  } catch (e) {
    console.error(`agent loop test FAILED on ${name(drawing)}: ${e.stack ?? e}`);
    failed++;
  }
}
if (failed) process.exitCode = 1;
else console.log(`agent loop test: ${drawings.length} drawings ok`);
