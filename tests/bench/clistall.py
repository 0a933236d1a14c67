#!/usr/bin/env python3
# clistall.py SOCKET OUT [INTERVAL_MS [BIRD_PID]] -- time a trivial command on
# bird's control socket ("show status") every INTERVAL_MS (10) milliseconds
# and append "unix_time_s latency_ms" per answer to OUT until killed. One
# connection, as birdc keeps; reconnects if bird goes away (a gap in the
# samples, not a stall). With BIRD_PID, more columns tell where a long
# answer's time went: how long this sampler and bird's main thread waited
# for a CPU during it (run_delay of /proc/.../schedstat, ms), how long
# bird's other threads (the Netlink writer) ran meanwhile (ms) and on which
# CPU the busiest of them was last, and the softirq time of the CPUs
# (ms, in ticks of /proc/stat). Part of bloombird, GPL-2.0-or-later.
import os, re, socket, sys, time

sock_path, out_path = sys.argv[1], sys.argv[2]
interval = (float(sys.argv[3]) if len(sys.argv) > 3 else 10.0) / 1000.0
bird_pid = sys.argv[4] if len(sys.argv) > 4 else None


def run_delay(path):
    """Time the thread has waited on a run queue, in ns (0 if it is gone)."""
    try:
        with open(path) as f:
            return int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def others():
    """Run time (ns) and last CPU of bird's threads other than the main one."""
    r = {}
    try:
        tids = os.listdir("/proc/%s/task" % bird_pid)
    except OSError:
        return r
    for t in tids:
        if t == bird_pid:
            continue
        try:
            with open("/proc/%s/task/%s/schedstat" % (bird_pid, t)) as f:
                ran = int(f.read().split()[0])
            with open("/proc/%s/task/%s/stat" % (bird_pid, t)) as f:
                cpu = int(f.read().rsplit(")", 1)[1].split()[36])
        except (OSError, IndexError, ValueError):
            continue
        r[t] = (ran, cpu)
    return r


def softirq():
    """Softirq ticks of all CPUs."""
    with open("/proc/stat") as f:
        return int(f.readline().split()[7])


TICK_MS = 1000.0 / os.sysconf("SC_CLK_TCK")


def waits():
    if not bird_pid:
        return None
    return (run_delay("/proc/thread-self/schedstat"),
            run_delay("/proc/%s/task/%s/schedstat" % (bird_pid, bird_pid)),
            others(), softirq())


def wait_cols(w0, w1):
    if w0 is None:
        return ""
    ran, cpu = 0, -1
    for t, (r1, c) in w1[2].items():
        d = r1 - w0[2].get(t, (r1, c))[0]
        if d >= ran:
            ran, cpu = d, c
    return " %.3f %.3f %.3f %d %.0f" % ((w1[0] - w0[0]) / 1e6, (w1[1] - w0[1]) / 1e6,
                                        ran / 1e6, cpu, (w1[3] - w0[3]) * TICK_MS)
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
    w0 = waits()
    t0 = time.monotonic()
    try:
        s.sendall(b"show status\n")
        read_reply(s)
    except OSError:
        s.close()
        s = connect()
        continue
    t1 = time.monotonic()
    w1 = waits()
    out.write("%.3f %.3f%s\n" % (time.time(), (t1 - t0) * 1000.0, wait_cols(w0, w1)))
    rest = interval - (time.monotonic() - t1)
    if rest > 0:
        time.sleep(rest)
