// The two ZIP formats (TorchScript archives, .pt2) inside the commands that
// take an Archive: what differs between them, one row each, chosen once from
// the archive's records (ZipModelOf). The format rows of tsctl/format.h
// (lib/src/formats/, above the commands) name their ZipModel, which is how a
// ZIP is recognised as theirs; inspect, report, the checks before a load,
// bench, migrate and stamp ask the row, and none of them branches on the
// archive's kind. A new ZIP format is a row here (a file of its own in
// lib/src/commands/) and a line in ZipModels(). Private to lib/src.
#pragma once

#include <string>
#include <vector>

#include "tsctl/archive.h"
#include "tsctl/bench.h"
#include "tsctl/inspect.h"
#include "tsctl/report.h"
#include "tsctl/run_spec.h"
#include "tsctl/validate.h"

namespace tsctl {

struct ZipModel {
  const char* name;  // its format row's name ("torchscript", "pt2")
  // The archive's records make it one of this format's (OpenModel has read
  // and classified them). The last row claims every ZIP no other row does.
  bool (*claims)(const Archive& archive);
  // inspect: what the format's records say of the model (info.code,
  // info.module, info.pt2, operators, totals), after the records and the
  // version are read and before extra/ (tsctl::Inspect).
  void (*read)(const Archive& archive, ArchiveInfo& info);
  // The format's rows of validate's table (its format row's checks), which
  // every command also runs before LibTorch loads the archive
  // (CheckBeforeLoad), after the ZIP's (zip.*).
  const std::vector<CheckRow>& (*checks)();
  // A FAIL of any of those rows or the ZIP's keeps the archive from its
  // runtime (a .pt2 package is extracted to disk whole): validate runs the
  // rows --skip names all the same when it loads (CheckContext::
  // rows_block), and reports them SKIP. false: only the rows marked
  // CheckRow::blocks_loading do.
  bool rows_block_loading = false;
  // report: the page's graphs (options.graphs), and the inputs the archive
  // keeps (nullptr: it keeps none), each failure a note or warning on the page.
  void (*report_graphs)(const Archive& archive, const ReportOptions& options, ReportContents& report);
  void (*report_inputs)(const Archive& archive, ReportContents& report);
  // bench and bench --sweep: checks `archive` (opened from options.path) as
  // LibTorch will load it (tsctl::Error otherwise: kRefused, kUnavailable,
  // kUsage), fills `options` (load_path, inputs, the .pt2's run) and
  // `inputs` (a file it wrote), and returns the archive, to be held open
  // until the child has run: LibTorch loads its descriptor.
  Archive (*prepare_bench)(Archive archive, BenchOptions& options, ResolvedInputs& inputs);
  // Why tsctl migrate (TorchScript to .pt2) does not convert an archive of
  // this format; "" when it does.
  const char* migrate_refusal;
  // Why tsctl stamp cannot write extra/ records into `archive` (tsctl::Error
  // thrown); nullptr: it always can.
  void (*refuse_stamp)(const Archive& archive);
};

// The rows, in the order their claims are asked (the catch-all last).
const std::vector<const ZipModel*>& ZipModels();

// The row whose claims `archive` meets (the last row's, TorchScript's, for
// every ZIP no other row claims: validate's ts.kind says what it is).
const ZipModel& ZipModelOf(const Archive& archive);

extern const ZipModel kTorchScriptModel;  // torchscript_model.cc
extern const ZipModel kPt2Model;          // pt2_model.cc

}  // namespace tsctl
