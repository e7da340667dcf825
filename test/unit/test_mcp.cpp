// The MCP server's parts without a process: the message reader and one line in, one reply out.
#include <catch2/catch.hpp>

#include "core/schema.hpp"
#include "mcp/server.hpp"

using namespace sv;

namespace {

std::vector<std::optional<std::string>> lines_of(const std::vector<std::string>& pieces) {
  std::vector<std::optional<std::string>> out;
  auto keep = [&](const std::optional<std::string>& line) {
    out.push_back(line);
    return true;
  };
  mcp::LineReader reader;
  for (const auto& p : pieces) REQUIRE(reader.feed(p, keep));
  REQUIRE(reader.finish(keep));
  return out;
}

mcp::Server storeless(mcp::Tier tier = mcp::Tier::all) {
  CommonOptions none;
  none.no_store = true;
  return mcp::Server(none, tier);
}

}  // namespace

TEST_CASE("the MCP reader splits lines however the bytes arrive, and drops an oversized one whole", "[mcp]") {
  using L = std::vector<std::optional<std::string>>;
  CHECK(lines_of({"{\"a\":1}\r\n{\"b\"", ":2}\n", "last"}) == L{"{\"a\":1}", "{\"b\":2}", "last"});
  CHECK(lines_of({"", "\n", "\n"}) == L{"", ""});
  CHECK(lines_of({}).empty());
  // A line past the limit arrives as nullopt, without holding its bytes; the next line is read.
  const std::string chunk(1 << 20, 'x');
  std::vector<std::string> pieces;
  for (size_t n = 0; n <= mcp::kMaxMessageBytes; n += chunk.size()) pieces.push_back(chunk);
  pieces.push_back("\nping\n");
  CHECK(lines_of(pieces) == L{std::nullopt, "ping"});
  // An emit that fails (the client gone) stops the feed.
  mcp::LineReader reader;
  int calls = 0;
  CHECK(!reader.feed("a\nb\n", [&](const std::optional<std::string>&) { return ++calls > 5; }));
  CHECK(calls == 1);
}

TEST_CASE("the MCP server answers a line with one reply line, a notification with none", "[mcp]") {
  mcp::Server s = storeless();
  auto reply = [&](const std::string& line) { return json::parse(s.handle(line).value()); };
  CHECK(reply(R"({"jsonrpc":"2.0","id":"x","method":"ping"})") == json{{"jsonrpc", "2.0"}, {"id", "x"}, {"result", json::object()}});
  CHECK(!s.handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  CHECK(!s.handle(R"({"jsonrpc":"2.0","method":"no/such/notification"})"));
  CHECK(reply("{").at("error").at("code") == -32700);
  CHECK(reply("{").at("id").is_null());
  CHECK(reply(R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})").at("error").at("code") == -32600);
  CHECK(reply(R"({"jsonrpc":"2.0","id":2,"method":"ping","params":[1]})").at("error").at("code") == -32602);
  CHECK(reply(R"({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"c"}})").at("error").at("code") == -32602);
  const json line = reply(R"({"jsonrpc":"2.0","id":4,"method":"tools/list"})");
  CHECK(line.dump().find('\n') == std::string::npos);
  CHECK(line.at("result").at("tools").size() == registry().size());
  // The whole listing loads in a few thousand tokens: under 64 KB.
  CHECK(line.dump().size() < 64000);
  // A tool's output schema takes its result and the error envelope; its input schema has the
  // request's fields, of the same types, required alike, and accepts what the full one accepts.
  for (const Tool& t : registry()) {
    CAPTURE(t.name);
    const json d = mcp::tool_description(t);
    const json full = request_schema(t);
    REQUIRE(d["inputSchema"]["properties"].size() == full["properties"].size());
    for (const auto& [key, field] : full["properties"].items()) {
      CAPTURE(key);
      CHECK(d["inputSchema"]["properties"][key].value("type", json()) == field.value("type", json()));
    }
    CHECK(d["inputSchema"].value("required", json()) == full.value("required", json()));
    CHECK(Schema(d["outputSchema"]).first_error(Error(Code::conflict, "moved").envelope()) == "");
    CHECK(d["annotations"]["readOnlyHint"] == ((t.kind == ToolKind::read || t.changes_nothing) && !t.writes_files));
    // A tool that may replace a file says so.
    CHECK(d["annotations"].value("destructiveHint", false) == t.writes_files);
  }
  // What the listing leaves out of each tool is said once, in the instructions.
  const std::string said = json::parse(*s.handle(R"({"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})"))
                               .at("result").at("instructions");
  for (const char* part : {"A Region", "A PrimitiveFilter", "wrong_primitive_type", "error: {code, message, details}", "every revision is kept", "parent_revision_id"})
    CHECK(said.find(part) != std::string::npos);
  // Without a store, a call is a tool error the model reads, not a protocol error.
  const json call = reply(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"GetTour"}})");
  CHECK(call.at("result").at("isError") == true);
  CHECK(call.at("result").at("structuredContent").at("error").at("code") == "not_found");
  CHECK(call.at("result").at("content").at(0).at("text") == call.at("result").at("structuredContent").at("llm_text"));
}

TEST_CASE("the MCP read tier serves inspection, diagnostics, suggestion and SimulateEdit, nothing that records", "[mcp]") {
  size_t served = 0;
  for (const Tool& t : registry()) {
    if (!mcp::in_tier(t, mcp::Tier::read)) continue;
    ++served;
    CHECK(t.kind == ToolKind::read);
    CHECK((t.group == "inspection" || t.group == "diagnostics" || t.group == "suggestion"));
  }
  CHECK(served > 0);
  CHECK(mcp::in_tier(*find_tool("SimulateEdit"), mcp::Tier::read));
  CHECK(!mcp::in_tier(*find_tool("EvaluateRevision"), mcp::Tier::read));
  CHECK(!mcp::in_tier(*find_tool("ReverseDirection"), mcp::Tier::read));
  mcp::Server s = storeless(mcp::Tier::read);
  const json r = json::parse(*s.handle(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Revert"}})"));
  CHECK(r.at("error").at("code") == -32602);
  // A mistyped name: the closest tools served are suggested, never one the tier does not serve.
  const json typo = json::parse(*s.handle(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ListPrimitivs"}})"));
  CHECK(typo.at("error").at("code") == -32602);
  CHECK(typo.at("error").at("message") == "Invalid params: unknown tool: ListPrimitivs (did you mean ListPrimitives?)");
  const json edit = json::parse(*s.handle(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ReverseDirectoin"}})"));
  CHECK(edit.at("error").at("message") == "Invalid params: unknown tool: ReverseDirectoin");
}
