"""Simulated Kubernetes NMState handler (DOMAIN.md section 8; kubernetes-nmstate).

- NodeNetworkState per node, named after the node, reporting the host's links (hostnet).
- Each NodeNetworkConfigurationPolicy is applied on the nodes its nodeSelector matches when it
  is created or its generation changes, when a node's labels change, and once at handler
  start (kubernetes-nmstate's NNCP controller predicates); the outcome goes into the
  enactment `<node>.<policy>` and the policy's conditions (pkg/policyconditions).
- Deleting a policy, or a node leaving its selector, deletes the enactment and leaves the
  node's configuration as it is: nmstate never rolls back on NNCP deletion. Removing an
  address takes a policy update (state: absent, or the address removed) before the delete.
- The handler's release is an option (`version`, the nmstate release `nmstatectl --version` prints,
  reported in NodeNetworkState `status.handlerNmstateVersion`). It decides how routes resolve their
  next-hop interface (nmstate_apply) and which kubernetes-nmstate status generation the twin plays:
  releases before 2.2.43 fail an enactment at once and report a policy matching no node as
  Available; the newer generation retries a failing enactment (controllers/handler
  nodenetworkconfigurationpolicy_controller.go, c8b1bcf6c: Failing=True and Progressing=True with
  reason Retrying, NNCP_MAX_RETRIES 5, backoff from 1 s doubling up to 30 s) and reports a policy matching
  no node as Available=False with Ignored=True (pkg/policyconditions SetPolicyNotMatching). The twin pairs
  the two generations with the nmstate release for one option; see tests/twin/FIDELITY.md.
- NodeNetworkState is refreshed on the node controller's schedule (pkg/node/refresh.go
  NetworkStateRefresh, one minute; `refresh` option) and right after each successful apply
  (forceNNSRefresh), not on every change: a new NIC shows up in it up to a minute later.
"""

import time

from . import k8s
from .hostnet import NodeNet, SlotMap, build_host
from .nmstate_apply import (DEFAULT_VERSION, PolicyError, apply_desired_state, current_state, failure_message, resolves_profile_names,
                            restore_nodenet, slots_from_state)
from .selectors import map_selector_matches

NNCP = "nodenetworkconfigurationpolicies.nmstate.io"
NNCE = "nodenetworkconfigurationenactments.nmstate.io"
NNS = "nodenetworkstates.nmstate.io"
POLICY_LABEL = "nmstate.io/policy"
NODE_LABEL = "nmstate.io/node"
ENACTMENT_TYPES = ("Available", "Failing", "Progressing", "Pending", "Aborted")
ABORTED_MESSAGE = "policy has failing enactments, aborting"
DEFAULT_REFRESH = 60.0
MAX_RETRIES = 5
NETWORK_MANAGER_VERSION = "1.46.0"


def _owner(node):
    return {"apiVersion": "v1", "kind": "Node", "name": k8s.name_of(node), "uid": node["metadata"].get("uid", "")}


def _created(obj):
    return (obj["metadata"].get("creationTimestamp") or "", k8s.name_of(obj))


def enactment_conditions(outcome, message, existing, timestamp):
    """Conditions of an enactment after success, failure or abort (enactmentstatus/conditions)."""
    if outcome == "success":
        wanted = {"Available": ("True", "SuccessfullyConfigured", "successfully reconciled"),
                  "Failing": ("False", "SuccessfullyConfigured", ""),
                  "Progressing": ("False", "SuccessfullyConfigured", "")}
    elif outcome == "retrying":
        wanted = {"Failing": ("True", "Retrying", message),
                  "Progressing": ("True", "Retrying", message),
                  "Available": ("False", "Retrying", ""),
                  "Pending": ("False", "Retrying", "")}
    elif outcome == "failed":
        wanted = {"Failing": ("True", "FailedToConfigure", message),
                  "Available": ("False", "FailedToConfigure", ""),
                  "Progressing": ("False", "FailedToConfigure", "")}
    else:
        wanted = {"Failing": ("False", "ConfigurationAborted", ""),
                  "Available": ("False", "ConfigurationAborted", ""),
                  "Progressing": ("False", "ConfigurationAborted", "")}
    wanted["Aborted"] = ("True", "ConfigurationAborted", message) if outcome == "aborted" else \
        ("False", "SuccessfullyConfigured", "")
    conditions = existing or [{"type": t, "status": "Unknown", "reason": "", "message": "",
                               "lastHeartbeatTime": timestamp, "lastTransitionTime": timestamp} for t in ENACTMENT_TYPES]
    for condition_type in ENACTMENT_TYPES:
        if condition_type in wanted:
            conditions = k8s.set_condition(conditions, condition_type, *wanted[condition_type], timestamp)
    return conditions


