"""OpenAPI documents of what the emulator serves: /openapi/v2 (JSON or gnostic protobuf) and /openapi/v3.

Custom resources publish their CRD's openAPIV3Schema as apiextensions-apiserver's builder does
(controller/openapi/builder): `metadata` refers to ObjectMeta, `apiVersion`/`kind` are described, the
definition carries `x-kubernetes-group-version-kind`; for v2 the schema goes through ToStructuralOpenAPIV2
(no junctors, nullable and preserve-unknown-fields nodes untyped and without properties/items). Built-in kinds
get minimal but valid schemas: their top-level fields, `spec`/`status` as objects of any content. Each
group-version's v3 document lists the resources' paths and operations, with the PATCH parameters kubectl's
QueryParamVerifierV3 looks for (`fieldValidation`), so kubectl 1.27+ validates on the server.
"""

import copy
import hashlib
import json
import struct

from .discovery import VERSION

# kube-openapi handler: the deprecated `@` subtype is accepted; the answer is labelled with the `.` one
PROTOBUF_ACCEPTED = ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
PROTOBUF = PROTOBUF_ACCEPTED[1]
META = "io.k8s.apimachinery.pkg.apis.meta.v1."
OBJECT_META = META + "ObjectMeta"
LIST_META = META + "ListMeta"
API_VERSION_DOC = ("APIVersion defines the versioned schema of this representation of an object. Servers should convert "
                   "recognized schemas to the latest internal value, and may reject unrecognized values.")
KIND_DOC = ("Kind is a string value representing the REST resource this object represents. Servers may infer this from "
            "the endpoint the client submits requests to. Cannot be updated. In CamelCase.")
METADATA_DOC = "Standard object's metadata."
_STRING = {"type": "string"}
_ANY_OBJECT = {"type": "object"}

_META_SCHEMAS = {
    OBJECT_META: {
        "description": "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
        "type": "object",
        "properties": {
            "annotations": {"type": "object", "additionalProperties": dict(_STRING)},
            "creationTimestamp": {"type": "string", "format": "date-time"},
            "deletionGracePeriodSeconds": {"type": "integer", "format": "int64"},
            "deletionTimestamp": {"type": "string", "format": "date-time"},
            "finalizers": {"type": "array", "items": dict(_STRING)},
            "generateName": dict(_STRING),
            "generation": {"type": "integer", "format": "int64"},
            "labels": {"type": "object", "additionalProperties": dict(_STRING)},
            "managedFields": {"type": "array", "items": dict(_ANY_OBJECT)},
            "name": dict(_STRING),
            "namespace": dict(_STRING),
            "ownerReferences": {"type": "array", "items": dict(_ANY_OBJECT)},
            "resourceVersion": dict(_STRING),
            "selfLink": dict(_STRING),
            "uid": dict(_STRING),
        },
    },
    LIST_META: {
        "description": "ListMeta describes metadata that synthetic resources must have, including lists and various status objects.",
        "type": "object",
        "properties": {"continue": dict(_STRING), "remainingItemCount": {"type": "integer", "format": "int64"},
                       "resourceVersion": dict(_STRING), "selfLink": dict(_STRING)},
    },
}

