// The seccomp layer of the sandbox (sandbox.h): the calls a model never
// needs, the write lock, and the SIGSYS handler that tells the parent which
// call was stopped. Private to sandbox.cc.
#include "sandbox_seccomp.h"

#include <errno.h>
#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "process.h"
#include "sandbox.h"

namespace tsctl {
namespace {

// ---- seccomp: the calls a model never needs, and how a blocked one is told.

int g_report_fd = -1;
char g_frame_type = 'S';

// What each denied call is, for the line the parent shows.
struct Denied {
  const char* name;
  const char* what;  // "run a program", "start a process", ...
};
const Denied kDenied[] = {
    {"execve", "run a program"},
    {"execveat", "run a program"},
    {"fork", "start a process"},
    {"vfork", "start a process"},
    {"connect", "connect a socket"},
    {"bind", "bind a socket"},
    {"listen", "listen on a socket"},
    {"accept", "accept a connection"},
    {"accept4", "accept a connection"},
    {"ptrace", "trace a process"},
    {"process_vm_readv", "read another process's memory"},
    {"process_vm_writev", "write another process's memory"},
    {"pidfd_open", "take hold of another process"},
    {"pidfd_getfd", "take another process's descriptor"},
    {"kcmp", "compare other processes"},
    {"mount", "mount a file system"},
    {"umount2", "unmount a file system"},
    {"pivot_root", "change the root"},
    {"chroot", "change the root"},
    {"unshare", "enter new namespaces"},
    {"setns", "join namespaces"},
    {"swapon", "change swap"},
    {"swapoff", "change swap"},
    {"reboot", "reboot"},
    {"kexec_load", "load a kernel"},
    {"kexec_file_load", "load a kernel"},
    {"init_module", "load a kernel module"},
    {"finit_module", "load a kernel module"},
    {"delete_module", "remove a kernel module"},
    {"bpf", "load a BPF program"},
    {"perf_event_open", "open performance counters"},
    {"keyctl", "use the kernel key ring"},
    {"add_key", "use the kernel key ring"},
    {"request_key", "use the kernel key ring"},
    {"userfaultfd", "handle page faults"},
    {"io_uring_setup", "use io_uring"},
    {"io_uring_enter", "use io_uring"},
    {"io_uring_register", "use io_uring"},
    {"open_by_handle_at", "open a file by handle"},
    {"name_to_handle_at", "take a file handle"},
    {"mknod", "make a device node"},
    {"mknodat", "make a device node"},
    {"acct", "change process accounting"},
    {"quotactl", "change quotas"},
    {"syslog", "read the kernel log"},
    {"settimeofday", "set the clock"},
    {"clock_settime", "set the clock"},
    {"clock_adjtime", "set the clock"},
    {"adjtimex", "set the clock"},
    {"sethostname", "set the host name"},
    {"setdomainname", "set the domain name"},
    {"iopl", "reach I/O ports"},
    {"ioperm", "reach I/O ports"},
    {"fanotify_init", "watch the file system"},
    {"tkill", "signal a thread"},
};
// Denied once the write lock is on (kArchive).
const Denied kWrites[] = {
    {"creat", "create a file"},         {"rename", "rename a file"},     {"renameat", "rename a file"},
    {"renameat2", "rename a file"},     {"unlink", "remove a file"},     {"unlinkat", "remove a file"},
    {"mkdir", "make a folder"},         {"mkdirat", "make a folder"},    {"rmdir", "remove a folder"},
    {"link", "link a file"},            {"linkat", "link a file"},       {"symlink", "make a symbolic link"},
    {"symlinkat", "make a symbolic link"}, {"chmod", "change a file's mode"}, {"fchmodat", "change a file's mode"},
    {"chown", "change a file's owner"}, {"lchown", "change a file's owner"}, {"fchownat", "change a file's owner"},
    {"truncate", "truncate a file"},    {"utime", "change a file's times"}, {"utimes", "change a file's times"},
    {"utimensat", "change a file's times"}, {"futimesat", "change a file's times"},
    {"setxattr", "change a file's attributes"}, {"lsetxattr", "change a file's attributes"},
    {"removexattr", "change a file's attributes"}, {"lremovexattr", "change a file's attributes"},
};

// Syscall number -> description, filled before any filter is loaded (the
// handler only reads it).
constexpr int kMaxSyscall = 512;
const char* g_name[kMaxSyscall];
const char* g_what[kMaxSyscall];

// Its number on this machine (__NR_SCMP_ERROR if none), remembered for the
// handler's line.
int Remember(const Denied& d) {
  const int nr = seccomp_syscall_resolve_name(d.name);
  if (nr >= 0 && nr < kMaxSyscall) {
    g_name[nr] = d.name;
    g_what[nr] = d.what;
  }
  return nr;
}

// Every call of `table` stops the process (SIGSYS), whatever its arguments,
// but those `except` names (given their own rule by the caller).
template <size_t N>
void TrapAll(scmp_filter_ctx ctx, const Denied (&table)[N], std::initializer_list<const char*> except = {}) {
  for (const Denied& d : table) {
    if (std::any_of(except.begin(), except.end(), [&d](const char* e) { return std::strcmp(e, d.name) == 0; })) continue;
    const int nr = Remember(d);
    if (nr != __NR_SCMP_ERROR) seccomp_rule_add(ctx, SCMP_ACT_TRAP, nr, 0);
  }
}

// Whether `path` names a thread of this process's name ("comm"): what
// pthread_setname_np opens for writing to name another thread of its own.
bool IsOwnThreadName(const char* path) {
  if (!path) return false;
  auto skip = [](const char*& p, const char* prefix) {
    const size_t n = std::strlen(prefix);
    if (std::strncmp(p, prefix, n) != 0) return false;
    p += n;
    return true;
  };
  auto digits = [](const char*& p) {
    const char* start = p;
    while (*p >= '0' && *p <= '9') ++p;
    return p > start;
  };
  const char* p = path;
  if (skip(p, "/proc/thread-self/comm")) return *p == '\0';
  if (!skip(p, "/proc/self/task/")) return false;
  return digits(p) && skip(p, "/comm") && *p == '\0';
}

// Async-signal-safe appends into a fixed buffer.
struct Line {
  char buf[1024];
  size_t n = 5;  // room for the frame header
  void Add(const char* s, size_t max = 256) {
    for (size_t i = 0; s && s[i] && i < max && n < sizeof buf; ++i) buf[n++] = s[i];
  }
};

void OnSigsys(int, siginfo_t* info, void* context) {
  const int nr = info->si_syscall;
  auto* uc = static_cast<ucontext_t*>(context);
  greg_t* r = uc->uc_mcontext.gregs;
  // Naming one of its own threads (pthread_setname_np on another thread of
  // the process, as LibTorch's pools do on a machine with many cores) is no
  // write to a file: the call fails (EACCES), the thread keeps its name, and
  // the run goes on.
  if ((nr == SYS_open && IsOwnThreadName(reinterpret_cast<const char*>(r[REG_RDI]))) ||
      (nr == SYS_openat && IsOwnThreadName(reinterpret_cast<const char*>(r[REG_RSI])))) {
    r[REG_RAX] = -EACCES;
    return;
  }
  Line line;
  line.Add("the model tried to ");
  if (nr == SYS_open || nr == SYS_openat) {
    const auto* path = reinterpret_cast<const char*>(nr == SYS_open ? r[REG_RDI] : r[REG_RSI]);
    line.Add("open ");
    line.Add(path ? path : "a file");
    line.Add(" for writing");
  } else if (nr >= 0 && nr < kMaxSyscall && g_what[nr]) {
    line.Add(g_what[nr]);
    if (nr == SYS_execve || nr == SYS_creat || nr == SYS_unlink || nr == SYS_mkdir || nr == SYS_rename ||
        nr == SYS_truncate || nr == SYS_chmod) {
      line.Add(" ");
      line.Add(reinterpret_cast<const char*>(r[REG_RDI]));
    } else if (nr == SYS_execveat || nr == SYS_unlinkat || nr == SYS_mkdirat || nr == SYS_renameat ||
               nr == SYS_renameat2 || nr == SYS_fchmodat) {
      line.Add(" ");
      line.Add(reinterpret_cast<const char*>(r[REG_RSI]));
    }
    line.Add(" (");
    line.Add(g_name[nr]);
    line.Add(")");
  } else {
    line.Add("make a system call the sandbox denies (number ");
    char num[12];
    int k = 0, v = nr < 0 ? 0 : nr;
    do num[k++] = static_cast<char>('0' + v % 10); while ((v /= 10) && k < 11);
    while (k) line.buf[line.n++] = num[--k];
    line.Add(")");
  }
  line.buf[0] = g_frame_type;
  PutLength(line.buf + 1, static_cast<uint32_t>(line.n - 5));
  if (g_report_fd >= 0) (void)!::write(g_report_fd, line.buf, line.n);
  ::_exit(kSandboxExit);
}

bool LoadFilter(scmp_filter_ctx ctx) {
  // Every thread of the process, should one have started already.
  if (ctx) seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
  const bool ok = ctx && seccomp_load(ctx) == 0;
  if (ctx) seccomp_release(ctx);
  return ok;
}

}  // namespace

bool SeccompAvailable() { return ::prctl(PR_GET_SECCOMP) >= 0 && seccomp_api_get() >= 1; }

void CatchSigsys(int report_fd, char frame_type) {
  g_report_fd = report_fd;
  g_frame_type = frame_type;
  struct sigaction sa {};
  sa.sa_sigaction = OnSigsys;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGSYS, &sa, nullptr);
}

