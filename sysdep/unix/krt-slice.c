/*
 *	bloombird -- Kernel scan, prune and flush in time slices
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: Sliced kernel scans
 *
 * Stock BIRD scans a kernel table in one timer callback: it dumps the whole
 * table, parses every route and compares it with its own, then walks its
 * whole routing table (krt_prune()) installing what is missing, one
 * synchronous write each. With a million routes that callback runs for
 * seconds and, after a start, a `restart` or at the end of a graceful restart,
 * for as long as installing the whole table takes: the CLI, BGP keepalives and
 * OSPF hellos wait. Shutdown flushes the table the same way.
 *
 * Here the same work is cut into slices of at most `scan slice` each, run from
 * a timer due now, so the event loop serves everybody between two slices. A scan
 * first reads the dump (the system side, nl-dump.c, parses each route with
 * stock's parser and hands it to stock's krt_got_route()), then walks the
 * table with a FIB iterator parked between slices (FIB_ITERATE_PUT, as
 * rt_prune_table() does) and calls stock's per-network prune step. Writes go
 * to the batched queue.
 *
 * Routes may change while a scan runs. A route written after the scan has
 * begun may be missing from the dump, so the queue marks every route it writes
 * meanwhile as seen (the prune leaves it alone) and every dumped route that
 * is out of date is rewritten as in stock. Before the first scan has finished
 * BIRD does not write route changes at all (stock's rule); changes it skips
 * while a sliced first scan runs make the scan run once more when it ends.
 * A scan due before the initial feed has ended waits for it (unless the
 * protocol learns routes): stock's would ignore BIRD's routes anyway.
 *
 * A prune that finds the write queue full stops until the writer thread has
 * taken a batch, as a dump does, rather than making the loop wait.
 *
 * A shutdown flush first deletes what stock's flush deletes, every network
 * whose route was exported, walking BIRD's table (in slices, with a copy of
 * the channel's export map; at a shutdown of BIRD, from a copy of the
 * networks made when the flush begins, krt_slice_snapshot()), so the writer
 * thread is busy from the start, as stock's loop of deletions keeps the
 * kernel. Then
 * it dumps the kernel table and deletes BIRD's routes still in it (left
 * from an earlier run), and reads the dump again until it finds nothing to
 * delete (an IPv6 dump may miss routes while others go); the protocol
 * reports PS_DOWN when the last deletion is answered. A flush by the dump
 * alone took far longer than the deletions need, as the dump and the
 * deletions took turns; with the copy first the writer is busy from the
 * start (docs/design/kernel-sync.md).
 */

#undef LOCAL_DEBUG

#include "nest/bird.h"
#include "nest/iface.h"
#include "nest/route.h"
#include "nest/protocol.h"
#include "nest/cli.h"
#include "lib/event.h"
#include "lib/timer.h"
#include "sysdep/unix/krt.h"
#include "sysdep/unix/krt-slice.h"

enum krt_slice_state {
  KRT_SLICE_IDLE,
  KRT_SLICE_DUMP,			/* Reading the kernel's table */
  KRT_SLICE_PRUNE,			/* Walking ours */
  KRT_SLICE_FLUSH,			/* Shutdown: deleting our routes from the kernel's table */
  KRT_SLICE_FLUSH_WRITES,		/* Shutdown: waiting for the last deletions */
  KRT_SLICE_FLUSH_TABLE,		/* Shutdown: deleting the networks we exported */
};

#define KRT_FLUSH_PASSES	32	/* Dumps of one flush at most */

static const char *krt_slice_state_name[] = { "idle", "reading", "pruning", "flushing", "flushing", "flushing" };

struct krt_slice {
  struct krt_proto *p;
  timer *timer;				/* Runs the next slice (see krt_slice_next()) */
  u8 state;				/* enum krt_slice_state */
  u8 again;				/* Scan once more when this one ends */
  u8 broken;				/* A dump failed: stock's scans from now on */
  u8 ready;				/* The initial feed had ended when this scan began */
  u8 waiting;				/* Prune or flush stopped for a full write queue */
  u8 copied;				/* Flush: from a copy of the networks (at shutdown) */
  uint passes;				/* Flush: dumps read */
  struct fib_iterator fit;		/* Prune or flush walk position, parked between slices */
  struct bmap exported;			/* Flush walk: the channel's export map, copied */
  rtable *walked;			/* Flush walk: its table, locked while it runs */
  uint walk_deleted;			/* Flush walk: deletions queued */
  byte *snap;				/* Flush at shutdown: the exported networks, copied */
  uint snap_n, snap_pos, snap_len;	/* ... how many, the next, bytes each */
  btime snap_time;			/* ... time the copy took */
  btime started;			/* This scan */
  uint slices;
  btime longest;
  uint scans;				/* Completed scans */
  btime last_time;			/* The last one: duration, slices, longest slice */
  uint last_slices;
  btime last_longest;
};

