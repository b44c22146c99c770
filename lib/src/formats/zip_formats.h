// What the ZIP formats (TorchScript, .pt2) share: inspect and the report
// page read either through Inspect and BuildReport (formats.cc).
#pragma once

#include <string>

#include "tsctl/format.h"

namespace tsctl {

std::string InspectZipArchive(const OpenedFile& file, const InspectRequest& request);
std::string ZipArchivePage(const OpenedFile& file, const PageRequest& request);

}  // namespace tsctl

namespace tsctl {

// compat: what loading needs (torchscript/torchscript_compat.cc, pt2/pt2_compat.cc).
CompatNeeds TorchScriptNeeds(const OpenedFile& file);
// The zip.crc and zip.sizes failures of `archive` (records PyTorchStreamReader
// and Python's zipfile refuse to read), and ts.records' for TorchScript, into
// `needs.damage` (torchscript/torchscript_compat.cc).
void AddZipDamage(const Archive& archive, CompatNeeds& needs);
CompatNeeds Pt2Needs(const OpenedFile& file);

}  // namespace tsctl
