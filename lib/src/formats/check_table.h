// --skip over validate's table (tsctl/validate.h's CheckTable).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tsctl/validate.h"

namespace tsctl {

// The row of `id` among `rows`; null if none.
const CheckRow* CheckRowOf(const std::vector<CheckRow>& rows, std::string_view id);

// --skip: each check named in `skip` becomes SKIP "skipped by --skip"; one
// not in `out` is appended so (a skipped check is reported, never passed).
void ApplySkip(const std::vector<std::string>& skip, std::vector<CheckResult>& out);

}  // namespace tsctl
