"""Find and parse the timestamp near the start of a log line, in the formats training clusters print.

ISO-8601 / Python logging / Megatron, HF (`04/18/2026 18:02:51`), glog (`[E1120 10:01:02.123 ...]`), syslog and `dmesg -T`, and epoch seconds.
"""

from __future__ import annotations

import calendar
import re

_MONTHS = {m: i for i, m in enumerate(
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], start=1)}

_ISO = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?\s?(Z|[+-]\d\d:?\d\d)?")
_GLOG = re.compile(r"(?<![A-Za-z0-9])[IWEFD](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?")
_SYSLOG = re.compile(
    r"(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) )?(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(\d{1,2}) "
    r"(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?: (\d{4}))?")
_US_DATE = re.compile(r"(?<!\d)(\d\d)/(\d\d)/(\d{4}) (\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?")  # HF / transformers
_EPOCH = re.compile(r"^\[?(1[5-9]\d{8}(?:\.\d{1,9})?)(?![\d])")

HEAD = 112  # timestamps are looked for in the first HEAD characters of a line


def _frac(text: str | None) -> float:
    return float("0." + text) if text else 0.0


def _tz_offset(tz: str | None) -> int:
    if not tz or tz == "Z":
        return 0
    sign = -1 if tz[0] == "-" else 1
    digits = tz[1:].replace(":", "")
    return sign * (int(digits[:2]) * 3600 + int(digits[2:4]) * 60)


def parse_timestamp(line: str, year: int | None = None) -> float | None:
    """Epoch seconds (UTC where the line has no zone) of the first timestamp near the line's start, or None.

    `year` fills in formats that print none (glog, syslog); without it those lines give None.
    """
    head = line[:HEAD]
    if not any(c.isdigit() for c in head[:40]):
        return None
    m = _ISO.search(head)
    if m:
        y, mo, d, hh, mm, ss, frac, tz = m.groups()
        try:
            base = calendar.timegm((int(y), int(mo), int(d), int(hh), int(mm), int(ss)))
        except (ValueError, OverflowError):
            return None
        return base + _frac(frac) - _tz_offset(tz)
    m = _US_DATE.search(head)
    if m:
        mo, d, y, hh, mm, ss, frac = m.groups()
        if 1 <= int(mo) <= 12 and 1 <= int(d) <= 31:
            return calendar.timegm((int(y), int(mo), int(d), int(hh), int(mm), int(ss))) + _frac(frac)
    m = _EPOCH.search(head)
    if m:
        return float(m.group(1))
    m = _GLOG.search(head)
    if m and year is not None:
        mo, d, hh, mm, ss, frac = m.groups()
        if 1 <= int(mo) <= 12:
            return calendar.timegm((year, int(mo), int(d), int(hh), int(mm), int(ss))) + _frac(frac)
    m = _SYSLOG.search(head)
    if m:
        mon, d, hh, mm, ss, frac, y = m.groups()
        use_year = int(y) if y else year
        if use_year is not None:
            return calendar.timegm((use_year, _MONTHS[mon], int(d), int(hh), int(mm), int(ss))) + _frac(frac)
    return None
