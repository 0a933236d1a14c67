#!/usr/bin/env python3
# clistall.py SOCKET OUT [INTERVAL_MS] -- time a trivial command on bird's
# control socket ("show status") every INTERVAL_MS (10) milliseconds and
# append "unix_time_s latency_ms" per answer to OUT until killed. One
# connection, as birdc keeps; reconnects if bird goes away (a gap in the
# samples, not a stall). Part of bloombird, GPL-2.0-or-later.
import os, re, socket, sys, time

sock_path, out_path = sys.argv[1], sys.argv[2]
interval = (float(sys.argv[3]) if len(sys.argv) > 3 else 10.0) / 1000.0
last_line = re.compile(rb"^[0-9]{4} ", re.M)


def connect():
    """Connect and read the banner; that wait is a sample too (bird accepts
    and greets from its loop). Refused connections (bird not up) are not."""
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(sock_path)
        except OSError:
            s.close()
            time.sleep(0.05)
            continue
        t0 = time.monotonic()
        try:
            read_reply(s)          # the banner
        except OSError:
            s.close()
            continue
        out.write("%.3f %.3f\n" % (time.time(), (time.monotonic() - t0) * 1000.0))
        return s


def read_reply(s):
    buf = b""
    while not last_line.search(buf):
        chunk = s.recv(65536)
        if not chunk:
            raise OSError("closed")
        buf += chunk
    return buf


out = open(out_path, "a", buffering=1)
s = connect()
while True:
    t0 = time.monotonic()
    try:
        s.sendall(b"show status\n")
        read_reply(s)
    except OSError:
        s.close()
        s = connect()
        continue
    t1 = time.monotonic()
    out.write("%.3f %.3f\n" % (time.time(), (t1 - t0) * 1000.0))
    rest = interval - (time.monotonic() - t1)
    if rest > 0:
        time.sleep(rest)
