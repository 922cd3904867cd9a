"""The controller loop: one thread running reconcile rounds on store changes and on a probe tick.

A round reads vCenter once (`/_twin/inventory`), then runs, in order, the NMState handler, the
Node Tuning Operator (pure: forwarding per link), ovnkube-node, ovnkube-cluster-manager and the
scheduler/kubelets. Each controller computes what it wants from what it reads and writes only
differences, so a round that changes nothing writes nothing.
"""

import logging
import os
import random
import threading
import time

from . import hostnet, k8s, tuned, wire
from .cluster_manager import EGRESSIPS, NETWORK_OPERATOR, ClusterManager
from .inventory import HttpInventory, Inventory, StaticInventory
from .machineapi import MachineAPI
from .nmstate import NMStateController
from .ovnkube_node import OvnkubeNode
from .pods import PodController
from .writer import Writer

LOG = logging.getLogger(__name__)
DEFAULT_ECHO_TARGET = "192.0.2.10:8080"
# the second echo service of a dual-stack twin, on IPv6 (2001:db8::/32, the documentation prefix as 192.0.2.0/24 is)
DEFAULT_ECHO_TARGET_V6 = "[2001:db8::10]:8080"


class RoundContext:
    """What one reconcile round shares: the store, its writer, the inventory, a timestamp."""

    def __init__(self, store, inventory):
        self.store = store
        self.writer = Writer(store)
        self.inventory = inventory
        self.timestamp = k8s.now()


def _seed_from_env():
    value = os.environ.get("TWIN_RANDOM_SEED")
    return int(value) if value not in (None, "") else None


