// ReadETDump (tsctl/pte.h): ExecuTorch's event tracer's record, read with
// the FlatBuffers verifier over etdump.fbs. ETDumpGen (flatcc) writes it
// size-prefixed; an unprefixed one is read too.
#include <cstring>

#include "etdump_generated.h"
#include "pte_internal.h"
#include "tsctl/pte.h"

namespace tsctl {


namespace {

PteRunData ReadRun(const etdump_fb::RunData& run, pte_internal::Budget& budget) {
  PteRunData out;
  if (run.name()) {
    budget.Spend(run.name()->size());
    out.name = run.name()->str();
  }
  out.bundled_input_index = run.bundled_input_index();
  if (!run.events()) return out;
  budget.Spend(run.events()->size());
  for (const etdump_fb::Event* e : *run.events()) {
    if (e->allocation_event()) ++out.allocation_events;
    if (e->debug_event()) ++out.debug_events;
    const etdump_fb::ProfileEvent* p = e->profile_event();
    if (!p) continue;
    PteProfileEvent ev;
    if (p->name()) {
      budget.Spend(p->name()->size());
      ev.name = p->name()->str();
    }
    ev.chain = p->chain_index();
    ev.instruction = p->instruction_id();
    ev.delegate_id = p->delegate_debug_id_int();
    if (p->delegate_debug_id_str()) {
      budget.Spend(p->delegate_debug_id_str()->size());
      ev.delegate_name = p->delegate_debug_id_str()->str();
    }
    ev.start = p->start_time();
    ev.end = p->end_time();
    out.events.push_back(std::move(ev));
  }
  return out;
}

}  // namespace

PteETDump ReadETDump(std::string_view bytes, const std::string& name) {
  // Size-prefixed: a 4-byte length (the rest of the file), then the buffer.
  bool prefixed = false;
  if (bytes.size() >= 12 && bytes.compare(8, 4, "ED00") == 0) {
    uint32_t n = 0;
    std::memcpy(&n, bytes.data(), 4);
    prefixed = n <= bytes.size() - 4;
  }
  if (!prefixed && !(bytes.size() >= 8 && bytes.compare(4, 4, "ED00") == 0)) {
    pte_internal::Fail(name, "not an ETDump (no ED00 at bytes 4-8, or 8-12 after a size prefix)");
  }
  pte_internal::AlignedBytes copy(bytes.size());
  if (!bytes.empty()) std::memcpy(copy.data(), bytes.data(), bytes.size());
  flatbuffers::Verifier v(copy.data(), bytes.size(), pte_internal::VerifierOptions(bytes.size()));
  const bool ok = prefixed ? etdump_fb::VerifySizePrefixedETDumpBuffer(v) : etdump_fb::VerifyETDumpBuffer(v);
  if (!ok) pte_internal::Fail(name, "the ETDump fails the FlatBuffers verifier: an offset, size, alignment or nesting runs out of bounds");
  const etdump_fb::ETDump* root = prefixed ? etdump_fb::GetSizePrefixedETDump(copy.data()) : etdump_fb::GetETDump(copy.data());
  pte_internal::Budget budget(bytes.size(), name);
  PteETDump out;
  out.version = root->version();
  if (root->run_data()) {
    budget.Spend(root->run_data()->size());
    for (const etdump_fb::RunData* r : *root->run_data()) out.runs.push_back(ReadRun(*r, budget));
  }
  return out;
}

}  // namespace tsctl
