// The one door from libtsctl to the LibTorch plugin: every piece of LibTorch
// work runs in a child process forked from the LibTorch server
// (torch_server.h: a fresh executable image that loaded the plugin and built
// LibTorch's lazily built tables once, TorchBackend::PrepareForFork, and
// never loads an archive or runs a model itself; tsctl itself never loads
// LibTorch to check an archive), so that a crash, hang or runaway allocation
// inside LibTorch on a hostile archive becomes data instead of taking tsctl
// down, and a model's code finds nothing of tsctl's in its memory.
//
// One typed request in (a variant of the commands' requests), one typed
// outcome back (the value, the tsctl::Error the child threw, or how it
// died), over one codec with one version check (torch_child_codec.h). The
// limits every child gets live here once: a timeout, a memory cap, death
// with its parent, and the caller's interrupt (SIGINT/SIGTERM/SIGHUP) passed
// on to it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tsctl/bench.h"
#include "tsctl/error.h"
#include "child_output.h"
#include "model_check.h"
#include "tsctl/progress_event.h"
#include "plugin_abi.h"
#include "sandbox.h"
#include "tsctl/torch_backend.h"
#include "tsctl/validate.h"

namespace tsctl {

// What a request's answer may be (and, last, what a validate --jobs
// worker answers with: commands/validate_batch.cc; one codec for every
// process that answers tsctl).
using ChildValue =
    std::variant<std::string, ModelCheckResult, BenchResult, MakeResult, BuildInfo, ArchiveReport, MigrateResult>;

// What a request's child reads and writes, and how it is confined (sandbox.h).
struct RequestFiles {
  std::vector<std::string> reads, writes, libraries;
  SandboxPolicy::Profile profile = SandboxPolicy::Profile::kArchive;
  bool cuda = false;
};

// What a request's work has in its child: the plugin, and where its
// progress events go (to the parent, as they come).
struct ChildWork {
  const TorchBackend& backend;
  std::function<void(const ProgressEvent&)> progress;
};

// The requests, one per kind of work, each with what its child reads and
// writes (Files: its sandbox, torch_child_sandbox.cc adds the rest) and the
// work itself (Run, in the child), both in torch_requests.cc; what crosses
// to the child is its fields, whose codec (torch_child_codec.cc) fails to
// compile when one is missing. A new kind of work is a struct here, its two
// functions, its codec line and its place in ChildRequest. Build them with
// designated initializers (`GraphRequest{.options = o}`), so a reordered
// field is a compile error rather than a silent swap.
struct GraphRequest {
  GraphOptions options;
  RequestFiles Files() const;
  ChildValue Run(const ChildWork& work) const;
};
struct CompiledCodeRequest {
  std::string path;
  std::string method;
  std::vector<std::string> load_libraries;
  RequestFiles Files() const;
  ChildValue Run(const ChildWork& work) const;
};
struct CheckRequest {
  ModelCheckOptions options;
  RequestFiles Files() const;
  ChildValue Run(const ChildWork& work) const;
};
struct BenchRequest {
  BenchOptions options;
  RequestFiles Files() const;
  ChildValue Run(const ChildWork& work) const;
};
// trace and script of TorchScript source (--python: PythonMakeRequest).
struct TraceRequest {
  TraceOptions options;
  RequestFiles Files() const;
  ChildValue Run(const ChildWork& work) const;
};
struct ScriptRequest {
  ScriptOptions options;
  RequestFiles Files() const;
  ChildValue Run(const ChildWork& work) const;
};
// tsctl --version: what LibTorch is and which CUDA devices it sees (asked in
// a child: this process never loads LibTorch, and the server never touches
// a device before it forks).
struct BuildInfoRequest {
  bool registry = false;  // also BuildInfo::registry (tsctl compat --dump-runtime torch)
  RequestFiles Files() const;
  ChildValue Run(const ChildWork& work) const;
};
// A data loader (--data-loader-script FILE:NAME) run in the embedded Python:
// answers its first argument set as "SUFFIX\nBYTES" (PythonBackend::LoadData).
struct DataLoaderRequest {
  std::string file;
  std::string name;
  RequestFiles Files() const;
  ChildValue Run(const ChildWork& work) const;
};
// trace/script --python and tsctl export: the embedded Python in the child
// (an interrupt kills the child, and the parent removes what it wrote),
// after the operator libraries.
struct PythonMakeRequest {
  PythonRequest request;  // its load_libraries are loaded first
  RequestFiles Files() const;
  ChildValue Run(const ChildWork& work) const;
};
// tsctl migrate: the embedded Python converts and verifies (PythonBackend::Migrate).
struct PythonMigrateRequest {
  PythonRequest request;
  RequestFiles Files() const;
  ChildValue Run(const ChildWork& work) const;
};
using ChildRequest = std::variant<GraphRequest, CompiledCodeRequest, CheckRequest, BenchRequest, TraceRequest, ScriptRequest,
                                  DataLoaderRequest, PythonMakeRequest, BuildInfoRequest, PythonMigrateRequest>;

struct ChildLimits {
  double timeout_seconds = 0;  // 0: none
  // 0: kDefaultChildTimeout (every child is bounded in time).
  // The child's address-space growth past what it inherited (RLIMIT_DATA,
  // and RLIMIT_AS, which counts shared and file mappings too);
  // 0: DefaultChildMemoryLimit().
  uint64_t memory_bytes = 0;
  // LibTorch's intra-op threads in the child (0: LibTorch's default), so that
  // children running side by side do not oversubscribe the cores.
  int threads = 0;
  // The largest file the child may send back (an output, a reference, a
  // trace: streamed to its path, never held); 0: none but its memory cap.
  uint64_t max_output_bytes = 0;
};

// The wall-clock limit of a child whose command has no --timeout (graph,
// code --compiled, trace, script): 600 s, and as much CPU time per core.
constexpr double kDefaultChildTimeout = 600;

// The memory of a run, not of a child: min(8 GiB, half the memory
// available now / the children that run at once), so that `concurrent`
// children at their caps hold at most half of what the machine had free.
uint64_t DefaultChildMemoryLimit(size_t concurrent = 1);
// The fewest bytes a LibTorch child is given by default (LibTorch itself
// and a small model): --jobs is lowered so that each child gets as much.
inline constexpr uint64_t kMinChildMemory = uint64_t{1} << 30;
// `jobs`, lowered (to 1 at least) so that each of that many children gets
// kMinChildMemory within half of the available memory.
size_t JobsWithinMemory(size_t jobs);
// The machine's physical memory.
uint64_t MachineMemoryBytes();
// What /proc/meminfo says is available (MemAvailable), else the physical memory.
uint64_t AvailableMemoryBytes();

// How a child ended.
enum class ChildEnd {
  kAnswered,  // it sent its value
  kRaised,    // it sent the tsctl::Error it threw
  kCrashed,   // a signal ended it
  kTimedOut,  // killed after ChildLimits::timeout_seconds
  kExited,    // it exited (non-zero, or zero without an answer)
  kBlocked,   // the sandbox stopped it (sandbox.h): `sandbox` says what it tried
};

struct ChildOutcome {
  ChildEnd end = ChildEnd::kExited;
  ChildValue value;                 // kAnswered
  ErrorKind error_kind = ErrorKind::kTorch;  // kRaised: the error, kind and detail kept
  std::string error, error_detail;
  int signal = 0;     // kCrashed
  int exit_code = 0;  // kExited
  double seconds = 0;
  double timeout_seconds = 0;
  uint64_t memory_bytes = 0;  // the cap it ran under
  std::optional<ProgressEvent> progress;  // the last progress event it sent (none: it sent none)
  std::string sandbox;        // kBlocked: "the model tried to open /etc/x for writing"
  // kBlocked by a guard, not the sandbox (sandbox.h StopChild): the same
  // line as `sandbox`; "" otherwise.
  std::string unsafe_stop;
  std::string write_error;    // a file it sent could not be written (then kRaised, kIo)
  ChildOutput output;         // what it wrote on its standard output and error (shown with -v)

