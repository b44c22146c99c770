#include "tsctl/archive.h"
#include "tsctl/zip_structure.h"

#include <algorithm>

#include "../zip/miniz_lookup.h"
#include "tsctl/pte.h"
#include "tsctl/error.h"

namespace tsctl {

const char* ArchiveKindName(ArchiveKind kind) {
  switch (kind) {
    case ArchiveKind::kTorchScript: return "torchscript";
    case ArchiveKind::kTorchScriptLegacy: return "torchscript-legacy";
    case ArchiveKind::kTorchSave: return "torch-save";
    case ArchiveKind::kOtherZip: return "zip";
    case ArchiveKind::kDamagedTorchScript: return "torchscript-damaged";
    case ArchiveKind::kTorchSaveLegacy: return "torch-save-legacy";
    case ArchiveKind::kExecuTorch: return "executorch";
    case ArchiveKind::kPythonSource: return "python-source";
    case ArchiveKind::kText: return "text";
    case ArchiveKind::kEmpty: return "empty";
    case ArchiveKind::kTruncatedZip: return "truncated-zip";
    case ArchiveKind::kPt2: return "pt2";
    case ArchiveKind::kPt2Aoti: return "pt2-aoti";
    case ArchiveKind::kPt2Early: return "pt2-early";
    case ArchiveKind::kDamagedPt2: return "pt2-damaged";
    case ArchiveKind::kUnknown: return "unknown";
  }
  return "unknown";
}

bool IsPt2(ArchiveKind kind) {
  return kind == ArchiveKind::kPt2 || kind == ArchiveKind::kPt2Aoti || kind == ArchiveKind::kPt2Early;
}

namespace {

// The root folder, as PyTorchStreamReader::init takes it: the first entry's
// name up to its first '/'.
std::string FindRoot(const ZipLayout& layout) {
  if (layout.entries.empty()) return {};
  const std::string& first = layout.entries.front().name;
  const size_t slash = first.find('/');
  if (slash == std::string::npos) return {};
  std::string root = first.substr(0, slash);
  // An AOTInductor package written without a top folder (2025) starts with
  // data/aotinductor/...: its records sit at the top, not under "data/".
  if (miniz::SameName(root, "data") && miniz::StartsWith(first, "data/aotinductor/")) {
    const std::string plus = root + "/";
    const bool own_records = std::any_of(layout.entries.begin(), layout.entries.end(), [&](const ZipEntry& e) {
      return miniz::SameName(e.name, plus + "data.pkl") || miniz::SameName(e.name, plus + "archive_format") ||
             miniz::SameName(e.name, plus + "model.json");
    });
    if (!own_records) return {};
  }
  return root;
}

// True if `head` is printable text (ASCII, UTF-8 bytes, tabs, line breaks).
bool LooksLikeText(const std::string& head) {
  if (head.empty()) return false;
  for (unsigned char c : head) {
    if (!(c == '\n' || c == '\t' || c == '\r' || (c >= 32 && c != 127))) return false;
  }
  return true;
}

// Text with a line that only Python starts (import, from ... import, def,
// class, a decorator) or a Python shebang, and no Markdown code fence: a
// README that shows Python in a ``` block is text, and so is a file whose
// only Python-like thing is a "# Title" line.
bool LooksLikePythonSource(const std::string& head) {
  if (!LooksLikeText(head)) return false;
  if (head.rfind("#!", 0) == 0 && head.substr(0, head.find('\n')).find("python") != std::string::npos) return true;
  static const char* kStatements[] = {"import ", "from ", "def ", "class ", "async def ", "@"};
  bool python = false;
  size_t at = 0;
  while (at < head.size()) {
    size_t end = head.find('\n', at);
    if (end == std::string::npos) end = head.size();
    const std::string line = head.substr(at, end - at);
    if (line.rfind("```", 0) == 0 || line.rfind("~~~", 0) == 0) return false;  // Markdown
    for (const char* s : kStatements) {
      if (line.rfind(s, 0) == 0) python = true;
    }
    at = end + 1;
  }
  return python;
}

std::string Describe(ArchiveKind kind) {
  switch (kind) {
    case ArchiveKind::kTorchSave:
      return "a torch.save checkpoint (ZIP with data.pkl but no code/), not a TorchScript archive; load it with torch.load";
    case ArchiveKind::kTorchSaveLegacy:
      return "a legacy torch.save pickle (PyTorch < 1.6), not a TorchScript archive";
    case ArchiveKind::kExecuTorch:
      return "an ExecuTorch file (.pte, .ptd or .bpte), not a TorchScript archive: tsctl inspect, graph, diff, report and validate read it; it "
             "has no extra/ records to stamp (keep producer metadata beside it, or stamp the .pt2 it was made from)";
    case ArchiveKind::kOtherZip: return "a ZIP archive without data.pkl or model.json, not a TorchScript archive";
    case ArchiveKind::kDamagedTorchScript: return "damaged TorchScript archive: its data.pkl record is missing";
    case ArchiveKind::kPythonSource: return "Python source text, not a TorchScript archive";
    case ArchiveKind::kText: return "a text file, not a TorchScript archive";
    case ArchiveKind::kEmpty: return "empty file, not a TorchScript archive";
    case ArchiveKind::kTruncatedZip: return "truncated ZIP archive: its central directory is missing";
    case ArchiveKind::kPt2:
      return "a .pt2 exported program (torch.export.save), not a TorchScript archive: running it needs a LibTorch 2.x build";
    case ArchiveKind::kPt2Aoti:
      return "a .pt2 AOTInductor package, not a TorchScript archive: running it needs a LibTorch 2.x build";
    case ArchiveKind::kPt2Early:
      return "an early .pt2 exported program (serialized_exported_program.json, PyTorch 2.1-2.2), not a TorchScript "
             "archive: no LibTorch runs this layout";
    case ArchiveKind::kDamagedPt2:
      return "damaged .pt2 archive: archive_format says pt2 but it has neither models/*.json nor data/aotinductor/";
    default: return "not a ZIP archive, so not a TorchScript archive";
  }
}

}  // namespace

// The .pt2 layouts (torch/export/pt2_archive/constants.py), or none.
std::optional<ArchiveKind> Archive::SniffPt2(const Archive& a) {
  bool models = false;
  for (const std::string& n : a.RecordsUnder("models/")) {
    models |= n.size() > 12 && n.compare(n.size() - 5, 5, ".json") == 0 && n.find('/', 7) == std::string::npos;
  }
  const bool aoti = a.HasRecordsUnder("data/aotinductor/");
  if (a.Has("archive_format")) {
    std::string format;
    try {
      format = a.Read("archive_format", 64);
    } catch (const Error&) {
      return ArchiveKind::kDamagedPt2;
    }
    if (format != "pt2") return std::nullopt;  // some other archive_format: another ZIP
    if (models) return ArchiveKind::kPt2;
    return aoti ? ArchiveKind::kPt2Aoti : ArchiveKind::kDamagedPt2;
  }
  if (a.Has("serialized_exported_program.json")) return ArchiveKind::kPt2Early;
  if (aoti) return ArchiveKind::kPt2Aoti;
  if (models && a.HasRecordsUnder("data/weights/")) return ArchiveKind::kPt2;
  return std::nullopt;
}

ArchiveKind Archive::Sniff(const ByteSource& src) {
  if (src.Size() == 0) return ArchiveKind::kEmpty;
  std::string head = src.ReadString(0, static_cast<size_t>(std::min<uint64_t>(src.Size(), 512)));
  if (head.rfind("PK\x03\x04", 0) == 0) return ArchiveKind::kTruncatedZip;
  // Legacy torch.save: a pickle whose first object is the magic number
  // 0x1950a86a20f9469cfc6c (LONG1 of 10 bytes right after PROTO 2).
  if (head.size() >= 4 && static_cast<unsigned char>(head[0]) == 0x80 &&
      static_cast<unsigned char>(head[2]) == 0x8a && head[3] == '\x0a') {
    return ArchiveKind::kTorchSaveLegacy;
  }
  if (head.size() >= kPteHeadBytes && LooksLikePte(head)) return ArchiveKind::kExecuTorch;
  if (LooksLikePythonSource(head)) return ArchiveKind::kPythonSource;
  if (LooksLikeText(head)) return ArchiveKind::kText;
  return ArchiveKind::kUnknown;
}

std::string Archive::RecordName(const ZipEntry& e) const {
  // LibTorch reaches "<root>/<name>" without case: so does the stripping.
  if (root_.empty() || e.name.size() <= root_.size() + 1 || !miniz::StartsWith(e.name, root_ + "/")) {
    return e.name;
  }
  return e.name.substr(root_.size() + 1);
}

const ZipEntry* Archive::Find(const std::string& record) const {
  std::optional<uint32_t> i = miniz::Locate(layout_.entries, sorted_, root_.empty() ? record : root_ + "/" + record);
  return i ? &layout_.entries[*i] : nullptr;
}

std::vector<std::string> Archive::Records() const { return RecordsUnder(""); }

std::vector<std::string> Archive::RecordsUnder(std::string_view prefix) const {
  std::vector<std::string> out;
  for (size_t i = 0; i < names_.size(); ++i) {
    // Left out: copies a later duplicate shadows, and entries outside the
    // root folder (Find adds the root to every name).
    if (miniz::StartsWith(names_[i], prefix) && Find(names_[i]) == &layout_.entries[i]) {
      out.push_back(names_[i]);
    }
  }
  return out;
}

bool Archive::HasRecordsUnder(std::string_view prefix) const {
  return std::any_of(names_.begin(), names_.end(),
                     [&](const std::string& n) { return miniz::StartsWith(n, prefix); });
}

std::string Archive::Read(const std::string& record, uint64_t max_bytes) const {
  const ZipEntry* e = Find(record);
  if (!e) throw Error(ErrorKind::kFormat, "record '" + record + "' is missing");
  return ReadEntry(*src_, *e, max_bytes);
}

Archive Archive::OpenAny(std::unique_ptr<ByteSource> src) {
  Archive a;
  a.src_ = std::move(src);
  try {
    a.layout_ = ReadZipLayout(*a.src_);
  } catch (const Error& e) {
    ArchiveKind kind = Sniff(*a.src_);
    if (kind == ArchiveKind::kTruncatedZip) {
      // The ZIP reader's cause already says what is missing or cut off.
      throw Error(ErrorKind::kFormat, std::string("truncated ZIP archive (") + e.what() + ")");
    }
    throw Error(ErrorKind::kFormat, Describe(kind));
  }
  a.sorted_ = miniz::SortedIndex(a.layout_.entries);
  a.root_ = FindRoot(a.layout_);
  a.ambiguities_ = miniz::Ambiguities(a.layout_, a.root_, a.sorted_);
  a.names_.reserve(a.layout_.entries.size());
  for (const ZipEntry& e : a.layout_.entries) a.names_.push_back(a.RecordName(e));
  if (a.Has("data.pkl")) {
    const bool torchscript = a.HasRecordsUnder("code/") || a.Has("constants.pkl") || a.Has("bytecode.pkl");
    a.kind_ = torchscript ? ArchiveKind::kTorchScript : ArchiveKind::kTorchSave;
  } else if (a.Has("model.json")) {
    a.kind_ = ArchiveKind::kTorchScriptLegacy;
  } else if (std::optional<ArchiveKind> pt2 = SniffPt2(a)) {
    a.kind_ = *pt2;
  } else if (a.Has("constants.pkl") || a.Has("version") || a.Has(".data/version")) {
    a.kind_ = ArchiveKind::kDamagedTorchScript;
  } else {
    a.kind_ = ArchiveKind::kOtherZip;
  }
  if (IsPt2(a.kind_) && a.root_.empty()) {
    // torch.export.load: PyTorchFileReader refuses an archive without a top
    // folder, and it falls back to Python's zipfile for the flat layout,
    // with a deprecation warning; AOTIModelPackageLoader reads its files by
    // name with miniz. Accepted, so a note, not an ambiguity.
    a.ambiguities_ = miniz::Ambiguities(a.layout_, a.root_, a.sorted_, /*rootless_ok=*/true);
    a.layout_notes_.push_back(
        "no top folder: torch.export.load's archive reader refuses it and reads it with Python's zipfile as the "
        "older flat layout, with a deprecation warning (AOTIModelPackageLoader finds a package's files by name); "
        "save it again with a current torch.export.save");
  }
  return a;
}

Archive Archive::OpenModel(std::unique_ptr<ByteSource> src) {
  Archive a = OpenAny(std::move(src));
  if (a.kind_ != ArchiveKind::kTorchScript && a.kind_ != ArchiveKind::kTorchScriptLegacy && !IsPt2(a.kind_)) {
    throw Error(ErrorKind::kFormat, Describe(a.kind_));
  }
  return a;
}

Archive Archive::OpenSound(const std::string& path, uint64_t max_stream_bytes) {
  Archive archive = Open(OpenFileSource(path, max_stream_bytes));
  RequireSoundStructure(archive.layout());
  return archive;
}

Archive Archive::OpenSoundModel(const std::string& path, uint64_t max_stream_bytes) {
  Archive archive = OpenModel(OpenFileSource(path, max_stream_bytes));
  RequireSoundStructure(archive.layout());
  return archive;
}

Archive Archive::Open(std::unique_ptr<ByteSource> src) {
  Archive a = OpenAny(std::move(src));
  // A .pt2 is not damage: this command (or build) cannot run it (exit 6).
  if (IsPt2(a.kind_)) throw Error(ErrorKind::kUnavailable, Describe(a.kind_));
  if (a.kind_ != ArchiveKind::kTorchScript && a.kind_ != ArchiveKind::kTorchScriptLegacy) {
    throw Error(ErrorKind::kFormat, Describe(a.kind_));
  }
  return a;
}

bool RecordNameStartsWith(std::string_view name, std::string_view prefix) { return miniz::StartsWith(name, prefix); }

bool RecordNameEndsWith(std::string_view name, std::string_view suffix) {
  return name.size() >= suffix.size() && miniz::SameName(name.substr(name.size() - suffix.size()), suffix);
}

std::vector<std::string> CodeRecords(const Archive& archive, bool libs, uint64_t budget, size_t* skipped) {
  std::vector<std::string> out;
  size_t left_out = 0;
  for (const std::string& name : archive.Records()) {
    const bool code = RecordNameStartsWith(name, "code/") || (libs && RecordNameStartsWith(name, "libs/"));
    if (!code || name.size() <= 3 || !RecordNameEndsWith(name, ".py")) continue;
    const uint64_t size = archive.Find(name)->uncompressed_size;
    if (size > budget) {
      ++left_out;
      continue;
    }
    budget -= size;
    out.push_back(name);
  }
  if (skipped) *skipped = left_out;
  return out;
}

}  // namespace tsctl
