// --skip over validate's table (tsctl/validate.h's CheckTable).
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "tsctl/validate.h"

namespace tsctl {

// --skip: each check named in `skip` becomes SKIP "skipped by --skip"; one
// not in `out` is appended so (a skipped check is reported, never passed).
void ApplySkip(const std::vector<std::string>& skip, std::vector<CheckResult>& out);
// Whether the work that yields `ids` is left out: every one of them is
// named by --skip and none blocks loading (those run, for what they keep
// from LibTorch, and are reported SKIP).
bool LeftOut(const ValidateOptions& options, std::initializer_list<const char*> ids);

}  // namespace tsctl
