# The end-to-end suite at CI size (RouteViews 2008 IPv4 + tier-1 IPv6):
# GoBGP feeders, FRR ospfd neighbours, patched and stock bird side by side,
# kernel tables, trace replay, churn, flaps, bad input. `make e2e` runs it
# with the full tier-1 IPv4 table.
. "$(dirname "$0")/../lib.sh"
bash "$top/tests/e2e/e2e.sh" ci
