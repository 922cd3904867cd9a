"""Field ownership (metadata.managedFields) and server-side apply, after structured-merge-diff and the apiserver's fieldmanager.

A field set is a set of paths; a path is a tuple of FieldsV1 keys: `f:<field>` (a map field), `k:<json>` (an item of
an associative list, by its keys), `v:<json>` (an item of a set list). Every path of an object is in its set
(intermediate ones too, ToFieldSet), minus what the apiserver strips (apiVersion, kind, metadata and its server
fields). Lists are atomic unless the schema says `x-kubernetes-list-type: map|set` (CRDs) or the kind's patchMergeKey
says so (built-ins, patch.MERGE_KEYS); maps are granular unless `x-kubernetes-map-type: atomic`.

Apply (merge.Updater.Apply): merge the configuration into the live object; the manager's new set is the
configuration's; fields the manager applied before, no longer applies and nobody else owns are removed; fields it
changes that other managers own are conflicts (409, unless force, which takes them over). Update (any other write
with a field manager): the manager gains the fields the write added or changed (taken from the others), removed
fields leave every set.
"""

import copy
import json
import time

from . import patch as patching
from .errors import ApiError

_SERVER_META = ("name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation", "managedFields",
                "resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds")
STRIPPED = {("f:apiVersion",), ("f:kind",), ("f:metadata",)} | {("f:metadata", "f:" + f) for f in _SERVER_META}
BEFORE_FIRST_APPLY = "before-first-apply"


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Shape:
    """What the schema says about one node: how a list merges (atomic/set/map + keys) and whether a map is atomic."""

    def __init__(self, schema=None, builtin_keys=None, path=()):
        self.schema = schema if isinstance(schema, dict) else None
        self.builtin_keys = builtin_keys  # {field path tuple: merge key} of a built-in kind, None for CRs
        self.path = path  # field names only, for the built-in merge keys

    def child(self, name):
        sub = None
        if self.schema is not None:
            props = self.schema.get("properties") or {}
            sub = props.get(name) if name in props else self.schema.get("additionalProperties")
            sub = sub if isinstance(sub, dict) else None
        return Shape(sub, self.builtin_keys, self.path + (name,))

    def item(self):
        sub = self.schema.get("items") if self.schema is not None else None
        return Shape(sub if isinstance(sub, dict) else None, self.builtin_keys, self.path)

    def list_type(self):
        """("map", keys) | ("set", None) | ("atomic", None)."""
        if self.schema is not None and self.schema.get("x-kubernetes-list-type"):
            kind = self.schema["x-kubernetes-list-type"]
            return kind, self.schema.get("x-kubernetes-list-map-keys") if kind == "map" else None
        if self.builtin_keys is not None:
            if self.path in patching.MERGE_PRIMITIVE_LISTS:
                return "set", None
            key = self.builtin_keys.get(self.path) or patching.META_MERGE_KEYS.get(self.path)
            if key:
                return "map", [key]
        elif self.path == ("metadata", "finalizers"):
            return "set", None
        elif self.path == ("metadata", "ownerReferences"):
            return "map", ["uid"]
        return "atomic", None

    def atomic_map(self):
        return self.schema is not None and self.schema.get("x-kubernetes-map-type") == "atomic"


def shape_for(rtype, version=None):
    if rtype.is_custom:
        schema = copy.deepcopy(rtype.schema(version) or {})
        props = schema.setdefault("properties", {})
        props.setdefault("metadata", {})["properties"] = {}
        return Shape(schema)
    return Shape(None, patching.MERGE_KEYS.get(rtype.key, {}))


def _item_key(item, shape):
    kind, keys = shape.list_type()
    if kind == "map" and isinstance(item, dict):
        return "k:" + json.dumps({k: item.get(k) for k in keys if k in item}, sort_keys=True, separators=(",", ":"))
    if kind == "set":
        return "v:" + json.dumps(item, sort_keys=True, separators=(",", ":"))
    return None


def field_set(obj, shape):
    """Every path of `obj` (ToFieldSet), stripped of the server's metadata."""
    paths = set()
    _collect(obj, shape, (), paths)
    return {p for p in paths if p not in STRIPPED}


def _collect(value, shape, path, paths):
    if isinstance(value, dict) and not shape.atomic_map():
        for name, sub in value.items():
            child = path + ("f:" + name,)
            paths.add(child)
            _collect(sub, shape.child(name), child, paths)
    elif isinstance(value, list) and shape.list_type()[0] != "atomic":
        for item in value:
            key = _item_key(item, shape)
            if key is None:
                continue
            child = path + (key,)
            paths.add(child)
            _collect(item, shape.item(), child, paths)