static void krt_slice_run(timer *t);

/*
 * The next slice runs from a timer due now, not from an event: while events
 * are pending, BIRD's loop reads the protocols' sockets (BGP sessions,
 * Netlink, the writer's completions; not the CLI's, which it reads in every
 * cycle) only every tenth cycle (SHORT_LOOP_MAX in io.c), so slices run as
 * events would keep those waiting ten slices; a due timer leaves the loop's
 * event list empty, and every cycle reads all sockets between two slices.
 * (Due 1 us from the cycle's time: a timer due at it would fire again in
 * the same timers_fire() pass. When no socket is ready, poll() waits a
 * millisecond before the next slice; only an otherwise idle loop pays it.)
 */
static inline void
krt_slice_next(struct krt_slice *s)
{
  tm_start(s->timer, 1);
}

/* Stopped until the writer thread has taken a batch (a full write queue) */
static inline int
krt_slice_waiting(struct krt_slice *s)
{
  switch (s->state)
  {
  case KRT_SLICE_DUMP:
  case KRT_SLICE_FLUSH:
    return krt_sys_dump_waiting(s->p);
  case KRT_SLICE_PRUNE:
  case KRT_SLICE_FLUSH_TABLE:
    return s->waiting;
  default:
    return 0;
  }
}

/**
 * krt_slice_init - prepare sliced scans of a starting kernel protocol
 * @p: the protocol
 */
void
krt_slice_init(struct krt_proto *p)
{
  struct krt_slice *s = mb_allocz(p->p.pool, sizeof(struct krt_slice));

  s->p = p;
  s->timer = tm_new_init(p->p.pool, krt_slice_run, s, 0, 0);
  p->slice = s;
  krt_sys_slice_init(p);
}

/* A scan or flush starts: its timing restarts, its first slice is scheduled */
static void
krt_slice_begin(struct krt_slice *s, uint state)
{
  s->state = state;
  s->started = current_time_now();
  s->slices = 0;
  s->longest = 0;
  krt_slice_next(s);
}

static inline struct fib *
krt_slice_fib(struct krt_proto *p)
{
  return &p->p.main_channel->table->fib;
}

/**
 * krt_slice_scan - start a sliced scan
 * @p: the kernel protocol whose scan timer fired
 *
 * Returns 1 when the scan runs in slices (or, if one runs already, when it
 * will run once more), 0 when stock's scan has to do it.
 */
int
krt_slice_scan(struct krt_proto *p)
{
  struct krt_slice *s = p->slice;

  if (!s)
    return 0;

  /* A running scan (even one whose writes fell back to stock's) ends first */
  if (s->state != KRT_SLICE_IDLE)
  {
    s->again = 1;
    return 1;
  }

  if (s->broken || !krt_sys_sliced(p))
    return 0;

  /*
   * Before the initial feed has ended, stock's scan ignores BIRD's routes and
   * its prune does nothing: without learning, all such a scan can do is delete
   * redirect routes, which the scan krt_feed_end() asks for does as well. In
   * slices it would only take the loop from the feed (a channel feeds 256
   * routes per pass of the loop: a refeed of a million routes between slices
   * of a few milliseconds takes minutes), so it waits for that one.
   */
  if (!p->ready && !KRT_CF->learn)
  {
    KRT_TRACE(p, D_EVENTS, "Scan waits for the initial feed");
    return 1;
  }

  /* As krt_init_scan() */
  bmap_reset(&p->seen_map, 1024);
  krt_sys_mark_seen(p, 1);

  if (!krt_sys_dump_start(p, 0))
  {
    krt_sys_mark_seen(p, 0);
    return 0;
  }

  KRT_TRACE(p, D_EVENTS, "Scanning routing table");
  s->ready = p->ready;
  s->again = 0;
  krt_slice_begin(s, KRT_SLICE_DUMP);
  return 1;
}

/**
 * krt_slice_missed - a route change was not written before the first scan ended
 * @p: the kernel protocol
 */
void
krt_slice_missed(struct krt_proto *p)
{
  struct krt_slice *s = p->slice;

  if (s && ((s->state == KRT_SLICE_DUMP) || (s->state == KRT_SLICE_PRUNE)))
    s->again = 1;
}

