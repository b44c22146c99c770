// bench --profile of an ExecuTorch program: the per-operator table built
// from the ETDump that ExecuTorch's own event tracer (ETDumpGen) recorded
// (tsctl-pte-runner --profile). Each profiling event of a kernel call names
// the instruction it timed (chain, instruction id): the operator is read
// from that instruction of the program (tsctl's reader), as ExecuTorch's
// Inspector names it; a delegate call is named by its backend. Events with
// no instruction (the method's whole execution) are not operators.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "bench_pte.h"

namespace tsctl {
namespace {

// What instruction `i` of chain `c` of `m` calls: "aten::add.out",
// "delegate XnnpackBackend", or "" where it names none.
std::string InstructionName(const PteMethod& m, int64_t c, int64_t i) {
  if (c < 0 || i < 0 || static_cast<size_t>(c) >= m.chain_list.size()) return "";
  const std::vector<PteInstruction>& ins = m.chain_list[static_cast<size_t>(c)].instructions;
  if (static_cast<size_t>(i) >= ins.size()) return "";
  const PteInstruction& in = ins[static_cast<size_t>(i)];
  if (in.kind == PteInstructionKind::kKernelCall && in.target >= 0 && static_cast<size_t>(in.target) < m.operators.size()) {
    return PteOperatorKey(m.operators[static_cast<size_t>(in.target)]);
  }
  if (in.kind == PteInstructionKind::kDelegateCall && in.target >= 0 && static_cast<size_t>(in.target) < m.delegates.size()) {
    return "delegate " + m.delegates[static_cast<size_t>(in.target)].backend_id;
  }
  return "";
}

}  // namespace

std::vector<OpStat> PteOperatorProfile(const PteETDump& dump, const PteFile& program, const std::string& method,
                                       uint64_t& profiled_ns) {
  const PteMethod* m = nullptr;
  for (const PteMethod& x : program.program.methods) {
    if (x.name == method) m = &x;
  }
  // Per instruction ExecuTorch records two events: the instruction's
  // (OPERATOR_CALL, DELEGATE_CALL: arguments and dispatch included), and
  // inside it the kernel's own (native_call_NAME). The first is an
  // operator's total, the second its self time.
  std::map<std::string, OpStat> by_name;
  std::map<std::string, uint64_t> kernel_events;
  std::vector<std::string> order;
  profiled_ns = 0;
  for (const PteRunData& run : dump.runs) {
    for (const PteProfileEvent& e : run.events) {
      // The method's own events (Method::execute, Method::init) name no
      // instruction; a delegate's events inside its call carry its debug id.
      if (e.chain < 0 || e.instruction < 0 || e.end < e.start) continue;
      if (e.delegate_id >= 0 || !e.delegate_name.empty()) continue;
      std::string name = m ? InstructionName(*m, e.chain, e.instruction) : "";
      if (name.empty()) name = e.name.rfind("native_call_", 0) == 0 ? e.name.substr(12) : e.name;
      auto [it, fresh] = by_name.try_emplace(name);
      if (fresh) order.push_back(name);
      OpStat& op = it->second;
      op.name = name;
      const uint64_t ns = e.end - e.start;
      if (e.name == "OPERATOR_CALL" || e.name == "DELEGATE_CALL") {
        op.calls += 1;
        op.total_ns += ns;
        profiled_ns += ns;
      } else {
        op.self_ns += ns;
        kernel_events[name] += 1;
      }
    }
  }
  std::vector<OpStat> out;
  for (const std::string& n : order) {
    OpStat op = by_name[n];
    if (op.calls == 0) {  // only the kernel's events: they are its calls and its time
      op.calls = kernel_events[n];
      op.total_ns = op.self_ns;
      profiled_ns += op.self_ns;
    }
    if (kernel_events[n] == 0) op.self_ns = op.total_ns;  // a delegate call: no event inside
    out.push_back(op);
  }
  std::stable_sort(out.begin(), out.end(), [](const OpStat& a, const OpStat& b) { return a.self_ns > b.self_ns; });
  return out;
}

}  // namespace tsctl
