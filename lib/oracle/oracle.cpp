#include "oracle/oracle.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <opencv2/imgproc.hpp>
#include <thread>

#include "core/cancel.hpp"
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
    case OracleStatus::cancelled: return "cancelled";
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
  bool started = false, timed_out = false, cancelled = false;
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

// ---- The keeper: a child of sv that holds the oracle and outlives sv long enough to end it.
// Everything it runs comes after fork() in a process that may have threads, so only
// async-signal-safe calls: no allocation, no locks, no stdio.

// What the keeper tells sv once the oracle is over and nothing of it is left.
struct KeeperReport {
  int how;          // kKeeperExited, kKeeperEnded (sv asked, or sv is gone), kKeeperNoStart
  int wait_status;  // the oracle's (sh's) wait status; errno for kKeeperNoStart
};
constexpr int kKeeperExited = 0, kKeeperEnded = 1, kKeeperNoStart = 2;

// A non-negative decimal at `s`, advancing it; -1 when none.
long parse_decimal(const char*& s, const char* end) {
  long v = -1;
  while (s < end && *s >= '0' && *s <= '9') v = (v < 0 ? 0 : v * 10) + (*s++ - '0');
  return v;
}

// Sends `sig` to every process whose parent is this one (from /proc/PID/stat, which says the
// parent after the name in parentheses: the last ')' ends it); returns how many.
int signal_children(int sig) {
  const pid_t self = ::getpid();
  const int proc = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc < 0) return 0;
  int n = 0;
  alignas(8) char buf[8192];
  for (;;) {
    const ssize_t got = ::getdents64(proc, buf, sizeof buf);
    if (got <= 0) break;
    for (ssize_t at = 0; at < got;) {
      const auto* d = reinterpret_cast<const struct dirent64*>(buf + at);
      at += d->d_reclen;
      const char* name = d->d_name;
      const char* name_end = name;
      while (*name_end) ++name_end;
      const long pid = parse_decimal(name, name_end);
      if (pid <= 0 || name != name_end) continue;
      char path[64] = "/proc/";
      size_t len = 6;
      char digits[24];
      int k = 0;
      for (long v = pid; v > 0 && k < 23; v /= 10) digits[k++] = static_cast<char>('0' + v % 10);
      while (k > 0) path[len++] = digits[--k];
      for (const char* t = "/stat"; *t;) path[len++] = *t++;
      path[len] = '\0';
      const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      char stat[512];
      const ssize_t m = ::read(fd, stat, sizeof stat);
      ::close(fd);
      if (m <= 0) continue;
      const char* close_paren = nullptr;
      for (const char* c = stat; c < stat + m; ++c)
        if (*c == ')') close_paren = c;
      if (!close_paren || close_paren + 4 >= stat + m) continue;
      const char* c = close_paren + 4;  // ") S " then the parent
      if (parse_decimal(c, stat + m) == self) {
        ::kill(static_cast<pid_t>(pid), sig);
        ++n;
      }
    }
  }
  ::close(proc);
  return n;
}

// Ends every descendant: as the keeper is their subreaper, an orphan (one that left the
// oracle's session with setsid, or whose parent died) becomes its child; children are killed
// and reaped until there are none. Returns the oracle's wait status when it was reaped here.
void end_descendants(pid_t oracle, int& wait_status, bool& reaped) {
  for (int round = 0; round < 100000; ++round) {
    signal_children(SIGKILL);
    int st = 0;
    const pid_t p = ::waitpid(-1, &st, 0);
    if (p < 0 && errno == EINTR) continue;
    if (p < 0) return;  // ECHILD: nothing of it is left
    if (p == oracle) {
      wait_status = st;
      reaped = true;
    }
  }
}

// Removes the folder `name` under `parent` and all it holds (the oracle may have added files).
void remove_tree(int parent, const char* name, int depth) {
  if (::unlinkat(parent, name, 0) == 0 || (errno != EISDIR && errno != EPERM)) return;
  const int fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    alignas(8) char buf[4096];
    for (int pass = 0; pass < 64 && depth < 16; ++pass) {  // entries removed while listed may hide others
      ::lseek(fd, 0, SEEK_SET);
      bool any = false;
      for (ssize_t got; (got = ::getdents64(fd, buf, sizeof buf)) > 0;)
        for (ssize_t at = 0; at < got;) {
          const auto* d = reinterpret_cast<const struct dirent64*>(buf + at);
          at += d->d_reclen;
          if ((d->d_name[0] == '.' && d->d_name[1] == '\0') ||
              (d->d_name[0] == '.' && d->d_name[1] == '.' && d->d_name[2] == '\0'))
            continue;
          remove_tree(fd, d->d_name, depth + 1);
          any = true;
        }
      if (!any) break;
    }
    ::close(fd);
  }
  ::unlinkat(parent, name, AT_REMOVEDIR);
}

