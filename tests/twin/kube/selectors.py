"""Label and field selectors, parsed and matched as k8s.io/apimachinery does.

Label selector grammar (labels.Parse): comma-separated requirements, each one of
`k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, `k>n`, `k<n`.
Field selectors (fields.ParseSelector): `f=v`, `f==v`, `f!=v`, comma-separated.
"""

import re

from .errors import bad_request

_KEY = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
_VALUE = r"[-A-Za-z0-9_.]*"
_SET_RE = re.compile(r"^(%s)\s+(in|notin)\s+\(([^)]*)\)$" % _KEY)
_OP_RE = re.compile(r"^(%s)\s*(==|!=|=|>|<)\s*(%s)$" % (_KEY, _VALUE))
_EXISTS_RE = re.compile(r"^(!?)\s*(%s)$" % _KEY)


def _split_top_level(text):
    """Split on commas that are not inside parentheses (`a in (x,y),b`)."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def parse_label_selector(text):
    """Return a list of (key, op, values) requirements; raise 400 BadRequest when malformed."""
    requirements = []
    for part in _split_top_level(text or ""):
        requirements.append(_parse_requirement(part))
    return requirements


def _parse_requirement(part):
    match = _SET_RE.match(part)
    if match:
        values = [v.strip() for v in match.group(3).split(",") if v.strip()]
        return (match.group(1), match.group(2), values)
    match = _OP_RE.match(part)
    if match:
        op = "=" if match.group(2) == "==" else match.group(2)
        if op in (">", "<") and not re.match(r"^-?\d+$", match.group(3)):
            raise bad_request("unable to parse requirement: for 'gt', 'lt' operators, the value must be an integer")
        return (match.group(1), op, [match.group(3)])
    match = _EXISTS_RE.match(part)
    if match:
        return (match.group(2), "!" if match.group(1) else "exists", [])
    raise bad_request("unable to parse requirement: found '%s', expected: in, notin, =, ==, !=, gt, lt" % part)


def labels_match(requirements, labels):
    labels = labels or {}
    return all(_requirement_matches(req, labels) for req in requirements)


def _requirement_matches(requirement, labels):
    key, op, values = requirement
    present = key in labels
    value = labels.get(key)
    if op == "exists":
        return present
    if op == "!":
        return not present
    if op in ("=", "in"):
        return present and value in values
    if op in ("!=", "notin"):
        return not present or value not in values
    if not present or not re.match(r"^-?\d+$", value or ""):
        return False
    return int(value) > int(values[0]) if op == ">" else int(value) < int(values[0])


def parse_field_selector(text, supported):
    """Return a list of (field, op, value); fields outside `supported` are refused as the apiserver does."""
    requirements = []
    for part in _split_top_level(text or ""):
        match = re.match(r"^([^=!]+?)\s*(==|!=|=)\s*(.*)$", part)
        if not match:
            raise bad_request("invalid selector: '%s'; can't understand '%s'" % (text, part))
        field, op, value = match.group(1).strip(), match.group(2), match.group(3).strip()
        if field not in supported:
            raise bad_request('field label not supported: %s' % field)
        requirements.append((field, "!=" if op == "!=" else "=", value))
    return requirements


# selectable booleans the registries render with strconv.FormatBool: absent is "false" (NodeToSelectableFields, pods)
BOOLEAN_FIELDS = {"spec.unschedulable", "spec.hostNetwork"}


def field_value(obj, path):
    """Value of a dotted field path as a string, "" when absent (fields.Set semantics)."""
    if path in BOOLEAN_FIELDS:
        return "true" if _lookup(obj, path) is True else "false"
    return _field_text(_lookup(obj, path))


def _lookup(obj, path):
    current = obj
    for part in path.split("."):
        if not isinstance(current, dict):
            return ""
        current = current.get(part)
    return current


def _field_text(current):
    if current is None:
        return ""
    if isinstance(current, bool):
        return "true" if current else "false"
    return str(current)


def fields_match(requirements, obj):
    for field, op, value in requirements:
        actual = field_value(obj, field)
        if (actual == value) != (op == "="):
            return False
    return True


def label_selector_from_dict(selector):
    """Requirements for a metav1.LabelSelector dict (matchLabels + matchExpressions).

    Useful to the controllers (EgressIP namespaceSelector/podSelector). An empty selector
    matches everything; None matches nothing, as LabelSelectorAsSelector does.
    """
    if selector is None:
        return None
    requirements = [(k, "=", [v]) for k, v in (selector.get("matchLabels") or {}).items()]
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
    for expr in selector.get("matchExpressions") or []:
        requirements.append((expr["key"], ops[expr["operator"]], list(expr.get("values") or [])))
    return requirements


def selector_matches(selector, labels):
    """True when a metav1.LabelSelector dict selects these labels."""
    requirements = label_selector_from_dict(selector)
    return requirements is not None and labels_match(requirements, labels)
