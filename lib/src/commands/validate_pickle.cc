// validate's checks on what data.pkl and constants.pkl contain: globals
// foreign to TorchScript (ts.globals) and tensors that reach past their
// storage record (ts.storage). Both read the parsed pickles; nothing is loaded.
#include <map>
#include <set>

#include "tsctl/pickle.h"
#include "../archive/storage_types.h"
#include "check_context.h"
#include "validate_internal.h"

namespace tsctl {
namespace {

// The ints of a size or stride tuple; false if it holds anything else.
bool PickledInts(const PyRef& v, std::vector<int64_t>& out) {
  if (!v || (v->kind != PyKind::kTuple && v->kind != PyKind::kList)) return false;
  for (const PyRef& i : v->items) {
    if (!i || i->kind != PyKind::kInt || !i->str.empty()) return false;
    out.push_back(i->integer);
  }
  return true;
}

// Checks one _rebuild_tensor_v2/_rebuild_qtensor call; returns a problem or "".
std::string CheckTensor(const Archive& a, const PyValue& t, const std::string& dir) {
  const auto& args = t.items;
  if (args.size() < 4 || !args[0] || args[0]->kind != PyKind::kPersistentId || args[0]->items.empty()) return {};
  const PyRef& id = args[0]->items[0];
  if (!id || id->kind != PyKind::kTuple || id->items.size() < 5) return {};
  const PyRef& cls = id->items[1];
  const PyRef& key = id->items[2];
  const PyRef& numel_ref = id->items[4];
  if (!cls || !key || key->kind != PyKind::kString || !numel_ref || numel_ref->kind != PyKind::kInt) return {};
  const StorageDtype* dtype = DtypeOfStorage(cls->name);
  if (!dtype) return {};
  const std::string& k = key->str;
  const ZipEntry* rec = a.Find(dir + k);
  if (!rec) rec = a.Find("data/" + k);
  if (!rec) rec = a.Find(k);
  if (!rec) rec = a.Find("constants/" + k + ".storage");
  if (!rec) return {};  // ts.records reports it
  const std::string where = "storage " + k;
  const int64_t numel = numel_ref->integer;
  if (numel < 0) return where + ": negative element count";
  __int128 storage_bytes = static_cast<__int128>(numel) * dtype->size;
  if (storage_bytes > static_cast<__int128>(rec->uncompressed_size)) {
    return where + ": declares " + std::to_string(numel) + " elements (" +
           std::to_string(static_cast<uint64_t>(storage_bytes)) + " bytes) but its record holds " +
           std::to_string(rec->uncompressed_size) + " bytes";
  }
  std::vector<int64_t> size, stride;
  if (!args[1] || args[1]->kind != PyKind::kInt || !PickledInts(args[2], size) || !PickledInts(args[3], stride)) {
    return where + ": tensor offset, size or stride is not a tuple of integers";
  }
  if (size.size() != stride.size()) return where + ": size and stride differ in length";
  const int64_t offset = args[1]->integer;
  if (offset < 0) return where + ": negative storage offset";
  // Elements the view touches: offset + 1 + sum((size_i - 1) * stride_i),
  // none when a dimension is 0.
  __int128 last = offset;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] < 0 || stride[i] < 0) return where + ": negative size or stride";
    if (size[i] == 0) return {};
    last += static_cast<__int128>(size[i] - 1) * stride[i];
    if (last > (static_cast<__int128>(1) << 80)) break;
  }
  if (last + 1 > numel) {
    return where + ": a tensor view reaches element " +
           (last > static_cast<__int128>(INT64_MAX) ? std::string("past 2^63") : std::to_string(static_cast<int64_t>(last))) +
           " (offset " + std::to_string(offset) + ") of a storage of " + std::to_string(numel) + " elements";
  }
  return {};
}

// The location of a tensor's storage ("cpu", "cuda:0"), or "".
std::string StorageLocation(const PyValue& t) {
  const auto& args = t.items;
  if (args.empty() || !args[0] || args[0]->kind != PyKind::kPersistentId || args[0]->items.empty()) return {};
  const PyRef& id = args[0]->items[0];
  if (!id || id->kind != PyKind::kTuple || id->items.size() < 4 || !id->items[3] || id->items[3]->kind != PyKind::kString) return {};
  return id->items[3]->str;
}

}  // namespace

void CheckTsGlobals(CheckContext& c) {
  const ArchivePickles& pickles = c.Facts<ArchivePickles>();
  if (pickles.legacy) return;
  std::vector<std::string> foreign;
  for (const ParsedPickle& p : pickles.parsed) {
    for (const std::string& g : p.facts.globals) {
      size_t dot = g.rfind('.');
      std::string module = dot == std::string::npos ? "" : g.substr(0, dot);
      std::string name = dot == std::string::npos ? g : g.substr(dot + 1);
      if (!IsTorchScriptGlobal(module, name)) foreign.push_back(p.record + ": " + g);
    }
  }
  c.Add({check::kTsGlobals, foreign.empty() ? CheckStatus::kPass : CheckStatus::kFail,
         foreign.empty() ? "the pickles name only globals torch.jit.save writes"
                         : "pickles name globals TorchScript never writes (Python's torch.load of such a file "
                           "would import and call them): " +
                               JoinSome(foreign, 5)});
}

namespace {

// Every tensor the pickles rebuild: those that reach past their storage
// (ts.storage) and how many are stored per location (ts.device).
struct RebuiltTensors {
  explicit RebuiltTensors(CheckContext& c) {
    for (const ParsedPickle& p : c.Facts<ArchivePickles>().parsed) {
      const std::string dir = p.record == "data.pkl" ? "data/" : "constants/";
      std::vector<const PyValue*> stack = {p.root.get()};
      std::set<const PyValue*> visited;
      while (!stack.empty()) {
        const PyValue* cur = stack.back();
        stack.pop_back();
        if (!cur || !visited.insert(cur).second) continue;
        if (cur->kind == PyKind::kObject &&
            (cur->IsGlobal("torch._utils", "_rebuild_tensor_v2") || cur->IsGlobal("torch._utils", "_rebuild_qtensor"))) {
          std::string problem = CheckTensor(*c.archive, *cur, dir);
          if (!problem.empty()) bad.push_back(p.record + ": " + problem);
          const std::string location = StorageLocation(*cur);
          if (!location.empty()) ++stored[location];
        }
        for (const auto& i : cur->items) stack.push_back(i.get());
        for (const auto& [k, v] : cur->entries) stack.push_back(v.get());
        if (cur->state) stack.push_back(cur->state.get());
      }
    }
  }
  std::vector<std::string> bad;
  std::map<std::string, uint64_t> stored;  // tensors per storage location
};

}  // namespace

void CheckTsStorage(CheckContext& c) {
  if (c.Facts<ArchivePickles>().legacy) return;
  const std::vector<std::string>& bad = c.Facts<RebuiltTensors>().bad;
  c.Add({check::kTsStorage, bad.empty() ? CheckStatus::kPass : CheckStatus::kFail,
         bad.empty() ? "every tensor lies inside its storage record"
                     : "tensors reach past their storage (LibTorch would read out of bounds): " + JoinSome(bad, 5)});
}

void CheckTsDevice(CheckContext& c) {
  if (c.Facts<ArchivePickles>().legacy) return;
  CheckDevices(*c.archive, c.Facts<RebuiltTensors>().stored, c.report.checks);
}

}  // namespace tsctl
