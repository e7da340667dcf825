// The library's one file writer: every file sv writes (scenes, exports, views, store objects
// and refs) appears whole or not at all; an output that is not a file (a device, a pipe) is
// written through. And its careful readers: a directory's own files reached without following
// a symlink anywhere on the way, and regular files only, within a size limit known before any
// byte is read.
#pragma once
#include <sys/types.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace sv {

enum class Code;

// An owned file descriptor, closed with it.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// ---- Inside a directory held open: `rel` is slash-separated, with no empty, "." or ".."
// component; nothing on the way, nor the last component, is followed if it is a symlink.

// What is at `rel`: `symlink` also when a symlink is on the way, `missing` also when a folder on
// the way is missing or is a file.
enum class EntryKind { missing, file, directory, symlink, other };  // other: FIFO, device, socket
EntryKind entry_kind(int dir, std::string_view rel);
// Opens `rel` with `flags` (O_NOFOLLOW and O_CLOEXEC added), each folder on the way opened with
// O_NOFOLLOW | O_DIRECTORY; with `make_dirs`, missing folders are created (0755). Returns -1 with
// errno set when it cannot: ELOOP when a symlink is on the way or at the end, ENOTDIR when a
// component on the way is a file or the like, EINVAL for a malformed `rel`.
int open_beneath(int dir, std::string_view rel, int flags, mode_t mode = 0, bool make_dirs = false);
// The folder `rel` itself ("" is `dir`), opened as open_beneath does; -1 with errno.
int open_dir_beneath(int dir, std::string_view rel, bool make_dirs = false);
// The entries of the folder `rel` (not "." and ".."), each with its kind, unsorted; none when
// the folder is missing or is not a folder (a symlink to one included).
std::vector<std::pair<std::string, EntryKind>> list_beneath(int dir, std::string_view rel);

// Reads an open file whole: refused with Error(code) when it is not a regular file or is larger
// than `limit` (fstat, before any byte is read; and again should it grow while being read).
// `what` names it in the messages, which never quote its content. A read error is io_error.
std::string read_regular(int fd, size_t limit, Code code, const std::string& what);
// A path the user gave (symlinks followed), opened without blocking (a FIFO with no writer) and
// then read with read_regular. A missing file is Error(not_found).
std::string read_regular_file(const std::string& path, size_t limit, Code code);

// Temporary files are named PREFIX + the target's name + a unique tail, in the target's
// directory (so a crash leaves them where a store's maintenance can find and remove them):
// never objects, refs or branches.
inline constexpr const char* kTempFilePrefix = ".tmp-";
bool is_temp_file_name(const std::string& name);

// Flushes a directory's entries (a file created or renamed in it) to disk; best effort.
void fsync_directory(const std::string& dir);

// Whether write_file_atomic flushes the directory after its rename (the new name durable when it
// returns), or leaves that to the caller: a batch writing many files into one directory flushes
// it once at the end (fsync_directory); a crash before then can lose a name, never expose a part.
enum class NameSync { now, by_caller };

// Writes `bytes` to `path` through a temporary file in the same directory, flushed to disk
// before the rename (and the directory after it), so readers see the old content or the new,
// never a part; on any failure the temporary is removed and Error(io_error) names the path.
// `mode` is the new file's permission bits (less the umask).
void write_file_atomic(const std::string& path, std::string_view bytes, mode_t mode = 0666,
                       NameSync name = NameSync::now);
// The same inside the directory `dir` (the temporary created with O_EXCL, which follows no
// symlink, and renamed over `name`, which replaces the name itself, never a link's target).
// `shown` names the file in messages.
void write_file_atomic_at(int dir, const std::string& name, std::string_view bytes, mode_t mode, NameSync sync,
                          const std::string& shown);

// Writes an output the user named. A new path or a regular file is written atomically
// (write_file_atomic; through a symlink, at its target, so the link stays a link). A device, a
// FIFO or a socket, a symlink to one, and the name of an open descriptor (/dev/stdout,
// /dev/stderr, /dev/fd/N, /proc/self/fd/N: a process substitution) are written through, as the
// shell's `>` would: `-o /dev/null` leaves the device a device. Every failure, a short write to a
// full device included, is Error(io_error) naming the path.
void write_output_file(const std::string& path, std::string_view bytes, NameSync name = NameSync::now);

// Writes files with write_file_atomic on a thread of its own, in the order they are put: a batch
// computes its next drawing while the last one's file is flushed to disk. Each flush waits
// 0.2-0.4 ms for the disk; the 144 dev drawings through three stages in batch mode on one core:
// 1.95 -> 1.87 s. Each file carries a tag of the caller's; the failures come back with their tags.
class BackgroundWriter {
 public:
  using Failure = std::pair<size_t, std::exception_ptr>;
  BackgroundWriter();
  ~BackgroundWriter();  // waits for every file put
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;
  // Queues a file; waits while kMaxPending files, or kMaxPendingBytes with this one, are queued
  // (their bytes are held in memory: a large scene waits for the queue to empty).
  void put(size_t tag, std::string path, std::string bytes, NameSync name);
  // The failures since the last call; with `wait`, after every file put is written.
  std::vector<Failure> failures(bool wait);

 private:
  struct Job {
    size_t tag;
    std::string path, bytes;
    NameSync name;
  };
  static constexpr size_t kMaxPending = 4, kMaxPendingBytes = 64 << 20;
  void work();
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> queue_;
  size_t queued_bytes_ = 0;
  bool busy_ = false, stopping_ = false;
  std::vector<Failure> failed_;
  std::thread thread_;  // last: started once the members it uses are
};

// Reads all of stdin ("-") or a file, refusing more than `limit` bytes (io_error): a regular
// file by its size before reading, a pipe or a device as its bytes come.
std::string read_input(const std::string& path, size_t limit);

}  // namespace sv
