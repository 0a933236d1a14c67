/*
 *	bloombird -- Kernel scan, prune and flush in time slices
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_KRT_SLICE_H_
#define _BIRD_KRT_SLICE_H_

struct krt_proto;
struct proto;

/*
 * krt-slice.c, called from krt.c (bird-patches/krt-slice-hooks.patch):
 *
 * krt_slice_init() at every start of a kernel protocol. krt_slice_scan() when
 * its scan timer fires: returns 1 when it has started (or, if one runs,
 * requested) a sliced scan, 0 when stock's scan has to run. krt_slice_missed()
 * when a route change is not written because the first scan has not finished:
 * the table is scanned again when it has. krt_slice_flush() at shutdown
 * instead of krt_flush_routes(): returns 1 when the flush runs in slices and
 * the protocol goes down by itself later, 0 when stock's flush has to run.
 * krt_slice_stop() at shutdown, aborts a running scan (one begun after the
 * initial feed counts as done: the protocol is initialized, as after stock's
 * atomic scan). krt_slice_show_info()
 * is the protocol's show_proto_info hook. krt_slice_writes_done() (from the
 * system side) when the writer thread has finished a batch: a flush waiting
 * for its deletions goes on.
 */
void krt_slice_init(struct krt_proto *p);
int krt_slice_scan(struct krt_proto *p);
void krt_slice_missed(struct krt_proto *p);
int krt_slice_flush(struct krt_proto *p);
void krt_slice_stop(struct krt_proto *p);
void krt_slice_show_info(struct proto *P);
void krt_slice_writes_done(struct krt_proto *p);

/* krt.c, split out of krt_prune() and krt_shutdown(), and a scan request for all */
void krt_prune_net(struct krt_proto *p, net *n);
void krt_prune_end(struct krt_proto *p);
int krt_shutdown_done(struct krt_proto *p);
void krt_scan_kick_all(void);
void kif_scan_deferred(void);

/*
 * The system side (sysdep/linux/nl-dump.c):
 *
 * krt_sys_slice_init() forgets the system side's state of an earlier run.
 * krt_sys_sliced() says whether the protocol scans in slices.
 * krt_sys_dump_start() asks the kernel for the protocol's table; with @flush,
 * the dump deletes BIRD's routes instead of scanning them (returns 0 if it
 * cannot). krt_sys_dump_step() processes the dump until @deadline and returns
 * 1 when it is complete, 0 when there is more, -1 when it failed.
 * krt_sys_dump_stop() abandons it; krt_sys_dump_deleted() counts the routes a
 * flush dump deleted. krt_sys_writes_step() sends pending writes
 * until @deadline, 1 when none are left (none pending or with the writer
 * thread); krt_sys_writes_later() says whether krt_slice_writes_done() will
 * be called when they go on; krt_sys_dump_waiting() whether the dump has
 * stopped until then (a full queue); krt_sys_writes_drop() forgets pending ones;
 * krt_sys_mark_seen() marks routes written while a scan runs as seen.
 * krt_sys_flush_net() queues the deletion stock's flush makes for a network.
 * krt_sys_table_wanted() says whether another kernel protocol of the running
 * configuration syncs the protocol's table (the flush then is stock's).
 * krt_sys_slice() is the time budget of one slice.
 */
void krt_sys_slice_init(struct krt_proto *p);
int krt_sys_sliced(struct krt_proto *p);
int krt_sys_dump_start(struct krt_proto *p, int flush);
int krt_sys_dump_step(struct krt_proto *p, btime deadline);
uint krt_sys_dump_deleted(struct krt_proto *p);
void krt_sys_dump_stop(struct krt_proto *p);
int krt_sys_writes_step(struct krt_proto *p, btime deadline);
int krt_sys_writes_later(struct krt_proto *p);
int krt_sys_dump_waiting(struct krt_proto *p);
int krt_sys_writes_full(struct krt_proto *p);
void krt_sys_writes_drop(struct krt_proto *p);
void krt_sys_mark_seen(struct krt_proto *p, int on);
void krt_sys_flush_net(struct krt_proto *p, const net_addr *n);
int krt_sys_table_wanted(struct krt_proto *p);
btime krt_sys_slice(struct krt_proto *p);
void krt_sys_show_info(struct krt_proto *p);

/*
 * sysdep/linux/nl-queue.c: krt_sys_kif_scan_later() puts an interface scan off
 * while the writer thread has a batch of route writes in the kernel (the
 * interface dump would wait for the kernel's locks behind it); it then calls
 * kif_scan_deferred() from BIRD's loop when the batch is done.
 */
int krt_sys_kif_scan_later(void);

#endif
