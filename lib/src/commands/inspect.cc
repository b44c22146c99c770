// `tsctl inspect`: runs the phases (inspect_internal.h) in order, then sums
// the tensors by dtype and device.
#include "tsctl/inspect.h"

#include <map>
#include <optional>
#include <utility>

#include "inspect_internal.h"
#include "tsctl/stamp.h"

namespace tsctl {
namespace {

void Flatten(const ModuleInfo& m, std::vector<const TensorInfo*>& out) {
  for (const TensorInfo& t : m.tensors) out.push_back(&t);
  for (const ModuleInfo& c : m.children) Flatten(c, out);
}

}  // namespace

ArchiveInfo Inspect(const Archive& a, const InspectOptions& options) {
  ArchiveInfo info;
  const ByteSource& src = a.source();
  info.path = src.Name();
  info.file_size = src.Size();
  info.kind = ArchiveKindName(a.kind());
  info.root = a.root();
  // Where another reader could see another archive than the one LibTorch
  // loads (and inspect shows): said first.
  for (const std::string& w : a.Ambiguities()) info.warnings.push_back("ambiguous archive: " + w);
  for (const std::string& w : a.LayoutNotes()) info.warnings.push_back(w);
  if (std::optional<std::string> journal = DescribeStampJournal(a)) info.warnings.push_back(*journal);

  inspect_internal::ReadRecords(a, options, info);
  inspect_internal::ReadFormat(a, info);
  if (IsPt2(a.kind())) {
    inspect_internal::ReadPt2Archive(a, info);
    inspect_internal::ReadExtra(a, options, info);
    return info;
  }
  inspect_internal::ReadCode(a, info);
  inspect_internal::ReadModules(a, info);

  // Totals by dtype and device, over module tensors and constants.
  std::vector<const TensorInfo*> all;
  if (info.module) Flatten(*info.module, all);
  for (const TensorInfo& t : info.constants) all.push_back(&t);
  std::map<std::pair<std::string, std::string>, TotalInfo> totals;
  for (const TensorInfo* t : all) {
    TotalInfo& tot = totals[{t->dtype, t->device}];
    tot.dtype = t->dtype;
    tot.device = t->device;
    tot.tensors += 1;
    tot.numel += t->numel;
    tot.bytes += t->bytes;
    info.tensor_bytes += t->bytes;
  }
  for (auto& [k, v] : totals) info.totals.push_back(v);

  inspect_internal::ReadExtra(a, options, info);
  return info;
}

}  // namespace tsctl
