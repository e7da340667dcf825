// sv-mcp driven as an agent host drives it: recorded NDJSON exchanges on its standard input, each
// reply checked for its JSON-RPC shape and every tool result against the registry's schemas
// (the result envelope, or the error envelope when isError), with the project's validator.
#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <dirent.h>
#include <poll.h>

#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <string_view>
#include <thread>

#include <opencv2/core.hpp>

#include "core/error.hpp"
#include "core/schema.hpp"
#include "process.hpp"
#include "raster/png.hpp"
#include "tools/tool.hpp"

using namespace svtest;
using nlohmann::json;

namespace {

const std::string kDrawing = "feather_shopping-cart_w5";

// A directory with a store whose HEAD is the drawing through the whole pipeline; returns HEAD.
std::string make_store(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const std::string cd = "cd " + dir.string() + " && ";
  REQUIRE(run(cd + bin("sv-commit") + " init").status == 0);
  REQUIRE(run(cd + fmt::format("{} {} | {} | {} | {} > /dev/null", bin("sv-skeleton"), data(kDrawing + ".png"),
                               bin("sv-fit"), bin("sv-route"), bin("sv-simulate")))
              .status == 0);
  Run r = run(cd + bin("sv-commit") + " status --json");
  REQUIRE(r.status == 0);
  return json::parse(r.out)["current_revision_id"];
}

// sv-mcp on these lines (as given: the test writes the newlines); its replies in order.
std::vector<json> converse(const std::filesystem::path& dir, const std::string& lines, const std::string& args = "",
                           Run* out = nullptr) {
  static int n = 0;
  const auto in = dir / fmt::format("in{}.ndjson", n++);
  spit(in, lines);
  Run r = run(fmt::format("cd {} && {} {} < {}", dir.string(), bin("sv-mcp"), args, in.string()));
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK((r.out.empty() || r.out.back() == '\n'));  // every reply ends its line
  if (out) *out = r;
  return json_lines(r.out);
}

std::string request(const json& id, const std::string& method, const json& params = json::object()) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump() + "\n";
}
std::string notification(const std::string& method, const json& params = json::object()) {
  return json{{"jsonrpc", "2.0"}, {"method", method}, {"params", params}}.dump() + "\n";
}
std::string call(const json& id, const std::string& tool, const json& args = json::object()) {
  return request(id, "tools/call", {{"name", tool}, {"arguments", args}});
}
std::string initialize(const json& id, const std::string& version) {
  return request(id, "initialize", {{"protocolVersion", version}, {"capabilities", json::object()},
                                    {"clientInfo", {{"name", "sv-tests"}, {"version", "1"}}}});
}

// JSON-RPC 2.0: the version, the id, exactly one of result and error; an error's code is one
// of the protocol's.
void check_shape(const json& r) {
  INFO(r.dump().substr(0, 400));
  REQUIRE(r.is_object());
  CHECK(r["jsonrpc"] == "2.0");
  REQUIRE(r.contains("id"));
  CHECK(r.contains("result") != r.contains("error"));
  if (r.contains("error")) {
    CHECK(std::set<int>{-32700, -32600, -32601, -32602}.count(r["error"]["code"].get<int>()) == 1);
    CHECK(r["error"]["message"].is_string());
  }
}

std::map<json, json> by_id(const std::vector<json>& replies) {
  std::map<json, json> out;
  for (const auto& r : replies) {
    check_shape(r);
    if (!r["id"].is_null()) CHECK(out.emplace(r["id"], r).second);  // answered once
  }
  return out;
}

