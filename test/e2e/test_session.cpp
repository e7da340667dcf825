// A scripted editing session as an agent runs it: one subprocess per tool call in store mode,
// small JSON in and out, state in .svrev/. More than twenty edits on a bundled drawing — every
// mutation tool at least once — each result checked, ids stable across edits, refusals that
// leave HEAD where it was, a dry run that leaves the store byte-identical; then the history
// tools, and the final revision re-scored against the drawing's ground truth.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/hash.hpp"
#include "core/scene.hpp"
#include "eval/coverage.hpp"
#include "process.hpp"
#include "robot/replay.hpp"

using namespace svtest;
using nlohmann::json;

namespace {

class Session {
 public:
  explicit Session(const std::string& name) : dir_(scratch() / name) {
    std::filesystem::create_directories(dir_);
    cd_ = "cd " + dir_.string() + " && ";
  }

  Run sh(const std::string& cmd) { return run(cd_ + cmd); }

  // One edit in store mode; returns the envelope. A successful edit must move HEAD to the
  // revision it names, keep every id it does not report, and leave unreported primitives as
  // they were.
  json edit(const std::string& args, int expect_status = 0) {
    const sv::Scene before = head();
    Run r = sh(bin("sv-edit") + " " + args + " --rev HEAD");
    INFO(args << "\n" << r.err);
    REQUIRE(r.status == expect_status);
    json env = json::parse(r.out);
    if (expect_status != 0) {
      CHECK(env["ok"] == false);
      CHECK(count_lines(r.err) == 1);
      CHECK(head().revision.id == before.revision.id);  // a refusal changes nothing
      return env;
    }
    CHECK(env["ok"] == true);
    CHECK(env["parent_revision_id"] == before.revision.id);
    const sv::Scene after = head();
    CHECK(after.revision.id == env["revision_id"]);
    CHECK(after.revision.parent == before.revision.id);
    std::set<std::string> expect = ids(before);
    for (const auto& id : env["removed_primitive_ids"]) CHECK(expect.erase(id.get<std::string>()) == 1);
    for (const auto& id : env["added_primitive_ids"]) CHECK(expect.insert(id.get<std::string>()).second);
    CHECK(ids(after) == expect);
    std::set<std::string> changed;
    for (const auto& id : env["changed_primitive_ids"]) changed.insert(id);
    for (const auto& p : *after.primitives)
      if (!changed.count(p.id) && before.primitive(p.id)) CHECK(same(*before.primitive(p.id), p));
    ++edits_;
    return env;
  }

  sv::Scene head() {
    Run r = sh(bin("sv-commit") + " show HEAD");
    REQUIRE(r.status == 0);
    return sv::parse_scene(r.out);
  }

  // A digest of every file under .svrev/ (names and bytes).
  std::string store_digest() {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir_ / ".svrev"))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    std::string all;
    for (const auto& f : files) all += f.string() + "\n" + slurp(f) + "\n";
    return sv::sha256_hex(all);
  }

  static std::set<std::string> ids(const sv::Scene& s) {
    std::set<std::string> out;
    for (const auto& p : *s.primitives) out.insert(p.id);
    return out;
  }
  static bool same(const sv::Primitive& a, const sv::Primitive& b) {
    return a.shape.type == b.shape.type && a.shape.p0 == b.shape.p0 && a.shape.p1 == b.shape.p1 &&
           a.shape.bulge == b.shape.bulge && a.shape.center == b.shape.center && a.shape.radius == b.shape.radius;
  }

  int edits() const { return edits_; }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::string cd_;
  int edits_ = 0;
};

std::string q(const json& j) { return fmt::format("'{}'", j.dump()); }

}  // namespace

