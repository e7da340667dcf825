#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/hash.hpp"
#include "core/geometry.hpp"
#include "core/params.hpp"
#include "core/relation.hpp"
#include "core/scene.hpp"
#include "core/scene_check.hpp"

using namespace sv;

TEST_CASE("arc from bulge has the centre and radius of score.py's convention", "[core]") {
  // Quarter circle about the origin from angle 0 to +90 degrees: sweep +90, bulge tan(22.5).
  Shape a = Shape::arc({1, 0}, {0, 1}, std::tan(deg2rad(22.5)));
  CHECK(a.center.x == Approx(0).margin(1e-12));
  CHECK(a.center.y == Approx(0).margin(1e-12));
  CHECK(a.radius == Approx(1));
  CHECK(a.length() == Approx(kPi / 2));
  Vec2 mid = a.at(0.5);
  CHECK(mid.x == Approx(std::sqrt(0.5)));
  CHECK(mid.y == Approx(std::sqrt(0.5)));
  // Travel starts along +y (angle increasing) and ends along -x.
  CHECK(a.start_tangent().y == Approx(1));
  CHECK(a.end_tangent().x == Approx(-1));
  Shape r = a.reversed();
  CHECK(r.at(0.25).x == Approx(a.at(0.75).x));
  CHECK(r.start_tangent().x == Approx(1));
}

TEST_CASE("sampling a shape gives its points at even steps of the parameter, ends exact", "[core]") {
  for (const Shape& s : {Shape::arc({3, 1}, {-2, 5}, 0.7), Shape::arc({0, 0}, {4, 0}, -1.8), Shape::line({0, 0}, {3, 4}),
                         Shape::circle({1, 2}, 3)}) {
    const Polyline pts = s.sample(0.5, 0.3);
    const int n = static_cast<int>(pts.size()) - 1;
    REQUIRE(n >= 8);
    for (int i = 0; i <= n; ++i) {
      const Vec2 q = s.at(static_cast<double>(i) / n, 0.3);
      CHECK(dist(pts[i], q) <= (i == 0 || i == n ? 1e-12 : 0.0));  // the same arithmetic
      if (i > 0) CHECK(dist(pts[i], pts[i - 1]) <= 0.5 + 1e-9);
    }
    if (s.type != PrimType::circle) {
      CHECK((pts.front().x == s.p0.x && pts.front().y == s.p0.y));
      CHECK((pts.back().x == s.p1.x && pts.back().y == s.p1.y));
    }
  }
}

TEST_CASE("distance to an arc is radial inside its wedge and to the ends outside", "[core]") {
  Shape a = Shape::arc({1, 0}, {0, 1}, std::tan(deg2rad(22.5)));
  CHECK(a.distance_to({2, 0}) == Approx(1));
  CHECK(a.distance_to({0, -1}) == Approx(std::sqrt(2.0)));
  CHECK(wrap_deg(270) == Approx(-90));
  CHECK(wrap_deg(-180) == Approx(180));
}

TEST_CASE("scene round-trips and its revision id ignores revision.id", "[core]") {
  Scene s;
  s.source = Source{"a.png", std::string(64, 'a'), 10, 20, 3.5};
  s.primitives = std::vector<Primitive>{};
  Primitive p;
  p.id = "p_0001";
  p.shape = Shape::arc({0.123456789, 1.0 / 3}, {10.987654321, 2.0 / 7}, 0.33333333);
  s.primitives->push_back(p);
  p.id = "p_0002";
  p.shape = Shape::circle({5.55555555, 7.7777777}, 3.14159265);
  s.primitives->push_back(p);
  std::string id = assign_revision_id(s);
  Scene t = parse_scene(dump_scene(s));
  CHECK(t.revision.id == id);
  CHECK(assign_revision_id(t) == id);
  REQUIRE(t.primitives->size() == 2);
  CHECK(t.primitives->at(0).shape.bulge == Approx(0.333333));
  // Writing, reading and writing again gives the same bytes: ids survive a round trip.
  CHECK(dump_scene(t) == dump_scene(s));
  CHECK(dump_scene(parse_scene(dump_scene(t))) == dump_scene(s));
}