// A tools/call result: its text is the envelope's llm_text, each image a PNG for the person
// (and the model where the tool says so), the structured content valid against the output
// schema the server listed and against the registry's schema of a result or of an error.
void check_call(const json& result, const std::string& tool, const json& listed_output_schema) {
  INFO(tool << ": " << result.dump().substr(0, 600));
  const json& env = result["structuredContent"];
  REQUIRE(env.is_object());
  CHECK(result["isError"] == !env["ok"].get<bool>());
  REQUIRE(result["content"].is_array());
  REQUIRE(!result["content"].empty());
  std::string text = env["llm_text"];
  for (const auto& w : env.value("warnings", json::array())) text += "\nwarning: " + w.get<std::string>();
  CHECK(result["content"][0] == json{{"type", "text"}, {"text", text}});
  const sv::Tool* t = sv::find_tool(tool);
  REQUIRE(t);
  for (size_t i = 1; i < result["content"].size(); ++i) {
    const json& block = result["content"][i];
    CHECK(block["type"] == "image");
    CHECK(block["mimeType"] == "image/png");
    CHECK(block["data"].get<std::string>().rfind("iVBORw0KGgo", 0) == 0);  // base64 of the PNG signature
    CHECK(block["annotations"]["audience"] ==
          (t->views_for_model ? json::array({"user", "assistant"}) : json::array({"user"})));
  }
  CHECK(!env.contains("images_png_base64"));  // the views travel as image blocks
  CHECK(sv::Schema(listed_output_schema).first_error(env) == "");
  const json schema = env["ok"].get<bool>() ? sv::result_schema(*t) : sv::error_envelope_schema();
  CHECK(sv::Schema(schema).first_error(env) == "");
}

}  // namespace