/*
 * Should a walk stop before its next network? Its time is up (looked at
 * before every network but the first: each one may have sent a batch), or
 * the write queue is full (s->waiting: krt_slice_writes_done() resumes it).
 */
static inline int
krt_slice_pause(struct krt_slice *s, uint *n, btime deadline)
{
  if ((*n)++ && (current_time_now() >= deadline))
    return 1;

  if (krt_sys_writes_full(s->p))
    return s->waiting = 1;

  return 0;
}

/* One network of the prune, or of the flush's walk (below) */
static inline void
krt_slice_walk_net(struct krt_slice *s, net *n)
{
  if (s->state == KRT_SLICE_PRUNE)
    krt_prune_net(s->p, n);
  else if (n->routes && bmap_test(&s->exported, n->routes->id))
  {
    krt_sys_flush_net(s->p, n->n.addr);
    s->walk_deleted++;
  }
}

/*
 * One slice of the prune walk, or of the flush's walk of @fib; 1 when the
 * walk is complete. A full write queue stops it (s->waiting) instead of
 * making the loop wait for the writer thread (back-pressure).
 */
static int
krt_slice_walk(struct krt_slice *s, struct fib *fib, btime deadline)
{
  uint n = 0;

  s->waiting = 0;

  FIB_ITERATE_START(fib, &s->fit, net, nn)
  {
    if (krt_slice_pause(s, &n, deadline))
    {
      FIB_ITERATE_PUT(&s->fit);
      return 0;
    }

    krt_slice_walk_net(s, nn);
  }
  FIB_ITERATE_END;

  return 1;
}

/*
 * Stock's flush deletes every network whose route is installed
 * (krt_is_installed(), the channel's export map), walking the table in one
 * go and deleting as it goes, synchronously. The channel resets the map
 * once it stops, so the flush walks the table in slices with a copy of it.
 * At a shutdown of BIRD, though, the prune of the table removes the other
 * protocols' routes (BGP's) in the order of the FIB, ahead of such a walk
 * (which then finds few of the routes still there and leaves the rest to
 * the dump), so the networks are copied first, in one walk that reads the
 * table and writes nothing else (a short stall that only a restart of the
 * kernel protocol, which has no such race, would feel).
 */
static void
krt_slice_snapshot(struct krt_slice *s, struct fib *fib, struct bmap *exported)
{
  btime t0 = current_time_now();
  uint cap = 0;

  s->snap_len = net_addr_length[fib->addr_type];
  s->snap_n = s->snap_pos = 0;
  FIB_WALK(fib, net, n)
  {
    if (!n->routes || !bmap_test(exported, n->routes->id))
      continue;

    if (s->snap_n == cap)
    {
      cap = cap ? 2 * cap : 4096;
      s->snap = s->snap ? mb_realloc(s->snap, (size_t) cap * s->snap_len) : mb_alloc(s->p->p.pool, (size_t) cap * s->snap_len);
    }
    memcpy(s->snap + (size_t) s->snap_n++ * s->snap_len, n->n.addr, s->snap_len);
  }
  FIB_WALK_END;

  s->snap_time = current_time_now() - t0;
}

/*
 * One slice of the flush's deletions of the networks it walks or copied; 1
 * when all are queued. A full write queue stops it (s->waiting), as it stops
 * the prune. A route changed since the flush began is left to the dump.
 */
static int
krt_slice_flush_table(struct krt_slice *s, btime deadline)
{
  uint n = 0;

  if (!s->copied)
    return krt_slice_walk(s, &s->walked->fib, deadline);

  s->waiting = 0;
  for (; s->snap_pos < s->snap_n; s->snap_pos++)
  {
    if (krt_slice_pause(s, &n, deadline))
      return 0;

    krt_sys_flush_net(s->p, (net_addr *) (s->snap + (size_t) s->snap_pos * s->snap_len));
  }

  return 1;
}

/* The deletions from the table are queued, or abandoned */
static void
krt_slice_flush_table_end(struct krt_slice *s)
{
  if (s->copied)
  {
    mb_free(s->snap);
    s->snap = NULL;
    return;
  }

  /* Unlinking a finished iterator does nothing */
  FIB_ITERATE_UNLINK(&s->fit, &s->walked->fib);
  bmap_free(&s->exported);
  rt_unlock_table(s->walked);
  s->walked = NULL;
}