def policy_conditions(policy, matching_nodes, enactments, existing, timestamp, ignored_condition=False):
    """NNCP conditions from its enactments at the current generation (policyconditions.setPolicyStatus).

    ignored_condition: the newer generation's `Ignored` condition (a policy matching no node is
    Available=False, Ignored=True); the older one reports it Available=True.
    """
    generation = policy["metadata"].get("generation", 1)
    current = [e for e in enactments if (e.get("status") or {}).get("policyGeneration") == generation]

    def count(condition_type):
        return sum(1 for e in current if (k8s.condition(e, condition_type) or {}).get("status") == "True")

    failed, aborted, available = count("Failing"), count("Aborted"), count("Available")
    ready = [n for n in matching_nodes if k8s.node_ready(n)]
    not_ready = len(matching_nodes) - len(ready)
    suffix = ", %d nodes ignored due to NotReady state" % not_ready if not_ready else ""
    if not matching_nodes and ignored_condition:
        message = "Policy does not match any node"
        wanted = [("Degraded", "False", "NoMatchingNode", ""), ("Available", "False", "NoMatchingNode", ""),
                  ("Progressing", "False", "NoMatchingNode", ""), ("Ignored", "True", "NoMatchingNode", message)]
    elif not matching_nodes:
        message = "Policy does not match any node"
        wanted = [("Degraded", "False", "NoMatchingNode", message), ("Available", "True", "NoMatchingNode", message),
                  ("Progressing", "False", "ConfigurationProgressing", "")]
    elif failed or aborted:
        message = "%d/%d nodes failed to configure" % (failed, len(matching_nodes))
        message += ", %d nodes aborted configuration" % aborted if aborted else ""
        wanted = [("Degraded", "True", "FailedToConfigure", message), ("Available", "False", "FailedToConfigure", ""),
                  ("Progressing", "False", "ConfigurationProgressing", "")]
    elif available < len(ready):
        message = "Policy is progressing %d/%d nodes finished%s" % (available, len(ready), suffix)
        wanted = [("Degraded", "Unknown", "ConfigurationProgressing", ""),
                  ("Available", "Unknown", "ConfigurationProgressing", ""),
                  ("Progressing", "True", "ConfigurationProgressing", message)]
    else:
        message = "%d/%d nodes successfully configured%s" % (available, len(matching_nodes), suffix)
        wanted = [("Degraded", "False", "SuccessfullyConfigured", ""),
                  ("Available", "True", "SuccessfullyConfigured", message),
                  ("Progressing", "False", "ConfigurationProgressing", "")]
    if ignored_condition and matching_nodes:
        wanted.append(("Ignored", "False", wanted[1][2], ""))
    conditions = existing
    for condition_type, status, reason, text in wanted:
        conditions = k8s.set_condition(conditions, condition_type, status, reason, text, timestamp)
    return conditions


