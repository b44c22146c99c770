// The sample inputs of a .pt2 program (data/sample_inputs/<name>.pt): a
// torch.save archive of (args, kwargs), read with tsctl's own ZIP and pickle
// readers (nothing is imported or run): each tensor's path, dtype and shape.
#include "pt2_internal.h"
#include "tsctl/error.h"
#include "tsctl/pickle.h"
#include "storage_types.h"

namespace tsctl::pt2_internal {
namespace {

// Sample inputs are small; a bigger record is named, not read.
constexpr uint64_t kMaxSampleBytes = uint64_t{64} << 20;
constexpr int kMaxDepth = 32;
constexpr size_t kMaxTensors = 1000;

bool IsRebuiltTensor(const PyRef& v) {
  return v && v->kind == PyKind::kObject &&
         (v->IsGlobal("torch._utils", "_rebuild_tensor_v2") || v->IsGlobal("torch._utils", "_rebuild_parameter"));
}

Pt2SampleTensor ReadSampleTensor(const PyRef& v, const std::string& path) {
  Pt2SampleTensor t{path, "?", {}};
  const PyRef& call = v->IsGlobal("torch._utils", "_rebuild_parameter") && !v->items.empty() ? v->items[0] : v;
  if (!call || call->items.size() < 3) return t;
  const PyRef& pid = call->items[0];
  if (pid && pid->kind == PyKind::kPersistentId && !pid->items.empty() && pid->items[0] &&
      pid->items[0]->kind == PyKind::kTuple && pid->items[0]->items.size() >= 2 && pid->items[0]->items[1]) {
    const StorageDtype* dtype = DtypeOfStorage(pid->items[0]->items[1]->name);
    t.dtype = dtype ? dtype->name : pid->items[0]->items[1]->QualifiedName();
  }
  if (call->items[2]) {
    for (const PyRef& d : call->items[2]->items) {
      if (d && d->kind == PyKind::kInt) t.shape.push_back(d->integer);
    }
  }
  return t;
}

void WalkSamples(const PyRef& v, const std::string& path, int depth, std::vector<Pt2SampleTensor>& out) {
  if (!v || depth > kMaxDepth || out.size() >= kMaxTensors) return;
  if (IsRebuiltTensor(v)) {
    out.push_back(ReadSampleTensor(v, path));
  } else if (v->kind == PyKind::kTuple || v->kind == PyKind::kList) {
    for (size_t i = 0; i < v->items.size(); ++i) WalkSamples(v->items[i], path + "[" + std::to_string(i) + "]", depth + 1, out);
  } else if (v->kind == PyKind::kDict) {
    for (const auto& [key, value] : v->entries) {
      WalkSamples(value, path + "[" + (key && key->kind == PyKind::kString ? "'" + key->str + "'" : std::string("?")) + "]", depth + 1, out);
    }
  }
}

}  // namespace

void ReadSampleInputs(const Archive& a, Pt2Model& m) {
  const ZipEntry* e = a.Find(m.sample_inputs);
  if (!e) return;
  if (e->uncompressed_size > kMaxSampleBytes) {
    m.sample_inputs_error = "not read: over 64 MiB";
    return;
  }
  try {
    Archive saved = Archive::OpenAny(MakeMemorySource(a.Read(m.sample_inputs, kMaxSampleBytes), m.sample_inputs));
    if (!saved.Has("data.pkl")) throw Error(ErrorKind::kFormat, "not a torch.save archive (no data.pkl)");
    PyRef root = ParsePickle(saved.Read("data.pkl"));
    // torch.export saves (args, kwargs).
    if (root && root->kind == PyKind::kTuple && root->items.size() == 2) {
      WalkSamples(root->items[0], "args", 0, m.sample_tensors);
      WalkSamples(root->items[1], "kwargs", 0, m.sample_tensors);
    } else {
      WalkSamples(root, "inputs", 0, m.sample_tensors);
    }
  } catch (const Error& err) {
    m.sample_inputs_error = err.what();
  }
}

}  // namespace tsctl::pt2_internal
