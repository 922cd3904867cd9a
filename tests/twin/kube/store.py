"""In-process object store of the emulator, shared by the HTTP layer and the controllers.

Public API (tests/twin/README.md, "In-process store API"):

    store.get(resource, name, namespace=None) -> dict | None
    store.list(resource, namespace=None, label_selector=None, field_selector=None) -> list[dict]
    store.create(resource, obj) -> dict                    # ApiError 409 AlreadyExists, 422 Invalid, 404 namespace
    store.update(resource, obj, subresource=None) -> dict  # ApiError 409 Conflict on a stale resourceVersion
    store.patch(resource, name, patch, patch_type="merge", namespace=None, subresource=None) -> dict
    store.delete(resource, name, namespace=None) -> dict
    store.subscribe(callback)                              # callback(event_type, resource, obj)
    store.set_log(namespace, name, text) / store.get_log(namespace, name)

`resource` is `nodes`, `pods`, ... for the core group and `plural.group` otherwise.
Objects are plain dicts and every method returns deep copies. Writes follow the
apiserver's rules (strategy.py): for kinds with a status subresource a main-resource
write keeps the stored status and `subresource="status"` changes only status, and
creating a custom resource that has a status subresource drops its status (write it
afterwards with update/patch subresource="status", as a real controller does).
Label selectors are strings (`a=b,c in (x)`) or parsed requirement lists; field
selectors are strings (`metadata.name=x`).

Every write method also takes keyword arguments used by the HTTP layer: `dry_run`
(validate, store nothing), `field_validation` ("Strict" | "Warn" | "Ignore") and
`warnings` (a list that collects warnings for the client).

Subscribers are called synchronously in the writer's thread after the store lock is
released, with event_type "ADDED" | "MODIFIED" | "DELETED". They may write to the store;
they should be quick (hand slow work to a thread of their own). Writes that change
nothing do not bump resourceVersion and notify no one.
"""

import base64
import collections
import copy
import json
import logging
import queue
import random
import threading
import time
import uuid

from . import managedfields
from . import patch as patching
from . import strategy
from .errors import ApiError, bad_request, conflict, invalid, not_found, already_exists, stale
from .resources import CRD_RESOURCE, Registry
from .selectors import fields_match, labels_match, parse_field_selector, parse_label_selector

__all__ = ["ApiError", "Store"]

LOG = logging.getLogger(__name__)
HISTORY = 10000
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"


INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list without "
    "the continue parameter, or use the continue token in this response to retrieve the remainder of the results. "
    "Continuing with the provided token results in an inconsistent list - objects that were created, modified, or "
    "deleted between the time the first chunk was returned and now may show up in the list.")


def _key(key):
    """The etcd key of (namespace, name) below the resource prefix."""
    return "%s/%s" % key if key[0] else key[1]


