// validate's driver: one file's checks, by its format's row (tsctl/format.h).
// A format's own checks are its row's; what every file gets is here: the
// ZIP container's checks for the ZIP formats, --skip, the time limit and
// the NOT RUN verdict.
#include <algorithm>
#include <chrono>
#include <optional>

#include "../commands/validate_internal.h"
#include "check_table.h"
#include "../text/json_util.h"
#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/format.h"
#include "tsctl/torch_backend.h"
#include "tsctl/validate.h"

namespace tsctl {
namespace {

using nlohmann::json;

// The format whose first bytes `src` starts with (validate reads content
// only: a file's name decides nothing here), or nullptr.
const Format* FormatOfHead(const ByteSource& src) {
  for (const Format* f : Formats()) {
    if (f->claims_head && src.Size() >= f->head_bytes && f->claims_head(src.ReadString(0, f->head_bytes))) return f;
  }
  return nullptr;
}

ArchiveReport AllChecks(std::unique_ptr<ByteSource> src, const std::string& path, const ValidateOptions& options,
                        const Format*& format) {
  ArchiveReport report;
  report.path = path;
  Json(report.details) = json::object();
  auto& out = report.checks;
  // A file that says what it is in its first bytes is read by its own
  // reader, never as a damaged ZIP.
  if ((format = FormatOfHead(*src))) {
    format->validate({.path = path, .options = options, .src = src.get()}, report);
    return report;
  }
  if (options.load) {
    // Start the LibTorch server up front (once per process; the children
    // are forked from it) so that ts.version reports the range of the
    // LibTorch in use for every archive alike. A plugin that cannot load is reported when
    // the archive would be handed to it.
    try {
      WarmUpTorch();
    } catch (const Error&) {
    }
  }
  std::optional<Archive> archive;
  try {
    archive.emplace(Archive::OpenAny(std::move(src)));
  } catch (const Error& e) {
    out.push_back({check::kZipStructure, CheckStatus::kFail, e.what()});
    return report;
  }
  // --skip zip.crc --skip zip.sizes: no record is read (ApplySkip reports both).
  const bool read_records = !LeftOut(options, {check::kZipCrc, check::kZipSizes});
  TimedStep(out, [&] { CheckZip(*archive, options, out, read_records); });
  format = FormatOfArchive(*archive);
  if (format) format->validate({.path = path, .options = options, .archive = &*archive}, report);
  return report;
}

// NOT RUN: the model was to be loaded and run (no --no-load, --no-run or
// --skip asked otherwise) and no check says it ran (CheckResult::model_ran:
// a run on given, stored or cleanly inferred inputs, or a run that failed).
// Why: what the last load or run check (torch.load, torch.method,
// torch.run, pte.load, pte.run) that is not a PASS says (its id in `from`),
// the format's own word where there is none; "" when it ran.
std::string WhyNotRun(const std::vector<CheckResult>& checks, const Format* format, std::string& from) {
  std::string why;
  from.clear();
  for (const CheckResult& c : checks) {
    if (c.model_ran) {
      from.clear();
      return "";
    }
    const bool load_or_run = c.id == check::kTorchLoad || c.id == check::kTorchMethod || c.id == check::kTorchRun ||
                             c.id == check::kPteLoad || c.id == check::kPteRun;
    if (load_or_run && c.status != CheckStatus::kPass) {
      why = c.message;
      from = c.id;
    }
  }
  constexpr std::string_view kSaid = "not run: ";  // the result says NOT RUN already
  if (why.rfind(kSaid, 0) == 0) why.erase(0, kSaid.size());
  if (!why.empty()) return why;
  if (format && *format->not_run) return format->not_run;
  return "the model was not loaded or run";
}

}  // namespace

ArchiveReport ValidateArchive(const std::string& path, const ValidateOptions& options) {
  // LibTorch loads by path: a stream read here would be gone by then.
  const bool load =
      options.load && std::find(options.skip.begin(), options.skip.end(), check::kTorchLoad) == options.skip.end();
  if (load) RequireRegularFile(path, "LibTorch loads", "(or pass --no-load)");
  std::unique_ptr<ByteSource> src = OpenFileSource(path);
  return ValidateSource(std::move(src), path, options);
}

ArchiveReport ValidateSource(std::unique_ptr<ByteSource> src, const std::string& path, const ValidateOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  ValidateOptions o = options;
  if (o.timeout_seconds <= 0) o.timeout_seconds = ValidateTimeout(src->Size());
  auto skipped = [&](const char* id) { return std::find(o.skip.begin(), o.skip.end(), id) != o.skip.end(); };
  if (skipped(check::kTorchLoad)) o.load = false;
  if (skipped(check::kTorchRun)) o.run = false;
  const Format* format = nullptr;
  ArchiveReport report = AllChecks(std::move(src), path, o, format);
  ApplySkip(o.skip, report.checks);
  if (o.load && o.run) report.not_run = WhyNotRun(report.checks, format, report.not_run_check);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace tsctl
