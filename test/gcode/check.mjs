// sv's G-code read by an independent interpreter, cncjs's gcode-toolpath (pinned in
// package-lock.json, installed by scripts/setup): every bundled test drawing goes through the
// pipeline (batch mode), then sv-simulate exports its SVG and its G-code in several option
// configurations. For every file the interpreter must understand every word, every move in the
// plane with the pen down must run at the drawing feed (a pen line such as "G1 Z0 F500" must not
// leave its feed behind), travel must be pen-up, and the toolpath's extent must be the SVG page's
// width and height in mm within 0.1 mm; with the drawing's corner as origin the plot starts at
// the margin; a dwell follows every pen command when asked for.
//   node check.mjs BIN_DIR DATA_DIR
// Exits non-zero on any failure; prints one line per configuration and a summary.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";

const [binDir, dataDir] = process.argv.slice(2).map((p) => resolve(p));
if (!binDir || !dataDir) {
  console.error("usage: node check.mjs BIN_DIR DATA_DIR");
  process.exit(2);
}

let Toolpath;
try {
  Toolpath = (await import("gcode-toolpath")).default;
} catch (e) {
  console.error(`gcode check: gcode-toolpath is not installed (${e.message}); run scripts/setup (npm ci in test/gcode)`);
  process.exit(1);
}

const FEED = 2400;
const configs = [
  { name: "defaults (mm, image origin, M3/M5)", args: [], pen: "spindle", feed: 1500, mm: true },
  {
    name: "Z-lift pen with its own feed, drawing origin, 10 mm margin, 0.2 s dwell",
    args: ["--gcode-pen-up", "G0 Z5", "--gcode-pen-down", "G1 Z0 F500", "--gcode-origin", "drawing",
           "--gcode-margin-mm", "10", "--gcode-dwell-s", "0.2", "--gcode-feed", String(FEED)],
    pen: "z", feed: FEED, mm: true, margin: 10, dwell: 0.2, penLines: ["G0 Z5", "G1 Z0 F500"],
  },
  {
    name: "pixels, drawing origin, mirrored (no flip)",
    args: ["--gcode-units", "px", "--gcode-origin", "drawing", "--gcode-no-flip"],
    pen: "spindle", feed: 1500, mm: false, margin: 0,
  },
];

// The words sv writes; anything else means the file was not understood as written.
const known = { G: [0, 1, 2, 3, 4, 17, 21, 90], M: [2, 3, 5], X: null, Y: null, Z: null, I: null, J: null, F: null, S: null, P: null };

const dir = mkdtempSync(join(tmpdir(), "sv-gcode-"));
const sv = (exe, args) => execFileSync(join(binDir, exe), args, { cwd: dir, maxBuffer: 1 << 30 });
const drawings = readdirSync(dataDir).filter((f) => f.endsWith(".png")).sort().map((f) => join(dataDir, f));
for (const [stage, from, to] of [["sv-skeleton", null, "graph"], ["sv-fit", "graph", "fit"], ["sv-route", "fit", "routed"]]) {
  mkdirSync(join(dir, to));
  const inputs = from ? drawings.map((d) => join(dir, from, basename(d, ".png") + ".json")) : drawings;
  sv(stage, ["--no-store", "-q", "--output-dir", join(dir, to), ...inputs]);
}

// The extent of an arc in the plane: its ends and every axis direction it passes (G2 clockwise
// in the y-up plane: the angle decreases).
function addArc(box, motion, v1, v2, v0) {
  const r = Math.hypot(v1.x - v0.x, v1.y - v0.y);
  const a0 = Math.atan2(v1.y - v0.y, v1.x - v0.x), a1 = Math.atan2(v2.y - v0.y, v2.x - v0.x);
  const tau = 2 * Math.PI, mod = (a) => ((a % tau) + tau) % tau;
  let sweep = motion === "G2" ? mod(a0 - a1) : mod(a1 - a0);
  if (sweep < 1e-12) sweep = tau;
  add(box, v1);
  add(box, v2);
  for (let k = 0; k < 4; ++k) {
    const q = (k * Math.PI) / 2, d = motion === "G2" ? mod(a0 - q) : mod(q - a0);
    if (d <= sweep) add(box, { x: v0.x + r * Math.cos(q), y: v0.y + r * Math.sin(q) });
  }
}
function add(box, p) {
  box.x0 = Math.min(box.x0, p.x); box.y0 = Math.min(box.y0, p.y);
  box.x1 = Math.max(box.x1, p.x); box.y1 = Math.max(box.y1, p.y);
}

