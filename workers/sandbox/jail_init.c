/*
 * First process of a sandboxed run, inside the namespaces `unshare` made (or run directly when
 * there are none). Built once per sandbox root by init_binary.py with the host's C compiler;
 * written in C because every run waits for it before pytest starts, and a Python interpreter
 * (start-up plus ctypes) cost each run about 12 ms where this costs well under one.
 *
 *   specloom-jail-init [--loopback] [--tmpfs PATH OPTIONS]... [--rlimit NAME LIMIT]...
 *                      [--user UID GID] [--cwd DIR] [--env NAME=VALUE]... [--as-init]
 *                      -- PROGRAM [ARG]...
 *
 * --loopback  bring `lo` up (a new network namespace starts with it down)
 * --tmpfs     mount an empty tmpfs over PATH (nosuid, nodev) with the given mount options
 * --rlimit    RLIMIT_CPU, RLIMIT_AS, RLIMIT_NPROC, RLIMIT_FSIZE, RLIMIT_NOFILE or RLIMIT_CORE
 * --user      the test process runs as UID:GID with no supplementary groups
 * --as-init   fork the test process and reap every process until it exits (PID 1 of a new
 *             PID namespace); otherwise become the test process directly
 *
 * As PID 1 this process stays root and keeps the parent-death signal that
 * `unshare --kill-child` set: a process that drops its user id loses that signal, so the
 * unprivileged test process is a child of this one rather than this one itself. When PID 1
 * exits, the kernel kills every process left in the namespace, setsid() or not.
 *
 * Exit status: the test process's, 128 + N when signal N killed it, and INIT_ERROR_EXIT with
 * INIT_ERROR_MARKER on stderr when the sandbox could not be set up (see init_binary.py).
 * Every argument comes from the worker (launch_argv), never from the run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define INIT_ERROR_MARKER "specloom-init-error:"
#define INIT_ERROR_EXIT 125
#define MAX_TMPFS 16
#define MAX_RLIMITS 16

struct mount_point {
    const char *path;
    const char *options;
};

struct limit {
    int resource;
    rlim_t value;
};

struct config {
    int loopback;
    int as_init;
    struct mount_point tmpfs[MAX_TMPFS];
    int tmpfs_count;
    struct limit rlimits[MAX_RLIMITS];
    int rlimit_count;
    int has_user;
    uid_t uid;
    gid_t gid;
    const char *cwd;
    char **env;
    int env_count;
    char **argv;
};

static const struct {
    const char *name;
    int resource;
} RESOURCES[] = {
    {"RLIMIT_CPU", RLIMIT_CPU},       {"RLIMIT_AS", RLIMIT_AS},
    {"RLIMIT_NPROC", RLIMIT_NPROC},   {"RLIMIT_FSIZE", RLIMIT_FSIZE},
    {"RLIMIT_NOFILE", RLIMIT_NOFILE}, {"RLIMIT_CORE", RLIMIT_CORE},
};

static void fail(const char *format, ...) {
    char message[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    dprintf(STDERR_FILENO, "%s %s\n", INIT_ERROR_MARKER, message);
    _exit(INIT_ERROR_EXIT);
}

static unsigned long long parse_number(const char *text, const char *what) {
    char *end = NULL;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno || end == text || *end != '\0' || text[0] == '-')
        fail("bad argument: %s %s", what, text);
    return value;
}

static int resource_named(const char *name) {
    for (size_t i = 0; i < sizeof RESOURCES / sizeof RESOURCES[0]; i++)
        if (strcmp(RESOURCES[i].name, name) == 0) return RESOURCES[i].resource;
    fail("bad argument: unknown resource limit %s", name);
    return -1;
}

static const char *take(int argc, char **argv, int *index, const char *option) {
    if (*index + 1 >= argc) fail("bad argument: %s needs a value", option);
    return argv[++*index];
}

static void parse(int argc, char **argv, struct config *config) {
    memset(config, 0, sizeof *config);
    config->env = calloc((size_t)argc + 1, sizeof(char *));
    if (config->env == NULL) fail("out of memory");
    int i = 1;
    for (; i < argc; i++) {
        const char *option = argv[i];
        if (strcmp(option, "--") == 0) {
            i++;
            break;
        } else if (strcmp(option, "--loopback") == 0) {
            config->loopback = 1;
        } else if (strcmp(option, "--as-init") == 0) {
            config->as_init = 1;
        } else if (strcmp(option, "--tmpfs") == 0) {
            if (config->tmpfs_count == MAX_TMPFS) fail("bad argument: too many --tmpfs");
            struct mount_point *point = &config->tmpfs[config->tmpfs_count++];
            point->path = take(argc, argv, &i, option);
            point->options = take(argc, argv, &i, option);
        } else if (strcmp(option, "--rlimit") == 0) {
            if (config->rlimit_count == MAX_RLIMITS) fail("bad argument: too many --rlimit");
            struct limit *limit = &config->rlimits[config->rlimit_count++];
            limit->resource = resource_named(take(argc, argv, &i, option));
            limit->value = (rlim_t)parse_number(take(argc, argv, &i, option), "--rlimit");
        } else if (strcmp(option, "--user") == 0) {
            config->has_user = 1;
            config->uid = (uid_t)parse_number(take(argc, argv, &i, option), "--user uid");
            config->gid = (gid_t)parse_number(take(argc, argv, &i, option), "--user gid");
        } else if (strcmp(option, "--cwd") == 0) {
            config->cwd = take(argc, argv, &i, option);
        } else if (strcmp(option, "--env") == 0) {
            config->env[config->env_count++] = (char *)take(argc, argv, &i, option);
        } else {
            fail("bad argument: unknown option %s", option);
        }
    }
    if (i >= argc) fail("bad argument: no program after --");
    config->argv = &argv[i];
}

static void bring_loopback_up(void) {
    int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0) fail("preparing the sandbox: socket: %s", strerror(errno));
    struct ifreq request;
    memset(&request, 0, sizeof request);
    strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
    if (ioctl(sock, SIOCGIFFLAGS, &request) != 0)
        fail("preparing the sandbox: reading the flags of lo: %s", strerror(errno));
    request.ifr_flags |= IFF_UP;
    if (ioctl(sock, SIOCSIFFLAGS, &request) != 0)
        fail("preparing the sandbox: bringing lo up: %s", strerror(errno));
    close(sock);
}

static void mount_tmpfs(const struct mount_point *point) {
    if (mount("tmpfs", point->path, "tmpfs", MS_NOSUID | MS_NODEV, point->options) != 0)
        fail("preparing the sandbox: mount tmpfs on %s: %s", point->path, strerror(errno));
}

static void set_limit(const struct limit *limit) {
    struct rlimit current;
    if (getrlimit(limit->resource, &current) != 0)
        fail("starting the test process: getrlimit: %s", strerror(errno));
    /* Without CAP_SYS_RESOURCE a hard limit can only go down. */
    rlim_t ceiling = current.rlim_max != RLIM_INFINITY ? current.rlim_max : limit->value + 5;
    rlim_t soft = limit->value < ceiling ? limit->value : ceiling;
    struct rlimit wanted = {soft, soft};
    /* CPU: SIGXCPU at the soft limit, SIGKILL a few seconds later at the hard one. */
    if (limit->resource == RLIMIT_CPU) wanted.rlim_max = soft + 5 < ceiling ? soft + 5 : ceiling;
    if (setrlimit(limit->resource, &wanted) != 0)
        fail("starting the test process: setrlimit: %s", strerror(errno));
}

