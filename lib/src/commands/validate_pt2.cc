// validate's structure checks of a .pt2 archive, without LibTorch: its kind
// and archive version, each program's JSON, every weight in the configs
// present with the byte size its dtype, shape and strides need, weight
// alignment, AOTInductor files and metadata. Then, with loading, the run
// (validate_pt2_run.cc).
#include <algorithm>

#include "../text/json_util.h"
#include "check_context.h"
#include "validate_internal.h"
#include "tsctl/error.h"
#include "tsctl/pt2.h"
#include "../archive/pt2_machine.h"
#include "tsctl/text_util.h"

namespace tsctl {
namespace {

// Bytes a view needs from the start of its storage: (offset + the last
// element's index + 1) * element size; 0 for an empty tensor.
// Sizes, strides and offsets come from the archive: any overflow (or a
// negative offset) saturates to UINT64_MAX, which no file satisfies.
uint64_t NeededBytes(const Pt2Tensor& t) {
  if (t.numel == 0) return 0;
  if (t.numel == UINT64_MAX || t.storage_offset < 0) return UINT64_MAX;
  uint64_t last = static_cast<uint64_t>(t.storage_offset);  // index of the last element
  bool overflow = false;
  if (t.stride.size() != t.shape.size()) {
    overflow |= __builtin_add_overflow(last, t.numel - 1, &last);
  } else {
    for (size_t i = 0; i < t.shape.size(); ++i) {
      uint64_t step = 0;
      overflow |= t.shape[i] < 1 || __builtin_mul_overflow(static_cast<uint64_t>(t.shape[i] - 1),
                                                          static_cast<uint64_t>(std::max<int64_t>(t.stride[i], 0)), &step);
      overflow |= __builtin_add_overflow(last, step, &last);
    }
  }
  uint64_t bytes = 0;
  overflow |= __builtin_add_overflow(last, uint64_t{1}, &last) || __builtin_mul_overflow(last, Pt2ElementSize(t.dtype), &bytes);
  return overflow ? UINT64_MAX : bytes;
}

void CheckWeights(const Pt2Info& info, std::vector<CheckResult>& out) {
  std::vector<std::string> bad;
  uint64_t count = 0, bytes = 0;
  for (const Pt2Model& m : info.models) {
    for (const Pt2Tensor& t : m.tensors) {
      if (t.file.empty() || t.role == "custom_obj" || t.use_pickle || t.file.rfind("data/", 0) != 0) continue;
      ++count;
      bytes += t.bytes;
      const uint64_t needed = NeededBytes(t);
      if (!t.file_present) {
        bad.push_back(t.name + " (" + t.file + " missing)");
      } else if (Pt2ElementSize(t.dtype) == 0) {
        bad.push_back(t.name + " (unknown dtype " + t.dtype + ")");
      } else if (t.file_size < needed) {
        bad.push_back(t.name + " (" + t.file + " holds " + std::to_string(t.file_size) + " bytes, its " + t.dtype +
                      " view needs " + (needed == UINT64_MAX ? std::string("more than 2^64") : std::to_string(needed)) + ")");
      }
    }
  }
  if (count == 0) {
    out.push_back(
        {check::kPt2Weights, CheckStatus::kPass, "no weight files to check (no weights config, or none listed)"});
    return;
  }
  std::string list;
  for (size_t i = 0; i < bad.size() && i < 5; ++i) list += (i ? ", " : "") + bad[i];
  if (bad.size() > 5) list += ", and " + std::to_string(bad.size() - 5) + " more";
  out.push_back({check::kPt2Weights, bad.empty() ? CheckStatus::kPass : CheckStatus::kFail,
                 bad.empty()
                     ? std::to_string(count) + " weights (" + HumanBytes(bytes) +
                           ") present with the size their dtype and shape need"
                     : std::to_string(bad.size()) + " of " + std::to_string(count) + " weights unusable: " + list});
}

// The first bytes of a stored record ("" if compressed or unreadable).
std::string RecordHead(const Archive& a, const std::string& record, size_t n) {
  const ZipEntry* e = a.Find(record);
  if (!e || e->method != kZipStored || !e->local_header_error.empty() || e->uncompressed_size < n) return "";
  try {
    return a.source().ReadString(e->data_offset, n);
  } catch (const Error&) {
    return "";
  }
}

void CheckAoti(const Archive& a, const Pt2Info& info, std::vector<CheckResult>& out) {
  for (const Pt2AotiModel& m : info.aoti) {
    bool so = false;
    std::vector<std::string> not_elf;
    for (const auto& [name, size] : m.files) {
      if (name.size() <= 3 || name.compare(name.size() - 3, 3, ".so") != 0) continue;
      so = true;
      if (RecordHead(a, name, 4) != "\x7f" "ELF") not_elf.push_back(name);
    }
    if (!not_elf.empty()) {
      out.push_back(
          {check::kPt2Aoti, CheckStatus::kFail,
           "AOTInductor model " + m.name + ": " + not_elf[0] + " is not an ELF shared object (or is compressed)"});
      continue;
    }
    std::string device, isa;
    for (const auto& [key, value] : m.metadata) {
      if (key == "AOTI_DEVICE_KEY") device = value;
      if (key == "AOTI_CPU_ISA") isa = value;
    }
    // Code compiled for instruction sets this CPU lacks dies of SIGILL.
    const std::string flags = device == "cpu" && !isa.empty() ? CpuFlags() : "";
    const std::vector<std::string> lacking = flags.empty() ? std::vector<std::string>{} : Pt2MissingCpuFeatures(isa, flags);
    if (!lacking.empty() && !m.metadata_record.empty() && so && not_elf.empty()) {
      std::string names;
      for (const std::string& n : lacking) names += (names.empty() ? "" : " ") + n;
      out.push_back({check::kPt2Aoti, CheckStatus::kWarn,
                     "AOTInductor model " + m.name + ": compiled for " + isa + "; this CPU lacks " + names +
                         ": running it here would die of an illegal instruction"});
      continue;
    }
    std::vector<std::string> missing;
    if (!so) missing.push_back("no compiled .so");
    if (m.metadata_record.empty()) missing.push_back("no *_metadata.json");
    out.push_back(
        {check::kPt2Aoti, missing.empty() ? CheckStatus::kPass : CheckStatus::kFail,
         "AOTInductor model " + m.name + ": " +
             (missing.empty() ? "compiled library and metadata present" + (device.empty() ? "" : ", device " + device)
                              : missing[0] + (missing.size() > 1 ? ", " + missing[1] : ""))});
  }
}

// The .pt2 read once for its rows (ReadPt2; its exception is the first
// row's, as validate's batch reports it).
struct Pt2Read {
  explicit Pt2Read(CheckContext& c) : info(ReadPt2(*c.archive)) {}
  Pt2Info info;
};

const Pt2Info& InfoOf(CheckContext& c) { return c.Facts<Pt2Read>().info; }

void CheckPt2Kind(CheckContext& c) {
  InfoOf(c);
  const ArchiveKind kind = c.archive->kind();
  c.Add({check::kPt2Kind, CheckStatus::kPass,
         kind == ArchiveKind::kPt2Early ? "early .pt2 exported program (serialized_exported_program.json, PyTorch 2.1-2.2)"
         : kind == ArchiveKind::kPt2Aoti ? ".pt2 AOTInductor package"
                                         : ".pt2 exported program"});
}

void CheckPt2Version(CheckContext& c) {
  if (c.archive->kind() == ArchiveKind::kPt2Early) return;
  const Pt2Info& info = InfoOf(c);
  const bool known = info.archive_version == "0";
  c.Add({check::kPt2Version, known ? CheckStatus::kPass : CheckStatus::kWarn,
         info.archive_version.empty() ? "no archive_version record (archive_format: " + info.archive_format + ")"
         : known                      ? "archive_version 0 (PyTorch 2.9-2.15 write 0)"
                 : "archive_version " + info.archive_version + ": this tsctl knows 0 (PyTorch 2.9-2.15)"});
}

void CheckPt2Program(CheckContext& c) {
  const Pt2Info& info = InfoOf(c);
  const std::vector<std::string>& program_errors = info.warnings;
  std::string programs;
  for (const Pt2Model& m : info.models) {
    const auto unused = std::count_if(m.tensors.begin(), m.tensors.end(), [](const Pt2Tensor& t) { return !t.in_signature; });
    programs += (programs.empty() ? "" : ", ") + m.name + " (schema " +
                (m.schema_major ? std::to_string(*m.schema_major) + (m.schema_minor ? "." + std::to_string(*m.schema_minor) : "") : "?") +
                ", " + std::to_string(m.nodes) + " nodes" +
                (unused ? "; " + std::to_string(unused) + " stored tensors outside its signature, unused (torch.export.load keeps them)" : "") +
                ")";
  }
  if (info.models.empty() && program_errors.empty()) return;
  c.Add({check::kPt2Program, program_errors.empty() ? CheckStatus::kPass : CheckStatus::kFail,
         program_errors.empty()
             ? std::to_string(info.models.size()) + " program(s) read: " + programs
             : program_errors.front() +
                   (program_errors.size() > 1 ? " (and " + std::to_string(program_errors.size() - 1) + " more)" : "")});
}

void CheckPt2Weights(CheckContext& c) { CheckWeights(InfoOf(c), c.report.checks); }
void CheckPt2Aoti(CheckContext& c) { CheckAoti(*c.archive, InfoOf(c), c.report.checks); }

// pt2.ops: --allow-ops over the operators the programs call (not run).
void CheckPt2Ops(CheckContext& c) {
  if (!c.options.has_allow_ops) return;
  CheckAllowedOps(Pt2Operators(InfoOf(c)), c.options.allow_ops, check::kPt2Ops, " (read from the program, not run)",
                  c.report.checks);
}

}  // namespace

std::vector<std::string> Pt2Operators(const Pt2Info& info) {
  std::vector<std::string> ops;
  for (const Pt2Model& m : info.models) {
    for (const OperatorUse& u : m.operators) ops.push_back(u.name);
  }
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  return ops;
}

void Pt2Run(CheckContext& c) {
  const Pt2Info& info = InfoOf(c);
  c.report.ops = Pt2Operators(info);
  Json(c.report.details)["operators_source"] = info.models.empty() ? "" : "program";
  // Any zip.* or pt2.* FAIL keeps a package from LibTorch (RefusesLoad):
  // those rows ran, --skip or not (kPt2Model.rows_block_loading).
  if (c.options.load) RunPt2InChild(*c.archive, info, c.options, c.report);
}

const std::vector<CheckRow>& Pt2CheckRows() {
  static const std::vector<CheckRow> kRows = {
      {.id = check::kPt2Kind, .check = CheckPt2Kind},       {.id = check::kPt2Version, .check = CheckPt2Version},
      {.id = check::kPt2Program, .check = CheckPt2Program}, {.id = check::kPt2Weights, .check = CheckPt2Weights},
      {.id = check::kPt2Aoti, .check = CheckPt2Aoti},       {.id = check::kPt2Ops, .check = CheckPt2Ops, .judges_request = true},
  };
  return kRows;
}

}  // namespace tsctl