TEST_CASE("sv-mcp: a recorded session: lifecycle, list, read, edit, revert, failures, malformed input", "[e2e][mcp]") {
  const auto dir = scratch() / "mcp-session";
  const std::string start = make_store(dir);
  std::string lines = initialize(1, "2025-11-25") + notification("notifications/initialized") + request(2, "ping") +
                      request(3, "tools/list") + call(4, "ListPrimitives") + call(5, "GetSourceImage") +
                      call(6, "ReverseDirection", {{"primitive_ids", {"p_0001"}}, {"note", "over MCP"}}) +
                      call(7, "Revert", {{"to_revision_id", start}}) +
                      call("fail-1", "GetPrimitive", {{"id", "p_9999"}}) +   // the tool fails: not_found
                      call("fail-2", "ListPrimitives", {{"no_such_field", 1}}) +  // refused: invalid_selection
                      "{\"jsonrpc\": \"2.0\", \"id\": 8, \"method\": \n" +     // malformed
                      notification("notifications/cancelled", {{"requestId", 2}, {"reason", "late"}}) +
                      request(9, "no/such/method") + call(10, "NoSuchTool") +
                      request(11, "tools/call", {{"name", "ListPrimitives"}, {"arguments", json::array()}}) +
                      "[" + request(12, "ping").substr(0, request(12, "ping").size() - 1) + "]\n" +  // a batch
                      "{\"jsonrpc\": \"2.0\", \"id\": 13}\n" + "{\"jsonrpc\": \"1.0\", \"id\": 14, \"method\": \"ping\"}\n" +
                      "{\"jsonrpc\": \"2.0\", \"id\": 15, \"result\": {}}\n" +  // a response: sv-mcp asked nothing
                      "\n" + request(16, "ping").substr(0, request(16, "ping").size() - 1);  // no final newline
  std::vector<json> replies = converse(dir, lines);
  std::map<json, json> r = by_id(replies);
  // Every request answered once; the notifications and the response get nothing; the malformed
  // line and the batch are answered with a null id.
  CHECK(r.size() == 15);
  CHECK(replies.size() == 17);
  CHECK(!r.count(15));
  int null_ids = 0;
  for (const auto& x : replies) null_ids += x["id"].is_null();
  CHECK(null_ids == 2);

  const json& init = r[1]["result"];
  CHECK(init["protocolVersion"] == "2025-11-25");
  CHECK(init["capabilities"]["tools"].is_object());
  CHECK(init["serverInfo"]["name"] == "sv-mcp");
  CHECK(init["serverInfo"]["version"].is_string());
  CHECK(r[2]["result"] == json::object());

  // Every registered tool, described from its registry entry.
  std::map<std::string, json> listed;
  for (const auto& t : r[3]["result"]["tools"]) listed[t["name"]] = t;
  CHECK(listed.size() == sv::registry().size());
  for (const sv::Tool& t : sv::registry()) {
    CAPTURE(t.name);
    REQUIRE(listed.count(t.name));
    const json& d = listed[t.name];
    CHECK(d["description"] == t.summary + " [" + t.group + "]");
    CHECK(d["inputSchema"]["type"] == "object");
    CHECK(d["inputSchema"]["properties"].size() == sv::request_schema(t)["properties"].size());
    CHECK(d["outputSchema"]["type"] == "object");
    CHECK(d["annotations"]["readOnlyHint"] == ((t.kind == sv::ToolKind::read || t.changes_nothing) && !t.writes_files));
    // Nothing is destroyed but a file an export is told to replace.
    if (d["annotations"]["readOnlyHint"] == false) CHECK(d["annotations"]["destructiveHint"] == t.writes_files);
    // An error envelope satisfies the output schema as well as a result does.
    CHECK(sv::Schema(d["outputSchema"]).first_error(sv::Error(sv::Code::not_found, "x").envelope()) == "");
  }

  check_call(r[4]["result"], "ListPrimitives", listed["ListPrimitives"]["outputSchema"]);
  CHECK(r[4]["result"]["isError"] == false);
  CHECK(r[4]["result"]["structuredContent"]["revision_id"] == start);
  check_call(r[5]["result"], "GetSourceImage", listed["GetSourceImage"]["outputSchema"]);
  CHECK(r[5]["result"]["content"].size() >= 2);  // the drawing, as an image block

  const json& edit = r[6]["result"]["structuredContent"];
  check_call(r[6]["result"], "ReverseDirection", listed["ReverseDirection"]["outputSchema"]);
  CHECK(edit["ok"] == true);
  CHECK(edit["parent_revision_id"] == start);
  CHECK(edit["revision_id"] != start);
  const json& revert = r[7]["result"]["structuredContent"];
  check_call(r[7]["result"], "Revert", listed["Revert"]["outputSchema"]);
  CHECK(revert["previous_revision_id"] == edit["revision_id"]);

  check_call(r["fail-1"]["result"], "GetPrimitive", listed["GetPrimitive"]["outputSchema"]);
  CHECK(r["fail-1"]["result"]["isError"] == true);
  CHECK(r["fail-1"]["result"]["structuredContent"]["error"]["code"] == "not_found");
  CHECK(r["fail-2"]["result"]["structuredContent"]["error"]["code"] == "invalid_selection");

  CHECK(r[9]["error"]["code"] == -32601);
  CHECK(r[10]["error"]["code"] == -32602);
  CHECK(r[11]["error"]["code"] == -32602);
  CHECK(r[13]["error"]["code"] == -32600);
  CHECK(r[14]["error"]["code"] == -32600);
  CHECK(r[16]["result"] == json::object());
  std::set<int> null_codes;
  for (const auto& x : replies)
    if (x["id"].is_null()) null_codes.insert(x["error"]["code"].get<int>());
  CHECK(null_codes == std::set<int>{-32700, -32600});

  // The revert is a new revision with the start's content: the edit is undone, nothing is lost.
  const std::string cd = "cd " + dir.string() + " && ";
  json head = json::parse(run(cd + bin("sv-commit") + " show HEAD").out);
  json first = json::parse(run(cd + bin("sv-commit") + " show " + start).out);
  CHECK(head["primitives"] == first["primitives"]);
  CHECK(run(cd + bin("sv-commit") + " show " + edit["revision_id"].get<std::string>()).status == 0);
}

// The recording rule over MCP: an edit goes on the revision HEAD names. With HEAD detached at an
// older revision, the edit is that revision's child and the branch HEAD left stays where it was.
TEST_CASE("sv-mcp --images: the views the model needs, within 64 KB, unless told otherwise", "[e2e][mcp]") {
  const auto dir = scratch() / "mcp-images";
  make_store(dir);
  const std::string lines = initialize(1, "2025-11-25") + call(2, "GetSourceImage") + call(3, "ListPrimitives");
  auto images = [](const json& reply) {
    std::vector<json> out;
    for (const auto& b : reply["result"]["content"])
      if (b["type"] == "image") out.push_back(b);
    return out;
  };
  // Default: GetSourceImage's view (the model needs it), ListPrimitives' not (its file is named).
  std::map<json, json> r = by_id(converse(dir, lines));
  REQUIRE(images(r[2]).size() == 1);
  CHECK(images(r[2])[0]["annotations"]["audience"] == json::array({"user", "assistant"}));
  CHECK(images(r[2])[0]["data"].get<std::string>().size() <= (64 * 1024 + 2) / 3 * 4);
  CHECK(images(r[3]).empty());
  CHECK(!r[3]["result"]["structuredContent"]["images"].empty());
  // all: every view, for the person where the model does not need it; none: no image at all.
  r = by_id(converse(dir, lines, "--images all"));
  REQUIRE(images(r[3]).size() == 1);
  CHECK(images(r[3])[0]["annotations"]["audience"] == json::array({"user"}));
  r = by_id(converse(dir, lines, "--images none"));
  CHECK(images(r[2]).empty());
  CHECK(images(r[3]).empty());
}

