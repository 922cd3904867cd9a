"""Resource requests: list/get/create/update/patch/delete/watch and pods/log, over the store."""

import json
import queue
import time

import yaml

from . import authz, discovery, openapi, tables
from . import patch as patching
from .errors import ApiError, bad_request, method_not_allowed, unconditional_update, unsupported_media_type
from .errors import not_found as resource_not_found
from .routing import not_found
from .selectors import fields_match, labels_match, parse_field_selector, parse_label_selector
from .store import decode_continue, encode_continue

JSON_TYPE = "application/json"
FIELD_VALIDATION = ("Strict", "Warn", "Ignore")
PROPAGATION = ("Orphan", "Background", "Foreground")
DEFAULT_WATCH_SECONDS = 1800
BOOKMARK_SECONDS = 60.0  # the cacher's bookmarkFrequency


class Response:
    """An HTTP answer: a JSON body (dict), text, or a stream of JSON-lines chunks (watch)."""

    def __init__(self, code, body, content_type=JSON_TYPE, headers=None, stream=None):
        self.code = code
        self.body = body
        self.content_type = content_type
        self.headers = dict(headers or {})
        self.stream = stream


def _one(query, key, default=None):
    values = query.get(key)
    return values[-1] if values else default


def _decode(body, content_type, yaml_ok=True):
    if not body:
        raise bad_request("the body of the request is empty")
    ctype = (content_type or JSON_TYPE).split(";")[0].strip().lower()
    try:
        if ctype in ("application/yaml", "application/apply-patch+yaml") and yaml_ok:
            return yaml.safe_load(body.decode("utf-8"))
        if ctype.endswith("json") or ctype in ("", "*/*"):
            return json.loads(body.decode("utf-8"))
    except (ValueError, yaml.YAMLError) as err:
        raise bad_request("error decoding the request body: %s" % err)
    raise unsupported_media_type([JSON_TYPE, "application/yaml"])


