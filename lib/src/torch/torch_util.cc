#include "torch_util.h"

#include <c10/util/Exception.h>

#include <sstream>

namespace tsctl {

Error FromTorch(const std::exception& e, ErrorKind kind) {
  std::string full;
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) {
    full = c10->what_without_backtrace();
  } else {
    full = e.what();
  }
  // The first line that says something; LibTorch appends source excerpts and
  // backtraces on the lines after it.
  std::istringstream lines(full);
  std::string line, first;
  while (std::getline(lines, line)) {
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    first = line.substr(b);
    break;
  }
  if (first.empty()) first = "unknown LibTorch error";
  if (first.size() > 400) first = first.substr(0, 400) + "...";
  return Error(kind, first, e.what());
}

torch::jit::Module LoadModule(const std::string& path) {
  try {
    return torch::jit::load(path, torch::Device(torch::kCPU));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw FromTorch(e);
  }
}

torch::jit::Method FindMethod(const torch::jit::Module& module, const std::string& name) {
  if (auto m = module.find_method(name)) return *m;
  std::string have;
  for (const auto& m : module.get_methods()) have += (have.empty() ? "" : ", ") + m.name();
  throw Error(ErrorKind::kUsage, "no method '" + name + "' (methods: " + (have.empty() ? "none" : have) + ")");
}

}  // namespace tsctl
