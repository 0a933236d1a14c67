/*
 *	bloombird -- LPM exporter protocol
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/**
 * DOC: LPM exporter protocol
 *
 * `protocol lpm' turns the best routes it is given into a forwarding table
 * (prefix -> next-hop set) that a data plane outside bird can use: the
 * exporter backend of the design card. It attaches to tables through an
 * ipv4 and/or ipv6 channel, the way `kernel' does, so export filters decide
 * what it holds; it imports nothing.
 *
 * Every exported route (rt_notify()) is reduced to its next-hop set, which
 * the next-hop table (lpm-nh.c) turns into a shared, counted entry; the
 * family's LPM engine (nest/lpm.h, `engine simd' by default) maps the
 * prefix to the entry's index. The engine is the only per-prefix state:
 * a change goes to it with no lookup of its own (the engine returns the
 * value it replaced, whose reference is then dropped), and `show lpm
 * lookup' takes the prefix an answer came from from the engine's own
 * prefixes (lpm_match()). A private FIB exists only while a feed is
 * collected for one engine build (below): keeping one beside the engine at
 * all times cost a hash insert, a node and its memory (some 40 MB for a
 * full table) per route for nothing but a CLI command.
 *
 * With `shm "N"' the exporter region (header and next-hop table) and the
 * engine's lookup regions are named shared-memory objects that readers in
 * other processes map read-only (lpm-shm.c has the consistency protocol,
 * tools/lpm-reader the reader).
 *
 * A route whose next hop cannot be represented - more than %LPMX_PATHS
 * paths, MPLS labels - is left out: logged (rate-limited), counted as
 * rejected, and removed from the engine if an earlier route of the prefix
 * was there, so the prefix is answered by its covering route, never with a
 * wrong next hop. The same happens when the next-hop table is full.
 *
 * Reconfiguration: a change of engine, variant or shared-memory name, or a
 * channel added or removed, restarts the protocol (the feed refills the
 * engine); filter changes are handled by the channels as usual.
 */

#include "nest/bird.h"
#include "nest/cli.h"
#include "nest/iface.h"
#include "nest/protocol.h"
#include "nest/route.h"
#include "nest/fib-bloom.h"
#include "nest/lpm.h"
#include "conf/conf.h"
#include "lib/string.h"

#include "proto/lpm/lpm.h"
#include "nest/cli-codes.h"


static inline uint lpmx_fam_of(uint net_type) { return net_type == NET_IP6; }

/*
 * Publish the state after an update or a batch (relaxed: readers use it as
 * a hint). @since: when the oldest change of the batch reached the protocol
 * (rt_notify()), 0 for now, so that a reader's staleness and the update ->
 * reader latency include the time a change waited in the queue.
 */
static void
lpmx_publish(struct lpmx_proto *p, struct lpmx_fam *f, uint i, u64 since)
{
  struct lpmx_header *h = p->x->hdr;
  struct lpm_stats s;

  lpm_stats(f->e, &s);
  p->dirty = 1;
  h->fam[i].prefixes = s.prefixes;
  h->fam[i].rejected = f->rejected;
  h->nh_used = p->nht.used;
  h->nh_live = p->nht.live;
  __atomic_store_n(&h->updated_ns, since ?: lpmx_now_ns(), __ATOMIC_RELAXED);
  __atomic_store_n(&h->generation, h->generation + 1, __ATOMIC_RELEASE);
}

/*
 * A shared region that cannot grow (its file system is full: another user
 * may have filled /dev/shm) refuses the write that would have needed new
 * pages, before any is written (lpm_region_reserve()). The export is then
 * incomplete, and a data plane must not forward by it: the protocol stops,
 * as after `disable', with the error logged and shown by `show protocols';
 * `enable' starts it again once there is room. A region truncated under
 * bird (by root: nobody else may write it) is lost (lpm_region_lost()):
 * the tick finds it and the protocol restarts with new objects. The stop
 * runs from an event, never inside the hooks that found the failure.
 */
static int lpmx_shutdown(struct proto *P);

static void
lpmx_stop_event(void *data)
{
  struct lpmx_proto *p = data;
  struct proto *P = &p->p;

  if (P->proto_state != PS_UP)
    return;

  if (!p->restart)
    P->disabled = 1;
  proto_notify_state(P, PS_STOP);
  proto_notify_state(P, lpmx_shutdown(P));
}

