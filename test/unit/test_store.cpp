#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <functional>

#include "error_code.hpp"
#include "core/error.hpp"
#include "core/file.hpp"
#include "core/scene_check.hpp"
#include "store/maintenance.hpp"
#include "store/store.hpp"

using namespace sv;

namespace {

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / fmt::format("sv-test-{}-{}", name, ::getpid());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

Scene scene_with_note(const std::string& note) {
  Scene s;
  s.revision.tool = "test";
  s.revision.note = note;
  return s;
}


}  // namespace

TEST_CASE("objects are content-addressed and verified when read", "[store]") {
  Store st = Store::init(fresh_dir("objects"));
  std::string blob = st.put_blob("hello");
  CHECK(blob == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
  CHECK(st.read_object(blob) == "hello");
  CHECK(st.put_blob("hello") == blob);  // idempotent
  Scene s = scene_with_note("a");
  std::string id = st.put_scene(s);
  CHECK(st.read_scene(id).revision.note == "a");
  CHECK(st.read_scene(id).revision.id == id);

  // Flip one byte: the object no longer matches its name.
  fs::path p = st.root() / "objects" / id.substr(0, 2) / id.substr(2);
  fs::permissions(p, fs::perms::owner_write, fs::perm_options::add);
  std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(5);
  f.put('#');
  f.close();
  CHECK(code_of([&] { st.read_object(id); }) == Code::corrupt_object);
}

TEST_CASE("record writes a revision only on the one HEAD names, and a stale one writes nothing", "[store]") {
  Store st = Store::init(fresh_dir("record"));
  Scene a = scene_with_note("a"), b = scene_with_note("b"), c = scene_with_note("c");
  const std::string ia = st.record(a, "", "first");
  CHECK(st.head_id() == ia);
  const std::string ib = st.record(b, ia, "second");
  CHECK(st.head_id() == ib);
  // A result computed from `ia` after HEAD moved on: refused before its object is written.
  const auto objects = [&] {
    size_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(st.root() / "objects")) n += e.is_regular_file();
    return n;
  };
  const size_t before = objects();
  CHECK(code_of([&] { st.require_head(ia); }) == Code::conflict);
  CHECK(code_of([&] { st.record(c, ia, "stale"); }) == Code::conflict);
  CHECK(objects() == before);
  CHECK(st.head_id() == ib);
  CHECK(st.log().size() == 2);
}

TEST_CASE("HEAD advances only from the value the writer saw", "[store]") {
  Store st = Store::init(fresh_dir("head"));
  CHECK(st.head_id().empty());
  CHECK(st.head_branch() == "main");
  CHECK(code_of([&] { st.resolve("HEAD"); }) == Code::not_found);
  Scene a = scene_with_note("a"), b = scene_with_note("b");
  std::string ia = st.put_scene(a), ib = st.put_scene(b);
  st.advance_head("", ia, "first");
  CHECK(st.resolve("HEAD") == ia);
  CHECK(st.resolve("main") == ia);
  CHECK(st.resolve(ia.substr(0, 8)) == ia);
  CHECK(code_of([&] { st.advance_head("", ib, "stale"); }) == Code::conflict);
  st.advance_head(ia, ib, "second");
  CHECK(st.head_id() == ib);
  auto log = st.log();
  REQUIRE(log.size() == 2);
  CHECK(log[1].old_id == ia);
  CHECK(log[1].new_id == ib);
  CHECK(log[1].message == "second");
  CHECK(code_of([&] { st.resolve("nope"); }) == Code::not_found);
}

TEST_CASE("branches and checkout move HEAD between revisions", "[store]") {
  Store st = Store::init(fresh_dir("branch"));
  Scene a = scene_with_note("a"), b = scene_with_note("b");
  std::string ia = st.put_scene(a), ib = st.put_scene(b);
  st.advance_head("", ia, "a");
  st.set_branch("experiment", ia, std::string(), "branch");
  st.checkout("experiment", "checkout");
  CHECK(st.head_branch() == "experiment");
  st.advance_head(ia, ib, "b on experiment");
  CHECK(st.branch_id("experiment") == ib);
  CHECK(st.branch_id("main") == ia);
  st.checkout(ia, "detach");
  CHECK(st.head_branch().empty());
  CHECK(st.head_id() == ia);
  CHECK(st.branches() == std::vector<std::string>{"experiment", "main"});
  CHECK_FALSE(is_valid_branch_name("../escape"));
  CHECK(code_of([&] { st.set_branch("../x", ia, std::nullopt, ""); }) == Code::invalid_selection);
}

