# BIRD configuration of tests/bench/roa-import (sourced; prints it).
# roa_bird_conf VARIANT DATADIR FEEDER_AS BIRD_AS [BUILD]
#   none  ROA tables loaded, import filter without roa_check (baseline)
#   off   import filter marks roa_check()'s verdict, ROA tables without trie
#   on    the same with "trie on" in both ROA tables
#   lpm   the same with "lpm engine simd" in both ROA tables (bloombird);
#         stock, which has no such option, gets the text of "off"
# The verdict goes into the route's preference (an rta field, no extended
# attribute to allocate): 101 valid, 102 invalid, 100 (BGP's default) unknown.
# Stock and bloombird get this same text (but for lpm). The BGP protocols start disabled:
# the script enables them once the static protocols have filled the ROA
# tables, so that no route is checked against a partial table.
# Part of bloombird. Can be freely distributed and used under the terms of
# the GNU GPL, version 2 or any later version.
roa_bird_conf() {
  local variant=$1 data=$2 peer_as=$3 local_as=$4 build=${5:-bloombird} topt="" imp4 imp6
  [ "$variant" = on ] && topt=" { trie on; }"
  [ "$variant" = lpm ] && [ "$build" = bloombird ] && topt=" { lpm engine simd; }"
  if [ "$variant" = none ]; then
    imp4="import all;" imp6="import all;"
  else
    imp4="import filter roa_mark4;" imp6="import filter roa_mark6;"
  fi
  cat <<EOF
router id 10.255.0.2;
roa4 table r4$topt;
roa6 table r6$topt;
protocol device { scan time 10; }
protocol static roa4s {
  roa4 { table r4; };
include "$data/roa4.conf";
}
protocol static roa6s {
  roa6 { table r6; };
include "$data/roa6.conf";
}
filter roa_mark4 {
  case roa_check(r4, net, bgp_path.last) {
    ROA_VALID: preference = 101;
    ROA_INVALID: preference = 102;
  }
  accept;
}
filter roa_mark6 {
  case roa_check(r6, net, bgp_path.last) {
    ROA_VALID: preference = 101;
    ROA_INVALID: preference = 102;
  }
  accept;
}
template bgp feeder { local as $local_as; hold time 240; connect delay time 1; connect retry time 1; disabled; }
protocol bgp feeder4 from feeder { neighbor 10.255.0.1 as $peer_as; ipv4 { $imp4 export none; }; }
protocol bgp feeder6 from feeder { neighbor fdbb::1 as $peer_as; ipv6 { $imp6 export none; }; }
EOF
}
