// Runs LibTorch work in a child process forked from this one after the
// LibTorch plugin was loaded here (a warm fork server: each child starts with
// LibTorch's libraries mapped and initialised, so it pays nothing for them).
// Loading the plugin starts no threads, so forking after it is safe; the
// parent never runs LibTorch operations.
#pragma once

#include <functional>
#include <string>

#include "isolate.h"
#include "plugin_abi.h"
#include "wire.h"

namespace tsctl {

// Loads the LibTorch plugin into this process and builds LibTorch's lazily
// built tables (TorchBackend::PrepareForFork), once, so that children forked
// later inherit both. Throws tsctl::Error (kUnavailable) as LoadTorchPlugin().
void WarmUpTorch();

// What to say about a child that did not answer: "LibTorch crashed with
// SIGSEGV (segmentation fault) while loading ...", "... did not finish
// within N s".
std::string DescribeChildFailure(const IsolatedResult& r, const std::string& what, double timeout_seconds);

// "SIGSEGV" for SIGSEGV; "signal N" for a number without a name.
std::string SignalName(int sig);

// The flags of the inferred candidate a model-check child was running when it
// ended ("--arg 'x=1x3x224x224:float32'"), from its progress file, which it
// sets to "trying FLAGS" before each candidate (ModelCheckOptions::
// progress_path); "" if it was not trying one.
std::string TriedCandidate(const std::string& progress);

// A temporary file in /tmp that a child writes (its progress, its outputs)
// and the parent reads; removed with this object. Throws tsctl::Error (kIo).
struct TempFile {
  std::string path;
  TempFile();
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  std::string Read() const;
};

// Runs `fn(backend)` in a warm child and returns its value; a tsctl::Error
// thrown there is rethrown here with its kind; a crash, a hang past
// `timeout_seconds` (0: no limit) or a kill becomes tsctl::Error (kTorch)
// naming the signal. `what` says what the child was doing ("loading the
// archive").
template <typename T>
T RunInTorchChild(const std::string& what, double timeout_seconds, const std::function<T(const TorchBackend&)>& fn) {
  WarmUpTorch();
  IsolatedResult r = RunIsolated(
      [&]() -> std::string {
        try {
          return EncodeValue(fn(LoadTorchPlugin()));
        } catch (const Error& e) {
          return EncodeError(e);
        } catch (const std::exception& e) {
          return EncodeError(Error(ErrorKind::kTorch, e.what()));
        }
      },
      timeout_seconds > 0 ? timeout_seconds : 1e9);
  if (!r.ok) {
    if (!r.error.empty()) throw Error(ErrorKind::kTorch, r.error);
    throw Error(ErrorKind::kTorch, DescribeChildFailure(r, what, timeout_seconds));
  }
  return DecodeAnswer<T>(r.output);
}

}  // namespace tsctl
