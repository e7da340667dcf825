// What a fuzz target does when the library breaks a promise: one line naming it, then abort,
// which libFuzzer reports as a crash and saves the input for.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>

namespace svfuzz {

[[noreturn]] inline void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz: %s\n", what.c_str());
  std::abort();
}

}  // namespace svfuzz