static void
lpmx_space_failed(struct lpmx_proto *p, const char *name, int err)
{
  if (p->space_failed)
    return;

  char msg[160];
  bsnprintf(msg, sizeof(msg), "shared memory %s cannot grow: %s; protocol disabled", name, strerror(err));
  log(L_ERR "%s: %s", p->p.name, msg);
  proto_set_message(&p->p, msg, -1);
  p->space_failed = 1;
  ev_schedule(p->stop);
}

/* Has a region been truncated under bird? Then start over */
static int
lpmx_lost(struct lpmx_proto *p)
{
  const char *name = NULL;
  if (lpm_region_lost(p->x->reg))
    name = p->x->reg->shm_name;
  for (uint i = 0; (i < 2) && !name; i++)
  {
    struct lpm_stats s;
    if (p->fam[i].e && (lpm_stats(p->fam[i].e, &s), s.region_lost))
      name = p->x->hdr->fam[i].region;
  }
  if (!name)
    return 0;

  if (!p->restart)
  {
    log(L_ERR "%s: shared memory %s was truncated by another process; restarting", p->p.name, name);
    p->restart = 1;
    ev_schedule(p->stop);
  }
  return 1;
}

/* After an update the engine refused: was it for lack of room in its region? */
static void
lpmx_space_check(struct lpmx_proto *p, struct lpmx_fam *f)
{
  struct lpm_stats s;
  lpm_stats(f->e, &s);
  if (s.region_errno)
    lpmx_space_failed(p, p->x->hdr->fam[f - p->fam].region, s.region_errno);
}

/*
 * Route changes reach the engine in batches (lpm_apply()): rt_notify()
 * queues them, and the queue is applied when it is full and otherwise at
 * the start of the next round of the event loop (@flush), so a change
 * reaches readers in the loop round that brought it. A batch lets the
 * engine overlap the cache misses of several changes, which are most of
 * the cost of a change to a full table. A queued change holds the
 * reference to its next-hop entry until the engine returns the one it
 * replaced.
 */

/* Is @n changed again after change @j of the batch? */
static int
lpmx_changed_later(const struct lpm_change *q, uint j, uint n)
{
  for (uint k = j + 1; k < n; k++)
    if (net_equal(&q[k].n.n, &q[j].n.n))
      return 1;
  return 0;
}

static void
lpmx_flush_fam(struct lpmx_proto *p, struct lpmx_fam *f)
{
  uint n = f->nq;
  f->nq = 0;
  if (!f->e || (!n && !f->unpublished))
    return;

  f->unpublished = 0;
  if (n)
    lpm_apply(f->e, f->q, n);

  for (uint j = 0; j < n; j++)
  {
    struct lpm_change *c = &f->q[j];
    if (c->result >= 0)
    {
      if (c->old != LPM_NONE)
	lpmx_nh_put(&p->nht, c->old, p->tick_no);
      continue;
    }

    f->failures++;
    lpmx_space_check(p, f);
    if (c->value == LPM_NONE)
    {
      /* Still in the engine, which keeps the reference */
      log_rl(&p->rl, L_ERR "%s: LPM engine out of memory removing %N", p->p.name, &c->n.n);
      continue;
    }

    /* Not applied: the prefix is left out, answered by its covering route */
    lpmx_nh_put(&p->nht, c->value, p->tick_no);
    log_rl(&p->rl, L_ERR "%s: LPM engine out of memory at %N, the prefix is left out", p->p.name, &c->n.n);
    if (lpmx_changed_later(f->q, j, n))
      continue;

    u32 old;
    if ((lpm_remove(f->e, &c->n.n, &old) >= 0) && (old != LPM_NONE))
      lpmx_nh_put(&p->nht, old, p->tick_no);
  }

  lpmx_publish(p, f, f - p->fam, n ? f->q_ns : 0);
}

/* Apply everything queued: before the engine is read or rebuilt */
void
lpmx_flush(struct lpmx_proto *p)
{
  for (uint i = 0; i < 2; i++)
    lpmx_flush_fam(p, &p->fam[i]);
}