static void become_test_process(const struct config *config) {
    /* Without namespaces the supervisor already made us a session leader (EPERM). */
    if (setsid() < 0 && errno != EPERM)
        fail("starting the test process: setsid: %s", strerror(errno));
    for (int i = 0; i < config->rlimit_count; i++) set_limit(&config->rlimits[i]);
    /* No setuid binary (su, ping, ...) can give back the privileges dropped below. */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        fail("starting the test process: prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
    if (config->has_user) {
        if (setgroups(0, NULL) != 0 || setgid(config->gid) != 0 || setuid(config->uid) != 0)
            fail("starting the test process: dropping to %u:%u: %s", config->uid, config->gid,
                 strerror(errno));
        /* setuid() to an unprivileged id must also have dropped the saved root id. */
        if (config->uid != 0 && setuid(0) == 0) fail("starting the test process: root could be regained");
    }
    if (config->cwd != NULL && chdir(config->cwd) != 0)
        fail("starting the test process: chdir %s: %s", config->cwd, strerror(errno));
    execve(config->argv[0], config->argv, config->env);
    fail("starting the test process: execve %s: %s", config->argv[0], strerror(errno));
}

static int status_code(int status) {
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

/* Reap every process that ends up ours until the test process exits; return its status. */
static int reap_until(pid_t child) {
    for (;;) {
        int status = 0;
        pid_t pid = wait(&status);
        if (pid == child) return status_code(status);
        if (pid < 0 && errno != EINTR) fail("waiting for the test process: %s", strerror(errno));
    }
}

int main(int argc, char **argv) {
    struct config config;
    parse(argc, argv, &config);
    if (config.loopback) bring_loopback_up();
    for (int i = 0; i < config.tmpfs_count; i++) mount_tmpfs(&config.tmpfs[i]);
    if (!config.as_init) become_test_process(&config);
    pid_t child = fork();
    if (child < 0) fail("starting the test process: fork: %s", strerror(errno));
    if (child == 0) become_test_process(&config);
    return reap_until(child);
}
