// MCP messages over any bytes: the input is split into lines as sv-mcp's reader splits its
// standard input, and each line goes to the server (no store, so a tool call fails without
// touching anything). A reply must be one line of JSON-RPC 2.0 (the version, an id, exactly one
// of result and error, an error code of the protocol's); a request's reply carries its id; a
// notification gets none. Round trip: the same message written again by the JSON library gets
// the same reply, byte for byte.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "fuzz_check.hpp"
#include "mcp/server.hpp"

using svfuzz::broken;
using sv::json;

namespace {

sv::mcp::Server& server() {
  static sv::mcp::Server s = [] {
    sv::CommonOptions none;
    none.no_store = true;
    return sv::mcp::Server(none, sv::mcp::Tier::all);
  }();
  return s;
}

void check_line(const std::string& line) {
  const std::optional<std::string> reply = server().handle(line);
  json msg;
  bool parsed = true;
  try {
    msg = sv::parse_json_limited(line, sv::Code::invalid_selection, "message");
  } catch (const sv::Error&) {
    parsed = false;
  }
  const bool request = parsed && msg.is_object() && msg.contains("id") && (msg["id"].is_string() || msg["id"].is_number_integer());
  if (parsed && msg.is_object() && msg.contains("method") && !msg.contains("id") && reply)
    broken("a notification got a reply: " + *reply);
  if (!reply) {
    if (!parsed) broken("malformed JSON got no reply");
    return;
  }
  if (reply->find('\n') != std::string::npos) broken("a reply spans lines");
  json r;
  try {
    r = json::parse(*reply);
  } catch (const json::exception&) {
    broken("a reply is not JSON: " + *reply);
  }
  if (!r.is_object() || r.value("jsonrpc", "") != "2.0" || !r.contains("id") || r.contains("result") == r.contains("error"))
    broken("a reply is not JSON-RPC 2.0: " + *reply);
  if (r.contains("error")) {
    const int code = r["error"].value("code", 0);
    if (code != -32700 && code != -32600 && code != -32601 && code != -32602) broken("an unknown error code: " + *reply);
  }
  if (request && msg.contains("method") && r["id"] != msg["id"]) broken("a reply with another id: " + *reply);
  if (parsed && server().handle(msg.dump()) != reply) broken("the same message rewritten gets another reply");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start <= bytes.size()) {
    size_t nl = bytes.find('\n', start);
    std::string line = bytes.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (line.find_first_not_of(" \t\r") != std::string::npos) check_line(line);
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return 0;
}
