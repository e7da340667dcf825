// AskOracle as an agent calls it: the oracle command from --oracle or SV_ORACLE, run with the
// request directory; each way an oracle can fail to answer reported as what it is, and a
// timed-out oracle ended with its whole process group.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "process.hpp"
#include "store/store.hpp"

using namespace svtest;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kScripts = std::string(SV_TEST_DATA) + "/../../scripts";

fs::path oracle_store() { return pipeline_store("oracle-store", "tabler_hexagons_w5.png"); }

// An executable oracle script in the scratch directory.
std::string oracle_script(const std::string& name, const std::string& body) {
  const fs::path p = scratch() / name;
  spit(p, "#!/bin/sh\n" + body);
  fs::permissions(p, fs::perms::owner_all);
  return p.string();
}

// sv-diagnose ask-oracle in the store, with the environment prefix `env` (e.g. "SV_ORACLE=x").
json ask(const std::string& env, const std::string& args, Run* raw = nullptr) {
  Run r = run(fmt::format("cd {} && env -u SV_ORACLE {} {} ask-oracle --rev HEAD {}", oracle_store().string(), env,
                          bin("sv-diagnose"), args));
  if (raw) *raw = r;
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  return json::parse(r.out);
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Alive and not a zombie waiting for its parent.
bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t paren = line.rfind(')');
  return paren == std::string::npos || line.substr(paren + 2, 1) != "Z";
}

}  // namespace

TEST_CASE("ask-oracle: a round trip through the recorded-answers oracle", "[e2e][oracle]") {
  const fs::path answers = scratch() / "answers.jsonl";
  spit(answers, R"({"question": "Do the hexagons read as a honeycomb?", "expected_answer": "yes_no", "answer": "Yes", )"
                R"("confidence": 0.8, "rationale": "six cells sharing sides"})"
                "\n");
  const std::string env = "SV_ORACLE_ANSWERS=" + answers.string();
  const std::string q = "--question 'Do the hexagons read as a honeycomb?' --expected-answer yes_no";
  const fs::path png = scratch() / "oracle-question.png";
  json a = ask(env, fmt::format("--oracle {}/oracle-replay {} --png {}", kScripts, q, png.string()));
  CHECK(a["status"] == "answered");
  CHECK(a["answer"] == "yes");  // a yes_no answer is normalized
  CHECK(a["confidence"] == 0.8);
  CHECK(a["rationale"] == "six cells sharing sides");
  CHECK(a["detail"] == "");
  CHECK(a["artifacts"] == json::array({"source.png", "current.png"}));
  CHECK(fs::file_size(png) > 0);  // the pictures the oracle was shown

  // The same oracle named by SV_ORACLE; a question it has no answer for is declined.
  a = ask(env + " SV_ORACLE=" + kScripts + "/oracle-replay", q);
  CHECK(a["status"] == "answered");
  a = ask(env + " SV_ORACLE=" + kScripts + "/oracle-replay", "--question 'Is it a cat?'");
  CHECK(a["status"] == "declined");
  CHECK(a["answer"].is_null());
  CHECK(a["detail"].get<std::string>().find("no recorded answer") != std::string::npos);

  // A choice among revisions: the candidates' renders are shown, the chosen id is checked.
  sv::Store st(oracle_store() / ".svrev");
  const std::string head = st.head_id(), parent = st.read_scene(head).revision.parent;
  spit(answers, json({{"question", "Which is better?"}, {"answer", "the first"}, {"chosen_revision_id", parent}}).dump() +
                    "\n");
  a = ask(env, fmt::format("--oracle {}/oracle-replay --question 'Which is better?' --expected-answer choice "
                           "--candidate-revisions {},{}",
                           kScripts, parent.substr(0, 10), head.substr(0, 10)));
  CHECK(a["status"] == "answered");
  CHECK(a["chosen_revision_id"] == parent);
  CHECK(a["candidate_revision_ids"] == json::array({parent, head}));
  CHECK(a["artifacts"] == json::array({"source.png", "current.png", "candidate_1.png", "candidate_2.png"}));
  // An answer choosing a revision that is not a candidate is malformed, never passed on.
  spit(answers, json({{"question", "Which is better?"}, {"answer", "x"}, {"chosen_revision_id", "feedface"}}).dump() + "\n");
  a = ask(env, fmt::format("--oracle {}/oracle-replay --question 'Which is better?' --expected-answer choice "
                           "--candidate-revisions {},{}",
                           kScripts, parent, head));
  CHECK(a["status"] == "malformed");
  CHECK(a["chosen_revision_id"].is_null());
  CHECK(a["detail"].get<std::string>().find("not one of the candidate revisions") != std::string::npos);
}

TEST_CASE("ask-oracle: without an oracle the answer is at once that none is configured", "[e2e][oracle]") {
  json a = ask("", "--question 'Is this a face?'");
  CHECK(a["status"] == "not_configured");
  CHECK(a["answer"].is_null());
  CHECK(a["artifacts"].empty());
  CHECK(a["detail"].get<std::string>().find("no oracle is configured") != std::string::npos);
  CHECK(a["llm_text"].get<std::string>().find("not_configured") != std::string::npos);
}