static void
lpmx_flush_event(void *data)
{
  lpmx_flush(data);
}

static void
lpmx_queue(struct lpmx_proto *p, struct lpmx_fam *f, const net_addr *n, u32 value)
{
  if (!f->nq)
    f->q_ns = lpmx_now_ns();

  /* A copy of a fixed size (net_copy() calls memcpy() for its variable one) */
  struct lpm_change *c = &f->q[f->nq++];
  if (n->type == NET_IP4)
    c->n.ip4 = *(const net_addr_ip4 *) n;
  else
    c->n.ip6 = *(const net_addr_ip6 *) n;
  c->value = value;

  if (f->nq == LPMX_BATCH)
    lpmx_flush_fam(p, f);
  else
    ev_schedule(p->flush);
}

static void
lpmx_withdraw(struct lpmx_proto *p, struct lpmx_fam *f, const net_addr *n)
{
  /* The engine says whether it held the prefix (and drops nothing if not) */
  if (!f->bulk)
  {
    lpmx_queue(p, f, n, LPM_NONE);
    return;
  }

  /* Collecting a feed: the FIB node holds the reference */
  struct lpmx_net *x = fib_find(&f->fib, n);
  if (!x)
    return;

  lpmx_nh_put(&p->nht, x->nh, p->tick_no);
  fib_delete(&f->fib, x);
}

/* Drop the cached attributes and their entry (lpmx_nh_of()) */
static void
lpmx_nh_forget(struct lpmx_proto *p)
{
  if (!p->nh_rta)
    return;

  rta_free(p->nh_rta);
  lpmx_nh_put(&p->nht, p->nh_idx, p->tick_no);
  p->nh_rta = NULL;
}

/* A node of the private FIB before it holds a reference */
static void
lpmx_net_init(struct fib *f UNUSED, void *N)
{
  struct lpmx_net *x = N;
  x->nh = LPM_NONE;
}

/*
 * The next-hop entry of a route's attributes, with one more reference, or
 * -1 (not representable) / -2 (table full). Routes that came in one BGP
 * update share one cached &rta, so the last one and its entry are kept
 * (with a reference to each, so that neither can be reused for something
 * else meanwhile): a run of such routes skips building and hashing the
 * key, which cost as much as the rest of the protocol's own work.
 */
static int
lpmx_nh_of(struct lpmx_proto *p, rta *a)
{
  struct lpmx_nh k;
  int idx;

  if (a == p->nh_rta)
  {
    lpmx_nh_ref(&p->nht, p->nh_idx);
    return p->nh_idx;
  }

  if (lpmx_nh_key(&k, a) < 0)
    return -1;
  if ((idx = lpmx_nh_get(&p->nht, &k)) < 0)
    return idx - 1;		/* -2: table full, -3: the region cannot grow */

  if (a->cached)
  {
    lpmx_nh_forget(p);
    p->nh_rta = rta_clone(a);
    p->nh_idx = idx;
    lpmx_nh_ref(&p->nht, idx);
  }
  return idx;
}

static void
lpmx_rt_notify(struct proto *P, struct channel *c UNUSED, net *net, rte *new, rte *old UNUSED)
{
  struct lpmx_proto *p = (void *) P;
  const net_addr *n = net->n.addr;
  uint i = lpmx_fam_of(n->type);
  struct lpmx_fam *f = &p->fam[i];
  int idx;

  if (!f->e || !net_is_ip(n))
    return;

  f->updates++;

  if (!new)
    lpmx_withdraw(p, f, n);
  else if ((idx = lpmx_nh_of(p, new->attrs)) == -1)
  {
    f->rejected++;
    log_rl(&p->rl, L_WARN "%s: %N left out: next hop not representable (more than %u paths, or MPLS labels)",
	   P->name, n, LPMX_PATHS);
    lpmx_withdraw(p, f, n);
  }
  else if (idx == -2)
  {
    f->rejected++;
    log_rl(&p->rl, L_WARN "%s: %N left out: next-hop table full (%u entries)", P->name, n, p->nht.max);
    lpmx_withdraw(p, f, n);
  }
  else if (idx < 0)
  {
    f->rejected++;
    lpmx_space_failed(p, p->nht.reg->shm_name ?: "", p->nht.reg->reserve_errno);
    lpmx_withdraw(p, f, n);
  }
  else if (f->bulk)
  {
    /* Collecting a feed: the engine gets it with the others at the end */
    struct lpmx_net *x = fib_get(&f->fib, n);
    if (x->nh != LPM_NONE)
      lpmx_nh_put(&p->nht, x->nh, p->tick_no);
    x->nh = idx;
    return;
  }
  else
  {
    /* The queued change holds the reference */
    lpmx_queue(p, f, n, idx);
    return;
  }

  /* Counters: published with the next batch, or by the event */
  f->unpublished = 1;
  ev_schedule(p->flush);
}

