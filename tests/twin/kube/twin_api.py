"""Twin-only endpoints under /_twin/ (README "Twin-only HTTP endpoints"); never in the request log."""

import json
import re

from . import authz
from .api import Response


def _error(code, message):
    return Response(code, {"error": message})


def _json_body(body):
    """(the parsed JSON body, None), or (None, the 400 answer) when it is not JSON; an empty body is {}."""
    try:
        return json.loads(body or b"{}"), None
    except ValueError as err:
        return None, _error(400, "bad body: %s" % err)


def _valid_reachable(spec):
    return isinstance(spec.get("reachable"), bool)


def _valid_tuned(spec):
    return "fail" in spec and isinstance(spec["fail"], (str, type(None))) and isinstance(spec.get("applied", True), bool)


class TwinApi:
    def __init__(self, store, request_log, faults, runner=None, tokens=None):
        self.store = store
        self.tokens = tokens
        self.request_log = request_log
        self.faults = faults
        self.runner = runner  # twin.controllers runner (set_reachable, wire), None without controllers

    def handle(self, method, path, query, body):
        routes = [
            ("GET", r"/_twin/requests", lambda m: Response(200, self.request_log.snapshot())),
            ("DELETE", r"/_twin/requests", lambda m: self._reset_log()),
            ("GET", r"/_twin/faults", lambda m: Response(200, {"faults": self.faults.list()})),
            ("POST", r"/_twin/faults", lambda m: self._add_fault(body)),
            ("DELETE", r"/_twin/faults", lambda m: self._clear_faults()),
            ("POST", r"/_twin/nodes/([^/]+)", lambda m: self._node(m.group(1), body)),
            ("GET", r"/_twin/wire", lambda m: self._wire(query)),
            ("POST", r"/_twin/tuned/([^/]+)", lambda m: self._tuned(m.group(1), body)),
            ("POST", r"/_twin/tokens", lambda m: self._token(body)),
            ("POST", r"/_twin/compact", lambda m: Response(200, {"compacted": str(self.store.compact())})),
        ]
        known = False
        for route_method, pattern, action in routes:
            match = re.fullmatch(pattern, path.rstrip("/"))
            if match:
                known = True
                if route_method == method:
                    return action(match)
        return _error(405, "method %s not allowed on %s" % (method, path)) if known else _error(404, "no twin endpoint %s" % path)

    def _reset_log(self):
        self.request_log.reset()
        return Response(200, {"reset": True})

    def _clear_faults(self):
        self.faults.clear()
        return Response(200, {"faults": []})

    def _add_fault(self, body):
        try:
            spec = json.loads(body or b"{}")
            return Response(201, self.faults.add(spec))
        except (ValueError, TypeError, KeyError, re.error) as err:
            return _error(400, "bad fault: %s" % err)

    def _token(self, body):
        """{"user": name, "groups": [...]} or {"serviceaccount": "namespace/name"}: a bearer token authorized by RBAC."""
        spec, error = _json_body(body)
        if error is not None:
            return error
        if not isinstance(spec, dict):
            return _error(400, 'body must be {"user": name, "groups": [...]} or {"serviceaccount": "namespace/name"}')
        account = spec.get("serviceaccount")
        if isinstance(account, str) and account.count("/") == 1 and all(account.split("/")):
            identity = authz.Identity.service_account(*account.split("/"))
        elif isinstance(spec.get("user"), str) and spec["user"] and isinstance(spec.get("groups", []), list):
            identity = authz.Identity(spec["user"], [str(group) for group in spec.get("groups", [])])
        else:
            return _error(400, 'body must be {"user": name, "groups": [...]} or {"serviceaccount": "namespace/name"}')
        return Response(201, {"token": self.tokens.mint(identity), "user": identity.name, "groups": identity.groups})

    def _no_runner(self):
        return _error(503, "the twin's controllers are not running (started with --no-controllers, or twin.controllers "
                           "is not available): no reachability or wire simulation")

    def _node_request(self, name, body, valid, usage):
        """(the body of a POST /_twin/<what>/<node>, None), or (None, the error): 503 without the controllers, 400 for a
        body that is not a JSON object `valid` accepts (the message is `usage`), 404 for a node that does not exist."""
        if self.runner is None:
            return None, self._no_runner()
        spec, error = _json_body(body)
        if error is not None:
            return None, error
        if not isinstance(spec, dict) or not valid(spec):
            return None, _error(400, usage)
        if self.store.get("nodes", name) is None:
            return None, _error(404, 'node "%s" not found' % name)
        return spec, None

    def _node(self, name, body):
        spec, error = self._node_request(name, body, _valid_reachable, 'body must be {"reachable": true|false}')
        if error is not None:
            return error
        self.runner.set_reachable(name, spec["reachable"])
        return Response(200, {"node": name, "reachable": spec["reachable"]})

    def _tuned(self, name, body):
        """{"fail": "TuneD stderr line", "applied": true} makes TuneD on that node fail its next application (Degraded; Applied
        as given); {"fail": null} heals it."""
        spec, error = self._node_request(name, body, _valid_tuned, 'body must be {"fail": "message"|null, "applied": true|false}')
        if error is not None:
            return error
        self.runner.set_tuned_failure(name, spec["fail"], spec.get("applied", True))
        return Response(200, {"node": name, "fail": spec["fail"], "applied": spec.get("applied", True)})

    def _wire(self, query):
        if self.runner is None:
            return self._no_runner()
        namespace, pod = (query.get("namespace") or [None])[-1], (query.get("pod") or [None])[-1]
        if not namespace or not pod:
            return _error(400, "namespace and pod query parameters are required")
        return Response(200, self.runner.wire(namespace, pod))
