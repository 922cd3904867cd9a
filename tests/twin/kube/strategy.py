"""Per-kind write rules (the apiserver's registry strategies), kept apart from the store.

prepare_create / prepare_update decide which parts of a written object are kept, and
check() validates; both follow pkg/registry/* and apiextensions-apiserver's
customresource strategy.
"""

import copy

from . import batch
from . import lease
from .quantity import canonical_containers
from . import schema as crschema
from .errors import FieldError, bad_request, unconditional_update
from .validation import event_errors, metadata_errors, pod_errors, pod_update_errors

# metadata the server owns: carried over from the stored object on update
CRONJOBS = "cronjobs.batch"
BINDINGS = ("rolebindings.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io")
SERVER_META = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")


def prepare_create(rtype, obj):
    meta = obj["metadata"]
    for field in ("uid", "resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields"):
        meta.pop(field, None)
    if rtype.is_custom and rtype.status_subresource:
        obj.pop("status", None)
    if rtype.key == "pods":
        _default_pod(obj)
    elif rtype.key == "namespaces":
        obj.setdefault("spec", {})["finalizers"] = ["kubernetes"]
        obj["status"] = {"phase": "Active"}
    elif rtype.key == CRONJOBS:
        batch.default_cronjob(obj)


def _default_pod(pod):
    spec = pod.setdefault("spec", {})
    for key, value in (("restartPolicy", "Always"), ("dnsPolicy", "ClusterFirst"), ("schedulerName", "default-scheduler"),
                       ("terminationGracePeriodSeconds", 30), ("serviceAccountName", "default"),
                       ("securityContext", {}), ("enableServiceLinks", True), ("priority", 0),
                       ("preemptionPolicy", "PreemptLowerPriority")):
        spec.setdefault(key, value)
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        image = container.get("image") or ""
        latest = ":" not in image.rsplit("/", 1)[-1] or image.endswith(":latest")
        container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
        container.setdefault("terminationMessagePath", "/dev/termination-log")
        container.setdefault("terminationMessagePolicy", "File")
        container.setdefault("resources", {})
    canonical_containers(spec, "Pod")
    spec.setdefault("tolerations", [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    ])
    resources = [c.get("resources") for c in spec.get("containers") or []]
    pod["status"] = {"phase": "Pending", "qosClass": "Burstable" if any(resources) else "BestEffort"}


def prepare_update(rtype, old, new, subresource):
    """The object an update stores, from the stored `old` and the written `new`."""
    new = copy.deepcopy(new)
    meta = new.setdefault("metadata", {})
    if not rtype.allow_unconditional_update and not meta.get("resourceVersion"):
        raise unconditional_update(rtype, old["metadata"]["name"])
    meta.pop("managedFields", None)
    for field in SERVER_META:
        if field in old["metadata"]:
            meta[field] = old["metadata"][field]
        else:
            meta.pop(field, None)
    if subresource == "status":
        return _status_update(rtype, old, new)
    if rtype.status_subresource:
        _keep(new, old, "status")
    if rtype.key == "namespaces":
        new.setdefault("spec", {})["finalizers"] = (old.get("spec") or {}).get("finalizers", [])
    if rtype.key == CRONJOBS:
        batch.default_cronjob(new)
    return new


def _keep(new, old, field):
    if field in old:
        new[field] = copy.deepcopy(old[field])
    else:
        new.pop(field, None)


def _status_update(rtype, old, new):
    if rtype.is_custom:
        # customresource statusStrategy: everything but status comes from the stored object
        result = copy.deepcopy(old)
        _keep(result, new, "status")
        return result
    # built-in status strategies reset spec; metadata changes are kept
    for field in [k for k in set(old) | set(new) if k not in ("metadata", "status", "apiVersion", "kind")]:
        _keep(new, old, field)
    return new


def bump_generation(rtype, old, new):
    """CRs: generation +1 when anything but metadata (and status, with a status subresource) changed."""
    if not rtype.is_custom:
        return
    skip = ("metadata", "status") if rtype.status_subresource else ("metadata",)
    before = {k: v for k, v in old.items() if k not in skip}
    after = {k: v for k, v in new.items() if k not in skip}
    generation = old["metadata"].get("generation", 1)
    new["metadata"]["generation"] = generation + 1 if before != after else generation


def check(rtype, obj, old=None, version=None, field_validation=None, warnings=None):
    """Validate (and for CRs prune and default) `obj` in place; return FieldErrors."""
    errors = metadata_errors(obj["metadata"], label_only_name=rtype.key == "namespaces")
    if rtype.is_custom:
        schema = rtype.schema(version)
        if schema:
            pruned = crschema.prepare(schema, obj)
            _report_unknown(pruned, field_validation, warnings)
            errors.extend(crschema.validate(schema, obj))
    elif rtype.key == lease.KEY:
        _report_unknown(lease.decode(obj), field_validation, warnings)
        errors.extend(lease.errors(obj))
    elif rtype.key == "events":
        errors.extend(event_errors(obj))
    elif rtype.key == CRONJOBS:
        errors.extend(batch.cronjob_errors(obj))
    elif rtype.key in BINDINGS and old is not None and obj.get("roleRef") != old.get("roleRef"):
        # ValidateRoleBindingUpdate / ValidateClusterRoleBindingUpdate (pkg/apis/rbac/validation)
        errors.append(FieldError("roleRef", "invalid", "cannot change roleRef", obj.get("roleRef")))
    elif rtype.key == "pods":
        errors.extend(pod_errors(obj))
        if old is not None:
            errors.extend(pod_update_errors(old, obj))
    if old is not None and obj["metadata"].get("name") != old["metadata"].get("name"):
        errors.append(FieldError("metadata.name", "invalid", "field is immutable", obj["metadata"].get("name")))
    return errors


def _report_unknown(pruned, field_validation, warnings):
    """fieldValidation: Strict refuses unknown fields (400), Warn (server default) warns, Ignore is silent."""
    if not pruned:
        return
    messages = ['unknown field "%s"' % p for p in pruned]
    if field_validation == "Strict":
        raise bad_request("strict decoding error: " + ", ".join(messages))
    if field_validation != "Ignore" and warnings is not None:
        warnings.extend(messages)
