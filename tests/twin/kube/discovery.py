"""Discovery documents (/version, /api, /apis, /api/v1, /apis/<group>/<version>).

Only the legacy (non-aggregated) formats are served: clients that ask for aggregated
discovery (`as=APIGroupDiscoveryList`) also accept application/json and fall back to it.
"""

# OpenShift 4.16 ships Kubernetes 1.29
VERSION = {
    "major": "1",
    "minor": "29",
    "gitVersion": "v1.29.6+aba1e8d",
    "gitCommit": "aba1e8d4b9f6d1f1e7a4b8f1c3f2e6d2a5b8c9d0",
    "gitTreeState": "clean",
    "buildDate": "2024-06-25T12:00:00Z",
    "goVersion": "go1.21.11 (Red Hat 1.21.11-1.el9_4) X:strictfipsruntime",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def api_versions(server_address):
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group(name, versions):
    entries = [{"groupVersion": "%s/%s" % (name, v), "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": dict(entries[0])}


def api_group_list(registry):
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group(name, versions) for name, versions in registry.groups().items()],
    }


def api_group(registry, name):
    versions = registry.groups().get(name)
    if not versions:
        return None
    return dict(_group(name, versions), kind="APIGroup", apiVersion="v1")


def _resource_entry(rtype):
    entry = {
        "name": rtype.plural,
        "singularName": rtype.singular,
        "namespaced": rtype.namespaced,
        "kind": rtype.kind,
        "verbs": list(rtype.verbs),
    }
    if rtype.short_names:
        entry["shortNames"] = list(rtype.short_names)
    if rtype.categories:
        entry["categories"] = list(rtype.categories)
    return entry


def api_resource_list(registry, group, version):
    types = sorted(registry.in_group_version(group, version), key=lambda t: t.plural)
    if not types:
        return None
    resources = []
    for rtype in types:
        resources.append(_resource_entry(rtype))
        for sub, verbs in sorted(rtype.subresources().items()):
            resources.append({"name": "%s/%s" % (rtype.plural, sub), "singularName": "", "namespaced": rtype.namespaced,
                              "kind": rtype.kind, "verbs": list(verbs)})
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": "%s/%s" % (group, version) if group else version,
        "resources": resources,
    }
