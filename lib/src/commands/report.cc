// `tsctl report` of a TorchScript archive or a .pt2: inspect's result, plus
// the code's text (bounded), the producer record and the stored inputs; and
// what `tsctl report A B` reads of two archives or two ExecuTorch files.
#include "tsctl/report.h"

#include <algorithm>
#include <utility>

#include "../archive/json_input.h"
#include "../archive/producer.h"
#include "diff_internal.h"
#include "tsctl/error.h"
#include "tsctl/text_util.h"
#include "zip_model.h"

namespace tsctl {
namespace {

constexpr size_t kMaxProducerFields = 200;
constexpr size_t kMaxProducerValue = 512;
constexpr int kMaxProducerDepth = 4;

std::string Cut(std::string s, size_t max) {
  if (s.size() > max) s = s.substr(0, Utf8CutPoint(s, max)) + "...";
  return s;
}

// Nested objects become dotted keys ("ci.GITHUB_SHA"); arrays and deeper
// objects stay JSON text.
void FlattenJson(const nlohmann::json& j, const std::string& prefix, int depth,
                 std::vector<std::pair<std::string, std::string>>& out) {
  for (auto it = j.begin(); it != j.end() && out.size() < kMaxProducerFields; ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object() && depth < kMaxProducerDepth) {
      FlattenJson(*it, key, depth + 1, out);
    } else {
      out.emplace_back(key, Cut(it->is_string() ? it->get<std::string>() : it->dump(), kMaxProducerValue));
    }
  }
}

void ReadProducer(const Archive& a, ReportContents& report) {
  const std::string record = std::string("extra/") + kProducerRecord;
  if (!a.Has(record)) return;
  try {
    const nlohmann::json j = ParseJsonInput(a.Read(record, 1 << 20), record);
    if (j.is_object()) FlattenJson(j, "", 0, report.producer);
  } catch (const Error& e) {
    report.warnings.push_back(std::string("producer record: ") + e.what());
  }
}

void ReadCodeText(const Archive& a, const ReportOptions& options, ReportContents& report) {
  uint64_t spent = 0;
  for (const CodeRecordInfo& c : report.info.code) {
    ReportCode code{c.name, c.size, "", false, false, ""};
    if (spent >= options.max_code_total) {
      code.omitted = true;
      report.code.push_back(std::move(code));
      continue;
    }
    try {
      std::string text = a.Read(c.name, kMaxCodeBytes);
      const uint64_t room = std::min(options.max_code_record, options.max_code_total - spent);
      if (text.size() > room) {
        text.resize(Utf8CutPoint(text, room));
        code.truncated = true;
      }
      spent += text.size();
      code.text = std::move(text);
    } catch (const Error& e) {
      code.error = e.what();
    }
    report.code.push_back(std::move(code));
  }
}

}  // namespace

ReportContents BuildReport(const Archive& archive, const ReportOptions& options) {
  ReportContents report;
  report.info = Inspect(archive);
  ReadCodeText(archive, options, report);
  ReadProducer(archive, report);
  const ZipModel& model = ZipModelOf(archive);
  if (model.report_inputs) model.report_inputs(archive, report);
  if (options.graphs) {
    model.report_graphs(archive, options, report);
    LayoutReportGraphs(report.graphs, options.layout);
  }
  return report;
}

ReportDiffContents BuildDiffReport(const Archive& a, const Archive& b, const DiffOptions& options) {
  // The page shows each side's summary and sizes, not its code: no code is read.
  ReportOptions no_code;
  no_code.max_code_record = 0;
  no_code.max_code_total = 0;
  no_code.graphs = false;
  auto side = [&](const Archive& archive) {
    try {
      return BuildReport(archive, no_code);
    } catch (const Error& e) {
      throw Error(e.kind(), archive.source().Name() + ": " + e.what(), e.detail());
    }
  };
  ReportDiffContents r{side(a), side(b), {}};
  r.diff = DiffArchives(a, r.a.info, b, r.b.info, options);
  return r;
}

ReportPteDiffContents BuildPteDiffReport(const std::string& path_a, const std::string& path_b,
                                         const DiffOptions& options, uint64_t max_input_bytes) {
  using namespace diff_internal;
  PteSide a = ReadPteSide(path_a, max_input_bytes);
  PteSide b = ReadPteSide(path_b, max_input_bytes);
  ReportPteDiffContents r;
  r.diff = DiffPteSides(a, path_a, b, path_b, options);
  r.records_a = PteRecordSizes(a);
  r.records_b = PteRecordSizes(b);
  r.a = std::move(a.file);
  r.b = std::move(b.file);
  return r;
}

}  // namespace tsctl
