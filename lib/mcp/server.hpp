// sv-mcp: the tool registry served over the Model Context Protocol (revision 2025-11-25), stdio
// transport: one JSON-RPC 2.0 message per line in, one reply per request out. Five methods
// (initialize, ping, tools/list, tools/call and the notifications), on nlohmann_json.
//
// Tool calls run one at a time, in order, on a worker thread; every other message is answered
// as it is read, so a ping or a cancellation is served while a call runs (an oracle may take
// minutes). notifications/cancelled for a call still queued drops it; for the running one it ends
// what the call waits for (the oracle's whole session, core/cancel.hpp); either way, as the
// protocol asks, the cancelled call gets no reply. A call that completed before its cancellation
// took effect is answered.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "session/options.hpp"
#include "tools/tool.hpp"

namespace sv::mcp {

// Which tools are listed and callable: the catalog's first tier (inspection, diagnostics,
// suggestion and SimulateEdit: nothing that changes the store), or all of them.
enum class Tier { read, all };
bool in_tier(const Tool& t, Tier tier);

// A registry entry as an MCP tool: name, description (the summary and its catalog group),
// inputSchema (the request's fields, a Region as an object), outputSchema (the tool's own result
// fields, which the error envelope fits too) and annotations (read-only, or writing without
// destroying anything). What every tool shares is said once, in the instructions.
json tool_description(const Tool& t);

// The largest view a reply carries inline by default (--images model); a larger one is sent
// scaled down to fit, whole in its file.
constexpr size_t kMaxInlineImageBytes = 64 * 1024;

// The JSON-RPC error codes a reply carries.
enum ErrorCode : int {
  parse_error = -32700,
  invalid_request = -32600,
  method_not_found = -32601,
  invalid_params = -32602,
  internal_error = -32603,  // a defect in sv (a tool's own failure is a result with isError)
};

// The longest message line read (one message carries one tool request: the largest real one is
// a few kilobytes); a longer one is answered with a parse error and skipped as it is read, its
// bytes never held nor parsed.
constexpr size_t kMaxMessageBytes = size_t(4) << 20;

class Server {
 public:
  // `store` names the store as every tool finds it (--store, $SV_STORE, the nearest .svrev).
  Server(CommonOptions store, Tier tier);

  // One message line (without its newline) in; the reply line (without newline) out, or none
  // for a notification or a response. Never throws. A tool call runs here, at once.
  std::optional<std::string> handle(const std::string& line);

  // What serve() does with a line: a reply now (or none), or a tool call to run in turn (its id
  // and params), or the id of a request to cancel.
  struct Routed {
    std::optional<std::string> reply;
    std::optional<json> call_id, cancel_id;
    json params;
  };
  Routed route(const std::string& line);
  // Runs a routed tool call; its reply line. Never throws.
  std::string answer_call(const json& id, const json& params);

  // What is served, for the log: how many tools, which tier, which store.
  std::string summary() const;

 private:
  json dispatch(const std::string& method, const json& params);
  json initialize(const json& params);
  json list_tools() const;
  json call_tool(const json& params);
  const Tool* served(const std::string& name) const;

  CommonOptions store_;
  Tier tier_;
};

// The message reader: splits the input stream into lines however its bytes arrive. Each line a
// feed completes goes to `emit` without its newline (nor a carriage return before it), or as
// nullopt when it grew past kMaxMessageBytes (its bytes are dropped as they come, so a hostile
// line costs no memory). A feed stops, returning false, as soon as `emit` does.
class LineReader {
 public:
  using Emit = std::function<bool(const std::optional<std::string>& line)>;
  bool feed(std::string_view bytes, const Emit& emit);
  // The end of the stream: a last line without its newline goes to `emit` too.
  bool finish(const Emit& emit);

 private:
  bool complete(const Emit& emit);
  std::string line_;
  bool oversized_ = false;
};

// Serves `server` over the file descriptors until `in` ends: messages one per line from `in`,
// replies one per line to `out`, each flushed at once. Returns 0, or 1 when `out` fails.
int serve(Server& server, int in, int out);

// Keeps standard input and output for the protocol: returns descriptors of them (closed on
// exec) and points descriptor 0 at /dev/null and 1 at standard error, so that nothing a tool
// prints or a command it starts reads can corrupt the message streams.
struct Stdio {
  int in = -1, out = -1;
};
Stdio take_stdio();

}  // namespace sv::mcp
