/*
 *	bloombird -- The Netlink writer thread
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: Netlink writer thread
 *
 * The kernel does the work of a route change inside sendmsg(), more of it
 * at full size, while its trie is resized or while it waits for an RCU
 * grace period, so one batch of route messages can hold the caller for a
 * long time. Stock BIRD spends that time in its only thread,
 * where the CLI, BGP and the rest wait. Here one writer thread does the
 * sendmsg() and reads the answers, and BIRD's loop goes on meanwhile (as
 * BIRD's BFD has its own thread, and FRR's zebra its dataplane thread).
 *
 * The writer knows nothing of BIRD's structures: it gets one &nlw_batch of
 * ready messages (nl-queue.c builds them with stock's builder), sends it, and
 * records for each message its answer and the kernel's reason for a failure.
 * There is at most one batch with the writer. The main thread fills a batch
 * only while the writer is idle and reads the results only after the writer
 * has said it is done (a mutex and a condition variable give that order), so
 * nothing else is shared. An eventfd in BIRD's loop calls the main thread's
 * hook when a batch is done; nlw_wait() blocks until then, for the few places
 * that must (back-pressure of a full queue, a protocol stopping).
 *
 * If the thread cannot be started, nlw_submit() is never used and the queue
 * writes in BIRD's loop (nlw_write() there), as it does with `netlink thread
 * off`.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* pthread_setname_np() */
#endif

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>

#undef LOCAL_DEBUG

#include "nest/bird.h"
#include "lib/socket.h"
#include "lib/string.h"

#include CONFIG_INCLUDE_NLSYS_H
#include "sysdep/linux/nl-writer.h"

#ifndef NLM_F_CAPPED
#define NLM_F_CAPPED		0x100
#endif
#ifndef NLM_F_ACK_TLVS
#define NLM_F_ACK_TLVS		0x200
#endif
#define NLW_ATTR_MSG		1	/* NLMSGERR_ATTR_MSG */
#define NLW_RX_SIZE		(32 * 1024)

static pthread_t nlw_thread;
static pthread_mutex_t nlw_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nlw_go = PTHREAD_COND_INITIALIZER;
static pthread_cond_t nlw_finished = PTHREAD_COND_INITIALIZER;
static struct nlw_batch *nlw_batch;	/* With the writer (under nlw_mutex) */
static int nlw_fd;
static int nlw_ready;			/* nlw_batch is done (under nlw_mutex) */
static int nlw_running;			/* The thread runs */
static int nlw_event_fd = -1;
static void (*nlw_done_hook)(void);


/*
 *	Sending and answers (any thread; no BIRD calls)
 */

