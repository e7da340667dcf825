#include "core/file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
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

void write_file_atomic(const std::string& path, std::string_view bytes, mode_t mode) {
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
  fsync_directory(dir);
}

}  // namespace sv
