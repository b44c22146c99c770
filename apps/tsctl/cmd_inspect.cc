// tsctl inspect ARCHIVE...: everything inside an archive, without LibTorch.
#include <iostream>
#include <memory>

#include "cli.h"
#include "tsctl/format.h"

namespace tsctl::cli {
namespace {

struct InspectFlags {
  std::vector<std::string> archives;
  OutputFormat format = OutputFormat::kText;
  bool verify = false;
  bool no_records = false;
  bool no_code = false;
};

int RunInspect(const InspectFlags& f, const GlobalOptions& global) {
  bool first = true;
  return ForEachArchive("inspect", f.archives, global, [&](const std::string& path) {
    const OpenedFile file = Open(path, global.max_input_bytes);
    InspectRequest request;
    request.format = f.format;
    request.verify_crc = f.verify;
    request.text.show_records = !f.no_records;
    request.text.show_code = !f.no_code;
    const std::string document = Need<&Format::inspect>(file, "inspect")(file, request);
    if (!first && f.format != OutputFormat::kJson) std::cout << '\n';
    std::cout << document;
    first = false;
  });
}

}  // namespace

RunFn BindInspect(CLI::App* sub, const GlobalOptions& global) {
  auto flags = std::make_shared<InspectFlags>();
  sub->add_option("archives", flags->archives, "TorchScript archives (.pt, .ptl, ...), .pt2 archives or ExecuTorch files (.pte, .ptd, .bpte)")->required();
  AddFormatOption(sub, flags->format, {OutputFormat::kText, OutputFormat::kJson});  // json: one document per archive and line
  sub->add_flag("--verify", flags->verify, "Also read tensor data records and check their CRC-32");
  sub->add_flag("--no-records", flags->no_records, "Text output: leave out the record table");
  sub->add_flag("--no-code", flags->no_code, "Text output: leave out code records and classes");
  return [flags, &global] { return RunInspect(*flags, global); };
}

}  // namespace tsctl::cli