TEST_CASE("a scene's revision id is read off sealed text and computed for any other", "[core]") {
  Scene s;
  s.source = Source{"a.png", std::string(64, 'a'), 10, 20, 3.5};
  s.primitives = std::vector<Primitive>{Primitive{}};
  s.primitives->at(0).id = "p_0001";
  s.primitives->at(0).shape = Shape::line({1.25, 2}, {3, 4.5});
  s.revision.tool = "sv-fit";
  const std::string sealed = sealed_scene_text(s), id = s.revision.id;
  REQUIRE(id == sha256_hex(canonical_bytes(parse_scene(sealed))));
  CHECK(revision_id_of(parse_scene(sealed), sealed) == id);
  // Other spellings of the same scene (indented, no final newline) give the same id.
  const std::string pretty = json::parse(sealed).dump(2);
  CHECK(revision_id_of(parse_scene(pretty), pretty) == id);
  // An edit that kept the old id is not taken at its word: the id is that of what was read.
  std::string edited = sealed;
  edited.replace(edited.find("1.25"), 4, "1.75");
  const Scene e = parse_scene(edited);
  CHECK(e.revision.id == id);
  CHECK(revision_id_of(e, edited) == sha256_hex(canonical_bytes(e)));
  CHECK(revision_id_of(e, edited) != id);
}

TEST_CASE("readers refuse bad scenes with the contract's codes", "[core]") {
  auto code_of = [](const std::string& text) {
    try {
      parse_scene(text);
    } catch (const Error& e) {
      return std::string(code_name(e.code()));
    }
    return std::string("ok");
  };
  CHECK(code_of("{\"format\":\"sv.scene\",\"version\":1}") == "ok");
  CHECK(code_of("{\"format\":\"sv.scene\",\"version\":99}") == "unsupported_version");
  CHECK(code_of("{\"format\":\"sv.scene\",\"vers") == "invalid_scene");
  CHECK(code_of("[1,2]") == "invalid_scene");
  CHECK(code_of("{\"format\":7,\"version\":1}") == "invalid_scene");
  CHECK(code_of(R"({"format":"sv.scene","version":1,"revision":{"tool":[1]}})") == "invalid_scene");
  CHECK(code_of(R"({"format":"sv.scene","version":1,"primitives":[{"id":"p_0001","type":"line","p0":[NaN,0],"p1":[1,1]}]})") == "invalid_scene");
  CHECK(code_of(R"({"format":"sv.scene","version":1,"primitives":[{"id":"p_0001","type":"line","p0":[null,0],"p1":[1,1]}]})") == "invalid_scene");
  CHECK(code_of(R"({"format":"sv.scene","version":1,"primitives":[{"id":"p_0001","type":"line","p0":[1e999,0],"p1":[1,1]}]})") == "invalid_scene");
  CHECK(code_of(R"({"format":"sv.scene","version":1,"primitives":[{"id":"p_0001","type":"line"}]})") == "invalid_scene");
  // A whole number no int holds (found by fuzz_scene: reading it was undefined behaviour).
  CHECK(code_of(R"({"format":"sv.scene","version":1,"source":{"path":"a.png","sha256":")" + std::string(64, '0') +
                R"(","width_px":4.44444e100,"height_px":48,"stroke_width_px":3}})") == "invalid_scene");
  CHECK(code_of(R"({"format":"sv.scene","version":1,"graph":{"vertices":[{"id":"v_0001","x":0,"y":0,"degree":9999999999,"kind":"end"}],"edges":[]}})") == "invalid_scene");
  // A command beyond any move within the coordinates (its samples and poses would fill memory).
  CHECK(code_of(R"({"format":"sv.scene","version":1,"commands":[{"kind":"arc","radius":1e7,"degrees":360}]})") == "ok");
  CHECK(code_of(R"({"format":"sv.scene","version":1,"commands":[{"kind":"arc","radius":1e300,"degrees":360}]})") == "invalid_scene");
  CHECK(code_of(R"({"format":"sv.scene","version":1,"commands":[{"kind":"spin","degrees":-2e7}]})") == "invalid_scene");
  // Geometry the tools would sample or rasterize without end: off the source's page and its
  // margin, an arc of bulge 1e6 between near points (1.6e12 px long), strokes beyond 2^24 px.
  const std::string page = R"({"format":"sv.scene","version":1,"source":{"path":"a.png","sha256":")" +
                           std::string(64, '0') + R"(","width_px":64,"height_px":48,"stroke_width_px":3},"primitives":)";
  auto prims = [&](const std::string& p) { return code_of(page + p + "}"); };
  CHECK(prims(R"([{"id":"p_0001","type":"circle","center":[32,24],"radius":80}])") == "ok");
  CHECK(prims(R"([{"id":"p_0001","type":"circle","center":[32,24],"radius":100}])") == "invalid_scene");
  CHECK(prims(R"([{"id":"p_0001","type":"arc","p0":[0,0],"p1":[1,0],"bulge":1}])") == "ok");
  CHECK(prims(R"([{"id":"p_0001","type":"arc","p0":[0,0],"p1":[1,0],"bulge":1e6}])") == "invalid_scene");
  std::string many = "[";
  for (int i = 1; i <= 50000; ++i)  // 50,000 circles of 400 px
    many += fmt::format(R"({}{{"id":"p_{:04d}","type":"circle","center":[32,24],"radius":64}})", i > 1 ? "," : "", i);
  CHECK(prims(many + "]") == "invalid_scene");
  CHECK(exit_status(Code::unsupported_version) == 3);
  CHECK(exit_status(Code::not_found) == 4);
  CHECK(exit_status(Code::conflict) == 5);
}