TEST_CASE("the store is found as git finds .git", "[store]") {
  fs::path d = fresh_dir("locate");
  Store::init(d);
  fs::create_directories(d / "a" / "b");
  fs::path old = fs::current_path();
  fs::current_path(d / "a" / "b");
  ::unsetenv("SV_STORE");
  auto found = Store::locate(std::nullopt);
  fs::current_path(old);
  REQUIRE(found);
  CHECK(fs::equivalent(*found, d / ".svrev"));
  CHECK(code_of([&] { Store::locate(std::string("/nonexistent-sv-store")); }) == Code::not_found);
}

TEST_CASE("branch names never reach outside refs/heads", "[store]") {
  fs::path d = fresh_dir("names");
  Store st = Store::init(d);
  Scene a = scene_with_note("a");
  std::string ia = st.put_scene(a);
  st.advance_head("", ia, "a");
  const bool outside_x_before = fs::exists(d.parent_path() / "x");
  for (const std::string name : {"../../x", "a/../../b", "..", "/abs", "a/", "/", "a//b", ".hidden", "a/.b", "-x",
                                 "x.lock", "HEAD", "sp ace", "new\nline", ""}) {
    CAPTURE(name);
    CHECK_FALSE(is_valid_branch_name(name));
    CHECK(code_of([&] { st.set_branch(name, ia, std::nullopt, "bad"); }) == Code::invalid_selection);
    CHECK(st.branch_id(name).empty());
  }
  CHECK(!fs::exists(d / "x"));
  CHECK(fs::exists(d.parent_path() / "x") == outside_x_before);
  CHECK(!fs::exists(d / ".svrev" / "b"));
  CHECK(!fs::exists(d / "b"));
  CHECK(st.branches() == std::vector<std::string>{"main"});

  // Folders of branches are fine; a branch and a folder of the same name are not.
  st.set_branch("reverted/abc", ia, std::string(), "backup");
  CHECK(st.branch_id("reverted/abc") == ia);
  CHECK(st.resolve("reverted/abc") == ia);
  CHECK(code_of([&] { st.set_branch("reverted", ia, std::nullopt, ""); }) == Code::invalid_selection);
  CHECK(code_of([&] { st.set_branch("main/sub", ia, std::nullopt, ""); }) == Code::invalid_selection);
  CHECK(code_of([&] { st.set_branch("reverted/abc", ia, std::string(), ""); }) == Code::conflict);
  CHECK(st.branches() == std::vector<std::string>{"main", "reverted/abc"});
}

TEST_CASE("the log stays one entry per line, even after a torn append", "[store]") {
  Store st = Store::init(fresh_dir("log"));
  Scene a = scene_with_note("a"), b = scene_with_note("b");
  std::string ia = st.put_scene(a), ib = st.put_scene(b);
  st.advance_head("", ia, "first\nforged 0 0 0 HEAD\tline");
  {
    std::ofstream torn(st.root() / "logs" / "HEAD", std::ios::app | std::ios::binary);
    torn << "0000 half a li";  // a writer killed mid-append
  }
  st.advance_head(ia, ib, "second");
  auto log = st.log();
  REQUIRE(log.size() == 2);
  CHECK(log[0].message == "first forged 0 0 0 HEAD line");
  CHECK(log[1].new_id == ib);
  CHECK(log[1].message == "second");
}