TEST_CASE("ask-oracle: declining, malformed and failing oracles each say what happened", "[e2e][oracle]") {
  json a = ask("", "--question q --oracle " + oracle_script("decline.sh", "echo 'not my field' >&2\nexit 1\n"));
  CHECK(a["status"] == "declined");
  CHECK(a["detail"] == "the oracle declined to answer (exit 1): not my field");

  a = ask("", "--question q --oracle " + oracle_script("garbage.sh", "echo 'it is a cat'\n"));
  CHECK(a["status"] == "malformed");
  CHECK(a["detail"] == "the answer is not JSON");
  CHECK(a["answer"].is_null());

  a = ask("", "--question q --oracle " + oracle_script("wrongtype.sh", "echo '{\"answer\": \"x\", \"confidence\": \"high\"}'\n"));
  CHECK(a["status"] == "malformed");
  CHECK(a["detail"] == "'confidence' is not a number");

  a = ask("", "--question q --expected-answer yes_no --oracle " + oracle_script("maybe.sh", "echo '{\"answer\": \"maybe\"}'\n"));
  CHECK(a["status"] == "malformed");

  a = ask("", "--question q --oracle " + oracle_script("crash.sh", "echo 'out of tokens' >&2\nexit 3\n"));
  CHECK(a["status"] == "failed");
  CHECK(a["detail"] == "the oracle exited with status 3: out of tokens");

  a = ask("", "--question q --oracle " + (scratch() / "no-such-oracle").string());
  CHECK(a["status"] == "failed");

  // The oracle reads the request directory it is given.
  a = ask("", "--question 'how many?' --oracle " +
                  oracle_script("reader.sh", "test -f \"$1/current.png\" || exit 2\n"
                                             "q=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]+\"/request.json\"))[\"question\"])' \"$1\")\n"
                                             "printf '{\"answer\": \"%s\"}' \"$q\"\n"));
  CHECK(a["status"] == "answered");
  CHECK(a["answer"] == "how many?");
}

TEST_CASE("ask-oracle: an oracle past its time is ended with its session", "[e2e][oracle]") {
  const fs::path pids = scratch() / "sleeper.pids", started_at = scratch() / "sleeper.start";
  fs::remove(pids);
  // The oracle and a child of its own, both waiting far longer than they are given. The time is
  // taken from the oracle's start (wall clock, as date tells it), not from sv's own start-up.
  const std::string sleeper = oracle_script(
      "sleeper.sh", fmt::format("date +%s.%N > {1}\necho $$ > {0}\nsleep 60 &\necho $! >> {0}\nwait\n", pids.string(),
                                started_at.string()));
  json a = ask("", "--question q --timeout-seconds 1 --oracle " + sleeper);
  const double ended = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  CHECK(a["status"] == "timeout");
  CHECK(a["answer"].is_null());
  CHECK(a["detail"].get<std::string>().find("session and every process it started were ended") != std::string::npos);
  CHECK(ended - std::stod(slurp(started_at)) <= 2.0);  // timeout_seconds + 1
  std::ifstream in(pids);
  std::vector<pid_t> started;
  for (pid_t p; in >> p;) started.push_back(p);
  REQUIRE(started.size() == 2);
  for (pid_t p : started) CHECK_FALSE(alive(p));
}

TEST_CASE("ask-oracle: the terminal oracle asks at the terminal, and declines without one", "[e2e][oracle]") {
  // Without a controlling terminal (setsid) there is no one to ask.
  json a = ask("", "--question 'Is it a cat?' --oracle 'setsid -w " + kScripts + "/oracle-ask'");
  CHECK(a["status"] == "declined");
  CHECK(a["detail"].get<std::string>().find("no terminal to ask at") != std::string::npos);
  if (!fs::exists("/usr/bin/script")) return;  // util-linux: a terminal for the person's answer
  // A person (standing in: the pseudo-terminal's input) answers yes and says why.
  Run r = run(fmt::format("cd {} && printf 'yes\\nround face\\n' | env -u SV_ORACLE /usr/bin/script -qec \"{} ask-oracle "
                          "--rev HEAD --question 'Is it a face?' --expected-answer yes_no --oracle {}/oracle-ask\" /dev/null",
                          oracle_store().string(), bin("sv-diagnose"), kScripts));
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  // The terminal shows the question and the pictures, then the envelope (its first key is answer).
  CHECK(r.out.find("sv asks: Is it a face?") != std::string::npos);
  CHECK(r.out.find("current.png") != std::string::npos);
  const size_t brace = r.out.rfind("{\"answer\"");
  REQUIRE(brace != std::string::npos);
  a = json::parse(r.out.substr(brace));
  CHECK(a["status"] == "answered");
  CHECK(a["answer"] == "yes");
  CHECK(a["rationale"] == "round face");
}

