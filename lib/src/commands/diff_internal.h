// Pieces of `tsctl diff` shared by diff*.cc; not a public interface.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "tsctl/archive.h"
#include "tsctl/diff.h"
#include "tsctl/inspect.h"
#include "tsctl/pte.h"
#include "tsctl/source.h"

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

// The changes that turn JSON `a` into JSON `b`, by JSON pointer.
std::vector<JsonChange> DiffJson(const nlohmann::json& a, const nlohmann::json& b);

// extra/ records: JSON-aware, text or size/CRC.
void DiffExtra(const Side& a, const Side& b, const DiffOptions& options, DiffResult& result);

// The records section: entries added, removed, or changed in size, CRC-32
// (and bytes, with options.exact), compression or alignment.
void DiffRecords(const Side& a, const Side& b, const DiffOptions& options, DiffResult& r);

// Whether two records hold the same bytes, read side by side. Throws
// tsctl::Error (kFormat) if either cannot be read.
bool RecordsEqual(const Side& a, const ZipEntry& x, const Side& b, const ZipEntry& y);

// A record's CRC-32 as the reports print it: eight hex digits.
std::string Crc32Hex(uint32_t v);

// The tensors of a module tree, depth first.
void Flatten(const ModuleInfo& m, std::vector<const TensorInfo*>& out);

// r.sections: one per section, compared when `options` enables it.
void StartSections(const DiffOptions& options, DiffResult& r);
// Each compared section's `equal` from the changes found; the format changes
// dropped when that section is off.
void FinishSections(const DiffOptions& options, DiffResult& r);

// .pt2 archives (diff_pt2.cc): the sections filled from their programs.
// modules: each program's user inputs/outputs and symbols.
void DiffPt2Signature(const ArchiveInfo& ia, const ArchiveInfo& ib, DiffResult& r);
// parameters and buffers (constants == false) or tensor constants, by value.
void DiffPt2Tensors(const Side& a, const ArchiveInfo& ia, const Side& b, const ArchiveInfo& ib, bool constants,
                    const DiffOptions& options, std::vector<TensorChange>& out);
// parameters of a TorchScript archive against a .pt2's (either side A): by
// name, dtype, shape and values (tsctl migrate's check); a parameter on one
// side and a buffer on the other, or requires_grad, is no difference there
// (torch.export lifts both kinds; the converter lifts all as buffers).
void DiffTensorsAcrossFormats(const Side& a, const ArchiveInfo& ia, const Side& b, const ArchiveInfo& ib,
                              const DiffOptions& options, std::vector<TensorChange>& out);
// code: each program's printed graph (Pt2GraphText), as a unified diff.
void DiffPt2Graphs(const Archive& a, const Archive& b, const DiffOptions& options, DiffResult& r);
// operators: the graph targets of every program.
void DiffPt2Operators(const ArchiveInfo& ia, const ArchiveInfo& ib, DiffResult& r);
// format: layout, archive_version, schema and torch versions per program.
void DiffPt2Format(const ArchiveInfo& ia, const ArchiveInfo& ib, DiffResult& r);

// ExecuTorch files (diff_pte.cc). One side: the file read with its chains,
// and its bytes, for the values.
struct PteSide {
  std::unique_ptr<ByteSource> source;
  PteFile file;
  uint64_t program_offset = 0;  // of the program in the file (a .bpte's embedded one)
};
// Opens the ExecuTorch file at `path` once and reads it with its chains.
// Throws tsctl::Error as ReadPte does (a message starting with `path`).
PteSide ReadPteSide(const std::string& path, uint64_t max_input_bytes);
// DiffPteFiles over two sides already read; `path_a`, `path_b` name them.
DiffResult DiffPteSides(const PteSide& a, const std::string& path_a, const PteSide& b, const std::string& path_b,
                        const DiffOptions& options);
// The bytes of each record the records section names ("delegate
// XnnpackBackend", "total", "named data KEY"), as it counts them.
std::map<std::string, uint64_t> PteRecordSizes(const PteSide& s);
// records: each named data blob by key: added, removed, or of another size
// or CRC-32 (diff_pte_tensors.cc).
void DiffNamedData(const PteSide& a, const PteSide& b, DiffResult& r);
// records: each delegate's blob of one size by CRC-32, and its compile specs'
// values where their keys are the same (diff_pte_tensors.cc).
void DiffDelegateBlobs(const PteSide& a, const PteSide& b, DiffResult& r);
// "delegate blob METHOD.delegate[I] (BACKEND)" -> the blob's bytes.
std::map<std::string, uint64_t> DelegateBlobSizes(const PteSide& s);
// "named data KEY" -> the blob's bytes, as DiffNamedData names them.
std::map<std::string, uint64_t> NamedDataSizes(const PteSide& s);
// parameters: stored tensors by fully qualified name, values compared from
// the files' bytes.
void DiffStored(const PteSide& a, const PteSide& b, const DiffOptions& o, DiffResult& r);

}  // namespace tsctl::diff_internal