def to_fields_v1(paths):
    tree = {}
    for path in sorted(paths):
        node = tree
        for element in path:
            node = node.setdefault(element, {})
    for path in paths:
        node = tree
        for element in path:
            node = node[element]
        if node and "." not in node:
            node["."] = {}
    return tree


def from_fields_v1(tree, path=()):
    paths = set()
    for key, sub in (tree or {}).items():
        if key == ".":
            paths.add(path)
            continue
        child = path + (key,)
        if not sub:
            paths.add(child)
        else:
            paths |= from_fields_v1(sub, child)
    return paths


def path_string(path):
    """fieldpath.Path.String(): `.spec.egressIPs`, `.status.conditions[type="Ready"]`, `.metadata.finalizers[="a"]`."""
    out = ""
    for element in path:
        kind, _colon, rest = element.partition(":")
        if kind == "f":
            out += "." + rest
        elif kind == "k":
            out += "[" + ",".join("%s=%s" % (k, json.dumps(v)) for k, v in sorted(json.loads(rest).items())) + "]"
        elif kind == "v":
            out += "[=" + rest + "]"
        else:
            out += "[" + rest + "]"
    return out


# ---------------------------------------------------------------- merge, remove, compare

def merge(live, config, shape):
    """The live object with the applied configuration merged in (typed.Merge)."""
    if isinstance(config, dict) and isinstance(live, dict) and not shape.atomic_map():
        out = copy.deepcopy(live)
        for name, value in config.items():
            if value is None:
                out.pop(name, None)
            else:
                out[name] = merge(live.get(name), value, shape.child(name))
        return out
    if isinstance(config, list) and isinstance(live, list) and shape.list_type()[0] != "atomic":
        out = copy.deepcopy(live)
        index = {_item_key(item, shape): i for i, item in enumerate(out)}
        for item in config:
            key = _item_key(item, shape)
            if key in index:
                out[index[key]] = merge(out[index[key]], item, shape.item())
            else:
                index[key] = len(out)
                out.append(copy.deepcopy(item))
        return out
    return copy.deepcopy(config)


def remove_paths(obj, paths, shape):
    """Remove each path from `obj` in place (parents first removes their children too)."""
    for path in sorted(paths, key=len):
        _remove(obj, path, shape)


def _remove(node, path, shape):
    for depth, element in enumerate(path):
        last = depth == len(path) - 1
        kind, _colon, rest = element.partition(":")
        if kind == "f":
            if not isinstance(node, dict) or rest not in node:
                return
            if last:
                del node[rest]
                return
            node, shape = node[rest], shape.child(rest)
        else:
            if not isinstance(node, list):
                return
            found = [i for i, item in enumerate(node) if _item_key(item, shape) == element]
            if not found:
                return
            if last:
                del node[found[0]]
                return
            node, shape = node[found[0]], shape.item()


def value_at(obj, path, shape):
    node = obj
    for element in path:
        kind, _colon, rest = element.partition(":")
        if kind == "f":
            node, shape = node.get(rest) if isinstance(node, dict) else None, shape.child(rest)
        else:
            items = [i for i in node if _item_key(i, shape) == element] if isinstance(node, list) else []
            node, shape = items[0] if items else None, shape.item()
    return node


def compare(old, new, shape):
    """(added, modified, removed) field sets from `old` to `new`; modified = leaves whose value changed."""
    before, after = field_set(old or {}, shape), field_set(new, shape)
    parents = {p[:i] for p in after for i in range(len(p))}
    modified = {p for p in before & after if p not in parents and value_at(old, p, shape) != value_at(new, p, shape)}
    return after - before, modified, before - after


# ---------------------------------------------------------------- managers

def _key(entry):
    return (entry.get("manager"), entry.get("operation"), entry.get("apiVersion") if entry.get("operation") == "Update" else None,
            entry.get("subresource") or "")


def decode(obj):
    """[(entry without fieldsV1, field set)] of an object's managedFields."""
    managed = []
    for entry in (obj.get("metadata") or {}).get("managedFields") or []:
        meta = {k: v for k, v in entry.items() if k not in ("fieldsV1", "fieldsType")}
        managed.append((meta, from_fields_v1(entry.get("fieldsV1"))))
    return managed


def encode(managed):
    entries = []
    for meta, paths in managed:
        if not paths:
            continue
        entries.append(dict(meta, fieldsType="FieldsV1", fieldsV1=to_fields_v1(paths)))
    # sortEncodedManagedFields: Apply before Update, then by time, manager, apiVersion, subresource
    entries.sort(key=lambda e: (e["operation"], e.get("time") or "", e["manager"], e.get("apiVersion") or "", e.get("subresource") or ""))
    return entries


def _entry(manager, operation, api_version, subresource):
    meta = {"manager": manager, "operation": operation, "apiVersion": api_version, "time": now()}
    if subresource:
        meta["subresource"] = subresource
    return meta


