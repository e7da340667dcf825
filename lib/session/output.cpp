#include "session/output.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"
#include "core/file.hpp"

namespace sv {

void write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (std::fflush(stdout) != 0 || std::ferror(stdout))
      throw Error(Code::io_error, fmt::format("cannot write to standard output: {}", std::strerror(errno)));
    return;
  }
  write_output_file(path, text);
}

void write_after_commit(const std::string& path, const std::string& text, const std::string& revision, json details) {
  try {
    write_output(path, text);
  } catch (const Error& e) {
    details["revision_id"] = revision;
    throw Error(e.code(), fmt::format("{} (the revision {} is recorded and HEAD is at it)", e.what(), revision.substr(0, 12)),
                details);
  }
}

}  // namespace sv