TEST_CASE("sv-mcp records an edit on the revision HEAD names, and nowhere else", "[e2e][mcp]") {
  const auto dir = scratch() / "mcp-one-rule";
  std::filesystem::remove_all(dir);
  const std::string tip = make_store(dir);
  const std::string cd = "cd " + dir.string() + " && ";
  const json log = json::parse(run(cd + bin("sv-commit") + " --json log").out)["revisions"];
  REQUIRE(log.size() == 4);
  const std::string fitted = log[2]["revision_id"];
  REQUIRE(run(cd + bin("sv-commit") + " checkout " + fitted).status == 0);
  auto r = by_id(converse(dir, initialize(1, "2025-06-18") + notification("notifications/initialized") +
                                   call(2, "ReverseDirection", {{"primitive_ids", {"p_0001"}}})));
  const json& edit = r[2]["result"]["structuredContent"];
  INFO(edit.dump());
  REQUIRE(edit["ok"] == true);
  CHECK(edit["parent_revision_id"] == fitted);
  const json status = json::parse(run(cd + bin("sv-commit") + " --json status").out);
  CHECK(status["current_revision_id"] == edit["revision_id"]);
  CHECK(json::parse(run(cd + bin("sv-commit") + " --json log main").out)["revisions"][0]["revision_id"] == tip);
}

TEST_CASE("sv-mcp: an older protocol revision is kept, an unknown one answered with the newest", "[e2e][mcp]") {
  const auto dir = scratch() / "mcp-versions";
  std::filesystem::create_directories(dir);
  auto replies = converse(dir, initialize(1, "2025-06-18") + initialize(2, "2024-11-05") + initialize(3, "1999-01-01") +
                                   request(4, "initialize", {{"capabilities", json::object()}}));
  auto r = by_id(replies);
  CHECK(r[1]["result"]["protocolVersion"] == "2025-06-18");
  CHECK(r[2]["result"]["protocolVersion"] == "2024-11-05");
  CHECK(r[3]["result"]["protocolVersion"] == "2025-11-25");
  CHECK(r[4]["error"]["code"] == -32602);
}

TEST_CASE("sv-mcp --tools read serves the first tier only, and without a store a call is a tool error", "[e2e][mcp]") {
  const auto dir = scratch() / "mcp-read-tier";
  std::filesystem::create_directories(dir);
  Run run_info;
  auto r = by_id(converse(dir, request(1, "tools/list") + call(2, "ReverseDirection", {{"primitive_ids", {"p_0001"}}}) +
                                   call(3, "ListPrimitives"),
                          "--tools read --no-store", &run_info));
  std::set<std::string> listed;
  for (const auto& t : r[1]["result"]["tools"]) listed.insert(t["name"]);
  std::set<std::string> expect;
  for (const sv::Tool& t : sv::registry())
    if (t.kind == sv::ToolKind::read && (t.group == "inspection" || t.group == "diagnostics" || t.group == "suggestion"))
      expect.insert(t.name);
  CHECK(listed == expect);
  CHECK(listed.count("SimulateEdit") == 1);
  CHECK(r[2]["error"]["code"] == -32602);  // not served in this tier
  CHECK(r[3]["result"]["isError"] == true);
  CHECK(r[3]["result"]["structuredContent"]["error"]["code"] == "not_found");
  CHECK(run_info.err.find("sv-mcp: serving") != std::string::npos);  // logs go to stderr
  CHECK(run(bin("sv-mcp") + " --tools none < /dev/null").status == 2);
}

