"""Redaction before telemetry leaves the machine: hosts, IPs, MACs, users, home/job paths and secrets become stable
placeholders (host-1, ip-3, user-1, path-2, mac-1, secret-1), and `restore` maps them back for the operator and tools.

One Redactor per incident keeps the mapping stable across every message; it never sees or sends anything itself.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

KINDS = ("secret", "path", "user", "mac", "ip", "host")
PLACEHOLDER = re.compile(r"(?<![\w.-])(secret|path|user|mac|ip|host)-(\d+)(?![\w])")
# Shared storage roots where job, checkpoint and data paths live; a path under one is cut after ROOT_DEPTH parts.
JOB_ROOTS = ("lustre", "gpfs", "weka", "scratch", "fsx", "nfs", "mnt", "data", "datasets", "shared", "projects",
             "checkpoint", "checkpoints", "efs", "vast", "work", "group", "groups")
ROOT_DEPTH = 3  # /lustre/proj/run7/ckpt/iter_100 -> path-1/ckpt/iter_100 (path-1 = /lustre/proj/run7)
NOT_USERS = frozenset({"root", "nobody", "user", "users", "admin", "system", "unknown", "none", "null", "svc"})
_SEG = r"[\w.@+=-]+"
_SECRET_VALUE = re.compile(
    r"(?i)\b([A-Z0-9_.-]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?))(?![A-Za-z])"
    r"(\"?\s*[=:]\s*\"?)([^\s\"',;]{4,})")
_SECRET_SHAPES = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----"
    r"|\b(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|hf_[A-Za-z0-9]{20,}"
    r"|AKIA[0-9A-Z]{16}|eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,})", re.DOTALL)
_URL_CREDS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/\s:@]+):([^/\s@]+)@")
_HOME = re.compile(r"(?<![\w.-])/(home|Users|u)/([A-Za-z_][\w.-]*)")
_JOB_PATH = re.compile(rf"(?<![\w.-])/(?:{'|'.join(JOB_ROOTS)})(?:/{_SEG})*")
_USER_FIELD = re.compile(r"(?i)\b(?:(?:user(?:name|id)?|logname|owner)\"?\s*[=:]\s*\"?|uid=\d+\()([A-Za-z_][\w.-]{1,31})\b")
_USER_FIELD_ENV = re.compile(r"\b(?:USER|LOGNAME|USERNAME|SUDO_USER)=([A-Za-z_][\w.-]{1,31})\b")
_EMAIL = re.compile(r"\b([A-Za-z_][\w.+-]*)@((?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,})\b")
_MAC = re.compile(r"(?i)(?<![\w:])(?:[0-9a-f]{2}[:-]){5}[0-9a-f]{2}(?:(?::[0-9a-f]{2}){2})?(?![\w:])")
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.]\d)")
_IPV6 = re.compile(r"(?i)(?<![\w:])(?:[0-9a-f]{1,4}:){1,7}:?(?::?[0-9a-f]{1,4}){1,7}(?![\w:])")
_FQDN = re.compile(r"(?i)(?<![\w.@/-])(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+"
                   r"(?:com|net|org|io|internal|local|lan|corp|cluster|intra|priv|private|home|ai|cloud|edu|gov)"
                   r"(?![\w-]|\.[\w-])")  # java.io.IOException is a package, not a host


def is_loopback_url(url: str | None) -> bool:
    """True for a URL on this machine (localhost, 127/8, ::1); None or garbage counts as not loopback."""
    if not url:
        return False
    host = (urlsplit(url if "//" in url else f"//{url}").hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _ipv6(text: str) -> bool:
    if text.count(":") < 2 or ("::" not in text and text.count(":") != 7):
        return False
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _ipv4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


class Redactor:
    """Stable placeholders for one incident. `redact(text)` before sending, `restore(text)` on what comes back."""

    def __init__(self, hosts: Iterable[str] = (), ips: Iterable[str] = (), users: Iterable[str] = ()) -> None:
        self._to_ph: dict[tuple[str, str], str] = {}  # (kind, real) -> placeholder
        self._to_real: dict[str, str] = {}
        self._counts = dict.fromkeys(KINDS, 0)
        self._literals: dict[str, str] = {}  # real host/user name -> kind, replaced wherever it stands
        self._literal_re: re.Pattern[str] | None = None
        for host in hosts:
            self.add("host", host)
        for ip in ips:
            self.add("ip", ip)
        for user in users:
            self.add("user", user)

    @classmethod
    def for_job(cls, job: Any, extra_hosts: Iterable[str] = ()) -> Redactor:
        """Seeded with the job's hosts (in job order: host-1 is its first node) and their IPs."""
        hosts = [n.host for n in job.nodes] + [h for h in extra_hosts if h]
        return cls(hosts=hosts, ips=[n.ip for n in job.nodes if n.ip])

    @property
    def mapping(self) -> dict[str, str]:
        """placeholder -> real value."""
        return dict(self._to_real)

    def add(self, kind: str, real: str) -> str:
        """The placeholder for `real` (a new one the first time it is seen)."""
        key = (kind, real)
        if key not in self._to_ph:
            self._counts[kind] += 1
            ph = f"{kind}-{self._counts[kind]}"
            self._to_ph[key] = ph
            self._to_real[ph] = real
            if kind in ("host", "user") and len(real) >= 3:
                self._literals[real] = kind
                short = real.split(".")[0] if kind == "host" else ""
                if short and short != real and len(short) >= 3 and not short.isdigit():
                    self._literals.setdefault(short, kind)
                    self._to_ph.setdefault((kind, short), ph)
                self._literal_re = None
        return self._to_ph[key]

    def _user(self, name: str) -> str:
        if name.lower() in NOT_USERS or PLACEHOLDER.fullmatch(name):
            return name
        return self.add("user", name)

    # --- redacting ----------------------------------------------------------------------------------------

    def redact(self, text: str) -> str:
        if not text:
            return text
        text = _SECRET_SHAPES.sub(lambda m: self.add("secret", m.group(0)), text)
        text = _URL_CREDS.sub(lambda m: f"{m.group(1)}{self.add('secret', m.group(2) + ':' + m.group(3))}@", text)
        text = _SECRET_VALUE.sub(self._secret_value, text)
        text = _HOME.sub(lambda m: f"/{m.group(1)}/{self._user(m.group(2))}", text)
        text = _JOB_PATH.sub(self._job_path, text)
        for pattern in (_USER_FIELD, _USER_FIELD_ENV):
            for m in pattern.finditer(text):
                if not PLACEHOLDER.fullmatch(m.group(1)):
                    self._user(m.group(1))
        text = _EMAIL.sub(lambda m: f"{self._user(m.group(1))}@{self.add('host', m.group(2))}", text)
        text = _MAC.sub(lambda m: self.add("mac", m.group(0).lower()), text)
        text = _IPV4.sub(lambda m: self.add("ip", m.group(0)) if _ipv4(m.group(0)) else m.group(0), text)
        text = _IPV6.sub(lambda m: self.add("ip", m.group(0).lower()) if _ipv6(m.group(0)) else m.group(0), text)
        text = _FQDN.sub(lambda m: m.group(0) if PLACEHOLDER.fullmatch(m.group(0)) else self.add("host", m.group(0)),
                         text)
        return self._replace_literals(text)

    def _secret_value(self, m: re.Match[str]) -> str:
        value = m.group(3)
        if PLACEHOLDER.fullmatch(value) or re.fullmatch(r"[\d.,eE+-]+", value) or value.lower() in (
                "none", "null", "true", "false", "<redacted>"):
            return m.group(0)
        return f"{m.group(1)}{m.group(2)}{self.add('secret', value)}"

    def _job_path(self, m: re.Match[str]) -> str:
        path = m.group(0)
        parts = path.split("/")  # ['', 'lustre', 'proj', 'run7', ...]
        head, tail = "/".join(parts[: ROOT_DEPTH + 1]), parts[ROOT_DEPTH + 1:]
        if len(parts) <= 2:  # the bare root (/data) names nothing
            return path
        return "/".join([self.add("path", head), *tail])

    def _replace_literals(self, text: str) -> str:
        if not self._literals:
            return text
        if self._literal_re is None:
            names = sorted(self._literals, key=len, reverse=True)
            self._literal_re = re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, names)) + r")(?![\w-]|\.\w)")
        return self._literal_re.sub(lambda m: self._to_ph[(self._literals[m.group(1)], m.group(1))], text)

    def redact_value(self, value: Any) -> Any:
        """Every string in a JSON-like value redacted (dict keys too)."""
        return _walk(value, self.redact)

    # --- restoring ----------------------------------------------------------------------------------------

    def restore(self, text: str) -> str:
        """Placeholders this Redactor issued become the real values again; anything else is left as it is."""
        if not text or not self._to_real:
            return text
        return PLACEHOLDER.sub(lambda m: self._to_real.get(m.group(0), m.group(0)), text)

    def restore_value(self, value: Any) -> Any:
        return _walk(value, self.restore)


def _walk(value: Any, fn: Any) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {(fn(k) if isinstance(k, str) else k): _walk(v, fn) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_walk(v, fn) for v in value)
    return value


__all__ = ["Redactor", "is_loopback_url"]
