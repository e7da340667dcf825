// The library's one file writer: every file sv writes (scenes, exports, views, store objects
// and refs) appears whole or not at all.
#pragma once
#include <sys/types.h>

#include <string>
#include <string_view>

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

// Reads all of stdin ("-") or a file, refusing more than `limit` bytes (io_error).
std::string read_input(const std::string& path, size_t limit);

}  // namespace sv
