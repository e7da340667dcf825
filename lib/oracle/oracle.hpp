// Asking an oracle: a person or a vision model behind an external command, in the manner of
// git's credential helpers and askpass programs. sv writes a request directory (request.json and
// the pictures the question is about, as PNG files), runs the command through `sh -c` with that
// directory's path as its argument, in a session of its own, and reads one JSON answer from its
// standard output. The command exits 0 with an answer or 1 to decline.
//
// The oracle cannot outlive its call: it runs under a keeper process, the subreaper of all it
// starts, which ends the whole of it — its session and any process that left it (setsid, a
// double fork) — and removes the request directory when it exits, when its time is up, when the
// call is cancelled (core/cancel.hpp) and when sv itself ends, however (the keeper sees sv's pipe
// close, even on SIGKILL). Used by AskOracle and by the semantic tools (naming forms from their
// crops, scoring recognizability).
#pragma once
#include <opencv2/core.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/scene.hpp"

namespace sv {

// What the question is about, as one PNG of the request directory.
struct OracleArtifact {
  std::string name;     // file name stem: "current" is written as current.png
  std::string caption;  // what the picture shows, for the oracle
  cv::Mat image;        // BGR or gray
};

struct OracleQuestion {
  std::string question;
  std::string expected_answer = "free_text";  // yes_no, choice, free_text, ranking
  // The answers allowed: a choice is one of them, a ranking orders all of them. Empty for a
  // choice or ranking among candidate revisions (their ids are the choices then).
  std::vector<std::string> choices;
  std::vector<std::string> candidate_revision_ids;
  json region = nullptr;  // the region the pictures are cropped to (null: the whole drawing)
  std::vector<OracleArtifact> artifacts;
  double timeout_seconds = 600;
};

enum class OracleStatus { answered, not_configured, declined, timeout, malformed, failed, cancelled };
const char* oracle_status_name(OracleStatus s);

struct OracleAnswer {
  OracleStatus status = OracleStatus::not_configured;
  std::string answer;  // empty unless answered
  std::optional<std::string> chosen_revision_id;
  std::vector<std::string> ranking;
  std::optional<double> confidence;  // [0, 1], when the oracle gave one
  std::string rationale;
  std::string detail;  // why it is not an answer: the exit status, the parse error, stderr's last line
};

// Largest answer read from the oracle's standard output (and stderr kept for the detail).
inline constexpr size_t kOracleAnswerLimit = 64 * 1024;
// Time between the SIGTERM that ends a timed-out or cancelled oracle and the SIGKILL that makes
// sure.
inline constexpr double kOracleKillGraceSeconds = 0.3;

// The request as request.json holds it (artifacts by file name).
json oracle_request_json(const OracleQuestion& q);

// Asks `command` (empty: not_configured at once, nothing run). Never throws for what the
// oracle does; Error(io_error) when the request directory cannot be written.
OracleAnswer ask_oracle(const std::string& command, const OracleQuestion& q);

}  // namespace sv
