"""Resource quantities as the API server decodes and stores them (k8s.io/apimachinery pkg/api/resource).

A quantity in a built-in object (a container's requests and limits) is decoded into a resource.Quantity
(`ParseQuantity`: rounded up to nine decimal places; a binary amount below 1 becomes decimal) and encoded again in
canonical form (`CanonicalizeBytes`: binary amounts of at least 1024 in the largest binary suffix that keeps them
whole, everything else as a whole mantissa times a power of ten that is a multiple of three), so what a client reads
back is not always what it wrote: 0.5 comes back as 500m, 1.5Gi as 1536Mi, 2000 as 2k. A string that is no quantity
fails the decoding of the whole body (400).
"""

import re
from decimal import ROUND_UP, Decimal, localcontext

from .errors import FieldError, bad_request

# quantity.go splitREString: what its error names; the suffix is checked after it
SPLIT = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_NUMBER = re.compile(r"^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$")
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIX = dict((power, text) for text, power in _DECIMAL.items())
_BINARY_SUFFIX = dict((power, text) for text, power in _BINARY.items())


def parse(text):
    """(amount, format) of a quantity string; ValueError with the decoder's message when it is none."""
    if not isinstance(text, str) or not re.match(SPLIT, text):
        raise ValueError("quantities must match the regular expression '%s'" % SPLIT)
    sign, whole, fraction, suffix = _NUMBER.match(text).groups()
    if not (whole or fraction):
        raise ValueError("unable to parse numeric part of quantity")
    with localcontext() as context:
        context.prec = 80
        amount = Decimal("%s%s.%s" % (sign, whole or "0", fraction or "0"))
        if suffix in _DECIMAL:
            amount, form = amount.scaleb(_DECIMAL[suffix]), "DecimalSI"
        elif suffix in _BINARY:
            amount, form = amount * (2 ** _BINARY[suffix]), "BinarySI"
        elif len(suffix) > 1 and suffix[0] in "eE" and re.match(r"^[+-]?[0-9]+$", suffix[1:]):
            amount, form = amount.scaleb(int(suffix[1:])), "DecimalExponent"
        else:
            raise ValueError("unable to parse quantity's suffix")
        if amount != 0:
            amount = amount.quantize(Decimal("1e-9"), rounding=ROUND_UP) if amount.as_tuple().exponent < -9 else amount
        if form == "BinarySI" and 0 < abs(amount) < 1:
            form = "DecimalSI"
    return amount, form


def canonical(text):
    """The string the API server returns for a quantity written as `text` (Quantity.String())."""
    amount, form = parse(text)
    if amount == 0:
        return "0"
    sign = "-" if amount < 0 else ""
    amount = abs(amount)
    if form == "BinarySI" and amount >= 1024 and amount == amount.to_integral_value():
        mantissa, power = int(amount), 0
        while mantissa % 1024 == 0 and power < 60:
            mantissa, power = mantissa // 1024, power + 10
        return "%s%d%s" % (sign, mantissa, _BINARY_SUFFIX.get(power, ""))
    _sign, digits, exponent = amount.normalize().as_tuple()
    mantissa = int("".join(map(str, digits)))
    while exponent % 3:
        mantissa, exponent = mantissa * 10, exponent - 1
    if form == "DecimalExponent":
        return "%s%d%s" % (sign, mantissa, "e%d" % exponent if exponent else "")
    return "%s%d%s" % (sign, mantissa, _DECIMAL_SUFFIX.get(exponent, ""))


def canonical_containers(pod_spec, kind):
    """Every container's requests and limits in canonical form (what decoding then encoding the object does); a value
    that is no quantity is the 400 of a body that cannot be decoded."""
    for container in (pod_spec.get("containers") or []) + (pod_spec.get("initContainers") or []):
        resources = container.get("resources") or {}
        for key in ("requests", "limits"):
            for name, value in list((resources.get(key) or {}).items()):
                try:
                    resources[key][name] = canonical(str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value)
                except ValueError as problem:
                    raise bad_request('%s in version "v1" cannot be handled as a %s: %s' % (kind, kind, problem)) from None


def resource_errors(pod_spec, path):
    """ValidateResourceRequirements (pkg/apis/core/validation): no negative amount, no request above its limit."""
    errors = []
    for index, container in enumerate(pod_spec.get("containers") or []):
        resources = container.get("resources") or {}
        where = "%s.containers[%d].resources" % (path, index)
        requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
        for key, values in (("limits", limits), ("requests", requests)):
            for name, value in sorted(values.items()):
                if parse(value)[0] < 0:
                    errors.append(FieldError("%s.%s[%s]" % (where, key, name), "invalid", "must be greater than or equal to 0", value))
        for name, value in sorted(requests.items()):
            if name in limits and parse(value)[0] > parse(limits[name])[0]:
                errors.append(FieldError(where + ".requests", "invalid", "must be less than or equal to %s limit of %s"
                                         % (name, limits[name]), value))
    return errors
