"""URL -> request info, after k8s.io/apiserver's RequestInfoFactory."""

from .errors import ApiError

NAMESPACE_SUBRESOURCES = ("status", "finalize")
DISCOVERY_PATHS = ("/version", "/api", "/apis", "/healthz", "/livez", "/readyz", "/openapi/v2", "/openapi/v3")


class Target:
    """What a request addresses: a resource (rtype/namespace/name/subresource) or a discovery path."""

    def __init__(self, verb, path, **info):
        self.verb = verb
        self.path = path
        self.group = info.get("group", "")
        self.version = info.get("version")
        self.rtype = info.get("rtype")
        self.namespace = info.get("namespace")
        self.name = info.get("name")
        self.subresource = info.get("subresource")
        self.discovery = info.get("discovery", False)
        self.identity = None  # authz.Identity of the caller, set once authenticated

    def log_fields(self):
        return {"verb": self.verb, "path": self.path, "resource": self.rtype.key if self.rtype else None,
                "namespace": self.namespace, "name": self.name, "subresource": self.subresource}


def not_found():
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def resolve(registry, method, path, query):
    """Parse a request path; raises 404 for paths that name nothing served."""
    parts = [p for p in path.split("/") if p]
    if not parts or path.rstrip("/") in DISCOVERY_PATHS or parts[0] in ("openapi",) or len(parts) <= 2 and parts[0] == "apis":
        return Target("discovery", path, discovery=True)
    if parts[0] == "api" and len(parts) >= 2:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[0] == "apis" and len(parts) >= 3:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        raise not_found()
    if not rest:
        return Target("discovery", path, discovery=True, group=group, version=version)
    namespace = None
    if rest[0] == "namespaces" and len(rest) > 2 and rest[2] not in NAMESPACE_SUBRESOURCES:
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3:
        raise not_found()
    rtype = registry.find(group, version, rest[0])
    if rtype is None:
        raise not_found()
    name = rest[1] if len(rest) > 1 else None
    subresource = rest[2] if len(rest) > 2 else None
    if namespace is not None and not rtype.namespaced:
        raise not_found()
    verb = _verb(method, name, query)
    return Target(verb, path, group=group, version=version, rtype=rtype, namespace=namespace, name=name,
                  subresource=subresource)


def _verb(method, name, query):
    if method == "GET":
        if query.get("watch", [""])[-1] in ("true", "1"):
            return "watch"
        return "get" if name else "list"
    if method == "DELETE":
        return "delete" if name else "deletecollection"
    return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())