# top-level fields of the built-in kinds besides apiVersion/kind/metadata (k8s.io/api types)
_BUILTIN_FIELDS = {
    "Namespace": {"spec": _ANY_OBJECT, "status": _ANY_OBJECT},
    "Node": {"spec": _ANY_OBJECT, "status": _ANY_OBJECT},
    "Pod": {"spec": _ANY_OBJECT, "status": _ANY_OBJECT},
    "ConfigMap": {"data": {"type": "object", "additionalProperties": _STRING},
                  "binaryData": {"type": "object", "additionalProperties": {"type": "string", "format": "byte"}},
                  "immutable": {"type": "boolean"}},
    "Event": dict({k: _STRING for k in ("action", "message", "reason", "reportingComponent", "reportingInstance", "type")},
                  count={"type": "integer", "format": "int32"}, eventTime={"type": "string", "format": "date-time"},
                  firstTimestamp={"type": "string", "format": "date-time"}, lastTimestamp={"type": "string", "format": "date-time"},
                  involvedObject=_ANY_OBJECT, related=_ANY_OBJECT, series=_ANY_OBJECT, source=_ANY_OBJECT),
    "CustomResourceDefinition": {"spec": _ANY_OBJECT, "status": _ANY_OBJECT},
    "Lease": {"spec": _ANY_OBJECT},
    "CronJob": {"spec": _ANY_OBJECT, "status": _ANY_OBJECT},
    "SelfSubjectAccessReview": {"spec": _ANY_OBJECT, "status": _ANY_OBJECT},
    "SelfSubjectRulesReview": {"spec": _ANY_OBJECT, "status": _ANY_OBJECT},
    "ServiceAccount": {"secrets": {"type": "array", "items": _ANY_OBJECT}, "imagePullSecrets": {"type": "array", "items": _ANY_OBJECT},
                       "automountServiceAccountToken": {"type": "boolean"}},
    "Role": {"rules": {"type": "array", "items": _ANY_OBJECT}},
    "ClusterRole": {"rules": {"type": "array", "items": _ANY_OBJECT}, "aggregationRule": _ANY_OBJECT},
    "RoleBinding": {"roleRef": _ANY_OBJECT, "subjects": {"type": "array", "items": _ANY_OBJECT}},
    "ClusterRoleBinding": {"roleRef": _ANY_OBJECT, "subjects": {"type": "array", "items": _ANY_OBJECT}},
}
_BUILTIN_PACKAGES = {"": "io.k8s.api.core", "apiextensions.k8s.io": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions"}


def definition_name(rtype, version, kind=None):
    """`io.k8s.api.core.v1.Node`, `org.ovn.k8s.v1.EgressIP` (a CR's group reversed, as the CRD builder names it)."""
    kind = kind or rtype.kind
    if rtype.builtin:
        package = _BUILTIN_PACKAGES.get(rtype.group) or "io.k8s.api." + rtype.group.split(".")[0]
    else:
        package = ".".join(reversed(rtype.group.split(".")))
    return "%s.%s.%s" % (package, version, kind)


def _gvk(rtype, version, kind=None):
    return [{"group": rtype.group, "kind": kind or rtype.kind, "version": version}]


def _ref(name, v3):
    return {"$ref": ("#/components/schemas/" if v3 else "#/definitions/") + name}


def _object_schema(rtype, version, v3):
    if rtype.builtin:
        schema = {"type": "object", "properties": copy.deepcopy(_BUILTIN_FIELDS.get(rtype.kind, {"spec": _ANY_OBJECT}))}
        schema["description"] = "%s (the twin publishes its top-level fields only)." % rtype.kind
    else:
        schema = copy.deepcopy(rtype.schema(version) or {"type": "object", "x-kubernetes-preserve-unknown-fields": True})
        schema.setdefault("properties", {})
        if not v3:
            schema = to_v2(schema)
    props = schema.setdefault("properties", {})
    props["apiVersion"] = {"description": API_VERSION_DOC, "type": "string"}
    props["kind"] = {"description": KIND_DOC, "type": "string"}
    # the v3 builder wraps the reference in allOf so that a description can sit beside it
    props["metadata"] = {"allOf": [_ref(OBJECT_META, True)], "description": METADATA_DOC} if v3 else \
        dict(_ref(OBJECT_META, False), description=METADATA_DOC)
    schema["x-kubernetes-group-version-kind"] = _gvk(rtype, version)
    return schema


def _list_schema(rtype, version, v3):
    item = _ref(definition_name(rtype, version), v3)
    return {
        "description": "%s is a list of %s" % (rtype.list_kind, rtype.kind),
        "type": "object", "required": ["items"],
        "properties": {"apiVersion": {"description": API_VERSION_DOC, "type": "string"},
                       "items": {"type": "array", "items": item},
                       "kind": {"description": KIND_DOC, "type": "string"},
                       "metadata": dict(_ref(LIST_META, v3)) if not v3 else {"allOf": [_ref(LIST_META, True)]}},
        "x-kubernetes-group-version-kind": _gvk(rtype, version, rtype.list_kind),
    }


def to_v2(schema):
    """ToStructuralOpenAPIV2: what a v2 document can say (and kubectl's v2 parser copes with)."""
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if k not in ("allOf", "anyOf", "oneOf", "not")}
    if out.pop("nullable", False):
        out.pop("type", None)
        out.pop("items", None)
        out.pop("properties", None)
    if out.get("x-kubernetes-preserve-unknown-fields"):
        out.pop("items", None)
        out.pop("properties", None)
        if out.get("type") == "object":
            out.pop("type")
    if out.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
    if out.get("type") == "array" and "items" not in out:
        out.pop("type")
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: to_v2(v) for k, v in out["properties"].items()}
        nullable = {k for k, v in schema["properties"].items() if isinstance(v, dict) and v.get("nullable")}
        if nullable and out.get("required"):
            out["required"] = [r for r in out["required"] if r not in nullable]
    if isinstance(out.get("items"), dict):
        out["items"] = to_v2(out["items"])
    if isinstance(out.get("additionalProperties"), dict):
        if out["additionalProperties"].get("nullable"):
            out.pop("required", None)
        out["additionalProperties"] = to_v2(out["additionalProperties"])
    if not out.get("required"):
        out.pop("required", None)
    return out


