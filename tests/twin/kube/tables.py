"""Table output (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`), as kubectl get asks for it.

Custom resources: apiextensions-apiserver's tableconvertor: a Name column, then the served version's
additionalPrinterColumns (default: Age from .metadata.creationTimestamp), each cell the first JSONPath result,
`date` cells as an age. Built-in kinds: the columns of pkg/printers/internalversion for Node, Namespace, Pod
(simplified: no container statuses), ConfigMap; other kinds the default convertor (Name, Created At).
"""

import calendar
import json
import re
import time

NAME_DOC = ("Name must be unique within a namespace. Is required when creating resources, although some resources may "
            "allow a client to request the generation of an appropriate name automatically. Name is primarily intended "
            "for creation idempotence and configuration definition. Cannot be updated.")
CREATED_DOC = ("CreationTimestamp is a timestamp representing the server time when this object was created. "
               "It is not guaranteed to be set in happens-before order across separate operations.")


def wants_table(accept):
    """The Table version asked for (`v1`, `v1beta1`), or None."""
    for part in (accept or "").split(","):
        params = dict(p.strip().split("=", 1) for p in part.split(";")[1:] if "=" in p)
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1"):
            return params["v"]
    return None


def human_duration(seconds):
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    seconds = int(seconds)
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return "%ds" % seconds
    minutes = seconds // 60
    if minutes < 10:
        return "%dm" % minutes if seconds % 60 == 0 else "%dm%ds" % (minutes, seconds % 60)
    if minutes < 180:
        return "%dm" % minutes
    hours = seconds // 3600
    if hours < 8:
        return "%dh" % hours if minutes % 60 == 0 else "%dh%dm" % (hours, minutes % 60)
    if hours < 48:
        return "%dh" % hours
    if hours < 24 * 8:
        return "%dd" % (hours // 24) if hours % 24 == 0 else "%dd%dh" % (hours // 24, hours % 24)
    if hours < 24 * 365 * 2:
        return "%dd" % (hours // 24)
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return "%dy" % (hours // 24 // 365) if days == 0 else "%dy%dd" % (hours // 24 // 365, days)
    return "%dy" % (hours // 24 // 365)


def age(timestamp):
    """translateTimestampSince: "<unknown>" without a timestamp."""
    if not timestamp:
        return "<unknown>"
    try:
        then = calendar.timegm(time.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return "<unknown>"
    return human_duration(time.time() - then)


# ---------------------------------------------------------------- JSONPath (the subset printer columns use)

_TOKEN = re.compile(r"\.([A-Za-z0-9_-]+)|\['((?:[^'\\]|\\.)*)'\]|\[\*\]|\[(\d+)\]|\[\?\(@\.([A-Za-z0-9_.]+)==\"([^\"]*)\"\)\]")


def jsonpath(obj, path):
    """Results of a simple JSONPath (`.a.b`, `['k\\.x']`, `[*]`, `[0]`, `[?(@.f=="v")]`), missing keys allowed."""
    nodes, pos = [obj], 0
    while pos < len(path):
        match = _TOKEN.match(path, pos)
        if not match:
            return []
        pos = match.end()
        field, quoted, index, filter_key, filter_value = match.groups()
        out = []
        for node in nodes:
            if field is not None or quoted is not None:
                key = field if field is not None else re.sub(r"\\(.)", r"\1", quoted)
                if isinstance(node, dict) and key in node:
                    out.append(node[key])
            elif index is not None:
                if isinstance(node, list) and int(index) < len(node):
                    out.append(node[int(index)])
            elif filter_key is not None:
                if isinstance(node, list):
                    out.extend(i for i in node if isinstance(i, dict) and str(_dig(i, filter_key)) == filter_value)
            elif isinstance(node, list):
                out.extend(node)
        nodes = out
    return nodes


def _dig(obj, dotted):
    for part in dotted.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def _cell(column_type, value):
    """tableconvertor cellForJSONValue (string columns print the value as JSONPath does)."""
    if value is None:
        return None
    if column_type == "string":
        return value if isinstance(value, str) else _print(value)
    if column_type == "integer":
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if column_type == "number":
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if column_type == "boolean":
        return value if isinstance(value, bool) else None
    if column_type == "date":
        return age(value) if isinstance(value, str) else None
    return None


def _print(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, separators=(",", ":")) if isinstance(value, (dict, list)) else str(value)


# ---------------------------------------------------------------- columns per kind

def _column(name, description="", column_type="string", fmt="", priority=0):
    return {"name": name, "type": column_type, "format": fmt, "description": description, "priority": priority}


def _node_status(node):
    conditions = {c.get("type"): c.get("status") for c in (node.get("status") or {}).get("conditions") or []}
    ready = conditions.get("Ready")
    status = ["Ready"] if ready == "True" else ["NotReady"] if ready == "False" else ["Unknown"]
    if (node.get("spec") or {}).get("unschedulable"):
        status.append("SchedulingDisabled")
    return ",".join(status)


def _node_roles(node):
    roles = set()
    for key, value in ((node.get("metadata") or {}).get("labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/"):
            roles.add(key[len("node-role.kubernetes.io/"):])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return ",".join(sorted(r for r in roles if r)) or "<none>"


def _address(node, kind):
    found = [a.get("address") for a in (node.get("status") or {}).get("addresses") or [] if a.get("type") == kind]
    return found[0] if found else "<none>"


def _info(node, key):
    return ((node.get("status") or {}).get("nodeInfo") or {}).get(key) or ("<unknown>" if key != "kubeletVersion" else "")


BUILTIN = {
    "Node": ([_column("Name", NAME_DOC, fmt="name"), _column("Status"), _column("Roles"), _column("Age"), _column("Version"),
              _column("Internal-IP", priority=1), _column("External-IP", priority=1), _column("OS-Image", priority=1),
              _column("Kernel-Version", priority=1), _column("Container-Runtime", priority=1)],
             lambda o: [o["metadata"]["name"], _node_status(o), _node_roles(o), age(o["metadata"].get("creationTimestamp")),
                        _info(o, "kubeletVersion"), _address(o, "InternalIP"), _address(o, "ExternalIP"), _info(o, "osImage"),
                        _info(o, "kernelVersion"), _info(o, "containerRuntimeVersion")]),
    "Namespace": ([_column("Name", NAME_DOC, fmt="name"), _column("Status"), _column("Age")],
                  lambda o: [o["metadata"]["name"], (o.get("status") or {}).get("phase", ""), age(o["metadata"].get("creationTimestamp"))]),
    "Pod": ([_column("Name", NAME_DOC, fmt="name"), _column("Ready"), _column("Status"), _column("Restarts", column_type="string"),
             _column("Age"), _column("IP", priority=1), _column("Node", priority=1)],
            lambda o: [o["metadata"]["name"], "%d/%d" % (_ready_containers(o), len((o.get("spec") or {}).get("containers") or [])),
                       (o.get("status") or {}).get("phase", ""), "0", age(o["metadata"].get("creationTimestamp")),
                       (o.get("status") or {}).get("podIP") or "<none>", (o.get("spec") or {}).get("nodeName") or "<none>"]),
    "ConfigMap": ([_column("Name", NAME_DOC, fmt="name"), _column("Data", column_type="integer"), _column("Age")],
                  lambda o: [o["metadata"]["name"], len(o.get("data") or {}) + len(o.get("binaryData") or {}),
                             age(o["metadata"].get("creationTimestamp"))]),
}


def _ready_containers(pod):
    return sum(1 for s in (pod.get("status") or {}).get("containerStatuses") or [] if s.get("ready"))


def _default_columns():
    return ([_column("Name", NAME_DOC, fmt="name"), _column("Created At", CREATED_DOC, column_type="date")],
            lambda o: [o["metadata"]["name"], o["metadata"].get("creationTimestamp")])


def _custom_columns(crd, version):
    served = next((v for v in crd["spec"]["versions"] if v["name"] == version), {})
    printer = served.get("additionalPrinterColumns") or [
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp", "description": CREATED_DOC}]
    columns = [_column("Name", NAME_DOC, fmt="name")] + [
        _column(c["name"], c.get("description") or "Custom resource definition column (in JSONPath format): %s" % c["jsonPath"],
                c["type"], c.get("format", ""), c.get("priority", 0)) for c in printer]

    def cells(obj):
        row = [obj["metadata"]["name"]]
        for c in printer:
            found = jsonpath(obj, c["jsonPath"])
            row.append(_cell(c["type"], found[0]) if found else None)
        return row
    return columns, cells


def columns_for(rtype, version, crd=None):
    if crd is not None:
        return _custom_columns(crd, version)
    return BUILTIN.get(rtype.kind) or _default_columns()


def table(rtype, version, objects, list_meta, table_version, include_object="Metadata", crd=None):
    columns, cells = columns_for(rtype, version, crd)
    rows = []
    for obj in objects:
        row = {"cells": cells(obj)}
        if include_object == "Object":
            row["object"] = obj
        elif include_object != "None":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/" + table_version,
                             "metadata": obj.get("metadata") or {}}
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/" + table_version, "metadata": dict(list_meta),
            "columnDefinitions": columns, "rows": rows}