TEST_CASE("the final mark and temporary files", "[store]") {
  Store st = Store::init(fresh_dir("final"));
  Scene a = scene_with_note("a");
  std::string ia = st.put_scene(a);
  CHECK(st.final_id().empty());
  st.mark_final(ia, "Commit: because");
  CHECK(st.final_id() == ia);
  CHECK(st.resolve("final") == ia);
  CHECK(st.log().back().ref == "refs/tags/final");
  // A temporary file left by a killed writer is neither an object nor a branch.
  std::ofstream(st.root() / "objects" / ia.substr(0, 2) / ".tmp-x-123456") << "partial";
  std::ofstream(st.root() / "refs" / "heads" / ".tmp-main-123456") << "partial";
  CHECK(st.object_ids() == std::vector<std::string>{ia});
  CHECK(st.branches().empty());
  CHECK(is_temp_file_name(".tmp-main-123456"));
}

TEST_CASE("fsck counts temporary files anywhere in the store, and gc removes the stale ones", "[store]") {
  // Every file the store writes goes through a temporary beside it: objects, refs, logs, cache.
  // fsck once counted only those under objects/.
  Store st = Store::init(fresh_dir("temps"));
  Scene a = scene_with_note("a");
  const std::string ia = st.put_scene(a);
  fs::create_directories(st.root() / "cache" / "metrics");
  const std::vector<fs::path> temps = {st.root() / "objects" / ia.substr(0, 2) / ".tmp-x-1",
                                       st.root() / "refs" / "heads" / ".tmp-main-2", st.root() / "logs" / ".tmp-HEAD-3",
                                       st.root() / "cache" / "metrics" / ".tmp-m-4", st.root() / ".tmp-HEAD-5"};
  for (const auto& p : temps) std::ofstream(p) << "partial";
  FsckReport r = fsck(st);
  CHECK(r.temp_files == temps.size());
  CHECK(r.clean());
  CHECK(r.objects == 1);
  // Fresh ones may belong to a writer still at work; old ones go.
  CHECK(gc(st).temp_removed == 0);
  for (const auto& p : temps) fs::last_write_time(p, fs::file_time_type::clock::now() - std::chrono::minutes(5));
  CHECK(gc(st).temp_removed == temps.size());
  CHECK(fsck(st).temp_files == 0);
}

TEST_CASE("a writer that loses the race for HEAD leaves an unreferenced object, which gc removes", "[store]") {
  Store st = Store::init(fresh_dir("race"));
  Scene a = scene_with_note("a"), b = scene_with_note("b"), c = scene_with_note("c");
  const std::string ia = st.put_scene(a);
  st.advance_head("", ia, "a");
  // Both read HEAD = a; b moves it first, c stored its object before comparing.
  const std::string ib = st.put_scene(b), ic = st.put_scene(c);
  st.advance_head(ia, ib, "b");
  CHECK_THROWS_AS(st.advance_head(ia, ic, "c"), Error);
  CHECK(st.head_id() == ib);
  FsckReport r = fsck(st);
  CHECK(r.clean());
  CHECK(r.objects == 3);
  CHECK(r.unreferenced == 1);
  // Even --expire 0 spares an object younger than the grace (its writer may be about to name it).
  CHECK(gc(st, 0).kept_recent == 1);
  fs::last_write_time(st.root() / "objects" / ic.substr(0, 2) / ic.substr(2),
                      fs::file_time_type::clock::now() - std::chrono::minutes(2));
  GcReport g = gc(st, 0);
  CHECK(g.removed_ids == std::vector<std::string>{ic});
  CHECK(g.bytes_freed > 0);
  CHECK(fsck(st).unreferenced == 0);
  CHECK(st.read_scene(ib).revision.note == "b");
}

namespace {

// Two lines, toured, with a relation: a scene every check accepts.
Scene two_lines() {
  Scene s;
  s.graph = Graph{{{"v_0001", {0, 0}, 1, "end"}, {"v_0002", {10, 0}, 1, "end"}}, {}};
  s.graph->edges.push_back({"e_0001", "v_0001", "v_0002", {{0, 0}, {10, 0}}, false, 3, false});
  s.primitives = std::vector<Primitive>(2);
  (*s.primitives)[0].id = "p_0001";
  (*s.primitives)[0].shape = Shape::line({0, 0}, {5, 0});
  (*s.primitives)[1].id = "p_0002";
  (*s.primitives)[1].shape = Shape::line({5, 0}, {10, 0});
  s.tour = std::vector<TourStep>{{"p_0001"}, {"p_0002"}};
  s.relations = json::array({{{"kind", "collinear"}, {"primitives", {"p_0001", "p_0002"}}}});
  return s;
}

}  // namespace