/*
 * Feeds. The first feed after the protocol started (a restart, a new
 * channel, `enable') starts with an empty engine and may bring a whole
 * table; updating the engine once per route would cost N single updates.
 * From the start until such a feed ends, routes are only collected in the
 * private FIB (next-hop references included); routes announced before the
 * feed begins, and routes that change or go while it runs, are handled
 * there too. When it ends, the engine is built from the FIB in one
 * lpm_build(), which links the complete table at once: readers see the
 * empty table until then, as they would have seen a half-filled one. The
 * FIB is freed after the build.
 */
static inline struct lpmx_fam *
lpmx_fam_of_channel(struct lpmx_proto *p, struct channel *c)
{
  return (p->fam[0].c == c) ? &p->fam[0] : (p->fam[1].c == c) ? &p->fam[1] : NULL;
}

/* A feed collects routes in a private FIB: no filter (nothing is looked up
 * but the prefixes that are there), so none is kept up to date */
static void
lpmx_fib_open(struct lpmx_proto *p, struct lpmx_fam *f)
{
  if (f->fib_up)
    return;

  fib_init(&f->fib, p->p.pool, f->c->net_type, sizeof(struct lpmx_net), OFFSETOF(struct lpmx_net, n), 0, lpmx_net_init);
  struct fib_bloom_config bc;
  fib_bloom_config_default(&bc);
  bc.enabled = 0;
  fib_bloom_configure(&f->fib, &bc);
  f->fib_up = 1;
}

static void
lpmx_fib_close(struct lpmx_fam *f)
{
  if (!f->fib_up)
    return;

  fib_free(&f->fib);
  f->fib_up = 0;
}

static void
lpmx_feed_begin(struct channel *c, int initial)
{
  struct lpmx_proto *p = (void *) c->proto;
  struct lpmx_fam *f = lpmx_fam_of_channel(p, c);
  struct lpm_stats s;

  if (!f || !f->e)
    return;

  /* Routes announced between the start and this may have been collected already */
  lpmx_flush_fam(p, f);
  lpm_stats(f->e, &s);
  /* Since the start, routes are collected already (the FIB holds them) */
  if (!f->bulk)
    f->bulk = initial && !s.prefixes;
  if (f->bulk)
    lpmx_fib_open(p, f);
  f->feed_t0 = lpmx_now_ns();
}

/* The engine could not take the whole table: single updates, the rest left out */
static void
lpmx_feed_fallback(struct lpmx_proto *p, struct lpmx_fam *f)
{
  uint nbad = 0, cap = 64;
  net_addr_union *bad = mb_alloc(p->p.pool, cap * sizeof(net_addr_union));
  u32 was;

  FIB_WALK(&f->fib, struct lpmx_net, x)
  {
    if (lpm_update(f->e, x->n.addr, x->nh, &was) >= 0)
      continue;
    if (nbad == cap)
      bad = mb_realloc(bad, (cap *= 2) * sizeof(net_addr_union));
    net_copy(&bad[nbad++].n, x->n.addr);
  }
  FIB_WALK_END;

  /* Not in the engine: the FIB node holds the reference */
  for (uint i = 0; i < nbad; i++)
  {
    struct lpmx_net *x = fib_find(&f->fib, &bad[i].n);
    lpmx_nh_put(&p->nht, x->nh, p->tick_no);
    fib_delete(&f->fib, x);
    f->failures++;
  }
  if (nbad)
  {
    log(L_ERR "%s: LPM engine out of memory, %u prefixes left out", p->p.name, nbad);
    lpmx_space_check(p, f);
  }
  mb_free(bad);
}

