# Included after BIRD's own Makefile (make -C TREE -f Makefile -f dpcpe-bench.mk):
# links dpcpe-bench against the tree's objects with the tree's flags, the way
# BIRD links its unit tests.
$(DPCPE_BENCH_OUT): $(DPCPE_BENCH_SRC) $(tests_objs) | prepare
	$(E)echo LD $@
	$(Q)$(CC) $(CFLAGS) -o $@ $(DPCPE_BENCH_SRC) $(tests_objs) $(LDFLAGS) $(LIBS) $(DAEMON_LIBS)