static u64
nlw_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (u64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The kernel's reason for a failure, copied into the batch's text */
static u16
nlw_reason(struct nlw_batch *b, struct nlmsghdr *h)
{
  if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
    return 0;

  struct nlmsgerr *e = NLMSG_DATA(h);
  uint off = NLMSG_LENGTH(sizeof(struct nlmsgerr));
  if (!(h->nlmsg_flags & NLM_F_CAPPED))
    off += NLMSG_ALIGN(e->msg.nlmsg_len) - NLMSG_HDRLEN;

  int len = (int) h->nlmsg_len - (int) off;
  struct rtattr *a = (void *) h + off;
  for (; (len > 0) && RTA_OK(a, len); a = RTA_NEXT(a, len))
    if ((a->rta_type == NLW_ATTR_MSG) && (RTA_PAYLOAD(a) > 1))
    {
      uint n = strnlen(RTA_DATA(a), RTA_PAYLOAD(a));
      if (b->text_len + n + 1 > NLW_TEXT_SIZE)
	return 0;

      u16 at = b->text_len;
      memcpy(b->text + at, RTA_DATA(a), n);
      b->text[at + n] = 0;
      b->text_len += n + 1;
      return at + 1;
    }

  return 0;
}

/* One answer; sets *fence when it is the last message's */
static void
nlw_answer(struct nlw_batch *b, struct nlmsghdr *h, int *fence)
{
  if (h->nlmsg_type != NLMSG_ERROR)
  {
    if (!b->bad_type++)
      b->bad_type_val = h->nlmsg_type;
    return;
  }

  u32 i = h->nlmsg_seq - b->first;
  if (i >= b->cnt)
  {
    if (!b->bad_seq++)
      b->bad_seq_val = h->nlmsg_seq;
    return;
  }

  if (i == b->cnt - 1)
    *fence = 1;

  if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
  {
    b->bad_trunc++;
    b->err[i] = -1;
    return;
  }

  struct nlmsgerr *e = NLMSG_DATA(h);
  int ec = netlink_error_to_os(e->error);
  if (ec < 0)
  {
    if (!b->bad_code++)
      b->bad_code_val = e->error;
    ec = -1;
  }

  b->err[i] = ec;
  if (ec > 0)
    b->why[i] = nlw_reason(b, h);
}

/**
 * nlw_write - send a batch and read its answers
 * @fd: the write socket
 * @b: the batch
 *
 * The kernel processes the messages inside sendmsg(), so the answers are
 * queued on the socket when it returns: they are read without blocking
 * until the last message's acknowledgement. Touches only @b and @fd.
 */
void
nlw_write(int fd, struct nlw_batch *b)
{
  struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
  struct iovec iov = { b->tx, b->len };
  struct msghdr mh = {
    .msg_name = &sa,
    .msg_namelen = sizeof(sa),
    .msg_iov = &iov,
    .msg_iovlen = 1,
  };
  u64 t0 = nlw_now_ns();
  int rv;

  b->send_err = b->recv_err = b->lost = 0;
  b->bad_type = b->bad_seq = b->bad_trunc = b->bad_code = b->remnant = 0;
  b->text_len = 0;
  for (uint i = 0; i < b->cnt; i++)
    b->err[i] = b->why[i] = 0;

  do
    rv = sendmsg(fd, &mh, 0);
  while ((rv < 0) && (errno == EINTR));

  if (rv < 0)
  {
    b->send_err = errno;
    goto done;
  }

  u64 rx[NLW_RX_SIZE / sizeof(u64)];	/* Aligned for the headers */
  struct iovec riov = { rx, sizeof(rx) };
  int fence = 0;

  while (!fence)
  {
    struct msghdr rh = {
      .msg_name = &sa,
      .msg_namelen = sizeof(sa),
      .msg_iov = &riov,
      .msg_iovlen = 1,
    };
    int x = recvmsg(fd, &rh, MSG_DONTWAIT);

    if (x < 0)
    {
      if (errno == EINTR)
	continue;

      if (errno == ENOBUFS)
      {
	b->lost = 1;
	continue;
      }

      /* The kernel answers inside sendmsg(): no fence now means it is lost */
      if ((errno != EAGAIN) && (errno != EWOULDBLOCK))
	b->recv_err = errno;
      b->lost = 1;
      break;
    }

    if (sa.nl_pid)
      continue;

    if (rh.msg_flags & MSG_TRUNC)
    {
      b->bad_trunc++;
      b->lost = 1;
      continue;
    }

    uint len = x;
    struct nlmsghdr *h = (void *) rx;
    for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len))
      nlw_answer(b, h, &fence);

    if (len && !b->remnant++)
      b->remnant_val = len;
  }

done:
  b->ns = nlw_now_ns() - t0;
}


/*
 *	The thread
 */

static void *
nlw_main(void *arg UNUSED)
{
  pthread_mutex_lock(&nlw_mutex);
  for (;;)
  {
    while (!nlw_batch || nlw_ready)
      pthread_cond_wait(&nlw_go, &nlw_mutex);

    struct nlw_batch *b = nlw_batch;
    int fd = nlw_fd;
    pthread_mutex_unlock(&nlw_mutex);

    nlw_write(fd, b);

    pthread_mutex_lock(&nlw_mutex);
    nlw_ready = 1;
    pthread_cond_signal(&nlw_finished);

    u64 one = 1;
    if (write(nlw_event_fd, &one, sizeof(one)) < 0)
    {
      /* The counter is full: the main thread has a wakeup pending anyway */
    }
  }

  return NULL;
}

