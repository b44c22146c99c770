// A TorchScript archive opened without LibTorch: its records (with the root
// folder stripped, as PyTorchStreamReader does), format facts and contents,
// through queries on record names in the manner of PyTorchStreamReader
// (getAllRecords, hasRecord, getRecord). Code above this layer asks these
// instead of walking layout().entries; only what is about the ZIP layout
// itself (offsets, local headers, every stored copy) reads the entries.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tsctl/source.h"
#include "tsctl/zip.h"

namespace tsctl {

// What a file turned out to be.
enum class ArchiveKind {
  kTorchScript,        // data.pkl + code/ (+ constants.pkl)
  kTorchScriptLegacy,  // PyTorch 1.0/1.1: model.json + tensors/
  kTorchSave,          // a torch.save checkpoint (ZIP with data.pkl, no code/)
  kDamagedTorchScript, // version/constants.pkl but no data.pkl
  kPt2,                // torch.export.save: archive_format "pt2", models/<name>.json
  kPt2Aoti,            // an AOTInductor package: data/aotinductor/<model>/, no models/
  kPt2Early,           // early torch.export.save (2.1-2.2): serialized_exported_program.json
  kDamagedPt2,         // archive_format "pt2" but neither models/*.json nor data/aotinductor/
  kOtherZip,           // some other ZIP archive
  kTorchSaveLegacy,    // pre-1.6 torch.save: a bare pickle stream
  kExecuTorch,         // an ExecuTorch program, data file or bundled program (.pte, .ptd, .bpte; tsctl/pte.h)
  kPythonSource,       // text with Python statements (a model's source, given where an archive goes)
  kText,               // other text (a README, a JSON or YAML file)
  kEmpty,
  kTruncatedZip,
  kUnknown,
};

const char* ArchiveKindName(ArchiveKind kind);

// True for the .pt2 kinds (kPt2, kPt2Aoti, kPt2Early), which `inspect`,
// `graph`, `diff`, `stamp` and `validate --no-load` read without LibTorch.
bool IsPt2(ArchiveKind kind);

class Archive {
 public:
  // Opens and classifies `src`. Throws tsctl::Error (kFormat) if the bytes are
  // not a TorchScript archive, with a message that says what they are, and
  // (kUnavailable) for a .pt2 archive, saying that running it needs a
  // LibTorch 2.x build.
  static Archive Open(std::unique_ptr<ByteSource> src);
  // Like Open, but also accepts other kinds (`kind()` says which) as long as
  // the ZIP layout can be read; used by validate to classify any file.
  static Archive OpenAny(std::unique_ptr<ByteSource> src);
  // Like Open, but also accepts the .pt2 kinds (IsPt2); used by the commands
  // that handle both formats.
  static Archive OpenModel(std::unique_ptr<ByteSource> src);
  // What every command that reads or loads one archive opens it with: the
  // file at `path` ("-": standard input), a TorchScript archive (or, with
  // OpenSoundModel, also a .pt2) whose ZIP structure is sound
  // (RequireSoundStructure). One line (kIo, kFormat) otherwise, the same for
  // inspect, code, stamp, graph, bench and trace. A stream or special file
  // longer than `max_stream_bytes` (--max-input-size) is refused (kIo).
  static Archive OpenSound(const std::string& path, uint64_t max_stream_bytes = kDefaultMaxInputBytes);
  static Archive OpenSoundModel(const std::string& path, uint64_t max_stream_bytes = kDefaultMaxInputBytes);

  // Classifies bytes that are not a readable ZIP (for messages).
  static ArchiveKind Sniff(const ByteSource& src);

