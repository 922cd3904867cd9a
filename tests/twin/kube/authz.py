"""Authentication by bearer token and the RBAC authorizer; SelfSubjectAccessReview and SelfSubjectRulesReview.

The twin's own token is the cluster's admin (`system:admin` in `system:masters`): every request is allowed, as the
apiserver's privileged-group authorizer does, and its reviews keep answering as before. Tokens minted through
`POST /_twin/tokens` are other users or ServiceAccounts: their requests are authorized by the RBAC rules of the
Roles/ClusterRoles/RoleBindings/ClusterRoleBindings in the store, following kubernetes/kubernetes
plugin/pkg/auth/authorizer/rbac/rbac.go (RuleAllows), pkg/apis/rbac/v1/evaluation_helpers.go (VerbMatches,
APIGroupMatches, ResourceMatches, ResourceNameMatches, NonResourceURLMatches) and pkg/registry/rbac/validation/rule.go
(VisitRulesFor, appliesTo, the binding describers), plus the bootstrap discovery roles bound to system:authenticated
(plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go), which the twin holds in code rather than in the store.
A denial is answered 403 as k8s.io/apiserver endpoints/handlers/responsewriters/errors.go Forbidden words it.
"""

import hmac
import secrets
import threading
from urllib.parse import unquote

from .errors import ApiError, bad_request

REVIEWS = ("selfsubjectaccessreviews.authorization.k8s.io", "selfsubjectrulesreviews.authorization.k8s.io")
ADMIN_REASON = 'RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to Group "system:masters"'
RBAC_GROUP = "rbac.authorization.k8s.io"
AUTHENTICATED = "system:authenticated"
# bootstrappolicy: system:discovery, system:basic-user and system:public-info-viewer, bound to system:authenticated
BOOTSTRAP_ROLES = {
    "system:discovery": [{"verbs": ["get"], "nonResourceURLs": [
        "/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"]}],
    "system:basic-user": [{"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
                           "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]},
                          {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]}],
    "system:public-info-viewer": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"]}],
}


class Identity:
    """user.Info: a name and groups (system:authenticated added, as the authenticators' group adder does)."""

    def __init__(self, name, groups=(), admin=False):
        self.name = name
        self.groups = list(groups) + ([AUTHENTICATED] if AUTHENTICATED not in groups else [])
        self.admin = admin

    @classmethod
    def service_account(cls, namespace, name):
        return cls("system:serviceaccount:%s:%s" % (namespace, name), ["system:serviceaccounts", "system:serviceaccounts:" + namespace])


ADMIN = Identity("system:admin", ["system:masters"], admin=True)


