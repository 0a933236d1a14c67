# The LPM exporter end to end at CI size (RouteViews 2008 IPv4 + tier-1
# IPv6): GoBGP and FRR ospfd feed patched and stock bird; the shared-memory
# reader's answers = show lpm lookup = the kernel's ip route get = stock's
# show route for, after convergence, a refeed, the RIS trace, a mass
# withdrawal and re-announcement, flaps and a bird restart (the reader stays
# attached). tests/e2e/exporter.sh; `full' for the tier-1 IPv4 table.
. "$(dirname "$0")/../lib.sh"
bash "$top/tests/e2e/exporter.sh" ci
