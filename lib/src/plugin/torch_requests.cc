// Each request of the LibTorch door (torch_child.h): what its child reads
// and writes (Files, the parent's side: the sandbox's policy) and its work
// in the child (Run), side by side.
#include "operator_libraries.h"
#include "plugin_abi.h"
#include "torch_child.h"

namespace tsctl {
namespace {

using Profile = SandboxPolicy::Profile;

bool OnCuda(const std::string& device) { return device.rfind("cuda", 0) == 0; }

// The model check and bench load a .pt2's package in a profile of its own.
Profile ProfileOf(const Pt2RunSpec& pt2) { return pt2.kind != Pt2RunSpec::Kind::kNone ? Profile::kPackage : Profile::kArchive; }

}  // namespace

RequestFiles GraphRequest::Files() const { return {{options.path, options.load_path}, {}, options.load_libraries}; }
ChildValue GraphRequest::Run(const ChildWork& work) const { return work.backend.Graph(options); }

RequestFiles CompiledCodeRequest::Files() const { return {{path}, {}, load_libraries}; }
ChildValue CompiledCodeRequest::Run(const ChildWork& work) const {
  LoadOperatorLibraries(load_libraries);
  return work.backend.CompiledCode(path, method);
}

RequestFiles CheckRequest::Files() const {
  const ModelCheckOptions& o = options;
  return {{o.path, o.load_path, o.reference_path, o.load_inputs_path, o.pt2.sample_inputs_path},
          {o.save_outputs_path, o.save_inputs_path, o.record_reference_path},
          o.load_libraries,
          ProfileOf(o.pt2),
          OnCuda(o.device)};
}
ChildValue CheckRequest::Run(const ChildWork& work) const {
  ModelCheckOptions o = options;
  o.progress = work.progress;
  return work.backend.CheckModel(o);
}

RequestFiles BenchRequest::Files() const {
  const BenchOptions& o = options;
  return {{o.path, o.load_path, o.load_inputs_path}, {o.save_outputs_path, o.trace_path}, o.load_libraries,
          ProfileOf(o.pt2), OnCuda(o.device)};
}
ChildValue BenchRequest::Run(const ChildWork& work) const {
  BenchOptions o = options;
  if (o.progress) o.progress = work.progress;  // the parent asked for progress
  return work.backend.Bench(o);
}

RequestFiles TraceRequest::Files() const {
  const TraceOptions& o = options;
  return {{o.path, o.load_path, o.load_inputs_path}, {o.output, o.save_outputs_path}, o.load_libraries};
}
ChildValue TraceRequest::Run(const ChildWork& work) const { return work.backend.Trace(options); }

RequestFiles ScriptRequest::Files() const { return {{}, {options.output}, options.load_libraries}; }
ChildValue ScriptRequest::Run(const ChildWork& work) const { return work.backend.ScriptSource(options); }

RequestFiles BuildInfoRequest::Files() const {
  RequestFiles f;
  f.cuda = true;  // it asks the driver for devices
  return f;
}
ChildValue BuildInfoRequest::Run(const ChildWork& work) const {
  BuildInfo info = work.backend.Info();
  if (registry) info.registry = work.backend.Registry();
  return info;
}

RequestFiles DataLoaderRequest::Files() const { return {{file}, {}, {}, Profile::kPython}; }
ChildValue DataLoaderRequest::Run(const ChildWork&) const {
  auto [suffix, bytes] = LoadPythonPlugin().LoadData(file, name);
  return suffix + '\n' + bytes;
}

RequestFiles PythonMakeRequest::Files() const { return {{}, {}, request.load_libraries, Profile::kPython}; }
ChildValue PythonMakeRequest::Run(const ChildWork&) const {
  LoadOperatorLibraries(request.load_libraries);
  return LoadPythonPlugin().Make(request);
}

RequestFiles PythonMigrateRequest::Files() const { return {{request.file}, {}, request.load_libraries, Profile::kPython}; }
ChildValue PythonMigrateRequest::Run(const ChildWork&) const {
  LoadOperatorLibraries(request.load_libraries);
  return LoadPythonPlugin().Migrate(request);
}

}  // namespace tsctl