class ResourceApi:
    def __init__(self, store, server_address):
        self.store = store
        self.server_address = server_address
        self.shutting_down = None  # threading.Event set by the server on shutdown (ends watches)
        self.openapi = openapi.OpenApi(store.registry)

    # ------------------------------------------------------------------ discovery

    def discovery(self, target, query=None, headers=None):
        registry = self.store.registry
        path = target.path.rstrip("/") or "/"
        if path.startswith("/openapi/"):
            return self._openapi(path, (headers or {}).get("Accept") or "")
        if path == "/version":
            return Response(200, dict(discovery.VERSION))
        if path in ("/healthz", "/livez", "/readyz"):
            return Response(200, "ok", "text/plain")
        if path == "/api":
            return Response(200, discovery.api_versions(self.server_address()))
        if path == "/apis":
            return Response(200, discovery.api_group_list(registry))
        parts = [p for p in path.split("/") if p]
        doc = None
        if parts[0] == "apis" and len(parts) == 2:
            doc = discovery.api_group(registry, parts[1])
        elif parts[0] == "api" and len(parts) == 2 and parts[1] == "v1":
            doc = discovery.api_resource_list(registry, "", "v1")
        elif parts[0] == "apis" and len(parts) == 3:
            doc = discovery.api_resource_list(registry, parts[1], parts[2])
        if doc is None:
            raise not_found()
        return Response(200, doc)

    def _openapi(self, path, accept):
        """/openapi/v2 (gnostic protobuf when asked for, as kubectl does, else JSON), /openapi/v3[/<group-version>]."""
        if path == "/openapi/v2":
            if any(mime in accept for mime in openapi.PROTOBUF_ACCEPTED):
                return Response(200, self.openapi.v2_protobuf(), openapi.PROTOBUF)
            return Response(200, self.openapi.v2_json())
        if path == "/openapi/v3":
            return Response(200, self.openapi.v3_index())
        doc = self.openapi.v3(path[len("/openapi/v3/"):]) if path.startswith("/openapi/v3/") else None
        if doc is None:
            raise not_found()
        # served at a hash-named URL: immutable, as the apiserver marks it
        return Response(200, doc, headers={"Cache-Control": "public, immutable"})

    # ------------------------------------------------------------------ dispatch

    def handle(self, target, method, query, headers, body):
        rtype = target.rtype
        if target.subresource:
            return self._subresource(target, method, query, headers, body)
        if target.name is None and rtype.namespaced and target.namespace is None and target.verb not in ("list", "watch"):
            raise method_not_allowed("the server does not allow this method on the requested resource")
        if target.name is not None and rtype.namespaced and target.namespace is None:
            raise not_found()
        if target.verb not in rtype.verbs:
            raise method_not_allowed("the server does not allow this method on the requested resource")
        handler = {
            "list": self._list, "watch": self._watch, "get": self._get, "create": self._create,
            "update": self._update, "patch": self._patch, "delete": self._delete,
            "deletecollection": self._delete_collection,
        }.get(target.verb)
        if handler is None:
            raise method_not_allowed("the server does not allow this method on the requested resource")
        return handler(target, query, headers, body)

    def _subresource(self, target, method, query, headers, body):
        rtype, sub = target.rtype, target.subresource
        verbs = rtype.subresources().get(sub)
        if verbs is None or (rtype.namespaced and target.namespace is None):
            raise not_found()
        if target.verb not in verbs:
            raise method_not_allowed("the server does not allow this method on the requested resource")
        if sub == "log":
            return self._log(target, query)
        return {"get": self._get, "update": self._update, "patch": self._patch}[target.verb](target, query, headers, body)

    # ------------------------------------------------------------------ helpers

    def _out(self, target, obj, in_list=False):
        """The object as served at the request's version (CR lists keep kind/apiVersion in items, typed lists do not)."""
        if in_list and not target.rtype.is_custom:
            obj.pop("kind", None)
            obj.pop("apiVersion", None)
        else:
            obj["apiVersion"] = target.rtype.api_version(target.version)
            obj["kind"] = target.rtype.kind
        return obj

    def _field_manager(self, target, query, headers):
        """{"manager", "api_version", "force"}: fieldManager, else the User-Agent up to its first "/" (prefixFromUserAgent)."""
        manager = _one(query, "fieldManager") or (headers.get("User-Agent") or "").split("/")[0][:128]
        if len(manager) > 128:
            raise ApiError(422, "Invalid", 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be longer than 128')
        return {"manager": manager, "api_version": target.rtype.api_version(target.version), "force": _one(query, "force") == "true"}

    def _write_options(self, target, query, headers=None):
        dry_run = query.get("dryRun") or []
        if any(v != "All" for v in dry_run):
            raise bad_request("Invalid dry run value: %s, valid values are: All" % ",".join(dry_run))
        validation = _one(query, "fieldValidation")
        if validation and validation not in FIELD_VALIDATION:
            raise bad_request("invalid fieldValidation directive: %s" % validation)
        return {"dry_run": bool(dry_run), "field_validation": validation or "Warn", "warnings": [],
                "fields": self._field_manager(target, query, headers or {})}

    @staticmethod
    def _warned(response, options):
        if options["warnings"]:
            response.headers["Warning"] = ", ".join('299 - %s' % json.dumps(w) for w in options["warnings"])
        return response

    def _check_body(self, target, obj):
        if not isinstance(obj, dict):
            raise bad_request("the body of the request must be a JSON object")
        rtype = target.rtype
        api_version = obj.get("apiVersion")
        if api_version and api_version.rpartition("/")[0] != rtype.group:
            raise bad_request("the API version in the data (%s) does not match the expected API version (%s)"
                              % (api_version, rtype.api_version(target.version)))
        if obj.get("kind") and obj["kind"] != rtype.kind:
            raise bad_request("the kind in the data (%s) does not match the expected kind (%s)" % (obj["kind"], rtype.kind))
        obj["apiVersion"] = rtype.api_version(target.version)
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise bad_request("metadata must be an object")
        if rtype.namespaced:
            if meta.get("namespace") and meta["namespace"] != target.namespace:
                raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
            meta["namespace"] = target.namespace
        return obj

    # ------------------------------------------------------------------ verbs

    def _selectors(self, target, query):
        labels = parse_label_selector(_one(query, "labelSelector", ""))
        fields = parse_field_selector(_one(query, "fieldSelector", ""), target.rtype.field_selectors)
        return labels, fields

    def _list(self, target, query, headers, body):
        labels = self._selectors(target, query)[0]
        limit, at_rv, start = _paging(query)
        field_selector = _one(query, "fieldSelector")
        items, rv, next_start, remaining = self.store.list_page(target.rtype.key, target.namespace, labels, field_selector,
                                                                limit=limit, start=start, at_rv=at_rv)
        meta = {"resourceVersion": rv}
        if next_start is not None:
            meta["continue"] = encode_continue(int(rv), next_start)
            if not labels and not field_selector:
                # etcd3 GetList counts what is left only when nothing filters the list
                meta["remainingItemCount"] = remaining
        rtype = target.rtype
        as_table = tables.wants_table(headers.get("Accept"))
        if as_table:
            return self._table(target, query, [self._out(target, o) for o in items], meta, as_table)
        return Response(200, {
            "kind": rtype.list_kind,
            "apiVersion": rtype.api_version(target.version),
            "metadata": meta,
            "items": [self._out(target, o, in_list=True) for o in items],
        })

    def _table(self, target, query, objects, meta, table_version):
        """A meta.k8s.io Table of `objects` (kubectl get's columns)."""
        include = _one(query, "includeObject") or "Metadata"
        if include not in ("None", "Metadata", "Object"):
            raise bad_request('includeObject: Unsupported value: "%s"' % include)
        crd = next((c for c in self.store.registry.crds if c["spec"]["names"]["plural"] == target.rtype.plural
                    and c["spec"]["group"] == target.rtype.group), None) if target.rtype.is_custom else None
        return Response(200, tables.table(target.rtype, target.version, objects, meta, table_version, include, crd))

    def _get(self, target, query, headers, body):
        obj = self.store.get(target.rtype.key, target.name, target.namespace)
        if obj is None:
            raise _not_found(target)
        as_table = tables.wants_table(headers.get("Accept")) if not target.subresource else None
        if as_table:
            return self._table(target, query, [self._out(target, obj)], {"resourceVersion": obj["metadata"]["resourceVersion"]}, as_table)
        return Response(200, self._out(target, obj))

    def _create(self, target, query, headers, body):
        if target.rtype.key in authz.REVIEWS:
            return Response(201, authz.review(target.rtype, _decode(body, headers.get("Content-Type")), self.store,
                                              getattr(target, "identity", authz.ADMIN)))
        options = self._write_options(target, query, headers)
        obj = self._check_body(target, _decode(body, headers.get("Content-Type")))
        created = self.store.create(target.rtype.key, obj, **options)
        return self._warned(Response(201, self._out(target, created)), options)

    def _update(self, target, query, headers, body):
        options = self._write_options(target, query, headers)
        obj = self._check_body(target, _decode(body, headers.get("Content-Type")))
        meta = obj["metadata"]
        if meta.get("name") and meta["name"] != target.name:
            raise bad_request("the name of the object (%s) does not match the name on the URL (%s)" % (meta["name"], target.name))
        meta["name"] = target.name
        existed = self.store.get(target.rtype.key, target.name, target.namespace) is not None
        unconditional = not target.rtype.is_custom and getattr(target.rtype, "allow_unconditional_update", True)
        if existed and not unconditional and not meta.get("resourceVersion"):
            # the strategy's AllowUnconditionalUpdate() is false (customResourceStrategy, leases): a PUT names the version it replaces
            raise unconditional_update(target.rtype, target.name)
        updated = self.store.update(target.rtype.key, obj, subresource=target.subresource, **options)
        return self._warned(Response(200 if existed else 201, self._out(target, updated)), options)

    def _patch(self, target, query, headers, body):
        options = self._write_options(target, query, headers)
        rtype = target.rtype
        ctype = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
        accepted = ["application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"]
        if not rtype.is_custom:
            accepted.insert(2, "application/strategic-merge-patch+json")
        if ctype not in accepted:
            raise unsupported_media_type(accepted)
        patch_type = patching.CONTENT_TYPES[ctype]
        if patch_type == patching.APPLY and not _one(query, "fieldManager"):
            raise bad_request("PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: "
                              "is required for apply patch")
        patch = _decode(body, ctype)
        existed = self.store.get(rtype.key, target.name, target.namespace) is not None
        patched = self.store.patch(rtype.key, target.name, patch, patch_type, namespace=target.namespace,
                                   subresource=target.subresource, version=target.version, **options)
        return self._warned(Response(200 if existed else 201, self._out(target, patched)), options)

    def _delete_options(self, query, body):
        options = {}
        if body:
            options = _decode(body, JSON_TYPE, yaml_ok=False)
            if not isinstance(options, dict):
                raise bad_request("DeleteOptions must be a JSON object")
        dry_run = (query.get("dryRun") or []) + list(options.get("dryRun") or [])
        if any(v != "All" for v in dry_run):
            raise bad_request("Invalid dry run value: %s, valid values are: All" % ",".join(dry_run))
        policy = _one(query, "propagationPolicy") or options.get("propagationPolicy")
        if policy and policy not in PROPAGATION:
            raise ApiError(422, "Invalid", 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
                           '"%s": supported values: "Foreground", "Background", "Orphan", "nil"' % policy)
        return bool(dry_run), options.get("preconditions") or {}

    def _delete(self, target, query, headers, body):
        dry_run, preconditions = self._delete_options(query, body)
        rtype = target.rtype
        deleted = self.store.delete(rtype.key, target.name, target.namespace, dry_run=dry_run, preconditions=preconditions)
        still_there = deleted["metadata"].get("deletionTimestamp") and rtype.key != "namespaces"
        if rtype.returns_deleted_object or still_there:
            return Response(200, self._out(target, deleted))
        details = {"name": target.name, "kind": rtype.plural, "uid": deleted["metadata"].get("uid")}
        if rtype.group:
            details["group"] = rtype.group
        return Response(200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details})

    def _delete_collection(self, target, query, headers, body):
        dry_run = self._delete_options(query, body)[0]
        labels = self._selectors(target, query)[0]
        deleted = self.store.delete_collection(target.rtype.key, target.namespace, labels, _one(query, "fieldSelector"),
                                               dry_run=dry_run)
        rtype = target.rtype
        return Response(200, {"kind": rtype.list_kind, "apiVersion": rtype.api_version(target.version),
                              "metadata": {"resourceVersion": self.store.resource_version()},
                              "items": [self._out(target, o, in_list=True) for o in deleted]})

    def _log(self, target, query):
        pod = self.store.get("pods", target.name, target.namespace)
        if pod is None:
            raise _not_found(target)
        containers = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
        container = _one(query, "container")
        if container and container not in containers:
            raise bad_request("container %s is not valid for pod %s" % (container, target.name))
        text = self.store.get_log(target.namespace, target.name)
        if text is None:
            if (pod.get("status") or {}).get("phase", "Pending") == "Pending":
                raise bad_request('container "%s" in pod "%s" is waiting to start: ContainerCreating'
                                  % (container or (containers or [""])[0], target.name))
            text = ""
        tail = _one(query, "tailLines")
        if tail is not None and tail.isdigit():
            lines = text.splitlines(True)
            text = "".join(lines[len(lines) - int(tail):]) if int(tail) else ""
        return Response(200, text, "text/plain")

    # ------------------------------------------------------------------ watch

    def _bookmark(self, target, rv):
        """The object of a BOOKMARK event: only kind, apiVersion and metadata.resourceVersion."""
        return {"kind": target.rtype.kind, "apiVersion": target.rtype.api_version(target.version), "metadata": {"resourceVersion": rv}}

    def _watch(self, target, query, headers, body):
        labels, fields = self._selectors(target, query)
        seconds = _one(query, "timeoutSeconds")
        deadline = time.monotonic() + (int(seconds) if seconds and seconds.isdigit() else DEFAULT_WATCH_SECONDS)
        try:
            watch = self.store.watch(target.rtype.key, target.namespace, _one(query, "resourceVersion"))
        except ApiError as err:
            if err.code != 410:
                raise
            return Response(200, None, stream=iter([_event_line("ERROR", err.status())]))
        bookmarks = _one(query, "allowWatchBookmarks") == "true"
        return Response(200, None, stream=self._stream(target, watch, labels, fields, deadline, bookmarks))

    def _stream(self, target, watch, labels, fields, deadline, bookmarks=False):
        """JSON lines of {type, object}; objects entering/leaving the selection come as ADDED/DELETED.

        With allowWatchBookmarks, BOOKMARK events carry the latest resourceVersion every BOOKMARK_SECONDS and 2 s
        before the deadline (cacheWatcher.nextBookmarkTime), sent only when this watch has no event pending.
        """
        def selected(obj):
            return obj is not None and labels_match(labels, obj["metadata"].get("labels")) and fields_match(fields, obj)
        try:
            pending = list(watch.initial)
            next_bookmark = _next_bookmark(deadline) if bookmarks else None
            while time.monotonic() < deadline and not (self.shutting_down and self.shutting_down.is_set()):
                if next_bookmark is not None and not pending and time.monotonic() >= next_bookmark:
                    rv = self.store.bookmark_rv(watch)
                    if rv is not None:
                        yield _event_line("BOOKMARK", self._bookmark(target, rv))
                        next_bookmark = _next_bookmark(deadline)
                if pending:
                    event_type, obj, old = pending.pop(0)
                else:
                    try:
                        event_type, obj, old = watch.queue.get(timeout=min(0.2, max(0.0, deadline - time.monotonic())))
                    except queue.Empty:
                        continue
                event_type = _visible_event(event_type, selected(obj), selected(old) if old is not None else None)
                if event_type:
                    yield _event_line(event_type, self._out(target, obj))
        finally:
            watch.close()


