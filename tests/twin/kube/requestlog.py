"""Request log with per-verb counters, and fault injection (README "Twin-only HTTP endpoints")."""

import re
import threading

from .errors import ApiError, internal, stale, timeout, too_many_requests

BASE_VERBS = ("get", "list", "create", "update", "patch", "delete")
WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")
REVIEWS = ("selfsubjectaccessreviews.authorization.k8s.io", "selfsubjectrulesreviews.authorization.k8s.io")


class RequestLog:
    def __init__(self):
        self._lock = threading.Lock()
        self._entries = []

    def record(self, entry):
        with self._lock:
            self._entries.append(dict(entry))

    def reset(self):
        with self._lock:
            self._entries = []

    def snapshot(self):
        with self._lock:
            entries = [dict(e) for e in self._entries]
        counts = dict.fromkeys(BASE_VERBS, 0)
        writes = 0
        for entry in entries:
            counts[entry["verb"]] = counts.get(entry["verb"], 0) + 1
            # access reviews are creates that store nothing (authz.REVIEWS): no write
            if entry["verb"] in WRITE_VERBS and not entry["dry_run"] and 200 <= entry["code"] < 300 and entry.get("resource") not in REVIEWS:
                writes += 1
        return {"requests": entries, "counts": counts, "writes": writes}


_REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
            409: "Conflict", 410: "Expired", 422: "Invalid", 429: "TooManyRequests", 500: "InternalError",
            503: "ServiceUnavailable", 504: "Timeout"}


class Fault:
    def __init__(self, spec):
        self.verb = spec.get("verb")
        self.path = re.compile(spec["path"]) if spec.get("path") else None
        self.code = spec.get("code", 500)
        self.count = int(spec.get("count", 1))
        # how long a "timeout" fault holds the request before answering 504
        self.seconds = float(spec.get("seconds", 1.0))
        # the Retry-After of a 429 (the real server always sends 1)
        self.retry_after = int(spec.get("retry_after", 1))
        if self.code != "timeout" and self.code not in _REASONS:
            raise ValueError("code must be one of %s or \"timeout\"" % sorted(_REASONS))

    def matches(self, verb, path):
        return (not self.verb or self.verb == verb) and (not self.path or self.path.search(path))

    def error(self, rtype, name):
        if self.code == "timeout":
            return timeout()
        if self.code == 409 and rtype is not None:
            return stale(rtype, name or "")
        if self.code == 500:
            return internal("injected fault")
        if self.code == 429:
            return too_many_requests(self.retry_after)
        return ApiError(self.code, _REASONS[self.code], "injected fault (%s)" % _REASONS[self.code])

    def describe(self):
        return {"verb": self.verb, "path": self.path.pattern if self.path else None, "code": self.code,
                "count": self.count, "seconds": self.seconds}


class Faults:
    """The next `count` requests matching verb and path regex answer the fault instead of running."""

    def __init__(self):
        self._lock = threading.Lock()
        self._faults = []

    def add(self, spec):
        fault = Fault(spec)
        with self._lock:
            self._faults.append(fault)
        return fault.describe()

    def clear(self):
        with self._lock:
            self._faults = []

    def list(self):
        with self._lock:
            return [f.describe() for f in self._faults]

    def take(self, verb, path):
        """The first matching fault, its count consumed; None when no fault applies."""
        with self._lock:
            for fault in self._faults:
                if fault.matches(verb, path):
                    fault.count -= 1
                    if fault.count <= 0:
                        self._faults.remove(fault)
                    return fault
        return None
