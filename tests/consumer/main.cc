// Prints what the installed libtsctl reads from an archive: kind, record count,
// the top-level module's type, its size, the JSON schema version and the size
// of the JSON report (headers beside inspect.h are installed too; none needs a
// JSON library), or the error line; exit 4 for a bad archive.
#include <iostream>

#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/inspect.h"
#include "tsctl/source.h"
#include "tsctl/text_util.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer ARCHIVE\n";
    return 2;
  }
  try {
    tsctl::Archive archive = tsctl::Archive::Open(tsctl::OpenFileSource(argv[1]));
    tsctl::ArchiveInfo info = tsctl::Inspect(archive);
    std::cout << "libtsctl: " << info.kind << ", " << info.records.size() << " records";
    if (info.module) std::cout << ", module " << info.module->type;
    std::cout << ", " << tsctl::HumanBytes(info.file_size) << ", schema " << tsctl::kInspectSchemaVersion
              << ", " << tsctl::RenderJson(info).size() << " bytes of JSON\n";
  } catch (const tsctl::Error& e) {
    std::cerr << "consumer: " << e.what() << '\n';
    return 4;
  }
  return 0;
}