static void
lpmx_feed_end(struct channel *c)
{
  struct lpmx_proto *p = (void *) c->proto;
  struct lpmx_fam *f = lpmx_fam_of_channel(p, c);

  if (!f || !f->e)
    return;

  lpmx_flush_fam(p, f);
  u64 t0 = lpmx_now_ns();
  int built = 0;
  if (f->bulk && !f->fib.entries)
  {
    /* Nothing collected: the engine stays as empty as it is (no build) */
    f->bulk = 0;
    lpmx_fib_close(f);
  }
  else if (f->bulk)
  {
    uint cnt = 0;
    struct lpm_route *r = mb_alloc(p->p.pool, MAX(f->fib.entries, 1) * sizeof(struct lpm_route));

    FIB_WALK(&f->fib, struct lpmx_net, x)
    {
      net_copy(&r[cnt].n.n, x->n.addr);
      r[cnt].value = x->nh;
      cnt++;
    }
    FIB_WALK_END;

    int rv = lpm_build(f->e, r, cnt);
    mb_free(r);
    f->bulk = 0;

    if (rv < 0)
    {
      log(L_ERR "%s: LPM engine out of memory building %u prefixes, updating one by one", p->p.name, cnt);
      lpmx_feed_fallback(p, f);
    }
    else
    {
      f->bulk_builds++;
      built = 1;
    }
    lpmx_fib_close(f);
  }

  u64 t1 = lpmx_now_ns();
  struct lpm_stats s;
  lpm_stats(f->e, &s);
  f->feeds++;
  f->build_ns = built ? t1 - t0 : 0;
  f->feed_ns = t1 - f->feed_t0;
  f->feed_prefixes = s.prefixes;
  lpmx_publish(p, f, lpmx_fam_of(c->net_type), 0);

  if (built)
    log(L_INFO "%s: %s feed of %lu prefixes took %lu ms, of which %lu ms one engine build",
	p->p.name, net_label[c->net_type], f->feed_prefixes, f->feed_ns / 1000000, f->build_ns / 1000000);
}

/* Heartbeat; and the reuse grace period (lpm-shm.c) */
static void
lpmx_tick(timer *t)
{
  struct lpmx_proto *p = t->data;
  struct lpmx_header *h = p->x->hdr;

  if (lpmx_lost(p))
    return;

  __atomic_store_n(&h->heartbeat_ns, lpmx_now_ns(), __ATOMIC_RELAXED);
  lpmx_flush(p);

  /* An entry that only the cache holds is not in use: let it go */
  if (p->nh_rta && (p->nht.refs[p->nh_idx] == 1))
    lpmx_nh_forget(p);
  if (!p->dirty && !p->nht.nlimbo)
    return;

  p->dirty = 0;
  __atomic_fetch_add(&h->reuse_seq, 1, __ATOMIC_SEQ_CST);
  /* Reuse stores (plain ones) must not be seen before the increment: on a
   * weakly ordered CPU (arm64) the RMW alone does not keep them after it;
   * the fence pairs with the reader's acquire fence before its second read */
  __atomic_thread_fence(__ATOMIC_RELEASE);
  p->tick_no++;

  /* What was retired before the increment may be reused from now on */
  for (uint i = 0; i < 2; i++)
    if (p->fam[i].e && p->x->name)
      lpm_read_begin(p->fam[i].e, &p->fam[i].proxy);
  lpmx_nh_reclaim(&p->nht, p->tick_no);
}

static void
lpmx_postconfig(struct proto_config *CF)
{
  struct lpmx_config *cf = (void *) CF;

  if (cf->c.class == SYM_TEMPLATE)
    return;

  if (!proto_cf_find_channel(CF, NET_IP4) && !proto_cf_find_channel(CF, NET_IP6))
    cf_error("LPM exporter %s needs an ipv4 or ipv6 channel", CF->name);

  /* One protocol per export name */
  struct proto_config *o;
  if (cf->shm)
    WALK_LIST(o, CF->global->protos)
      if ((o != CF) && (o->protocol == &proto_lpm) && ((struct lpmx_config *) o)->shm &&
	  !strcmp(((struct lpmx_config *) o)->shm, cf->shm))
	cf_error("Shared memory %s is used by both %s and %s", cf->shm, o->name, CF->name);
}

