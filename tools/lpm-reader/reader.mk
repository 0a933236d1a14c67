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
