// Which socket calls the CUDA driver's cuInit needs, under one seccomp filter
// per run (tests/cuda/seccomp_probe.sh): "none"; "socket" (AF_UNIX sockets
// refused, as for tsctl's other children: cuInit fails, 304); "tsctl" (the
// rule for CUDA children: cuInit works); "kill:NAME" (NAME kills the
// process: no line means cuInit makes that call); "connect", "inet", ...
// (that call refused alone). Prints "WHICH: cuInit=R devices=N".
#include <dlfcn.h>
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  const char* which = argc > 1 ? argv[1] : "none";
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!strcmp(which, "socket") || !strcmp(which, "all"))
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
  if (!strcmp(which, "socketpair") || !strcmp(which, "all"))
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socketpair), 0);
  if (!strcmp(which, "clone3") || !strcmp(which, "all"))
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  if (!strcmp(which, "openat2") || !strcmp(which, "all"))
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0);
  if (!strcmp(which, "connect"))
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(connect), 0);
  if (!strcmp(which, "inet"))
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX));
  static const char* const kKill[] = {"connect", "bind", "listen", "accept4", "sendto", "sendmsg", "recvmsg", "recvfrom", "getsockopt", "setsockopt", "socketpair", 0};
  if (!strncmp(which, "kill:", 5)) {
    for (int i = 0; kKill[i]; ++i)
      if (!strcmp(which + 5, kKill[i])) seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, seccomp_syscall_resolve_name(kKill[i]), 0);
  }
  if (!strcmp(which, "tsctl")) {
    // tsctl's rule for a CUDA child (lib/src/plugin/sandbox_seccomp.cc).
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX));
    static const char* const kRefused[] = {"connect", "accept", "accept4", "sendmsg", "sendmmsg", "socketpair", 0};
    for (int i = 0; kRefused[i]; ++i) seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), seccomp_syscall_resolve_name(kRefused[i]), 0);
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(sendto), 1, SCMP_A4(SCMP_CMP_NE, 0));
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  }
  if (seccomp_load(ctx) != 0) { printf("%s: seccomp_load failed\n", which); return 2; }
  void* h = dlopen("libcuda.so.1", RTLD_NOW);
  if (!h) { printf("%s: dlopen: %s\n", which, dlerror()); return 3; }
  int (*cuInit)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
  int (*cuDeviceGetCount)(int*) = (int (*)(int*))dlsym(h, "cuDeviceGetCount");
  int r = cuInit(0), n = -1;
  if (r == 0) cuDeviceGetCount(&n);
  printf("%s: cuInit=%d devices=%d\n", which, r, n);
  return 0;
}