class Runner:
    """Runs the simulated controllers against a twin.kube Store.

    inventory: a callable returning the vcsim inventory dict (HttpInventory, StaticInventory).
    rng_seed: seed of the tie-breaking random order of egress IP placement (default:
    $TWIN_RANDOM_SEED, else unseeded).
    """

    def __init__(self, store, inventory, probe_interval=1.0, echo_target=DEFAULT_ECHO_TARGET, rng_seed=None, nmstate=None,
                 tuned_options=None):
        self.store = store
        self.inventory_source = inventory
        self.probe_interval = float(probe_interval)
        self.echo_target = echo_target
        self.echo_targets = [echo_target] + ([DEFAULT_ECHO_TARGET_V6] if hostnet.STACK["dual"] else [])
        self.rng = random.Random(rng_seed if rng_seed is not None else _seed_from_env())
        self.nmstate = NMStateController(**(nmstate or {}))
        self.ovnkube_node = OvnkubeNode()
        self.cluster_manager = ClusterManager(self.rng, self._probe)
        self.pods = PodController(self.echo_targets)
        self.machine_api = MachineAPI()
        self.tuned = tuned.NodeTuning(**(tuned_options or {}))  # TuneD applies a Profile seconds after it changes
        self._reachable = {}
        self._inventory = None
        self._last_probe = None
        self._lock = threading.RLock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = None
        store.subscribe(self._on_change)

    # --- public API (tests/twin/README.md) --------------------------------------------------

    def start(self):
        self._thread = threading.Thread(target=self._loop, name="twin-controllers", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout=10.0):
        unsubscribe = getattr(self.store, "unsubscribe", None)  # not in the documented store API
        if unsubscribe is not None:
            unsubscribe(self._on_change)
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def set_reachable(self, node, reachable):
        """The egress IP reachability probe to `node` fails (False) or succeeds again (True).

        Acted upon at the next probe tick, as OVN-K only notices on its next probe.
        """
        with self._lock:
            self._reachable[node] = bool(reachable)

    def set_tuned_failure(self, node, message, applied=True):
        """TuneD on `node` fails its next application with this stderr line (None: succeeds again)."""
        with self._lock:
            self.tuned.set_failure(node, message, applied)
        self._wake.set()

    def wire(self, namespace, pod_name):
        """What an echo target off the cluster sees for traffic from that pod (wire.trace)."""
        with self._lock:
            inventory = self._read_inventory()
            if inventory is None:
                return wire.result(None, None, None, "vCenter inventory unavailable")
            pod = self.store.get("pods", pod_name, namespace=namespace)
            return self._tracer(inventory)(pod)

    def reconcile_once(self, probe=None):
        """One round; probe=None probes when the tick is due. Returns the number of changes written."""
        with self._lock:
            moment = time.monotonic()
            probe_due = probe if probe is not None else (
                self._last_probe is None or moment - self._last_probe >= self.probe_interval)
            if probe_due:
                self._last_probe = moment
            inventory = self._read_inventory()
            if inventory is None:
                return 0
            ctx = RoundContext(self.store, inventory)
            hosts = self.nmstate.reconcile(ctx)
            self.tuned.reconcile(ctx)
            self.ovnkube_node.reconcile(ctx, hosts)
            self.cluster_manager.reconcile(ctx, probe_due)
            self.machine_api.reconcile(ctx)
            self.pods.reconcile(ctx, self._tracer(inventory))
            return ctx.writer.changes

    def settle(self, timeout=10.0, probe=False):
        """Run rounds until one changes nothing; probe=True runs the reachability probe first.

        Returns the number of rounds; raises TimeoutError when the state keeps changing.
        """
        deadline = time.monotonic() + timeout
        rounds = 0
        while True:
            changes = self.reconcile_once(probe=probe if rounds == 0 else False)
            rounds += 1
            if changes == 0:
                return rounds
            if time.monotonic() > deadline:
                raise TimeoutError("controllers still changing the cluster after %d rounds" % rounds)

    # --- internals ------------------------------------------------------------------------

    def _probe(self, node):
        """OVN-K's reachability probe (gRPC to the node, DOMAIN.md section 6): fails when a test says so, and for a node
        whose VM is not powered on (nothing answers; OVN-K acts at the next probe, before the kubelet's NotReady)."""
        return self._reachable.get(node, True) and self._powered_on(node)

    def _powered_on(self, node_name):
        node = self.store.get("nodes", node_name)
        vm = self._inventory.vm_by_uuid(k8s.provider_uuid(node)) if node is not None and self._inventory is not None else None
        return vm is None or vm.get("power_state") in (None, "poweredOn")

    def _on_change(self, *_event):
        self._wake.set()

    def _loop(self):
        while not self._stopping.is_set():
            try:
                self.reconcile_once()
            except Exception:  # pylint: disable=broad-except
                # a controller bug must not stop the simulated cluster; the next round retries
                LOG.exception("reconcile round failed")
            elapsed = time.monotonic() - (self._last_probe or 0.0)
            self._wake.wait(max(0.01, self.probe_interval - elapsed))
            self._wake.clear()

    def _read_inventory(self):
        try:
            self._inventory = Inventory(self.inventory_source())
        except (OSError, ValueError) as error:
            LOG.warning("vCenter inventory unavailable (%s); keeping the last one", error)
        return self._inventory

    def _tracer(self, inventory):
        """trace(pod) over the current state: hosts, forwarding, EgressIPs, namespaces."""
        nodes = {k8s.name_of(n): n for n in self.store.list("nodes")}
        hosts = self.nmstate.hosts(nodes.values(), inventory)
        forwarding = self.tuned.forwarding(nodes.values(), self.store.get(NETWORK_OPERATOR, "cluster"))
        egressips = self.store.list(EGRESSIPS)
        namespaces = {k8s.name_of(ns): ns for ns in self.store.list("namespaces")}

        def trace(pod, target=None):
            namespace = namespaces.get((pod or {}).get("metadata", {}).get("namespace"))
            destination = (target or self.echo_target).rsplit(":", 1)[0].strip("[]")
            return wire.trace(pod, namespace, egressips, nodes, hosts, forwarding, inventory, destination=destination)
        return trace


def start(store, vcsim_url=None, probe_interval=1.0, echo_target=DEFAULT_ECHO_TARGET, inventory=None, rng_seed=None, nmstate=None,
          tuned_options=None):
    """Start the controllers of the twin (tests/twin/README.md); returns the running Runner.

    `inventory` replaces the vcsim reader (a callable returning the inventory dict), for tests.
    `nmstate`: NMStateController options (version, refresh, retry_backoff).
    `tuned_options`: tuned.NodeTuning options (delay).
    """
    if inventory is None:
        # without a vcsim (API-only runs) the cluster has no VMs to look at
        inventory = HttpInventory(vcsim_url) if vcsim_url else StaticInventory({})
    source = inventory
    return Runner(store, source, probe_interval, echo_target, rng_seed, nmstate=nmstate, tuned_options=tuned_options).start()
