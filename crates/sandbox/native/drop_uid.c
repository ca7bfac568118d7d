/*
 * drop-uid UID PROGRAM [ARGS...]
 *
 * Runs inside the sandbox, as root, right before the script: becomes UID (and group UID) with no
 * supplementary groups and no capability in any set (bounding, inheritable, ambient, permitted,
 * effective), then executes PROGRAM. Any failure exits 1 after one line on stderr, and nothing
 * is executed. It does what `setpriv --reuid=UID --regid=UID --clear-groups --inh-caps=-all
 * --bounding-set=-all --` did, in about a third of the time: a freestanding static program, so
 * no dynamic loader, no libc start-up and no locale files (see docs/notes/sandbox-hardening.md).
 *
 * Freestanding: no libc, raw system calls (x86_64 and aarch64), nothing allocated.
 */
#include <asm/unistd.h>
#include <linux/capability.h>
#include <linux/prctl.h>

/* A system call with five arguments (unused ones zero); returns -errno on failure. */
static long sys5(long n, long a, long b, long c, long d, long e) {
    long ret;
#if defined(__x86_64__)
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    __asm__ volatile("svc 0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4)
                     : "memory");
    ret = x0;
#else
#error "drop_uid.c supports x86_64 and aarch64 only"
#endif
    return ret;
}

static long sys(long n, long a, long b, long c) { return sys5(n, a, b, c, 0, 0); }

/* prctl with its unused arguments zero (PR_CAP_AMBIENT refuses anything else). */
static long prctl3(long option, long arg2, long arg3) {
    return sys5(__NR_prctl, option, arg2, arg3, 0, 0);
}

static void put(const char *text) {
    long len = 0;
    while (text[len]) len++;
    sys(__NR_write, 2, (long)text, len);
}

/* One line on stderr, "drop-uid: cannot WHAT[ DETAIL] (errno N)", then exit 1 (as bubblewrap
   does on its own errors, which the host reports as the sandbox failing, not the script). */
static void fail_with(const char *what, const char *detail, long ret) {
    put("drop-uid: cannot ");
    put(what);
    if (detail) {
        put(" ");
        put(detail);
    }
    if (ret < 0) {
        char digits[24];
        int at = sizeof digits - 1;
        unsigned long err = (unsigned long)-ret;
        digits[at] = 0;
        do {
            digits[--at] = (char)('0' + err % 10);
            err /= 10;
        } while (err && at > 0);
        put(" (errno ");
        put(digits + at);
        put(")");
    }
    put("\n");
    sys(__NR_exit_group, 1, 0, 0);
    for (;;) {}
}

static void fail(const char *what) { fail_with(what, 0, 0); }

/* A decimal uid in 1..=2^32-2; anything else (root, -1, not a number) is refused. */
static long parse_uid(const char *s) {
    unsigned long v = 0;
    if (!s || !*s) return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -1;
        v = v * 10 + (unsigned long)(*s - '0');
        if (v > 0xfffffffeUL) return -1;
    }
    return v == 0 ? -1 : (long)v;
}

__attribute__((used)) void start_c(long *sp) {
    long argc = sp[0];
    char **argv = (char **)(sp + 1);
    char **envp = argv + argc + 1;
    if (argc < 3) fail("run: usage: drop-uid UID PROGRAM [ARGS...]");
    long id = parse_uid(argv[1]);
    if (id < 0) fail("use that uid (a decimal number other than 0 is needed)");

    /* The bounding set first: dropping from it needs CAP_SETPCAP, which the uid change removes. */
    for (long cap = 0; cap <= 63; cap++) {
        long r = prctl3(PR_CAPBSET_DROP, cap, 0);
        if (r == -22 /* EINVAL: past the kernel's last capability */) break;
        if (r != 0) fail("drop the capability bounding set");
    }
    if (sys(__NR_setgroups, 0, 0, 0) != 0) fail("clear the supplementary groups");
    if (sys(__NR_setresgid, id, id, id) != 0) fail("set the group id");
    if (sys(__NR_setresuid, id, id, id) != 0) fail("set the user id");
    /* Leaving uid 0 cleared the permitted, effective and ambient sets; the inheritable set is
       cleared here (lowering needs no capability), the ambient one once more for clarity. */
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2] = {{0, 0, 0}, {0, 0, 0}};
    if (sys(__NR_capset, (long)&header, (long)data, 0) != 0) fail("clear the capability sets");
    if (prctl3(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0) != 0) fail("clear the ambient set");
    long ret = sys(__NR_execve, (long)argv[2], (long)(argv + 2), (long)envp);
    fail_with("execute", argv[2], ret);
}

#if defined(__x86_64__)
__asm__(".globl _start\n"
        "_start:\n"
        "  xor %rbp, %rbp\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call start_c\n"
        "  hlt\n");
#elif defined(__aarch64__)
__asm__(".globl _start\n"
        "_start:\n"
        "  mov x0, sp\n"
        "  bl start_c\n"
        "  brk #0\n");
#endif