TEST_CASE("a scripted session: twenty-odd edits, refusals, a dry run, history, re-scored", "[e2e][session]") {
  Session s("session");
  const std::string name = "feather_shopping-cart_w5";
  REQUIRE(s.sh(bin("sv-commit") + " init").status == 0);
  REQUIRE(s.sh(fmt::format("{} {} | {} | {} | {} > pipeline.json", bin("sv-skeleton"), data(name + ".png"), bin("sv-fit"),
                           bin("sv-route"), bin("sv-simulate")))
              .status == 0);
  const sv::Scene start = s.head();
  // The cart: handle p_0001-p_0002 (p_0002 runs on as the basket's left side, one line through
  // the T where the basket's top p_0003 meets it), basket p_0003-p_0007 (p_0005 and p_0007 its
  // rounded corners), wheels p_0008 and p_0009.
  REQUIRE(start.primitives->size() == 9);
  REQUIRE(start.primitive("p_0002")->more_sources.size() == 1);
  REQUIRE(start.primitive("p_0008")->shape.type == sv::PrimType::circle);
  const std::string first = start.revision.id;

  json e = s.edit("define-region --name wheels --region p_0008,p_0009");
  CHECK(e["region_id"] == "r_0001");
  e = s.edit("label-semantic-roles --assignments " +
             q(json::array({json::array({"p_0008", "decoration"}), json::array({"p_0009", "decoration"}),
                            json::array({"p_0003", "silhouette"})})));
  CHECK(e["updated_count"] == 3);
  CHECK(s.head().primitive("p_0003")->semantic_role == "silhouette");
  e = s.edit("reverse-direction --primitive-ids p_0001 --note 'try the handle the other way'");
  CHECK(e.contains("draw_time_delta_ms"));
  CHECK(s.head().revision.note == "try the handle the other way");
  e = s.edit("reverse-direction --primitive-ids p_0001");  // and back

  // Split the basket's top and merge it again: fresh ids each time, never reused.
  e = s.edit("split-primitive --primitive-id p_0003 --at 0.5");
  CHECK(e["new_primitive_ids"] == json({"p_0010", "p_0011"}));
  CHECK(e["removed_primitive_ids"] == json({"p_0003"}));
  e = s.edit("merge-primitives --primitive-ids p_0010,p_0011");
  CHECK(e["new_primitive_id"] == "p_0012");
  CHECK(e["fit_rms_px"].get<double>() < 0.5);
  const std::string merged_rev = e["revision_id"];
  // A corner is not one line: refused with the reason, nothing recorded.
  e = s.edit("merge-primitives --primitive-ids p_0012,p_0004 --target-kind line", 1);
  CHECK(e["error"]["code"] == "no_result");
  CHECK(e["error"]["details"].contains("tolerance_px"));

  e = s.edit("smooth-primitive --primitive-id p_0004 --strength strong");
  CHECK(e["rms_after"].get<double>() <= e["rms_before"].get<double>() + 1e-9);
  e = s.edit("enforce-relation --relation horizontal --primitive-ids p_0001");
  CHECK(e["residual_after"].get<double>() < 0.01);
  sv::Vec2 d = s.head().primitive("p_0001")->shape.p1 - s.head().primitive("p_0001")->shape.p0;
  CHECK(std::abs(d.y) < 1e-3);
  e = s.edit("enforce-relation --relation equal_radius --primitive-ids p_0008,p_0009");
  CHECK(s.head().primitive("p_0008")->shape.radius == Approx(s.head().primitive("p_0009")->shape.radius).margin(1e-3));
  e = s.edit("enforce-relation --relation concentric --primitive-ids p_0008,p_0009", 1);
  CHECK(e["error"]["code"] == "unsolvable_constraint");

  e = s.edit("refit-polyline --primitive-ids p_0005 --forbid-arc-shortcut");
  for (const auto& id : e["new_primitive_ids"]) CHECK(s.head().primitive(id)->shape.type == sv::PrimType::line);
  e = s.edit("add-primitive --spec " + q({{"type", "line"}, {"p0", {213, 381}}, {"p1", {367, 381}}}));
  const std::string axle = e["new_primitive_id"];
  e = s.edit("replace-primitive --primitive-ids " + axle + " --replacement " +
             q({{"type", "line"}, {"p0", {214, 382}}, {"p1", {366, 380}}}) + " --no-snap-to-existing-endpoints");
  const std::string axle2 = e["new_primitive_id"];
  CHECK(axle2 != axle);
  // The axle joined the wheels to each other: removing it again splits the drawing, so it
  // takes the explicit flag; it covered no source ink.
  e = s.edit("delete-primitive --primitive-ids " + axle2, 1);
  e = s.edit("delete-primitive --primitive-ids " + axle2 + " --no-confirm-no-topology-break");
  CHECK(e["coverage_loss_px"] == 0);
  // The handle's joint holds p_0001 to the basket: deleting it would cut p_0001 loose.
  e = s.edit("delete-primitive --primitive-ids p_0002", 1);
  CHECK(e["error"]["details"]["reason"] == "disconnects");
  e = s.edit("snap-endpoints --tolerance-px 3");
  CHECK(e.contains("max_displacement_px"));

  e = s.edit("reorder-tour --pinned-positions " + q(json::array({json::array({0, "p_0008", "forward"})})));
  CHECK(s.head().tour->front().primitive == "p_0008");
  e = s.edit("rerun-stage --stage vectorize --region " + q({{"kind", "named"}, {"name", "wheels"}}));
  CHECK(e["summary"].get<std::string>().find("wheels") != std::string::npos);
  e = s.edit("rerun-stage --stage route_optimize");
  CHECK(e["after"]["draw_time_s"].get<double>() <= e["before"]["draw_time_s"].get<double>() + 1e-6);
  // Two edits as one atomic batch, one revision.
  e = s.edit("reverse-direction --request " +
             q({{{"primitive_ids", {"p_0009"}}},
                {{"tool", "DefineRegion"}, {"name", "handle"}, {"region", {{"kind", "rect"}, {"rect", {90, 90, 180, 180}}}}}}));
  CHECK(e["edits"].size() == 2);
  CHECK(s.head().regions.size() == 2);
  // A batch with a bad second edit changes nothing.
  e = s.edit("reverse-direction --request " + q({{{"primitive_ids", {"p_0009"}}}, {{"primitive_ids", {"p_0999"}}}}), 4);
  e = s.edit("split-primitive --primitive-id p_0006 --at 0.4");
  const json halves = e["new_primitive_ids"];
  e = s.edit("merge-primitives --primitive-ids " + halves[0].get<std::string>() + "," + halves[1].get<std::string>());

  // Refusals of bad requests.
  s.edit("split-primitive --primitive-id p_0004 --at 1.5", 2);
  s.edit("smooth-primitive --primitive-id p_0003", 4);  // merged away earlier
  // A dry run leaves every byte of the store as it was.
  const std::string digest = s.store_digest();
  Run dry = s.sh(bin("sv-edit") + " delete-primitive --rev HEAD --primitive-ids p_0008 --dry-run");
  REQUIRE(dry.status == 0);
  CHECK(json::parse(dry.out)["revision_id"].is_null());
  CHECK(json::parse(dry.out)["after"]["primitive_count"].get<int>() + 1 == json::parse(dry.out)["before"]["primitive_count"].get<int>());
  CHECK(s.store_digest() == digest);
  // An edit of a revision HEAD has moved on from is stale: conflict.
  Run stale = s.sh(bin("sv-edit") + " reverse-direction --primitive-ids p_0001 --rev " + merged_rev);
  CHECK(stale.status == 5);
  CHECK(json::parse(stale.out)["error"]["code"] == "conflict");
  CHECK(s.store_digest() == digest);

  CHECK(s.edits() >= 20);
  const std::string tip = s.head().revision.id;

  // History: the tree, a revert that keeps what it undoes, a branch for a competing idea, a
  // comparison, the final mark.
  auto tool = [&](const std::string& exe, const std::string& args) {
    Run r = s.sh(bin(exe) + " " + args);
    INFO(args << "\n" << r.err);
    REQUIRE(r.status == 0);
    return json::parse(r.out);
  };
  json revs = tool("sv-commit", "list-revisions");
  CHECK(revs["current_revision_id"] == tip);
  CHECK(revs["revisions"].size() >= 4 + static_cast<size_t>(s.edits()));
  bool pipeline_kept = false;
  for (const auto& r : revs["revisions"]) {
    if (r["revision_id"] == tip) CHECK(r["metrics"].contains("f1"));
    pipeline_kept = pipeline_kept || r["revision_id"] == first;  // nothing stored is lost
  }
  CHECK(pipeline_kept);
  json rv = tool("sv-commit", "revert --to-revision-id " + merged_rev);
  const std::string reverted = rv["revision_id"];
  sv::Scene back = s.head();
  CHECK(back.revision.id == reverted);
  CHECK(back.revision.parent == tip);  // the edits since stay in the history
  CHECK(Session::ids(back) == Session::ids(sv::parse_scene(s.sh(bin("sv-commit") + " show " + merged_rev).out)));
  json br = tool("sv-commit", "branch-revision --from-revision-id " + tip + " --name wheels-first");
  CHECK(br["revision_id"] == tip);
  CHECK(s.head().revision.id == tip);
  e = s.edit("reverse-direction --primitive-ids p_0008");  // on the branch
  const std::string alt = e["revision_id"];
  tool("sv-commit", "checkout main");
  CHECK(s.head().revision.id == reverted);
  json cmp = tool("sv-simulate", "compare-revisions --rev HEAD --revision-a " + alt);
  CHECK(cmp["revision_a_id"] == alt);
  CHECK(cmp.contains("metric_deltas"));
  json commit = tool("sv-commit", "commit --revision-id " + alt + " --rationale 'wheels first, handle straight'");
  CHECK(commit["commands_count"].get<int>() > 0);
  CHECK(commit["estimated_time_ms"].get<double>() > 0);
  CHECK(commit["final_metrics"]["f1"].get<double>() > 0.9);
  json done = tool("sv-commit", "done --final-revision-id " + alt + " --summary 'handle made horizontal, wheels equal'");
  CHECK(done["accepted"] == true);
  CHECK(s.sh(bin("sv-commit") + " fsck").status == 0);
  const sv::Scene last = sv::parse_scene(s.sh(bin("sv-commit") + " show final").out);
  CHECK(last.revision.id == alt);
  // Ids survive every edit that does not remove them.
  for (const char* id : {"p_0002", "p_0007", "p_0008", "p_0009"}) CHECK(last.primitive(id));

  // The final revision against the drawing's ground truth.
  auto gt = json::parse(slurp(data(name + ".gt.json")));
  auto drawn = sv::replay(*last.commands, last.robot->start).strokes;
  double diag = std::hypot(gt["width"].get<double>(), gt["height"].get<double>());
  sv::Coverage cov = sv::measure_coverage(drawn, sv::ground_truth_polylines(gt),
                                          sv::default_tolerance(gt["stroke_width_px"].get<double>()), diag);
  INFO(fmt::format("final f1 {:.4f} chamfer {:.3f}", cov.f1, cov.chamfer_px));
  CHECK(cov.f1 >= 0.97);
  spit(s.dir() / "final.json", sv::dump_scene(last));
  // With the evaluation corpus beside the project, its own scorer agrees.
  const std::string scorer = std::string(SV_TEST_DATA) + "/../../../shared/eval/score.py";
  if (std::filesystem::exists(scorer) && std::filesystem::exists("/usr/bin/python3")) {
    Run sc = s.sh(fmt::format("/usr/bin/python3 {} {} final.json --json", scorer, data(name + ".gt.json")));
    REQUIRE(sc.status == 0);
    json scores = json::parse(sc.out);
    INFO(sc.out);
    CHECK(scores["f1"].get<double>() >= 0.97);
  }
}