  ArchiveKind kind() const { return kind_; }
  const ByteSource& source() const { return *src_; }
  const ZipLayout& layout() const { return layout_; }
  // Root folder, as PyTorchStreamReader takes it: the folder of the first
  // central-directory entry ("" if that entry is in no folder, which LibTorch
  // refuses).
  const std::string& root() const { return root_; }
  // Where ZIP readers could see another archive than LibTorch does, one
  // line each (raw names: escape them to show them): names equal but for
  // case, entries outside the root folder, other end records, a comment
  // past the end of the file, local headers that disagree with the central
  // directory, bytes before or after the ZIP. Empty for what PyTorch and
  // tsctl write. validate fails zip.ambiguous, inspect and diff warn, stamp
  // refuses.
  const std::vector<std::string>& Ambiguities() const { return ambiguities_; }
  // What the loaders accept with a warning, one line each: a .pt2 without a
  // top folder (the flat layout of torch.export.save before the PT2 archive
  // format, or an AOTInductor package written without one), which
  // torch.export.load reads with Python's zipfile after its archive reader
  // refuses it, and AOTIModelPackageLoader by name. validate warns
  // (zip.ambiguous), stamp refuses (it writes into the top folder).
  const std::vector<std::string>& LayoutNotes() const { return layout_notes_; }

  // Record name without the root folder.
  std::string RecordName(const ZipEntry& e) const;
  // Every entry's record name, in archive order, as
  // PyTorchStreamReader::getAllRecords lists them: a duplicated name once
  // per copy, and an entry outside the root folder under its full name.
  // AllRecords()[i] is RecordName(layout().entries[i]).
  const std::vector<std::string>& AllRecords() const { return names_; }
  // The records that Find reaches, in archive order: each name once (names
  // equal but for case count as one), at the copy Find gives.
  std::vector<std::string> Records() const;
  // Those of Records() whose names start with `prefix` ("extra/"), ASCII
  // case ignored as LibTorch ignores it.
  std::vector<std::string> RecordsUnder(std::string_view prefix) const;
  // True if a name in AllRecords() starts with `prefix` ("code/"), ASCII case
  // ignored.
  bool HasRecordsUnder(std::string_view prefix) const;
  // Finds a record by its name without the root folder; null if absent.
  // Exactly as LibTorch finds it (miniz, flags 0): ASCII case ignored, and
  // among names equal but for case the entry miniz's sorted index and binary
  // search reach (see lib/src/zip/miniz_lookup.h). O(log n).
  const ZipEntry* Find(const std::string& record) const;
  bool Has(const std::string& record) const { return Find(record) != nullptr; }
  // Reads a record fully, checking its CRC. Throws tsctl::Error (kFormat) if
  // absent or corrupt, or bigger than `max_bytes`.
  std::string Read(const std::string& record, uint64_t max_bytes = uint64_t{256} << 20) const;

 private:
  Archive() = default;
  static std::optional<ArchiveKind> SniffPt2(const Archive& a);
  std::unique_ptr<ByteSource> src_;
  ZipLayout layout_;
  std::vector<uint32_t> sorted_;   // entry indices in miniz's order
  std::vector<std::string> names_;  // RecordName of each entry
  std::string root_;
  std::vector<std::string> ambiguities_;
  std::vector<std::string> layout_notes_;
  ArchiveKind kind_ = ArchiveKind::kUnknown;
};

// Prefix and suffix tests on record names as LibTorch's lookup compares
// them (miniz: ASCII case ignored), so that "CODE/X.PY" counts as code when
// LibTorch would read it as "code/x.py".
bool RecordNameStartsWith(std::string_view name, std::string_view prefix);
bool RecordNameEndsWith(std::string_view name, std::string_view suffix);

// How much code text tsctl reads from one archive (inspect's classes and
// operators, code, validate's device scan): 64 MiB, far above any real
// archive's and bounded for hostile ones (a thousand central-directory
// entries naming one 15 MB record).
inline constexpr uint64_t kMaxCodeBytes = uint64_t{64} << 20;

// The code records (code/**.py, and libs/**.py when `libs`), each name once
// (a duplicated name reads as its last copy, as LibTorch reads it), in
// archive order, as long as their declared sizes add up to at most `budget`
// bytes. `skipped` (if given) is set to how many were left out for the budget.
std::vector<std::string> CodeRecords(const Archive& archive, bool libs, uint64_t budget = kMaxCodeBytes,
                                     size_t* skipped = nullptr);

}  // namespace tsctl
