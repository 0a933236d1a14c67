/*
 *	bloombird -- a minimal data-plane program of the reader library
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 *
 *	Build against the installed library:
 *	  cc -o lpm-lookup lpm-lookup.c $(pkg-config --cflags --libs bird-lpm-reader)
 *	Run (as root, or as a member of the export's group):
 *	  ./lpm-lookup bb-fwd 192.0.2.1 2001:db8::1
 *
 *	Maps export NAME of bird's `protocol lpm', then for each address
 *	looks it up in a batch (lpmr_lookup4/6), reads the answers' next-hop
 *	entries between lpmr_stamp() and lpmr_valid() and prints
 *	"ADDR NEXT-HOPS" ("ADDR -" for no route), as a forwarding loop would.
 */

#include <lpm-reader.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ADDRS 256

struct query {
  const char *text;
  int v6;
  uint32_t a[4];		/* Host order; IPv4 in a[0] */
  uint32_t nh;
  struct lpmx_nh entry;
};

static int
parse(struct query *q, const char *text)
{
  unsigned char b[16];
  q->text = text;
  if (inet_pton(AF_INET, text, b) == 1)
  {
    q->v6 = 0;
    q->a[0] = ((uint32_t) b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
    return 1;
  }
  if (inet_pton(AF_INET6, text, b) == 1)
  {
    q->v6 = 1;
    for (int i = 0; i < 4; i++)
      q->a[i] = ((uint32_t) b[4*i] << 24) | (b[4*i+1] << 16) | (b[4*i+2] << 8) | b[4*i+3];
    return 1;
  }
  return 0;
}

int
main(int argc, char **argv)
{
  if (argc < 3 || argc - 2 > MAX_ADDRS)
  {
    fprintf(stderr, "usage: %s NAME ADDRESS... (at most %d addresses)\n", argv[0], MAX_ADDRS);
    return 2;
  }

  static struct query q[MAX_ADDRS];
  int n = argc - 2;
  for (int i = 0; i < n; i++)
    if (!parse(&q[i], argv[i + 2]))
    {
      fprintf(stderr, "%s: not an IPv4 or IPv6 address: %s\n", argv[0], argv[i + 2]);
      return 2;
    }

  char err[256];
  int code;
  struct lpmr *r = lpmr_open(argv[1], &code, err, sizeof(err));
  if (!r)
  {
    fprintf(stderr, "%s: %s\n", argv[0], err);
    return 1;
  }

  /* One family's addresses in one batch each; entries read under one stamp */
  static uint32_t a4[MAX_ADDRS], a6[MAX_ADDRS][4], nh4[MAX_ADDRS], nh6[MAX_ADDRS];
  int valid = 0;
  for (int attempt = 0; attempt < 100 && !valid; attempt++)
  {
    uint64_t stamp = lpmr_stamp(r);
    unsigned n4 = 0, n6 = 0;
    for (int i = 0; i < n; i++)
      if (q[i].v6)
	memcpy(a6[n6++], q[i].a, sizeof(a6[0]));
      else
	a4[n4++] = q[i].a[0];

    if (n4 && lpmr_has4(r))
      lpmr_lookup4(r, a4, nh4, n4);
    else
      for (unsigned i = 0; i < n4; i++) nh4[i] = LPMR_NONE;
    if (n6 && lpmr_has6(r))
      lpmr_lookup6(r, (const uint32_t (*)[4]) a6, nh6, n6);
    else
      for (unsigned i = 0; i < n6; i++) nh6[i] = LPMR_NONE;

    n4 = n6 = 0;
    for (int i = 0; i < n; i++)
    {
      q[i].nh = q[i].v6 ? nh6[n6++] : nh4[n4++];
      const struct lpmx_nh *e = (q[i].nh != LPMR_NONE) ? lpmr_nh(r, q[i].nh) : NULL;
      if (e)
	q[i].entry = *e;
      else
	memset(&q[i].entry, 0, sizeof(q[i].entry));
    }
    valid = lpmr_valid(r, stamp);
  }
  if (!valid)
  {
    fprintf(stderr, "%s: routes kept changing under 100 attempts; try again\n", argv[0]);
    lpmr_close(r);
    return 1;
  }

  for (int i = 0; i < n; i++)
  {
    char text[512];
    if (q[i].nh == LPMR_NONE || !q[i].entry.dest)
      strcpy(text, "-");
    else
      lpmx_nh_format(text, sizeof(text), &q[i].entry);
    printf("%s %s\n", q[i].text, text);
  }

  lpmr_close(r);
  return 0;
}