TEST_CASE("the store refuses a scene that breaks the schema or its invariants, and writes nothing", "[store]") {
  Store st = Store::init(fresh_dir("refuse"));
  CHECK(check_scene_invariants(two_lines()) == "");
  Scene ok = two_lines();
  const std::string good = st.put_scene(ok);
  const auto before = st.object_ids();

  // Each defect, and the line naming it.
  std::vector<std::pair<std::function<void(Scene&)>, std::string>> defects = {
      {[](Scene& s) { (*s.primitives)[1].semantic_role = "expressive"; }, "semantic_role"},
      {[](Scene& s) { (*s.primitives)[1].id = "p_0001"; }, "two primitives have the id p_0001"},
      {[](Scene& s) { s.tour->push_back({"p_0009"}); }, "tour step 2 names primitive p_0009"},
      {[](Scene& s) { s.relations[0]["primitives"][1] = "p_0009"; }, "names primitive p_0009"},
      {[](Scene& s) { s.graph->edges[0].v1 = "v_0009"; }, "names vertex v_0009"},
      {[](Scene& s) { s.graph->vertices[1].id = "v_0001"; }, "two graph vertices have the id v_0001"},
      // Sizes: geometry off the page (an edit that moved it there), a stream no robot draws.
      {[](Scene& s) {
         s.source = Source{"a.png", std::string(64, '0'), 64, 48, 3};
         (*s.primitives)[1].shape = Shape::circle({32, 24}, 100);
       },
       "primitive p_0002 reaches (-68,-76) to (132,124), beyond the page and its margin (-64,-64)-(128,112)"},
      {[](Scene& s) { (*s.primitives)[1].shape = Shape::line({0, 0}, {2e6, 0}); }, "beyond the page"},
      {[](Scene& s) { s.commands = std::vector<Command>(1), (*s.commands)[0].distance = 2e7; },
       "command 0: distance 2e+07 is beyond 1e+07"},
  };
  for (auto& [spoil, why] : defects) {
    CAPTURE(why);
    Scene bad = two_lines();
    spoil(bad);
    try {
      st.put_scene(bad);
      FAIL("stored a scene that no read could use");
    } catch (const Error& e) {
      CHECK(e.code() == Code::invalid_scene);
      CHECK(std::string(e.what()).find(why) != std::string::npos);
      CHECK(std::string(e.what()).find("nothing was written") != std::string::npos);
    }
    CHECK(st.object_ids() == before);
  }
  CHECK(st.read_scene(good).primitives->size() == 2);
}

TEST_CASE("the store's id marks never go back", "[store]") {
  Store st = Store::init(fresh_dir("marks"));
  CHECK(st.id_mark("primitive") == 0);
  Scene a = two_lines();
  (*a.primitives)[1].id = "p_0007";
  a.tour->back().primitive = "p_0007";
  a.relations = json::array();
  st.put_scene(a);
  CHECK(st.id_mark("primitive") == 7);
  // An earlier revision (a revert) has lower ids and marks; the store keeps the highest.
  Scene b = two_lines();
  b.extra["id_marks"] = {{"primitive", 5}, {"region", 3}};
  st.put_scene(b);
  CHECK(st.id_mark("primitive") == 7);
  CHECK(st.id_mark("region") == 3);
  // A store without the file (made before it existed) derives the marks from its scenes.
  fs::remove(st.root() / "id_marks");
  CHECK(st.id_mark("primitive") == 7);
  CHECK(st.id_mark("region") == 3);
}

