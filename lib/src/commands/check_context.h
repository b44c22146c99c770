// What one file's checks share (tsctl/validate.h's CheckRow::check): the
// file, validate's options, its report, and the facts that several rows
// read (a record's bytes streamed once for zip.crc and zip.sizes, the
// pickles parsed once for ts.records to ts.device), each made once by the
// first row that asks, so a skipped row costs nothing and the row that
// made a fact is the one whose time includes it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <typeindex>
#include <utility>
#include <vector>

#include "tsctl/validate.h"

namespace tsctl {

class Archive;
class ByteSource;

struct CheckContext {
  CheckContext(const std::string& path, const ValidateOptions& options, ArchiveReport& report)
      : path(path), options(options), report(report) {}

  const std::string& path;
  const ValidateOptions& options;
  ArchiveReport& report;
  const Archive* archive = nullptr;  // a ZIP format's archive
  const ByteSource* src = nullptr;   // another format's bytes (what its runtime is given)
  // Set by a row after which none of the file's other rows, nor its run,
  // applies (ts.kind's FAIL: the ZIP is no TorchScript archive).
  bool stop = false;
  // Every row blocks loading, as CheckRow::blocks_loading (ZipModel::
  // rows_block_loading, when the model is to be loaded).
  bool rows_block = false;

  void Add(CheckResult result) { report.checks.push_back(std::move(result)); }

  // The fact T about this file (T's constructor takes the context), made
  // by the first row that asks; an exception leaves it unmade.
  template <class T>
  const T& Facts() {
    std::shared_ptr<void>& slot = facts_[std::type_index(typeid(T))];
    if (!slot) slot = std::make_shared<T>(*this);
    return *static_cast<const T*>(slot.get());
  }

 private:
  std::map<std::type_index, std::shared_ptr<void>> facts_;
};

// Each row's check in order (CheckRow::check), each timed (TimedStep): a
// row named by --skip is not run and reported SKIP in its place, unless it
// blocks loading (CheckRow::blocks_loading, or the context's rows_block: it
// runs, for what it keeps from LibTorch, and ApplySkip reports it SKIP);
// rows without a function (a runtime's) are left to the run; none after a
// row that sets `stop`.
void RunRows(const std::vector<CheckRow>& rows, CheckContext& context);

}  // namespace tsctl
