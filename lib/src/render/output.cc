// The output switch: each result's Render(result, format), dispatching to its
// renderers (render_*.cc). A new output format is one enum value here and one
// case in the Render of each result that has it.
#include "tsctl/output.h"

#include <sstream>

#include "tsctl/bench.h"
#include "tsctl/diff.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/inspect.h"
#include "tsctl/migrate.h"
#include "tsctl/pte.h"
#include "tsctl/stamp.h"
#include "tsctl/torch_backend.h"
#include "tsctl/validate.h"

namespace tsctl {

namespace {

constexpr std::pair<OutputFormat, const char*> kNames[] = {{OutputFormat::kText, "text"},
                                                           {OutputFormat::kJson, "json"},
                                                           {OutputFormat::kJUnit, "junit"},
                                                           {OutputFormat::kDot, "dot"}};

// What a renderer that writes to a stream wrote.
template <typename F>
std::string Written(F write) {
  std::ostringstream out;
  write(out);
  return out.str();
}

// A result with a text and a JSON document only (most of them): `text()`
// returns the text, `json()` the JSON without its newline.
template <typename Text, typename Json>
std::string TextOrJson(OutputFormat format, const std::string& what, Text text, Json json) {
  switch (format) {
    case OutputFormat::kText: return text();
    case OutputFormat::kJson: return json() + "\n";
    default: NoRenderer(format, what, {OutputFormat::kText, OutputFormat::kJson});
  }
}

}  // namespace

const char* OutputFormatName(OutputFormat format) {
  for (const auto& [f, name] : kNames) {
    if (f == format) return name;
  }
  return "?";
}

std::optional<OutputFormat> OutputFormatByName(std::string_view name) {
  for (const auto& [f, n] : kNames) {
    if (name == n) return f;
  }
  return std::nullopt;
}

void NoRenderer(OutputFormat format, const std::string& what, const std::vector<OutputFormat>& has) {
  std::string names;
  for (OutputFormat f : has) names += (names.empty() ? "" : ", ") + std::string(OutputFormatName(f));
  throw Error(ErrorKind::kUsage, std::string("--format ") + OutputFormatName(format) + " is not an output of " + what +
                                     " (it has " + names + ")");
}

std::string Render(const ArchiveInfo& info, OutputFormat format, const TextOptions& text) {
  return TextOrJson(
      format, "inspect", [&] { return Written([&](std::ostream& out) { RenderText(info, out, text); }); },
      [&] { return RenderJson(info); });
}

std::string Render(const PteFile& file, const std::string& path, OutputFormat format) {
  return TextOrJson(
      format, "inspect", [&] { return RenderPteText(file, path); }, [&] { return RenderPteJson(file, path); });
}

std::string Render(const DiffResult& result, OutputFormat format) {
  return TextOrJson(
      format, "diff", [&] { return Written([&](std::ostream& out) { RenderDiffText(result, out); }); },
      [&] { return RenderJson(result); });
}

std::string Render(const ValidationReport& report, OutputFormat format) {
  switch (format) {
    case OutputFormat::kText: return Written([&](std::ostream& out) { RenderText(report, out); });
    case OutputFormat::kJson: return RenderJson(report) + "\n";
    case OutputFormat::kJUnit: return RenderJUnit(report);
    default: NoRenderer(format, "validate", {OutputFormat::kText, OutputFormat::kJson, OutputFormat::kJUnit});
  }
}

std::string Render(const std::vector<MigrateResult>& results, OutputFormat format) {
  switch (format) {
    case OutputFormat::kText: return RenderMigrateText(results);
    case OutputFormat::kJson: return RenderMigrateJson(results) + "\n";
    case OutputFormat::kJUnit: return RenderMigrateJUnit(results);
    default: NoRenderer(format, "migrate", {OutputFormat::kText, OutputFormat::kJson, OutputFormat::kJUnit});
  }
}

std::string Render(const StampResult& result, OutputFormat format, bool repair_only) {
  return TextOrJson(
      format, "stamp", [&] { return Written([&](std::ostream& out) { RenderText(result, out, repair_only); }); },
      [&] { return RenderJson(result); });
}

std::string RenderStampShow(const ArchiveInfo& info, OutputFormat format) {
  return TextOrJson(
      format, "stamp --show", [&] { return Written([&](std::ostream& out) { RenderStampShowText(info, out); }); },
      [&] { return RenderStampShowJson(info); });
}

std::string Render(const MakeResult& result, OutputFormat format) {
  return TextOrJson(
      format, "trace, script and export", [&] { return Written([&](std::ostream& out) { RenderText(result, out); }); },
      [&] { return RenderJson(result); });
}

std::string RenderGraph(const GraphOptions& options, const std::string& graph, OutputFormat format) {
  switch (format) {
    // The graph holds the archive's strings (a .pt2's node names and targets,
    // source file names from the debug records): escaped as code is, its
    // lines and backslashes kept (LibTorch's own escapes stay as they are).
    case OutputFormat::kText:
    case OutputFormat::kDot: return EscapeText(graph, {.keep_newlines = true, .escape_backslash = false});
    case OutputFormat::kJson: return RenderGraphJson(options, graph) + "\n";
    default: NoRenderer(format, "graph", {OutputFormat::kText, OutputFormat::kJson, OutputFormat::kDot});
  }
}

std::string RenderCode(const std::string& path, const std::string& compiled_method, const std::string& code,
                       OutputFormat format) {
  return TextOrJson(
      format, "code", [&] { return code; }, [&] { return RenderCodeJson(path, compiled_method, code); });
}

std::string Render(const BenchResult& result, const std::vector<double>& percentiles, OutputFormat format) {
  return TextOrJson(
      format, "bench", [&] { return Written([&](std::ostream& out) { RenderText(result, percentiles, out); }); },
      [&] { return RenderJson(result, percentiles); });
}

std::string Render(const std::vector<ShapePoint>& points, const std::vector<double>& percentiles, OutputFormat format) {
  return TextOrJson(
      format, "bench --shapes", [&] { return Written([&](std::ostream& out) { RenderShapes(points, out); }); },
      [&] { return RenderShapesJson(points, percentiles); });
}

std::string Render(const std::vector<SweepRow>& rows, OutputFormat format) {
  return TextOrJson(
      format, "bench --sweep", [&] { return Written([&](std::ostream& out) { RenderSweep(rows, out); }); },
      [&] { return RenderSweepJson(rows); });
}

}  // namespace tsctl