TEST_CASE("sv-edit as a filter, and SimulateEdit", "[e2e][session]") {
  Session s("filter");
  REQUIRE(s.sh(fmt::format("{} --no-store {} | {} --no-store | {} --no-store > a.json", bin("sv-skeleton"),
                           data("tabler_circle-letter-x_w8.png"), bin("sv-fit"), bin("sv-route")))
              .status == 0);
  // Scene in, scene out; the envelope goes where --result says.
  Run r = s.sh(bin("sv-edit") + " delete-primitive --no-store --primitive-ids p_0002 --result r.json < a.json > b.json");
  REQUIRE(r.status == 0);
  sv::Scene b = sv::parse_scene(slurp(s.dir() / "b.json"));
  sv::Scene a = sv::parse_scene(slurp(s.dir() / "a.json"));
  CHECK(b.revision.parent == a.revision.id);
  CHECK(b.revision.tool == "DeletePrimitive");
  CHECK(!b.primitive("p_0002"));
  CHECK(json::parse(slurp(s.dir() / "r.json"))["revision_id"] == b.revision.id);
  // The same input and request give the same bytes.
  REQUIRE(s.sh(bin("sv-edit") + " delete-primitive --no-store --primitive-ids p_0002 a.json > c.json").status == 0);
  CHECK(slurp(s.dir() / "c.json") == slurp(s.dir() / "b.json"));
  // SimulateEdit: a batch of EditSpecs, reported, nothing written.
  Run sim = s.sh(bin("sv-edit") + " simulate-edit --no-store a.json --edits " +
                 q({{{"kind", "split_primitive"}, {"payload", {{"primitive_id", "p_0003"}, {"at", 0.5}}}},
                    {{"kind", "reverse_direction"}, {"payload", {{"primitive_ids", {"p_0001"}}}}}}));
  REQUIRE(sim.status == 0);
  json env = json::parse(sim.out);
  CHECK(env["removed_primitive_ids"] == json({"p_0003"}));
  CHECK(env["new_primitive_ids"].size() == 2);
  CHECK(env["edits"].size() == 2);
  CHECK(env["before"].contains("f1"));
  // Malformed or truncated input is refused with the contract's code, never half a scene: one
  // line on stderr and, in filter mode, nothing on stdout for the next stage to read.
  Run bad = s.sh("head -c 300 a.json | " + bin("sv-edit") + " reverse-direction --no-store --primitive-ids p_0001");
  CHECK(bad.status == 3);
  CHECK(bad.out.empty());
  CHECK(bad.err.find("invalid_scene") != std::string::npos);
  CHECK(count_lines(bad.err) == 1);
}
