// tsctl inspect ARCHIVE...: everything inside an archive, without LibTorch.
#include <iostream>
#include <memory>

#include "cli.h"
#include "tsctl/escape.h"
#include "tsctl/archive.h"
#include "tsctl/zip_structure.h"
#include "tsctl/inspect.h"
#include "tsctl/pte.h"

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
    if (IsPteFile(path)) {  // ExecuTorch: .pte, .ptd, .bpte
      const PteFile pte = ReadPte(path);
      if (!first && f.format != OutputFormat::kJson) std::cout << '\n';
      std::cout << Render(pte, path, f.format);
      first = false;
      return;
    }
    Archive archive = Archive::OpenSoundModel(path, global.max_input_bytes);  // TorchScript or .pt2
    InspectOptions options;
    options.verify_crc = f.verify;
    ArchiveInfo info = Inspect(archive, options);
    if (!first && f.format != OutputFormat::kJson) std::cout << '\n';
    TextOptions text;
    text.show_records = !f.no_records;
    text.show_code = !f.no_code;
    std::cout << Render(info, f.format, text);
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
