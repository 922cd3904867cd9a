"""PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch.

Strategic merge patch knows the patchMergeKey/patchStrategy of the built-in lists the
project touches (see MERGE_KEYS); every other list is replaced, as for an atomic list.
"""

import copy

from .errors import ApiError, bad_request

MERGE = "merge"
JSON = "json"
STRATEGIC = "strategic"
APPLY = "apply"

CONTENT_TYPES = {
    "application/merge-patch+json": MERGE,
    "application/json-patch+json": JSON,
    "application/strategic-merge-patch+json": STRATEGIC,
    "application/apply-patch+yaml": APPLY,
}


def merge_patch(target, patch):
    """RFC 7386: objects merge recursively, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# ---------------------------------------------------------------- RFC 6902

def _patch_failed(message):
    # the apiserver answers 422 with a generic message (NewGenericServerResponse); the detail goes in causes
    return ApiError(422, "Invalid", "the server rejected our request due to an error in our request",
                    {"causes": [{"message": message}]})


def _pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise _patch_failed("JSON pointer must start with '/': %r" % path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc, parts, path):
    node = doc
    for part in parts[:-1]:
        node = _child(node, part, path)
    return node


def _child(node, part, path):
    if isinstance(node, dict) and part in node:
        return node[part]
    if isinstance(node, list) and part.isdigit() and int(part) < len(node):
        return node[int(part)]
    raise _patch_failed("missing value at %s" % path)


def _get(doc, path):
    node = doc
    for part in _pointer(path):
        node = _child(node, part, path)
    return node


def _add(doc, path, value):
    parts = _pointer(path)
    if not parts:
        return value
    parent, last = _parent(doc, parts, path), parts[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        index = len(parent) if last == "-" else _index(last, len(parent) + 1, path)
        parent.insert(index, value)
    else:
        raise _patch_failed("cannot add at %s" % path)
    return doc


def _remove(doc, path):
    parts = _pointer(path)
    parent, last = _parent(doc, parts, path), parts[-1] if parts else ""
    if isinstance(parent, dict) and last in parent:
        del parent[last]
    elif isinstance(parent, list):
        del parent[_index(last, len(parent), path)]
    else:
        raise _patch_failed("Unable to remove nonexistent key: %s: missing value" % last)
    return doc


def _index(text, bound, path):
    if not text.isdigit() or int(text) >= bound:
        raise _patch_failed("Unable to access invalid index: %s (path %s)" % (text, path))
    return int(text)


def json_patch(target, operations):
    """Apply an RFC 6902 operation list; failures (including `test`) are 422 as the apiserver answers."""
    if not isinstance(operations, list):
        raise bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    doc = copy.deepcopy(target)
    for op in operations:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise bad_request("invalid JSON patch operation: %r" % (op,))
        doc = _apply_op(doc, op)
    return doc


def _apply_op(doc, op):
    kind, path = op["op"], op["path"]
    if kind == "add":
        return _add(doc, path, copy.deepcopy(op.get("value")))
    if kind == "remove":
        return _remove(doc, path)
    if kind == "replace":
        parts = _pointer(path)
        if not parts:
            return op.get("value")
        parent = _parent(doc, parts, path)
        if isinstance(parent, dict):
            # json-patch v4 (the apiserver's): replace of a missing object member sets it, as OVN-K's `replace /status` relies on
            parent[parts[-1]] = copy.deepcopy(op.get("value"))
            return doc
        _get(doc, path)
        return _add(_remove(doc, path), path, copy.deepcopy(op.get("value")))
    if kind in ("move", "copy"):
        value = copy.deepcopy(_get(doc, op.get("from", "")))
        if kind == "move":
            doc = _remove(doc, op["from"])
        return _add(doc, path, value)
    if kind == "test":
        if _get(doc, path) != op.get("value"):
            raise _patch_failed("testing value %s failed: test failed" % path)
        return doc
    raise bad_request("Unexpected kind: %s" % kind)


# ---------------------------------------------------------------- strategic merge

# list path (keys, no indices) -> patchMergeKey, for the built-in kinds (k8s.io/api/core/v1 tags)
MERGE_KEYS = {
    "nodes": {
        ("status", "conditions"): "type",
        ("status", "addresses"): "type",
        ("status", "volumesAttached"): "name",
    },
    "pods": {
        ("spec", "containers"): "name",
        ("spec", "initContainers"): "name",
        ("spec", "ephemeralContainers"): "name",
        ("spec", "volumes"): "name",
        ("spec", "imagePullSecrets"): "name",
        ("spec", "hostAliases"): "ip",
        ("spec", "containers", "env"): "name",
        ("spec", "containers", "ports"): "containerPort",
        ("spec", "containers", "volumeMounts"): "mountPath",
        ("spec", "initContainers", "env"): "name",
        ("spec", "initContainers", "volumeMounts"): "mountPath",
        ("status", "conditions"): "type",
        ("status", "podIPs"): "ip",
    },
    "namespaces": {
        ("status", "conditions"): "type",
    },
}
# metadata lists common to every kind
META_MERGE_KEYS = {("metadata", "ownerReferences"): "uid"}
# primitive lists with patchStrategy merge (union)
MERGE_PRIMITIVE_LISTS = {("metadata", "finalizers")}


def strategic_merge_patch(resource, target, patch):
    if not isinstance(patch, dict):
        raise bad_request("strategic merge patch must be a JSON object")
    keys = dict(META_MERGE_KEYS)
    keys.update(MERGE_KEYS.get(resource, {}))
    return _smp_map(copy.deepcopy(target) if isinstance(target, dict) else {}, patch, (), keys)


def _smp_map(target, patch, path, keys):
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    for key, value in patch.items():
        if key.startswith("$setElementOrder/") or key in ("$patch", "$retainKeys"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            target[field] = [v for v in target.get(field) or [] if v not in value]
            continue
        _smp_field(target, key, value, path + (key,), keys)
    if "$retainKeys" in patch:
        for key in [k for k in target if k not in patch["$retainKeys"]]:
            del target[key]
    return target


def _smp_field(target, key, value, path, keys):
    if value is None:
        target.pop(key, None)
    elif isinstance(value, dict) and isinstance(target.get(key), dict):
        merged = _smp_map(target[key], value, path, keys)
        if merged is None:
            target.pop(key, None)
        else:
            target[key] = merged
    elif isinstance(value, dict):
        merged = _smp_map({}, value, path, keys)
        if merged is not None:
            target[key] = merged
    elif isinstance(value, list) and path in keys:
        target[key] = _smp_keyed_list(target.get(key) or [], value, keys[path], path, keys)
    elif isinstance(value, list) and path in MERGE_PRIMITIVE_LISTS:
        current = list(target.get(key) or [])
        target[key] = current + [v for v in value if v not in current]
    else:
        target[key] = copy.deepcopy(value)


def _smp_keyed_list(current, patch_items, merge_key, path, keys):
    result = copy.deepcopy(current)
    for item in patch_items:
        if not isinstance(item, dict):
            raise bad_request("strategic merge patch: list %s items must be objects" % ".".join(path))
        if item.get("$patch") == "replace":
            return [{k: v for k, v in i.items() if k != "$patch"} for i in patch_items]
        index = next((n for n, old in enumerate(result) if old.get(merge_key) == item.get(merge_key)), None)
        if item.get("$patch") == "delete":
            if index is not None:
                del result[index]
        elif index is None:
            result.append(_smp_map({}, item, path, keys))
        else:
            result[index] = _smp_map(result[index], item, path, keys)
    return result


def apply_patch(resource, target, patch, patch_type):
    """Patch `target` (a dict) and return the new object; the caller validates the result."""
    if patch_type == MERGE:
        if not isinstance(patch, dict):
            raise bad_request("merge patch must be a JSON object")
        return merge_patch(target, patch)
    if patch_type == JSON:
        return json_patch(target, patch)
    if patch_type == STRATEGIC:
        return strategic_merge_patch(resource, target, patch)
    raise bad_request("unknown patch type %r" % patch_type)
