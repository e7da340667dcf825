#include "core/file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"

namespace sv {

namespace fs = std::filesystem;

void fsync_directory(const std::string& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

bool is_temp_file_name(const std::string& name) { return name.rfind(kTempFilePrefix, 0) == 0; }

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

namespace {

// The components of a relative path inside a directory; false when one is empty, "." or "..".
bool split_rel(std::string_view rel, std::vector<std::string_view>& parts) {
  parts.clear();
  if (rel.empty()) return true;
  size_t start = 0;
  for (;;) {
    const size_t slash = rel.find('/', start);
    const std::string_view part = rel.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    parts.push_back(part);
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

// The folder holding the last of `parts` (all but the last opened in turn); -1 with errno.
int walk_to_parent(int dir, const std::vector<std::string_view>& parts, bool make_dirs) {
  int cur = ::fcntl(dir, F_DUPFD_CLOEXEC, 0);
  for (size_t i = 0; cur >= 0 && i + 1 < parts.size(); ++i) {
    const std::string name(parts[i]);
    int next = ::openat(cur, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT && make_dirs) {
      if (::mkdirat(cur, name.c_str(), 0755) != 0 && errno != EEXIST) {
        const int e = errno;
        ::close(cur);
        errno = e;
        return -1;
      }
      next = ::openat(cur, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    struct stat st {};
    if (next < 0 && errno == ENOTDIR && ::fstatat(cur, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
      errno = ELOOP;  // a symlink on the way, not merely a file
    const int e = errno;
    ::close(cur);
    errno = e;
    cur = next;
  }
  return cur;
}

EntryKind kind_of(mode_t m) {
  if (S_ISREG(m)) return EntryKind::file;
  if (S_ISDIR(m)) return EntryKind::directory;
  if (S_ISLNK(m)) return EntryKind::symlink;
  return EntryKind::other;
}

}  // namespace

EntryKind entry_kind(int dir, std::string_view rel) {
  std::vector<std::string_view> parts;
  if (!split_rel(rel, parts) || parts.empty()) return EntryKind::missing;
  UniqueFd parent(walk_to_parent(dir, parts, false));
  if (!parent) return errno == ELOOP ? EntryKind::symlink : EntryKind::missing;
  struct stat st {};
  if (::fstatat(parent.get(), std::string(parts.back()).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return EntryKind::missing;
  return kind_of(st.st_mode);
}

int open_beneath(int dir, std::string_view rel, int flags, mode_t mode, bool make_dirs) {
  std::vector<std::string_view> parts;
  if (!split_rel(rel, parts) || parts.empty()) {
    errno = EINVAL;
    return -1;
  }
  UniqueFd parent(walk_to_parent(dir, parts, make_dirs));
  if (!parent) return -1;
  return ::openat(parent.get(), std::string(parts.back()).c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
}

int open_dir_beneath(int dir, std::string_view rel, bool make_dirs) {
  // A new open file description, not a dup: listing it must not move the offset of `dir`.
  if (rel.empty()) return ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  std::vector<std::string_view> parts;
  if (!split_rel(rel, parts)) {
    errno = EINVAL;
    return -1;
  }
  UniqueFd parent(walk_to_parent(dir, parts, make_dirs));
  if (!parent) return -1;
  const std::string last(parts.back());
  int fd = ::openat(parent.get(), last.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && make_dirs) {
    if (::mkdirat(parent.get(), last.c_str(), 0755) != 0 && errno != EEXIST) return -1;
    fd = ::openat(parent.get(), last.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  }
  return fd;
}

std::vector<std::pair<std::string, EntryKind>> list_beneath(int dir, std::string_view rel) {
  std::vector<std::pair<std::string, EntryKind>> out;
  int fd = open_dir_beneath(dir, rel);
  if (fd < 0) return out;
  DIR* d = ::fdopendir(fd);  // owns fd from here
  if (!d) {
    ::close(fd);
    return out;
  }
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    EntryKind k = EntryKind::other;
    switch (e->d_type) {
      case DT_REG: k = EntryKind::file; break;
      case DT_DIR: k = EntryKind::directory; break;
      case DT_LNK: k = EntryKind::symlink; break;
      case DT_UNKNOWN: {  // some file systems do not say: ask, without following
        struct stat st {};
        if (::fstatat(::dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
        k = kind_of(st.st_mode);
        break;
      }
      default: break;
    }
    out.emplace_back(name, k);
  }
  ::closedir(d);
  return out;
}

std::string read_regular(int fd, size_t limit, Code code, const std::string& what) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error(Code::io_error, fmt::format("cannot read {}: {}", what, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw Error(code, fmt::format("cannot read {}: {}", what, std::strerror(EISDIR)));
  if (!S_ISREG(st.st_mode)) throw Error(code, fmt::format("{} is not a regular file", what));
  if (static_cast<unsigned long long>(st.st_size) > limit)
    throw Error(code, fmt::format("{} is larger than {} bytes ({} bytes)", what, limit, static_cast<long long>(st.st_size)));
  std::string data(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  for (;;) {
    if (got == data.size()) {  // grown since fstat? read on, within the limit
      if (data.size() > limit) throw Error(code, fmt::format("{} is larger than {} bytes", what, limit));
      data.resize(std::min(limit + 1, std::max<size_t>(data.size() * 2, 4096)));
    }
    const ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(Code::io_error, fmt::format("cannot read {}: {}", what, std::strerror(errno)));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > limit) throw Error(code, fmt::format("{} is larger than {} bytes", what, limit));
  data.resize(got);
  return data;
}

std::string read_regular_file(const std::string& path, size_t limit, Code code) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd) {
    if (errno == ENOENT) throw Error(Code::not_found, fmt::format("cannot open {}: {}", path, std::strerror(errno)));
    throw Error(Code::io_error, fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  }
  return read_regular(fd.get(), limit, code, path);
}

void write_file_atomic_at(int dir, const std::string& name, std::string_view bytes, mode_t mode, NameSync sync,
                          const std::string& shown) {
  static std::atomic<unsigned> counter{0};
  std::string tmp;
  int fd = -1;
  // O_EXCL with a name unique to this process and call; retried should a stale file hold it.
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    tmp = fmt::format("{}{}-{}-{}", kTempFilePrefix, name, ::getpid(), counter++);
    fd = ::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) throw Error(Code::io_error, fmt::format("cannot write {}: {}", shown, std::strerror(errno)));
  auto fail = [&](const char* what) {
    std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    ::unlinkat(dir, tmp.c_str(), 0);
    throw Error(Code::io_error, fmt::format("cannot {} {}: {}", what, shown, why));
  };
  for (size_t off = 0; off < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write");
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) fail("flush");
  int closed = ::close(fd);
  fd = -1;
  if (closed != 0) fail("flush");
  if (::renameat(dir, tmp.c_str(), dir, name.c_str()) != 0) fail("rename into");
  if (sync == NameSync::now) ::fsync(dir);
}

void write_file_atomic(const std::string& path, std::string_view bytes, mode_t mode, NameSync name) {
  const fs::path target(path);
  const fs::path parent = target.parent_path();
  UniqueFd dir(::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) throw Error(Code::io_error, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  write_file_atomic_at(dir.get(), target.filename().string(), bytes, mode, name, path);
}

namespace {

// The descriptor an /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N names (-1: none).
int named_descriptor(const std::string& path) {
  if (path == "/dev/stdin") return 0;
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"}) {
    const std::string p = prefix;
    if (path.size() > p.size() && path.compare(0, p.size(), p) == 0 &&
        path.find_first_not_of("0123456789", p.size()) == std::string::npos && path.size() - p.size() <= 9)
      return std::stoi(path.substr(p.size()));
  }
  return -1;
}

void write_all_to(int fd, std::string_view bytes, const std::string& path) {
  for (size_t off = 0; off < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(Code::io_error, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    if (n == 0) throw Error(Code::io_error, fmt::format("cannot write {}: nothing written", path));
    off += static_cast<size_t>(n);
  }
}

}  // namespace

void write_output_file(const std::string& path, std::string_view bytes, NameSync name) {
  // An open descriptor's name: the bytes go where the descriptor goes (a rename would replace
  // the name, and the descriptor would keep the file that was there).
  if (const int fd = named_descriptor(path); fd >= 0) {
    if (fd == 1) std::fflush(stdout);
    if (fd == 2) std::fflush(stderr);
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw Error(Code::io_error, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    write_all_to(fd, bytes, path);
    return;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) throw Error(Code::io_error, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    write_file_atomic(path, bytes, 0666, name);  // a new path (or a dangling symlink: replaced)
    return;
  }
  if (S_ISDIR(st.st_mode)) throw Error(Code::io_error, fmt::format("cannot write {}: {}", path, std::strerror(EISDIR)));
  if (!S_ISREG(st.st_mode)) {
    // A device, a FIFO or a socket (or a symlink to one): written through, never replaced. A
    // FIFO's open waits for its reader, as the shell's would.
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC));
    if (!fd) throw Error(Code::io_error, fmt::format("cannot open {}: {}", path, std::strerror(errno)));
    write_all_to(fd.get(), bytes, path);
    if (::close(fd.release()) != 0) throw Error(Code::io_error, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    return;
  }
  // A regular file: atomically; reached through a symlink, at its target, so the link stays.
  std::error_code ec;
  std::string target = path;
  if (fs::is_symlink(path, ec)) target = fs::canonical(path, ec).string();
  if (ec) throw Error(Code::io_error, fmt::format("cannot write {}: {}", path, ec.message()));
  write_file_atomic(target, bytes, 0666, name);
}

BackgroundWriter::BackgroundWriter() : thread_([this] { work(); }) {}

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void BackgroundWriter::put(size_t tag, std::string path, std::string bytes, NameSync name) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] {
    return queue_.empty() || (queue_.size() < kMaxPending && queued_bytes_ + bytes.size() <= kMaxPendingBytes);
  });
  queued_bytes_ += bytes.size();
  queue_.push_back({tag, std::move(path), std::move(bytes), name});
  changed_.notify_all();
}

std::vector<BackgroundWriter::Failure> BackgroundWriter::failures(bool wait) {
  std::unique_lock lock(mutex_);
  if (wait) changed_.wait(lock, [&] { return queue_.empty() && !busy_; });
  return std::exchange(failed_, {});
}

void BackgroundWriter::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) return;  // stopping, and every file written
    Job job = std::move(queue_.front());
    queue_.pop_front();
    queued_bytes_ -= job.bytes.size();
    busy_ = true;
    lock.unlock();
    std::exception_ptr failure;
    try {
      write_output_file(job.path, job.bytes, job.name);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    if (failure) failed_.emplace_back(job.tag, failure);
    busy_ = false;
    changed_.notify_all();
  }
}

std::string read_input(const std::string& path, size_t limit) {
  std::string data;
  const std::string shown = path == "-" ? "standard input" : path;
  FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  // The system's reason, as a shell user reads it from cat: "No such file or directory",
  // "Permission denied".
  if (!f) throw Error(Code::io_error, fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  // A regular file says its size: one too large is refused before a byte is read. A folder
  // opens, and only its read would say what it is.
  struct stat st {};
  const bool stated = ::fstat(::fileno(f), &st) == 0;
  if (stated && S_ISDIR(st.st_mode)) {
    if (f != stdin) std::fclose(f);
    throw Error(Code::io_error, fmt::format("cannot read {}: {}", shown, std::strerror(EISDIR)));
  }
  if (stated && S_ISREG(st.st_mode) && static_cast<unsigned long long>(st.st_size) > limit) {
    if (f != stdin) std::fclose(f);
    throw Error(Code::io_error, fmt::format("{}: input larger than {} bytes", shown, limit));
  }
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    data.append(buf, n);
    if (data.size() > limit) {
      if (f != stdin) std::fclose(f);
      throw Error(Code::io_error, fmt::format("{}: input larger than {} bytes", shown, limit));
    }
  }
  const int err = errno;
  bool failed = std::ferror(f);
  if (f != stdin) std::fclose(f);
  if (failed) throw Error(Code::io_error, fmt::format("cannot read {}: {}", shown, std::strerror(err)));
  return data;
}

}  // namespace sv
