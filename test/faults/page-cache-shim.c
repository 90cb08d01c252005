/*
 * page-cache-shim.c — simulates a host crash for a redis-server under test (LD_PRELOAD; issue #22).
 *
 * `kill -9` of Redis is a *process* crash: whatever Redis handed to write(2) is in the kernel's page
 * cache and reaches the disk anyway. A host crash or power loss also loses what was written but not yet
 * fsynced. This library makes the page cache of Redis's incremental AOF files (`*.incr.aof`) live in the
 * Redis process itself: write(2) on such a file only appends to a buffer, and fsync(2)/fdatasync(2) (and
 * close(2)) write the buffer to the file before doing the real call. So a `kill -9` of a redis-server
 * running with this library loses exactly what a host crash would have lost: every AOF write since the
 * last fsync. Nothing else is changed: other files, and reads, go straight to libc.
 *
 * Build: cc -shared -fPIC -O2 -o page-cache-shim.so page-cache-shim.c -ldl -lpthread
 * Use:   LD_PRELOAD=/path/page-cache-shim.so redis-server ...
 * Debug: PAGE_CACHE_SHIM_DEBUG=1 logs tracked files and flushes to stderr.
 *
 * Threads: Redis writes from its main thread and, with appendfsync everysec, fsyncs from a background
 * thread. One mutex guards the buffers; a per-file flush mutex keeps flushes in write order.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_FD 65536
#define SUFFIX ".incr.aof"

struct pending {
  int tracked;
  char *data;
  size_t len, cap;
  pthread_mutex_t flush;
};

static struct pending files[MAX_FD];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int debug = -1;

static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_close)(int);
static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);

static void init(void) {
  if (real_write) return;
  real_write = dlsym(RTLD_NEXT, "write");
  real_fsync = dlsym(RTLD_NEXT, "fsync");
  real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
  real_close = dlsym(RTLD_NEXT, "close");
  real_open = dlsym(RTLD_NEXT, "open");
  real_open64 = dlsym(RTLD_NEXT, "open64");
  real_openat = dlsym(RTLD_NEXT, "openat");
  real_openat64 = dlsym(RTLD_NEXT, "openat64");
  if (debug < 0) debug = getenv("PAGE_CACHE_SHIM_DEBUG") != NULL;
}

static int targeted(const char *path) {
  size_t n = strlen(path), m = strlen(SUFFIX);
  return n >= m && strcmp(path + n - m, SUFFIX) == 0;
}

static void track(int fd, const char *path) {
  if (fd < 0 || fd >= MAX_FD) return;
  if (!targeted(path)) {
    /* An fd number reused after a close this library did not see must never be buffered. */
    pthread_mutex_lock(&lock);
    files[fd].tracked = 0;
    files[fd].len = 0;
    pthread_mutex_unlock(&lock);
    return;
  }
  pthread_mutex_lock(&lock);
  if (!files[fd].tracked) pthread_mutex_init(&files[fd].flush, NULL);
  files[fd].tracked = 1;
  files[fd].len = 0;
  pthread_mutex_unlock(&lock);
  if (debug) fprintf(stderr, "page-cache-shim: tracking fd %d %s\n", fd, path);
}

static int is_tracked(int fd) {
  if (fd < 0 || fd >= MAX_FD) return 0;
  pthread_mutex_lock(&lock);
  int t = files[fd].tracked;
  pthread_mutex_unlock(&lock);
  return t;
}

/* Writes what is pending on fd to the file (in order); returns 0 or -1 with errno. */
static int flush(int fd) {
  struct pending *p = &files[fd];
  pthread_mutex_lock(&p->flush);
  pthread_mutex_lock(&lock);
  char *data = p->data;
  size_t len = p->len;
  p->data = NULL;
  p->len = p->cap = 0;
  pthread_mutex_unlock(&lock);
  size_t done = 0;
  int rc = 0;
  while (done < len) {
    ssize_t n = real_write(fd, data + done, len - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      rc = -1;
      break;
    }
    done += (size_t)n;
  }
  free(data);
  pthread_mutex_unlock(&p->flush);
  if (debug && len) fprintf(stderr, "page-cache-shim: flushed %zu bytes on fd %d\n", len, fd);
  return rc;
}

ssize_t write(int fd, const void *buf, size_t count) {
  init();
  if (!is_tracked(fd)) return real_write(fd, buf, count);
  pthread_mutex_lock(&lock);
  struct pending *p = &files[fd];
  if (p->len + count > p->cap) {
    size_t cap = p->cap ? p->cap : 65536;
    while (cap < p->len + count) cap *= 2;
    char *grown = realloc(p->data, cap);
    if (!grown) {
      pthread_mutex_unlock(&lock);
      errno = ENOMEM;
      return -1;
    }
    p->data = grown;
    p->cap = cap;
  }
  memcpy(p->data + p->len, buf, count);
  p->len += count;
  pthread_mutex_unlock(&lock);
  return (ssize_t)count;
}

int fsync(int fd) {
  init();
  if (is_tracked(fd) && flush(fd) < 0) return -1;
  return real_fsync(fd);
}

int fdatasync(int fd) {
  init();
  if (is_tracked(fd) && flush(fd) < 0) return -1;
  return real_fdatasync(fd);
}

int close(int fd) {
  init();
  if (is_tracked(fd)) {
    /* Closed files are written back by the kernel in time; the simulation stops tracking them. */
    flush(fd);
    pthread_mutex_lock(&lock);
    files[fd].tracked = 0;
    pthread_mutex_unlock(&lock);
  }
  return real_close(fd);
}

#define OPEN_MODE(flags, mode)                     \
  mode_t mode = 0;                                 \
  if ((flags) & (O_CREAT | O_TMPFILE)) {           \
    va_list ap;                                    \
    va_start(ap, flags);                           \
    mode = (mode_t)va_arg(ap, int);                \
    va_end(ap);                                    \
  }

int open(const char *path, int flags, ...) {
  init();
  OPEN_MODE(flags, mode);
  int fd = real_open(path, flags, mode);
  track(fd, path);
  return fd;
}

int open64(const char *path, int flags, ...) {
  init();
  OPEN_MODE(flags, mode);
  int fd = real_open64(path, flags, mode);
  track(fd, path);
  return fd;
}

int openat(int dirfd, const char *path, int flags, ...) {
  init();
  OPEN_MODE(flags, mode);
  int fd = real_openat(dirfd, path, flags, mode);
  track(fd, path);
  return fd;
}

int openat64(int dirfd, const char *path, int flags, ...) {
  init();
  OPEN_MODE(flags, mode);
  int fd = real_openat64(dirfd, path, flags, mode);
  track(fd, path);
  return fd;
}
