// inspect's code section: the code records, the classes they declare and
// the operators the methods call.
#include <string>

#include "inspect_internal.h"
#include "tsctl/code_classes.h"
#include "tsctl/error.h"

namespace tsctl::inspect_internal {

void ReadCode(const Archive& a, ArchiveInfo& info) {
  // Code records and the classes they define.
  size_t skipped = 0;
  for (const std::string& name : CodeRecords(a, info.format.legacy, kMaxCodeBytes, &skipped)) {
    const ZipEntry& e = *a.Find(name);
    CodeRecordInfo c{name, e.uncompressed_size, e.compressed_size, a.Has(name + ".debug_pkl")};
    info.code.push_back(c);
    try {
      for (ClassInfo& cls : ParseCodeClasses(name, a.Read(name))) info.classes.push_back(std::move(cls));
    } catch (const Error& err) {
      info.warnings.push_back("code record " + name + ": " + err.what());
    }
  }
  if (skipped) {
    info.warnings.push_back(std::to_string(skipped) + " code records not read: the code holds more than " +
                            std::to_string(kMaxCodeBytes >> 20) + " MiB of text");
  }
  if (!info.format.legacy) {
    info.operators = ListOperators(a);
    for (const auto& w : info.operators.warnings) info.warnings.push_back("operators: " + w);
  }
}

}  // namespace tsctl::inspect_internal