static void
krt_slice_scan_done(struct krt_slice *s)
{
  struct krt_proto *p = s->p;

  /*
   * A scan that began before the initial feed ended ignored BIRD's routes:
   * it must not count as the first one (stock's scans are atomic).
   */
  u8 ready = p->ready;
  p->ready = s->ready;
  krt_prune_end(p);
  p->ready = ready;
  if (ready && !s->ready)
    s->again = 1;

  krt_sys_mark_seen(p, 0);

  s->state = KRT_SLICE_IDLE;
  s->scans++;
  s->last_time = current_time_now() - s->started;
  s->last_slices = s->slices;
  s->last_longest = s->longest;
  KRT_TRACE(p, D_EVENTS, "Scan done in %t s, %u slices, longest %t ms",
	    s->last_time, s->slices, s->longest * 1000);

  if (s->again && !krt_slice_scan(p))
    tm_start(p->scan_timer, 0);
}

static void
krt_slice_run(timer *t)
{
  struct krt_slice *s = t->data;
  struct krt_proto *p = s->p;
  btime t0 = current_time_now();
  btime deadline = t0 + krt_sys_slice(p);
  int r;

  s->slices++;

  switch (s->state)
  {
  case KRT_SLICE_DUMP:
    r = krt_sys_dump_step(p, deadline);
    if (r < 0)
    {
      /* Already logged; stock's scans from now on */
      log(L_ERR "%s: Sliced scan failed, using synchronous scans", p->p.name);
      s->broken = 1;
      krt_sys_dump_stop(p);
      krt_sys_mark_seen(p, 0);
      s->state = KRT_SLICE_IDLE;
      tm_start(p->scan_timer, 1 S);
      return;
    }
    if (!r)
      break;

    /*
     * Stock's prune does nothing before the initial feed has ended: a scan that
     * began before it ended (its dump ignored BIRD's routes) does not prune
     * either, and runs again (krt_slice_scan_done()).
     */
    if (!s->ready)
    {
      s->longest = MAX(s->longest, current_time_now() - t0);
      krt_slice_scan_done(s);
      return;
    }

    KRT_TRACE(p, D_EVENTS, "Pruning table %s", p->p.main_channel->table->name);
    s->state = KRT_SLICE_PRUNE;
    FIB_ITERATE_INIT(&s->fit, krt_slice_fib(p));
    /* fall through */

  case KRT_SLICE_PRUNE:
    if (!krt_slice_walk(s, krt_slice_fib(p), deadline))
      break;

    s->longest = MAX(s->longest, current_time_now() - t0);
    krt_slice_scan_done(s);
    return;

  case KRT_SLICE_FLUSH_TABLE:
    if (!krt_slice_flush_table(s, deadline))
      break;

    krt_slice_flush_table_end(s);
    s->state = KRT_SLICE_FLUSH_WRITES;
    goto writes;

  case KRT_SLICE_FLUSH:
    r = krt_sys_dump_step(p, deadline);
    if (r < 0)
      krt_sys_dump_stop(p);
    else if (!r)
      break;

    s->state = KRT_SLICE_FLUSH_WRITES;
    /* fall through */

  case KRT_SLICE_FLUSH_WRITES:
  writes:
    if (!krt_sys_writes_step(p, deadline))
    {
      /* The writer thread has them: krt_slice_writes_done() goes on */
      if (krt_sys_writes_later(p))
      {
	s->longest = MAX(s->longest, current_time_now() - t0);
	return;
      }
      break;
    }

    /*
     * After the copied networks, the kernel's table is read for what is
     * left; a dump read while routes go may miss some (IPv6): read it again.
     */
    if ((!s->passes || krt_sys_dump_deleted(p)) && (s->passes < KRT_FLUSH_PASSES) && krt_sys_dump_start(p, 1))
    {
      s->passes++;
      s->state = KRT_SLICE_FLUSH;
      break;
    }

    KRT_TRACE(p, D_EVENTS, "Flush done in %t s, %u networks from the table (%s), %u dumps, %u slices, longest %t ms",
	      current_time_now() - s->started, s->walk_deleted, s->copied ? "copied first" : "walked",
	      s->passes, s->slices,
	      MAX(s->longest, current_time_now() - t0) * 1000);
    s->state = KRT_SLICE_IDLE;
    proto_notify_state(&p->p, krt_shutdown_done(p));
    return;

  default:
    return;
  }

  s->longest = MAX(s->longest, current_time_now() - t0);

  /* A dump or prune stopped for a full write queue: krt_slice_writes_done() goes on */
  if (krt_slice_waiting(s))
    return;

  krt_slice_next(s);
}

