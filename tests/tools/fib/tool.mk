# Included after BIRD's own Makefile (make -C TREE -f Makefile -f tool.mk):
# links fibtool against the tree's objects with the tree's flags, the way
# BIRD links its unit tests.
$(FIBTOOL_OUT): $(FIBTOOL_SRC) $(tests_objs) | prepare
	$(E)echo LD $@
	$(Q)$(CC) $(CFLAGS) -o $@ $(FIBTOOL_SRC) $(tests_objs) $(LDFLAGS) $(LIBS) $(DAEMON_LIBS)
