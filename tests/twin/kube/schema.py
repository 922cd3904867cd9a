"""Structural-schema handling of custom resources, as apiextensions-apiserver does it.

Order of a write: prune unknown fields, drop non-nullable nulls, apply defaults, then
validate (kube-openapi validation semantics, errors rendered as field.Error).
CEL rules (x-kubernetes-validations) are NOT evaluated: a documented gap of the twin.
"""

import copy
import ipaddress
import re
import uuid
from datetime import datetime

from .errors import FieldError, type_name

PRESERVE = "x-kubernetes-preserve-unknown-fields"
INT_OR_STRING = "x-kubernetes-int-or-string"
EMBEDDED = "x-kubernetes-embedded-resource"
_EMBEDDED_KEYS = ("apiVersion", "kind", "metadata")


def _join(path, key):
    return key if not path else "%s.%s" % (path, key)


def prepare(schema, obj):
    """Prune, drop nulls and default a whole object in place; return the pruned field paths.

    `metadata` at the root is ObjectMeta, handled elsewhere: the schema never prunes it.
    """
    pruned = []
    for key in list(obj):
        if key in ("apiVersion", "kind", "metadata"):
            continue
        props = schema.get("properties") or {}
        if key not in props and not schema.get(PRESERVE):
            pruned.append(key)
            del obj[key]
    _null_and_default(obj, schema, root=True)
    for key, sub in (schema.get("properties") or {}).items():
        if key not in ("apiVersion", "kind", "metadata") and key in obj:
            obj[key] = _prune(obj[key], sub, key, pruned)
    return pruned


def _prune(value, schema, path, pruned):
    if isinstance(value, dict):
        return _prune_object(value, schema, path, pruned)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_prune(item, schema["items"], "%s[%d]" % (path, i), pruned) for i, item in enumerate(value)]
    return value


def _prune_object(value, schema, path, pruned):
    props = schema.get("properties")
    additional = schema.get("additionalProperties")
    preserve = schema.get(PRESERVE)
    for key in list(value):
        if props and key in props:
            continue
        if isinstance(additional, dict) or additional is True or preserve:
            continue
        if schema.get(EMBEDDED) and key in _EMBEDDED_KEYS:
            continue
        pruned.append(_join(path, key))
        del value[key]
    _null_and_default(value, schema)
    for key in list(value):
        if props and key in props:
            value[key] = _prune(value[key], props[key], _join(path, key), pruned)
        elif isinstance(additional, dict):
            value[key] = _prune(value[key], additional, _join(path, key), pruned)
    return value


def _null_and_default(value, schema, root=False):
    """Defaulting (structural defaulting.Default + PruneNonNullableNullsWithoutDefaults)."""
    for key, sub in (schema.get("properties") or {}).items():
        if root and key in ("apiVersion", "kind", "metadata"):
            continue
        if key in value and value[key] is None and not sub.get("nullable"):
            del value[key]
        if key not in value and "default" in sub:
            value[key] = copy.deepcopy(sub["default"])


def validate(schema, obj):
    """All FieldErrors of `obj` (root metadata excluded) against an openAPIV3Schema."""
    errors = []
    root = dict(schema)
    root["properties"] = {k: v for k, v in (schema.get("properties") or {}).items() if k != "metadata"}
    root["required"] = [r for r in schema.get("required") or [] if r != "metadata"]
    body = {k: v for k, v in obj.items() if k != "metadata"}
    _validate(body, root, "", errors)
    return errors


def _validate(value, schema, path, errors):
    if value is None:
        if not schema.get("nullable"):
            expected = schema.get("type") or "object"
            errors.append(FieldError(path, "type", "%s in body must be of type %s: \"null\"" % (path, expected), "null"))
        return
    if not _check_type(value, schema, path, errors):
        return
    for check in (_check_enum, _check_string, _check_number, _check_array, _check_object, _check_combinators):
        check(value, schema, path, errors)


def _check_type(value, schema, path, errors):
    if schema.get(INT_OR_STRING):
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            detail = "%s in body must be of type integer,string: \"%s\"" % (path, type_name(value))
            errors.append(FieldError(path, "type", detail, type_name(value)))
            return False
        return True
    expected = schema.get("type")
    if not expected or _is_type(value, expected):
        return True
    detail = "%s in body must be of type %s: \"%s\"" % (path, expected, type_name(value))
    errors.append(FieldError(path, "type", detail, type_name(value)))
    return False


def _is_type(value, expected):
    if expected == "object":
        return isinstance(value, dict)
    if expected == "array":
        return isinstance(value, list)
    if expected == "string":
        return isinstance(value, str)
    if expected == "boolean":
        return isinstance(value, bool)
    if expected == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return True


def _check_enum(value, schema, path, errors):
    enum = schema.get("enum")
    if enum is not None and value not in enum:
        supported = ", ".join('"%s"' % v if isinstance(v, str) else str(v) for v in enum)
        errors.append(FieldError(path, "unsupported", "supported values: " + supported, value))


def _check_string(value, schema, path, errors):
    if not isinstance(value, str):
        return
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        errors.append(FieldError(path, "too_long", "may not be longer than %d" % schema["maxLength"], value))
    if "minLength" in schema and len(value) < schema["minLength"]:
        detail = "%s in body should be at least %d chars long" % (path, schema["minLength"])
        errors.append(FieldError(path, "invalid", detail, value))
    if "pattern" in schema and not re.search(schema["pattern"], value):
        detail = "%s in body should match '%s'" % (path, schema["pattern"])
        errors.append(FieldError(path, "invalid", detail, value))
    fmt = schema.get("format")
    if fmt and fmt in FORMATS and not FORMATS[fmt](value):
        detail = "%s in body must be of type %s: \"%s\"" % (path, fmt, value)
        errors.append(FieldError(path, "invalid", detail, value))


