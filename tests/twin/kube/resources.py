"""The resource types the emulator serves: built-in kinds and the CRDs in tests/twin/crds.

A resource is addressed in the store by its plural for the core group (`nodes`) and by
`plural.group` otherwise (`egressips.k8s.ovn.org`), as `kubectl` names them.
"""

import os
import re

import yaml

from .errors import ApiError

CRD_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "crds")
ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
READ_VERBS = ["get", "list", "watch"]
CRD_RESOURCE = "customresourcedefinitions.apiextensions.k8s.io"


class ResourceType:
    """What the apiserver knows about one resource (discovery, scope, subresources, schema)."""

    def __init__(self, plural, kind, group="", versions=("v1",), namespaced=True, **opts):
        self.plural = plural
        self.kind = kind
        self.group = group
        self.versions = list(versions)
        self.storage_version = opts.get("storage_version") or self.versions[0]
        self.namespaced = namespaced
        self.singular = opts.get("singular") or kind.lower()
        self.list_kind = opts.get("list_kind") or kind + "List"
        self.short_names = list(opts.get("short_names") or [])
        self.categories = list(opts.get("categories") or [])
        self.verbs = list(opts.get("verbs") or ALL_VERBS)
        self.status_subresource = bool(opts.get("status_subresource"))
        self.scale_subresource = bool(opts.get("scale_subresource"))
        # read-only subresources (pods/log): name -> verbs
        self.extra_subresources = dict(opts.get("extra_subresources") or {})
        self.schemas = dict(opts.get("schemas") or {})
        self.builtin = opts.get("builtin", False)
        # field label conversion: cluster-scoped kinds with their own func (nodes, namespaces) and cluster-scoped CRs
        # know metadata.name only; the default conversion (ConfigMap, CRD objects) and namespaced kinds add metadata.namespace
        meta = opts.get("meta_field_selectors") or (("metadata.name", "metadata.namespace") if namespaced else ("metadata.name",))
        self.field_selectors = set(meta) | set(opts.get("field_selectors") or ())
        # whether DELETE answers the deleted object (registry ReturnDeletedObject) or a Status
        self.returns_deleted_object = opts.get("returns_deleted_object", False)
        self.allow_create_on_update = opts.get("allow_create_on_update", False)
        # registry strategy AllowUnconditionalUpdate: false means a PUT must carry metadata.resourceVersion
        self.allow_unconditional_update = opts.get("allow_unconditional_update", True)

    @property
    def key(self):
        return self.plural + ("." + self.group if self.group else "")

    @property
    def is_custom(self):
        return not self.builtin

    def api_version(self, version=None):
        version = version or self.storage_version
        return version if not self.group else "%s/%s" % (self.group, version)

    def subresources(self):
        """Subresource name -> verbs, as discovery lists them."""
        subs = {}
        if self.status_subresource:
            subs["status"] = ["get", "patch", "update"]
        # the scale subresource (MachineSet) is not served, so discovery does not list it
        subs.update(self.extra_subresources)
        return subs

    def schema(self, version=None):
        return self.schemas.get(version or self.storage_version)


def _builtin_types():
    return [
        ResourceType("namespaces", "Namespace", namespaced=False, short_names=["ns"], builtin=True,
                     status_subresource=True, field_selectors=["status.phase"], returns_deleted_object=True),
        ResourceType("nodes", "Node", namespaced=False, short_names=["no"], builtin=True, status_subresource=True,
                     field_selectors=["spec.unschedulable"]),
        ResourceType("pods", "Pod", short_names=["po"], categories=["all"], builtin=True, status_subresource=True,
                     extra_subresources={"log": ["get"]}, returns_deleted_object=True,
                     field_selectors=["spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork",
                                      "status.phase", "status.podIP", "status.nominatedNodeName"]),
        ResourceType("events", "Event", short_names=["ev"], builtin=True, allow_create_on_update=True,
                     field_selectors=["involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                                      "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                                      "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"]),
        ResourceType("configmaps", "ConfigMap", short_names=["cm"], builtin=True),
        # create-only reviews, answered by authz.py and never stored
        ResourceType("selfsubjectaccessreviews", "SelfSubjectAccessReview", group="authorization.k8s.io", namespaced=False,
                     builtin=True, verbs=["create"]),
        ResourceType("selfsubjectrulesreviews", "SelfSubjectRulesReview", group="authorization.k8s.io", namespaced=False,
                     builtin=True, verbs=["create"]),
        ResourceType("serviceaccounts", "ServiceAccount", short_names=["sa"], builtin=True),
        # rbac.authorization.k8s.io/v1, read by the authorizer (authz.py); escalation checks on writes are not modelled
        ResourceType("roles", "Role", group="rbac.authorization.k8s.io", builtin=True),
        ResourceType("rolebindings", "RoleBinding", group="rbac.authorization.k8s.io", builtin=True),
        ResourceType("clusterroles", "ClusterRole", group="rbac.authorization.k8s.io", namespaced=False, builtin=True),
        ResourceType("clusterrolebindings", "ClusterRoleBinding", group="rbac.authorization.k8s.io", namespaced=False, builtin=True),
        # batch/v1 (pkg/registry/batch/cronjob): defaults and validation in batch.py; no controller makes Jobs
        ResourceType("cronjobs", "CronJob", group="batch", short_names=["cj"], categories=["all"], builtin=True,
                     status_subresource=True),
        # pkg/registry/coordination/lease/strategy.go: AllowCreateOnUpdate true, AllowUnconditionalUpdate false
        ResourceType("leases", "Lease", group="coordination.k8s.io", builtin=True, allow_create_on_update=True,
                     allow_unconditional_update=False),
    ]


