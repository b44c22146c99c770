// Whether tsctl can vouch for an archive's ZIP structure before reading
// records from it or writing into it.
#pragma once

#include "tsctl/zip.h"

namespace tsctl {

// Throws tsctl::Error (kFormat) naming the first record whose local header
// is damaged (missing signature, a name differing from the central
// directory, data past the end), with how many more are. Commands that read
// records or write into an archive (inspect, code, graph, stamp) refuse an
// archive whose structure they cannot vouch for; validate reports the same
// damage as a zip.structure FAIL instead.
void RequireSoundStructure(const ZipLayout& layout);

}  // namespace tsctl
