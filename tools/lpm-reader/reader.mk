# Included after BIRD's own Makefile (make -C TREE -f Makefile -f reader.mk):
# builds bird-lpm-reader with the tree's flags from the reader, the simd
# engine's lookup files, the variant choice (with sysdep/x86's variants and
# CPU detection where configure built them) and the next-hop formatter, all
# as they are in the tree (no copies). LPMR_MAIN names another program of
# the library (tests/tools/lpm/lpmr-fuzz.c).
LPMR_MAIN ?= $(LPMR_TOP)/tools/lpm-reader/bird-lpm-reader.c
LPMR_SRC := $(LPMR_MAIN) $(LPMR_TOP)/tools/lpm-reader/lpm-reader.c \
  nest/lpm-simd-scalar.c nest/lpm-variant.c proto/lpm/lpm-format.c \
  $(if $(filter sysdep/x86,$(dirs)),sysdep/x86/lpm-simd-avx2.c sysdep/x86/lpm-simd-avx512.c sysdep/x86/cpu.c)

$(LPMR_OUT): $(LPMR_SRC) $(LPMR_TOP)/tools/lpm-reader/lpm-reader.h proto/lpm/lpm-shm.h nest/lpm-simd.h | prepare
	$(E)echo LD $@
	$(Q)$(CC) $(CFLAGS) -I$(LPMR_TOP) -o $@ $(LPMR_SRC)

# ---------------------------------------------------------------- the library
# libbird-lpm-reader.so.$(LPMR_SOVERSION): the same sources without a main(),
# compiled position-independent; lpm-reader.map exports the reader API
# (lpmr_*) and lpmx_nh_format() alone, so the engine's lookup code inside it
# stays private. bird-lpm-reader linked against it, a pkg-config file, and
# their install (lpmr-install: DESTDIR, prefix, exec_prefix, bindir, libdir,
# includedir, as in BIRD's Makefile and the GNU conventions).
# Bump LPMR_SOVERSION when the API or a structure of lpm-reader.h or
# proto/lpm/lpm-shm.h changes incompatibly (lpm-shm.h's LPMX_VERSION changes
# with any layout change).
LPMR_SOVERSION := 0
LPMR_LIBVERSION := $(LPMR_SOVERSION).1.0
LPMR_VERSION ?= 0
LPMR_DIR := $(LPMR_TOP)/tools/lpm-reader
LPMR_BUILD ?= $(objdir)/lpm-reader
LPMR_SONAME := libbird-lpm-reader.so.$(LPMR_SOVERSION)
LPMR_LIB := $(LPMR_BUILD)/libbird-lpm-reader.so.$(LPMR_LIBVERSION)
LPMR_LIB_SRC := $(filter-out $(LPMR_MAIN),$(LPMR_SRC))
libdir ?= $(exec_prefix)/lib
includedir ?= $(prefix)/include
LPMR_INCDIR := $(includedir)/bird-lpm-reader

.PHONY: lpmr-lib lpmr-install
lpmr-lib: $(LPMR_LIB) $(LPMR_BUILD)/bird-lpm-reader $(LPMR_BUILD)/bird-lpm-reader.pc

$(LPMR_LIB): $(LPMR_LIB_SRC) $(LPMR_DIR)/lpm-reader.h $(LPMR_DIR)/lpm-reader.map proto/lpm/lpm-shm.h nest/lpm-simd.h | prepare
	$(E)echo LD $@
	$(Q)mkdir -p $(LPMR_BUILD)
	$(Q)$(CC) $(CFLAGS) -fPIC -I$(LPMR_TOP) -shared -Wl,-soname,$(LPMR_SONAME) \
	  -Wl,--version-script,$(LPMR_DIR)/lpm-reader.map $(LDFLAGS) -o $@ $(LPMR_LIB_SRC)
	$(Q)ln -sf $(notdir $@) $(LPMR_BUILD)/$(LPMR_SONAME)
	$(Q)ln -sf $(LPMR_SONAME) $(LPMR_BUILD)/libbird-lpm-reader.so

# The tool as a user of the library (bird-lpm-reader.c uses its API alone)
$(LPMR_BUILD)/bird-lpm-reader: $(LPMR_MAIN) $(LPMR_LIB)
	$(E)echo LD $@
	$(Q)$(CC) $(CFLAGS) -I$(LPMR_TOP) $(LDFLAGS) -o $@ $(LPMR_MAIN) -L$(LPMR_BUILD) -lbird-lpm-reader

$(LPMR_BUILD)/bird-lpm-reader.pc: $(LPMR_DIR)/reader.mk
	$(Q)mkdir -p $(LPMR_BUILD)
	$(Q)printf '%s\n' 'prefix=$(prefix)' 'exec_prefix=$(exec_prefix)' 'libdir=$(libdir)' \
	  'includedir=$(includedir)' '' 'Name: bird-lpm-reader' \
	  'Description: Reader of the LPM exports of bloombird (BIRD) in shared memory' \
	  'Version: $(LPMR_VERSION)' 'Cflags: -I$${includedir}/bird-lpm-reader' \
	  'Libs: -L$${libdir} -lbird-lpm-reader' > $@

# Headers keep their relative place: lpm-reader.h includes
# "proto/lpm/lpm-shm.h", found beside it as <bird-lpm-reader/proto/lpm/lpm-shm.h>
lpmr-install: lpmr-lib
	$(INSTALL) -d $(DESTDIR)$(libdir)/pkgconfig $(DESTDIR)$(LPMR_INCDIR)/proto/lpm $(DESTDIR)$(bindir)
	$(INSTALL_DATA) $(LPMR_LIB) $(DESTDIR)$(libdir)/
	ln -sf $(notdir $(LPMR_LIB)) $(DESTDIR)$(libdir)/$(LPMR_SONAME)
	ln -sf $(LPMR_SONAME) $(DESTDIR)$(libdir)/libbird-lpm-reader.so
	$(INSTALL_DATA) $(LPMR_DIR)/lpm-reader.h $(DESTDIR)$(LPMR_INCDIR)/
	$(INSTALL_DATA) proto/lpm/lpm-shm.h $(DESTDIR)$(LPMR_INCDIR)/proto/lpm/
	$(INSTALL_DATA) $(LPMR_BUILD)/bird-lpm-reader.pc $(DESTDIR)$(libdir)/pkgconfig/
	$(INSTALL_PROGRAM) $(LPMR_BUILD)/bird-lpm-reader $(DESTDIR)$(bindir)/
