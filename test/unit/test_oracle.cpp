// ask_oracle as the semantic tools call it: choices of their own (labels for a form's crop),
// checked against what the oracle prints.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "core/file.hpp"
#include "oracle/oracle.hpp"

using namespace sv;

namespace {

// An oracle that prints `answer` (a JSON text) and exits 0.
std::string printing(const std::string& answer) {
  const auto p = std::filesystem::temp_directory_path() / ("sv-oracle-unit-" + std::to_string(std::hash<std::string>{}(answer)));
  // Tests running at once write the same script: whole, and executable, or not at all.
  write_file_atomic(p.string(), "#!/bin/sh\ncat <<'EOF'\n" + answer + "\nEOF\n", 0755);
  return p.string();
}

}  // namespace

TEST_CASE("ask_oracle: a choice among labels and a ranking are checked against the choices", "[oracle]") {
  OracleQuestion q;
  q.question = "What is this form?";
  q.expected_answer = "choice";
  q.choices = {"eye", "mouth", "head"};
  q.artifacts.push_back({"form_1", "the form's crop", cv::Mat(8, 8, CV_8UC1, cv::Scalar(255))});
  q.timeout_seconds = 30;
  CHECK(oracle_request_json(q)["choices"] == json({"eye", "mouth", "head"}));
  CHECK(oracle_request_json(q)["artifacts"][0]["file"] == "form_1.png");

  OracleAnswer a = ask_oracle(printing(R"({"answer": "eye", "confidence": 0.7})"), q);
  CHECK(a.status == OracleStatus::answered);
  CHECK(a.answer == "eye");
  CHECK(a.confidence == 0.7);
  a = ask_oracle(printing(R"({"answer": "nose"})"), q);
  CHECK(a.status == OracleStatus::malformed);
  CHECK(a.detail == "'nose' is not one of the choices");
  CHECK(a.answer.empty());

  q.expected_answer = "ranking";
  a = ask_oracle(printing(R"({"answer": "by size", "ranking": ["head", "eye", "mouth"]})"), q);
  CHECK(a.status == OracleStatus::answered);
  CHECK(a.ranking == std::vector<std::string>{"head", "eye", "mouth"});
  a = ask_oracle(printing(R"({"answer": "by size", "ranking": ["head", "eye"]})"), q);
  CHECK(a.status == OracleStatus::malformed);

  // An answer beyond the size limit is not read as an answer.
  a = ask_oracle(printing("{\"answer\": \"" + std::string(kOracleAnswerLimit, 'x') + "\"}"), q);
  CHECK(a.status == OracleStatus::malformed);
  CHECK(a.detail == "the answer is larger than 64 KiB");
  CHECK(ask_oracle("", q).status == OracleStatus::not_configured);
}
