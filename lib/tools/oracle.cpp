// AskOracle: the question geometry cannot answer, put to a person or a vision model behind the
// configured oracle command (oracle/oracle.hpp) with the pictures it is about — the source, the
// current render and each candidate revision's render, cropped to the region. The result says
// what happened (answered, not_configured, declined, timeout, malformed, failed, cancelled); only an
// answered question carries an answer.
#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "oracle/oracle.hpp"
#include "tools/common.hpp"
#include "tools/request.hpp"
#include "tools/schema_parts.hpp"

namespace sv {

namespace {

namespace S = schema;

constexpr int kDefaultTimeoutSeconds = 600;  // a person at a terminal needs minutes, not seconds

// What the robot draws, in ink on the area shown.
cv::Mat render_of(const Scene& s, const BBox& area, const std::string& title) {
  View v(area, title, 720);
  for (const auto& [id, path] : drawing_of(s).pieces) v.polyline(path, color::ink, 2);
  return v.finish();
}

struct AskOracleRequest : RegionRequest {
  std::string question;
  std::vector<std::string> candidate_revisions;
  std::string expected_answer;
  std::optional<int> timeout_seconds;  // none: kDefaultTimeoutSeconds
};

ToolResult ask_oracle_tool(const ToolContext& ctx, const AskOracleRequest& req) {
  ToolResult r;
  OracleQuestion q;
  q.question = req.question;
  q.expected_answer = req.expected_answer;
  q.region = req.region;
  q.timeout_seconds = req.timeout_seconds.value_or(kDefaultTimeoutSeconds);
  std::vector<Scene> candidates;
  for (const auto& name : req.candidate_revisions) {
    Scene holder;
    std::string id;
    Scene c = revision_scene(ctx, name, holder, &id);
    if (std::find(q.candidate_revision_ids.begin(), q.candidate_revision_ids.end(), id) != q.candidate_revision_ids.end())
      throw Error(Code::invalid_selection, fmt::format("candidate_revisions names {} twice", id.substr(0, 12)),
                  {{"revision", id}});
    q.candidate_revision_ids.push_back(id);
    candidates.push_back(std::move(c));
  }
  if ((q.expected_answer == "choice" || q.expected_answer == "ranking") && q.candidate_revision_ids.size() < 2)
    throw Error(Code::invalid_selection,
                fmt::format("a {} is among candidate_revisions: name at least two", q.expected_answer));
  const Scope scope = req.region.is_object() ? Scope{{resolve_region(ctx.scene, req.region)}} : Scope{};

  OracleAnswer a;
  if (ctx.oracle.empty()) {
    a = ask_oracle(ctx.oracle, q);  // not_configured, at once: nothing is rendered or run
  } else {
    // Every picture shows the same area of the image, so they compare at a glance.
    const Scene& s = ctx.scene;
    const BBox area = view_area(s, scope.bounds(), 2 * stroke_width_of(s));
    std::string why;
    const cv::Mat gray = source_raster(ctx, s, &why);
    if (!gray.empty()) {
      View v(area, "source", 720);
      v.underlay(gray, color::ink);
      q.artifacts.push_back({"source", "the source image the drawing was made from", v.finish()});
    } else {
      r.warnings.push_back("the oracle is not shown the source: " + why);
    }
    q.artifacts.push_back({"current", "what the robot draws now (revision " + ctx.revision_id + ")",
                           render_of(s, area, "current " + ctx.revision_id.substr(0, 12))});
    for (size_t i = 0; i < candidates.size(); ++i) {
      const std::string& id = q.candidate_revision_ids[i];
      q.artifacts.push_back({fmt::format("candidate_{}", i + 1), "what the robot draws in candidate revision " + id,
                             render_of(candidates[i], area, fmt::format("candidate {}: {}", i + 1, id.substr(0, 12)))});
    }
    a = ask_oracle(ctx.oracle, q);
    std::vector<cv::Mat> tiles;
    for (const auto& art : q.artifacts) tiles.push_back(art.image);
    r.images["question"] = sheet(tiles);
  }

  const bool answered = a.status == OracleStatus::answered;
  json artifacts = json::array();
  for (const auto& art : q.artifacts) artifacts.push_back(art.name + ".png");
  r.fields = {{"status", oracle_status_name(a.status)},
              {"answer", answered ? json(a.answer) : json(nullptr)},
              {"chosen_revision_id", a.chosen_revision_id ? json(*a.chosen_revision_id) : json(nullptr)},
              {"ranking", a.ranking},
              {"confidence", a.confidence ? json(*a.confidence) : json(nullptr)},
              {"rationale", a.rationale.empty() ? json(nullptr) : json(a.rationale)},
              {"detail", a.detail},
              {"candidate_revision_ids", q.candidate_revision_ids},
              {"artifacts", artifacts}};
  if (answered) {
    r.llm_text = "oracle: " + a.answer;
    if (a.chosen_revision_id) r.llm_text += "; chose " + *a.chosen_revision_id;
    if (!a.ranking.empty()) r.llm_text += "; ranking " + json(a.ranking).dump();
    if (a.confidence) r.llm_text += fmt::format("; confidence {:g}", *a.confidence);
    r.human_text = r.llm_text + (a.rationale.empty() ? "" : "\nrationale: " + a.rationale);
  } else {
    r.llm_text = fmt::format("no answer ({}): {}", oracle_status_name(a.status), a.detail);
  }
  return r;
}

Tool ask_oracle_entry() {
  json timeout = S::nullable(S::integer(fmt::format("seconds the oracle has to answer (default {}); then its whole "
                                                    "session is ended and the status is timeout",
                                                    kDefaultTimeoutSeconds), 1));
  timeout["maximum"] = 86400;
  // The sheet of what the oracle is shown holds nine pictures: the source, the current render and seven candidates.
  json candidates = S::array(S::string("a revision: HEAD, a branch, final, an id or a unique prefix"), "when asking which is better");
  candidates["maxItems"] = 7;
  using R = AskOracleRequest;
  Tool t = typed_tool<R>(
      40, "AskOracle", "evaluation",
      "Put a question geometry cannot answer to the configured oracle (--oracle CMD or SV_ORACLE: a person or a "
      "vision model), with the source, the current render and each candidate's render cropped to the region; "
      "the status says whether it answered.",
      {{field("question", &R::question, S::string("what to ask, in plain words")),
        field<R, json>("region", &R::region, S::region("crop the pictures to this region")),
        field("candidate_revisions", &R::candidate_revisions, S::with_default(candidates, json::array())),
        field("expected_answer", &R::expected_answer,
              S::with_default(S::enumeration({"yes_no", "choice", "free_text", "ranking"},
                                             "choice and ranking are among the candidates"),
                              "free_text")),
        field("timeout_seconds", &R::timeout_seconds, timeout)},
       {"question"}},
      S::object({{"status", S::enumeration({"answered", "not_configured", "declined", "timeout", "malformed", "failed",
                                            "cancelled"},
                                           "answered: the fields below are the oracle's; otherwise there is no "
                                           "answer and detail says why")},
                 {"answer", S::nullable(S::string("the oracle's answer (yes_no: yes or no); null unless answered"))},
                 {"chosen_revision_id", S::nullable(S::string("one of candidate_revision_ids"))},
                 {"ranking", S::array(S::string("a candidate revision id"), "best first (expected_answer ranking)")},
                 {"confidence", S::nullable(S::number("the oracle's own confidence, 0..1", 0))},
                 {"rationale", S::nullable(S::string("the oracle's reasons"))},
                 {"detail", S::string("why there is no answer (empty when answered)")},
                 {"candidate_revision_ids", S::array(S::string("a revision id"), "the candidates as full revision ids")},
                 {"artifacts", S::array(S::string("a file path"), "the PNG files the oracle was shown (request directory)")}},
                {"status", "answer", "chosen_revision_id", "confidence", "detail"}),
      ask_oracle_tool, ToolKind::read, "sv-diagnose");
  t.asks_oracle = true;
  return t;
}

}  // namespace

void add_oracle_tools(std::vector<Tool>& out) { out.push_back(ask_oracle_entry()); }

}  // namespace sv
