"""Simulated scheduler and kubelets: pods get a node, an IP and run; echo pods run curl once.

- A pod without spec.nodeName goes to the next Ready, schedulable node in round-robin order:
  cordoned nodes are skipped, taints (the masters' NoSchedule) and spec.nodeSelector honoured,
  so ordinary pods land on workers. Setting spec.nodeName stands for the pods/binding call.
- A bound pod becomes Running with a pod IP from its node's podCIDR (.1 is the gateway, .2 the
  OVN management port) or the node address when host-networked.
- A pod whose container command/args contain `http://<echo target>` stands for `curl` to the
  echo service off the cluster (tests/twin/README.md): it runs once and ends Succeeded with the
  source address the target saw as its log, or Failed with curl's timeout when the wire drops
  the traffic (DOMAIN.md section 6, blackhole). restartPolicy is not simulated.
"""

import ipaddress
import json

from . import k8s
from .selectors import schedulable_on

CURL_TIMEOUT = "curl: (28) Connection timed out after 5001 milliseconds"


def echo_target_of(pod, echo_targets):
    """The echo target (host:port) the pod's curl calls, or None: not an echo pod."""
    containers = (pod.get("spec") or {}).get("containers") or []
    words = [json.dumps((c.get("command") or []) + (c.get("args") or [])) for c in containers]
    return next((target for target in echo_targets if any("http://%s" % target in text for text in words)), None)


def is_echo_pod(pod, echo_target):
    return echo_target_of(pod, [echo_target]) is not None


def _terminal(pod):
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def allocate_pod_ip(node, pods):
    """Lowest free address from .3 of the node's podCIDR."""
    cidr = (node.get("spec") or {}).get("podCIDR")
    if not cidr:
        return None
    used = {(p.get("status") or {}).get("podIP") for p in pods
            if (p.get("spec") or {}).get("nodeName") == k8s.name_of(node) and not _terminal(p)}
    network = ipaddress.ip_network(cidr)
    return next((str(ip) for index, ip in enumerate(network.hosts()) if index >= 2 and str(ip) not in used), None)


def _container_statuses(pod, state, ready):
    return [{"name": c.get("name"), "image": c.get("image"), "imageID": "", "ready": ready, "started": ready,
             "restartCount": 0, "state": state, "lastState": {}} for c in (pod.get("spec") or {}).get("containers") or []]


def running_status(pod, node, pod_ip, timestamp):
    host_ip = k8s.node_internal_ip(node)
    conditions = [{"type": t, "status": "True", "lastTransitionTime": timestamp}
                  for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")]
    return {"phase": "Running", "hostIP": host_ip, "hostIPs": [{"ip": host_ip}], "podIP": pod_ip, "podIPs": [{"ip": pod_ip}],
            "startTime": timestamp, "conditions": conditions,
            "containerStatuses": _container_statuses(pod, {"running": {"startedAt": timestamp}}, True)}


def finished_status(pod, succeeded, timestamp):
    status = dict(pod.get("status") or {})
    started = status.get("startTime", timestamp)
    terminated = {"exitCode": 0 if succeeded else 28, "reason": "Completed" if succeeded else "Error",
                  "startedAt": started, "finishedAt": timestamp}
    status["phase"] = "Succeeded" if succeeded else "Failed"
    status["conditions"] = [dict(c, status="False", reason="PodCompleted", lastTransitionTime=timestamp)
                            if c.get("type") in ("Ready", "ContainersReady") else c for c in status.get("conditions") or []]
    status["containerStatuses"] = _container_statuses(pod, {"terminated": terminated}, False)
    return status


class PodController:
    """Scheduler + kubelet + the echo pods' single run."""

    def __init__(self, echo_targets):
        self.echo_targets = [echo_targets] if isinstance(echo_targets, str) else list(echo_targets)
        self._next = 0

    def reconcile(self, ctx, trace):
        nodes = {k8s.name_of(n): n for n in sorted(ctx.store.list("nodes"), key=k8s.name_of)}
        pods = ctx.store.list("pods")
        for pod in sorted(pods, key=lambda p: (p["metadata"].get("creationTimestamp") or "", p["metadata"]["name"])):
            if pod["metadata"].get("deletionTimestamp") or _terminal(pod):
                continue
            if not (pod.get("spec") or {}).get("nodeName"):
                pod = self._schedule(ctx, pod, nodes)
            node = nodes.get(((pod or {}).get("spec") or {}).get("nodeName"))
            if node is None or not k8s.node_ready(node):
                continue
            if not (pod.get("status") or {}).get("podIP"):
                pod = self._start(ctx, pod, node, pods)
            target = echo_target_of(pod, self.echo_targets) if pod is not None else None
            if target is not None:
                self._run_echo(ctx, pod, trace(pod, target))

    def _schedule(self, ctx, pod, nodes):
        candidates = [n for n in nodes.values() if k8s.node_ready(n) and schedulable_on(pod, n)]
        if not candidates:
            message = "0/%d nodes are available: no Ready, schedulable node matches the pod." % len(nodes)
            scheduled = k8s.condition(pod, "PodScheduled") or {}
            if scheduled.get("message") != message:
                condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message,
                             "lastTransitionTime": ctx.timestamp}
                ctx.writer.patch("pods", pod, {"status": {"conditions": [condition]}}, subresource="status")
            return pod
        node = candidates[self._next % len(candidates)]
        self._next += 1
        return ctx.writer.patch("pods", pod, {"spec": {"nodeName": k8s.name_of(node)}}) or pod

    def _start(self, ctx, pod, node, pods):
        if (pod.get("spec") or {}).get("hostNetwork"):
            pod_ip = k8s.node_internal_ip(node)
        else:
            pod_ip = allocate_pod_ip(node, pods)
        if pod_ip is None:
            return None
        status = dict(pod.get("status") or {}, **running_status(pod, node, pod_ip, ctx.timestamp))
        updated = ctx.writer.patch("pods", pod, {"status": status}, subresource="status")
        if updated is not None:
            pods.append(updated)
        return updated

    def _run_echo(self, ctx, pod, seen):
        succeeded = seen.get("source_ip") is not None
        meta = pod["metadata"]
        ctx.store.set_log(meta.get("namespace"), meta["name"], seen["source_ip"] if succeeded else CURL_TIMEOUT)
        ctx.writer.patch("pods", pod, {"status": finished_status(pod, succeeded, ctx.timestamp)}, subresource="status")