def _take(managed, key, meta, paths):
    """Set the manager's entry (new meta, given paths)."""
    rest = [(m, p) for m, p in managed if _key(m) != key]
    return rest + [(meta, paths)]


def conflict_error(conflicts, rtype, name):
    """409 as fieldmanager's NewConflictError: one cause per conflicting field."""
    def who(meta):
        text = '"%s"' % meta["manager"]
        if meta.get("subresource"):
            text += ' with subresource "%s"' % meta["subresource"]
        if meta["operation"] == "Update":
            text += " using %s" % meta.get("apiVersion")
            if meta.get("time"):
                text += " at %s" % meta["time"]
        return text
    conflicts = sorted(conflicts, key=lambda c: (c[0]["manager"], path_string(c[1])))
    if len(conflicts) == 1:
        meta, path = conflicts[0]
        message = "Apply failed with 1 conflict: conflict with %s: %s" % (who(meta), path_string(path))
    else:
        lines, seen = [], []
        for meta, _path in conflicts:
            if who(meta) not in seen:
                seen.append(who(meta))
        for manager in sorted(seen):
            lines.append("conflicts with %s:" % manager)
            lines.extend("- %s" % path_string(p) for m, p in conflicts if who(m) == manager)
        message = "Apply failed with %d conflicts: %s" % (len(conflicts), "\n".join(lines))
    causes = [{"reason": "FieldManagerConflict", "message": "conflict with %s" % who(m), "field": path_string(p)} for m, p in conflicts]
    details = {"name": name, "kind": rtype.plural, "causes": causes}
    if rtype.group:
        details["group"] = rtype.group
    return ApiError(409, "Conflict", message, details)


def _others_lose(managed, key, changed, removed, force, rtype, name):
    """Other managers lose removed fields; changed fields they own are conflicts (or taken over with force)."""
    out, conflicts = [], []
    for meta, paths in managed:
        if _key(meta) == key:
            out.append((meta, paths))
            continue
        clash = paths & changed
        conflicts.extend((meta, p) for p in sorted(clash))
        out.append((meta, paths - removed - (clash if force else set())))
    if conflicts and not force:
        raise conflict_error(conflicts, rtype, name)
    return out


def _without_reset_fields(rtype, config, subresource):
    """GetResetFields: a main-resource apply cannot set status (status subresource); a status apply sets only status."""
    if subresource == "status":
        return {k: v for k, v in config.items() if k in ("apiVersion", "kind", "status")}
    if rtype.status_subresource and "status" in config:
        return {k: v for k, v in config.items() if k != "status"}
    return config


def apply(rtype, live, config, manager, api_version, force, subresource=None, version=None):
    """(new object, managedFields) of a server-side apply; raises 409 on conflicts without force."""
    shape = shape_for(rtype, version)
    managed = decode(live)
    if live.get("metadata", {}).get("uid") and not managed:
        # an object no manager tracks: its fields belong to "before-first-apply" (skipNonAppliedManager)
        managed = [(_entry(BEFORE_FIRST_APPLY, "Update", api_version, None), field_set(live, shape))]
    key = _key({"manager": manager, "operation": "Apply", "subresource": subresource})
    last = next((p for m, p in managed if _key(m) == key), set())
    config = _without_reset_fields(rtype, config, subresource)
    applied = field_set(config, shape)
    merged = merge(live, config, shape)
    managed = _take(managed, key, _entry(manager, "Apply", api_version, subresource), applied)
    owned = set().union(*[p for _m, p in managed])
    remove_paths(merged, last - owned, shape)
    added, modified, removed = compare(live, merged, shape)
    managed = _others_lose(managed, key, added | modified, removed, force, rtype, live["metadata"].get("name"))
    return merged, encode(managed)


def update(rtype, old, new, manager, api_version, subresource=None, version=None):
    """managedFields after a non-apply write by `manager` (takes over what it changed); `old` None on create."""
    shape = shape_for(rtype, version)
    managed = decode(old) if old is not None else []
    if old is not None and not managed:
        return []  # objects no manager tracks stay untracked until their first apply (skipNonAppliedManager)
    added, modified, removed = compare(old, new, shape)
    key = _key({"manager": manager, "operation": "Update", "apiVersion": api_version, "subresource": subresource})
    managed = _others_lose(managed, key, added | modified, removed, True, rtype, new["metadata"].get("name"))
    mine = next((p for m, p in managed if _key(m) == key), set())
    if not (added | modified) and not mine:
        return encode(managed)
    paths = (mine | added | modified) - removed
    meta = _entry(manager, "Update", api_version, subresource)
    return encode(_take(managed, key, meta, paths))
