// Running the executables from tests: shell command in, exit status and both streams out.
#pragma once
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace svtest {

// Built under AddressSanitizer (scripts/sanitize; test/CMakeLists.txt defines SV_TEST_SANITIZED,
// the tests' own code being uninstrumented): code runs several times slower there, so the
// longest randomized loops run fewer rounds; the tests they check are the same.
#if defined(SV_TEST_SANITIZED)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

struct Run {
  int status = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void spit(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// A fresh scratch directory per test binary run.
inline std::filesystem::path scratch() {
  static std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("sv-e2e-" + std::to_string(::getpid()));
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string bin(const std::string& name) { return std::string(SV_BIN_DIR) + "/" + name; }
inline std::string data(const std::string& name) { return std::string(SV_TEST_DATA) + "/" + name; }

// Runs `cmd` with /bin/sh; stdout and stderr are captured through files.
inline Run run(const std::string& cmd) {
  static int counter = 0;
  auto base = scratch() / ("run" + std::to_string(counter++));
  std::string full = "(" + cmd + ") >" + base.string() + ".out 2>" + base.string() + ".err";
  int raw = std::system(full.c_str());
  Run r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128;
  r.out = slurp(base.string() + ".out");
  r.err = slurp(base.string() + ".err");
  return r;
}

// Runs `cmd` with /bin/sh, its standard output a terminal (a pseudo-terminal whose bytes become
// `out`), its standard error captured through a file.
inline Run run_on_terminal(const std::string& cmd) {
  const std::string err = (scratch() / ("pty" + std::to_string(::getpid()) + ".err")).string();
  int master = -1, slave = -1;
  REQUIRE(::openpty(&master, &slave, nullptr, nullptr, nullptr) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(slave, STDOUT_FILENO);
    ::close(master);
    ::close(slave);
    ::execl("/bin/sh", "sh", "-c", (cmd + " 2>" + err).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(slave);
  Run r;
  char buf[4096];
  for (;;) {  // until the child's side closes (EIO on Linux)
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n > 0) r.out.append(buf, static_cast<size_t>(n));
    else if (n < 0 && errno == EINTR) continue;
    else break;
  }
  ::close(master);
  int raw = 0;
  ::waitpid(pid, &raw, 0);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128;
  r.err = slurp(err);
  return r;
}

// A store (made once per test binary under `name`) whose HEAD is the whole pipeline's result on a
// test drawing: sv-skeleton | sv-fit | sv-route | sv-simulate, each recording its revision.
inline std::filesystem::path pipeline_store(const std::string& name, const std::string& drawing) {
  const std::filesystem::path d = scratch() / name;
  if (std::filesystem::exists(d / ".svrev")) return d;
  std::filesystem::create_directories(d);
  const std::string cd = "cd " + d.string() + " && ";
  REQUIRE(run(cd + bin("sv-commit") + " init").status == 0);
  Run p = run(cd + bin("sv-skeleton") + " " + data(drawing) + " | " + bin("sv-fit") + " | " + bin("sv-route") + " | " +
              bin("sv-simulate") + " >/dev/null");
  INFO(p.err);
  REQUIRE(p.status == 0);
  return d;
}

// A child process started without waiting: fork, then exec `argv` in `cwd` with stdout and
// stderr going to files. With a gate (see Gate), the child blocks until the gate opens, so
// several children can be released at the same instant.
struct Child {
  pid_t pid = -1;
  std::filesystem::path out, err;
};

// A pipe whose read end the children wait on; open() closes the write end and every waiting
// child proceeds (read returns end of file).
struct Gate {
  int fds[2] = {-1, -1};
  Gate() {
    if (::pipe2(fds, O_CLOEXEC) != 0) fds[0] = fds[1] = -1;
  }
  void open() {
    if (fds[1] >= 0) ::close(fds[1]);
    fds[1] = -1;
  }
  ~Gate() {
    open();
    if (fds[0] >= 0) ::close(fds[0]);
  }
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
};

inline Child spawn(const std::vector<std::string>& argv, const std::filesystem::path& cwd, Gate* gate = nullptr) {
  static int counter = 0;
  Child c;
  auto base = scratch() / ("spawn" + std::to_string(counter++));
  c.out = base.string() + ".out";
  c.err = base.string() + ".err";
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(nullptr);
  c.pid = ::fork();
  if (c.pid == 0) {
    if (gate) {
      ::close(gate->fds[1]);
      char b;
      while (::read(gate->fds[0], &b, 1) < 0 && errno == EINTR) {
      }
    }
    int o = ::open(c.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = ::open(c.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0 || ::chdir(cwd.c_str()) != 0) ::_exit(127);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return c;
}

// A child whose standard input and output are pipes to the test (stderr goes to the file `err`).
struct PipedChild : Child {
  int to_child = -1, from_child = -1;
};

inline PipedChild spawn_piped(const std::vector<std::string>& argv, const std::filesystem::path& cwd) {
  static int counter = 0;
  PipedChild c;
  c.err = scratch() / ("piped" + std::to_string(counter++) + ".err");
  int to[2], from[2];
  if (::pipe2(to, O_CLOEXEC) != 0 || ::pipe2(from, O_CLOEXEC) != 0) return c;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(nullptr);
  c.pid = ::fork();
  if (c.pid == 0) {
    int e = ::open(c.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (e < 0 || ::chdir(cwd.c_str()) != 0) ::_exit(127);
    ::dup2(to[0], 0);
    ::dup2(from[1], 1);
    ::dup2(e, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(to[0]);
  ::close(from[1]);
  c.to_child = to[1];
  c.from_child = from[0];
  return c;
}

// Waits for the child; its exit status, or 128 + the signal that ended it.
inline int wait_child(const Child& c) {
  int raw = 0;
  while (::waitpid(c.pid, &raw, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : WIFSIGNALED(raw) ? 128 + WTERMSIG(raw) : -1;
}

// SIGKILL, then reap; returns what wait_child returns (the child may have finished first).
inline int kill_child(const Child& c) {
  ::kill(c.pid, SIGKILL);
  return wait_child(c);
}

inline int count_lines(std::string_view s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// Each complete line of `text` (sv-mcp's replies, one JSON message a line) parsed; an unfinished
// last line is left out.
inline std::vector<nlohmann::json> json_lines(std::string_view text) {
  std::vector<nlohmann::json> out;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string_view::npos; start = nl + 1)
    out.push_back(nlohmann::json::parse(text.substr(start, nl - start)));
  return out;
}

}  // namespace svtest