def _next_bookmark(deadline):
    now = time.monotonic()
    when = min(now + BOOKMARK_SECONDS, deadline - 2.0)
    return when if when >= now else None


def _paging(query):
    """(limit, revision, start key) of a list request: limit/continue as etcd3's GetList reads them."""
    limit = _one(query, "limit")
    try:
        limit = int(limit) if limit else None
    except ValueError:
        raise bad_request('strconv.ParseInt: parsing "%s": invalid syntax' % limit)
    resource_version = _one(query, "resourceVersion")
    token = _one(query, "continue")
    if not token:
        # resourceVersion=0 is served from the watch cache, which ignores limit (cacher.GetList)
        return (None if resource_version == "0" or (limit or 0) <= 0 else limit), None, None
    if resource_version not in (None, "", "0"):
        raise bad_request("specifying resource version is not allowed when using continue")
    at_rv, start = decode_continue(token)
    return (limit if (limit or 0) > 0 else None), at_rv, start


def _visible_event(event_type, matches_new, matches_old):
    """The event a selector-filtered watch shows (the watch cache's filtering rules)."""
    if event_type != "MODIFIED" or matches_old is None:
        return event_type if matches_new else None
    if matches_new and matches_old:
        return "MODIFIED"
    if matches_new:
        return "ADDED"
    return "DELETED" if matches_old else None


def _event_line(event_type, obj):
    return (json.dumps({"type": event_type, "object": obj}) + "\n").encode("utf-8")


def _not_found(target):
    return resource_not_found(target.rtype, target.name)
