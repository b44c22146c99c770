// TorchScript's policy on pickles (declared in tsctl/pickle.h beside the
// reader it judges): the globals torch.jit.save writes into data.pkl and constants.pkl
// (torch/csrc/jit/serialization/pickler.cpp), checked against the archives in
// testdata/ and ../shared/corpus: everything else is foreign to TorchScript.
#include <array>
#include <string>

#include "tsctl/pickle.h"
#include "storage_types.h"

namespace tsctl {

bool IsTorchScriptGlobal(std::string_view module, std::string_view name) {
  // Classes of scripted modules and TorchScript classes: the C++ unpickler
  // resolves them against the archive's own code/.
  if (module == "__torch__" || module.rfind("__torch__.", 0) == 0) return !name.empty();
  if (module == "collections") return name == "OrderedDict";
  if (module == "torch._utils") {
    static constexpr std::array<std::string_view, 5> kRebuild = {
        "_rebuild_tensor_v2", "_rebuild_tensor", "_rebuild_qtensor", "_rebuild_parameter", "_rebuild_sparse_tensor"};
    for (std::string_view r : kRebuild) {
      if (name == r) return true;
    }
    return false;
  }
  if (module == "torch.jit._pickle") {
    static constexpr std::array<std::string_view, 7> kHelpers = {
        "restore_type_tag", "build_intlist",     "build_tensorlist",    "build_doublelist",
        "build_boollist",   "build_genericlist", "build_tensor_from_id"};
    for (std::string_view h : kHelpers) {
      if (name == h) return true;
    }
    return false;
  }
  if (module == "torch") {
    static constexpr std::array<std::string_view, 7> kPlain = {
        "device",          "per_tensor_affine",    "per_channel_affine",
        "per_tensor_symmetric", "per_channel_symmetric", "per_channel_affine_float_qparams",
        "UntypedStorage"};
    for (std::string_view p : kPlain) {
      if (name == p) return true;
    }
    return DtypeOfStorage(std::string(name)) != nullptr;  // torch.FloatStorage, ...
  }
  return false;
}

}  // namespace tsctl
