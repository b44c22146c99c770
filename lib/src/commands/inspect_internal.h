// Pieces of `tsctl inspect` shared by inspect*.cc; not a public interface.
// Inspect() (inspect.cc) runs them in this order; each fills its part of
// `info` and appends its warnings, and never throws for damage inside the
// archive.
#pragma once

#include <cstdint>
#include <vector>

#include "tsctl/archive.h"
#include "tsctl/inspect.h"

namespace tsctl::inspect_internal {

// info.records: every ZIP entry, with its CRC checked (tensor data only with
// options.verify_crc; shadowed copies of a duplicated name never), and
// info.storage_bytes, info.format.traced_inputs (inspect_records.cc).
void ReadRecords(const Archive& a, const InspectOptions& options, ArchiveInfo& info);

// info.format: version, byteorder, serialization id, bytecode.pkl
// (inspect_records.cc).
void ReadFormat(const Archive& a, ArchiveInfo& info);

// info.code, info.classes and info.operators, from the code records
// (inspect_code.cc). Needs info.format.
void ReadCode(const Archive& a, ArchiveInfo& info);

// info.module and info.constants/other_constants, from data.pkl and
// constants.pkl, or from model.json in the legacy layout
// (inspect_modules.cc). Needs info.format and info.classes.
void ReadModules(const Archive& a, ArchiveInfo& info);

// info.module and the producer fields of info.format, from a legacy
// archive's model.json (inspect_legacy.cc).
void ReadLegacyModule(const Archive& a, ArchiveInfo& info);

// info.extra: every extra/ record once, shown as JSON or text up to the
// options' limits (inspect_extra.cc).
void ReadExtra(const Archive& a, const InspectOptions& options, ArchiveInfo& info);

// info.pt2, and from it info.operators, info.totals, info.tensor_bytes and
// info.storage_bytes, for a .pt2 archive (inspect_pt2.cc).
void ReadPt2Archive(const Archive& a, ArchiveInfo& info);

// Elements of a tensor of this shape (negative sizes count as 0).
uint64_t Numel(const std::vector<int64_t>& shape);

}  // namespace tsctl::inspect_internal
