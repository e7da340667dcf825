#include "oracle/oracle.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <opencv2/imgproc.hpp>
#include <thread>

#include "core/error.hpp"
#include "core/file.hpp"
#include "raster/png.hpp"

namespace sv {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const char* oracle_status_name(OracleStatus s) {
  switch (s) {
    case OracleStatus::answered: return "answered";
    case OracleStatus::not_configured: return "not_configured";
    case OracleStatus::declined: return "declined";
    case OracleStatus::timeout: return "timeout";
    case OracleStatus::malformed: return "malformed";
    case OracleStatus::failed: return "failed";
  }
  return "failed";
}

namespace {

// The answers a choice or a ranking picks from.
const std::vector<std::string>& options_of(const OracleQuestion& q) {
  return q.choices.empty() ? q.candidate_revision_ids : q.choices;
}

std::string png_name(const OracleArtifact& a) { return a.name + ".png"; }

// The request directory, removed when the question is settled (whatever happened).
struct RequestDir {
  fs::path path;
  RequestDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = (fs::path(tmp && *tmp ? tmp : "/tmp") / "sv-oracle-XXXXXX").string();
    if (!::mkdtemp(templ.data()))
      throw Error(Code::io_error, fmt::format("cannot make the oracle's request directory: {}", std::strerror(errno)));
    path = templ;
  }
  ~RequestDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write_request(const fs::path& dir, const OracleQuestion& q) {
  write_file_atomic((dir / "request.json").string(), oracle_request_json(q).dump(2) + "\n");
  for (const auto& a : q.artifacts) {
    cv::Mat bgr = a.image;
    if (bgr.channels() == 1) cv::cvtColor(a.image, bgr, cv::COLOR_GRAY2BGR);
    write_file_atomic((dir / png_name(a)).string(), encode_png_rgb(bgr));
  }
}

// The last non-empty line of a stream, for a one-line detail.
std::string last_line(const std::string& s) {
  size_t end = s.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  size_t start = s.rfind('\n', end);
  return s.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

struct Outcome {
  bool started = false, timed_out = false;
  int wait_status = 0;
  std::string out, err;
  bool out_overflow = false;
  std::string start_error;
};

// Reads what is there on a non-blocking pipe; false at end of file.
bool drain(int fd, std::string& into, bool& overflow) {
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      const size_t room = kOracleAnswerLimit + 1 > into.size() ? kOracleAnswerLimit + 1 - into.size() : 0;
      into.append(buf, std::min(room, static_cast<size_t>(n)));
      overflow = overflow || into.size() > kOracleAnswerLimit;
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

bool group_alive(pid_t pgid) { return ::kill(-pgid, 0) == 0 || errno == EPERM; }

// Runs `sh -c 'COMMAND "$@"' sh DIR` in a new process group with stdin from /dev/null, stdout
// and stderr captured, until it exits or the deadline passes; then nothing of its group is left.
Outcome run_oracle(const std::string& command, const std::string& dir, double timeout_s) {
  Outcome o;
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    o.start_error = std::strerror(errno);
    return o;
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    o.start_error = std::strerror(errno);
    ::close(out[0]), ::close(out[1]);
    return o;
  }
  const std::string script = command + " \"$@\"";
  const char* argv[] = {"sh", "-c", script.c_str(), "sh", dir.c_str(), nullptr};
  // An oracle that asks at the terminal (oracle-ask) must be the terminal's foreground process
  // group, as a shell's job is, or reading it stops it; sv takes the terminal back afterwards.
  const int tty = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  const bool foreground = tty >= 0 && ::tcgetpgrp(tty) == ::getpgrp();
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    ::setpgid(0, 0);
    if (foreground) {  // a background group may take the terminal only with SIGTTOU ignored
      ::signal(SIGTTOU, SIG_IGN);
      ::tcsetpgrp(tty, ::getpid());
      ::signal(SIGTTOU, SIG_DFL);
    }
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::signal(SIGPIPE, SIG_DFL);
    ::execv("/bin/sh", const_cast<char* const*>(argv));
    ::_exit(127);
  }
  ::close(out[1]), ::close(err[1]);
  // Hands the terminal to `pgid` whichever group sv is in by then (SIGTTOU blocked).
  auto give_terminal = [&](pid_t pgid) {
    if (!foreground) return;
    sigset_t ttou, old;
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    ::pthread_sigmask(SIG_BLOCK, &ttou, &old);
    ::tcsetpgrp(tty, pgid);
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  };
  if (pid < 0) {
    o.start_error = std::strerror(errno);
    ::close(out[0]), ::close(err[0]);
    if (tty >= 0) ::close(tty);
    return o;
  }
  ::setpgid(pid, pid);  // also here: no signal may miss the group for want of the child's call
  give_terminal(pid);
  o.started = true;
  for (int fd : {out[0], err[0]}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  bool out_open = true, err_open = true, exited = false, err_overflow = false;
  while (!exited) {
    pollfd fds[2];
    int n = 0;
    if (out_open) fds[n++] = {out[0], POLLIN, 0};
    if (err_open) fds[n++] = {err[0], POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    // Short slices: the child is checked for even while a descendant holds the pipes open.
    const int slice = static_cast<int>(std::clamp<long long>(left, 0, 50));
    if (n > 0) ::poll(fds, n, slice);
    else std::this_thread::sleep_for(std::chrono::milliseconds(slice));
    if (out_open) out_open = drain(out[0], o.out, o.out_overflow);
    if (err_open) err_open = drain(err[0], o.err, err_overflow);
    if (::waitpid(pid, &o.wait_status, WNOHANG) == pid) {
      exited = true;
      if (out_open) drain(out[0], o.out, o.out_overflow);  // what it wrote before it exited
      if (err_open) drain(err[0], o.err, err_overflow);
    } else if (Clock::now() >= deadline) {
      o.timed_out = true;
      ::kill(-pid, SIGTERM);
      const auto grace = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(kOracleKillGraceSeconds));
      while (Clock::now() < grace && ::waitpid(pid, &o.wait_status, WNOHANG) != pid)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &o.wait_status, 0);  // ECHILD when reaped above
      exited = true;
    }
  }
  // Whatever it left running in its group (a daemon, a background job) goes with it.
  if (group_alive(pid)) ::kill(-pid, SIGKILL);
  give_terminal(::getpgrp());
  if (tty >= 0) ::close(tty);
  ::close(out[0]), ::close(err[0]);
  return o;
}

std::string lower_trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  std::string t = a == std::string::npos ? "" : s.substr(a, b - a + 1);
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return t;
}

bool among(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// The oracle's printed answer checked against the question; "" when it is valid, else why not.
std::string read_answer(const std::string& text, const OracleQuestion& q, OracleAnswer& a) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return "the answer is not JSON";
  if (!j.is_object()) return "the answer is not a JSON object";
  auto optional_string = [&](const char* key, std::string& into) {
    if (!j.contains(key) || j[key].is_null()) return true;
    if (!j[key].is_string()) return false;
    into = j[key].get<std::string>();
    return true;
  };
  if (!j.contains("answer") || !j["answer"].is_string()) return "the answer has no string field 'answer'";
  a.answer = j["answer"];
  if (!optional_string("rationale", a.rationale)) return "'rationale' is not a string";
  std::string chosen;
  if (j.contains("chosen_revision_id") && !j["chosen_revision_id"].is_null()) {
    if (!j["chosen_revision_id"].is_string()) return "'chosen_revision_id' is not a string";
    chosen = j["chosen_revision_id"];
    if (!among(q.candidate_revision_ids, chosen))
      return fmt::format("chosen_revision_id '{}' is not one of the candidate revisions", chosen);
    a.chosen_revision_id = chosen;
  }
  if (j.contains("confidence") && !j["confidence"].is_null()) {
    if (!j["confidence"].is_number()) return "'confidence' is not a number";
    const double c = j["confidence"];
    if (!(c >= 0 && c <= 1)) return fmt::format("confidence {} is outside [0, 1]", c);
    a.confidence = c;
  }
  if (j.contains("ranking") && !j["ranking"].is_null()) {
    if (!j["ranking"].is_array()) return "'ranking' is not a list";
    for (const auto& r : j["ranking"]) {
      if (!r.is_string()) return "'ranking' holds something other than strings";
      a.ranking.push_back(r);
    }
  }
  const std::vector<std::string>& options = options_of(q);
  if (q.expected_answer == "yes_no") {
    const std::string v = lower_trimmed(a.answer);
    if (v != "yes" && v != "no") return fmt::format("a yes_no answer is 'yes' or 'no', not '{}'", a.answer);
    a.answer = v;
  } else if (q.expected_answer == "choice" && !options.empty()) {
    if (!q.candidate_revision_ids.empty() && q.choices.empty()) {
      if (!a.chosen_revision_id && among(options, a.answer)) a.chosen_revision_id = a.answer;
      if (!a.chosen_revision_id) return "a choice among revisions needs chosen_revision_id";
    } else if (!among(options, a.answer)) {
      return fmt::format("'{}' is not one of the choices", a.answer);
    }
  } else if (q.expected_answer == "ranking" && !options.empty()) {
    std::vector<std::string> got = a.ranking, want = options;
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    if (got != want) return "a ranking lists every choice exactly once";
  }
  for (const auto& r : a.ranking)
    if (!options.empty() && !among(options, r)) return fmt::format("ranking names '{}', which is not a choice", r);
  return "";
}

}  // namespace

