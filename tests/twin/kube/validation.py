"""Validation of ObjectMeta and the few built-in kinds (apimachinery / pkg/apis/core/validation).

Custom resources are validated against their CRD schema (schema.py); built-in kinds only
get the checks below (names, labels, pods' containers): the twin does not carry the
built-in OpenAPI schemas.
"""

import re

from .errors import FieldError
from .quantity import resource_errors

DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN = DNS1123_LABEL + r"(\." + DNS1123_LABEL + r")*"
LABEL_VALUE = r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
QUALIFIED_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"

SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '%s')" % DNS1123_SUBDOMAIN)
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
             "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '%s')"
             % DNS1123_LABEL)
LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                   "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
                   "regex used for validation is '%s')" % LABEL_VALUE)
QUALIFIED_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                 "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                 "'%s')" % QUALIFIED_NAME)


def _full(pattern, value):
    return re.fullmatch(pattern, value) is not None


def name_errors(name, label_only=False):
    if label_only:
        if len(name) > 63 or not _full(DNS1123_LABEL, name):
            return [FieldError("metadata.name", "invalid", LABEL_MSG if len(name) <= 63 else "must be no more than 63 characters", name)]
        return []
    if len(name) > 253:
        return [FieldError("metadata.name", "invalid", "must be no more than 253 characters", name)]
    if not _full(DNS1123_SUBDOMAIN, name):
        return [FieldError("metadata.name", "invalid", SUBDOMAIN_MSG, name)]
    return []


def _qualified_key_errors(path, key):
    prefix, _slash, name = key.rpartition("/")
    errors = []
    if prefix and (len(prefix) > 253 or not _full(DNS1123_SUBDOMAIN, prefix)):
        errors.append(FieldError(path, "invalid", "prefix part " + SUBDOMAIN_MSG, key))
    if not name or len(name) > 63 or not _full(QUALIFIED_NAME, name):
        errors.append(FieldError(path, "invalid", QUALIFIED_MSG, key))
    return errors


def metadata_errors(meta, label_only_name=False):
    errors = []
    name = meta.get("name")
    if not name:
        errors.append(FieldError("metadata.name", "required", "name or generateName is required"))
    else:
        errors.extend(name_errors(name, label_only_name))
    for key, value in (meta.get("labels") or {}).items():
        errors.extend(_qualified_key_errors("metadata.labels", key))
        if not isinstance(value, str) or len(value) > 63 or not _full(LABEL_VALUE, value):
            errors.append(FieldError("metadata.labels", "invalid", LABEL_VALUE_MSG, value))
    for key in meta.get("annotations") or {}:
        errors.extend(_qualified_key_errors("metadata.annotations", key))
    return errors


def pod_errors(pod):
    spec = pod.get("spec") or {}
    containers = spec.get("containers") or []
    if not containers:
        return [FieldError("spec.containers", "required")]
    errors = []
    for i, container in enumerate(containers):
        path = "spec.containers[%d]" % i
        if not container.get("name"):
            errors.append(FieldError(path + ".name", "required"))
        elif not _full(DNS1123_LABEL, container["name"]):
            errors.append(FieldError(path + ".name", "invalid", LABEL_MSG, container["name"]))
        if not container.get("image"):
            errors.append(FieldError(path + ".image", "required"))
    return errors + resource_errors(spec, "spec")


def _qualified_name(value):
    """IsQualifiedName: an optional DNS-subdomain prefix and '/', then a name of at most 63 characters."""
    prefix, _slash, name = value.rpartition("/")
    if _slash and (not prefix or len(prefix) > 253 or not _full(DNS1123_SUBDOMAIN, prefix)):
        return False
    return 0 < len(name) <= 63 and _full(QUALIFIED_NAME, name)


# core/v1 Event limits (pkg/apis/core/validation/events.go)
REPORTING_INSTANCE_LIMIT = ACTION_LIMIT = REASON_LIMIT = 128
NOTE_LIMIT = 1024


def event_errors(event):
    """legacyValidateEvent, which every core/v1 Event create and update passes (pkg/apis/core/validation/events.go).

    Without eventTime (an "old" Event, as kubectl, client-go's legacy recorder and most tools write them) the Event's
    namespace must match involvedObject.namespace, and an object without a namespace (a Node, an EgressIP) takes its
    Events in "" or "default". With eventTime, such an object's Events may be in "default" or "kube-system", and
    reportingController (JSON reportingComponent), reportingInstance, action and reason are required, with limits.
    """
    namespace = (event.get("metadata") or {}).get("namespace") or ""
    involved = event.get("involvedObject") or {}
    involved_namespace = involved.get("namespace") or ""
    errors = []
    mismatch = FieldError("involvedObject.namespace", "invalid", "does not match event.namespace", involved_namespace)
    if not event.get("eventTime"):
        if not involved_namespace:
            if namespace not in ("", "default"):
                errors.append(mismatch)
        elif namespace != involved_namespace:
            errors.append(mismatch)
        return errors
    if not involved_namespace and namespace not in ("default", "kube-system"):
        errors.append(mismatch)
    controller = event.get("reportingComponent") or ""
    if not controller:
        errors.append(FieldError("reportingController", "required"))
    elif not _qualified_name(controller):
        errors.append(FieldError("reportingController", "invalid", QUALIFIED_MSG, controller))
    for field, limit in (("reportingInstance", REPORTING_INSTANCE_LIMIT), ("action", ACTION_LIMIT), ("reason", REASON_LIMIT)):
        value = event.get(field) or ""
        if not value:
            errors.append(FieldError(field, "required"))
        elif len(value) > limit:
            errors.append(FieldError(field, "invalid", "can have at most %d characters" % limit, ""))
    if len(event.get("message") or "") > NOTE_LIMIT:
        errors.append(FieldError("message", "invalid", "can have at most %d characters" % NOTE_LIMIT, ""))
    return errors


# fields of a pod spec an update may change (ValidatePodUpdate); spec.nodeName may go from
# empty to set, which stands for the scheduler's pods/binding call
_POD_MUTABLE = ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds")


def pod_update_errors(old, new):
    old_spec, new_spec = dict(old.get("spec") or {}), dict(new.get("spec") or {})
    for spec in (old_spec, new_spec):
        for field in _POD_MUTABLE:
            spec.pop(field, None)
        for kind in ("containers", "initContainers"):
            spec[kind] = [{k: v for k, v in c.items() if k != "image"} for c in spec.get(kind) or []]
    if not old_spec.get("nodeName"):
        old_spec.pop("nodeName", None)
        new_spec.pop("nodeName", None)
    if old_spec == new_spec:
        return []
    detail = ("pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
              "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
              "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)")
    return [FieldError("spec", "forbidden", detail)]