TEST_CASE("same_shape compares type and geometry within the tolerances given", "[core]") {
  Shape a = Shape::arc({0, 0}, {10, 0}, 0.3);
  CHECK(same_shape(a, a));
  CHECK_FALSE(same_shape(a, Shape::arc({0, 0}, {10, 0.0005}, 0.3)));
  CHECK(same_shape(a, Shape::arc({0, 0}, {10, 0.0005}, 0.3), 1e-3));
  CHECK_FALSE(same_shape(a, Shape::arc({0, 0}, {10, 0}, 0.31), 1e-3, 1e-6));
  CHECK_FALSE(same_shape(a, Shape::line({0, 0}, {10, 0}), 1));
  CHECK(same_shape(Shape::circle({5, 5}, 3), Shape::circle({5, 5.0001}, 3), 1e-3));
}

namespace {

Scene lines_scene(int n) {
  Scene s;
  s.primitives = std::vector<Primitive>{};
  for (int i = 0; i < n; ++i) {
    Primitive p;
    p.id = fmt::format("p_{:04d}", i + 1);
    p.shape = Shape::line({double(i), 0}, {double(i), 10});
    s.primitives->push_back(p);
  }
  return s;
}

}  // namespace

TEST_CASE("Scene::primitive finds ids in constant time and follows every change", "[core][index]") {
  Scene s = lines_scene(100000);
  // Every id once: a linear search made this 5e9 comparisons (the timings are in scripts/bench).
  for (const auto& p : *s.primitives) REQUIRE(s.primitive(p.id) == &p);
  CHECK(s.primitive("p_999999") == nullptr);
  // Changes made directly on the vector: appended, erased, replaced in place, reordered, copied.
  Primitive added;
  added.id = "p_200000";
  s.primitives->push_back(added);
  REQUIRE(s.primitive("p_200000") != nullptr);
  CHECK(s.primitive("p_200000")->id == "p_200000");
  s.primitives->erase(s.primitives->begin());
  CHECK(s.primitive("p_0001") == nullptr);
  CHECK(s.primitive("p_0002") == &s.primitives->front());
  (*s.primitives)[5].id = "p_300000";
  CHECK(s.primitive("p_300000") == &(*s.primitives)[5]);
  std::reverse(s.primitives->begin(), s.primitives->end());
  CHECK(s.primitive("p_0002") == &s.primitives->back());
  Scene copy = s;
  CHECK(copy.primitive("p_0002") == &copy.primitives->back());
  s.primitives.reset();
  CHECK(s.primitive("p_0002") == nullptr);
}

