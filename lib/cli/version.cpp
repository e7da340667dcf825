#include "cli/version.hpp"

#include <boost/version.hpp>
#include <CLI/Version.hpp>
#include <fmt/format.h>
#include <nlohmann/json_fwd.hpp>

#include <dlfcn.h>

#include <string>
#include <vector>

namespace sv {

extern const char kBuildCommit[];  // generated at build time (cmake/build_commit.cmake)

namespace codec {
// Defined beside the decoders (raster/codecs); weak, so that naming them here links neither
// decoder into an executable that does not read images: there they are null.
[[gnu::weak]] std::string jpeg_library_version();
[[gnu::weak]] std::string tiff_library_version();
}  // namespace codec

namespace {

// A function of a library this process has loaded, or null when none has it: looked up, never
// linked, so that sv-fit and sv-route, which load no OpenCV, do not load it to say its version.
template <class F>
F loaded(const char* symbol) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, symbol));
}

std::string dotted(long long v, int base) {  // 10905 (base 100) -> "1.9.5"
  return fmt::format("{}.{}.{}", v / base / base, v / base % base, v % base);
}

}  // namespace

std::string build_commit() { return kBuildCommit; }

std::string version_text(std::string_view program) {
  std::vector<std::string> libs;
  // OpenCV's C++ functions by their mangled names (int cv::getVersionMajor() and so on).
  if (auto major = loaded<int (*)()>("_ZN2cv15getVersionMajorEv")) {
    auto minor = loaded<int (*)()>("_ZN2cv15getVersionMinorEv");
    auto revision = loaded<int (*)()>("_ZN2cv18getVersionRevisionEv");
    libs.push_back(fmt::format("OpenCV {}.{}.{}", major(), minor ? minor() : 0, revision ? revision() : 0));
  }
  if (auto png = loaded<unsigned (*)()>("png_access_version_number")) libs.push_back("libpng " + dotted(png(), 100));
  if (codec::jpeg_library_version) libs.push_back("libjpeg-turbo " + codec::jpeg_library_version());
  if (codec::tiff_library_version)
    libs.push_back("libtiff " + codec::tiff_library_version() + " (loaded when a TIFF is read)");
  if (auto webp = loaded<int (*)()>("WebPGetDecoderVersion")) libs.push_back("libwebp " + dotted(webp(), 256));
  if (auto zlib = loaded<const char* (*)()>("zlibVersion")) libs.push_back(fmt::format("zlib {}", zlib()));
  if (auto major = loaded<int (*)()>("nettle_version_major")) {
    auto minor = loaded<int (*)()>("nettle_version_minor");
    libs.push_back(fmt::format("Nettle {}.{}", major(), minor ? minor() : 0));
  }
  if (auto mi = loaded<int (*)()>("mi_version")) libs.push_back("mimalloc " + dotted(mi(), 10));  // 209: 2.0.9

  std::string out = fmt::format("{} {} (commit {})\n", program, SV_VERSION, kBuildCommit);
  if (!libs.empty()) out += "libraries: " + fmt::format("{}", fmt::join(libs, ", ")) + "\n";
  out += fmt::format("built with: Boost {}.{}.{}, nlohmann_json {}.{}.{}, fmt {}, CLI11 {}, Eigen {}", BOOST_VERSION / 100000,
                     BOOST_VERSION / 100 % 1000, BOOST_VERSION % 100, NLOHMANN_JSON_VERSION_MAJOR,
                     NLOHMANN_JSON_VERSION_MINOR, NLOHMANN_JSON_VERSION_PATCH, dotted(FMT_VERSION, 100),
                     CLI11_VERSION, SV_EIGEN_VERSION);
  return out;
}

}  // namespace sv
