#include "store/store.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/hash.hpp"
#include "core/scene_check.hpp"

namespace sv {

namespace {

constexpr const char* kHeadRefPrefix = "ref: ";
constexpr const char* kBranchPrefix = "refs/heads/";
constexpr const char* kFinalRef = "refs/tags/final";
constexpr const char* kIdMarksFile = "id_marks";
constexpr const char* kIdKinds[] = {"primitive", "region"};

// The id marks a scene document carries: the highest number of each kind among its ids and its
// own "id_marks". Read from the JSON, not the parsed scene, so a stored scene that no longer
// parses still counts.
json marks_of_doc(const json& doc) {
  json out = json::object();
  auto raise = [&](const char* kind, int n) {
    if (n > out.value(kind, 0)) out[kind] = n;
  };
  auto ids_in = [&](const char* section, const char* kind) {
    if (auto it = doc.find(section); it != doc.end() && it->is_array())
      for (const auto& e : *it)
        if (e.is_object() && e.contains("id") && e["id"].is_string()) raise(kind, id_number(e["id"]));
  };
  ids_in("primitives", "primitive");
  ids_in("regions", "region");
  if (auto m = doc.find("id_marks"); m != doc.end() && m->is_object())
    for (const char* kind : kIdKinds)
      if (auto k = m->find(kind); k != m->end() && k->is_number_integer()) raise(kind, k->get<int>());
  return out;
}

bool is_hex_id(const std::string& s, size_t min_len, size_t max_len) {
  if (s.size() < min_len || s.size() > max_len) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(c) && !std::isupper(c); });
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// Objects and refs are read-only once written: a change is always a new file.
void write_read_only(const fs::path& target, std::string_view bytes) { write_file_atomic(target, bytes, 0444); }

long long now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

bool is_valid_branch_name(const std::string& name) {
  // Slash-separated components (e.g. "reverted/3f2a1b9c0d12"), each of [A-Za-z0-9._-], none
  // empty, none starting with '.' or '-', no "..": a branch always names a file under
  // refs/heads/, never a path outside it, a temporary file or a lock.
  if (name.empty() || name.size() > 100 || name == "HEAD") return false;
  if (name.find("..") != std::string::npos) return false;
  size_t start = 0;
  while (true) {
    size_t slash = name.find('/', start);
    std::string part = name.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty() || part.front() == '.' || part.front() == '-') return false;
    if (part.size() >= 5 && part.compare(part.size() - 5, 5, ".lock") == 0) return false;
    if (!std::all_of(part.begin(), part.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
        }))
      return false;
    if (slash == std::string::npos) return true;
    start = slash + 1;
  }
}