static struct proto *
lpmx_init(struct proto_config *CF)
{
  struct proto *P = proto_new(CF);
  struct lpmx_proto *p = (void *) P;

  for (uint i = 0; i < 2; i++)
  {
    struct channel_config *cc = proto_cf_find_channel(CF, i ? NET_IP6 : NET_IP4);
    if (cc)
      p->fam[i].c = proto_add_channel(P, cc);
  }

  P->rt_notify = lpmx_rt_notify;
  P->feed_begin = lpmx_feed_begin;
  P->feed_end = lpmx_feed_end;
  return P;
}

static int lpmx_shutdown(struct proto *P);

static int
lpmx_start_fail(struct lpmx_proto *p, const char *why)
{
  log(L_ERR "%s: %s", p->p.name, why);
  proto_set_message(&p->p, (char *) why, -1);

  /* A protocol that failed to start keeps its pool until it starts again:
   * its engines and its name go now, or that start would find them held */
  lpmx_shutdown(&p->p);
  if (p->x)
  {
    if (p->x->reg)
      rfree(p->x->reg);
    rfree(p->x);
    p->x = NULL;
  }
  return PS_DOWN;
}

static int
lpmx_start(struct proto *P)
{
  struct lpmx_proto *p = (void *) P;
  struct lpmx_config *cf = (void *) P->cf;
  char err[256], name[128];

  p->rl = (struct tbf) TBF_DEFAULT_LOG_LIMITS;
  p->tick_no = 1;
  p->nh_rta = NULL;
  p->dirty = 0;
  p->flush = NULL;
  p->stop = NULL;
  p->space_failed = 0;
  p->restart = 0;
  p->run++;

  if (!(p->x = lpmx_export_open(P->pool, cf, P->name, err, sizeof(err))))
    return lpmx_start_fail(p, err);

  struct lpmx_header *h = p->x->hdr;
  lpmx_nh_init(&p->nht, P->pool, p->x->reg, (void *) ((byte *) h + h->nh_offset), LPMX_NH_MAX);

  for (uint i = 0; i < 2; i++)
  {
    struct lpmx_fam *f = &p->fam[i];
    uint type = i ? NET_IP6 : NET_IP4;
    f->updates = f->rejected = f->failures = 0;
    f->bulk = 0;
    f->nq = 0;
    f->unpublished = 0;
    f->feeds = f->bulk_builds = 0;
    f->feed_ns = f->build_ns = f->feed_prefixes = 0;
    if (!f->c)
      continue;

    bsnprintf(name, sizeof(name), "/%s.%s", cf->shm ?: "", i ? "ipv6" : "ipv4");
    struct lpm_params par = {
      .variant = cf->variant, .shm_name = cf->shm ? name : NULL,
      .shm_mode = cf->shm_mode, .shm_gid = cf->shm_gid,
    };
    if (!(f->e = lpm_new(P->pool, cf->class, type, &par)))
    {
      bsnprintf(err, sizeof(err), "cannot create the %s engine for %s%s%s: %m", cf->class->name,
		net_label[type], cf->shm ? " in shared memory " : "", cf->shm ? name : "");
      return lpmx_start_fail(p, err);
    }

    if (cf->shm)
    {
      lpm_reader_add(f->e, &f->proxy);
      lpm_read_begin(f->e, &f->proxy);
      strncpy(h->fam[i].region, name, LPMX_NAME_MAX - 1);
    }
    f->q = mb_alloc(P->pool, LPMX_BATCH * sizeof(struct lpm_change));

    /* The channel feeds once it is up, but announces routes from then on */
    f->fib_up = 0;
    lpmx_fib_open(p, f);
    f->bulk = 1;
    f->feed_t0 = lpmx_now_ns();
  }

  struct lpm_engine *e = p->fam[0].e ?: p->fam[1].e;
  strncpy(h->engine, cf->class->name, sizeof(h->engine) - 1);
  strncpy(h->variant, lpm_variant_names[e->variant], sizeof(h->variant) - 1);
  __atomic_store_n(&h->state, LPMX_RUNNING, __ATOMIC_SEQ_CST);

  p->flush = ev_new_init(P->pool, lpmx_flush_event, p);
  p->stop = ev_new_init(P->pool, lpmx_stop_event, p);
  p->tick = tm_new_init(P->pool, lpmx_tick, p, LPMX_TICK, 0);
  tm_start(p->tick, LPMX_TICK);
  proto_set_message(P, NULL, 0);
  return PS_UP;
}

