"""authorization.k8s.io/v1 SelfSubjectAccessReview and SelfSubjectRulesReview: create-only, nothing stored.

The twin's bearer token is the cluster's admin (`system:masters` through the cluster-admin binding), so every
access review is allowed and the rules review lists `*`; the reason text follows the RBAC authorizer's.
"""

from .errors import ApiError, bad_request

REVIEWS = ("selfsubjectaccessreviews.authorization.k8s.io", "selfsubjectrulesreviews.authorization.k8s.io")
ADMIN_REASON = 'RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to Group "system:masters"'


def _invalid(kind, field, detail):
    message = '%s.authorization.k8s.io "" is invalid: %s: Invalid value: "null": %s' % (kind, field, detail)
    return ApiError(422, "Invalid", message, {"group": "authorization.k8s.io", "kind": kind, "causes": [
        {"reason": "FieldValueInvalid", "message": 'Invalid value: "null": ' + detail, "field": field}]})


def review(rtype, body, namespace_of_request=None):
    """The answered review (201 body) for a POSTed SelfSubjectAccessReview / SelfSubjectRulesReview."""
    if not isinstance(body, dict) or not isinstance(body.get("spec", {}), dict):
        raise bad_request("the body of the request must be a JSON object")
    spec = body.get("spec") or {}
    out = {"kind": rtype.kind, "apiVersion": "authorization.k8s.io/v1", "metadata": {"creationTimestamp": None}, "spec": spec}
    if rtype.kind == "SelfSubjectAccessReview":
        # validation.ValidateSelfSubjectAccessReviewSpec
        if spec.get("resourceAttributes") is not None and spec.get("nonResourceAttributes") is not None:
            raise _invalid(rtype.kind, "spec.nonResourceAttributes", "cannot be specified in combination with resourceAttributes")
        if spec.get("resourceAttributes") is None and spec.get("nonResourceAttributes") is None:
            raise _invalid(rtype.kind, "spec.resourceAttributes", "exactly one of nonResourceAttributes or resourceAttributes must be specified")
        out["status"] = {"allowed": True, "reason": ADMIN_REASON}
    else:
        out["status"] = {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                         "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": False}
    return out
