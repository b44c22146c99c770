// tsctl-pte-runner --bench --profile: after the timed calls, the method run
// again on the same inputs in a Module of its own whose event tracer is
// ExecuTorch's ETDumpGen (devtools/etdump), so the timed calls carry no
// tracer; the ETDump it records is sent to tsctl, which writes it
// (--etdump FILE) and builds the per-operator table from it.
#include <executorch/devtools/etdump/etdump_flatcc.h>
#include <executorch/extension/module/module.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "runner_support.h"

namespace tsctl {

using ::executorch::extension::Module;
using nlohmann::json;

json ProfileMethod(const std::string& program, const std::vector<std::string>& data, const std::string& name,
                   const std::vector<executorch::runtime::EValue>& inputs, int calls, std::string& etdump) {
  auto tracer = std::make_unique<executorch::etdump::ETDumpGen>();
  executorch::etdump::ETDumpGen* gen = tracer.get();
  Module module = data.empty() ? Module(program, Module::LoadMode::File, std::move(tracer))
                               : Module(program, data, Module::LoadMode::File, std::move(tracer));
  if (auto e = module.load_method(name); e != executorch::runtime::Error::Ok) {
    return {{"profile_error", "loading the method again: " + ErrorName(e)}};
  }
  for (int i = 0; i < calls; ++i) {
    auto out = module.execute(name, inputs);
    if (!out.ok()) return {{"profile_error", "a profiled call: " + ErrorName(out.error())}};
  }
  executorch::etdump::ETDumpResult dump = gen->get_etdump_data();
  if (!dump.buf || dump.size == 0) return {{"profile_error", "the event tracer recorded nothing"}};
  etdump.assign(static_cast<const char*>(dump.buf), dump.size);
  std::free(dump.buf);
  return {{"profiled_calls", calls}};
}

}  // namespace tsctl
