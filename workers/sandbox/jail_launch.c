/*
 * The launcher of every sandboxed process: run by the worker as root, it puts itself into the
 * run's cgroup, sets the resource limits that cgroups do not cover, drops to the jail's
 * unprivileged user for good and executes bubblewrap, which builds the jail (namespaces, the
 * minimal read-only root, tmpfs, no capabilities, no new user namespaces) as that user.
 * Built once per sandbox root by launcher.py with the host's C compiler: every run waits for
 * it, and a Python interpreter would cost each run about 12 ms where this costs well under one.
 *
 *   specloom-jail-launch [--cgroup PROCS_FILE]... [--rlimit NAME LIMIT]... [--user UID GID]
 *                        -- PROGRAM [ARG]...
 *
 * --cgroup  write this process's pid into a cgroup.procs file (one per v1 hierarchy), so that
 *           everything it starts is counted, limited and killed with the run
 * --rlimit  RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE or RLIMIT_CORE (processes and memory are
 *           the cgroup's: RLIMIT_NPROC counts a uid host-wide, across runs)
 * --user    drop to UID:GID with no supplementary groups before executing PROGRAM
 *
 * PROGRAM inherits the environment given to the launcher and every open descriptor that is not
 * close-on-exec (bubblewrap's status pipe). Exit status: PROGRAM's; INIT_ERROR_EXIT with
 * INIT_ERROR_MARKER on stderr when the launch itself failed (see launcher.py). Every argument
 * comes from the worker, never from the run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define INIT_ERROR_MARKER "specloom-init-error:"
#define INIT_ERROR_EXIT 125
#define MAX_CGROUPS 8
#define MAX_RLIMITS 8

struct limit {
    int resource;
    rlim_t value;
};

struct config {
    const char *cgroups[MAX_CGROUPS];
    int cgroup_count;
    struct limit rlimits[MAX_RLIMITS];
    int rlimit_count;
    int has_user;
    uid_t uid;
    gid_t gid;
    char **argv;
};

static const struct {
    const char *name;
    int resource;
} RESOURCES[] = {
    {"RLIMIT_CPU", RLIMIT_CPU},
    {"RLIMIT_FSIZE", RLIMIT_FSIZE},
    {"RLIMIT_NOFILE", RLIMIT_NOFILE},
    {"RLIMIT_CORE", RLIMIT_CORE},
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
    int i = 1;
    for (; i < argc; i++) {
        const char *option = argv[i];
        if (strcmp(option, "--") == 0) {
            i++;
            break;
        } else if (strcmp(option, "--cgroup") == 0) {
            if (config->cgroup_count == MAX_CGROUPS) fail("bad argument: too many --cgroup");
            config->cgroups[config->cgroup_count++] = take(argc, argv, &i, option);
        } else if (strcmp(option, "--rlimit") == 0) {
            if (config->rlimit_count == MAX_RLIMITS) fail("bad argument: too many --rlimit");
            struct limit *limit = &config->rlimits[config->rlimit_count++];
            limit->resource = resource_named(take(argc, argv, &i, option));
            limit->value = (rlim_t)parse_number(take(argc, argv, &i, option), "--rlimit");
        } else if (strcmp(option, "--user") == 0) {
            config->has_user = 1;
            config->uid = (uid_t)parse_number(take(argc, argv, &i, option), "--user uid");
            config->gid = (gid_t)parse_number(take(argc, argv, &i, option), "--user gid");
        } else {
            fail("bad argument: unknown option %s", option);
        }
    }
    if (i >= argc) fail("bad argument: no program after --");
    config->argv = &argv[i];
}

static void join_cgroup(const char *procs_file) {
    int fd = open(procs_file, O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail("joining the run's cgroup: open %s: %s", procs_file, strerror(errno));
    char pid[32];
    int length = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    if (write(fd, pid, (size_t)length) != length)
        fail("joining the run's cgroup: write %s: %s", procs_file, strerror(errno));
    close(fd);
}

static void set_limit(const struct limit *limit) {
    struct rlimit current;
    if (getrlimit(limit->resource, &current) != 0)
        fail("starting the sandbox: getrlimit: %s", strerror(errno));
    /* Without CAP_SYS_RESOURCE a hard limit can only go down. */
    rlim_t ceiling = current.rlim_max != RLIM_INFINITY ? current.rlim_max : limit->value + 5;
    rlim_t soft = limit->value < ceiling ? limit->value : ceiling;
    struct rlimit wanted = {soft, soft};
    /* CPU: SIGXCPU at the soft limit, SIGKILL a few seconds later at the hard one. */
    if (limit->resource == RLIMIT_CPU) wanted.rlim_max = soft + 5 < ceiling ? soft + 5 : ceiling;
    if (setrlimit(limit->resource, &wanted) != 0)
        fail("starting the sandbox: setrlimit: %s", strerror(errno));
}

int main(int argc, char **argv) {
    struct config config;
    parse(argc, argv, &config);
    for (int i = 0; i < config.cgroup_count; i++) join_cgroup(config.cgroups[i]);
    for (int i = 0; i < config.rlimit_count; i++) set_limit(&config.rlimits[i]);
    umask(022);
    /* No setuid binary (su, ping, ...) can give back the privileges dropped below. */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        fail("starting the sandbox: prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
    if (config.has_user) {
        if (setgroups(0, NULL) != 0 || setgid(config.gid) != 0 || setuid(config.uid) != 0)
            fail("starting the sandbox: dropping to %u:%u: %s", config.uid, config.gid,
                 strerror(errno));
        /* setuid() to an unprivileged id must also have dropped the saved root id. */
        if (config.uid != 0 && setuid(0) == 0) fail("starting the sandbox: root could be regained");
    }
    extern char **environ;
    execve(config.argv[0], config.argv, environ);
    fail("starting the sandbox: execve %s: %s", config.argv[0], strerror(errno));
    return INIT_ERROR_EXIT;
}
