// sv-mcp's message reader and server over any bytes. The reader must split the stream into the
// same lines however its bytes arrive (at once, or in pieces whose size the first byte picks),
// and the lines joined again must be the stream (less the carriage returns ending lines). Each
// line then goes to the server (no store, so a tool call fails without touching anything): a
// reply must be one line of JSON-RPC 2.0 (the version, an id, exactly one of result and error,
// an error code of the protocol's); a request's reply carries its id; a notification gets none.
// Round trip: the same message written again by the JSON library gets the same reply.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

std::vector<std::optional<std::string>> read_lines(const std::string& bytes, size_t piece) {
  std::vector<std::optional<std::string>> lines;
  auto keep = [&](const std::optional<std::string>& line) {
    lines.push_back(line);
    return true;
  };
  sv::mcp::LineReader reader;
  for (size_t at = 0; at < bytes.size(); at += piece) reader.feed(std::string_view(bytes).substr(at, piece), keep);
  reader.finish(keep);
  return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const std::vector<std::optional<std::string>> lines = read_lines(bytes, std::max<size_t>(size, 1));
  if (size > 0 && read_lines(bytes, data[0] % 7 + 1) != lines) broken("the lines depend on how the bytes arrive");
  std::string joined, expect;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i]) broken("a line under the size limit was dropped");
    joined += *lines[i] + (i + 1 < lines.size() || (!bytes.empty() && bytes.back() == '\n') ? "\n" : "");
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    const bool ends_line = i + 1 == bytes.size() || bytes[i + 1] == '\n';
    if (!(bytes[i] == '\r' && ends_line)) expect += bytes[i];
  }
  if (joined != expect) broken("the lines joined again are not the stream");
  for (const auto& line : lines)
    if (line->find_first_not_of(" \t") != std::string::npos) check_line(*line);
  return 0;
}