const failures = [];
const fail = (what) => { failures.push(what); if (failures.length <= 20) console.error("FAIL " + what); };
let files = 0, drawingMoves = 0, arcs = 0, worst = 0, dwells = 0;
for (const c of configs) {
  let cWorst = 0, cMoves = 0;
  for (const d of drawings) {
    const stem = basename(d, ".png"), routed = join(dir, "routed", stem + ".json");
    const gcodeFile = join(dir, stem + ".nc"), svgFile = join(dir, stem + ".svg");
    const scene = JSON.parse(sv("sv-simulate", ["--no-store", "--svg", svgFile, "--gcode", gcodeFile, ...c.args, routed]));
    const svg = readFileSync(svgFile, "utf8"), text = readFileSync(gcodeFile, "utf8");
    const root = svg.slice(0, svg.indexOf(">"));
    const page = { w: parseFloat(/ width="([0-9.]+)mm"/.exec(root)?.[1]), h: parseFloat(/ height="([0-9.]+)mm"/.exec(root)?.[1]) };
    if (!(page.w > 0 && page.h > 0)) { fail(`${stem}: the SVG has no width and height in mm: ${root}`); continue; }
    const toMm = c.mm ? 1 : 25.4 / scene.robot.ppi;

    // Every move, with the feed in force for it: a line's F word applies to its own move, so
    // the moves a line adds take their feed once the interpreter has read the whole line.
    const moves = [];
    let feed = NaN, pending = 0, penCommands = 0, g4 = 0, unitWords = 0;
    const toolpath = new Toolpath({
      addLine: (modal, v1, v2) => moves.push({ motion: modal.motion, spindle: modal.spindle, v1, v2 }),
      addArcCurve: (modal, v1, v2, v0) => moves.push({ motion: modal.motion, spindle: modal.spindle, v1, v2, v0 }),
    });
    toolpath.loadFromStringSync(text, (data) => {
      for (const [letter, value] of data.words) {
        if (!(letter in known) || (known[letter] && !known[letter].includes(value)))
          fail(`${stem} [${c.name}]: a word the interpreter does not run: ${letter}${value} in "${data.line}"`);
        if (letter === "F") feed = value;
        if (letter === "G" && value === 4) ++g4;
        if (letter === "G" && (value === 20 || value === 21)) ++unitWords;
      }
      const line = data.line.trim();
      if ((c.penLines ?? ["M3 S1000", "M5"]).includes(line)) ++penCommands;
      for (; pending < moves.length; ++pending) moves[pending].feed = feed;
    });
    ++files;
    if (moves.length === 0) { fail(`${stem} [${c.name}]: no moves read`); continue; }

    const box = { x0: Infinity, y0: Infinity, x1: -Infinity, y1: -Infinity };
    let n = 0;
    for (const m of moves) {
      const planar = m.v1.z === m.v2.z;
      const down = c.pen === "spindle" ? m.spindle === "M3" : m.v1.z <= 0 && m.v2.z <= 0;
      if (m.motion === "G0") {
        if (down && (m.v1.x !== m.v2.x || m.v1.y !== m.v2.y)) fail(`${stem} [${c.name}]: travel with the pen down`);
        continue;
      }
      if (!planar) continue;  // the pen's own move (G1 Z0 F500)
      if (!down) { fail(`${stem} [${c.name}]: a drawing move with the pen up`); continue; }
      ++n;
      if (m.feed !== c.feed) fail(`${stem} [${c.name}]: a drawing move at F${m.feed}, not F${c.feed}`);
      if (m.v0) { ++arcs; addArc(box, m.motion, m.v1, m.v2, m.v0); } else { add(box, m.v1); add(box, m.v2); }
    }
    cMoves += n;
    if (n === 0) { fail(`${stem} [${c.name}]: no drawing moves`); continue; }
    const dw = Math.abs((box.x1 - box.x0) * toMm - page.w), dh = Math.abs((box.y1 - box.y0) * toMm - page.h);
    cWorst = Math.max(cWorst, dw, dh);
    if (dw > 0.1 || dh > 0.1)
      fail(`${stem} [${c.name}]: toolpath ${((box.x1 - box.x0) * toMm).toFixed(3)} x ${((box.y1 - box.y0) * toMm).toFixed(3)} mm, SVG page ${page.w} x ${page.h} mm`);
    if (c.margin !== undefined && (Math.abs(box.x0 * toMm - c.margin) > 0.1 || Math.abs(box.y0 * toMm - c.margin) > 0.1))
      fail(`${stem} [${c.name}]: the plot starts at (${box.x0 * toMm}, ${box.y0 * toMm}) mm, not at the margin ${c.margin}`);
    if (c.dwell) {
      dwells += g4;
      if (g4 !== penCommands) fail(`${stem} [${c.name}]: ${g4} dwells for ${penCommands} pen commands`);
    } else if (g4 !== 0) {
      fail(`${stem} [${c.name}]: ${g4} dwells not asked for`);
    }
    if (!c.mm && unitWords) fail(`${stem} [${c.name}]: pixel units with a G20/G21`);
    if (!c.mm && !/^; .*units are image pixels/m.test(text)) fail(`${stem} [${c.name}]: pixel units not said`);
    if (c.mm && !/^G21 /m.test(text)) fail(`${stem} [${c.name}]: millimetres without G21`);
  }
  drawingMoves += cMoves;
  worst = Math.max(worst, cWorst);
  console.log(`${c.name}: ${drawings.length} files, ${cMoves} drawing moves at F${c.feed}; toolpath vs SVG page within ${cWorst.toFixed(4)} mm`);
}
rmSync(dir, { recursive: true, force: true });
console.log(`gcode-toolpath: ${files} files read, ${drawingMoves} drawing moves (${arcs} arcs), ${dwells} dwells, ` +
            `largest extent difference ${worst.toFixed(4)} mm, ${failures.length} failures`);
process.exit(failures.length ? 1 : 0);