# ---------------------------------------------------------------- paths (v3 per group-version)

def _param(name, where="query", schema=None, required=False):
    param = {"name": name, "in": where, "schema": schema or {"type": "string", "uniqueItems": True}}
    if required:
        param["required"] = True
    return param


_WRITE_PARAMS = [_param("dryRun"), _param("fieldManager"), _param("fieldValidation")]


def _operation(rtype, version, action, op_id, params=(), body=None, response=None):
    op = {"operationId": op_id, "x-kubernetes-action": action,
          "x-kubernetes-group-version-kind": _gvk(rtype, version)[0],
          "parameters": list(params),
          "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": response}}},
                        "401": {"description": "Unauthorized"}}}
    if body is not None:
        op["requestBody"] = {"required": True, "content": {"*/*": {"schema": body}}}
    return op


def _paths(rtype, version):
    prefix = "/api/%s" % version if not rtype.group else "/apis/%s/%s" % (rtype.group, version)
    namespaced = "/namespaces/{namespace}" if rtype.namespaced else ""
    collection = "%s%s/%s" % (prefix, namespaced, rtype.plural)
    item = collection + "/{name}"
    obj, lst = _ref(definition_name(rtype, version), True), _ref(definition_name(rtype, version, rtype.list_kind), True)
    patch_body = {"type": "object"}
    name = "%s%s%s" % (rtype.group.replace(".", " ").title().replace(" ", ""), version.title(), rtype.kind)
    common = [_param("pretty")] + ([_param("namespace", "path", required=True)] if rtype.namespaced else [])
    verbs = set(rtype.verbs)
    coll, one = {"parameters": common}, {"parameters": common + [_param("name", "path", required=True)]}
    if "list" in verbs:
        coll["get"] = _operation(rtype, version, "list", "list" + name, [_param(p) for p in (
            "allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion",
            "resourceVersionMatch", "timeoutSeconds", "watch")], response=lst)
    if "create" in verbs:
        coll["post"] = _operation(rtype, version, "post", "create" + name, _WRITE_PARAMS, obj, obj)
    if "get" in verbs:
        one["get"] = _operation(rtype, version, "get", "read" + name, response=obj)
    if "update" in verbs:
        one["put"] = _operation(rtype, version, "put", "replace" + name, _WRITE_PARAMS, obj, obj)
    if "patch" in verbs:
        one["patch"] = _operation(rtype, version, "patch", "patch" + name, _WRITE_PARAMS + [_param("force")], patch_body, obj)
    if "delete" in verbs:
        one["delete"] = _operation(rtype, version, "delete", "delete" + name, [_param("dryRun"), _param("propagationPolicy")])
    return {collection: coll, item: one}


# ---------------------------------------------------------------- documents

def _info():
    return {"title": "Kubernetes", "version": VERSION["gitVersion"]}


def v2_document(registry):
    definitions = copy.deepcopy(_META_SCHEMAS)
    for rtype in registry.types():
        for version in rtype.versions:
            definitions[definition_name(rtype, version)] = _object_schema(rtype, version, False)
            definitions[definition_name(rtype, version, rtype.list_kind)] = _list_schema(rtype, version, False)
    return {"swagger": "2.0", "info": _info(), "paths": {}, "definitions": dict(sorted(definitions.items()))}


def group_versions(registry):
    """OpenAPI v3 group-version keys: `api/v1`, `apis/k8s.ovn.org/v1`."""
    keys = set()
    for rtype in registry.types():
        for version in rtype.versions:
            keys.add("api/" + version if not rtype.group else "apis/%s/%s" % (rtype.group, version))
    return sorted(keys)


def v3_document(registry, key):
    parts = key.split("/")
    group, version = ("", parts[1]) if parts[0] == "api" and len(parts) == 2 else (parts[1], parts[2]) if len(parts) == 3 else (None, None)
    types = [t for t in registry.types() if t.group == group and version in t.versions]
    if not types:
        return None
    schemas, paths = copy.deepcopy(_META_SCHEMAS), {}
    for rtype in sorted(types, key=lambda t: t.plural):
        schemas[definition_name(rtype, version)] = _object_schema(rtype, version, True)
        schemas[definition_name(rtype, version, rtype.list_kind)] = _list_schema(rtype, version, True)
        paths.update(_paths(rtype, version))
    return {"openapi": "3.0.0", "info": _info(), "paths": paths, "components": {"schemas": dict(sorted(schemas.items()))}}


