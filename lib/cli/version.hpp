// What --version prints on every executable: sv's version, the commit it was built from, and the
// libraries the running process has loaded, with their versions.
#pragma once
#include <string>
#include <string_view>

namespace sv {

// The commit sv was built from, as the build found it: 12 hex digits, "-dirty" when tracked files
// differed from it, or "unknown" when not built from a git checkout.
std::string build_commit();

// "PROGRAM VERSION (commit ID)", then one line of the shared libraries this process loaded (their
// runtime versions, asked of the libraries themselves where they can say) and one of the libraries
// compiled in from headers. A library the executable does not link is not named: the query looks
// the library's version function up among the loaded ones (dlsym), so asking adds no link
// dependency and no start-up cost. libtiff, loaded when a TIFF comes, is loaded here to be asked,
// by executables that read images.
std::string version_text(std::string_view program);

}  // namespace sv
