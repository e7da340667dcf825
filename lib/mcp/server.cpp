#include "mcp/server.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <thread>

#include "session/tool_call.hpp"
#include "tools/schema_parts.hpp"
#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/messages.hpp"

namespace sv::mcp {

namespace {

// The protocol revisions the server speaks, newest first; a client asking for another one is
// answered with the newest, as the lifecycle says.
const char* const kProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

// The tool schemas are draft-07; the protocol's default dialect is 2020-12.
const char* const kDialect = "http://json-schema.org/draft-07/schema#";

// A request the server refuses at the protocol level (JSON-RPC error object).
struct RpcError {
  int code;
  std::string message;
};

std::string line_of(const json& message) { return message.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string error_reply(const json& id, int code, const std::string& message) {
  return line_of({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

// Names the dialect where it matters: a tuple (items as a list, additionalItems) reads otherwise
// in 2020-12, the protocol's default.
json with_dialect(json schema) {
  if (schema.dump().find("\"additionalItems\"") != std::string::npos) schema["$schema"] = kDialect;
  return schema;
}

// A result field as the listing shows it: its type, values and description; what it holds
// (members, items) the model reads in the result itself.
json outline(const json& f) {
  json out = json::object();
  for (const char* k : {"type", "const", "enum", "description"})
    if (f.contains(k) && f[k] != "") out[k] = f[k];
  return out;
}

// A request schema as the listing shows it: a Region or a PrimitiveFilter (schema::region,
// schema::primitive_filter) as an object, its members said once in the instructions; notes for the command line, the descriptions of list items
// (their list's says it), empty descriptions and null defaults left out. The server validates
// every call against the full schema.
json lean_request(json s) {
  if (!s.is_object() && !s.is_array()) return s;
  if (s.is_object()) {
    s.erase("$comment");
    if (s.value("description", "x").empty()) s.erase("description");
    if (s.contains("default") && s["default"].is_null()) s.erase("default");  // null: not given, as when absent
    if (s.contains("items") && s["items"].is_object()) s["items"].erase("description");
    if (const std::string part = s.value("title", ""); part == "Region" || part == "PrimitiveFilter") {
      json shown = {{"type", s["type"]}, {"description", s.value("description", "") + " (a " + part + ": see the instructions)"}};
      if (s.contains("default")) shown["default"] = s["default"];
      return shown;
    }
  }
  for (auto& v : s) v = lean_request(v);
  return s;
}

// The tool's title and description are the listing entry's own; what an edit's dry_run and note
// do is said once, in the instructions.
json input_schema(const Tool& t) {
  json s = lean_request(request_schema(t));
  s.erase("title");
  s.erase("description");
  if (t.kind == ToolKind::edit)
    for (const char* k : {"dry_run", "note"}) s["properties"][k].erase("description");
  return with_dialect(s);
}

// structuredContent is the envelope of a success or of a failure (isError). The members every
// envelope has (ok, tool, llm_text, ...) and the error envelope are described once, in the
// instructions: each tool's output schema lists the fields that are its own, by type, none
// required, so that it holds for the error envelope too and tools/list stays small.
json output_schema(const Tool& t) {
  const json result = result_schema(t);
  const std::set<std::string> shared = {"ok",         "tool",     "llm_text",  "human_text", "images", "images_png_base64",
                                        "warnings",   "revision_id", "parent_revision_id", "dry_run", "before", "after",
                                        "added_primitive_ids", "removed_primitive_ids", "changed_primitive_ids", "edits"};
  json props = json::object();
  for (const auto& [key, field] : result["properties"].items())
    if (!shared.count(key)) props[key] = outline(field);
  return {{"type", "object"}, {"properties", props}};
}

json annotations(const Tool& t) {
  if (t.writes_files) return {{"readOnlyHint", false}, {"destructiveHint", true}, {"idempotentHint", true}};
  if (t.kind == ToolKind::read || t.changes_nothing) return {{"readOnlyHint", true}};
  return {{"readOnlyHint", false}, {"destructiveHint", false}, {"idempotentHint", false}};
}

// The envelope as the protocol carries it: structured content; its llm_text and warnings as text
// (a model may read only the text); each view inline in the envelope, moved out of it, as an
// image for the person, and for the model too where the catalog says it needs to see it.
json call_result(const Tool& t, json envelope) {
  std::string text = envelope.value("llm_text", "");
  for (const auto& w : envelope.value("warnings", json::array())) text += "\nwarning: " + w.get<std::string>();
  json content = json::array({{{"type", "text"}, {"text", text}}});
  const json audience = t.views_for_model ? json::array({"user", "assistant"}) : json::array({"user"});
  if (envelope.contains("images_png_base64")) {
    for (auto it = envelope["images_png_base64"].begin(); it != envelope["images_png_base64"].end(); ++it)
      content.push_back({{"type", "image"}, {"data", it.value()}, {"mimeType", "image/png"},
                         {"annotations", {{"audience", audience}}}});
    envelope.erase("images_png_base64");
  }
  // A file's text goes once, as the file it is, for the model and the person alike.
  if (t.inline_text && envelope.value("text", json()).is_string()) {
    content.push_back({{"type", "resource"},
                       {"resource", {{"uri", fmt::format("sv://revision/{}/{}", envelope.value("revision_id", ""),
                                                         envelope.value("format", ""))},
                                     {"mimeType", envelope.value("media_type", "text/plain")},
                                     {"text", envelope["text"]}}}});
    envelope.erase("text");
  }
  const bool failed = !envelope.value("ok", false);
  return {{"content", content}, {"structuredContent", envelope}, {"isError", failed}};
}

// What the listing leaves out of each tool's schemas, said once.
std::string instructions() {
  std::string codes;
  for (Code c : {Code::invalid_raster, Code::invalid_scene, Code::unsupported_version, Code::not_found,
                 Code::invalid_selection, Code::unsolvable_constraint, Code::no_result, Code::conflict,
                 Code::corrupt_object, Code::io_error, Code::internal})
    codes += std::string(codes.empty() ? "" : ", ") + code_name(c);
  auto values = [](const json& s) { return fmt::format("{}", fmt::join(s["enum"].get<std::vector<std::string>>(), ", ")); };
  const std::string roles = values(schema::semantic_role()), issues = values(schema::issue_kind());
  return "Start from an image with TraceImage, write a revision out with ExportDrawing; every other tool runs "
         "on the revision store's HEAD scene. Look first (inspection, diagnostics), let the "
         "suggestion tools propose edits and SimulateEdit measure them, then apply what was measured: a "
         "candidate's or a simulation's apply object ({apply_id, edits}) passed to ApplyEdits applies that whole "
         "batch as one edit, exactly as predicted, and is refused (conflict) once HEAD has moved from the revision "
         "it was computed on; in a batch, \"$N.added[K]\" names the K-th id edit N added. Each edit becomes a new "
         "revision, so nothing is lost and Revert undoes it; an edit's dry_run: true predicts it and changes "
         "nothing, its note is kept with the revision. Each tool's description ends "
         "with its group (DESIGN's catalog): [inspection] look at the drawing and the scene before deciding "
         "anything; [diagnostics] locate problems, ranked by severity, before planning an edit; [semantic] "
         "relate the geometry to what the drawing shows; [suggestion] find edits worth making, each measured "
         "in a dry run; [mutation] apply a checked plan (dry_run: true changes nothing); [evaluation] score "
         "or compare revisions; [history] start from an image, move between revisions, branch, finish the session. A read-only "
         "tool (readOnlyHint) records no revision; an edit records the edited scene as a new revision and "
         "moves HEAD to it; no tool destroys anything: every revision is kept. Every result's structured "
         "content has, besides the fields its tool lists: ok (true), tool, revision_id (the revision it ran "
         "on; an edit's is the new one, null on a dry run), llm_text (compact text, also the text block), "
         "human_text, images (views written: name -> path), warnings (what the tool could not do fully); an "
         "edit's also parent_revision_id, dry_run, before and after (the metrics), added_primitive_ids, "
         "removed_primitive_ids, changed_primitive_ids and edits (each edit's own fields). A failed call "
         "(isError) has {ok: false, error: {code, message, details}, llm_text, human_text}, the code one of " +
         codes +
         ". A Region (the field region, a filter's in_region) is {kind, ...}: rect [x0, y0, x1, y1] in image "
         "pixels; polygon [[x, y], ...] (3 or more); primitive_set primitive_ids [\"p_0001\", ...]; "
         "vertex_neighborhood vertex_id and radius_px (default 3 stroke widths); named name (a region "
         "DefineRegion stored). No region: the whole drawing. A PrimitiveFilter (the field filter) keeps the "
         "primitives that pass every member given: types (a list of line, arc, circle); in_region (a Region); "
         "semantic_roles (a list of " + roles + "); has_issue (a list of " + issues +
         ", stored or found by the diagnostics); min_length_px, max_length_px, draw_time_above_ms (numbers).";
}

}  // namespace

bool in_tier(const Tool& t, Tier tier) {
  if (tier == Tier::all) return true;
  return t.kind == ToolKind::read && (t.group == "inspection" || t.group == "diagnostics" || t.group == "suggestion");
}

json tool_description(const Tool& t) {
  return {{"name", t.name},
          {"description", fmt::format("{} [{}]", t.summary, t.group)},
          {"inputSchema", input_schema(t)},
          {"outputSchema", output_schema(t)},
          {"annotations", annotations(t)}};
}

Server::Server(CommonOptions store, Tier tier) : store_(std::move(store)), tier_(tier) {}

std::string Server::summary() const {
  size_t n = 0;
  for (const Tool& t : registry()) n += in_tier(t, tier_);
  std::string where = "none (--no-store)";
  if (!store_.no_store) {
    try {
      auto root = Store::locate(store_.store);
      where = root ? root->string() : "none found yet (sv-commit init)";
    } catch (const Error& e) {
      where = e.what();  // each call reports it too
    }
  }
  return fmt::format("{} tools ({}); store: {}", n, tier_ == Tier::read ? "read tier" : "all", where);
}

std::optional<std::string> Server::handle(const std::string& line) {
  Routed r = route(line);
  if (r.call_id) return answer_call(*r.call_id, r.params);
  return r.reply;
}

Server::Routed Server::route(const std::string& line) {
  Routed out;
  json msg;
  try {
    msg = parse_json_limited(line, Code::invalid_selection, "message");
  } catch (const Error& e) {
    out.reply = error_reply(nullptr, parse_error, std::string("Parse error: ") + e.what());
    return out;
  }
  if (!msg.is_object()) {
    out.reply = error_reply(nullptr, invalid_request, "Invalid Request: a message is one JSON-RPC object (no batches)");
    return out;
  }
  const bool has_id = msg.contains("id");
  const json id = has_id ? msg["id"] : json();
  // MCP ids are strings or integers, never null.
  if (has_id && !id.is_string() && !id.is_number_integer()) {
    out.reply = error_reply(nullptr, invalid_request, "Invalid Request: the id must be a string or an integer");
    return out;
  }
  if (!msg.contains("method")) {
    if (has_id && (msg.contains("result") || msg.contains("error"))) return out;  // a response: sv-mcp asks nothing
    out.reply = error_reply(id, invalid_request, "Invalid Request: no method");
    return out;
  }
  const bool valid = msg.value("jsonrpc", json()) == "2.0" && msg["method"].is_string();
  const json params = msg.contains("params") ? msg["params"] : json::object();
  if (!has_id) {  // a notification (initialized, cancelled, ...) is never answered
    if (valid && msg["method"] == "notifications/cancelled" && params.is_object() && params.contains("requestId") &&
        (params["requestId"].is_string() || params["requestId"].is_number_integer()))
      out.cancel_id = params["requestId"];
    return out;
  }
  if (!valid) {
    out.reply = error_reply(id, invalid_request, "Invalid Request: needs \"jsonrpc\": \"2.0\" and a method name");
    return out;
  }
  if (!params.is_object()) {
    out.reply = error_reply(id, invalid_params, "Invalid params: params must be an object");
    return out;
  }
  if (msg["method"] == "tools/call") {
    out.call_id = id;
    out.params = params;
    return out;
  }
  try {
    out.reply = line_of({{"jsonrpc", "2.0"}, {"id", id}, {"result", dispatch(msg["method"].get<std::string>(), params)}});
  } catch (const RpcError& e) {
    out.reply = error_reply(id, e.code, e.message);
  } catch (const std::exception& e) {  // out of memory listing the tools, say: a defect, not a crash
    out.reply = error_reply(id, internal_error, std::string("Internal error: ") + e.what());
  }
  return out;
}

std::string Server::answer_call(const json& id, const json& params) {
  try {
    return line_of({{"jsonrpc", "2.0"}, {"id", id}, {"result", call_tool(params)}});
  } catch (const RpcError& e) {
    return error_reply(id, e.code, e.message);
  } catch (const std::exception& e) {
    return error_reply(id, internal_error, std::string("Internal error: ") + e.what());
  }
}

json Server::dispatch(const std::string& method, const json& params) {
  if (method == "initialize") return initialize(params);
  if (method == "ping") return json::object();
  if (method == "tools/list") {
    // One page holds every tool, so no cursor is ever handed out.
    if (params.contains("cursor")) throw RpcError{invalid_params, "Invalid params: unknown cursor"};
    return list_tools();
  }
  if (method == "tools/call") return call_tool(params);
  throw RpcError{method_not_found, "Method not found: " + method};
}

json Server::initialize(const json& params) {
  if (!params.contains("protocolVersion") || !params["protocolVersion"].is_string())
    throw RpcError{invalid_params, "Invalid params: initialize needs a protocolVersion"};
  const std::string asked = params["protocolVersion"];
  std::string version = kProtocolVersions[0];
  for (const char* v : kProtocolVersions)
    if (asked == v) version = v;
  return {{"protocolVersion", version},
          {"capabilities", {{"tools", {{"listChanged", false}}}}},
          {"serverInfo", {{"name", "sv-mcp"}, {"title", "sv drawing-to-robot tools"}, {"version", SV_VERSION}}},
          {"instructions", instructions()}};
}

json Server::list_tools() const {
  json tools = json::array();
  for (const Tool& t : registry())
    if (in_tier(t, tier_)) tools.push_back(tool_description(t));
  return {{"tools", tools}};
}

const Tool* Server::served(const std::string& name) const {
  for (const Tool& t : registry())
    if (t.name == name && in_tier(t, tier_)) return &t;
  return nullptr;
}

json Server::call_tool(const json& params) {
  if (!params.contains("name") || !params["name"].is_string())
    throw RpcError{invalid_params, "Invalid params: tools/call needs the tool's name"};
  const std::string name = params["name"];
  const Tool* t = served(name);
  if (!t) {
    std::vector<std::string> names;
    for (const Tool& other : registry())
      if (in_tier(other, tier_)) names.push_back(other.name);
    const std::string hint = did_you_mean(closest_names(name, names));
    throw RpcError{invalid_params, "Invalid params: unknown tool: " + name + (hint.empty() ? "" : " (" + hint + ")")};
  }
  const json args = params.contains("arguments") && !params["arguments"].is_null() ? params["arguments"] : json::object();
  if (!args.is_object()) throw RpcError{invalid_params, "Invalid params: arguments must be an object"};
  // A failing tool is a result the model reads (isError), as the error contract words it.
  json envelope;
  try {
    envelope = call_tool_in_store(*t, store_, args);
  } catch (const Error& e) {
    envelope = e.envelope();
  } catch (const std::bad_alloc&) {
    envelope = Error(Code::internal, "out of memory").envelope();
  } catch (const std::exception& e) {
    envelope = Error(Code::internal, e.what()).envelope();
  }
  if (!envelope.value("ok", false))
    std::fprintf(stderr, "sv-mcp: %s: %s\n", name.c_str(), envelope["llm_text"].get<std::string>().c_str());
  return call_result(*t, std::move(envelope));
}

namespace {

bool write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// notifications/progress for a call whose request asks for them (_meta.progressToken): the first
// after a second of work, so a quick call sends none, then at most four a second, each further
// than the one before as the protocol asks.
std::function<void(double, double, const std::string&)> progress_notifier(const json& params,
                                                                          std::function<bool(const std::string&)> send) {
  const json meta = params.value("_meta", json::object());
  if (!meta.is_object() || !meta.contains("progressToken")) return {};
  const json token = meta["progressToken"];
  if (!token.is_string() && !token.is_number_integer()) return {};
  using Clock = std::chrono::steady_clock;
  constexpr std::chrono::milliseconds kFirst{1000}, kEvery{250};
  auto next = std::make_shared<Clock::time_point>(Clock::now() + kFirst);
  auto sent = std::make_shared<double>(-1);
  return [=](double done, double total, const std::string& message) {
    const auto now = Clock::now();
    if (now < *next || done <= *sent) return;
    *next = now + kEvery;
    *sent = done;
    json p = {{"progressToken", token}, {"progress", done}};
    if (total > 0) p["total"] = total;
    if (!message.empty()) p["message"] = message;
    send(line_of({{"jsonrpc", "2.0"}, {"method", "notifications/progress"}, {"params", p}}));
  };
}

}  // namespace

bool LineReader::complete(const Emit& emit) {
  std::optional<std::string> line;
  if (!oversized_) {
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    line = std::move(line_);
  }
  line_.clear();
  oversized_ = false;
  return emit(line);
}

bool LineReader::feed(std::string_view bytes, const Emit& emit) {
  while (!bytes.empty()) {
    const size_t nl = bytes.find('\n');
    const std::string_view part = bytes.substr(0, nl);
    if (!oversized_ && line_.size() + part.size() > kMaxMessageBytes) {
      oversized_ = true;  // the rest of this line is skipped
      std::string().swap(line_);
    }
    if (!oversized_) line_.append(part);
    if (nl == std::string_view::npos) break;
    if (!complete(emit)) return false;
    bytes.remove_prefix(nl + 1);
  }
  return true;
}

bool LineReader::finish(const Emit& emit) { return (line_.empty() && !oversized_) || complete(emit); }

int serve(Server& server, int in, int out) {
  std::fprintf(stderr, "sv-mcp: serving %s\n", server.summary().c_str());
  ::signal(SIGPIPE, SIG_IGN);  // a client gone is a failed write, not a crash
  std::mutex out_mutex;
  bool out_failed = false;
  auto send = [&](const std::string& reply) {
    std::lock_guard lock(out_mutex);
    out_failed = out_failed || !write_all(out, reply + "\n");
    return !out_failed;
  };

  // The tool calls, in order, on one worker; each with its cancellation, by id while pending.
  struct Call {
    json id, params;
    std::shared_ptr<Cancellation> cancel;
  };
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Call> queue;
  std::map<std::string, std::shared_ptr<Cancellation>> pending;
  bool closing = false;
  std::thread worker([&] {
    for (;;) {
      Call c;
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return !queue.empty() || closing; });
        if (queue.empty()) return;
        c = std::move(queue.front());
        queue.pop_front();
      }
      std::optional<std::string> reply;
      if (!c.cancel->requested) {  // a call cancelled before it started is dropped
        c.cancel->progress = progress_notifier(c.params, send);
        CancelScope scope(c.cancel.get());
        reply = server.answer_call(c.id, c.params);
      }
      {
        std::lock_guard lock(mutex);
        pending.erase(c.id.dump());
      }
      if (reply && !c.cancel->honoured) send(*reply);
    }
  });

  auto answer = [&](const std::optional<std::string>& line) {
    if (!line)
      return send(error_reply(nullptr, parse_error, fmt::format("Parse error: a message longer than {} bytes", kMaxMessageBytes)));
    if (line->find_first_not_of(" \t") == std::string::npos) return true;
    Server::Routed r = server.route(*line);
    if (r.call_id) {
      std::lock_guard lock(mutex);
      auto cancel = std::make_shared<Cancellation>();
      pending[r.call_id->dump()] = cancel;
      queue.push_back({*r.call_id, std::move(r.params), cancel});
      changed.notify_all();
      return true;
    }
    if (r.cancel_id) {
      std::lock_guard lock(mutex);
      if (auto it = pending.find(r.cancel_id->dump()); it != pending.end()) it->second->requested = true;
      return true;
    }
    return !r.reply || send(*r.reply);
  };
  LineReader reader;
  char buf[1 << 16];
  bool ok = true;
  for (;;) {
    ssize_t n = ::read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (!reader.feed(std::string_view(buf, static_cast<size_t>(n)), answer)) {
      ok = false;
      break;
    }
  }
  if (ok) ok = reader.finish(answer);
  {
    // The end of input (the client closing its side): the calls already sent are answered, then
    // the server exits. A client gone (no one to answer) cancels them instead.
    std::lock_guard lock(mutex);
    if (!ok)
      for (auto& c : queue) c.cancel->requested = true;
    closing = true;
    changed.notify_all();
  }
  worker.join();
  std::lock_guard lock(out_mutex);
  return ok && !out_failed ? 0 : 1;
}

Stdio take_stdio() {
  Stdio s{::fcntl(0, F_DUPFD_CLOEXEC, 3), ::fcntl(1, F_DUPFD_CLOEXEC, 3)};
  int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (s.in < 0 || s.out < 0 || null < 0 || ::dup2(null, 0) < 0 || ::dup2(2, 1) < 0)
    throw Error(Code::io_error, "cannot set up standard input and output for the protocol");
  ::close(null);
  return s;
}

}  // namespace sv::mcp
