# Stock BIRD bugs that bloombird fixes, reproduced on running daemons: the
# stock answer is checked to still be the wrong one (so this list stays
# true) and the patched answer to be the right one. README: "Differences
# from stock BIRD".
# tier: quick
. "$(dirname "$0")/../lib.sh"

# 1. trie max-length match (bird-patches/trie-match-longest-maxlen.patch):
#    with `trie on', a query X/31 is answered by the host route X/32, which
#    does not cover it; likewise X/127 by X/128.
cat > "$WORK/trie.conf" <<EOC
router id 192.0.2.1;
ipv4 table t4 { trie on; bloom off; };
ipv6 table t6 { trie on; bloom off; };
protocol device {}
protocol static s4 { ipv4 { table t4; }; route 192.0.2.0/31 blackhole; route 192.0.2.0/32 unreachable; }
protocol static s6 { ipv6 { table t6; }; route 2001:db8::/127 blackhole; route 2001:db8::/128 unreachable; }
EOC
sed 's/ bloom off;//' "$WORK/trie.conf" > "$WORK/trie-stock.conf"
start_bird P "$BIN" "$WORK/trie.conf" || { bad "patched bird starts"; cat "$WORK/P.log"; finish; }
start_bird S "$STOCK_BIN" "$WORK/trie-stock.conf" || { bad "stock bird starts"; cat "$WORK/S.log"; finish; }
sleep 1
for q in "192.0.2.0/31 t4 192.0.2.0/32 192.0.2.0/31" "2001:db8::/127 t6 2001:db8::/128 2001:db8::/127"; do
  set -- $q
  s=$(birdc_q "$STOCK_BIN" "$SOCK_S" show route for "$1" table "$2" | grep -oE '^[0-9a-f:.]+/[0-9]+' | head -1)
  p=$(birdc_q "$BIN" "$SOCK_P" show route for "$1" table "$2" | grep -oE '^[0-9a-f:.]+/[0-9]+' | head -1)
  echo "show route for $1 table $2 (trie on): stock '$s', bloombird '$p'"
  check "stock bug reproduced: stock answers $1 with $3" [ "$s" = "$3" ]
  check "bloombird answers $1 with $4" [ "$p" = "$4" ]
done
finish
