// ReadNumpyFile (numpy_file.h): an .npz is a ZIP archive read by tsctl's
// reader (its CRCs checked), each NAME.npy record an array.
#include "numpy_file.h"

#include <memory>

#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/source.h"

namespace tsctl {

std::vector<std::pair<std::string, std::pair<NpyArray, std::string>>> ReadNumpyFile(const std::string& path) {
  std::vector<std::pair<std::string, std::pair<NpyArray, std::string>>> out;
  if (IsNpyPath(path)) {
    const std::unique_ptr<ByteSource> src = OpenFileSource(path);
    std::string bytes = src->ReadString(0, static_cast<size_t>(src->Size()));
    NpyArray a = ParseNpy(bytes, path);
    out.emplace_back("arr_0", std::pair{a, std::move(bytes)});
    return out;
  }
  const Archive archive = Archive::OpenAny(OpenFileSource(path));
  for (const std::string& name : archive.AllRecords()) {
    if (!IsNpyPath(name)) continue;
    std::string bytes = archive.Read(name);
    NpyArray a = ParseNpy(bytes, path + ":" + name);
    out.emplace_back(name.substr(0, name.size() - 4), std::pair{a, std::move(bytes)});
  }
  if (out.empty()) throw Error(ErrorKind::kFormat, path + ": an .npz archive without arrays");
  return out;
}

}  // namespace tsctl