_VERSION_RE = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version):
    """Sort key of the kube-aware version order (v1 > v1beta2 > v1beta1 > v1alpha1 > others)."""
    match = _VERSION_RE.match(version)
    if not match:
        return (0, 0, 0, version)
    stability = {"alpha": 1, "beta": 2, None: 3}[match.group(2)]
    return (stability, int(match.group(1)), int(match.group(3) or 0), "")


def resource_type_from_crd(crd):
    """Build a ResourceType from an apiextensions.k8s.io/v1 CustomResourceDefinition dict."""
    spec = crd["spec"]
    names = spec["names"]
    served = [v for v in spec["versions"] if v.get("served", True)]
    served.sort(key=lambda v: version_priority(v["name"]), reverse=True)
    storage = next((v["name"] for v in spec["versions"] if v.get("storage")), served[0]["name"])
    status = any("status" in (v.get("subresources") or {}) for v in served)
    scale = any("scale" in (v.get("subresources") or {}) for v in served)
    schemas = {v["name"]: (v.get("schema") or {}).get("openAPIV3Schema") for v in served}
    return ResourceType(
        names["plural"], names["kind"], group=spec["group"], versions=[v["name"] for v in served],
        namespaced=spec["scope"] == "Namespaced", storage_version=storage, singular=names.get("singular"),
        list_kind=names.get("listKind"), short_names=names.get("shortNames"), categories=names.get("categories"),
        status_subresource=status, scale_subresource=scale, schemas=schemas, builtin=False,
        returns_deleted_object=False)


def load_crd_files(directory=CRD_DIR):
    """Every CustomResourceDefinition document in the *.yaml files of `directory`."""
    crds = []
    for filename in sorted(os.listdir(directory)):
        if not filename.endswith((".yaml", ".yml")):
            continue
        with open(os.path.join(directory, filename)) as handle:
            # the C loader: the CRDs are ~400 KB of YAML and start-up must stay well under a second
            for doc in yaml.load_all(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
                if doc and doc.get("kind") == "CustomResourceDefinition":
                    crds.append(doc)
    return crds


class Registry:
    """Resource types by store key, and lookups by (group, version, plural) for the HTTP layer."""

    def __init__(self, types=()):
        self._types = {}
        self.crds = []
        for rtype in types:
            self.add(rtype)

    @classmethod
    def default(cls, crd_dir=CRD_DIR):
        registry = cls(_builtin_types())
        registry.add(ResourceType(
            "customresourcedefinitions", "CustomResourceDefinition", group="apiextensions.k8s.io",
            namespaced=False, short_names=["crd", "crds"], verbs=READ_VERBS, builtin=True,
            meta_field_selectors=("metadata.name", "metadata.namespace")))
        if crd_dir:
            for crd in load_crd_files(crd_dir):
                registry.add_crd(crd)
        return registry

    def add(self, rtype):
        self._types[rtype.key] = rtype

    def add_crd(self, crd):
        self.crds.append(crd)
        self.add(resource_type_from_crd(crd))

    def get(self, key):
        rtype = self._types.get(key)
        if rtype is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource (resource %s)" % key)
        return rtype

    def find(self, group, version, plural):
        rtype = self._types.get(plural + ("." + group if group else ""))
        if rtype is None or version not in rtype.versions:
            return None
        return rtype

    def types(self):
        return list(self._types.values())

    def groups(self):
        """Group name -> served versions, most preferred first (core group excluded)."""
        groups = {}
        for rtype in self._types.values():
            if rtype.group:
                versions = groups.setdefault(rtype.group, set())
                versions.update(rtype.versions)
        return {g: sorted(v, key=version_priority, reverse=True) for g, v in sorted(groups.items())}

    def in_group_version(self, group, version):
        return [t for t in self._types.values() if t.group == group and version in t.versions]
