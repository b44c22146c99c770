// `tsctl inspect`: runs the phases (inspect_internal.h) in order, the
// model's by its format's row (zip_model.h).
#include "tsctl/inspect.h"

#include <optional>

#include "inspect_internal.h"
#include "tsctl/stamp.h"
#include "zip_model.h"

namespace tsctl {

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
  ZipModelOf(a).read(a, info);
  inspect_internal::ReadExtra(a, options, info);
  return info;
}

}  // namespace tsctl
