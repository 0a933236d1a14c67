/*
 *	bloombird -- fault injection on bird's own Netlink sockets (LD_PRELOAD)
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 *
 * Only the sockets bloombird opens for batched writes (the socket gets
 * NETLINK_CAP_ACK) and sliced dumps (NETLINK_GET_STRICT_CHK on a non-blocking
 * socket) are touched; stock's sockets pass through. Environment:
 *
 *   NLF_GARBAGE=N        every Nth datagram read from those sockets gets a
 *                        message of an unknown type and one with a foreign
 *                        sequence number in front and garbage bytes behind
 *   NLF_SEND_FAIL=N      the write socket's sendmsg() fails with EPERM from
 *                        its Nth call on
 *   NLF_SEND_DELAY_US=N  the write socket's sendmsg() sleeps N microseconds
 *                        first (a slow kernel: batches late, the queue grows),
 *   NLF_SEND_DELAY_EVERY=M  on every Mth call only (default: every call)
 *
 * Build: cc -shared -fPIC -o nlfault.so nlfault.c -ldl
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>

#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif
#ifndef NETLINK_GET_STRICT_CHK
#define NETLINK_GET_STRICT_CHK 12
#endif

#define MAXFD 4096
enum { NONE, NONBLOCK, WRITER, DUMPER };
static unsigned char kind[MAXFD];
static unsigned long reads, sends, delays;

static int
env(const char *name)
{
  const char *v = getenv(name);
  return v ? atoi(v) : 0;
}

int
socket(int domain, int type, int protocol)
{
  static int (*real)(int, int, int);
  if (!real)
    real = dlsym(RTLD_NEXT, "socket");

  int fd = real(domain, type, protocol);
  if ((fd >= 0) && (fd < MAXFD))
    kind[fd] = ((domain == AF_NETLINK) && (type & SOCK_NONBLOCK)) ? NONBLOCK : NONE;
  return fd;
}

int
setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
  static int (*real)(int, int, int, const void *, socklen_t);
  if (!real)
    real = dlsym(RTLD_NEXT, "setsockopt");

  if ((fd >= 0) && (fd < MAXFD) && (kind[fd] == NONBLOCK) && (level == SOL_NETLINK))
  {
    if (name == NETLINK_CAP_ACK)
      kind[fd] = WRITER;
    else if (name == NETLINK_GET_STRICT_CHK)
      kind[fd] = DUMPER;
  }
  return real(fd, level, name, val, len);
}

ssize_t
sendmsg(int fd, const struct msghdr *m, int flags)
{
  static ssize_t (*real)(int, const struct msghdr *, int);
  if (!real)
    real = dlsym(RTLD_NEXT, "sendmsg");

  int n = env("NLF_SEND_FAIL");
  if (n && (fd >= 0) && (fd < MAXFD) && (kind[fd] == WRITER) && (++sends >= (unsigned long) n))
  {
    errno = EPERM;
    return -1;
  }

  int delay = env("NLF_SEND_DELAY_US"), every = env("NLF_SEND_DELAY_EVERY");
  if (delay && (fd >= 0) && (fd < MAXFD) && (kind[fd] == WRITER) && !(++delays % (every > 0 ? every : 1)))
    usleep(delay);

  return real(fd, m, flags);
}

ssize_t
recvmsg(int fd, struct msghdr *m, int flags)
{
  static ssize_t (*real)(int, struct msghdr *, int);
  if (!real)
    real = dlsym(RTLD_NEXT, "recvmsg");

  ssize_t x = real(fd, m, flags);
  int n = env("NLF_GARBAGE");
  if ((x <= 0) || !n || (fd < 0) || (fd >= MAXFD) || (kind[fd] < WRITER) || (++reads % n))
    return x;

  /* Room for two headers in front and 7 bytes behind, in the first iovec */
  struct iovec *iov = &m->msg_iov[0];
  size_t add = 2 * NLMSG_HDRLEN + 7;
  if ((m->msg_iovlen != 1) || ((size_t) x + add > iov->iov_len))
    return x;

  char *b = iov->iov_base;
  struct nlmsghdr *first = (void *) (b + 2 * NLMSG_HDRLEN);
  memmove(first, b, x);

  struct nlmsghdr *u = (void *) b, *s = (void *) (b + NLMSG_HDRLEN);
  *u = (struct nlmsghdr) { .nlmsg_len = NLMSG_HDRLEN, .nlmsg_type = 0x7777, .nlmsg_seq = first->nlmsg_seq };
  *s = (struct nlmsghdr) { .nlmsg_len = NLMSG_HDRLEN, .nlmsg_type = NLMSG_ERROR, .nlmsg_seq = first->nlmsg_seq ^ 0x5a5a5a5a };
  memset(b + 2 * NLMSG_HDRLEN + x, 0xee, 7);
  return x + add;
}