def encode_continue(rv, start):
    """storage.EncodeContinue: base64url (no padding) of {"v": "meta.k8s.io/v1", "rv": rv, "start": key}."""
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_continue(token):
    """(rv, start) of a continue token; 400 BadRequest as storage.DecodeContinue's callers answer."""
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (ValueError, TypeError) as err:
        raise bad_request("invalid continue token: continue key is not valid: %s" % err)
    if not isinstance(data, dict) or data.get("v") != "meta.k8s.io/v1" or not isinstance(data.get("rv"), int) \
            or not isinstance(data.get("start"), str):
        raise bad_request("invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    if data["rv"] == 0:
        raise bad_request("invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    return data["rv"], data["start"]


def _without_managed_fields(obj):
    """The object with its managedFields' timestamps left out."""
    meta = dict(obj["metadata"])
    meta["managedFields"] = [{k: v for k, v in e.items() if k != "time"} for e in meta.get("managedFields") or []]
    return dict(obj, metadata=meta)


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Watch:
    """Events for one watch request: `initial` (synthetic ADDED) then `queue` of (type, obj, old)."""

    def __init__(self, store, rtype, namespace):
        self.store = store
        self.rtype = rtype
        self.namespace = namespace
        self.initial = []
        self.queue = queue.Queue()

    def wants(self, rtype, obj):
        return rtype is self.rtype and (not self.namespace or obj["metadata"].get("namespace") == self.namespace)

    def close(self):
        self.store._drop_watch(self)


class Store:
    def __init__(self, registry=None):
        self.registry = registry if registry is not None else Registry.default()
        self._lock = threading.RLock()
        self._objects = collections.defaultdict(dict)  # resource key -> {(namespace, name): obj}
        self._rv = 1000
        self._subscribers = []
        self._watches = []
        self._history = collections.deque(maxlen=HISTORY)  # (rv, type, rtype, obj, old) for watch resumption
        self._logs = {}
        self._compacted = 0  # etcd compaction: lists and watches at an older revision are 410 Expired
        for crd in self.registry.crds:
            self._install_crd(crd)

    # ------------------------------------------------------------------ reads

    def get(self, resource, name, namespace=None):
        rtype = self.registry.get(resource)
        with self._lock:
            obj = self._objects[rtype.key].get((self._ns(rtype, namespace), name))
            return copy.deepcopy(obj)

    def list(self, resource, namespace=None, label_selector=None, field_selector=None):
        return self.list_rv(resource, namespace, label_selector, field_selector)[0]

    def list_rv(self, resource, namespace=None, label_selector=None, field_selector=None):
        """(items, resourceVersion of the list) as one consistent snapshot."""
        rtype = self.registry.get(resource)
        labels = parse_label_selector(label_selector) if isinstance(label_selector, str) else label_selector
        fields = parse_field_selector(field_selector, rtype.field_selectors) if field_selector else []
        with self._lock:
            items = [o for (ns, _name), o in sorted(self._objects[rtype.key].items())
                     if (not namespace or ns == namespace)
                     and (not labels or labels_match(labels, o["metadata"].get("labels")))
                     and fields_match(fields, o)]
            return copy.deepcopy(items), str(self._rv)

    def list_page(self, resource, namespace=None, label_selector=None, field_selector=None, limit=None, start=None, at_rv=None):
        """One page of a list at revision `at_rv` (None: now) from key `start` ("ns/name"), as etcd3's GetList.

        Returns (items, resourceVersion, next_start or None, remaining count). Raises 410 Expired when `at_rv`
        is compacted (etcd3 interpretListError); the error's `list_meta` carries a token to go on at the latest revision.
        """
        rtype = self.registry.get(resource)
        labels = parse_label_selector(label_selector) if isinstance(label_selector, str) else label_selector
        fields = parse_field_selector(field_selector, rtype.field_selectors) if field_selector else []
        with self._lock:
            objects = self._objects_at(rtype, at_rv, start)
            keys = [k for k in sorted(objects) if (not namespace or k[0] == namespace) and (start is None or _key(k) >= start)]
            matched = [k for k in keys if (not labels or labels_match(labels, objects[k]["metadata"].get("labels")))
                       and fields_match(fields, objects[k])]
            page = matched[:limit] if limit else matched
            more = limit and len(matched) > limit
            rv = str(at_rv if at_rv is not None and at_rv > 0 else self._rv)
            return (copy.deepcopy([objects[k] for k in page]), rv, _key(page[-1]) + "\x00" if more else None,
                    len(matched) - len(page))

    def compact(self):
        """Forget the history up to now, as etcd's periodic compaction does (twin endpoint POST /_twin/compact)."""
        with self._lock:
            self._compacted = self._rv
            self._history.clear()
            return self._rv

    def _oldest_servable(self):
        """Revisions older than this one are compacted."""
        full = self._history and len(self._history) == self._history.maxlen
        return max(self._compacted, self._history[0][0] - 1 if full else 0)

    def _objects_at(self, rtype, at_rv, start):
        """{(ns, name): obj} of `rtype` as it was at revision `at_rv`, undoing later history (None or -1: now)."""
        objects = dict(self._objects[rtype.key])
        if at_rv is None or at_rv < 0 or at_rv >= self._rv:
            return objects
        if at_rv < self._oldest_servable():
            error = ApiError(410, "Expired", INCONSISTENT_CONTINUE)
            error.list_meta = {"continue": encode_continue(-1, start or "")}
            raise error
        for rv, _type, rt, obj, old in reversed(self._history):
            if rv <= at_rv:
                break
            if rt is rtype:
                key = (self._ns(rtype, obj["metadata"].get("namespace")), obj["metadata"]["name"])
                if old is None:
                    objects.pop(key, None)
                else:
                    objects[key] = old
        return objects

    def resource_version(self):
        with self._lock:
            return str(self._rv)

    # ------------------------------------------------------------------ writes

    def create(self, resource, obj, dry_run=False, field_validation=None, warnings=None, fields=None, managed=None):
        """`fields`: {"manager", "api_version"} of an HTTP write (managedFields are tracked); `managed`: an apply's."""
        rtype = self.registry.get(resource)
        obj = self._normalise(rtype, obj)
        meta = obj["metadata"]
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + "".join(random.choices(_NAME_CHARS, k=5))
        with self._lock:
            if rtype.namespaced:
                self._require_namespace(meta.get("namespace"))
            strategy.prepare_create(rtype, obj)
            self._validate(rtype, obj, None, field_validation, warnings)
            key = (self._ns(rtype, meta.get("namespace")), meta["name"])
            if key in self._objects[rtype.key]:
                raise already_exists(rtype, meta["name"])
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = now()
            if rtype.is_custom:
                meta["generation"] = 1
            obj["apiVersion"] = rtype.api_version()
            if managed is None and fields:
                managed = managedfields.update(rtype, None, obj, fields["manager"], fields["api_version"])
            if managed:
                meta["managedFields"] = managed
            if dry_run:
                return copy.deepcopy(obj)
            event = self._commit(rtype, "ADDED", obj, None)
        self._dispatch([event])
        return copy.deepcopy(obj)

    def update(self, resource, obj, subresource=None, dry_run=False, field_validation=None, warnings=None, fields=None):
        rtype = self.registry.get(resource)
        obj = self._normalise(rtype, obj)
        self._check_subresource(rtype, subresource)
        meta = obj["metadata"]
        with self._lock:
            old = self._objects[rtype.key].get((self._ns(rtype, meta.get("namespace")), meta.get("name")))
            if old is None and not (rtype.allow_create_on_update and not subresource):
                raise not_found(rtype, meta.get("name"))
            if old is not None:
                result, events = self._update_locked(rtype, old, obj, subresource, dry_run, field_validation, warnings,
                                                     fields=fields)
        if old is None:
            # events: PUT creates (AllowCreateOnUpdate); outside the lock so subscribers never run under it
            return self.create(resource, obj, dry_run, field_validation, warnings, fields=fields)
        self._dispatch(events)
        return result

    def patch(self, resource, name, patch, patch_type="merge", namespace=None, subresource=None, dry_run=False,
              field_validation=None, warnings=None, version=None, fields=None):
        """`version`: the API version the patch is written against (HTTP URL); default the storage version.

        `fields` {"manager", "api_version", "force"}: the field manager of an HTTP write; server-side apply needs one.
        """
        rtype = self.registry.get(resource)
        self._check_subresource(rtype, subresource)
        with self._lock:
            old = self._objects[rtype.key].get((self._ns(rtype, namespace), name))
            if old is None and not (patch_type == patching.APPLY and not subresource):
                raise not_found(rtype, name)
            if old is not None and patch_type == patching.APPLY:
                patched, managed = self._applied(rtype, old, patch, version, subresource, fields)
                result, events = self._update_locked(rtype, old, patched, subresource, dry_run, field_validation, warnings,
                                                     managed=managed)
            elif old is not None:
                patched = self._patched(rtype, old, patch, patch_type, version)
                result, events = self._update_locked(rtype, old, patched, subresource, dry_run, field_validation, warnings,
                                                     fields=fields)
        if old is None:
            # server-side apply creates a missing object
            obj = dict(patch, metadata=dict(patch.get("metadata") or {}, name=name, namespace=namespace))
            obj, managed = self._applied(rtype, {"metadata": {}}, obj, version, None, fields)
            return self.create(resource, obj, dry_run, field_validation, warnings, managed=managed)
        self._dispatch(events)
        return result

    def delete(self, resource, name, namespace=None, dry_run=False, preconditions=None):
        rtype = self.registry.get(resource)
        with self._lock:
            old = self._objects[rtype.key].get((self._ns(rtype, namespace), name))
            if old is None:
                raise not_found(rtype, name)
            self._check_preconditions(rtype, old, preconditions or {})
            if dry_run:
                return copy.deepcopy(old)
            result, events = self._delete_locked(rtype, old)
        self._dispatch(events)
        return result

    def delete_collection(self, resource, namespace=None, label_selector=None, field_selector=None, dry_run=False):
        items = self.list(resource, namespace, label_selector, field_selector)
        deleted = []
        for item in items:
            meta = item["metadata"]
            try:
                deleted.append(self.delete(resource, meta["name"], meta.get("namespace"), dry_run=dry_run))
            except ApiError as err:
                if err.code != 404:
                    raise
        return deleted

    # ------------------------------------------------------------------ subscribers, watch, logs

    def subscribe(self, callback):
        with self._lock:
            self._subscribers.append(callback)

    def unsubscribe(self, callback):
        with self._lock:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

    def watch(self, resource, namespace=None, resource_version=None):
        """A Watch: with no (or "0") resourceVersion it starts with ADDED for every object, else replays history."""
        rtype = self.registry.get(resource)
        watch = Watch(self, rtype, namespace)
        with self._lock:
            if resource_version in (None, "", "0"):
                watch.initial = [("ADDED", o, None) for o in self.list(resource, namespace)]
            else:
                watch.initial = self._replay(watch, resource_version)
            self._watches.append(watch)
        return watch

    def bookmark_rv(self, watch):
        """The latest resourceVersion, if `watch` has nothing queued (a bookmark must not pass an undelivered event)."""
        with self._lock:
            return str(self._rv) if watch.queue.empty() else None

    def set_log(self, namespace, name, text):
        with self._lock:
            self._logs[(namespace, name)] = text

    def get_log(self, namespace, name):
        with self._lock:
            return self._logs.get((namespace, name))

    # ------------------------------------------------------------------ internals

    def _replay(self, watch, resource_version):
        try:
            since = int(resource_version)
        except ValueError:
            raise bad_request('invalid resource version "%s"' % resource_version)
        if since < self._oldest_servable():
            raise ApiError(410, "Expired", "too old resource version: %d (%d)" % (since, self._oldest_servable()))
        return [(t, copy.deepcopy(o), copy.deepcopy(old)) for rv, t, rt, o, old in self._history
                if rv > since and watch.wants(rt, o)]

    def _drop_watch(self, watch):
        with self._lock:
            if watch in self._watches:
                self._watches.remove(watch)

    @staticmethod
    def _ns(rtype, namespace):
        return (namespace or "") if rtype.namespaced else ""

    def _normalise(self, rtype, obj):
        """Deep copy with kind/apiVersion of this type (any served version is accepted)."""
        if not isinstance(obj, dict):
            raise bad_request("the object must be a JSON object")
        obj = copy.deepcopy(obj)
        obj.setdefault("metadata", {})
        if not isinstance(obj["metadata"], dict):
            raise bad_request("metadata must be an object")
        version = (obj.get("apiVersion") or "").rpartition("/")[2]
        obj["_version"] = version if version in rtype.versions else rtype.storage_version
        obj["kind"] = rtype.kind
        obj["apiVersion"] = rtype.api_version()
        if not rtype.namespaced:
            obj["metadata"].pop("namespace", None)
        elif not obj["metadata"].get("namespace"):
            raise bad_request("the namespace of the object is required for %s" % rtype.key)
        return obj

    def _patched(self, rtype, old, patch, patch_type, version):
        current = dict(old, apiVersion=rtype.api_version(version if version in rtype.versions else None))
        patched = patching.apply_patch(rtype.key, current, patch, patch_type)
        if not isinstance(patched, dict) or not isinstance(patched.get("metadata", {}), dict):
            raise bad_request("the patched object is not a JSON object")
        patched["apiVersion"] = current["apiVersion"]
        patched = self._normalise(rtype, patched)
        if patched["metadata"].get("namespace", "") != old["metadata"].get("namespace", ""):
            raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
        return patched

    def _applied(self, rtype, live, config, version, subresource, fields):
        """(merged object, managedFields) of a server-side apply (managedfields.apply)."""
        if not isinstance(config, dict) or not isinstance(config.get("metadata", {}), dict):
            raise bad_request("the applied configuration must be an object")
        fields = fields or {"manager": "twin", "force": False}
        api_version = rtype.api_version(version if version in rtype.versions else None)
        current = dict(copy.deepcopy(live), apiVersion=api_version)
        merged, managed = managedfields.apply(rtype, current, config, fields["manager"], api_version, fields.get("force"),
                                              subresource, version)
        merged["apiVersion"] = api_version
        merged = self._normalise(rtype, merged)
        if live.get("metadata") and merged["metadata"].get("namespace", "") != live["metadata"].get("namespace", ""):
            raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
        return merged, managed

    def _require_namespace(self, namespace):
        if ("", namespace) not in self._objects["namespaces"]:
            raise not_found(self.registry.get("namespaces"), namespace)

    def _check_subresource(self, rtype, subresource):
        if subresource is None:
            return
        if subresource != "status" or not rtype.status_subresource:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")

    def _validate(self, rtype, obj, old, field_validation, warnings):
        version = obj.pop("_version", None)
        errors = strategy.check(rtype, obj, old, version, field_validation, warnings)
        if errors:
            raise invalid(rtype, obj["metadata"].get("name") or obj["metadata"].get("generateName") or "", errors)

    def _update_locked(self, rtype, old, obj, subresource, dry_run, field_validation, warnings, fields=None, managed=None):
        given = obj["metadata"].get("resourceVersion")
        if given and given != old["metadata"]["resourceVersion"]:
            raise stale(rtype, old["metadata"]["name"])
        version = obj.pop("_version", None)
        new = strategy.prepare_update(rtype, old, obj, subresource)
        new["_version"] = version
        self._validate(rtype, new, old, field_validation, warnings)
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        strategy.bump_generation(rtype, old, new)
        self._track(rtype, old, new, subresource, fields, managed)
        if _without_managed_fields(new) == _without_managed_fields(old):
            # a write that changes nothing but managedFields timestamps is no change (IgnoreManagedFieldsTimestampsTransformer)
            return copy.deepcopy(old), []
        if new == old:
            return copy.deepcopy(old), []
        if dry_run:
            return copy.deepcopy(new), []
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers"):
            events = [self._commit(rtype, "MODIFIED", new, old)]
            result, more = self._delete_locked(rtype, new)
            return result, events + more
        event = self._commit(rtype, "MODIFIED", new, old)
        return copy.deepcopy(new), [event]

    @staticmethod
    def _track(rtype, old, new, subresource, fields, managed):
        """managedFields of the new object: an apply's, a tracked HTTP write's, or (store callers) the old ones."""
        if managed is None and fields:
            managed = managedfields.update(rtype, old, new, fields["manager"], fields["api_version"], subresource)
        elif managed is None:
            managed = old["metadata"].get("managedFields")
        if managed:
            new["metadata"]["managedFields"] = managed
        else:
            new["metadata"].pop("managedFields", None)

    def _delete_locked(self, rtype, old):
        meta = old["metadata"]
        if meta.get("finalizers") and rtype.key != "namespaces":
            if meta.get("deletionTimestamp"):
                return copy.deepcopy(old), []
            new = copy.deepcopy(old)
            new["metadata"]["deletionTimestamp"] = now()
            new["metadata"]["deletionGracePeriodSeconds"] = 0
            event = self._commit(rtype, "MODIFIED", new, old)
            return copy.deepcopy(new), [event]
        events = []
        if rtype.key == "namespaces":
            events.extend(self._empty_namespace(meta["name"]))
            old = copy.deepcopy(old)
            old["metadata"]["deletionTimestamp"] = now()
            old["status"] = {"phase": "Terminating"}
        if rtype.key == "pods":
            self._logs.pop((meta.get("namespace"), meta["name"]), None)
        old = copy.deepcopy(old)
        events.append(self._commit(rtype, "DELETED", old, old))
        return copy.deepcopy(old), events

    def _empty_namespace(self, namespace):
        """What the namespace controller does before a namespace goes away: delete its content."""
        events = []
        for rtype in self.registry.types():
            if not rtype.namespaced:
                continue
            for key in [k for k in self._objects[rtype.key] if k[0] == namespace]:
                obj = self._objects[rtype.key][key]
                events.append(self._commit(rtype, "DELETED", obj, obj))
                if rtype.key == "pods":
                    self._logs.pop(key, None)
        return events

    def _check_preconditions(self, rtype, old, preconditions):
        meta = old["metadata"]
        for field, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
            wanted = preconditions.get(field)
            if wanted and wanted != meta.get(field):
                why = "Precondition failed: %s in precondition: %s, %s in object meta: %s" % (label, wanted, label, meta.get(field))
                raise conflict(rtype, meta["name"], why)

    def _commit(self, rtype, event_type, obj, old):
        """Store (or remove) `obj` with a new resourceVersion (set on `obj` too); feed watches; return the event."""
        key = (self._ns(rtype, obj["metadata"].get("namespace")), obj["metadata"]["name"])
        # history keeps a deleted object as stored before (its own resourceVersion): lists at older revisions show it so
        stored = copy.deepcopy(self._objects[rtype.key].get(key)) if event_type == "DELETED" else None
        self._rv += 1
        obj.pop("_version", None)
        obj["metadata"]["resourceVersion"] = str(self._rv)
        obj = copy.deepcopy(obj)
        if event_type == "DELETED":
            self._objects[rtype.key].pop(key, None)
            old = stored or old
        else:
            self._objects[rtype.key][key] = obj
        self._history.append((self._rv, event_type, rtype, obj, old))
        for watch in self._watches:
            if watch.wants(rtype, obj):
                watch.queue.put((event_type, copy.deepcopy(obj), copy.deepcopy(old)))
        return (event_type, rtype.key, obj)

    def _dispatch(self, events):
        with self._lock:
            subscribers = list(self._subscribers)
        for event_type, resource, obj in events:
            for callback in subscribers:
                try:
                    callback(event_type, resource, copy.deepcopy(obj))
                except Exception:
                    LOG.exception("store subscriber %r failed on %s %s", callback, event_type, resource)

    def _install_crd(self, crd):
        obj = copy.deepcopy(crd)
        versions = [v["name"] for v in obj["spec"]["versions"] if v.get("storage")]
        obj["status"] = {
            "acceptedNames": copy.deepcopy(obj["spec"]["names"]),
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found",
                 "lastTransitionTime": now()},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                 "message": "the initial names have been accepted", "lastTransitionTime": now()},
            ],
            "storedVersions": versions,
        }
        obj["metadata"].update({"uid": str(uuid.uuid4()), "creationTimestamp": now(), "generation": 1})
        obj["apiVersion"] = "apiextensions.k8s.io/v1"
        self._commit(self.registry.get(CRD_RESOURCE), "ADDED", obj, None)
