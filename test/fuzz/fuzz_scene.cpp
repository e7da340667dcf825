// parse_scene over any bytes: it either refuses with sv::Error or gives a scene whose
// canonical bytes parse again to the same canonical bytes (and so the same revision id);
// dump_scene's text, which adds revision.id, parses to the same scene too.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/scene.hpp"
#include "fuzz_check.hpp"

using svfuzz::broken;

namespace {

sv::Scene reparse(const std::string& text, const char* what) {
  try {
    return sv::parse_scene(text);
  } catch (const sv::Error& e) {
    broken(std::string(what) + " of an accepted scene is refused: " + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  sv::Scene scene;
  try {
    scene = sv::parse_scene(text);
  } catch (const sv::Error&) {
    return 0;  // refused, as the contract allows
  }
  const std::string canonical = sv::canonical_bytes(scene);
  if (sv::canonical_bytes(reparse(canonical, "the canonical bytes")) != canonical)
    broken("parse -> canonical -> parse -> canonical changes the bytes");
  if (sv::canonical_bytes(reparse(sv::dump_scene(scene), "dump_scene's text")) != canonical)
    broken("dump_scene's text parses to a different scene");
  return 0;
}
