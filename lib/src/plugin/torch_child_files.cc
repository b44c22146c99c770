// Temporary files a LibTorch child's answer is put in (TempFile) and
// --data-loader-script (RunDataLoader): requests of the one door
// (torch_child.h).
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "plugin_abi.h"
#include "torch_child.h"
#include "tsctl/atomic_file.h"
#include "tsctl/error.h"
#include "tsctl/source.h"
#include "tsctl/text_util.h"

namespace tsctl {

TempFile::TempFile(const std::string& suffix) {
  std::string name = "/tmp/tsctl-child-XXXXXX" + suffix;
  std::vector<char> tmpl(name.begin(), name.end());
  tmpl.push_back('\0');
  int fd = ::mkstemps(tmpl.data(), static_cast<int>(suffix.size()));
  if (fd < 0) throw Error(ErrorKind::kIo, "cannot create a temporary file in /tmp");
  ::close(fd);
  path = tmpl.data();
}

TempFile::~TempFile() { ::unlink(path.c_str()); }

std::string TempFile::Read() const {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::unique_ptr<TempFile> RunDataLoader(const std::string& spec, double timeout_seconds) {
  // FILE.py:NAME, or FILE.py alone (NAME load_data, as Polygraphy has it); a
  // colon that is not followed by a name is part of the file's name.
  std::string file = spec, name = "load_data";
  const size_t colon = spec.rfind(':');
  if (colon != std::string::npos && IsIdentifier(spec.substr(colon + 1))) {
    file = spec.substr(0, colon);
    name = spec.substr(colon + 1);
  }
  if (file.empty()) throw Error(ErrorKind::kUsage, "--data-loader-script wants FILE.py[:FUNC], got '" + spec + "'");
  // Python would wait on a pipe or device for ever: a script is a file.
  if (IsStream(file)) throw Error(ErrorKind::kUsage, "--data-loader-script: " + file + " is a pipe or device, not a Python file");
  if (!PythonPluginBuilt()) {
    throw Error(ErrorKind::kUnavailable, "--data-loader-script runs Python: this tsctl was built without Python support");
  }
  ChildLimits limits;
  limits.timeout_seconds = timeout_seconds;
  std::string answer = RunTorchChild(DataLoaderRequest{.file = file, .name = name}, limits)
                           .Take<std::string>("running the data loader " + file + ":" + name);
  const size_t nl = answer.find('\n');
  if (nl == std::string::npos || (answer.compare(0, nl, ".pt") != 0 && answer.compare(0, nl, ".npz") != 0)) {
    throw Error(ErrorKind::kIo, "the data loader's child answered in an unknown format");
  }
  auto out = std::make_unique<TempFile>(answer.substr(0, nl));
  WriteFileAtomically(out->path, answer.substr(nl + 1));
  return out;
}

}  // namespace tsctl