namespace {

// The processes whose parent is `pid`.
std::vector<int> children_of(pid_t pid) {
  std::vector<int> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = slurp("/proc/" + name + "/stat");
    // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    int ppid = 0;
    char state = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == pid) out.push_back(std::stoi(name));
  }
  ::closedir(d);
  return out;
}

}  // namespace

TEST_CASE("sv-mcp: 1,000 mixed requests in one session: every id answered once (a cancelled call at most), no crash, "
          "no child left",
          "[e2e][mcp]") {
  const auto dir = scratch() / "mcp-thousand";
  make_store(dir);
  std::string lines;
  int malformed = 0;
  for (int i = 0; i < 1000; ++i) {
    switch (i % 10) {
      case 0: lines += request(i, i == 0 ? "initialize" : "ping", i == 0 ? json{{"protocolVersion", "2025-11-25"}} : json::object()); break;
      case 1: lines += request(i, "tools/list"); break;
      case 2: lines += call(i, "ListPrimitives", {{"filter", {{"type", "line"}}}}); break;
      case 3: lines += call(i, "GetTour"); break;
      case 4: lines += call(i, "GetPrimitive", {{"id", fmt::format("p_{:04d}", 1 + i % 12)}}); break;  // some fail
      case 5: lines += call(i, "ReverseDirection", {{"primitive_ids", {"p_0001"}}, {"dry_run", true}}); break;
      case 6: lines += request(i, "tools/call", {{"name", "NoSuchTool"}}); break;
      case 7: lines += call(i, "ListPrimitives", {{"bad", true}}); break;
      case 8: lines += request(std::to_string(i), "ping"); break;  // string ids
      case 9: lines += request(i, "resources/list"); break;
    }
    if (i % 7 == 0) lines += notification("notifications/cancelled", {{"requestId", i}});
    if (i % 50 == 0) {
      lines += "{\"jsonrpc\":\"2.0\",\"id\":\n";
      ++malformed;
    }
  }
  // Calls run in order after every other message is answered: the last one's reply comes last.
  lines += call("last", "GetTour");
  PipedChild c = spawn_piped({bin("sv-mcp")}, dir);
  REQUIRE(c.pid > 0);
  std::thread writer([&] {
    size_t done = 0;
    while (done < lines.size()) {
      ssize_t n = ::write(c.to_child, lines.data() + done, lines.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
  });
  // Read until the last call's reply has come, then look for children while the server still
  // runs, then close its input: it must exit on its own.
  std::string out;
  char buf[1 << 16];
  const std::string last = "\"id\":\"last\"";
  while (out.find(last, out.size() > (1 << 16) ? out.size() - (1 << 16) : 0) == std::string::npos) {
    ssize_t n = ::read(c.from_child, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  writer.join();
  CHECK(children_of(c.pid).empty());
  ::close(c.to_child);
  for (ssize_t n; (n = ::read(c.from_child, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  ::close(c.from_child);
  CHECK(wait_child(c) == 0);
  INFO(slurp(c.err).substr(0, 2000));
  std::map<std::string, int> answered;
  int null_ids = 0, tool_errors = 0;
  for (const json& r : json_lines(out)) {
    check_shape(r);
    if (r["id"].is_null()) {
      ++null_ids;
      CHECK(r["error"]["code"] == -32700);
      continue;
    }
    answered[r["id"].dump()]++;
    if (r.contains("result") && r["result"].value("isError", false)) ++tool_errors;
  }
  CHECK(null_ids == malformed);
  for (const auto& [id, times] : answered) CHECK(times == 1);
  // A call cancelled before it ran gets no reply, as the protocol asks; everything else is answered.
  int unanswered = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = i % 10 == 8 ? json(std::to_string(i)).dump() : json(i).dump();
    if (answered.count(id)) continue;
    ++unanswered;
    CAPTURE(i);
    CHECK(i % 7 == 0);
    CHECK((i % 10 >= 2 && i % 10 <= 7));
  }
  CHECK(answered.count("\"last\"") == 1);
  CHECK(answered.size() + unanswered == 1001);
  CHECK(tool_errors >= 100);  // the refused requests (case 7) and the missing primitives
}

namespace {

// The next reply line from the server within `wait_s`, or "" when none came.
std::string next_reply(int fd, std::string& pending, double wait_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  for (;;) {
    if (size_t nl = pending.find('\n'); nl != std::string::npos) {
      std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
    if (left <= 0) return "";
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char buf[1 << 16];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return "";
    pending.append(buf, static_cast<size_t>(n));
  }
}

bool send_all(int fd, const std::string& bytes) {
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool pid_alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || stat.substr(paren + 2, 1) != "Z";
}

}  // namespace

TEST_CASE("sv-mcp serves a ping while an oracle runs, and a cancellation ends the oracle", "[e2e][mcp][oracle][hostile]") {
  const auto dir = scratch() / "mcp-oracle";
  make_store(dir);
  const auto pids = dir / "oracle.pids", dir_file = dir / "oracle.dir";
  const auto oracle = dir / "slow-oracle.sh";
  spit(oracle, fmt::format("#!/bin/sh\nsetsid sleep 60 &\necho $! > {0}.tmp\necho $$ >> {0}.tmp\necho \"$1\" > {1}\n"
                           "mv {0}.tmp {0}\nsleep 60\n",
                           pids.string(), dir_file.string()));
  std::filesystem::permissions(oracle, std::filesystem::perms::owner_all);
  PipedChild c = spawn_piped({bin("sv-mcp"), "--oracle", oracle.string()}, dir);
  REQUIRE(c.pid > 0);
  std::string pending;
  REQUIRE(send_all(c.to_child, call(1, "AskOracle", {{"question", "is it a cart?"}, {"timeout_seconds", 60}})));
  std::vector<pid_t> started;
  for (int i = 0; i < 500 && started.size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    started.clear();
    std::ifstream in(pids);
    for (pid_t p; in >> p;) started.push_back(p);
  }
  REQUIRE(started.size() == 2);
  // The oracle is running: a ping is answered now, not when it ends.
  REQUIRE(send_all(c.to_child, request(2, "ping")));
  const std::string pong = next_reply(c.from_child, pending, 10);
  REQUIRE(!pong.empty());
  CHECK(json::parse(pong)["id"] == 2);
  // Cancelled: the oracle and all it started end, its request directory goes, and the call gets
  // no reply; the next call is served.
  REQUIRE(send_all(c.to_child, notification("notifications/cancelled", {{"requestId", 1}, {"reason", "user"}}) +
                                   call(3, "GetTour")));
  const std::string next = next_reply(c.from_child, pending, 20);
  REQUIRE(!next.empty());
  CHECK(json::parse(next)["id"] == 3);
  for (pid_t p : started) CHECK_FALSE(pid_alive(p));
  std::string request_dir = slurp(dir_file);
  while (!request_dir.empty() && request_dir.back() == '\n') request_dir.pop_back();
  CHECK(!std::filesystem::exists(request_dir));
  ::close(c.to_child);
  CHECK(next_reply(c.from_child, pending, 10).empty());  // nothing more: no reply for the cancelled call
  ::close(c.from_child);
  CHECK(wait_child(c) == 0);
}

// The store's files and their sizes, but for derived data (caches of the source's ink, views a
// read tool draws): what a call recorded, if anything.
std::map<std::string, uintmax_t> store_files(const std::filesystem::path& dir) {
  std::map<std::string, uintmax_t> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir / ".svrev"))
    if (e.is_regular_file() && e.path().parent_path().filename() != "cache" &&
        e.path().parent_path().filename() != "views")
      out[e.path().string()] = e.file_size();
  return out;
}

TEST_CASE("sv-mcp reports a long SuggestOptimizations' progress, and a cancellation stops it within a second, "
          "writing nothing", "[e2e][mcp]") {
  // Three lines of script stacked: a drawing whose suggestions take a few seconds to measure.
  const auto dir = scratch() / "mcp-progress";
  std::filesystem::create_directories(dir);
  const cv::Mat line = sv::decode_png(slurp(data("hershey_scripts_09_w6.png")));
  cv::Mat page;
  cv::vconcat(std::vector<cv::Mat>{line, line, line}, page);
  spit(dir / "page.png", sv::encode_png_gray(page));
  const std::string cd = "cd " + dir.string() + " && ";
  REQUIRE(run(cd + bin("sv-commit") + " init").status == 0);
  REQUIRE(run(cd + fmt::format("{} page.png | {} | {} > /dev/null", bin("sv-skeleton"), bin("sv-fit"), bin("sv-route")))
              .status == 0);
  const auto before = store_files(dir);

  PipedChild c = spawn_piped({bin("sv-mcp")}, dir);
  REQUIRE(c.pid > 0);
  std::string pending;
  REQUIRE(send_all(c.to_child, request(1, "tools/call", {{"name", "SuggestOptimizations"}, {"arguments", json::object()},
                                                         {"_meta", {{"progressToken", "p1"}}}})));
  // Progress arrives after about a second of work, for this call's token, rising toward its total.
  const std::string first = next_reply(c.from_child, pending, 60);
  REQUIRE(!first.empty());
  const json note = json::parse(first);
  REQUIRE(note.value("method", "") == "notifications/progress");
  CHECK_FALSE(note.contains("id"));
  CHECK(note["params"]["progressToken"] == "p1");
  const double done = note["params"]["progress"], total = note["params"]["total"];
  CHECK(done > 0);
  CHECK(done < total);
  CHECK(!note["params"]["message"].get<std::string>().empty());
  // Cancelled: the next call is answered within a second, and the cancelled one never is.
  const auto cancelled_at = std::chrono::steady_clock::now();
  REQUIRE(send_all(c.to_child, notification("notifications/cancelled", {{"requestId", 1}}) + call(2, "GetTour")));
  json next;
  do {
    const std::string reply = next_reply(c.from_child, pending, 30);
    REQUIRE(!reply.empty());
    next = json::parse(reply);
  } while (next.value("method", "") == "notifications/progress");
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - cancelled_at).count();
  CHECK(next["id"] == 2);
  CHECK(waited < 1.0);
  ::close(c.to_child);
  CHECK(next_reply(c.from_child, pending, 10).empty());
  ::close(c.from_child);
  CHECK(wait_child(c) == 0);
  const auto after = store_files(dir);
  CHECK(after == before);
}

TEST_CASE("sv-mcp refuses a 63 MB line while reading it, cheaply, and serves on", "[e2e][mcp][hostile]") {
  const auto dir = scratch() / "mcp-huge-line";
  std::filesystem::create_directories(dir);
  PipedChild c = spawn_piped({bin("sv-mcp"), "--no-store"}, dir);
  REQUIRE(c.pid > 0);
  // A tools/call whose arguments hold 63 MB of numbers: parsed, it would cost gigabytes.
  std::string line = R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ListPrimitives","arguments":{"x":[)";
  line.reserve(63u << 20);
  while (line.size() < (63u << 20)) line += "0,";
  line += "0]}}}\n";
  std::thread writer([&] { send_all(c.to_child, line + request(2, "ping")); });
  std::string pending;
  const std::string refused = next_reply(c.from_child, pending, 60);
  const std::string pong = next_reply(c.from_child, pending, 60);
  writer.join();
  // Peak memory while the server still runs: far below the line's size.
  const std::string status = slurp("/proc/" + std::to_string(c.pid) + "/status");
  long hwm_kb = -1;
  if (size_t at = status.find("VmHWM:"); at != std::string::npos) hwm_kb = std::stol(status.substr(at + 6));
  ::close(c.to_child);
  ::close(c.from_child);
  CHECK(wait_child(c) == 0);
  REQUIRE(!refused.empty());
  const json r = json::parse(refused);
  CHECK(r["id"].is_null());
  CHECK(r["error"]["code"] == -32700);
  CHECK(r["error"]["message"].get<std::string>().find("longer than 4194304 bytes") != std::string::npos);
  REQUIRE(!pong.empty());
  CHECK(json::parse(pong)["id"] == 2);
  CHECK(hwm_kb > 0);
  CHECK(hwm_kb < 64 * 1024);
}
