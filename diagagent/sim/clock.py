"""Timestamp formats as the real tools print them, and seeded random streams, for the simulator.

Every random choice comes from `stream(seed, purpose...)`: string-seeded, so independent of hashing and order.
"""

from __future__ import annotations

import random
import time


def stream(seed: int, *purpose: object) -> random.Random:
    """A random stream for one purpose of one bundle; the same arguments always give the same stream."""
    return random.Random("|".join([str(seed), *map(str, purpose)]))


def _tm(ts: float) -> time.struct_time:
    return time.gmtime(int(ts))


def _micros(ts: float) -> int:
    return round((ts - int(ts)) * 1e6) % 1_000_000


def iso(ts: float) -> str:
    """`2026-11-20T10:01:02Z` (job.yaml, truth)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", _tm(ts))


def plain(ts: float) -> str:
    """`2026-11-20 10:01:02` (Megatron's iteration prefix, NeMo)."""
    return time.strftime("%Y-%m-%d %H:%M:%S", _tm(ts))


def pylog(ts: float) -> str:
    """`2026-11-20 10:01:02,123` (Python logging's default asctime)."""
    return time.strftime("%Y-%m-%d %H:%M:%S", _tm(ts)) + ",%03d" % (_micros(ts) // 1000)


def glog(ts: float) -> str:
    """`1120 10:01:02.123456789` (c10 / glog, after the severity letter)."""
    return time.strftime("%m%d %H:%M:%S", _tm(ts)) + ".%06d%03d" % (_micros(ts), int(ts * 1e9) % 1000)


def glog_us(ts: float) -> str:
    """`1120 10:01:02.123000` (torch.distributed.elastic's Python logging)."""
    return time.strftime("%m%d %H:%M:%S", _tm(ts)) + ".%06d" % _micros(ts)


def dmesg(ts: float) -> str:
    """`Fri Nov 20 10:01:02 2026` (`dmesg -T`, inside brackets)."""
    tm = _tm(ts)
    return time.strftime("%a %b ", tm) + "%2d" % tm.tm_mday + time.strftime(" %H:%M:%S %Y", tm)


def syslog(ts: float) -> str:
    """`Nov 20 10:01:02` (syslog / journal)."""
    tm = _tm(ts)
    return time.strftime("%b ", tm) + "%2d" % tm.tm_mday + time.strftime(" %H:%M:%S", tm)


def elastic(ts: float) -> str:
    """`2026-11-20_10:01:02` (torchrun's failure summary)."""
    return time.strftime("%Y-%m-%d_%H:%M:%S", _tm(ts))


def hms(seconds: float) -> str:
    """`1:02:03` or `02:03` (tqdm's elapsed time)."""
    s = int(seconds)
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"