static int
lpmx_shutdown(struct proto *P)
{
  struct lpmx_proto *p = (void *) P;

  /* The next-hop table goes with the export; the attributes are BIRD's */
  if (p->nh_rta)
    rta_free(p->nh_rta);
  p->nh_rta = NULL;

  if (p->x && p->x->hdr)
    lpmx_export_close(p->x);
  if (p->tick)
    tm_stop(p->tick);
  if (p->flush)
    ev_postpone(p->flush);
  if (p->stop)
    ev_postpone(p->stop);

  for (uint i = 0; i < 2; i++)
  {
    struct lpmx_fam *f = &p->fam[i];
    f->nq = 0;
    if (!f->e)
      continue;
    if (p->x && p->x->name)
      lpm_reader_remove(f->e, &f->proxy);
    lpm_free(f->e);
    f->e = NULL;
  }

  return PS_DOWN;
}

static int
lpmx_reconfigure(struct proto *P, struct proto_config *CF)
{
  struct lpmx_proto *p = (void *) P;
  struct lpmx_config *o = (void *) P->cf;
  struct lpmx_config *n = (void *) CF;

  if ((o->class != n->class) || (o->variant != n->variant) ||
      (!o->shm != !n->shm) || (o->shm && strcmp(o->shm, n->shm)) ||
      (o->shm_gid != n->shm_gid) || (o->shm_mode != n->shm_mode))
    return 0;

  for (uint i = 0; i < 2; i++)
  {
    struct channel_config *cc = proto_cf_find_channel(CF, i ? NET_IP6 : NET_IP4);
    if (!p->fam[i].c != !cc)
      return 0;
    if (cc && !proto_configure_channel(P, &p->fam[i].c, cc))
      return 0;
  }

  return 1;
}

static void
lpmx_copy_config(struct proto_config *dest UNUSED, struct proto_config *src UNUSED)
{
  /* Just a shallow copy: the engine class is static, the name in the config */
}

static void
lpmx_get_status(struct proto *P, byte *buf)
{
  struct lpmx_proto *p = (void *) P;
  struct lpm_engine *e = p->fam[0].e ?: p->fam[1].e;

  if (e && (P->proto_state == PS_UP))
    bsprintf(buf, "%s %s, %u next hops", e->class->name, lpm_variant_names[e->variant], p->nht.live);
}

