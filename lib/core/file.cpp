#include "core/file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
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

void write_file_atomic(const std::string& path, std::string_view bytes, mode_t mode, NameSync name) {
  const fs::path target(path);
  const fs::path dir = target.parent_path();
  static std::atomic<unsigned> counter{0};
  std::string tmp;
  int fd = -1;
  // O_EXCL with a name unique to this process and call; retried should a stale file hold it.
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    tmp = (dir / fmt::format("{}{}-{}-{}", kTempFilePrefix, target.filename().string(), ::getpid(), counter++)).string();
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) throw Error(Code::io_error, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  auto fail = [&](const char* what) {
    std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw Error(Code::io_error, fmt::format("cannot {} {}: {}", what, path, why));
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
  if (::rename(tmp.c_str(), target.c_str()) != 0) fail("rename into");
  if (name == NameSync::now) fsync_directory(dir);
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
      write_file_atomic(job.path, job.bytes, 0666, job.name);
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
  FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) throw Error(Code::io_error, fmt::format("cannot open {}", path));
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    data.append(buf, n);
    if (data.size() > limit) {
      if (f != stdin) std::fclose(f);
      throw Error(Code::io_error, fmt::format("{}: input larger than {} bytes", path, limit));
    }
  }
  bool failed = std::ferror(f);
  if (f != stdin) std::fclose(f);
  if (failed) throw Error(Code::io_error, fmt::format("cannot read {}", path));
  return data;
}

}  // namespace sv
