#include "core/hash.hpp"

// SHA256_Init/Update/Final hash directly. OpenSSL 3 deprecates them for EVP, whose first digest
// in a process fetches the algorithm from its providers: more work than hashing a whole scene,
// paid by every stage that writes one.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include "core/error.hpp"

namespace sv {

std::string sha256_hex(std::string_view bytes) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  const unsigned len = SHA256_DIGEST_LENGTH;
  SHA256_CTX ctx;
  if (SHA256_Init(&ctx) != 1 || SHA256_Update(&ctx, bytes.data(), bytes.size()) != 1 || SHA256_Final(md, &ctx) != 1)
    throw Error(Code::internal, "SHA-256 failed");
  static const char* hex = "0123456789abcdef";
  std::string out(2 * len, '0');
  for (unsigned i = 0; i < len; ++i) {
    out[2 * i] = hex[md[i] >> 4];
    out[2 * i + 1] = hex[md[i] & 15];
  }
  return out;
}

}  // namespace sv
