// The library's one file writer: every file sv writes (scenes, exports, views, store objects
// and refs) appears whole or not at all.
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

// Reads all of stdin ("-") or a file, refusing more than `limit` bytes (io_error).
std::string read_input(const std::string& path, size_t limit);

}  // namespace sv
