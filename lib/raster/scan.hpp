// Scanning a mostly empty 8-bit image (a skeleton, an ink mask) for its set pixels.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sv {

// The first nonzero byte of p[i, end), or end: eight bytes at a time across the empty stretches,
// where a byte at a time costs a skeleton's scan most of its instructions.
inline size_t next_set(const unsigned char* p, size_t i, size_t end) {
  for (uint64_t word; i + 8 <= end; i += 8) {
    std::memcpy(&word, p + i, 8);
    if (word) break;
  }
  while (i < end && !p[i]) ++i;
  return i;
}

}  // namespace sv
