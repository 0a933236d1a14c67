/*
 *	bloombird -- The Netlink writer: one batch of route messages to the kernel
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_NL_WRITER_H_
#define _BIRD_NL_WRITER_H_

#define NLW_TEXT_SIZE		4096	/* Kernel's reasons of one batch (NETLINK_EXT_ACK) */

/*
 * One batch: the main thread fills in the messages while the writer is idle,
 * nlw_write() fills in the results, and the main thread reads them once the
 * batch is done (nlw_wait(), nlw_done()). The writer touches nothing else.
 */
struct nlw_batch {
  byte *tx;				/* The messages; the last one asks for an ACK */
  uint len;
  u32 first;				/* Their sequence numbers: first .. first + cnt - 1 */
  uint cnt;
  int *err;				/* Per message: 0, an errno, or -1 (answer lost) */
  u16 *why;				/* Per message: 1 + offset of the kernel's reason in text, or 0 */

  /* Results */
  int send_err;				/* errno of sendmsg(), 0 if the kernel took the batch */
  int recv_err;				/* errno of recvmsg() other than EAGAIN, 0 if none */
  int lost;				/* Some answers may have been lost */
  u64 ns;				/* Time from sendmsg() to the last answer */
  uint bad_type, bad_seq, bad_trunc, bad_code, remnant;	/* Anomalies, counted ... */
  u32 bad_type_val, bad_seq_val, remnant_val;		/* ... and the first of each */
  int bad_code_val;
  uint text_len;
  char text[NLW_TEXT_SIZE];
};

int nlw_start(void (*done)(void), pool *pool);
int nlw_threaded(void);
void nlw_write(int fd, struct nlw_batch *b);
void nlw_submit(int fd, struct nlw_batch *b);
void nlw_wait(void);
int nlw_done(void);

#endif