/**
 * krt_slice_flush - delete BIRD's routes from the kernel in slices
 * @p: the kernel protocol, shutting down
 *
 * Called instead of krt_flush_routes(). Returns 1 when the flush runs: the
 * protocol then stays in PS_STOP until it has finished, and krt_shutdown_done()
 * and proto_notify_state() end the shutdown. Returns 0 when stock's flush has
 * to run.
 *
 * The deletions are those stock sends (network, table, `metric`), for every
 * route of protocol bird in the kernel table rather than for every network
 * exported: the channel no longer tells which those are once it is stopping,
 * and a route left over from an earlier run is one stock's next scan deletes
 * anyway.
 *
 * While it runs, the protocol still holds its kernel table, where stock's has
 * let go: a flush that another kernel protocol of the new configuration waits
 * for (the same table, krt_sys_table_wanted()) is stock's.
 */
int
krt_slice_flush(struct krt_proto *p)
{
  struct krt_slice *s = p->slice;

  if (!s || !krt_sys_sliced(p) || krt_sys_table_wanted(p))
    return 0;

  /* Whatever is pending is about to be deleted anyway */
  krt_sys_writes_drop(p);

  KRT_TRACE(p, D_EVENTS, "Flushing kernel routes");
  struct channel *c = p->p.main_channel;
  s->walk_deleted = 0;
  s->copied = (p->p.down_code == PDC_CMD_SHUTDOWN);
  if (s->copied)
  {
    krt_slice_snapshot(s, &c->table->fib, &c->export_map);
    s->walk_deleted = s->snap_n;
    KRT_TRACE(p, D_EVENTS, "Copied %u networks to delete in %t ms", s->snap_n, s->snap_time * 1000);
  }
  else
  {
    bmap_init(&s->exported, p->p.pool, c->export_map.size);
    memcpy(s->exported.data, c->export_map.data, c->export_map.size);
    s->walked = c->table;
    rt_lock_table(s->walked);
    FIB_ITERATE_INIT(&s->fit, &s->walked->fib);
  }
  s->passes = 0;
  krt_slice_begin(s, KRT_SLICE_FLUSH_TABLE);
  return 1;
}

/**
 * krt_slice_stop - abort a running scan
 * @p: the kernel protocol, shutting down
 *
 * Called by krt_shutdown() before it decides whether to flush.
 */
void
krt_slice_stop(struct krt_proto *p)
{
  struct krt_slice *s = p->slice;

  if (!s)
    return;

  /*
   * Stock's scans are atomic: a scan that began after the initial feed had
   * ended would have ended before the shutdown, made the protocol
   * initialized, and krt_shutdown() would flush its routes.
   */
  if (((s->state == KRT_SLICE_DUMP) || (s->state == KRT_SLICE_PRUNE)) && s->ready)
    p->initialized = 1;

  if (s->state == KRT_SLICE_DUMP)
    krt_sys_dump_stop(p);

  if (s->state == KRT_SLICE_PRUNE)
    FIB_ITERATE_UNLINK(&s->fit, krt_slice_fib(p));

  if (s->state == KRT_SLICE_FLUSH_TABLE)
    krt_slice_flush_table_end(s);

  krt_sys_mark_seen(p, 0);
  tm_stop(s->timer);
  s->state = KRT_SLICE_IDLE;
  s->again = 0;
}

/**
 * krt_slice_writes_done - the writer thread has finished a batch
 * @p: the kernel protocol
 *
 * A flush waiting for its deletions, or a dump or prune stopped for a full
 * write queue, goes on.
 */
void
krt_slice_writes_done(struct krt_proto *p)
{
  struct krt_slice *s = p->slice;

  if (s && ((s->state == KRT_SLICE_FLUSH_WRITES) || krt_slice_waiting(s)))
    krt_slice_next(s);
}

/**
 * krt_slice_show_info - the kernel protocol's lines in `show protocols all`
 * @P: the protocol
 */
void
krt_slice_show_info(struct proto *P)
{
  struct krt_proto *p = (struct krt_proto *) P;
  struct krt_slice *s = p->slice;

  if (!s)
    return;

  if (s->scans || krt_sys_sliced(p))
    cli_msg(-1006, "  Sliced scans:     %u done, %s%s%s", s->scans,
	    krt_slice_state_name[s->state], s->again ? ", again" : "",
	    s->broken ? ", failed: synchronous scans" : "");
  if (s->scans)
    cli_msg(-1006, "  Last scan:        %t s in %u slices, longest %t ms",
	    s->last_time, s->last_slices, s->last_longest * 1000);

  krt_sys_show_info(p);
}