TEST_CASE("an object that is not a regular file, or is larger than any object, is refused before it is read",
          "[store][hostile]") {
  fs::path d = fresh_dir("special-objects");
  Store st = Store::init(d);
  Scene a = scene_with_note("a");
  const std::string ia = st.put_scene(a);
  const fs::path p = st.root() / "objects" / ia.substr(0, 2) / ia.substr(2);
  fs::remove(p);
  fs::create_symlink("/dev/zero", p);
  CHECK(st.has_object(ia));  // something is there: it is damage, not absence
  CHECK(code_of([&] { st.read_object(ia); }) == Code::corrupt_object);
  CHECK(code_of([&] { st.read_scene(ia); }) == Code::corrupt_object);
  fs::remove(p);
  REQUIRE(::mkfifo(p.c_str(), 0644) == 0);
  CHECK(code_of([&] { st.read_scene(ia); }) == Code::corrupt_object);  // no writer: a read would block forever
  fs::remove(p);
  // A sparse file the size of the scene limit and one byte: refused by its size, not read.
  { std::ofstream(p) << "{"; }
  fs::resize_file(p, kMaxSceneBytes + 1);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(code_of([&] { st.read_scene(ia); }) == Code::corrupt_object);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
  // put_object repairs the name: the planted file is replaced by the object.
  fs::remove(p);
  fs::create_symlink("/dev/zero", p);
  Scene again = scene_with_note("a");
  CHECK(st.put_scene(again) == ia);
  CHECK(st.read_scene(ia).revision.note == "a");
  FsckReport r = fsck(st);
  CHECK(r.clean());
}

TEST_CASE("writes never go through a symlinked folder of the store", "[store][hostile]") {
  fs::path d = fresh_dir("symlinked-fan"), outside = fresh_dir("symlinked-fan-outside");
  Store st = Store::init(d);
  // The fan-out folder of the blob "hello" (2cf24d…) is a symlink to a folder outside.
  fs::create_directories(st.root() / "objects");
  fs::create_directory_symlink(outside, st.root() / "objects" / "2c");
  CHECK(code_of([&] { st.put_blob("hello"); }) == Code::corrupt_object);
  CHECK(fs::is_empty(outside));
  // The cache and the views are best effort: nothing written, no failure.
  fs::create_directory_symlink(outside, st.root() / "cache");
  st.write_cache("metrics/x.json", "{}");
  CHECK(!st.read_cache("metrics/x.json"));
  fs::create_directory_symlink(outside, st.root() / "views");
  std::string why;
  CHECK(!st.write_view("v.png", "png", why));
  CHECK(why.find("not part of the store") != std::string::npos);
  CHECK(fs::is_empty(outside));
}

TEST_CASE("the log append follows the ref move: its failure is a warning, the move stands", "[store][hostile]") {
  Store st = Store::init(fresh_dir("log-fails"));
  Scene a = scene_with_note("a");
  const std::string ia = st.put_scene(a);
  fs::create_directories(st.root() / "logs" / "HEAD");  // a folder where the log is: append fails
  st.advance_head("", ia, "a");
  CHECK(st.head_id() == ia);
  const auto warnings = st.take_warnings();
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("refs/heads/main moved to") != std::string::npos);
  CHECK(st.take_warnings().empty());
  std::string why;
  CHECK(st.log(nullptr, &why).empty());
  CHECK(!why.empty());
  CHECK(code_of([&] { st.log(); }) == Code::corrupt_object);
  // gc cannot know what the log names: it removes nothing.
  CHECK(code_of([&] { gc(st, 0); }) == Code::corrupt_object);
}

TEST_CASE("gc removes only what is older than asked; a writer whose object it took writes it again", "[store][hostile]") {
  Store st = Store::init(fresh_dir("gc-aside"));
  const std::string id = st.put_blob("orphan");
  const std::string rel = "objects/" + id.substr(0, 2) + "/" + id.substr(2);
  const fs::path p = st.root() / rel;
  fs::last_write_time(p, fs::file_time_type::clock::now() - std::chrono::minutes(5));
  CHECK(!st.remove_if_older(rel, 3600));  // younger than asked: kept, untouched
  CHECK(fs::exists(p));
  CHECK(st.remove_if_older(rel, 60) == std::optional<uintmax_t>(6));
  CHECK(!fs::exists(p));
  // Gone: the writer about to name it writes it again (put_object), never names a missing object.
  CHECK(st.put_blob("orphan") == id);
  CHECK(st.read_object(id) == "orphan");
  Scene x = scene_with_note("x");
  st.advance_head("", st.put_scene(x), "x");
  CHECK(fsck(st).clean());
}
