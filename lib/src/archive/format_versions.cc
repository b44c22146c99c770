#include "format_versions.h"

#include <cstdlib>
#include <vector>

namespace tsctl {
namespace {

struct Row {
  int major, minor;
  int64_t min, max;
};

// caffe2/serialize/versions.h's kMinSupportedFileFormatVersion and
// kMaxSupportedFileFormatVersion, as read in the headers of the releases tsctl
// builds against: Debian's libtorch-dev 1.13.1 and PyPI's torch 2.15.0 wheel.
// Oldest first; add a row with each new pin.
const std::vector<Row> kRows = {
    {1, 13, 1, 10},
    {2, 15, 1, 10},
};

// "2.15.0+cu130" -> {2, 15}; {-1, -1} when it does not start with a number.
std::pair<int, int> MajorMinor(const std::string& v) {
  char* end = nullptr;
  long major = std::strtol(v.c_str(), &end, 10);
  if (end == v.c_str() || *end != '.') return {-1, -1};
  long minor = std::strtol(end + 1, nullptr, 10);
  return {static_cast<int>(major), static_cast<int>(minor)};
}

}  // namespace

FormatVersionRange TableFormatVersions(const std::string& libtorch_version) {
  const Row* row = &kRows.back();
  auto [major, minor] = MajorMinor(libtorch_version);
  if (major >= 0) {
    row = &kRows.front();
    for (const Row& r : kRows) {
      if (r.major < major || (r.major == major && r.minor <= minor)) row = &r;
    }
  }
  FormatVersionRange range;
  range.min = row->min;
  range.max = row->max;
  range.libtorch = std::to_string(row->major) + "." + std::to_string(row->minor);
  return range;
}

}  // namespace tsctl