// Closes every descriptor but those in `keep` (sorted, each >= 3).
void close_all_but(const int* keep, int n) {
  int from = 3;
  for (int i = 0; i <= n; ++i) {
    const int to = i < n ? keep[i] - 1 : INT_MAX;
    if (to >= from && ::close_range(static_cast<unsigned>(from), static_cast<unsigned>(to), 0) != 0)
      for (int fd = from; fd <= std::min(to, 65535); ++fd) ::close(fd);  // a kernel without close_range
    if (i < n) from = keep[i] + 1;
  }
}

struct KeeperSetup {
  const char* const* argv;
  int ctl, report, out, err, tty, dir_parent;  // tty, dir_parent: -1 when none
  const char* dir_name;
  bool foreground;
  double grace_s;
};

[[noreturn]] void run_keeper(const KeeperSetup& k) {
  for (int sig : {SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU}) ::signal(sig, SIG_IGN);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  int keep[6], n = 0;
  for (int fd : {k.ctl, k.report, k.out, k.err, k.tty, k.dir_parent})
    if (fd >= 3) keep[n++] = fd;
  for (int i = 1; i < n; ++i)  // sorted, by hand: nothing that might allocate after fork
    for (int j = i; j > 0 && keep[j - 1] > keep[j]; --j) std::swap(keep[j - 1], keep[j]);
  close_all_but(keep, n);
  const pid_t keeper = ::getpid();
  const pid_t oracle = ::fork();
  if (oracle == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the keeper gone (kill -9 of its group), the oracle goes
    if (::getppid() != keeper) ::_exit(127);
    for (int sig : {SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU}) ::signal(sig, SIG_DFL);
    if (k.foreground) {  // a group of its own that owns the terminal (a background group may take
      ::setpgid(0, 0);   // it only with SIGTTOU ignored)
      ::signal(SIGTTOU, SIG_IGN);
      ::tcsetpgrp(k.tty, ::getpid());
      ::signal(SIGTTOU, SIG_DFL);
    } else {
      ::setsid();  // a session of its own: no terminal, no signal from sv's
    }
    const int null = ::open("/dev/null", O_RDONLY);
    if (null > 0) {
      ::dup2(null, 0);
      ::close(null);
    }
    ::dup2(k.out, 1);
    ::dup2(k.err, 2);
    ::execv("/bin/sh", const_cast<char* const*>(k.argv));
    ::_exit(127);
  }
  KeeperReport report{kKeeperNoStart, 0};
  if (oracle < 0) {
    report.wait_status = errno;
  } else {
    if (k.foreground) {
      ::setpgid(oracle, oracle);  // also here: no signal may miss the group for want of the child's call
      ::tcsetpgrp(k.tty, oracle);
    }
    ::close(k.out);
    ::close(k.err);
    bool reaped = false;
    report.how = kKeeperExited;
    while (!reaped) {
      pollfd p{k.ctl, POLLIN, 0};
      ::poll(&p, 1, 50);
      int st = 0;
      for (pid_t c; (c = ::waitpid(-1, &st, WNOHANG)) > 0;)  // orphans it adopted, and the oracle
        if (c == oracle) {
          report.wait_status = st;
          reaped = true;
        }
      if (reaped) break;
      char b;
      if ((p.revents & (POLLIN | POLLHUP | POLLERR)) && ::read(k.ctl, &b, 1) != -1) {
        // sv asks (the time is up, the call was cancelled) or is gone: the session ends, politely
        // first, then by force.
        report.how = kKeeperEnded;
        ::kill(-oracle, SIGTERM);
        ::kill(oracle, SIGTERM);
        timespec until{};
        ::clock_gettime(CLOCK_MONOTONIC, &until);
        const double end = until.tv_sec + until.tv_nsec * 1e-9 + k.grace_s;
        for (timespec now = until; now.tv_sec + now.tv_nsec * 1e-9 < end; ::clock_gettime(CLOCK_MONOTONIC, &now)) {
          if (::waitpid(oracle, &st, WNOHANG) == oracle) {
            report.wait_status = st;
            reaped = true;
            break;
          }
          const timespec tick{0, 10'000'000};
          ::nanosleep(&tick, nullptr);
        }
        break;
      }
    }
    // Whatever is left (a daemon, a background job, a child that called setsid) goes with it.
    end_descendants(oracle, report.wait_status, reaped);
  }
  if (k.dir_parent >= 0) remove_tree(k.dir_parent, k.dir_name, 0);
  ssize_t w;
  do w = ::write(k.report, &report, sizeof report);
  while (w < 0 && errno == EINTR);
  ::_exit(0);
}

