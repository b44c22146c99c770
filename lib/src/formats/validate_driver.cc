// validate's driver: one file's checks, by its format's row (tsctl/format.h).
// A format's own checks are its row's; what every file gets is here: the
// ZIP container's checks for the ZIP formats, --skip, the time limit and
// the NOT RUN verdict.
#include <algorithm>
#include <chrono>
#include <optional>

#include "../commands/check_context.h"
#include "../commands/validate_internal.h"
#include "../commands/zip_model.h"
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

// Whether --skip names a check of `stage` that a file of `format` reports:
// one of its row's own checks, or for a ZIP format (nullptr: one not yet
// known) one of the LibTorch run's rows they share.
bool Skips(const ValidateOptions& options, CheckRow::Stage stage, const Format* format) {
  auto has = [](const std::vector<CheckRow>& rows, const std::string& id) {
    return std::any_of(rows.begin(), rows.end(), [&](const CheckRow& r) { return id == r.id; });
  };
  for (const std::string& id : options.skip) {
    const CheckRow* row = CheckRowOf(id);
    if (!row || row->stage != stage) continue;
    if ((format && has(format->checks, id)) || ((!format || format->zip) && has(RunCheckRows(), id))) return true;
  }
  return false;
}

// The options a file of `format` is checked with: --skip of its runtime's
// load check (torch.load, pte.load) loads nothing, as --no-load does; of
// its run check (torch.run, pte.run) runs nothing, as --no-run does.
ValidateOptions ForFormat(ValidateOptions options, const Format* format) {
  if (Skips(options, CheckRow::Stage::kLoad, format)) options.load = false;
  if (Skips(options, CheckRow::Stage::kRun, format)) options.run = false;
  return options;
}

// `effective`: the options the file was checked with (ForFormat's).
ArchiveReport AllChecks(std::unique_ptr<ByteSource> src, const std::string& path, const ValidateOptions& given,
                        const Format*& format, ValidateOptions& effective) {
  ArchiveReport report;
  report.path = path;
  Json(report.details) = json::object();
  auto& out = report.checks;
  // A file that says what it is in its first bytes is read by its own
  // reader, never as a damaged ZIP.
  if ((format = FormatOfHead(*src))) {
    effective = ForFormat(given, format);
    CheckContext context(path, effective, report);
    context.src = src.get();
    RunRows(format->checks, context);
    if (format->run) format->run(context);
    return report;
  }
  effective = ForFormat(given, nullptr);  // a ZIP format's: LibTorch's load and run
  const ValidateOptions& options = effective;
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
  CheckContext context(path, options, report);
  context.archive = &*archive;
  format = FormatOfArchive(*archive);
  context.rows_block = options.load && format && format->zip->rows_block_loading;
  RunRows(ZipCheckRows(), context);
  if (!format) return report;
  RunRows(format->checks, context);
  if (format->run) format->run(context);
  return report;
}

// NOT RUN: the model was to be loaded and run (no --no-load, --no-run or
// --skip asked otherwise) and no check says it ran (CheckResult::model_ran:
// a run on given, stored or cleanly inferred inputs, or a run that failed).
// Why: what the last load or run check (a row with a Stage: torch.load,
// torch.method, torch.run, pte.load, pte.run) that is not a PASS says (its id in `from`),
// the format's own word where there is none; "" when it ran.
std::string WhyNotRun(const std::vector<CheckResult>& checks, const Format* format, std::string& from) {
  std::string why;
  from.clear();
  for (const CheckResult& c : checks) {
    if (c.model_ran) {
      from.clear();
      return "";
    }
    const CheckRow* row = CheckRowOf(c.id);
    if (row && row->stage != CheckRow::Stage::kNone && c.status != CheckStatus::kPass) {
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
  const bool load = options.load && !Skips(options, CheckRow::Stage::kLoad, nullptr);
  if (load) RequireRegularFile(path, "LibTorch loads", "(or pass --no-load)");
  std::unique_ptr<ByteSource> src = OpenFileSource(path);
  return ValidateSource(std::move(src), path, options);
}

ArchiveReport ValidateSource(std::unique_ptr<ByteSource> src, const std::string& path, const ValidateOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  ValidateOptions o = options;
  if (o.timeout_seconds <= 0) o.timeout_seconds = ValidateTimeout(src->Size());
  const Format* format = nullptr;
  ValidateOptions effective = o;
  ArchiveReport report = AllChecks(std::move(src), path, o, format, effective);
  ApplySkip(o.skip, report.checks);
  if (effective.load && effective.run) report.not_run = WhyNotRun(report.checks, format, report.not_run_check);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace tsctl
