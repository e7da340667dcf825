#pragma once
#include <string>
#include <string_view>

namespace sv {
// Lower-case hex SHA-256 of the bytes.
std::string sha256_hex(std::string_view bytes);
}