class Tokens:
    """Bearer token -> Identity: the admin token given at start-up, and the tokens tests mint."""

    def __init__(self, admin_token):
        self.admin_token = admin_token
        self._lock = threading.Lock()
        self._tokens = {}

    def mint(self, identity):
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._tokens[token] = identity
        return token

    def identity(self, header):
        scheme, _space, token = (header or "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return None
        if hmac.compare_digest(token.encode(), self.admin_token.encode()):
            return ADMIN
        with self._lock:
            return self._tokens.get(token)


class Attributes:
    """authorizer.Attributes of one request (or of a SelfSubjectAccessReview's spec)."""

    def __init__(self, verb, resource_request=True, **info):
        self.verb = verb
        self.resource_request = resource_request
        self.group = info.get("group") or ""
        self.version = info.get("version") or ""
        self.resource = info.get("resource") or ""
        self.subresource = info.get("subresource") or ""
        self.name = info.get("name") or ""
        self.namespace = info.get("namespace") or ""
        self.path = info.get("path") or ""

    @classmethod
    def of_target(cls, target, method, query):
        if target.discovery or target.rtype is None:
            return cls(method.lower(), resource_request=False, path=target.path)
        name = target.name
        if not name and target.verb in ("list", "watch"):
            # RequestInfoFactory: a list/watch with fieldSelector metadata.name=<x> is authorized as naming <x>
            name = _exact_name((query.get("fieldSelector") or [""])[-1])
        return cls(target.verb, group=target.group, version=target.version, resource=target.rtype.plural,
                   subresource=target.subresource, name=name, namespace=target.namespace)


def _exact_name(selector):
    for term in selector.split(","):
        key, sep, value = term.partition("==") if "==" in term else term.partition("=")
        if sep and key.strip() == "metadata.name" and not key.strip().endswith("!"):
            return value.strip()
    return ""


# --- evaluation_helpers.go -------------------------------------------------------------------------------------------

def _verb_matches(rule, verb):
    return any(v in ("*", verb) for v in rule.get("verbs") or [])


def _group_matches(rule, group):
    return any(g in ("*", group) for g in rule.get("apiGroups") or [])


def _resource_matches(rule, combined, subresource):
    for resource in rule.get("resources") or []:
        if resource in ("*", combined):
            return True
        if subresource and resource == "*/" + subresource:
            return True
    return False


def _name_matches(rule, name):
    names = rule.get("resourceNames") or []
    return not names or name in names


def _url_matches(rule, path):
    for url in rule.get("nonResourceURLs") or []:
        if url in ("*", path) or url.endswith("*") and path.startswith(url.rstrip("*")):
            return True
    return False


def rule_allows(attrs, rule):
    """rbac.go RuleAllows."""
    if attrs.resource_request:
        combined = attrs.resource + ("/" + attrs.subresource if attrs.subresource else "")
        return _verb_matches(rule, attrs.verb) and _group_matches(rule, attrs.group) and \
            _resource_matches(rule, combined, attrs.subresource) and _name_matches(rule, attrs.name)
    return _verb_matches(rule, attrs.verb) and _url_matches(rule, attrs.path)


# --- rule.go ---------------------------------------------------------------------------------------------------------

def _applies(identity, subject, namespace):
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return identity.name == name
    if kind == "Group":
        return name in identity.groups
    if kind == "ServiceAccount":
        sa_namespace = subject.get("namespace") or namespace
        return bool(sa_namespace) and identity.name == "system:serviceaccount:%s:%s" % (sa_namespace, name)
    return False


def _describe_subject(subject, binding_namespace):
    if subject.get("kind") == "ServiceAccount":
        return '%s "%s/%s"' % (subject["kind"], subject.get("name"), subject.get("namespace") or binding_namespace)
    return '%s "%s"' % (subject.get("kind"), subject.get("name"))


def _role_rules(store, role_ref, namespace):
    """GetRoleReferenceRules: (rules, error text); the lister's NotFound names the singular resource."""
    kind, name = role_ref.get("kind"), role_ref.get("name")
    if kind == "ClusterRole":
        if name in BOOTSTRAP_ROLES:
            return BOOTSTRAP_ROLES[name], None
        role = store.get("clusterroles." + RBAC_GROUP, name)
    elif kind == "Role":
        role = store.get("roles." + RBAC_GROUP, name, namespace)
    else:
        return [], 'unsupported role reference kind: "%s"' % kind
    if role is None:
        return [], '%s.%s "%s" not found' % ((kind or "").lower(), RBAC_GROUP, name)
    return role.get("rules") or [], None


def _bootstrap_bindings():
    return [{"metadata": {"name": name}, "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name},
             "subjects": [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": AUTHENTICATED}]} for name in BOOTSTRAP_ROLES]


def visit_rules(store, identity, namespace):
    """VisitRulesFor: (source description, rule, error) for every rule bound to the identity in the namespace."""
    bindings = [("ClusterRoleBinding", b, "") for b in _bootstrap_bindings() + store.list("clusterrolebindings." + RBAC_GROUP)]
    if namespace:
        bindings += [("RoleBinding", b, namespace) for b in store.list("rolebindings." + RBAC_GROUP, namespace)]
    for kind, binding, binding_ns in bindings:
        subject = next((s for s in binding.get("subjects") or [] if _applies(identity, s, binding_ns)), None)
        if subject is None:
            continue
        rules, error = _role_rules(store, binding.get("roleRef") or {}, binding_ns)
        if error:
            yield None, None, error
            continue
        name = binding["metadata"]["name"] + ("/" + binding_ns if binding_ns else "")
        source = '%s "%s" of %s "%s" to %s' % (kind, name, binding["roleRef"].get("kind"), binding["roleRef"].get("name"),
                                               _describe_subject(subject, binding_ns))
        for rule in rules:
            yield source, rule, None


def authorize(store, identity, attrs):
    """(allowed, reason) as the RBAC authorizer answers; the admin is allowed everything."""
    if identity.admin:
        return True, ""
    errors = []
    for source, rule, error in visit_rules(store, identity, attrs.namespace):
        if rule is not None and rule_allows(attrs, rule):
            return True, "RBAC: allowed by " + source
        if error:
            errors.append(error)
    if not errors:
        return False, ""
    return False, "RBAC: " + (errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")


def forbidden(identity, attrs, reason=""):
    """responsewriters.Forbidden: 403 with the message and details the real apiserver sends."""
    if not attrs.resource_request:
        message = 'User "%s" cannot %s path "%s"' % (identity.name, attrs.verb, attrs.path)
    else:
        resource = attrs.resource + ("/" + attrs.subresource if attrs.subresource else "")
        scope = 'in the namespace "%s"' % attrs.namespace if attrs.namespace else "at the cluster scope"
        message = 'User "%s" cannot %s resource "%s" in API group "%s" %s' % (identity.name, attrs.verb, resource, attrs.group, scope)
    if reason:
        message += ": " + reason
    if not attrs.resource_request:
        return ApiError(403, "Forbidden", "forbidden: " + message, {})
    qualified = attrs.resource + ("." + attrs.group if attrs.group else "")
    details = {"kind": attrs.resource}
    if attrs.group:
        details["group"] = attrs.group
    if attrs.name:
        details["name"] = attrs.name
        return ApiError(403, "Forbidden", '%s "%s" is forbidden: %s' % (qualified, attrs.name, message), details)
    return ApiError(403, "Forbidden", "%s is forbidden: %s" % (qualified, message), details)


def check(store, identity, target, method, query):
    """Raise the 403 of a request the identity may not make."""
    attrs = Attributes.of_target(target, method, query)
    allowed, reason = authorize(store, identity, attrs)
    if not allowed:
        raise forbidden(identity, attrs, reason)


def check_path(store, identity, method, path):
    """Raise the 403 of a non-resource path (/metrics) the identity may not read, before its 404."""
    attrs = Attributes(method.lower(), resource_request=False, path=path)
    allowed, reason = authorize(store, identity, attrs)
    if not allowed:
        raise forbidden(identity, attrs, reason)


# --- impersonation.go (k8s.io/apiserver/pkg/endpoints/filters WithImpersonation) ---------------------------------

IMPERSONATE_USER, IMPERSONATE_GROUP, IMPERSONATE_UID = "Impersonate-User", "Impersonate-Group", "Impersonate-Uid"
IMPERSONATE_EXTRA = "Impersonate-Extra-"
SA_PREFIX = "system:serviceaccount:"


def _impersonation_requests(headers):
    """buildImpersonationRequests: what the headers ask for, as authorizer attributes, and the user they make."""
    user = headers.get(IMPERSONATE_USER) or ""
    groups = headers.get_all(IMPERSONATE_GROUP) or []
    uid = headers.get(IMPERSONATE_UID) or ""
    extra = {}
    for key in headers.keys():
        if key.lower().startswith(IMPERSONATE_EXTRA.lower()):
            extra.setdefault(unquote(key[len(IMPERSONATE_EXTRA):]).lower(), []).extend(headers.get_all(key))
    if not (user or groups or uid or extra):
        return None, None
    if not user:
        # the real filter answers 500 (responsewriters.InternalError)
        raise ApiError(500, "InternalError", "Internal error occurred: requested %s without impersonating a user"
                       % ", ".join(name for name, asked in (("groups", groups), ("uid", uid), ("extra", extra)) if asked))
    if user.startswith(SA_PREFIX) and user.count(":") == 3:
        namespace, name = user[len(SA_PREFIX):].split(":")
        asked = [Attributes("impersonate", resource="serviceaccounts", name=name, namespace=namespace)]
    else:
        asked = [Attributes("impersonate", resource="users", name=user)]
    asked += [Attributes("impersonate", resource="groups", name=group) for group in groups]
    if uid:
        asked.append(Attributes("impersonate", group="authentication.k8s.io", resource="uids", name=uid))
    for key, values in sorted(extra.items()):
        asked += [Attributes("impersonate", group="authentication.k8s.io", resource="userextras", subresource=key, name=value)
                  for value in values]
    if groups:
        made = Identity(user, groups)
    elif user.startswith(SA_PREFIX) and user.count(":") == 3:
        made = Identity.service_account(*user[len(SA_PREFIX):].split(":"))
    else:
        made = Identity(user)
    return asked, made


def impersonate(store, identity, headers):
    """The identity a request acts as: the authenticated one, or the one its Impersonate-* headers ask for when the
    authenticated identity may `impersonate` each part (else 403 naming the first part refused)."""
    asked, made = _impersonation_requests(headers)
    if asked is None:
        return identity
    for attrs in asked:
        allowed, reason = authorize(store, identity, attrs)
        if not allowed:
            raise forbidden(identity, attrs, reason)
    made.impersonated_by = identity.name
    return made


# --- reviews ---------------------------------------------------------------------------------------------------------

def _invalid(kind, field, detail):
    message = '%s.authorization.k8s.io "" is invalid: %s: Invalid value: "null": %s' % (kind, field, detail)
    return ApiError(422, "Invalid", message, {"group": "authorization.k8s.io", "kind": kind, "causes": [
        {"reason": "FieldValueInvalid", "message": 'Invalid value: "null": ' + detail, "field": field}]})


def _review_attributes(spec):
    resource = spec.get("resourceAttributes")
    if resource is not None:
        return Attributes(resource.get("verb") or "", group=resource.get("group"), version=resource.get("version"),
                          resource=resource.get("resource"), subresource=resource.get("subresource"),
                          name=resource.get("name"), namespace=resource.get("namespace"))
    other = spec.get("nonResourceAttributes") or {}
    return Attributes(other.get("verb") or "", resource_request=False, path=other.get("path"))


def _access_status(store, identity, spec):
    if identity.admin:
        return {"allowed": True, "reason": ADMIN_REASON}
    allowed, reason = authorize(store, identity, _review_attributes(spec))
    status = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return status


def _rules_status(store, identity, namespace):
    """RBACAuthorizer.RulesFor: every bound rule, split into resource and non-resource rules."""
    if identity.admin:
        return {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": False}
    resource_rules, non_resource_rules, errors = [], [], []
    for _source, rule, error in visit_rules(store, identity, namespace):
        if error:
            errors.append(error)
            continue
        if rule.get("resources"):
            resource_rules.append(dict((key, list(rule[key])) for key in ("verbs", "apiGroups", "resources", "resourceNames") if rule.get(key)))
        if rule.get("nonResourceURLs"):
            non_resource_rules.append({"verbs": list(rule.get("verbs") or []), "nonResourceURLs": list(rule["nonResourceURLs"])})
    status = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": False}
    if errors:
        status["evaluationError"] = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    return status


def review(rtype, body, store=None, identity=ADMIN):
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
        out["status"] = _access_status(store, identity, spec)
    else:
        # selfsubjectrulesreview/rest.go Create
        if not spec.get("namespace"):
            raise bad_request("no namespace on request")
        out["status"] = _rules_status(store, identity, spec["namespace"])
    return out
