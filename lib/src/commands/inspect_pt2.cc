// inspect of a .pt2 archive: the .pt2 reader's facts (tsctl/pt2.h), and from
// them the operators and the totals that TorchScript archives get too.
#include <map>
#include <set>

#include "inspect_internal.h"

namespace tsctl::inspect_internal {

void ReadPt2Archive(const Archive& a, ArchiveInfo& info) {
  info.pt2 = ReadPt2(a);
  const Pt2Info& pt2 = *info.pt2;
  for (const std::string& w : pt2.warnings) info.warnings.push_back(w);

  // Operators: one "method" per program, named after its model.
  std::map<std::string, uint64_t> totals;
  for (const Pt2Model& m : pt2.models) {
    info.operators.methods.push_back({m.name, "program", m.operators});
    for (const OperatorUse& u : m.operators) totals[u.name] += u.count;
  }
  for (const auto& [name, count] : totals) info.operators.totals.push_back({name, count});
  if (!pt2.models.empty()) info.operators.totals_source = "program";

  // Totals by dtype and device; tensor data: each weight file once.
  std::map<std::pair<std::string, std::string>, TotalInfo> by_dtype;
  std::set<std::string> files;
  info.storage_bytes = 0;
  for (const Pt2Model& m : pt2.models) {
    for (const Pt2Tensor& t : m.tensors) {
      if (t.role == "custom_obj") continue;
      TotalInfo& tot = by_dtype[{t.dtype, t.device}];
      tot.dtype = t.dtype;
      tot.device = t.device;
      tot.tensors += 1;
      tot.numel += t.numel;
      tot.bytes += t.bytes;
      info.tensor_bytes += t.bytes;
      if (t.file_present && files.insert(t.file).second) info.storage_bytes += t.file_size;
    }
  }
  for (auto& [key, total] : by_dtype) info.totals.push_back(total);
}

}  // namespace tsctl::inspect_internal
