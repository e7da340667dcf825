// scripts/batch: the twenty test drawings spread over two hosts through GNU parallel, each host
// a directory on this machine reached by test/batch/fake-ssh (so the drawings and results
// really travel, by parallel's rsync transfers, and no network is needed); every scene byte for
// byte the one-process pipeline's; a rerun that runs nothing; a corrupt drawing named while the
// others finish; a scene that does not come back counted as a failure.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <sys/stat.h>

#include <map>
#include <set>

#include "process.hpp"

using namespace svtest;
namespace fs = std::filesystem;

namespace {

const std::string kScripts = std::string(SV_TEST_DATA) + "/../../scripts";
const std::string kFakeSsh = std::string(SV_TEST_DATA) + "/../batch/fake-ssh";

// For sh: one word, whatever it holds.
std::string q(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Job {
  int seq;
  std::string host;
  long sent, received;
  int exitval;
};

// The joblog's jobs (Seq, Host, Starttime, JobRuntime, Send, Receive, Exitval, Signal, Command).
std::vector<Job> joblog(const fs::path& p) {
  std::vector<Job> jobs;
  std::istringstream in(slurp(p));
  std::string line;
  std::getline(in, line);
  CHECK(line.rfind("Seq\tHost\t", 0) == 0);
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::istringstream cols(line);
    for (std::string c; std::getline(cols, c, '\t');) f.push_back(c);
    REQUIRE(f.size() >= 9);
    jobs.push_back({std::stoi(f[0]), f[1], std::stol(f[4]), std::stol(f[5]), std::stoi(f[6])});
  }
  return jobs;
}

// The drawings' copies, one with a space in its name: NAME -> file name.
std::map<std::string, std::string> copy_drawings(const fs::path& dir) {
  fs::create_directories(dir);
  std::map<std::string, std::string> names;
  for (const auto& e : fs::directory_iterator(SV_TEST_DATA)) {
    if (e.path().extension() != ".png") continue;
    std::string name = e.path().stem().string();
    if (name == "hanzi_u5efe") name = "hanzi u5efe";
    fs::copy_file(e.path(), dir / (name + ".png"));
    names[name] = name + ".png";
  }
  return names;
}

long mtime_ns(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mtim.tv_sec * 1000000000L + st.st_mtim.tv_nsec;
}

}  // namespace

TEST_CASE("batch on two hosts: the one-process pipeline's scenes, a rerun that runs nothing, a bad drawing named",
          "[e2e][batch]") {
  const fs::path dir = scratch() / "batch";
  const fs::path in = dir / "the drawings";
  const auto names = copy_drawings(in);
  REQUIRE(names.size() == 20);

  // The single-process pipeline, run where the drawings are (source.path is the file name).
  std::map<std::string, std::string> expected;
  for (const auto& [name, file] : names) {
    Run r = run(fmt::format("cd {} && {} --no-store {} | {} --no-store | {} --no-store | {} --no-store", q(in.string()),
                            bin("sv-skeleton"), q(file), bin("sv-fit"), bin("sv-route"), bin("sv-simulate")));
    INFO(name << ": " << r.err);
    REQUIRE(r.status == 0);
    expected[name] = r.out;
  }

  const fs::path out = dir / "out dir";
  spit(dir / "hosts.txt", "# two stand-in hosts, one job at a time each\n1/hostA\n1/hostB\n");
  // SHELL unset, as where CI runs: parallel would run a remote job with it.
  const auto remote = [&](const std::string& env, const fs::path& to) {
    return fmt::format("cd {} && env -u SHELL {} FAKE_SSH_ROOT={} {} --quiet --ssh {} --sshloginfile hosts.txt --sv-bin {} {} ",
                       q(dir.string()), env, q((dir / "hosts").string()), q(kScripts + "/batch"), q(kFakeSsh), q(SV_BIN_DIR),
                       q(to.string()));
  };
  const std::string batch = remote("", out);
  std::string all;
  for (const auto& [name, file] : names) all += " " + q((in / file).string());

  Run r = run(batch + all);
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::map<std::string, long> mtimes;
  for (const auto& [name, file] : names) {
    INFO(name);
    const fs::path scene = out / (name + ".json");
    REQUIRE(fs::exists(scene));
    CHECK(slurp(scene) == expected[name]);
    mtimes[name] = mtime_ns(scene);
  }
  const std::vector<Job> jobs = joblog(out / "joblog");
  REQUIRE(jobs.size() == 20);
  std::set<std::string> hosts;
  for (const Job& j : jobs) {
    hosts.insert(j.host);
    CHECK(j.exitval == 0);
    CHECK(j.sent > 0);      // the drawing and the job script went to the host
    CHECK(j.received > 0);  // the scene came back
  }
  CHECK(hosts == std::set<std::string>{"hostA", "hostB"});
  // --cleanup left nothing on the hosts.
  for (const auto& e : fs::recursive_directory_iterator(dir / "hosts")) CHECK_FALSE(e.is_regular_file());

  // A rerun finds every scene newer than its drawing and runs nothing.
  Run again = run(batch + all);
  INFO(again.err);
  REQUIRE(again.status == 0);
  CHECK(joblog(out / "joblog").empty());
  for (const auto& [name, file] : names) CHECK(mtime_ns(out / (name + ".json")) == mtimes[name]);

  {
    // A truncated drawing is named on stderr and the other nineteen are done (on two local jobs).
    const std::string good = slurp(in / "tabler_hexagons_w5.png");
    spit(in / "tabler_hexagons_w5.png", good.substr(0, good.size() / 2));
    const fs::path local = dir / "local out";
    Run bad = run(fmt::format("{} -q -j 2 --sv-bin {} {} {}", q(kScripts + "/batch"), q(SV_BIN_DIR), q(local.string()), all));
    INFO(bad.err);
    CHECK(bad.status == 1);
    CHECK(bad.err.find("tabler_hexagons_w5.png: sv-skeleton: ") != std::string::npos);
    CHECK(bad.err.find("batch: 1 of 20 drawings failed: tabler_hexagons_w5.png") != std::string::npos);
    CHECK_FALSE(fs::exists(local / "tabler_hexagons_w5.json"));
    for (const auto& [name, file] : names)
      if (name != "tabler_hexagons_w5") CHECK(slurp(local / (name + ".json")) == expected[name]);
    int failed = 0;
    for (const Job& j : joblog(local / "joblog")) failed += j.exitval != 0;
    CHECK(failed == 1);
    spit(in / "tabler_hexagons_w5.png", good);
  }
  {
    // Jobs that exit 0 but whose scenes do not come back are failures, each named.
    const auto& [name, file] = *names.begin();
    Run none = run(remote("PARALLEL_SHELL=/bin/true", dir / "lost") + q((in / file).string()));
    CHECK(none.status == 1);
    CHECK(none.err.find(file + ": its scene " + name + ".json did not come back from host") != std::string::npos);
    CHECK(none.err.find("batch: 1 of 1 drawings failed") != std::string::npos);
  }
}
