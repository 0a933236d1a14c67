# The patched build names the distribution; the stock build does not.
# tier: quick
. "$(dirname "$0")/../lib.sh"
V=$(cat "$tree/VERSION")
Vre=$(sed 's/\./\\./g' <<< "$V")

v=$("$BIN/bird" --version 2>&1)
sv=$("$STOCK_BIN/bird" --version 2>&1)
echo "patched: $v"; echo "stock:   $sv"
check "patched bird --version names bloombird" grep -q "^BIRD version $Vre+bloombird-[0-9.]*\$" <<< "$v"
check "stock bird --version is plain $V" grep -qx "BIRD version $V" <<< "$sv"

cat > "$WORK/min.conf" <<EOC
router id 192.0.2.1;
protocol device {}
EOC
start_bird P "$BIN" "$WORK/min.conf"
start_bird S "$STOCK_BIN" "$WORK/min.conf"
ps=$(birdc_q "$BIN" "$SOCK_P" show status)
ss=$(birdc_q "$STOCK_BIN" "$SOCK_S" show status)
check "birdc show status of patched names bloombird" grep -q "^BIRD $Vre+bloombird-" <<< "$ps"
check "birdc show status of stock is plain" grep -qx "BIRD $V" <<< "$ss"
finish
