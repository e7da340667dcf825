// The store's readers over any store on disk. The input is cut at each "\n--\n" into the files
// of a store: HEAD, refs/heads/main, logs/HEAD, an object stored under its own SHA-256 name, an
// object under a name the input gives (its first line), refs/tags/final and id_marks; the first
// byte's bits plant a symlink, a FIFO or a folder in the place of some of them. Every reader
// must then answer or refuse with sv::Error (never another exception, a crash or a hang: a FIFO
// read would block), fsck and the lenient readers (refs, log with their out-parameters) never
// throw, an object written under its name reads back as its bytes, and a store fsck calls clean
// has a HEAD that reads as a scene (when it names one).
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "fuzz_check.hpp"
#include "store/maintenance.hpp"
#include "store/store.hpp"

using svfuzz::broken;
namespace fs = std::filesystem;

namespace {

// In memory where the machine offers it (/dev/shm): each input is a store made and read afresh,
// 20 times faster there than on a disk's file system.
const fs::path& root() {
  static const fs::path r = [] {
    std::error_code ec;
    const fs::path base = fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0 ? fs::path("/dev/shm")
                                                                                            : fs::temp_directory_path();
    return base / ("sv-fuzz-store-" + std::to_string(::getpid())) / ".svrev";
  }();
  static const struct Cleanup {
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(r.parent_path(), ec);
    }
  } cleanup;
  return r;
}

void put(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << bytes;
}

// A symlink, a FIFO or a folder where a file of the store should be (kind 1, 2, 3).
void plant(const fs::path& p, int kind) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  fs::remove_all(p, ec);
  if (kind == 1) fs::create_symlink("/dev/zero", p, ec);
  if (kind == 2) ::mkfifo(p.c_str(), 0644);
  if (kind == 3) fs::create_directories(p, ec);
}

template <class F>
void refused_only(const char* what, F&& f) {
  try {
    f();
  } catch (const sv::Error&) {
  } catch (const std::exception& e) {
    broken(std::string(what) + " threw something other than sv::Error: " + e.what());
  }
}

template <class F>
void never_throws(const char* what, F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    broken(std::string(what) + " threw: " + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t cut = text.find("\n--\n", start);
    parts.push_back(text.substr(start, cut == std::string::npos ? std::string::npos : cut - start));
    if (cut == std::string::npos || parts.size() == 7) break;
    start = cut + 4;
  }
  parts.resize(7);
  std::error_code ec;
  fs::remove_all(root(), ec);
  fs::create_directories(root() / "objects", ec);
  fs::create_directories(root() / "refs" / "heads", ec);
  put(root() / "HEAD", parts[0]);
  put(root() / "refs" / "heads" / "main", parts[1]);
  put(root() / "logs" / "HEAD", parts[2]);
  const std::string id = sv::sha256_hex(parts[3]);
  put(root() / "objects" / id.substr(0, 2) / id.substr(2), parts[3]);
  const std::string named = parts[4].substr(0, parts[4].find('\n'));
  if (sv::is_object_id(named)) put(root() / "objects" / named.substr(0, 2) / named.substr(2), parts[4]);
  if (!parts[5].empty()) put(root() / "refs" / "tags" / "final", parts[5]);
  if (!parts[6].empty()) put(root() / "id_marks", parts[6]);
  const int kind = 1 + (flags >> 6) % 3;
  if (flags & 1) plant(root() / "HEAD", kind);
  if (flags & 2) plant(root() / "refs" / "heads" / "main", kind);
  if (flags & 4) plant(root() / "logs" / "HEAD", kind);
  // The object named by the input, or one named after it: never a path a NUL or a slash in the
  // input would cut short or lead elsewhere (a harness that removed the stored object).
  const std::string planted = sv::is_object_id(named) ? named : sv::sha256_hex(named);
  if (flags & 8) plant(root() / "objects" / planted.substr(0, 2) / planted.substr(2), kind);
  if (flags & 16) plant(root() / "refs" / "heads" / "other", kind);

  std::optional<sv::Store> st;
  refused_only("opening the store", [&] { st.emplace(root()); });
  if (!st) return 0;
  refused_only("head_id", [&] { st->head_id(); });
  refused_only("head_branch", [&] { st->head_branch(); });
  refused_only("branches", [&] { st->branches(); });
  refused_only("resolve HEAD", [&] { st->resolve("HEAD"); });
  refused_only("resolve final", [&] { st->resolve("final"); });
  refused_only("resolve a prefix", [&] { st->resolve(id.substr(0, 6)); });
  refused_only("resolve a name", [&] { st->resolve(named.substr(0, 100)); });
  refused_only("read_scene", [&] { st->read_scene(id); });
  refused_only("id_mark", [&] { st->id_mark("primitive"); });
  refused_only("reachable_objects", [&] { sv::reachable_objects(*st); });
  never_throws("refs with damage reported", [&] {
    std::vector<std::string> damaged;
    st->refs(&damaged);
  });
  never_throws("log with damage reported", [&] {
    size_t torn = 0;
    std::string why;
    st->log(&torn, &why);
  });
  // An object written under its own name, and not replaced (by a plant, or by the object the input
  // names), reads back as its bytes.
  if (named != id && !((flags & 8) && planted == id)) {
    try {
      if (st->read_object(id) != parts[3]) broken("an object read back differs from its bytes");
    } catch (const sv::Error& e) {
      broken(std::string("an object stored under its name is refused: ") + e.what());
    }
  }
  sv::FsckReport report;
  never_throws("fsck", [&] { report = sv::fsck(*st); });
  if (report.clean()) {
    std::string head;
    refused_only("head_id", [&] { head = st->head_id(); });
    if (!head.empty()) {
      try {
        st->read_scene(head);
      } catch (const sv::Error& e) {
        broken(std::string("fsck says clean, but HEAD's revision is refused: ") + e.what());
      }
    }
  }
  return 0;
}
