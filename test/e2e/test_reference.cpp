// CompareToReference on a real drawing: a revision that draws the same as its parent compares
// identical to it, a deleted primitive shows in the pixels, the topology and the forms, and the
// references agree with the scoreboard where they measure the same thing.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "core/schema.hpp"
#include "process.hpp"
#include "store/store.hpp"

using namespace svtest;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

fs::path reference_store() { return pipeline_store("reference-store", "tabler_hexagons_w5.png"); }

json tool(const std::string& exe, const std::string& args) {
  Run r = run(fmt::format("cd {} && {} {}", reference_store().string(), bin(exe), args));
  INFO(args << "\n" << r.out << r.err);
  REQUIRE(r.status == 0);
  return json::parse(r.out);
}

json compare(const std::string& args) {
  json env = tool("sv-diagnose", "compare-to-reference --rev HEAD " + args);
  static const json schema =
      json::parse(run(bin("sv-diagnose") + " compare-to-reference --schema").out)["result"];
  CHECK(sv::Schema(schema).first_error(env) == "");
  return env;
}

}  // namespace

TEST_CASE("compare-to-reference: the same drawing, pixel, topology and semantics, then a primitive deleted",
          "[e2e][reference]") {
  // HEAD is sv-simulate's revision: it draws exactly what its parent (sv-route's) draws.
  json same = compare("--reference previous_revision --aspect pixel");
  CHECK(same["pixel"]["f1"] == 1.0);
  CHECK(same["pixel"]["chamfer_px"] == 0.0);
  CHECK(same["images"].contains("reference"));
  json same_topo = compare("--reference previous_revision --aspect topology");
  CHECK(same_topo["topology"]["differences"].empty());
  CHECK(same_topo["topology"]["reference"] == same_topo["topology"]["revision"]);
  json same_sem = compare("--reference previous_revision --aspect semantics");
  CHECK(same_sem["semantics"]["overall"] == 1.0);
  CHECK(same_sem["semantics"]["reference_closed_regions"] == same_sem["semantics"]["revision_closed_regions"]);
  const int holes = same_topo["topology"]["revision"]["holes"];
  CHECK(holes == 3);  // the three hexagons

  // Against the source: close to the ink, and on centrelines the same f1 the scoreboard gives
  // against the stroke graph.
  json raster = compare("--reference source_raster --aspect pixel");
  CHECK(raster["pixel"]["measured_on"] == "pixels");
  CHECK(raster["pixel"]["f1"].get<double>() > 0.9);
  json skeleton = compare("--reference source_skeleton");
  json eval = tool("sv-simulate", "evaluate-revision --rev HEAD --metrics f1");
  CHECK(skeleton["pixel"]["f1"] == eval["graph_f1"]);
  json baseline = compare("--reference high_geometry_baseline");
  CHECK(baseline["pixel"]["f1"].get<double>() > 0.9);
  json raster_topo = compare("--reference source_raster --aspect topology");
  CHECK(raster_topo["topology"]["reference"]["holes"] == holes);

  // The first revisions: sv-skeleton's has no parent, sv-fit's parent draws nothing.
  sv::Store st(reference_store() / ".svrev");
  std::vector<std::string> chain = {st.head_id()};
  while (!st.read_scene(chain.back()).revision.parent.empty()) chain.push_back(st.read_scene(chain.back()).revision.parent);
  REQUIRE(chain.size() == 4);
  json first = compare("--reference previous_revision --revision " + chain[3]);
  CHECK(first["compared"] == false);
  CHECK(first["warnings"][0].get<std::string>().find("no parent") != std::string::npos);
  json fitted = compare("--reference previous_revision --revision " + chain[2]);
  CHECK(fitted["compared"] == true);
  CHECK(fitted["pixel"]["f1"] == 0.0);
  CHECK_FALSE(fitted["pixel"].contains("chamfer_px"));  // no distance to a reference that draws nothing

  // Delete one side of a cell: the loop opens.
  const json listing = tool("sv-diagnose", "list-primitives --rev HEAD --filter.types line --sort-by length_desc --limit 1");
  const std::string victim = listing["primitives"][0]["id"];
  tool("sv-edit", "delete-primitive --rev HEAD --primitive-ids " + victim + " --no-confirm-no-topology-break");
  json pixel = compare("--reference previous_revision --aspect pixel");
  CHECK(pixel["pixel"]["recall"].get<double>() < 1.0);
  CHECK(pixel["pixel"]["precision"] == 1.0);
  CHECK(pixel["pixel"]["findings"].get<int>() >= 1);
  json topo = compare("--reference previous_revision --aspect topology");
  const json& t = topo["topology"];
  CHECK(t["revision"]["holes"].get<int>() < t["reference"]["holes"].get<int>());
  bool new_end = false;
  for (const auto& d : t["differences"]) new_end = new_end || (d["feature"] == "end_point" && d["change"] == "new");
  CHECK((new_end || t["revision"]["end_point_count"] != t["reference"]["end_point_count"]));
  CHECK(topo["delta_summary"].get<std::string>().find("holes") != std::string::npos);
  // By the forms: one region fewer closed, and closure says so where it opened.
  json sem = compare("--reference previous_revision --aspect semantics");
  CHECK(sem["semantics"]["revision_closed_regions"].get<int>() < sem["semantics"]["reference_closed_regions"].get<int>());
  for (const auto& a : sem["semantics"]["aspects"])
    if (a["aspect"] == "closure") {
      CHECK(a["score"].get<double>() < 1.0);
      CHECK(!a["affected_regions"].empty());
    }

  // A request for what is not there is refused by the contract.
  Run r = run(fmt::format("cd {} && {} compare-to-reference --rev HEAD --aspect colour", reference_store().string(),
                          bin("sv-diagnose")));
  CHECK(r.status == 2);
}