class OpenApi:
    """The documents of one registry, built on first use (the CRDs are fixed at start)."""

    def __init__(self, registry):
        self.registry = registry
        self._cache = {}

    def _get(self, key, build):
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    def v2_json(self):
        return self._get("v2", lambda: json.dumps(v2_document(self.registry)).encode())

    def v2_protobuf(self):
        return self._get("v2pb", lambda: encode_document(v2_document(self.registry)))

    def v3_index(self):
        def build():
            paths = {}
            for key in group_versions(self.registry):
                digest = hashlib.sha512(self.v3(key)).hexdigest()[:128].upper()
                paths[key] = {"serverRelativeURL": "/openapi/v3/%s?hash=%s" % (key, digest)}
            return json.dumps({"paths": paths}).encode()
        return self._get("v3", build)

    def v3(self, key):
        doc = self._get("v3/" + key, lambda: v3_document(self.registry, key))
        return None if doc is None else self._get("v3json/" + key, lambda: json.dumps(doc).encode())


# ---------------------------------------------------------------- gnostic openapi_v2 protobuf (OpenAPIv2.proto)

def _varint(value):
    out = bytearray()
    value &= (1 << 64) - 1
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number, wire, payload):
    return _varint(number << 3 | wire) + payload


def _bytes(number, data):
    data = data.encode() if isinstance(data, str) else data
    return _field(number, 2, _varint(len(data)) + data)


def _int(number, value):
    return _field(number, 0, _varint(int(value))) if value else b""


def _double(number, value):
    return _field(number, 1, struct.pack("<d", float(value)))


def _any(value):
    """openapi_v2.Any: the value as YAML text (field 2); JSON is YAML, and far quicker to write."""
    return _bytes(2, json.dumps(value) + "\n")


def _named(number, name, payload):
    return _bytes(number, _bytes(1, name) + _bytes(2, payload))


_SCHEMA_STRINGS = (("$ref", 1), ("format", 2), ("title", 3), ("description", 4), ("pattern", 13))
_SCHEMA_DOUBLES = (("multipleOf", 6), ("maximum", 7), ("minimum", 9))
_SCHEMA_INTS = (("exclusiveMaximum", 8), ("exclusiveMinimum", 10), ("maxLength", 11), ("minLength", 12), ("maxItems", 14),
                ("minItems", 15), ("uniqueItems", 16), ("maxProperties", 17), ("minProperties", 18), ("readOnly", 27))


def encode_schema(schema):
    out = b""
    for key, number in _SCHEMA_STRINGS:
        if schema.get(key):
            out += _bytes(number, schema[key])
    if "default" in schema:
        out += _bytes(5, _any(schema["default"]))
    for key, number in _SCHEMA_DOUBLES:
        if key in schema:
            out += _double(number, schema[key])
    for key, number in _SCHEMA_INTS:
        out += _int(number, schema.get(key))
    for name in schema.get("required") or []:
        out += _bytes(19, name)
    for value in schema.get("enum") or []:
        out += _bytes(20, _any(value))
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        out += _bytes(21, _bytes(1, encode_schema(extra)))
    elif isinstance(extra, bool):
        out += _bytes(21, _field(2, 0, _varint(int(extra))))
    if schema.get("type"):
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        out += _bytes(22, b"".join(_bytes(1, t) for t in types))
    if isinstance(schema.get("items"), dict):
        out += _bytes(23, _bytes(1, encode_schema(schema["items"])))
    if isinstance(schema.get("properties"), dict):
        out += _bytes(25, b"".join(_named(1, k, encode_schema(v)) for k, v in schema["properties"].items()))
    if "example" in schema:
        out += _bytes(30, _any(schema["example"]))
    for key, value in schema.items():
        if key.startswith("x-"):
            out += _named(31, key, _any(value))
    return out


def encode_document(doc):
    """openapi_v2.Document: swagger (1), info (2), paths (8), definitions (9)."""
    info = _bytes(1, doc["info"]["title"]) + _bytes(2, doc["info"]["version"])
    definitions = b"".join(_named(1, name, encode_schema(schema)) for name, schema in doc["definitions"].items())
    return _bytes(1, doc["swagger"]) + _bytes(2, info) + _bytes(8, b"") + _bytes(9, definitions)
