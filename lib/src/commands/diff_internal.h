// Pieces of `tsctl diff` shared by diff*.cc; not a public interface.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "tsctl/archive.h"
#include "tsctl/diff.h"
#include "tsctl/inspect.h"

namespace tsctl::diff_internal {

// One archive being compared, with its records indexed by name (without the
// root folder; with duplicate names the last one, as Archive::Find). Unlike
// Archive::Find, the index also reaches entries outside the root folder, by
// their full names (AllRecords), so that diff shows a "../evil.txt" added or
// removed: that is why it is built from the raw entries.
struct Side {
  explicit Side(const Archive& a);
  const ZipEntry* Find(const std::string& record) const;

  const Archive& archive;
  std::unordered_map<std::string, const ZipEntry*> records;
};

// `s` without ___torch_mangle_N numbering: "m.___torch_mangle_12.Linear" ->
// "m.Linear", any other "___torch_mangle_12" -> "___torch_mangle_N".
std::string NormalizeMangle(const std::string& s);

// Compares tensors matched by name (and role) between A and B, values
// included; appends one entry per difference to `out`.
void DiffTensorLists(const Side& a, const std::vector<const TensorInfo*>& ta, const Side& b,
                     const std::vector<const TensorInfo*>& tb, const DiffOptions& options,
                     std::vector<TensorChange>& out);

// Per class and method of the stored code records.
void DiffCode(const Side& a, const ArchiveInfo& ia, const Side& b, const ArchiveInfo& ib,
              const DiffOptions& options, DiffResult& result);

// extra/ records: JSON-aware, text or size/CRC.
void DiffExtra(const Side& a, const Side& b, const DiffOptions& options, DiffResult& result);

// Whether two records hold the same bytes, read side by side. Throws
// tsctl::Error (kFormat) if either cannot be read.
bool RecordsEqual(const Side& a, const ZipEntry& x, const Side& b, const ZipEntry& y);


}  // namespace tsctl::diff_internal
