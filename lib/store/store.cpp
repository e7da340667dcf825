#include "store/store.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
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

constexpr const char* kLogFile = "logs/HEAD";
constexpr size_t kMaxIdMarksBytes = 64 * 1024;

// Why a path of the store could not be opened, for a message (never its target's content).
std::string open_problem(const std::string& rel, int err) {
  // O_NOFOLLOW | O_DIRECTORY on a symlink says ENOTDIR, on the last component ELOOP: both are
  // something in the store's place that is not part of it.
  if (err == ELOOP || err == ENOTDIR)
    return fmt::format("{} (or a folder on its way) is a symlink or not a folder, not part of the store", rel);
  return fmt::format("cannot open {}: {}", rel, std::strerror(err));
}

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


StoreLock::StoreLock(const Store& store) {
  fd_ = open_beneath(store.dir_fd(), "lock", O_RDWR | O_CREAT | O_NONBLOCK | O_NOCTTY, 0644);
  if (fd_ < 0 && errno == ELOOP)
    throw Error(Code::corrupt_object, "the store's lock file is a symlink, not part of the store (remove .svrev/lock)");
  if (fd_ < 0) throw Error(Code::io_error, fmt::format("cannot open the store's lock file: {}", std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw Error(Code::corrupt_object, "the store's lock file is not a regular file (remove .svrev/lock)");
  }
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

namespace {

// Why `given` (a --store or $SV_STORE) names no store: the system's reason when the path itself
// cannot be reached, else what is missing.
std::string no_store_reason(const std::string& given) {
  struct stat st {};
  if (::stat(given.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return std::strerror(ENOTDIR);
  const fs::path p(given);
  for (const fs::path& holder : {p / ".svrev", p})
    if (::stat(holder.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && ::access(holder.c_str(), R_OK | X_OK) != 0)
      return fmt::format("{}: {}", holder.string(), std::strerror(EACCES));
  return fmt::format("no .svrev there (sv-commit init {} makes one)", given);
}

}  // namespace

std::optional<fs::path> Store::locate(const std::optional<std::string>& flag) {
  auto normalise = [](fs::path p) -> fs::path {
    if (fs::is_directory(p / ".svrev")) return p / ".svrev";
    return p;
  };
  if (flag) {
    fs::path p = normalise(*flag);
    if (!fs::is_directory(p / "objects"))
      throw Error(Code::not_found, fmt::format("no store at {}: {}", *flag, no_store_reason(*flag)));
    return p;
  }
  if (const char* env = std::getenv("SV_STORE"); env && *env) {
    fs::path p = normalise(env);
    if (!fs::is_directory(p / "objects"))
      throw Error(Code::not_found, fmt::format("no store at SV_STORE={}: {}", env, no_store_reason(env)));
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
  std::error_code ec;
  if (fs::exists(root / "HEAD", ec) || fs::is_symlink(root / "HEAD", ec)) return Store(root);  // idempotent, like git init
  fs::create_directories(root, ec);
  if (ec) throw Error(Code::io_error, fmt::format("cannot create {}: {}", root.string(), ec.message()));
  UniqueFd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) throw Error(Code::io_error, fmt::format("cannot open {}: {}", root.string(), std::strerror(errno)));
  for (const char* sub : {"objects", "refs/heads", "logs"}) {
    UniqueFd d(open_dir_beneath(fd.get(), sub, true));
    if (!d) throw Error(Code::io_error, fmt::format("cannot create {}/{}: {}", root.string(), sub, std::strerror(errno)));
  }
  // Objects and refs are read-only once written: a change is always a new file.
  write_file_atomic_at(fd.get(), "HEAD", std::string(kHeadRefPrefix) + kBranchPrefix + "main\n", 0444, NameSync::now,
                       (root / "HEAD").string());
  return Store(root);
}

Store::Store(fs::path root) : root_(std::move(root)) {
  dir_ = std::make_shared<UniqueFd>(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!*dir_ || entry_kind(dir_fd(), "HEAD") == EntryKind::missing)
    throw Error(Code::not_found, fmt::format("{} is not an sv store", root_.string()));
  switch (entry_kind(dir_fd(), "objects")) {
    case EntryKind::directory: break;
    case EntryKind::missing: throw Error(Code::not_found, fmt::format("{} is not an sv store", root_.string()));
    default: throw Error(Code::corrupt_object, fmt::format("{}/objects is not a folder of the store (a symlink?)", root_.string()));
  }
}

std::string Store::object_rel(const std::string& id) const { return "objects/" + id.substr(0, 2) + "/" + id.substr(2); }

void Store::write_in(const std::string& rel, std::string_view bytes, mode_t mode) {
  const size_t slash = rel.rfind('/');
  const std::string folder = slash == std::string::npos ? "" : rel.substr(0, slash);
  const std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
  // A new folder (a fan-out folder, a branch namespace) is made durable before a file in it
  // counts as written.
  const bool existed = folder.empty() || entry_kind(dir_fd(), folder) == EntryKind::directory;
  UniqueFd dir(open_dir_beneath(dir_fd(), folder, true));
  if (!dir) {
    const int err = errno;
    throw Error(err == ELOOP || err == ENOTDIR ? Code::corrupt_object : Code::io_error,
                fmt::format("cannot write {}: {}", rel, open_problem(folder, err)));
  }
  if (!existed) {
    const size_t up = folder.rfind('/');
    UniqueFd parent(open_dir_beneath(dir_fd(), up == std::string::npos ? "" : folder.substr(0, up)));
    if (parent) ::fsync(parent.get());
  }
  write_file_atomic_at(dir.get(), name, bytes, mode, NameSync::now, (root_ / rel).string());
}

std::string Store::put_object(std::string_view bytes) {
  std::string id = sha256_hex(bytes);
  const std::string rel = object_rel(id);
  if (entry_kind(dir_fd(), rel) == EntryKind::file) {
    // Content-addressed: never overwritten. Freshened, as git does, so gc (which spares young
    // unreachable objects) does not collect it before the writer's ref move names it; gone
    // meanwhile (gc took it), it is written again below.
    UniqueFd dir(open_dir_beneath(dir_fd(), "objects/" + id.substr(0, 2)));
    if (dir && ::utimensat(dir.get(), id.substr(2).c_str(), nullptr, AT_SYMLINK_NOFOLLOW) == 0) return id;
  }
  // New, or something else in its place (a symlink, a FIFO: damage), which the rename replaces.
  write_in(rel, bytes, 0444);
  return id;
}

std::string Store::put_blob(std::string_view bytes) { return put_object(bytes); }

std::string Store::put_scene(Scene& scene) {
  // The canonical serialization (canonical_bytes), checked before it can become an object.
  json doc = to_json(scene, false);
  require_writable_scene(scene, doc);
  // The marks first: a writer killed in between only leaves ids unused, never used unrecorded.
  raise_id_marks(doc);
  const SceneMembers members = scene_members(scene, doc);
  doc = nullptr;  // gone before the text is joined
  scene.revision.id = put_object(join_members(members));
  return scene.revision.id;
}

json Store::read_id_marks() const {
  try {
    const std::string text = read_small(kIdMarksFile, kMaxIdMarksBytes);
    if (!text.empty()) {
      json j = json::parse(text);
      if (j.is_object()) return j;
    }
  } catch (const std::exception&) {  // damaged: derived again below
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
  StoreLock lock(*this);  // read, raise, write: concurrent writers never lower the marks
  json marks = read_id_marks();
  bool raised = entry_kind(dir_fd(), kIdMarksFile) != EntryKind::file;
  for (const auto& [kind, n] : mine.items())
    if (n.get<int>() > marks.value(kind, 0)) {
      marks[kind] = n;
      raised = true;
    }
  if (raised) write_in(kIdMarksFile, marks.dump() + "\n", 0444);
}

int Store::id_mark(const std::string& kind) const {
  const json marks = read_id_marks();
  auto it = marks.find(kind);
  return it != marks.end() && it->is_number_integer() ? it->get<int>() : 0;
}

bool Store::has_object(const std::string& id) const {
  return is_hex_id(id, 64, 64) && entry_kind(dir_fd(), object_rel(id)) != EntryKind::missing;
}

namespace {

// An object's bytes, refused before they are read when they are not a regular file or exceed
// `limit`; nullopt when nothing is there.
std::optional<std::string> read_object_file(int dir, const std::string& rel, const std::string& id, size_t limit) {
  switch (entry_kind(dir, rel)) {
    case EntryKind::missing: return std::nullopt;
    case EntryKind::file: break;
    default:  // a symlink, a FIFO, a device, a folder: never opened
      throw Error(Code::corrupt_object, fmt::format("object {} is not a regular file", id.substr(0, 12)), {{"object", id}});
  }
  UniqueFd fd(open_beneath(dir, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY));
  if (!fd) {
    if (errno == ENOENT) return std::nullopt;  // removed meanwhile (gc)
    throw Error(errno == ELOOP ? Code::corrupt_object : Code::io_error,
                fmt::format("object {}: {}", id.substr(0, 12), open_problem(rel, errno)), {{"object", id}});
  }
  try {
    return read_regular(fd.get(), limit, Code::corrupt_object, "object " + id.substr(0, 12));
  } catch (const Error& e) {
    throw Error(e.code(), e.what(), {{"object", id}});
  }
}

}  // namespace

std::string Store::read_object(const std::string& id) const {
  if (!is_hex_id(id, 64, 64)) throw Error(Code::not_found, fmt::format("'{}' is not an object id", id));
  std::optional<std::string> bytes = read_object_file(dir_fd(), object_rel(id), id, kMaxObjectBytes);
  if (!bytes) throw Error(Code::not_found, fmt::format("object {} not found", id.substr(0, 12)));
  if (sha256_hex(*bytes) != id)
    throw Error(Code::corrupt_object, fmt::format("object {} does not match its name", id.substr(0, 12)),
                {{"object", id}});
  return std::move(*bytes);
}

Scene Store::read_scene(const std::string& id) const {
  if (!is_hex_id(id, 64, 64)) throw Error(Code::not_found, fmt::format("'{}' is not an object id", id));
  // No scene is larger than kMaxSceneBytes: a larger object is refused before it is read.
  std::optional<std::string> read = read_object_file(dir_fd(), object_rel(id), id, kMaxSceneBytes);
  if (!read) throw Error(Code::not_found, fmt::format("object {} not found", id.substr(0, 12)));
  std::string bytes = std::move(*read);
  if (sha256_hex(bytes) != id)
    throw Error(Code::corrupt_object, fmt::format("object {} does not match its name", id.substr(0, 12)),
                {{"object", id}});
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
  for (const auto& [fan, kind] : list("objects")) {
    if (kind != EntryKind::directory || fan.size() != 2) continue;
    for (const auto& [name, k] : list("objects/" + fan)) {
      std::string id = fan + name;
      if (is_hex_id(id, 64, 64)) ids.push_back(id);
    }
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<std::pair<std::string, EntryKind>> Store::list(const std::string& rel) const {
  return list_beneath(dir_fd(), rel);
}

std::optional<uintmax_t> Store::remove_if_older(const std::string& rel, double min_age_s) {
  const size_t slash = rel.rfind('/');
  UniqueFd dir(open_dir_beneath(dir_fd(), slash == std::string::npos ? "" : rel.substr(0, slash)));
  if (!dir) return std::nullopt;
  const std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
  auto age = [](const struct stat& st) {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    return std::chrono::duration<double>(now).count() - (st.st_mtim.tv_sec + st.st_mtim.tv_nsec * 1e-9);
  };
  struct stat st {};
  if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(st.st_mode) || age(st) < min_age_s)
    return std::nullopt;
  // Aside first, then looked at again: a writer that freshened it in between (put_object, about
  // to name it) gets it back; one that finds it gone writes it anew.
  const std::string aside = fmt::format("{}gc-{}-{}", kTempFilePrefix, name, ::getpid());
  if (::renameat(dir.get(), name.c_str(), dir.get(), aside.c_str()) != 0) return std::nullopt;
  if (::fstatat(dir.get(), aside.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && age(st) < min_age_s) {
    // Back (over a copy the writer may have written anew meanwhile: the same bytes, by its name).
    ::renameat(dir.get(), aside.c_str(), dir.get(), name.c_str());
    return std::nullopt;
  }
  if (::unlinkat(dir.get(), aside.c_str(), 0) != 0) return std::nullopt;
  return static_cast<uintmax_t>(st.st_size);
}

std::string Store::read_small(const std::string& rel, size_t limit) const {
  switch (entry_kind(dir_fd(), rel)) {
    case EntryKind::missing: return "";
    case EntryKind::file: break;
    case EntryKind::symlink:
      throw Error(Code::corrupt_object, fmt::format("{} (or a folder on its way) is a symlink, not part of the store (sv-commit fsck)", rel));
    default: throw Error(Code::corrupt_object, fmt::format("{} is not a regular file (sv-commit fsck)", rel));
  }
  UniqueFd fd(open_beneath(dir_fd(), rel, O_RDONLY | O_NONBLOCK | O_NOCTTY));
  if (!fd) {
    if (errno == ENOENT) return "";  // renamed away meanwhile: as if read a moment earlier or later
    throw Error(errno == ELOOP || errno == ENOTDIR ? Code::corrupt_object : Code::io_error, open_problem(rel, errno));
  }
  return read_regular(fd.get(), limit, Code::corrupt_object, rel);
}

std::string Store::read_ref(const std::string& ref) const {
  // A folder of branches (refs/heads/a for branch a/b) is no ref.
  if (entry_kind(dir_fd(), ref) == EntryKind::directory) return "";
  return trim(read_small(ref, kMaxRefBytes));
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

std::vector<std::pair<std::string, std::string>> Store::refs(std::vector<std::string>* damaged) const {
  std::vector<std::pair<std::string, std::string>> out;
  auto bad = [&](const std::string& why) {
    if (!damaged) throw Error(Code::corrupt_object, why + " (sv-commit fsck)");
    damaged->push_back(why);
  };
  // Depth-first over real folders only; a symlinked folder is damage, never entered.
  std::vector<std::pair<std::string, int>> todo = {{"refs", 0}};
  while (!todo.empty()) {
    auto [folder, depth] = todo.back();
    todo.pop_back();
    for (const auto& [name, kind] : list(folder)) {
      if (is_temp_file_name(name)) continue;
      const std::string rel = folder + "/" + name;
      if (kind == EntryKind::directory) {
        if (depth < 32) todo.emplace_back(rel, depth + 1);
        continue;
      }
      if (kind != EntryKind::file) {
        bad(fmt::format("{} is {}, not a ref", rel, kind == EntryKind::symlink ? "a symlink" : "not a regular file"));
        continue;
      }
      try {
        std::string value = trim(read_small(rel, kMaxRefBytes));
        if (value.empty() && entry_kind(dir_fd(), rel) == EntryKind::missing) continue;  // gone while listed
        out.emplace_back(rel, value);
      } catch (const Error& e) {
        bad(e.what());
      }
    }
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
    std::vector<std::string> hits;
    for (const auto& [name, kind] : list("objects/" + rev.substr(0, 2))) {
      std::string id = rev.substr(0, 2) + name;
      if (is_hex_id(id, 64, 64) && id.rfind(rev, 0) == 0) hits.push_back(id);
    }
    if (hits.size() == 1) return hits[0];
    if (hits.size() > 1)
      throw Error(Code::invalid_selection, fmt::format("revision prefix '{}' is ambiguous ({} matches)", rev, hits.size()));
  }
  throw Error(Code::not_found, fmt::format("unknown revision '{}'", rev), {{"revision", rev}});
}

void Store::write_ref_locked(const std::string& ref, const std::string& value) { write_in(ref, value + "\n", 0444); }

void Store::append_log_locked(const LogEntry& e) {
  // After the ref move, which is the commit: a log that cannot be appended is a warning on the
  // applied change, never its failure.
  try {
    // One line per entry: the message loses its line breaks and tabs so it cannot forge entries.
    std::string message = e.message;
    for (char& c : message)
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    std::string line = fmt::format("{} {} {} {}\t{}\n", e.old_id.empty() ? std::string(64, '0') : e.old_id,
                                   e.new_id.empty() ? std::string(64, '0') : e.new_id, e.time, e.ref, message);
    // Append-only: O_APPEND writes of one line under the lock never interleave or truncate.
    UniqueFd fd(open_beneath(dir_fd(), kLogFile, O_RDWR | O_CREAT | O_APPEND | O_NONBLOCK | O_NOCTTY, 0644, true));
    if (!fd) throw Error(Code::io_error, open_problem(kLogFile, errno));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
      throw Error(Code::corrupt_object, fmt::format("{} is not a regular file", kLogFile));
    // A writer killed mid-append may have left a torn last line; end it so this entry stands
    // on its own line (the reader skips the torn one).
    char last = '\n';
    if (st.st_size > 0 && ::pread(fd.get(), &last, 1, st.st_size - 1) == 1 && last != '\n') line.insert(line.begin(), '\n');
    ssize_t n;
    do n = ::write(fd.get(), line.data(), line.size());
    while (n < 0 && errno == EINTR);
    if (n != static_cast<ssize_t>(line.size()))
      throw Error(Code::io_error, n < 0 ? std::string(std::strerror(errno)) : "a short write");
    if (::fsync(fd.get()) != 0) throw Error(Code::io_error, std::strerror(errno));
  } catch (const Error& err) {
    warnings_.push_back(fmt::format("{} moved to {}, but the store's log could not record it: {}", e.ref,
                                    e.new_id.empty() ? "(none)" : e.new_id.substr(0, 12), err.what()));
  }
}

void Store::require_revision_locked(const std::string& id) const {
  // Checked under the lock: gc (which holds it) cannot remove the object between the check and
  // the ref move.
  if (!has_object(id)) throw Error(Code::not_found, fmt::format("object {} not found", id.substr(0, 12)));
}

void Store::advance_head(const std::string& expected, const std::string& id, const std::string& why) {
  if (!has_object(id)) throw Error(Code::not_found, fmt::format("object {} not found", id.substr(0, 12)));
  StoreLock lock(*this);
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

void Store::require_head(const std::string& read) const {
  const std::string head = head_id();
  if (head == read) return;
  auto name = [](const std::string& id) { return id.empty() ? std::string("(none)") : id.substr(0, 12); };
  throw Error(Code::conflict,
              fmt::format("HEAD is at {}, not at {}, the revision this reads: check that one out or work on HEAD",
                          name(head), name(read)),
              {{"head", head}, {"read", read}});
}

std::string Store::record(Scene& scene, const std::string& read, const std::string& why) {
  require_head(read);
  std::string id = put_scene(scene);
  advance_head(read, id, why);
  return id;
}

void Store::checkout(const std::string& rev, const std::string& why) {
  StoreLock lock(*this);
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
  size_t start = 0;
  while (true) {
    size_t slash = name.find('/', start);
    if (slash == std::string::npos) break;
    if (entry_kind(dir_fd(), kBranchPrefix + name.substr(0, slash)) == EntryKind::file)
      throw Error(Code::invalid_selection, fmt::format("branch name '{}' clashes with branch '{}'", name, name.substr(0, slash)));
    start = slash + 1;
  }
  if (entry_kind(dir_fd(), kBranchPrefix + name) == EntryKind::directory) throw Error(Code::invalid_selection, fmt::format("branch name '{}' is a folder of branches", name));
}

void Store::set_branch(const std::string& name, const std::string& id,
                       const std::optional<std::string>& expected, const std::string& why) {
  check_branch_path(name);
  if (!has_object(id)) throw Error(Code::not_found, fmt::format("object {} not found", id.substr(0, 12)));
  StoreLock lock(*this);
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
  StoreLock lock(*this);
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
  StoreLock lock(*this);
  require_revision_locked(id);
  std::string before = read_ref(kFinalRef);
  write_ref_locked(kFinalRef, id);
  append_log_locked({before, id, now_seconds(), kFinalRef, why});
}

std::optional<std::string> Store::read_cache(const std::string& name) const {
  try {
    const std::string rel = "cache/" + name;
    if (entry_kind(dir_fd(), rel) != EntryKind::file) return std::nullopt;
    UniqueFd fd(open_beneath(dir_fd(), rel, O_RDONLY | O_NONBLOCK | O_NOCTTY));
    if (!fd) return std::nullopt;
    return read_regular(fd.get(), kMaxSceneBytes, Code::corrupt_object, rel);
  } catch (const Error&) {  // only a cache
    return std::nullopt;
  }
}

void Store::write_cache(const std::string& name, std::string_view bytes) {
  try {
    write_in("cache/" + name, bytes, 0444);
  } catch (const Error&) {  // a cache that cannot be written is only a cache
  }
}

std::optional<fs::path> Store::write_view(const std::string& name, std::string_view bytes, std::string& why) {
  try {
    write_in("views/" + name, bytes, 0644);
    return root_ / "views" / name;
  } catch (const Error& e) {
    why = e.what();
    return std::nullopt;
  }
}

std::vector<LogEntry> Store::log(size_t* torn, std::string* unreadable) const {
  std::vector<LogEntry> out;
  if (torn) *torn = 0;
  std::string text;
  try {
    text = read_small(kLogFile, kMaxLogBytes);
  } catch (const Error& e) {
    if (!unreadable) throw;
    *unreadable = e.what();
    return out;
  }
  std::istringstream in(text);
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

}  // namespace sv
