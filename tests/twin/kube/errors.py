"""API errors and the Status objects the apiserver answers them with.

Messages follow k8s.io/apimachinery/pkg/api/errors so that clients which parse
`reason`, `code` and `details` behave as they do against a real server.
"""


class ApiError(Exception):
    """An error answered as a metav1.Status (code, reason, message, details)."""

    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.list_meta = {}  # Status.metadata (ListMeta): the continue token of a 410 on an expired continue
        self.headers = {}
        self.text = None  # a plain-text answer instead of a Status (the apiserver's 429 of max-in-flight and APF)

    def response_parts(self):
        """(body, content type, headers) of the answer."""
        if self.text is not None:
            return self.text, "text/plain; charset=utf-8", self.headers
        return self.status(), "application/json", self.headers

    def status(self):
        body = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": dict(self.list_meta),
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details:
            body["details"] = self.details
        return body


def _details(rtype, name):
    details = {"kind": rtype.plural} if rtype else {}
    if name:
        details["name"] = name
    if rtype and rtype.group:
        details["group"] = rtype.group
    return details


def qualified(rtype):
    """`egressips.k8s.ovn.org` / `pods`: how the apiserver names a resource in messages."""
    return rtype.plural + ("." + rtype.group if rtype.group else "")


def qualified_kind(rtype):
    """`EgressIP.k8s.ovn.org` / `Pod`: used in Invalid messages."""
    return rtype.kind + ("." + rtype.group if rtype.group else "")


def not_found(rtype, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (qualified(rtype), name), _details(rtype, name))


def already_exists(rtype, name):
    return ApiError(409, "AlreadyExists", '%s "%s" already exists' % (qualified(rtype), name), _details(rtype, name))


def conflict(rtype, name, why):
    message = 'Operation cannot be fulfilled on %s "%s": %s' % (qualified(rtype), name, why)
    return ApiError(409, "Conflict", message, _details(rtype, name))


def stale(rtype, name):
    return conflict(rtype, name, "the object has been modified; please apply your changes to the latest version and try again")


def unconditional_update(rtype, name):
    """422 for a PUT without metadata.resourceVersion where the strategy's AllowUnconditionalUpdate is false (CRs).

    registry/generic/registry/store.go Update names the kind by the resource (plural), not the Kind.
    """
    detail = "Invalid value: 0x0: must be specified for an update"
    message = '%s "%s" is invalid: metadata.resourceVersion: %s' % (qualified(rtype), name, detail)
    details = {"name": name, "kind": rtype.plural,
               "causes": [{"reason": "FieldValueInvalid", "message": detail, "field": "metadata.resourceVersion"}]}
    if rtype.group:
        details["group"] = rtype.group
    return ApiError(422, "Invalid", message, details)


def bad_request(message):
    return ApiError(400, "BadRequest", message)


def method_not_allowed(message):
    return ApiError(405, "MethodNotAllowed", message)


def unsupported_media_type(accepted):
    message = "the body of the request was in an unknown format - accepted media types include: " + ", ".join(accepted)
    return ApiError(415, "UnsupportedMediaType", message)


def unauthorized():
    return ApiError(401, "Unauthorized", "Unauthorized")


def forbidden(message):
    return ApiError(403, "Forbidden", message)


def internal(message):
    return ApiError(500, "InternalError", "Internal error occurred: " + message, {"causes": [{"message": message}]})


def timeout(message="Timeout: request did not complete within the allotted timeout"):
    return ApiError(504, "Timeout", message, {"causes": [{"reason": "UnexpectedServerResponse", "message": message}]})


def unprocessable(message):
    """A request the server understood but cannot apply (for example a failed JSON patch `test`)."""
    return ApiError(422, "Invalid", message)


class FieldError:
    """One field.Error: a path, an error type and a detail, rendered as the apiserver does."""

    # field.ErrorType -> (cause reason, message prefix)
    TYPES = {
        "required": ("FieldValueRequired", "Required value"),
        "invalid": ("FieldValueInvalid", "Invalid value"),
        "type": ("FieldValueTypeInvalid", "Invalid value"),
        "unsupported": ("FieldValueNotSupported", "Unsupported value"),
        "too_long": ("FieldValueTooLong", "Too long"),
        "too_many": ("FieldValueTooMany", "Too many"),
        "forbidden": ("FieldValueForbidden", "Forbidden"),
        "duplicate": ("FieldValueDuplicate", "Duplicate value"),
    }
    # error types whose message carries the offending value
    WITH_VALUE = ("invalid", "type", "unsupported", "duplicate", "too_many")

    def __init__(self, path, etype, detail="", value=None):
        self.path = path
        self.etype = etype
        self.detail = detail
        self.value = value

    def cause_message(self):
        prefix = self.TYPES[self.etype][1]
        parts = [prefix]
        if self.etype in self.WITH_VALUE:
            parts.append(render_value(self.value))
        if self.detail:
            parts.append(self.detail)
        return ": ".join(parts)

    def __str__(self):
        return "%s: %s" % (self.path, self.cause_message())

    def cause(self):
        return {"reason": self.TYPES[self.etype][0], "message": self.cause_message(), "field": self.path}


def render_value(value):
    """Render a value the way field.Error does (%q for strings, plain for numbers)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"%s"' % value.replace("\\", "\\\\").replace('"', '\\"')
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return str(value)
    return '"%s"' % type_name(value)


def type_name(value):
    """JSON type name as kube-openapi reports it in type errors."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def invalid(rtype, name, errors):
    """422 Invalid for a list of FieldError, message shaped like errors.NewInvalid."""
    if len(errors) == 1:
        summary = str(errors[0])
    else:
        summary = "[" + ", ".join(str(e) for e in errors) + "]"
    message = '%s "%s" is invalid: %s' % (qualified_kind(rtype), name, summary)
    details = {"name": name, "kind": rtype.kind, "causes": [e.cause() for e in errors]}
    if rtype.group:
        details["group"] = rtype.group
    return ApiError(422, "Invalid", message, details)


def too_many_requests(retry_after=1):
    """kube-apiserver's throttling answer (filters/maxinflight.go tooManyRequests, also used by priority and fairness):
    429, a plain-text body and a Retry-After header (the server's constant is 1 s)."""
    err = ApiError(429, "TooManyRequests", "Too many requests, please try again later.")
    err.text = "Too many requests, please try again later.\n"
    err.headers = {"Retry-After": str(retry_after)}
    return err
