# Included after BIRD's own Makefile (make -C TREE -f Makefile -f dpcpe-bench.mk):
# links dpcpe-bench against the tree's objects with the tree's flags, the way
# BIRD links its unit tests; with DPDK (pkg-config libdpdk) when it is there.
DPCPE_DPDK_CFLAGS := $(shell pkg-config --cflags libdpdk 2>/dev/null)
DPCPE_DPDK_LIBS := $(shell pkg-config --libs libdpdk 2>/dev/null)

ifneq ($(DPCPE_DPDK_LIBS),)
DPCPE_DPDK_OBJ := $(DPCPE_BENCH_OUT)-dpdk.o
DPCPE_BENCH_DEFS := -DDPCPE_BENCH_DPDK -I$(dir $(DPCPE_BENCH_SRC))

$(DPCPE_DPDK_OBJ): $(dir $(DPCPE_BENCH_SRC))dpcpe-bench-dpdk.c $(dir $(DPCPE_BENCH_SRC))dpcpe-bench-dpdk.h
	$(E)echo CC $@
	$(Q)$(CC) -O2 -g $(DPCPE_DPDK_CFLAGS) -c -o $@ $<
endif

$(DPCPE_BENCH_OUT): $(DPCPE_BENCH_SRC) $(DPCPE_DPDK_OBJ) $(tests_objs) | prepare
	$(E)echo LD $@
	$(Q)$(CC) $(CFLAGS) $(DPCPE_BENCH_DEFS) -o $@ $(DPCPE_BENCH_SRC) $(DPCPE_DPDK_OBJ) $(tests_objs) $(LDFLAGS) $(LIBS) $(DAEMON_LIBS) $(DPCPE_DPDK_LIBS)
