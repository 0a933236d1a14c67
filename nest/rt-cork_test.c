/*
 *	bloombird -- Route import cork tests
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#include "test/birdtest.h"

#include "lib/event.h"
#include "lib/resource.h"
#include "nest/rt-cork.h"
#include "lib/timer.h"
#include "conf/conf.h"
#include "sysdep/unix/unix.h"

static int runs[4];

static void cork_hook(void *data) { runs[(int) (uintptr_t) data]++; }

static event *
cork_event(int i)
{
  event *e = ev_new(&root_pool);
  e->hook = cork_hook;
  e->data = (void *) (uintptr_t) i;
  return e;
}

static void
run_events(void)
{
  ev_run_list(&global_event_list);
}

/* Producers stopped while corked go on exactly once, after the last release */
static int
t_cork_release(void)
{
  memset(runs, 0, sizeof(runs));

  event *a = cork_event(0), *b = cork_event(1);

  bt_assert(!rt_corked());
  bt_assert(!rt_cork_check(a));
  run_events();
  bt_assert(runs[0] == 0);

  rt_cork_acquire();
  rt_cork_acquire();			/* Two holders (two kernel protocols) */
  bt_assert(rt_corked());
  bt_assert(rt_cork_check(a));
  bt_assert(rt_cork_check(b));
  bt_assert(rt_cork_check(a));		/* Asked again: still queued once */

  rt_cork_release();
  run_events();
  bt_assert(rt_corked());
  bt_assert(runs[0] == 0 && runs[1] == 0);

  rt_cork_release();
  bt_assert(!rt_corked());
  run_events();
  bt_assert(runs[0] == 1 && runs[1] == 1);

  run_events();
  bt_assert(runs[0] == 1 && runs[1] == 1);
  return 1;
}

/* A producer that goes away while corked (its session closed) is not run */
static int
t_cork_gone(void)
{
  memset(runs, 0, sizeof(runs));

  event *a = cork_event(2), *b = cork_event(3);

  rt_cork_acquire();
  bt_assert(rt_cork_check(a));
  bt_assert(rt_cork_check(b));
  rfree(a);				/* bgp_close_conn() frees its uncork event */
  rt_cork_release();
  run_events();
  bt_assert(runs[2] == 0 && runs[3] == 1);

  /* Corked again: the released producer stops again */
  rt_cork_acquire();
  bt_assert(rt_cork_check(b));
  rt_cork_release();
  run_events();
  bt_assert(runs[3] == 2);
  return 1;
}

int
main(int argc, char *argv[])
{
  bt_init(argc, argv);
  timer_init();
  io_init();			/* The global event list ... */
  config_init();
  config = config_alloc("");	/* ... and the configuration its event log reads */

  bt_test_suite(t_cork_release, "Cork: stopped producers resume once, after the last release");
  bt_test_suite(t_cork_gone, "Cork: a producer freed while corked is not resumed");

  return bt_exit_value();
}