StoreLock::StoreLock(const fs::path& root) {
  fd_ = ::open((root / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(Code::io_error, "cannot open the store's lock file");
  // Writers hold the lock for milliseconds; wait up to 10 s before calling it a conflict.
  for (int i = 0; i < 1000; ++i) {
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
    if (errno != EWOULDBLOCK && errno != EINTR) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::close(fd_);
  throw Error(Code::conflict, "the store is locked by another writer");
}

StoreLock::~StoreLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

std::optional<fs::path> Store::locate(const std::optional<std::string>& flag) {
  auto normalise = [](fs::path p) -> fs::path {
    if (fs::is_directory(p / ".svrev")) return p / ".svrev";
    return p;
  };
  if (flag) {
    fs::path p = normalise(*flag);
    if (!fs::is_directory(p / "objects"))
      throw Error(Code::not_found, fmt::format("no store at {}", *flag));
    return p;
  }
  if (const char* env = std::getenv("SV_STORE"); env && *env) {
    fs::path p = normalise(env);
    if (!fs::is_directory(p / "objects"))
      throw Error(Code::not_found, fmt::format("no store at SV_STORE={}", env));
    return p;
  }
  std::error_code ec;
  fs::path dir = fs::current_path(ec);
  if (ec) return std::nullopt;
  for (;;) {
    if (fs::is_directory(dir / ".svrev" / "objects")) return dir / ".svrev";
    if (dir == dir.root_path() || dir.empty()) return std::nullopt;
    dir = dir.parent_path();
  }
}

Store Store::init(const fs::path& dir) {
  fs::path root = dir.filename() == ".svrev" ? dir : dir / ".svrev";
  if (fs::exists(root / "HEAD")) return Store(root);  // idempotent, like git init
  std::error_code ec;
  fs::create_directories(root / "objects", ec);
  fs::create_directories(root / "refs" / "heads", ec);
  fs::create_directories(root / "logs", ec);
  if (ec) throw Error(Code::io_error, fmt::format("cannot create {}: {}", root.string(), ec.message()));
  write_read_only(root / "HEAD", std::string(kHeadRefPrefix) + kBranchPrefix + "main\n");
  return Store(root);
}

Store::Store(fs::path root) : root_(std::move(root)) {
  if (!fs::is_directory(root_ / "objects") || !fs::exists(root_ / "HEAD"))
    throw Error(Code::not_found, fmt::format("{} is not an sv store", root_.string()));
}

fs::path Store::object_path(const std::string& id) const {
  return root_ / "objects" / id.substr(0, 2) / id.substr(2);
}

std::string Store::put_object(std::string_view bytes) {
  std::string id = sha256_hex(bytes);
  fs::path p = object_path(id);
  if (fs::exists(p)) {
    // Content-addressed: never overwritten. Freshened, as git does, so gc (which spares young
    // unreachable objects) does not collect it before the writer's ref move names it.
    std::error_code ec;
    fs::last_write_time(p, fs::file_time_type::clock::now(), ec);
    return id;
  }
  std::error_code ec;
  // A new fan-out folder is itself made durable before an object in it counts as written.
  if (fs::create_directories(p.parent_path(), ec)) fsync_directory(p.parent_path().parent_path());
  if (ec) throw Error(Code::io_error, fmt::format("cannot create {}: {}", p.parent_path().string(), ec.message()));
  write_read_only(p, bytes);
  return id;
}

std::string Store::put_blob(std::string_view bytes) { return put_object(bytes); }

std::string Store::put_scene(Scene& scene) {
  // The canonical serialization (canonical_bytes), checked before it can become an object.
  const json doc = to_json(scene, false);
  require_writable_scene(scene, doc);
  // The marks first: a writer killed in between only leaves ids unused, never used unrecorded.
  raise_id_marks(doc);
  scene.revision.id = put_object(doc.dump());
  return scene.revision.id;
}

json Store::read_id_marks() const {
  if (fs::path p = root_ / kIdMarksFile; fs::is_regular_file(p)) {
    try {
      json j = json::parse(read_file(p));
      if (j.is_object()) return j;
    } catch (const std::exception&) {  // damaged: derived again below
    }
  }
  // A store from before the file existed: every stored scene's marks (once; put_scene writes it).
  json marks = json::object();
  for (const auto& id : object_ids()) {
    try {
      std::string bytes = read_object(id);
      if (bytes.empty() || bytes[0] != '{') continue;  // a blob
      const json theirs = marks_of_doc(json::parse(bytes));
      for (const auto& [kind, n] : theirs.items())
        if (n.get<int>() > marks.value(kind, 0)) marks[kind] = n;
    } catch (const std::exception&) {  // unreadable objects are fsck's business
    }
  }
  return marks;
}

void Store::raise_id_marks(const json& doc) {
  const json mine = marks_of_doc(doc);
  if (mine.empty()) return;
  StoreLock lock(root_);  // read, raise, write: concurrent writers never lower the marks
  json marks = read_id_marks();
  bool raised = !fs::is_regular_file(root_ / kIdMarksFile);
  for (const auto& [kind, n] : mine.items())
    if (n.get<int>() > marks.value(kind, 0)) {
      marks[kind] = n;
      raised = true;
    }
  if (raised) write_read_only(root_ / kIdMarksFile, marks.dump() + "\n");
}

int Store::id_mark(const std::string& kind) const {
  const json marks = read_id_marks();
  auto it = marks.find(kind);
  return it != marks.end() && it->is_number_integer() ? it->get<int>() : 0;
}

bool Store::has_object(const std::string& id) const {
  return is_hex_id(id, 64, 64) && fs::exists(object_path(id));
}

std::string Store::read_object(const std::string& id) const {
  if (!is_hex_id(id, 64, 64)) throw Error(Code::not_found, fmt::format("'{}' is not an object id", id));
  fs::path p = object_path(id);
  if (!fs::exists(p)) throw Error(Code::not_found, fmt::format("object {} not found", id.substr(0, 12)));
  std::string bytes = read_file(p);
  if (sha256_hex(bytes) != id)
    throw Error(Code::corrupt_object, fmt::format("object {} does not match its name", id.substr(0, 12)),
                {{"object", id}});
  return bytes;
}

Scene Store::read_scene(const std::string& id) const {
  std::string bytes = read_object(id);
  Scene s;
  try {
    s = parse_scene(bytes);
  } catch (const Error& e) {
    throw Error(Code::corrupt_object, fmt::format("object {} is not a scene: {}", id.substr(0, 12), e.what()));
  }
  s.revision.id = id;
  return s;
}

std::vector<std::string> Store::object_ids() const {
  std::vector<std::string> ids;
  for (const auto& fan : fs::directory_iterator(root_ / "objects")) {
    if (!fan.is_directory() || fan.path().filename().string().size() != 2) continue;
    for (const auto& f : fs::directory_iterator(fan.path())) {
      std::string id = fan.path().filename().string() + f.path().filename().string();
      if (is_hex_id(id, 64, 64)) ids.push_back(id);
    }
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::string Store::read_ref(const std::string& ref) const {
  fs::path p = root_ / ref;
  if (!fs::is_regular_file(p)) return "";
  return trim(read_file(p));
}

std::string Store::head_branch() const {
  std::string h = read_ref("HEAD");
  if (h.rfind(kHeadRefPrefix, 0) == 0) {
    std::string ref = h.substr(std::strlen(kHeadRefPrefix));
    if (ref.rfind(kBranchPrefix, 0) == 0) return ref.substr(std::strlen(kBranchPrefix));
  }
  return "";
}

std::string Store::head_id() const {
  std::string h = read_ref("HEAD");
  if (h.rfind(kHeadRefPrefix, 0) == 0) return branch_id(head_branch());  // a valid branch, or none
  return h;
}

std::string Store::branch_id(const std::string& name) const {
  if (!is_valid_branch_name(name)) return "";
  return read_ref(std::string(kBranchPrefix) + name);
}

std::vector<std::string> Store::branches() const {
  std::vector<std::string> out;
  for (const auto& [ref, id] : refs())
    if (ref.rfind(kBranchPrefix, 0) == 0 && is_valid_branch_name(ref.substr(std::strlen(kBranchPrefix))))
      out.push_back(ref.substr(std::strlen(kBranchPrefix)));
  return out;
}

std::vector<std::pair<std::string, std::string>> Store::refs() const {
  std::vector<std::pair<std::string, std::string>> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root_ / "refs", ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    std::string rel = fs::relative(it->path(), root_).generic_string();
    std::string name = it->path().filename().string();
    if (is_temp_file_name(name)) continue;
    out.emplace_back(rel, trim(read_file(it->path())));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Store::head_text() const { return read_ref("HEAD"); }

std::string Store::final_id() const { return read_ref(kFinalRef); }

std::string Store::resolve(const std::string& rev) const {
  if (rev == "HEAD") {
    std::string id = head_id();
    if (id.empty()) throw Error(Code::not_found, "HEAD names no revision yet (the store is empty)");
    return id;
  }
  std::string name = rev.rfind(kBranchPrefix, 0) == 0 ? rev.substr(std::strlen(kBranchPrefix)) : rev;
  if (std::string id = branch_id(name); !id.empty()) return id;
  if (rev == "final" || rev == kFinalRef) {  // the revision Commit or Done marked
    if (std::string id = read_ref(kFinalRef); !id.empty()) return id;
  }
  if (is_hex_id(rev, 64, 64) && has_object(rev)) return rev;
  if (is_hex_id(rev, 4, 63)) {
    fs::path fan = root_ / "objects" / rev.substr(0, 2);
    std::vector<std::string> hits;
    if (fs::is_directory(fan))
      for (const auto& f : fs::directory_iterator(fan)) {
        std::string id = rev.substr(0, 2) + f.path().filename().string();
        if (is_hex_id(id, 64, 64) && id.rfind(rev, 0) == 0) hits.push_back(id);
      }
    if (hits.size() == 1) return hits[0];
    if (hits.size() > 1)
      throw Error(Code::invalid_selection, fmt::format("revision prefix '{}' is ambiguous ({} matches)", rev, hits.size()));
  }
  throw Error(Code::not_found, fmt::format("unknown revision '{}'", rev), {{"revision", rev}});
}

void Store::write_ref_locked(const std::string& ref, const std::string& value) {
  fs::path p = root_ / ref;
  std::error_code ec;
  if (fs::create_directories(p.parent_path(), ec)) fsync_directory(p.parent_path().parent_path());
  if (ec) throw Error(Code::io_error, fmt::format("cannot create {}: {}", p.parent_path().string(), ec.message()));
  write_read_only(p, value + "\n");
}

void Store::append_log_locked(const LogEntry& e) {
  // One line per entry: the message loses its line breaks and tabs so it cannot forge entries.
  std::string message = e.message;
  for (char& c : message)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  std::string line = fmt::format("{} {} {} {}\t{}\n", e.old_id.empty() ? std::string(64, '0') : e.old_id,
                                 e.new_id.empty() ? std::string(64, '0') : e.new_id, e.time, e.ref, message);
  // Append-only: O_APPEND writes of one line under the lock never interleave or truncate.
  int fd = ::open((root_ / "logs" / "HEAD").c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(Code::io_error, "cannot open the store's log");
  // A writer killed mid-append may have left a torn last line; end it so this entry stands
  // on its own line (the reader skips the torn one).
  struct stat st {};
  char last = '\n';
  if (::fstat(fd, &st) == 0 && st.st_size > 0 && ::pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n')
    line.insert(line.begin(), '\n');
  ssize_t n = ::write(fd, line.data(), line.size());
  ::fsync(fd);
  ::close(fd);
  if (n != static_cast<ssize_t>(line.size())) throw Error(Code::io_error, "cannot append to the store's log");
}

void Store::require_revision_locked(const std::string& id) const {
  // Checked under the lock: gc (which holds it) cannot remove the object between the check and
  // the ref move.
  if (!has_object(id)) throw Error(Code::not_found, fmt::format("object {} not found", id.substr(0, 12)));
}

void Store::advance_head(const std::string& expected, const std::string& id, const std::string& why) {
  if (!has_object(id)) throw Error(Code::not_found, fmt::format("object {} not found", id.substr(0, 12)));
  StoreLock lock(root_);
  require_revision_locked(id);
  std::string current = head_id();
  if (current != expected)
    throw Error(Code::conflict,
                fmt::format("HEAD moved from {} to {} while this tool ran", expected.empty() ? "(none)" : expected.substr(0, 12),
                            current.empty() ? "(none)" : current.substr(0, 12)),
                {{"expected", expected}, {"current", current}});
  std::string branch = head_branch();
  std::string ref = branch.empty() ? "HEAD" : std::string(kBranchPrefix) + branch;
  write_ref_locked(ref, id);
  append_log_locked({current, id, now_seconds(), ref, why});
}

void Store::checkout(const std::string& rev, const std::string& why) {
  StoreLock lock(root_);
  std::string before = head_id();
  std::string name = rev.rfind(kBranchPrefix, 0) == 0 ? rev.substr(std::strlen(kBranchPrefix)) : rev;
  if (!branch_id(name).empty()) {
    write_ref_locked("HEAD", std::string(kHeadRefPrefix) + kBranchPrefix + name);
  } else {
    std::string id = resolve(rev);
    read_scene(id);  // only a valid scene can be checked out
    write_ref_locked("HEAD", id);
  }
  append_log_locked({before, head_id(), now_seconds(), "HEAD", why});
}

void Store::check_branch_path(const std::string& name) const {
  if (!is_valid_branch_name(name)) throw Error(Code::invalid_selection, fmt::format("invalid branch name '{}'", name));
  // "a" and "a/b" cannot both be branches (one would be a file, the other a directory).
  fs::path p = root_ / kBranchPrefix;
  size_t start = 0;
  while (true) {
    size_t slash = name.find('/', start);
    p /= name.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (slash == std::string::npos) break;
    if (fs::is_regular_file(p))
      throw Error(Code::invalid_selection, fmt::format("branch name '{}' clashes with branch '{}'", name, name.substr(0, slash)));
    start = slash + 1;
  }
  if (fs::is_directory(p)) throw Error(Code::invalid_selection, fmt::format("branch name '{}' is a folder of branches", name));
}

void Store::set_branch(const std::string& name, const std::string& id,
                       const std::optional<std::string>& expected, const std::string& why) {
  check_branch_path(name);
  if (!has_object(id)) throw Error(Code::not_found, fmt::format("object {} not found", id.substr(0, 12)));
  StoreLock lock(root_);
  require_revision_locked(id);
  std::string current = branch_id(name);
  if (expected && current != *expected)
    throw Error(Code::conflict,
                expected->empty() ? fmt::format("branch {} already exists", name) : fmt::format("branch {} moved while this tool ran", name),
                {{"branch", name}});
  std::string ref = std::string(kBranchPrefix) + name;
  write_ref_locked(ref, id);
  append_log_locked({current, id, now_seconds(), ref, why});
}

std::string Store::reset_head(const std::string& expected, const std::string& id, const std::string& backup,
                              const std::string& why) {
  if (!backup.empty()) check_branch_path(backup);
  StoreLock lock(root_);
  require_revision_locked(id);
  std::string current = head_id();
  if (current != expected)
    throw Error(Code::conflict, "HEAD moved while this tool ran", {{"expected", expected}, {"current", current}});
  std::string kept;
  if (!backup.empty() && !current.empty() && current != id) {
    // The first free name of backup, backup-2, backup-3… (or one already holding `current`).
    for (int k = 1; kept.empty(); ++k) {
      std::string name = k == 1 ? backup : fmt::format("{}-{}", backup, k);
      check_branch_path(name);
      std::string there = branch_id(name);
      if (there == current) kept = name;
      else if (there.empty()) {
        write_ref_locked(std::string(kBranchPrefix) + name, current);
        append_log_locked({"", current, now_seconds(), std::string(kBranchPrefix) + name, "backup before: " + why});
        kept = name;
      }
    }
  }
  std::string branch = head_branch();
  std::string ref = branch.empty() ? "HEAD" : std::string(kBranchPrefix) + branch;
  write_ref_locked(ref, id);
  append_log_locked({current, id, now_seconds(), ref, why});
  return kept;
}

void Store::mark_final(const std::string& id, const std::string& why) {
  StoreLock lock(root_);
  require_revision_locked(id);
  std::string before = read_ref(kFinalRef);
  write_ref_locked(kFinalRef, id);
  append_log_locked({before, id, now_seconds(), kFinalRef, why});
}

std::optional<std::string> Store::read_cache(const std::string& name) const {
  fs::path p = root_ / "cache" / name;
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Store::write_cache(const std::string& name, std::string_view bytes) {
  fs::path p = root_ / "cache" / name;
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec) return;  // a cache that cannot be written is only a cache
  try {
    write_read_only(p, bytes);
  } catch (const Error&) {
  }
}

std::vector<LogEntry> Store::log(size_t* torn) const {
  std::vector<LogEntry> out;
  if (torn) *torn = 0;
  fs::path p = root_ / "logs" / "HEAD";
  if (!fs::exists(p)) return out;
  std::istringstream in(read_file(p));
  std::string line;
  const std::string zero(64, '0');
  while (std::getline(in, line)) {
    LogEntry e;
    auto tab = line.find('\t');
    std::istringstream head(line.substr(0, tab));
    if (!(head >> e.old_id >> e.new_id >> e.time >> e.ref) || !is_object_id(e.old_id) || !is_object_id(e.new_id)) {
      if (torn) ++*torn;
      continue;
    }
    if (e.old_id == zero) e.old_id.clear();
    if (e.new_id == zero) e.new_id.clear();
    e.message = tab == std::string::npos ? "" : line.substr(tab + 1);
    out.push_back(std::move(e));
  }
  return out;
}

bool is_object_id(const std::string& s) { return is_hex_id(s, 64, 64); }

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error(Code::io_error, "cannot read " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace sv
