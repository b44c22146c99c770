// ExecuTorch's files (a program .pte, its external data .ptd, a bundled
// program .bpte): their row of tsctl/format.h. Recognised by the identifier
// in their first bytes (FlatBuffers' file identifier: ET.., FT.., BP..), or
// by their names where the bytes are too few or odd to say (the reader then
// says what they start with). Read by tsctl's own reader (lib/src/pte/).
#include <set>

#include "../../commands/bench_pte.h"
#include "../../commands/compat_internal.h"
#include "../../commands/validate_internal.h"
#include "tsctl/diff.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/format.h"
#include "tsctl/pte.h"
#include "tsctl/report.h"
#include "tsctl/report_graph.h"

namespace tsctl {
namespace {

std::string InspectFile(const OpenedFile& file, const InspectRequest& request) {
  return Render(ReadPte(file.path), file.path, request.format);
}

// A program's instruction chains, as ExecuTorch's print_program prints them.
std::string PteGraph(const OpenedFile& file, const GraphOptions& o, OutputFormat) {
  if (o.inlined || o.frozen) {
    throw Error(ErrorKind::kUsage, "--inlined and --frozen apply to TorchScript archives, not to an ExecuTorch program");
  }
  return RenderPteGraph(ReadPte(file.path, {.chains = true}), o.method, o.format == GraphOptions::Format::kDot);
}

std::string PteCode(const OpenedFile& file, const CodeQuery&) {
  ReadPte(file.path);  // a file that only has the name: the reader's line
  throw Error(ErrorKind::kFormat,
              "an ExecuTorch file (.pte, .ptd or .bpte) holds no TorchScript code: `tsctl graph` prints a program's "
              "instructions, `tsctl inspect` describes it");
}

std::string Page(const OpenedFile& file, const PageRequest&) {
  const PteFile pte = ReadPte(file.path, {.chains = true});
  ReportGraphs graphs = PteReportGraphs(pte);
  LayoutReportGraphs(graphs);
  return RenderReportHtml(pte, file.path, graphs);
}

// What ExecuTorch's Method::init needs: a kernel for every operator
// (name.overload), a backend for every delegate. A .bpte: its program's; a
// .ptd is loaded with a program, not alone.
CompatNeeds Needs(const OpenedFile& file) {
  const PteFile pte = ReadPte(file.path);
  CompatNeeds n;
  n.overloads_known = true;
  if (pte.kind == PteKind::kFlatTensor) {
    n.format = "ExecuTorch data file (.ptd)";
    return n;
  }
  const PteProgram& p = pte.program;
  n = PteProgramNeeds(p);
  n.format = pte.kind == PteKind::kBundled ? "ExecuTorch bundled program" : "ExecuTorch program";
  // Tensors in a .ptd: the runtime loads the program only with it.
  const std::vector<std::string> external = PteExternalTensors(p);
  if (!external.empty()) {
    const std::string beside = PteDataBeside(file.path);
    std::set<std::string> keys;
    if (!beside.empty()) keys = PteDataKeys(ReadPte(beside));
    size_t lacking = 0;
    for (const std::string& k : external) lacking += keys.count(k) == 0;
    if (beside.empty() || lacking) {
      n.notes.push_back(std::to_string(external.size()) + " tensors are stored outside the program, " +
                        (beside.empty() ? std::string("and no .ptd named as the program is beside it")
                                        : std::to_string(lacking) + " of them not in " + EscapeText(beside)) +
                        ": it loads only with the .ptd that holds them");
    }
  }
  return n;
}

DiffResult DiffPair(const DiffRequest& r) { return DiffPteFiles(r.a, r.b, r.options, r.max_input_bytes); }

std::string ReportPair(const DiffRequest& r) {
  return RenderReportDiffHtml(BuildPteDiffReport(r.a, r.b, r.options, r.max_input_bytes));
}

}  // namespace

extern const Format kExecuTorchFormat;
const Format kExecuTorchFormat = {
    .name = "executorch",
    .head_bytes = kPteHeadBytes,
    .claims_head = LooksLikePte,
    .extensions = {".pte", ".ptd", ".bpte"},
    .inspect = InspectFile,
    .graph = PteGraph,
    .stored_code = PteCode,
    .report_page = Page,
    .checks = PteCheckRows(),
    .run = PteRun,
    .reads_pairs = true,
    .diff_pair = DiffPair,
    .report_pair = ReportPair,
    .bench = BenchPte,
    .compat = Needs,
    .not_run = "the ExecuTorch program was not loaded or run",
};

}  // namespace tsctl