json oracle_request_json(const OracleQuestion& q) {
  json artifacts = json::array();
  for (const auto& a : q.artifacts)
    artifacts.push_back({{"file", png_name(a)}, {"caption", a.caption}, {"width", a.image.cols}, {"height", a.image.rows}});
  json choices = q.expected_answer == "yes_no" ? json::array({"yes", "no"}) : json(options_of(q));
  return {{"protocol", "sv-oracle 1"},
          {"question", q.question},
          {"expected_answer", q.expected_answer},
          {"choices", choices},
          {"candidate_revision_ids", q.candidate_revision_ids},
          {"region", q.region},
          {"artifacts", artifacts},
          {"timeout_seconds", q.timeout_seconds},
          {"answer_format",
           "print one JSON object and exit 0: {\"answer\": string, \"chosen_revision_id\": one of "
           "candidate_revision_ids or null, \"ranking\": [choices, best first] or null, \"confidence\": 0..1 or null, "
           "\"rationale\": string or null}; exit 1 to decline"}};
}

OracleAnswer ask_oracle(const std::string& command, const OracleQuestion& q) {
  OracleAnswer a;
  if (command.find_first_not_of(" \t") == std::string::npos) {
    a.status = OracleStatus::not_configured;
    a.detail = "no oracle is configured (--oracle CMD or SV_ORACLE)";
    return a;
  }
  RequestDir dir;
  write_request(dir.path, q);
  const Outcome o = run_oracle(command, dir.path.string(), std::max(0.0, q.timeout_seconds));
  const std::string err = last_line(o.err);
  auto with_err = [&](std::string s) { return err.empty() ? s : s + ": " + err; };
  if (!o.started) {
    a.status = OracleStatus::failed;
    a.detail = "the oracle cannot be started: " + o.start_error;
  } else if (o.timed_out) {
    a.status = OracleStatus::timeout;
    a.detail = fmt::format("no answer within {:g} s; the oracle's process group was ended", q.timeout_seconds);
  } else if (WIFSIGNALED(o.wait_status)) {
    a.status = OracleStatus::failed;
    a.detail = with_err(fmt::format("the oracle was killed by signal {}", WTERMSIG(o.wait_status)));
  } else if (WEXITSTATUS(o.wait_status) == 1) {
    a.status = OracleStatus::declined;
    a.detail = with_err("the oracle declined to answer (exit 1)");
  } else if (WEXITSTATUS(o.wait_status) != 0) {
    a.status = OracleStatus::failed;
    a.detail = with_err(fmt::format("the oracle exited with status {}", WEXITSTATUS(o.wait_status)));
  } else if (o.out_overflow) {
    a.status = OracleStatus::malformed;
    a.detail = fmt::format("the answer is larger than {} KiB", kOracleAnswerLimit / 1024);
  } else if (std::string bad = read_answer(o.out, q, a); !bad.empty()) {
    a = OracleAnswer{};
    a.status = OracleStatus::malformed;
    a.detail = bad;
  } else {
    a.status = OracleStatus::answered;
  }
  return a;
}

}  // namespace sv
