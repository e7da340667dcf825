#include "core/hash.hpp"

// Nettle, not OpenSSL: libcrypto's load and relocation cost every process about 0.7 ms before it
// hashed a byte, more than hashing a whole scene; libnettle is a fifteenth of its size.
#include <nettle/sha2.h>

namespace sv {

std::string sha256_hex(std::string_view bytes) {
  uint8_t md[SHA256_DIGEST_SIZE];
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, bytes.size(), reinterpret_cast<const uint8_t*>(bytes.data()));
  sha256_digest(&ctx, SHA256_DIGEST_SIZE, md);
  static const char* hex = "0123456789abcdef";
  std::string out(2 * SHA256_DIGEST_SIZE, '0');
  for (unsigned i = 0; i < SHA256_DIGEST_SIZE; ++i) {
    out[2 * i] = hex[md[i] >> 4];
    out[2 * i + 1] = hex[md[i] & 15];
  }
  return out;
}

}  // namespace sv