class NMStateController:
    """kubernetes-nmstate handler on every node plus its policy status controller."""

    def __init__(self, version=DEFAULT_VERSION, refresh=DEFAULT_REFRESH, retry_backoff=1.0, clock=time.monotonic):
        self.version = version or DEFAULT_VERSION
        self.new_generation = resolves_profile_names(self.version)
        self.refresh = float(DEFAULT_REFRESH if refresh is None else refresh)
        self.retry_backoff = float(retry_backoff)
        self.clock = clock
        self.nodenets = {}
        self.slots = {}
        self.applied = {}
        self.retries = {}
        self._restored = set()
        self._refreshed = {}
        self._force_refresh = set()

    def host(self, node, inventory):
        """HostView of one node, from the inventory and the node's persisted profiles."""
        uuid = k8s.provider_uuid(node)
        vm = inventory.vm_by_uuid(uuid)
        slots = self.slots.setdefault(uuid or "", SlotMap())
        nodenet = self.nodenets.setdefault(k8s.name_of(node), NodeNet())
        return build_host(k8s.name_of(node), vm, slots, nodenet, k8s.node_internal_ip(node), k8s.node_internal_ip(node, 6))

    def hosts(self, nodes, inventory):
        return {k8s.name_of(node): self.host(node, inventory) for node in nodes}

    def reconcile(self, ctx):
        nodes = sorted(ctx.store.list("nodes"), key=k8s.name_of)
        states = {k8s.name_of(s): s for s in ctx.store.list(NNS)}
        self._restore(nodes, states)
        policies = sorted(ctx.store.list(NNCP), key=_created)
        enactments = {k8s.name_of(e): e for e in ctx.store.list(NNCE)}
        self._apply_policies(ctx, nodes, policies, enactments)
        self._write_policy_status(ctx, nodes, policies, enactments)
        hosts = self.hosts(nodes, ctx.inventory)
        self._write_states(ctx, nodes, hosts, states)
        return hosts

    def _restore(self, nodes, states):
        """First sight of a node: take back what its last NodeNetworkState reported."""
        for node in nodes:
            name = k8s.name_of(node)
            if name in self._restored:
                continue
            self._restored.add(name)
            if name in states and name not in self.nodenets:
                self.nodenets[name] = restore_nodenet(states[name])
                uuid = k8s.provider_uuid(node) or ""
                self.slots.setdefault(uuid, SlotMap(slots_from_state(states[name])))

    def _apply_policies(self, ctx, nodes, policies, enactments):
        live = {k8s.name_of(p) for p in policies}
        self.applied = {key: token for key, token in self.applied.items() if key[1] in live}
        wanted = set()
        for policy in policies:
            selector = (policy.get("spec") or {}).get("nodeSelector")
            for node in nodes:
                if map_selector_matches(selector, k8s.labels_of(node)):
                    wanted.add("%s.%s" % (k8s.name_of(node), k8s.name_of(policy)))
                    self._apply_if_triggered(ctx, node, policy, enactments)
        for name, enactment in list(enactments.items()):
            if name not in wanted:
                ctx.writer.delete(NNCE, name)
                del enactments[name]
                labels = k8s.labels_of(enactment)
                self.applied.pop((labels.get(NODE_LABEL), labels.get(POLICY_LABEL)), None)

    def _apply_if_triggered(self, ctx, node, policy, enactments):
        node_name, policy_name = k8s.name_of(node), k8s.name_of(policy)
        generation = policy["metadata"].get("generation", 1)
        # re-applied on a new policy generation, a node label change, a new node (handler start)
        token = (policy["metadata"].get("uid"), generation, node["metadata"].get("uid"),
                 tuple(sorted(k8s.labels_of(node).items())))
        key = (node_name, policy_name)
        if self.applied.get(key) == token:
            pending = self.retries.get(key)
            if pending is None or pending["token"] != token or self.clock() < pending["due"]:
                return
        else:
            self.retries.pop(key, None)
        self.applied[key] = token
        others_failed = any(
            k8s.labels_of(e).get(POLICY_LABEL) == policy_name and k8s.labels_of(e).get(NODE_LABEL) != node_name
            and (e.get("status") or {}).get("policyGeneration") == generation
            and (k8s.condition(e, "Failing") or {}).get("status") == "True" for e in enactments.values())
        if others_failed:
            outcome, message = "aborted", ABORTED_MESSAGE
        else:
            desired = (policy.get("spec") or {}).get("desiredState") or {}
            try:
                self.nodenets[node_name] = apply_desired_state(
                    self.nodenets.setdefault(node_name, NodeNet()), self.host(node, ctx.inventory), desired, self.version)
                outcome, message = "success", ""
                self.retries.pop(key, None)
                self._force_refresh.add(node_name)
            except PolicyError as error:
                outcome, message = self._failed(key, token, node_name, failure_message(node_name, error))
        written = self._write_enactment(ctx, node, policy, outcome, message, enactments.get("%s.%s" % (node_name, policy_name)))
        if written is not None:
            enactments[k8s.name_of(written)] = written

    def _failed(self, key, token, node_name, message):
        """Outcome of a failed apply: the newer handler retries (count, exponential backoff) before it fails."""
        if not self.new_generation:
            return "failed", message
        count = self.retries.get(key, {}).get("count", 0) + 1
        if count >= MAX_RETRIES:
            self.retries.pop(key, None)
            return "failed", message
        self.retries[key] = {"token": token, "count": count,
                             "due": self.clock() + min(30.0, self.retry_backoff * 2 ** (count - 1))}
        return "retrying", ("failed to reconcile NodeNetworkConfigurationPolicy on node %s. Retrying %d/%d"
                            % (node_name, count + 1, MAX_RETRIES))

    def _write_enactment(self, ctx, node, policy, outcome, message, existing):
        node_name, policy_name = k8s.name_of(node), k8s.name_of(policy)
        status = dict((existing or {}).get("status") or {})
        generation = policy["metadata"].get("generation", 1)
        status.update({
            "desiredState": (policy.get("spec") or {}).get("desiredState") or {},
            "policyGeneration": generation,
            "conditions": enactment_conditions(outcome, message, status.get("conditions"), ctx.timestamp),
        })
        if self.new_generation and outcome in ("retrying", "failed"):
            retry = self.retries.get((node_name, policy_name))
            status["retryCount"] = {str(generation): retry["count"] if retry else MAX_RETRIES}
        if existing is None:
            return ctx.writer.create(NNCE, {
                "apiVersion": "nmstate.io/v1beta1", "kind": "NodeNetworkConfigurationEnactment",
                "metadata": {"name": "%s.%s" % (node_name, policy_name), "ownerReferences": [_owner(node)],
                             "labels": {POLICY_LABEL: policy_name, NODE_LABEL: node_name}},
                "status": status})
        if status == existing.get("status"):
            return existing
        return ctx.writer.update_status(NNCE, dict(existing, status=status))

    def _write_policy_status(self, ctx, nodes, policies, enactments):
        for policy in policies:
            name = k8s.name_of(policy)
            selector = (policy.get("spec") or {}).get("nodeSelector")
            matching = [n for n in nodes if map_selector_matches(selector, k8s.labels_of(n))]
            own = [e for e in enactments.values() if k8s.labels_of(e).get(POLICY_LABEL) == name]
            status = dict(policy.get("status") or {})
            status["conditions"] = policy_conditions(policy, matching, own, status.get("conditions") or [], ctx.timestamp,
                                                     ignored_condition=self.new_generation)
            if status != (policy.get("status") or {}):
                ctx.writer.update_status(NNCP, dict(policy, status=status))

    def _refresh_due(self, name, existing):
        """The node controller's schedule: at once for a new node, after an apply, else every `refresh` seconds."""
        if existing is None or name in self._force_refresh:
            return True
        last = self._refreshed.get(name)
        return last is None or self.clock() - last >= self.refresh

    def _write_states(self, ctx, nodes, hosts, states):
        for node in nodes:
            name = k8s.name_of(node)
            existing = states.get(name)
            if not self._refresh_due(name, existing):
                continue
            self._refreshed[name] = self.clock()
            self._force_refresh.discard(name)
            state = current_state(hosts[name])
            status = {"currentState": state, "lastSuccessfulUpdateTime": ctx.timestamp,
                      "handlerNmstateVersion": "nmstatectl %s" % self.version,
                      "handlerNetworkManagerVersion": NETWORK_MANAGER_VERSION,
                      "hostNetworkManagerVersion": NETWORK_MANAGER_VERSION}
            if existing is None:
                ctx.writer.create(NNS, {"apiVersion": "nmstate.io/v1beta1", "kind": "NodeNetworkState",
                                        "metadata": {"name": name, "ownerReferences": [_owner(node)]},
                                        "status": status})
            elif any((existing.get("status") or {}).get(key) != status[key] for key in status if key != "lastSuccessfulUpdateTime"):
                ctx.writer.update_status(NNS, dict(existing, status=dict(existing.get("status") or {}, **status)))
        for name in set(states) - {k8s.name_of(n) for n in nodes}:
            ctx.writer.delete(NNS, name)