def _check_number(value, schema, path, errors):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if "maximum" in schema:
        limit = schema["maximum"]
        if value > limit or (schema.get("exclusiveMaximum") and value == limit):
            op = "less than" if schema.get("exclusiveMaximum") else "less than or equal to"
            errors.append(FieldError(path, "invalid", "%s in body should be %s %s" % (path, op, limit), value))
    if "minimum" in schema:
        limit = schema["minimum"]
        if value < limit or (schema.get("exclusiveMinimum") and value == limit):
            op = "greater than" if schema.get("exclusiveMinimum") else "greater than or equal to"
            errors.append(FieldError(path, "invalid", "%s in body should be %s %s" % (path, op, limit), value))
    if schema.get("multipleOf") and value % schema["multipleOf"]:
        detail = "%s in body should be a multiple of %s" % (path, schema["multipleOf"])
        errors.append(FieldError(path, "invalid", detail, value))


def _check_array(value, schema, path, errors):
    if not isinstance(value, list):
        return
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        errors.append(FieldError(path, "too_many", "must have at most %d items" % schema["maxItems"], len(value)))
    if "minItems" in schema and len(value) < schema["minItems"]:
        detail = "%s in body should have at least %d items" % (path, schema["minItems"])
        errors.append(FieldError(path, "invalid", detail, len(value)))
    if schema.get("uniqueItems") and _has_duplicates(value):
        errors.append(FieldError(path, "invalid", "%s in body shouldn't contain duplicates" % path, "array"))
    _check_list_type(value, schema, path, errors)
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            _validate(item, items, "%s[%d]" % (path, i), errors)


def _has_duplicates(values):
    seen = []
    for value in values:
        if value in seen:
            return True
        seen.append(value)
    return False


def _check_list_type(value, schema, path, errors):
    """x-kubernetes-list-type set/map: duplicates are refused (Duplicate value)."""
    list_type = schema.get("x-kubernetes-list-type")
    keys = schema.get("x-kubernetes-list-map-keys") or []
    seen = []
    for i, item in enumerate(value):
        if list_type == "set":
            ident = item
        elif list_type == "map" and isinstance(item, dict):
            ident = {k: item.get(k) for k in keys}
        else:
            return
        if ident in seen:
            errors.append(FieldError("%s[%d]" % (path, i), "duplicate", "", ident if list_type == "set" else "object"))
        seen.append(ident)


def _check_object(value, schema, path, errors):
    if not isinstance(value, dict):
        return
    for name in schema.get("required") or []:
        if name not in value:
            errors.append(FieldError(_join(path, name), "required"))
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        errors.append(FieldError(path, "too_many", "must have at most %d items" % schema["maxProperties"], len(value)))
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        detail = "%s in body should have at least %d properties" % (path, schema["minProperties"])
        errors.append(FieldError(path, "invalid", detail, "object"))
    props = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    for key, item in value.items():
        if key in props:
            _validate(item, props[key], _join(path, key), errors)
        elif isinstance(additional, dict):
            _validate(item, additional, _join(path, key), errors)


def _check_combinators(value, schema, path, errors):
    """allOf/anyOf/oneOf/not: value validations only, as structural schemas allow."""
    for sub in schema.get("allOf") or []:
        _validate(value, sub, path, errors)
    if schema.get("anyOf") and not any(_passes(value, s, path) for s in schema["anyOf"]):
        errors.append(FieldError(path, "invalid", "%s in body must validate at least one schema (anyOf)" % path, "object"))
    if schema.get("oneOf") and sum(1 for s in schema["oneOf"] if _passes(value, s, path)) != 1:
        errors.append(FieldError(path, "invalid", "%s in body must validate one and only one schema (oneOf)" % path, "object"))
    if isinstance(schema.get("not"), dict) and _passes(value, schema["not"], path):
        errors.append(FieldError(path, "invalid", "%s in body shouldn't validate the schema (not)" % path, "object"))


def _passes(value, schema, path):
    found = []
    _validate(value, schema, path, found)
    return not found


def _ip(version):
    def check(text):
        try:
            return ipaddress.ip_address(text).version == version
        except ValueError:
            return False
    return check


def _cidr(text):
    try:
        ipaddress.ip_network(text, strict=False)
        return "/" in text
    except ValueError:
        return False


def _uuid(text):
    try:
        uuid.UUID(text)
        return True
    except ValueError:
        return False


def _date_time(text):
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
        return True
    except ValueError:
        return False


def _date(text):
    return re.match(r"^\d{4}-\d{2}-\d{2}$", text) is not None


# the formats kube-openapi checks (its strfmt registry) that matter here; others are accepted
FORMATS = {
    "ipv4": _ip(4),
    "ipv6": _ip(6),
    "cidr": _cidr,
    "uuid": _uuid,
    "date-time": _date_time,
    "date": _date,
    "mac": lambda t: re.match(r"^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$", t) is not None,
    "hostname": lambda t: re.match(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$", t) is not None,
    "byte": lambda t: re.match(r"^[A-Za-z0-9+/]*={0,2}$", t) is not None and len(t) % 4 == 0,
}