static int
nlw_event_hook(sock *sk, uint len UNUSED)
{
  u64 v;
  if (read(sk->fd, &v, sizeof(v)) < 0)
  {
    /* EAGAIN: a batch done and collected by nlw_wait() meanwhile */
  }

  if (nlw_done())
    nlw_done_hook();

  return 0;
}

static void
nlw_event_err(sock *sk UNUSED, int err)
{
  log(L_ERR "KRT: Netlink writer wakeup: %M", err);
}

/**
 * nlw_start - start the writer thread
 * @done: called in BIRD's loop when a submitted batch is done
 * @pool: pool of the wakeup socket
 *
 * Returns 1 when the thread runs (also when it ran already), 0 when it cannot
 * be started (logged): then the caller writes with nlw_write() itself.
 */
int
nlw_start(void (*done)(void), pool *pool)
{
  if (nlw_running)
    return 1;

  int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (efd < 0)
  {
    log(L_ERR "KRT: Cannot create the Netlink writer's eventfd: %m; writing in the main loop");
    return 0;
  }

  sock *sk = sk_new(pool);
  sk->type = SK_MAGIC;
  sk->rx_hook = nlw_event_hook;
  sk->err_hook = nlw_event_err;
  sk->fd = efd;
  if (sk_open(sk) < 0)
  {
    log(L_ERR "KRT: Cannot watch the Netlink writer's eventfd; writing in the main loop");
    rfree(sk);
    return 0;
  }

  /* Signals stay with the main thread, which handles them */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int e = pthread_create(&nlw_thread, NULL, nlw_main, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);

  if (e)
  {
    log(L_ERR "KRT: Cannot start the Netlink writer thread: %s; writing in the main loop", strerror(e));
    rfree(sk);
    return 0;
  }

  pthread_setname_np(nlw_thread, "bird-nl-writer");
  nlw_event_fd = efd;
  nlw_done_hook = done;
  nlw_running = 1;
  return 1;
}

/**
 * nlw_threaded - does the writer thread run?
 */
int
nlw_threaded(void)
{
  return nlw_running;
}

/**
 * nlw_submit - give a batch to the writer thread
 * @fd: the write socket
 * @b: the batch, filled in; untouched by the caller until it is done
 */
void
nlw_submit(int fd, struct nlw_batch *b)
{
  pthread_mutex_lock(&nlw_mutex);
  ASSERT(!nlw_batch);
  nlw_batch = b;
  nlw_fd = fd;
  nlw_ready = 0;
  pthread_cond_signal(&nlw_go);
  pthread_mutex_unlock(&nlw_mutex);
}

/**
 * nlw_done - is the submitted batch done? If so, it is the caller's again
 *
 * Returns 1 once for each submitted batch.
 */
int
nlw_done(void)
{
  int r = 0;

  pthread_mutex_lock(&nlw_mutex);
  if (nlw_batch && nlw_ready)
  {
    nlw_batch = NULL;
    nlw_ready = 0;
    r = 1;
  }
  pthread_mutex_unlock(&nlw_mutex);
  return r;
}

/**
 * nlw_wait - wait until the submitted batch is done; it is the caller's again
 *
 * Does nothing when no batch is with the writer. Does not call the done hook.
 */
void
nlw_wait(void)
{
  pthread_mutex_lock(&nlw_mutex);
  if (nlw_batch)
  {
    while (!nlw_ready)
      pthread_cond_wait(&nlw_finished, &nlw_mutex);
    nlw_batch = NULL;
    nlw_ready = 0;
  }
  pthread_mutex_unlock(&nlw_mutex);
}