bool ApplySeccomp(bool cuda) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return false;
  // A filter that kills instead of trapping would hide what was tried.
  if (cuda) {
    // The CUDA driver's own local socket (sandbox_seccomp.h): bound and
    // listening, but nothing connects to it or through it, and nothing is
    // sent to an address (a datagram to a daemon's socket).
    TrapAll(ctx, kDenied, {"bind", "listen", "connect", "accept", "accept4"});
    for (const char* name : {"connect", "accept", "accept4", "sendmsg", "sendmmsg"}) {
      seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), seccomp_syscall_resolve_name(name), 0);
    }
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(sendto), 1, SCMP_A4(SCMP_CMP_NE, 0));
  } else {
    TrapAll(ctx, kDenied);
  }
  // Threads yes, processes no: clone without CLONE_THREAD is a new process;
  // clone3 passes its flags in memory a filter cannot read, so it answers
  // ENOSYS and the C library falls back to clone.
  Remember({"clone", "start a process"});
  seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  // Sockets: none to the network (or netlink, or raw packets), stopped and
  // named; a local one (the C library's name service asks nscd through one
  // when LibTorch 2.x looks up the user) is refused with EACCES, so the
  // caller falls back, and reaches no daemon either.
  Remember({"socket", "open a network socket"});
  seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX));
  if (!cuda) seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
  seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socketpair), 0);
  // Signals to itself only (abort and raise use tgkill on this process).
  const pid_t self = ::getpid();
  Remember({"kill", "signal another process"});
  Remember({"tgkill", "signal another process"});
  seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_NE, static_cast<scmp_datum_t>(self)));
  seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_NE, static_cast<scmp_datum_t>(self)));
  return LoadFilter(ctx);
}

void LockFileWrites() {
  if (!ProbeSandbox().seccomp) return;
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return;
  TrapAll(ctx, kWrites);
  // open and openat with any flag that writes; openat2 takes its flags in
  // memory, so it answers ENOSYS (the C library's open() never uses it).
  for (int flag : {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND}) {
    seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(open), 1,
                     SCMP_A1(SCMP_CMP_MASKED_EQ, static_cast<scmp_datum_t>(flag), static_cast<scmp_datum_t>(flag)));
    seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(openat), 1,
                     SCMP_A2(SCMP_CMP_MASKED_EQ, static_cast<scmp_datum_t>(flag), static_cast<scmp_datum_t>(flag)));
  }
  seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0);
  LoadFilter(ctx);
}

}  // namespace tsctl