// Runs `sh -c 'COMMAND "$@"' sh DIR` and waits for its answer, its time or a cancellation.
//
// The oracle runs under a keeper process (above) that is the subreaper of everything it starts
// and holds a pipe from sv: when the oracle exits, when sv says to end it (timeout, cancel) or
// when sv is gone (the pipe's end of file: sv killed, even by SIGKILL), the keeper ends the
// oracle's session and every process descended from it, wherever it went, removes the request
// directory, and only then reports. The oracle has a session of its own, or, when sv is the
// terminal's foreground job (an oracle that asks at the terminal), a process group of its own
// that is given the terminal.
Outcome run_oracle(const std::string& command, const fs::path& dir, double timeout_s) {
  Outcome o;
  int out[2] = {-1, -1}, err[2] = {-1, -1}, ctl[2] = {-1, -1}, rep[2] = {-1, -1};
  auto close_all = [&] {
    for (int* p : {out, err, ctl, rep})
      for (int i = 0; i < 2; ++i)
        if (p[i] >= 0) ::close(std::exchange(p[i], -1));
  };
  for (int* p : {out, err, ctl, rep})
    if (::pipe2(p, O_CLOEXEC) != 0) {
      o.start_error = std::strerror(errno);
      close_all();
      return o;
    }
  const std::string script = command + " \"$@\"";
  const std::string dir_text = dir.string(), dir_name = dir.filename().string();
  const char* argv[] = {"sh", "-c", script.c_str(), "sh", dir_text.c_str(), nullptr};
  UniqueFd dir_parent(::open(dir.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  // An oracle that asks at the terminal (oracle-ask) must be the terminal's foreground process
  // group, as a shell's job is, or reading it stops it; sv takes the terminal back afterwards.
  UniqueFd tty(::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC));
  const bool foreground = tty && ::tcgetpgrp(tty.get()) == ::getpgrp();
  const KeeperSetup setup{argv,       ctl[0], rep[1], out[1], err[1], foreground ? tty.get() : -1, dir_parent.get(),
                          dir_name.c_str(), foreground, kOracleKillGraceSeconds};
  const pid_t keeper = ::fork();
  if (keeper == 0) run_keeper(setup);
  if (keeper < 0) {
    o.start_error = std::strerror(errno);
    close_all();
    return o;
  }
  for (int* fd : {&out[1], &err[1], &ctl[0], &rep[1]}) ::close(std::exchange(*fd, -1));
  o.started = true;
  for (int fd : {out[0], err[0], rep[0]}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  bool out_open = true, err_open = true, err_overflow = false, asked_to_end = false;
  KeeperReport report{-1, 0};
  size_t report_got = 0;
  while (report_got < sizeof report) {
    pollfd fds[3];
    int n = 0;
    fds[n++] = {rep[0], POLLIN, 0};
    if (out_open) fds[n++] = {out[0], POLLIN, 0};
    if (err_open) fds[n++] = {err[0], POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    // Short slices: a cancellation is noticed within one.
    ::poll(fds, n, static_cast<int>(std::clamp<long long>(left, 0, 50)));
    if (out_open) out_open = drain(out[0], o.out, o.out_overflow);
    if (err_open) err_open = drain(err[0], o.err, err_overflow);
    const ssize_t r = ::read(rep[0], reinterpret_cast<char*>(&report) + report_got, sizeof report - report_got);
    if (r > 0) report_got += static_cast<size_t>(r);
    else if (r == 0) break;  // the keeper died without a word (killed with sv's group)
    if (!asked_to_end && (Clock::now() >= deadline || cancelled())) {
      (Clock::now() >= deadline ? o.timed_out : o.cancelled) = true;
      asked_to_end = true;
      ::close(std::exchange(ctl[1], -1));  // end of file: the keeper ends the session
    }
  }
  if (out_open) drain(out[0], o.out, o.out_overflow);  // what it wrote before it ended
  if (err_open) drain(err[0], o.err, err_overflow);
  while (::waitpid(keeper, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (foreground) {  // the terminal back to sv's group (SIGTTOU blocked: sv may be in the background by now)
    sigset_t ttou, old;
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    ::pthread_sigmask(SIG_BLOCK, &ttou, &old);
    ::tcsetpgrp(tty.get(), ::getpgrp());
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  close_all();
  if (report_got < sizeof report) {
    o.started = false;
    o.start_error = "the oracle's keeper ended without a report";
  } else if (report.how == kKeeperNoStart) {
    o.started = false;
    o.start_error = std::strerror(report.wait_status);
  } else {
    o.wait_status = report.wait_status;
    if (report.how == kKeeperExited) o.timed_out = o.cancelled = false;  // it answered first
  }
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
  if (cancelled()) {  // a call cancelled before its oracle started: none is started
    a.status = OracleStatus::cancelled;
    a.detail = "the call was cancelled";
    return a;
  }
  RequestDir dir;
  write_request(dir.path, q);
  const Outcome o = run_oracle(command, dir.path, std::max(0.0, q.timeout_seconds));
  const std::string err = last_line(o.err);
  auto with_err = [&](std::string s) { return err.empty() ? s : s + ": " + err; };
  if (!o.started) {
    a.status = OracleStatus::failed;
    a.detail = "the oracle cannot be started: " + o.start_error;
  } else if (o.timed_out) {
    a.status = OracleStatus::timeout;
    a.detail = fmt::format("no answer within {:g} s; the oracle's session and every process it started were ended",
                           q.timeout_seconds);
  } else if (o.cancelled) {
    a.status = OracleStatus::cancelled;
    a.detail = "the call was cancelled; the oracle's session and every process it started were ended";
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
