#!/usr/bin/env python3
# gen-queries.py 4|6 TABLE OUTDIR [N [SEED]] -- query files for dpdk-lpm when
# it runs on its own (make bench hands it the files of our own tool):
#   in      N random addresses inside random prefixes of TABLE
#   random  N uniformly random addresses (IPv6: within 2000::/3)
#   trace   destinations of real captures from ../shared/data/traces, if
#           BLOOMBIRD_TRACE names the xz file (dst4 / dst6)
#
# Can be freely distributed and used under the terms of the GNU GPL,
# version 2 or any later version.
import ipaddress, lzma, os, random, sys

if len(sys.argv) < 4 or sys.argv[1] not in ('4', '6'):
    sys.exit('usage: gen-queries.py 4|6 TABLE OUTDIR [N [SEED]]')
v6 = sys.argv[1] == '6'
bits = 128 if v6 else 32
table, out = sys.argv[2], sys.argv[3]
n = int(sys.argv[4]) if len(sys.argv) > 4 else 1000000
rnd = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 1)
addr = ipaddress.IPv6Address if v6 else ipaddress.IPv4Address

nets = []
for line in open(table):
    p = line.split('\t')[0].strip()
    try:
        net = ipaddress.ip_network(p, strict=False)
    except ValueError:
        continue
    if net.version == (6 if v6 else 4):
        nets.append((int(net.network_address), net.prefixlen))
if not nets:
    sys.exit('gen-queries.py: no prefixes in ' + table)

os.makedirs(out, exist_ok=True)
with open(os.path.join(out, 'in'), 'w') as f:
    for _ in range(n):
        a, l = nets[rnd.randrange(len(nets))]
        f.write(str(addr(a | rnd.getrandbits(bits - l) if l < bits else a)) + '\n')
with open(os.path.join(out, 'random'), 'w') as f:
    for _ in range(n):
        a = (1 << 125) | rnd.getrandbits(125) if v6 else rnd.getrandbits(32)
        f.write(str(addr(a)) + '\n')
trace = os.environ.get('BLOOMBIRD_TRACE')
if trace:
    with lzma.open(trace, 'rt') as src, open(os.path.join(out, 'trace'), 'w') as f:
        f.write(src.read())
