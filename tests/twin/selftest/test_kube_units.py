"""In-process tests of twin.kube's building blocks: store semantics, patches, selectors, schema."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from twin.kube import schema  # noqa: E402
from twin.kube.errors import ApiError  # noqa: E402
from twin.kube.patch import json_patch, merge_patch, strategic_merge_patch  # noqa: E402
from twin.kube.selectors import labels_match, parse_label_selector, selector_matches  # noqa: E402
from twin.kube.store import Store  # noqa: E402


@pytest.fixture(scope="module")
def registry():
    return Store().registry


@pytest.fixture()
def store(registry):
    fresh = Store(registry)
    fresh.create("namespaces", {"metadata": {"name": "default"}})
    return fresh


def eip(name, **spec):
    body = {"egressIPs": ["10.20.0.200"], "namespaceSelector": {}}
    body.update(spec)
    return {"apiVersion": "k8s.ovn.org/v1", "kind": "EgressIP", "metadata": {"name": name}, "spec": body}


# ---------------------------------------------------------------- store

def test_store_resource_versions_are_global_and_monotonic(store):
    first = store.create("egressips.k8s.ovn.org", eip("a"))
    second = store.create("nodes", {"metadata": {"name": "n1"}})
    third = store.patch("egressips.k8s.ovn.org", "a", {"metadata": {"labels": {"x": "y"}}})
    versions = [int(o["metadata"]["resourceVersion"]) for o in (first, second, third)]
    assert versions == sorted(versions) and len(set(versions)) == 3
    assert first["metadata"]["uid"] and first["metadata"]["creationTimestamp"].endswith("Z")


def test_store_returns_copies(store):
    created = store.create("nodes", {"metadata": {"name": "n1", "labels": {"a": "b"}}})
    created["metadata"]["labels"]["a"] = "changed"
    store.get("nodes", "n1")["metadata"]["labels"]["a"] = "changed"
    assert store.get("nodes", "n1")["metadata"]["labels"] == {"a": "b"}


def test_noop_writes_neither_bump_nor_notify(store):
    events = []
    store.subscribe(lambda *event: events.append(event))
    created = store.create("nodes", {"metadata": {"name": "n1", "labels": {"a": "b"}}})
    again = store.patch("nodes", "n1", {"metadata": {"labels": {"a": "b"}}})
    same = store.update("nodes", created)
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"] == same["metadata"]["resourceVersion"]
    assert [(t, r, o["metadata"]["name"]) for t, r, o in events] == [("ADDED", "nodes", "n1")]
    store.delete("nodes", "n1")
    assert [e[0] for e in events] == ["ADDED", "DELETED"]


def test_subscribers_may_write_and_failures_do_not_break_writes(store):
    def labeller(event_type, resource, obj):
        if resource == "nodes" and event_type == "ADDED":
            store.patch("nodes", obj["metadata"]["name"], {"metadata": {"labels": {"seen": "yes"}}})

    def broken(*event):
        raise RuntimeError("subscriber bug")
    store.subscribe(broken)
    store.subscribe(labeller)
    store.create("nodes", {"metadata": {"name": "n1"}})
    assert store.get("nodes", "n1")["metadata"]["labels"] == {"seen": "yes"}


def test_generation_follows_the_customresource_strategy(store):
    created = store.create("egressips.k8s.ovn.org", eip("a"))
    assert created["metadata"]["generation"] == 1
    labelled = store.patch("egressips.k8s.ovn.org", "a", {"metadata": {"labels": {"x": "y"}}})
    assert labelled["metadata"]["generation"] == 1
    status = store.patch("egressips.k8s.ovn.org", "a", {"status": {"items": [{"node": "n", "egressIP": "10.20.0.200"}]}})
    assert status["metadata"]["generation"] == 2, "no status subresource: a status change is a change like any other"
    nncp = {"metadata": {"name": "p"}, "spec": {"desiredState": {}}}
    store.create("nodenetworkconfigurationpolicies.nmstate.io", nncp)
    after = store.patch("nodenetworkconfigurationpolicies.nmstate.io", "p", {"status": {"conditions": []}}, subresource="status")
    assert after["metadata"]["generation"] == 1


def test_stale_update_conflicts_and_unconditional_update_wins(store):
    created = store.create("egressips.k8s.ovn.org", eip("a"))
    store.patch("egressips.k8s.ovn.org", "a", {"spec": {"egressIPs": ["10.20.0.201"]}})
    with pytest.raises(ApiError) as info:
        store.update("egressips.k8s.ovn.org", created)
    assert (info.value.code, info.value.reason) == (409, "Conflict")
    del created["metadata"]["resourceVersion"]
    assert store.update("egressips.k8s.ovn.org", created)["spec"]["egressIPs"] == ["10.20.0.200"]


def test_list_with_selectors(store):
    for name, labels in (("a", {"role": "worker"}), ("b", {"role": "master"}), ("c", {})):
        store.create("nodes", {"metadata": {"name": name, "labels": labels}})
    assert [n["metadata"]["name"] for n in store.list("nodes", label_selector="role")] == ["a", "b"]
    assert [n["metadata"]["name"] for n in store.list("nodes", label_selector="role notin (master)")] == ["a", "c"]
    assert [n["metadata"]["name"] for n in store.list("nodes", field_selector="metadata.name=b")] == ["b"]
    assert [n["metadata"]["name"] for n in store.list("nodes", label_selector=parse_label_selector("!role"))] == ["c"]


def test_namespace_deletion_removes_its_content(store):
    store.create("namespaces", {"metadata": {"name": "app"}})
    store.create("configmaps", {"metadata": {"name": "c", "namespace": "app"}})
    store.create("pods", {"metadata": {"name": "p", "namespace": "app"}, "spec": {"containers": [{"name": "c", "image": "i"}]}})
    store.set_log("app", "p", "hello")
    store.delete("namespaces", "app")
    assert store.list("configmaps", namespace="app") == [] and store.get_log("app", "p") is None


def test_watch_replays_from_a_resource_version(store):
    created = store.create("nodes", {"metadata": {"name": "n1"}})
    store.patch("nodes", "n1", {"metadata": {"labels": {"a": "b"}}})
    watch = store.watch("nodes", resource_version=created["metadata"]["resourceVersion"])
    try:
        assert [(t, o["metadata"]["labels"]) for t, o, _old in watch.initial] == [("MODIFIED", {"a": "b"})]
        store.delete("nodes", "n1")
        assert watch.queue.get(timeout=1)[0] == "DELETED"
    finally:
        watch.close()


# ---------------------------------------------------------------- patches

def test_merge_patch_rfc7386():
    target = {"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]}
    assert merge_patch(target, {"a": "z", "c": {"f": None}, "l": [3]}) == {"a": "z", "c": {"d": "e"}, "l": [3]}


def test_json_patch_rfc6902():
    doc = {"foo": ["bar", "baz"], "a/b": 1}
    assert json_patch(doc, [{"op": "add", "path": "/foo/1", "value": "qux"}])["foo"] == ["bar", "qux", "baz"]
    assert json_patch(doc, [{"op": "remove", "path": "/a~1b"}]) == {"foo": ["bar", "baz"]}
    assert json_patch(doc, [{"op": "move", "from": "/foo/0", "path": "/x"}]) == {"foo": ["baz"], "a/b": 1, "x": "bar"}
    # json-patch v4, as the apiserver uses it: replace of a missing object member sets it (OVN-K's `replace /status`)
    assert json_patch(doc, [{"op": "replace", "path": "/missing", "value": 1}])["missing"] == 1
    for bad in ([{"op": "test", "path": "/foo/0", "value": "nope"}], [{"op": "remove", "path": "/missing"}],
                [{"op": "replace", "path": "/foo/5", "value": 1}], [{"op": "replace", "path": "/no/such", "value": 1}]):
        with pytest.raises(ApiError) as info:
            json_patch(doc, bad)
        assert info.value.code == 422
    assert doc == {"foo": ["bar", "baz"], "a/b": 1}


def test_strategic_merge_patch_merge_keys_and_directives():
    node = {"metadata": {"labels": {"a": "1"}, "finalizers": ["x"]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "DiskPressure", "status": "False"}],
                       "addresses": [{"type": "InternalIP", "address": "192.168.10.11"}]}}
    patched = strategic_merge_patch("nodes", node, {
        "metadata": {"labels": {"a": None, "b": "2"}, "finalizers": ["y"]},
        "status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "DiskPressure", "$patch": "delete"}],
                   "addresses": [{"type": "ExternalIP", "address": "10.0.0.1"}]}})
    assert patched["metadata"] == {"labels": {"b": "2"}, "finalizers": ["x", "y"]}
    assert patched["status"]["conditions"] == [{"type": "Ready", "status": "False"}]
    assert [a["type"] for a in patched["status"]["addresses"]] == ["InternalIP", "ExternalIP"]
    replaced = strategic_merge_patch("nodes", node, {"metadata": {"labels": {"$patch": "replace", "c": "3"}}})
    assert replaced["metadata"]["labels"] == {"c": "3"}
    pod = {"spec": {"containers": [{"name": "a", "image": "x", "env": [{"name": "A", "value": "1"}]}]}}
    patched = strategic_merge_patch("pods", pod, {"spec": {"containers": [{"name": "a", "env": [{"name": "B", "value": "2"}]}]}})
    assert patched["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    assert patched["spec"]["containers"][0]["image"] == "x"


# ---------------------------------------------------------------- selectors

@pytest.mark.parametrize("text, labels, expected", [
    ("a=1", {"a": "1"}, True), ("a==1", {"a": "2"}, False), ("a!=1", {}, True), ("a in (1, 2)", {"a": "2"}, True),
    ("a notin (1,2)", {"a": "3"}, True), ("a", {"a": ""}, True), ("!a", {"a": ""}, False), ("a>5", {"a": "7"}, True),
    ("a=1,b", {"a": "1"}, False), ("", {}, True),
])
def test_label_selector_parsing(text, labels, expected):
    assert labels_match(parse_label_selector(text), labels) is expected


def test_label_selector_objects():
    selector = {"matchLabels": {"env": "prod"}, "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]}
    assert selector_matches(selector, {"env": "prod", "tier": "web"})
    assert not selector_matches(selector, {"env": "prod", "tier": "db"})
    assert selector_matches({}, {"anything": "x"}) and not selector_matches(None, {})


def test_malformed_label_selector_is_a_bad_request():
    with pytest.raises(ApiError) as info:
        parse_label_selector("a in b")
    assert info.value.code == 400


# ---------------------------------------------------------------- schema

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "port": {"x-kubernetes-int-or-string": True},
                "name": {"type": "string", "maxLength": 5, "pattern": "^[a-z]+$"},
                "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
                "count": {"type": "integer", "minimum": 1, "maximum": 3},
                "items": {"type": "array", "maxItems": 2, "items": {"type": "string", "format": "ipv4"},
                          "x-kubernetes-list-type": "set"},
                "opt": {"type": "string", "nullable": True},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "strict": {"type": "string"},
            },
            "required": ["name"],
        },
    },
}


def errors_of(spec):
    obj = {"metadata": {"name": "x"}, "spec": spec}
    pruned = schema.prepare(SCHEMA, obj)
    return obj, pruned, {e.path: e for e in schema.validate(SCHEMA, obj)}


def test_schema_accepts_and_defaults():
    obj, pruned, errors = errors_of({"name": "ok", "port": "http", "opt": None, "free": {"x": {"y": 1}},
                                     "labels": {"k": "v"}, "strict": None, "junk": 1})
    assert errors == {} and pruned == ["spec.junk"]
    assert obj["spec"]["mode"] == "a" and obj["spec"]["opt"] is None and "strict" not in obj["spec"]
    assert obj["spec"]["free"] == {"x": {"y": 1}}
    assert errors_of({"name": "ok", "port": 8080})[2] == {}


def test_schema_reports_each_violation():
    errors = errors_of({"name": "TOOLONG", "port": 1.5, "mode": "c", "count": 9,
                        "items": ["1.2.3.4", "1.2.3.4", "x"], "labels": {"k": 1}})[2]
    assert errors["spec.name"].etype in ("too_long", "invalid")
    assert errors["spec.port"].etype == "type"
    assert str(errors["spec.mode"]) == 'spec.mode: Unsupported value: "c": supported values: "a", "b"'
    assert str(errors["spec.count"]) == "spec.count: Invalid value: 9: spec.count in body should be less than or equal to 3"
    assert str(errors["spec.items"]) == "spec.items: Too many: 3: must have at most 2 items"
    assert errors["spec.items[1]"].etype == "duplicate"
    assert errors["spec.items[2]"].detail == 'spec.items[2] in body must be of type ipv4: "x"'
    assert errors["spec.labels.k"].etype == "type"
    errors = errors_of({})[2]
    assert str(errors["spec.name"]) == "spec.name: Required value"


def test_first_apply_to_an_untracked_object_conflicts_with_before_first_apply(store):
    """skipNonAppliedManager: fields of an object no manager tracks (written through the store, as the seed and
    the controllers write) belong to "before-first-apply" at its first apply; a store write keeps managedFields."""
    eip = {"apiVersion": "k8s.ovn.org/v1", "kind": "EgressIP", "metadata": {"name": "seeded"},
           "spec": {"egressIPs": ["192.168.20.10"], "namespaceSelector": {"matchLabels": {"a": "b"}}}}
    store.create("egressips.k8s.ovn.org", eip)
    assert "managedFields" not in store.get("egressips.k8s.ovn.org", "seeded")["metadata"]
    changed = dict(eip, spec=dict(eip["spec"], egressIPs=["192.168.20.11"]))
    alice = {"manager": "alice", "api_version": "k8s.ovn.org/v1", "force": False}
    with pytest.raises(ApiError) as info:
        store.patch("egressips.k8s.ovn.org", "seeded", changed, patch_type="apply", fields=alice)
    assert info.value.code == 409
    assert info.value.message.startswith('Apply failed with 1 conflict: conflict with "before-first-apply" using k8s.ovn.org/v1 at ')
    applied = store.patch("egressips.k8s.ovn.org", "seeded", changed, patch_type="apply", fields=dict(alice, force=True))
    assert {m["manager"] for m in applied["metadata"]["managedFields"]} == {"alice", "before-first-apply"}
    kept = store.patch("egressips.k8s.ovn.org", "seeded", {"metadata": {"labels": {"x": "y"}}})
    assert kept["metadata"]["managedFields"] == applied["metadata"]["managedFields"]