TEST_CASE("parsing refuses deep, long and duplicate input before building it", "[core][limits]") {
  auto refused = [](const std::string& text, const std::string& says) {
    INFO(text.substr(0, 120));
    try {
      parse_scene(text);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == Code::invalid_scene);
      CHECK(std::string(e.what()).find(says) != std::string::npos);
    }
  };
  auto deep = [](int n) { return std::string(n, '[') + std::string(n, ']'); };
  const std::string head = R"({"format":"sv.scene","version":1,)";
  // 63 levels under the top-level object are the most allowed (64 in all).
  CHECK_NOTHROW(parse_scene(head + R"("zzz":)" + deep(63) + "}"));
  refused(head + R"("zzz":)" + deep(64) + "}", "nested deeper than 64 levels");
  refused(head + R"("zzz":)" + deep(1000000) + "}", "nested deeper than 64 levels");
  refused(head + R"("zzz":")" + std::string(kMaxJsonStringBytes + 1, 'x') + "\"}", "a string longer than");
  refused(head + R"("primitives":[{"id":"p_)" + std::string(40000, '1') + R"(","type":"line","p0":[0,0],"p1":[1,1]}]})",
          "an id of more than 64 characters");
  refused(head + R"("primitives":[{"id":"p_0001","type":"line","p0":[0,0],"p1":[1,1]},)"
                 R"({"id":"p_0001","type":"line","p0":[0,0],"p1":[2,1]}]})",
          "primitive id p_0001 is used more than once");
  refused(head + R"("primitives":[{"id":"p_0001","type":"line","p0":[0,0],"p1":[1,1]}],)"
                 R"("tour":[{"primitive":"p_0002","direction":"forward"}]})",
          "tour/0 names primitive p_0002");
  refused(head + R"("graph":{"vertices":[],"edges":[{"id":"e_0001","v0":"v_0001","v1":"v_0001","points":[[0,0],[1,1]],"closed":false}]}})",
          "edge e_0001 names vertex v_0001");
}

TEST_CASE("serialising deeply nested metrics rounds every level", "[core][limits]") {
  // Built in code, not parsed (the reader refuses more than 64 levels): the writer rounds in
  // place with its own stack, so every level is reached without a copy per level.
  json deep = 0.123456789;
  for (int i = 0; i < 1000; ++i) deep = json{{"a", std::move(deep)}};
  Scene s;
  s.metrics = std::move(deep);
  json j = to_json(s);
  const json* v = &j["metrics"];
  int depth = 0;
  while (v->is_object()) v = &(*v)["a"], ++depth;
  CHECK(depth == 1000);
  CHECK(v->get<double>() == 0.123457);
}

TEST_CASE("a parameter table refuses unknown keys and values outside the limits, naming both", "[core][params]") {
  ParamSpec tol;
  tol.key = "x.tolerance_px";
  tol.value = 1;
  tol.min = 0.5;
  tol.max = 4;
  tol.unit = "px";
  tol.doc = "how far";
  ParamSpec passes;
  passes.key = "x.passes";
  passes.type = ParamType::integer;
  passes.value = 3;
  ParamSpec derived;
  derived.key = "x.join_px";
  derived.derivation = "2 * x.tolerance_px";
  derived.set_by = "";
  const ParamTable t{"sv-x", {tol, passes, derived}};
  CHECK_NOTHROW(t.check({{"x.tolerance_px", 0.5}, {"x.passes", 7}}));
  CHECK_NOTHROW(t.check({{"x.tolerance_px", 4}}));
  auto refusal = [&](const std::map<std::string, double>& settings) {
    try {
      t.check(settings);
    } catch (const Error& e) {
      CHECK(e.code() == Code::invalid_selection);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refusal({{"x.bogus", 1}}).find("unknown parameter 'x.bogus'") != std::string::npos);
  std::string low = refusal({{"x.tolerance_px", 0.25}});
  CHECK(low.find("x.tolerance_px") != std::string::npos);
  CHECK(low.find("it must be between 0.5 and 4 px") != std::string::npos);
  CHECK(refusal({{"x.tolerance_px", 5}}).find("between 0.5 and 4 px") != std::string::npos);
  CHECK(refusal({{"x.passes", 2.5}}).find("whole number") != std::string::npos);
  CHECK(refusal({{"x.passes", -1}}).find("it must be at least 0") != std::string::npos);
  CHECK(refusal({{"x.passes", -1}}).find("inf") == std::string::npos);
  CHECK(refusal({{"x.join_px", 1}}).find("derived") != std::string::npos);

  auto j = t.to_json();
  CHECK(j["stage"] == "sv-x");
  REQUIRE(j["parameters"].size() == 3);
  const auto& p0 = j["parameters"][0];
  for (const char* field : {"key", "type", "default", "derivation", "min", "max", "unit", "doc"}) CHECK(p0.contains(field));
  CHECK(p0["default"] == 1);
  CHECK(p0["derivation"].is_null());
  CHECK(p0["max"] == 4);
  CHECK(j["parameters"][1]["type"] == "integer");
  CHECK(j["parameters"][1]["max"].is_null());  // unbounded
  CHECK(j["parameters"][2]["derivation"] == "2 * x.tolerance_px");

  Scene s;
  t.record(s, "x.tolerance_px", 2, "user");
  CHECK(s.config["x.tolerance_px"] == json({{"value", 2}, {"from", "user"}, {"doc", "how far"}}));
  CHECK_THROWS_AS(t.record(s, "x.undeclared", 1, "default"), Error);
}

TEST_CASE("write_file_atomic writes whole files and leaves nothing behind when it cannot", "[core][file]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("sv-file-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "out.txt").string();
  write_file_atomic(path, "first");
  write_file_atomic(path, "second, longer");
  std::ifstream in(path, std::ios::binary);
  std::string back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(back == "second, longer");
  // Into a directory that does not exist, and over a directory: refused, nothing left.
  CHECK_THROWS_AS(write_file_atomic((dir / "missing" / "x.txt").string(), "x"), Error);
  fs::create_directories(dir / "taken");
  try {
    write_file_atomic((dir / "taken").string(), "x");
    FAIL("a directory was overwritten");
  } catch (const Error& e) {
    CHECK(e.code() == Code::io_error);
  }
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"out.txt", "taken"});
  fs::remove_all(dir);
}