static void
lpmx_show_proto_info(struct proto *P)
{
  struct lpmx_proto *p = (void *) P;
  struct lpmx_config *cf = (void *) P->cf;
  struct lpm_engine *e = p->fam[0].e ?: p->fam[1].e;

  if (!e || !p->x)
  {
    for (uint i = 0; i < 2; i++)
      if (p->fam[i].c)
	channel_show_info(p->fam[i].c);
    return;
  }

  lpmx_flush(p);
  struct lpmx_header *h = p->x->hdr;
  u64 nh_mem = LPMX_HEADER_SIZE + (u64) p->nht.used * sizeof(struct lpmx_nh);

  cli_msg(-1006, "  Engine:           %s, variant %s", cf->class->name, lpm_variant_names[e->variant]);
  if (cf->shm)
    cli_msg(-1006, "  Shared memory:    %s (/dev/shm/%s, instance %016lx, layout version %u)",
	    cf->shm, cf->shm, h->instance, LPMX_VERSION);
  else
    cli_msg(-1006, "  Shared memory:    none");
  cli_msg(-1006, "  Next-hop entries: %u in use, %u ever used, %u retired; %u at most, %u paths each",
	  p->nht.live, p->nht.used, p->nht.nlimbo, p->nht.max, LPMX_PATHS);

  for (uint i = 0; i < 2; i++)
  {
    struct lpmx_fam *f = &p->fam[i];
    struct lpm_stats s;
    if (!f->e)
      continue;

    lpm_stats(f->e, &s);
    cli_msg(-1006, "  %s:             %lu prefixes, %lu updates, %lu rejected (next hop not representable), %lu failed",
	    i ? "IPv6" : "IPv4", s.prefixes, f->updates, f->rejected, f->failures);
    cli_msg(-1006, "  %s memory:      %lu bytes for lookups%s, %lu for updates; %lu rows, %lu retired",
	    i ? "IPv6" : "IPv4", s.mem_lookup, cf->shm ? " (shared)" : "", s.mem_control, s.units, s.retired);
    if (f->bulk)
      cli_msg(-1006, "  %s feed:        running, %u prefixes collected for one engine build",
	      i ? "IPv6" : "IPv4", f->fib.entries);
    else if (f->feeds)
      cli_msg(-1006, "  %s feed:        %lu prefixes in %lu.%03lu s%s (feeds: %u, built at once: %u)",
	      i ? "IPv6" : "IPv4", f->feed_prefixes, f->feed_ns / 1000000000, f->feed_ns / 1000000 % 1000,
	      f->build_ns ? tmp_sprintf(", of which one engine build %lu.%03lu s",
					f->build_ns / 1000000000, f->build_ns / 1000000 % 1000) : "",
	      f->feeds, f->bulk_builds);
  }

  cli_msg(-1006, "  Next-hop memory:  %lu bytes%s", nh_mem, cf->shm ? " (shared)" : "");
  cli_msg(-1006, "  Generation:       %lu updates, %lu reuse grace periods of %u ms",
	  h->generation, h->reuse_seq, h->tick_ms);

  for (uint i = 0; i < 2; i++)
    if (p->fam[i].c)
      channel_show_info(p->fam[i].c);
}

/**
 * lpmx_show_lookup - show lpm lookup <protocol> <address>
 * @P: an LPM exporter
 * @n: the address, as a net of full length
 *
 * Prints the address, the prefix its answer came from and the next hops
 * (the same text as readers print), or "-" twice when nothing covers it.
 */
void
lpmx_show_lookup(struct proto *P, const net_addr *n)
{
  struct lpmx_proto *p = (void *) P;
  struct lpmx_fam *f = &p->fam[lpmx_fam_of(n->type)];
  char txt[1024];

  if ((P->proto_state != PS_UP) || !f->e)
    cf_error("%s has no %s engine running", P->name, net_label[n->type]);

  lpmx_flush(p);
  u32 v = (n->type == NET_IP4) ? lpm_lookup4(f->e, net4_prefix(n)) : lpm_lookup6(f->e, net6_prefix(n));

  /* The prefix, from the engine's prefixes: they must give the same answer */
  net_addr_union px;
  u32 pv = lpm_match(f->e, n, &px.n);

  if (v == LPM_NONE)
    cli_msg(-CLI_LPM_LOOKUP, "%I -%s", net_prefix(n), (pv != LPM_NONE) ? " MISMATCH: the exported prefixes cover it" : " -");
  else
  {
    lpmx_nh_format(txt, sizeof(txt), &p->nht.nh[v]);
    if (pv != v)
      cli_msg(-CLI_LPM_LOOKUP, "%I ? %s MISMATCH: the exported prefixes say %s", net_prefix(n), txt, (pv != LPM_NONE) ? "another next hop" : "none");
    else
      cli_msg(-CLI_LPM_LOOKUP, "%I %N %s", net_prefix(n), &px.n, txt);
  }

  cli_msg(0, "");
}

struct protocol proto_lpm = {
  .name =		"LPM",
  .template =		"lpm%d",
  .class =		PROTOCOL_LPM,
  .channel_mask =	NB_IP4 | NB_IP6,
  .proto_size =		sizeof(struct lpmx_proto),
  .config_size =	sizeof(struct lpmx_config),
  .postconfig =		lpmx_postconfig,
  .init =		lpmx_init,
  .start =		lpmx_start,
  .shutdown =		lpmx_shutdown,
  .reconfigure =	lpmx_reconfigure,
  .copy_config =	lpmx_copy_config,
  .get_status =		lpmx_get_status,
  .show_proto_info =	lpmx_show_proto_info,
};
