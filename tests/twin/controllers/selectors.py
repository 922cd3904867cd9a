"""Node selectors and taint tolerations; LabelSelector matching is the API emulator's (one implementation)."""


def map_selector_matches(node_selector, labels):
    """Equality-only map selector (pod spec.nodeSelector, NNCP spec.nodeSelector)."""
    return all(labels.get(key) == value for key, value in (node_selector or {}).items())


def namespace_labels(namespace):
    """Labels of a Namespace; the apiserver always sets kubernetes.io/metadata.name (since 1.21)."""
    labels = dict(namespace["metadata"].get("labels") or {})
    labels.setdefault("kubernetes.io/metadata.name", namespace["metadata"]["name"])
    return labels


def tolerates(tolerations, taint):
    """v1.Toleration.ToleratesTaint."""
    for toleration in tolerations or []:
        if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
            continue
        operator = toleration.get("operator") or "Equal"
        if operator == "Exists" and (not toleration.get("key") or toleration.get("key") == taint.get("key")):
            return True
        if operator == "Equal" and toleration.get("key") == taint.get("key") and \
                (toleration.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def schedulable_on(pod, node):
    """Scheduler filters the twin applies: spec.unschedulable, NoSchedule/NoExecute taints, nodeSelector."""
    spec = pod.get("spec") or {}
    node_spec = node.get("spec") or {}
    if node_spec.get("unschedulable"):
        return False
    for taint in node_spec.get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(spec.get("tolerations"), taint):
            return False
    return map_selector_matches(spec.get("nodeSelector"), node["metadata"].get("labels") or {})