TEST_CASE("BackgroundWriter writes every file put, in order, and returns each failure with its tag", "[core][file]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("sv-writer-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "taken.txt");  // a directory where file 3 should go
  {
    BackgroundWriter writer;
    // More files than it queues: put() waits for room, nothing is dropped. File 5 is written
    // twice; the later bytes win, as they would one after the other.
    for (size_t i = 0; i < 12; ++i) {
      const std::string name = i == 3 ? "taken.txt" : fmt::format("f{}.txt", i == 11 ? 5 : i);
      writer.put(i, (dir / name).string(), fmt::format("file {}", i), NameSync::by_caller);
    }
    const auto failed = writer.failures(true);
    REQUIRE(failed.size() == 1);
    CHECK(failed[0].first == 3);
    try {
      std::rethrow_exception(failed[0].second);
    } catch (const Error& e) {
      CHECK(e.code() == Code::io_error);
      CHECK(std::string(e.what()).find("taken.txt") != std::string::npos);
    }
    CHECK(writer.failures(true).empty());  // each failure is returned once
    writer.put(20, (dir / "last.txt").string(), "last", NameSync::now);
  }  // the destructor waits for "last.txt"
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  for (int i : {0, 1, 2, 4, 6, 10}) CHECK(slurp(dir / fmt::format("f{}.txt", i)) == fmt::format("file {}", i));
  CHECK(slurp(dir / "f5.txt") == "file 11");
  CHECK(slurp(dir / "last.txt") == "last");
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  CHECK(files == 11);  // f0-f10 less f3, and last.txt: no temporary left
  fs::remove_all(dir);
}

TEST_CASE("relation kinds convert to and from the scene's names", "[core][relation]") {
  for (RelationKind k : {RelationKind::parallel, RelationKind::perpendicular, RelationKind::horizontal,
                         RelationKind::vertical, RelationKind::collinear, RelationKind::tangent_continuity,
                         RelationKind::equal_radius, RelationKind::concentric, RelationKind::coincident,
                         RelationKind::mirror})
    CHECK(relation_kind_of(relation_kind_name(k)) == k);
  CHECK(std::string(relation_kind_name(RelationKind::tangent_continuity)) == "tangent_continuity");
  CHECK_FALSE(relation_kind_of("tangent").has_value());
  CHECK(is_angular(RelationKind::tangent_continuity));
  CHECK_FALSE(is_angular(RelationKind::concentric));
}

TEST_CASE("sha256_hex gives the standard digests", "[core]") {
  // FIPS 180-2's examples, and the empty input.
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
