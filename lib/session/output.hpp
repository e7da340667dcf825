// Where a session's results go: standard output or the file a user named.
#pragma once
#include <string>

#include "core/scene.hpp"

namespace sv {

// Writes text to stdout ("" or "-") or to the path the user named (write_output_file: a file
// atomically, a device or a pipe written through); any failure is io_error.
void write_output(const std::string& path, const std::string& text);
// The same for an output written once `revision` is recorded (the commit): a failure is still
// io_error, its message and details saying that the revision is recorded and HEAD is at it.
void write_after_commit(const std::string& path, const std::string& text, const std::string& revision,
                        json details = json::object());

}  // namespace sv
