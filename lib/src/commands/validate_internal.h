#pragma once

#include <string>
#include <vector>

#include "tsctl/archive.h"
#include "tsctl/pickle.h"
#include "tsctl/validate.h"

namespace tsctl {

void CheckZip(const Archive& archive, const ValidateOptions& options, std::vector<CheckResult>& out);
void CheckStructure(const Archive& archive, std::vector<CheckResult>& out);

// A pickle record CheckStructure parsed.
struct ParsedPickle {
  std::string record;  // "data.pkl" or "constants.pkl"
  PyRef root;
  PickleFacts facts;
};

// ts.globals (globals outside what torch.jit.save writes) and ts.storage
// (tensor views past their storage record, storages larger than the record).
void CheckPickleContents(const Archive& archive, const std::vector<ParsedPickle>& pickles, std::vector<CheckResult>& out);

}  // namespace tsctl
