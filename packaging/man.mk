# Included after BIRD's Makefile (make -C TREE -f Makefile -f man.mk): the
# manual pages of bloombird, installed under BIRD's prefix (mandir= to
# change), honouring DESTDIR.
mandir ?= $(prefix)/share/man

.PHONY: man-install
man-install:
	$(INSTALL) -d $(DESTDIR)$(mandir)/man1 $(DESTDIR)$(mandir)/man7
	$(INSTALL_DATA) $(BB_TOP)/packaging/man/bird-lpm-reader.1 $(DESTDIR)$(mandir)/man1/
	$(INSTALL_DATA) $(BB_TOP)/packaging/man/bloombird.7 $(DESTDIR)$(mandir)/man7/
