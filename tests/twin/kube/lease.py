"""coordination.k8s.io/v1 Lease: decoding and validation as kube-apiserver 1.29 does it.

- Decoding (k8s.io/api/coordination/v1 LeaseSpec, apimachinery meta/v1 micro_time.go): `acquireTime` and
  `renewTime` are MicroTime, parsed with Go's time.Parse and layout RFC3339Micro
  ("2006-01-02T15:04:05.000000Z07:00": exactly six fraction digits, `Z` or an offset) and written back in UTC;
  `leaseDurationSeconds` and `leaseTransitions` are int32; `holderIdentity` a string; null means unset.
  A value that does not decode is a 400 BadRequest before any validation. Unknown spec fields are dropped,
  with a warning (fieldValidation=Warn, the default) or a 400 (Strict).
- Validation (pkg/apis/coordination/validation/validation.go ValidateLeaseSpec): leaseDurationSeconds > 0,
  leaseTransitions >= 0. (`strategy` and `preferredHolder` arrived in 1.31, after the 1.29 the twin serves.)
- Strategy (pkg/registry/coordination/lease/strategy.go): AllowCreateOnUpdate true, AllowUnconditionalUpdate
  false, so a PUT of an existing Lease without metadata.resourceVersion is 422 Invalid (generic registry
  store.go Update), a stale one 409 Conflict (store.py).
"""

import datetime
import re

from .errors import FieldError, bad_request

KEY = "leases.coordination.k8s.io"
SPEC_FIELDS = ("holderIdentity", "leaseDurationSeconds", "acquireTime", "renewTime", "leaseTransitions")
MICRO_TIMES = ("acquireTime", "renewTime")
INT32 = ("leaseDurationSeconds", "leaseTransitions")
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"
_MICRO_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{6})(Z|[+-]\d{2}:\d{2})$")


def _cannot_handle(detail):
    # runtime codec error wording: `Lease in version "v1" cannot be handled as a Lease: <json error>`
    return bad_request('Lease in version "v1" cannot be handled as a Lease: %s' % detail)


def parse_micro_time(value):
    """A MicroTime string as Go's time.Parse(RFC3339Micro) takes it: an aware datetime, or None when it fails."""
    match = _MICRO_RE.match(value)
    if not match:
        return None
    year, month, day, hour, minute, second, micro, zone = match.groups()
    if zone == "Z":
        tz = datetime.timezone.utc
    else:
        sign = 1 if zone[0] == "+" else -1
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if hours > 23 or minutes > 59:
            return None
        tz = datetime.timezone(sign * datetime.timedelta(hours=hours, minutes=minutes))
    try:
        return datetime.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), int(micro), tz)
    except ValueError:
        return None


def format_micro_time(moment):
    """MicroTime.MarshalJSON: UTC, six fraction digits, `Z`."""
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _decode_field(name, value):
    if name == "holderIdentity":
        if not isinstance(value, str):
            raise _cannot_handle("json: cannot unmarshal %s into Go struct field LeaseSpec.spec.holderIdentity of type string"
                                 % _json_kind(value))
        return value
    if name in INT32:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or not -2**31 <= value < 2**31:
            raise _cannot_handle("json: cannot unmarshal %s into Go struct field LeaseSpec.spec.%s of type int32"
                                 % (_json_kind(value), name))
        return int(value)
    if not isinstance(value, str):
        raise _cannot_handle("json: cannot unmarshal %s into Go value of type string" % _json_kind(value))
    moment = parse_micro_time(value)
    if moment is None:
        raise _cannot_handle('parsing time "%s" as "%s": cannot parse "%s" as "%s"' % (value, RFC3339_MICRO, value, RFC3339_MICRO))
    return format_micro_time(moment)


def _json_kind(value):
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number %s" % value
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def decode(obj):
    """Decode spec in place (types, MicroTime in UTC, nulls dropped); return the unknown spec field paths."""
    if "spec" not in obj or obj["spec"] is None:
        obj.pop("spec", None)
        return []
    spec = obj["spec"]
    if not isinstance(spec, dict):
        raise _cannot_handle("json: cannot unmarshal %s into Go struct field Lease.spec of type v1.LeaseSpec" % _json_kind(spec))
    unknown = ["spec." + key for key in sorted(spec) if key not in SPEC_FIELDS]
    decoded = {}
    for name in SPEC_FIELDS:
        if spec.get(name) is not None:
            decoded[name] = _decode_field(name, spec[name])
    obj["spec"] = decoded
    return unknown


def errors(obj):
    """ValidateLeaseSpec."""
    spec = obj.get("spec") or {}
    found = []
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and duration <= 0:
        found.append(FieldError("spec.leaseDurationSeconds", "invalid", "must be greater than 0", duration))
    transitions = spec.get("leaseTransitions")
    if transitions is not None and transitions < 0:
        found.append(FieldError("spec.leaseTransitions", "invalid", "must be greater than or equal to 0", transitions))
    return found