TEST_CASE("the semantic tools ask the oracle: forms named from their crops, recognizability scored", "[e2e][oracle]") {
  const fs::path answers = scratch() / "semantic-answers.jsonl";
  spit(answers,
       R"({"question": "What does the part of this line drawing shown in form.png depict? Answer with a short name (a few words).", )"
       R"("answer": "hexagons"})"
       "\n"
       R"({"question": "Does the robot's drawing (drawing.png) show the same subject as the source image (source.png), )"
       R"(recognizably? Answer yes or no.", "expected_answer": "yes_no", "answer": "yes", "confidence": 0.9})"
       "\n");
  auto tool = [&](const std::string& env, const std::string& args) {
    Run r = run(fmt::format("cd {} && env -u SV_ORACLE {} {} {} --rev HEAD", oracle_store().string(), env, bin("sv-diagnose"), args));
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    return json::parse(r.out);
  };
  const std::string with = fmt::format("SV_ORACLE_ANSWERS={} SV_ORACLE={}/oracle-replay", answers.string(), kScripts);
  json forms = tool(with, "identify-visual-forms");
  CHECK(forms["labelled_by"] == "oracle");
  REQUIRE(!forms["forms"].empty());
  for (const json& f : forms["forms"]) {
    CHECK(f["labelled_by"] == "oracle");
    CHECK(f["label"] == "hexagons");
  }
  json fid = tool(with, "evaluate-semantic-fidelity --aspects recognizability,closure");
  CHECK(fid["aspects"][0]["aspect"] == "recognizability");
  CHECK(fid["aspects"][0]["scored"] == true);
  CHECK(fid["aspects"][0]["score"] == 0.9);
  // Without an oracle the labels are geometry's and recognizability is not scored.
  json plain = tool("", "identify-visual-forms");
  CHECK(plain["labelled_by"] == "geometry");
  json unscored = tool("", "evaluate-semantic-fidelity --aspects recognizability,closure");
  CHECK(unscored["aspects"][0]["scored"] == false);
  CHECK(unscored["aspects"][0]["score"].is_null());
}

namespace {

// The pids an oracle script wrote (one per line), once it has written `count` of them.
std::vector<pid_t> pids_in(const fs::path& file, size_t count, double wait_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  std::vector<pid_t> out;
  do {
    out.clear();
    std::ifstream in(file);
    for (pid_t p; in >> p;) out.push_back(p);
    if (out.size() >= count) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < until);
  return out;
}

// Whether all of `pids` are gone within `wait_s`.
bool all_gone(const std::vector<pid_t>& pids, double wait_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  for (;;) {
    bool any = false;
    for (pid_t p : pids) any = any || alive(p);
    if (!any) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// An oracle that starts a sleeper in a session of its own (setsid: out of the oracle's process
// group), writes its pids (the sleeper's, then its own) and its request directory, then does
// `then`.
std::string escaping_oracle(const std::string& name, const fs::path& pids, const fs::path& dir_file,
                            const std::string& then) {
  return oracle_script(name, fmt::format("setsid sleep 60 &\necho $! > {0}.tmp\necho $$ >> {0}.tmp\necho \"$1\" > {1}\n"
                                         "mv {0}.tmp {0}\n{2}\n",
                                         pids.string(), dir_file.string(), then));
}

}  // namespace

TEST_CASE("ask-oracle: an oracle that leaves its session (setsid) leaves nothing behind", "[e2e][oracle][hostile]") {
  const fs::path pids = scratch() / "setsid.pids", dir_file = scratch() / "setsid.dir";
  SECTION("at its timeout") {
    fs::remove(pids);
    json a = ask("", "--question q --timeout-seconds 1 --oracle " + escaping_oracle("setsid-sleeper.sh", pids, dir_file, "sleep 60"));
    CHECK(a["status"] == "timeout");
  }
  SECTION("when it answers") {
    fs::remove(pids);
    json a = ask("", "--question q --oracle " +
                         escaping_oracle("setsid-answer.sh", pids, dir_file, "echo '{\"answer\": \"done\"}'"));
    CHECK(a["status"] == "answered");
  }
  const std::vector<pid_t> started = pids_in(pids, 2, 5);
  REQUIRE(started.size() == 2);
  CHECK(all_gone(started, 0.5));  // ended before ask-oracle returned
  CHECK(!fs::exists(trimmed(slurp(dir_file))));
}

TEST_CASE("ask-oracle killed with SIGKILL: its oracle's session and request directory go with it",
          "[e2e][oracle][hostile]") {
  const fs::path pids = scratch() / "killed.pids", dir_file = scratch() / "killed.dir";
  fs::remove(pids);
  const std::string oracle = escaping_oracle("killed-oracle.sh", pids, dir_file, "sleep 60");
  Child c = spawn({bin("sv-diagnose"), "ask-oracle", "--rev", "HEAD", "--question", "q", "--oracle", oracle}, oracle_store());
  const std::vector<pid_t> started = pids_in(pids, 2, 20);
  REQUIRE(started.size() == 2);
  const std::string request_dir = trimmed(slurp(dir_file));
  REQUIRE(fs::exists(request_dir));
  CHECK(kill_child(c) == 128 + SIGKILL);
  CHECK(all_gone(started, 5));
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (fs::exists(request_dir) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(!fs::exists(request_dir));
}