  bool Answered() const { return end == ChildEnd::kAnswered; }
  // True if it died (crash, timeout, exit) rather than answering or raising.
  bool Died() const { return end != ChildEnd::kAnswered && end != ChildEnd::kRaised; }
  // The one sentence for a child that died while `doing` ("loading",
  // "running forward"): "LibTorch crashed with SIGSEGV (Segmentation fault)
  // while loading", "LibTorch did not finish loading within 300 s (killed)",
  // "the LibTorch child exited with status 3 while loading".
  std::string Failure(const std::string& doing) const;
  // The value, else throws: the child's own tsctl::Error again, or kTorch
  // with Failure(doing).
  template <typename T>
  T Take(const std::string& doing) && {
    if (end == ChildEnd::kRaised) throw Error(error_kind, error, error_detail);
    if (!Answered()) throw Error(ErrorKind::kTorch, Failure(doing));
    if (auto* v = std::get_if<T>(&value)) return std::move(*v);
    throw Error(ErrorKind::kIo, "a LibTorch child answered with another type than was asked for");
  }
};

// Runs the request in a warm child and waits for it. `on_progress` (may be
// empty) sees each progress event the child sends, as it comes. What the
// child writes on its standard output and error (every thread of it) is
// read from its pipe meanwhile, kept in out.output and shown with -v (on
// stderr, "tsctl: child output: " before each escaped line). Throws
// tsctl::Error (kUnavailable) if the LibTorch plugin cannot be loaded, (kIo)
// if no process can be made, tsctl::Interrupted (tsctl/error.h) if this
// process got SIGINT, SIGTERM or SIGHUP meanwhile (the child's process group
// is killed first); everything the child
// does is in the outcome.
ChildOutcome RunTorchChild(const ChildRequest& request, const ChildLimits& limits,
                           const std::function<void(const ProgressEvent&)>& on_progress = {});

// Runs a model check (CheckRequest) in a child. A child that dies (crash,
// memory cap, time limit) while it runs an inferred candidate died on a guess:
// XNNPACK's prepacked convolutions, for one, do no shape check and crash on a
// wrong channel count. That candidate is set aside in `crashed` (its flags and
// the child's failure) and, unless the time limit ended it, a fresh child
// tries the candidates after it, at most 3 times. The last outcome is
// returned; `seconds` adds up every child's time. `schema` gets the method's
// schema as soon as a child has found it (its kMethod event), so that a
// report keeps it when the child dies later. `on_event`, if given, gets every
// progress event of every child as it comes (for a progress line).
ChildOutcome RunModelCheck(ModelCheckOptions options, const ChildLimits& limits, std::vector<CandidateTry>& crashed,
                           double& seconds, std::string* schema = nullptr,
                           const std::function<void(const ProgressEvent&)>& on_event = {});

// Starts this process's LibTorch server (StartTorchServer), so that the
// children asked for later are forked warm. Throws tsctl::Error
// (kUnavailable) with the reason the server could not load the plugin.
void WarmUpTorch();

// "SIGSEGV" for SIGSEGV; "signal N" for a number without a name.
std::string SignalName(int sig);

// The flags of the inferred candidate a model-check child was running when it
// ended ("--arg 'x=1x3x224x224:float32'"), from its last progress event (a
// kTrying before each candidate); "" if it was not trying one.
// CandidateIndex gives the candidate's index (-1 if none).
std::string TriedCandidate(const std::optional<ProgressEvent>& progress);
long CandidateIndex(const std::optional<ProgressEvent>& progress);

// A temporary file in /tmp that a child writes (its outputs, a reference)
// and the parent reads; removed with this object. Throws tsctl::Error (kIo).
struct TempFile {
  std::string path;
  // `suffix` ends the name (".npy": what the child writes goes by it).
  explicit TempFile(const std::string& suffix = "");
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  std::string Read() const;
};

// --data-loader-script FILE.py[:NAME] (Polygraphy's data loader; NAME
// defaults to load_data): runs it in the embedded Python in a child (neither
// Python nor its torch enters this process) within `timeout_seconds`, and
// returns the file that holds its first argument set, which
// load_inputs_path takes (.pt: torch.save of the argument tuple; .npz:
// arrays by argument name). Throws tsctl::Error: kUsage (a bad spec, the
// script's errors), kIo, kUnavailable (a build without Python or LibTorch),
// kTorch (the child died).
std::unique_ptr<TempFile> RunDataLoader(const std::string& spec, double timeout_seconds);

}  // namespace tsctl
