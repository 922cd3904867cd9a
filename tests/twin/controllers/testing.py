"""A small simulated cluster for the controllers' self-tests: a real twin.kube Store, the seed
state and a Runner reading an in-memory vCenter inventory the test edits directly.
"""

import ipaddress

from twin.kube.store import Store

from . import hostnet
from . import seed as seeding
from .cluster_manager import EGRESSIPS, EGRESS_LABEL
from .inventory import Inventory, StaticInventory
from .nmstate import NNCP
from .runner import Runner

SECONDARY_PG = "secondary-pg"


def vcsim_state(masters=3, workers=3, hosts=3, cluster="ocp1"):
    """vcsim.json as the vcsim twin writes it: one NIC per VM on `VM Network`."""
    host_names = ["DC0_C0_H%d" % i for i in range(hosts)]
    vms = []
    roles = [("master", i) for i in range(masters)] + [("worker", i) for i in range(workers)]
    for index, (role, number) in enumerate(roles):
        vms.append({"name": "%s-%s-%d" % (cluster, role, number), "moid": "vm-%d" % (100 + index),
                    "uuid": "4237%04x-1111-2222-3333-%012x" % (index, index), "role": role,
                    "host": host_names[index % hosts],
                    "nics": [{"mac": "00:50:56:a0:00:%02x" % index, "network": "VM Network"}]})
    return {"url": "https://127.0.0.1:8989/sdk", "host": "127.0.0.1", "port": 8989, "username": "u", "password": "p",
            "datacenter": "DC0", "cluster": "DC0_C0", "vms": vms}


def inventory_from_state(state, secondary_portgroup=True):
    """The `/_twin/inventory` document matching a vcsim state."""
    host_names = sorted({vm["host"] for vm in state["vms"]})
    portgroups = [{"name": "VM Network", "vswitch": "vSwitch0", "vlan": 0}]
    if secondary_portgroup:
        portgroups.append({"name": SECONDARY_PG, "vswitch": "vSwitch1", "vlan": 20})
    return {
        "hosts": [{"name": name, "moid": "host-%d" % i, "cluster": "DC0_C0", "portgroups": [dict(pg) for pg in portgroups],
                   "vswitches": ["vSwitch0", "vSwitch1"], "uplinks": {"vSwitch0": ["vmnic0"], "vSwitch1": ["vmnic1"]},
                   "pnics": [{"device": "vmnic0", "link_up": True}, {"device": "vmnic1", "link_up": True}]}
                  for i, name in enumerate(host_names)],
        "dvs": [{"name": "DSwitch1", "uuid": "50 2a 11 22", "moid": "dvs-21", "hosts": host_names,
                 "portgroups": [{"name": "ocp-primary-dpg", "key": "dvportgroup-22", "vlan": 0}]}],
        "vms": [{"name": vm["name"], "moid": vm["moid"], "uuid": vm["uuid"], "host": vm["host"], "power_state": "poweredOn",
                 "nics": [{"key": 4000 + i, "mac": nic["mac"], "adapter": "vmxnet3", "connected": True,
                           "start_connected": True, "network": nic["network"], "portgroup_key": None, "switch_uuid": None}
                          for i, nic in enumerate(vm["nics"])]} for vm in state["vms"]],
    }


class FakeCluster:
    """Store + seed + Runner over an editable inventory."""

    def __init__(self, masters=3, workers=3, hosts=3, rng_seed=1, probe_interval=0.05, secondary_portgroup=True, nmstate=None,
                 dual_stack=False):
        # the controllers' self-tests read NodeNetworkState after each settle(): refresh it every round unless a
        # test asks for the handler's schedule (test_controllers_nmstate pins the one-minute refresh itself)
        self.state = vcsim_state(masters, workers, hosts)
        self.inventory = inventory_from_state(self.state, secondary_portgroup)
        self.store = Store()
        hostnet.configure_stack(dual_stack)  # the twin option --dual-stack (a process-wide setting, as there)
        seeding.seed(self.store, self.state)
        self.runner = Runner(self.store, StaticInventory(self.inventory), probe_interval=probe_interval, rng_seed=rng_seed,
                             nmstate=dict({"refresh": 0.0}, **(nmstate or {})))
        self._macs = 0

    # --- reading ----------------------------------------------------------------------------

    def node(self, name):
        return self.store.get("nodes", name)

    def workers(self):
        return [vm["name"] for vm in self.state["vms"] if vm["role"] == "worker"]

    def vm(self, node):
        return next(vm for vm in self.inventory["vms"] if vm["name"] == node)

    def egressip(self, name):
        return self.store.get(EGRESSIPS, name)

    def assignments(self, name):
        """{egress IP: node} of an EgressIP's status."""
        items = ((self.egressip(name) or {}).get("status") or {}).get("items") or []
        return {item["egressIP"]: item["node"] for item in items}

    def events(self, name, reason=None):
        return [e for e in self.store.list("events", namespace="default")
                if e["involvedObject"].get("name") == name and (reason is None or e["reason"] == reason)]

    # --- vCenter edits ----------------------------------------------------------------------

    def add_nic(self, node, network=SECONDARY_PG, connected=True):
        """Hot-add a vmxnet3 NIC to the node's VM; returns its MAC (lower case, as vCenter shows)."""
        self._macs += 1
        mac = "00:50:56:b1:%02x:%02x" % (self._macs // 256, self._macs % 256)
        vm = self.vm(node)
        vm["nics"].append({"key": 4000 + len(vm["nics"]), "mac": mac, "adapter": "vmxnet3", "connected": connected,
                           "start_connected": connected, "network": network, "portgroup_key": None, "switch_uuid": None})
        return mac

    def nic(self, node, mac):
        return next(nic for nic in self.vm(node)["nics"] if nic["mac"].lower() == mac.lower())

    def remove_nic(self, node, mac):
        vm = self.vm(node)
        vm["nics"] = [nic for nic in vm["nics"] if nic["mac"].lower() != mac.lower()]

    # --- cluster edits ----------------------------------------------------------------------

    def secondary_policy(self, node, mac, address, prefix=24, name=None, routes=None, state="up", address6=None, prefix6=64):
        """One NNCP per node matching the NIC by MAC (DOMAIN.md section 8); address6: its IPv6 address too."""
        iface = {"name": "secondary0", "type": "ethernet", "state": state, "identifier": "mac-address", "mac-address": mac}
        if address is not None:
            iface["ipv4"] = {"enabled": True, "dhcp": False, "address": [{"ip": address, "prefix-length": prefix}]}
        if address6 is not None:
            iface["ipv6"] = {"enabled": True, "dhcp": False, "autoconf": False,
                             "address": [{"ip": address6, "prefix-length": prefix6}]}
        desired = {"interfaces": [iface]}
        if routes:
            desired["routes"] = {"config": routes}
        policy = {"apiVersion": "nmstate.io/v1", "kind": "NodeNetworkConfigurationPolicy",
                  "metadata": {"name": name or "egress-%s" % node},
                  "spec": {"nodeSelector": {"kubernetes.io/hostname": node}, "desiredState": desired}}
        existing = self.store.get(NNCP, policy["metadata"]["name"])
        if existing is None:
            return self.store.create(NNCP, policy)
        return self.store.patch(NNCP, policy["metadata"]["name"], {"spec": policy["spec"]})

    def secondary(self, node, address, prefix=24, gateway=True):
        """Hot-add a secondary NIC and give it an address and (gateway=True) the route via the subnet's first address
        through NMState, as the collection's node step does; returns the MAC."""
        mac = self.add_nic(node)
        routes = [self.gateway_route(node, mac, address, prefix)] if gateway else None
        self.secondary_policy(node, mac, address, prefix, routes=routes)
        return mac

    def gateway_route(self, node, mac, address, prefix=24):
        """The default route via the subnet's first address, naming the NIC's kernel name (what NodeNetworkState reports)."""
        link = self.runner.nmstate.host(self.node(node), Inventory(self.inventory)).link_by_mac(mac)
        gateway = next(ipaddress.ip_interface("%s/%d" % (address, prefix)).network.hosts())
        return {"destination": "0.0.0.0/0" if gateway.version == 4 else "::/0", "next-hop-address": str(gateway),
                "next-hop-interface": link.name, "metric": 200, "table-id": 254}

    def label_egress(self, *nodes, present=True):
        for node in nodes:
            self.store.patch("nodes", node, {"metadata": {"labels": {EGRESS_LABEL: "" if present else None}}})

    def set_ready(self, node, ready):
        conditions = self.node(node)["status"]["conditions"]
        for condition in conditions:
            if condition["type"] == "Ready":
                condition["status"] = "True" if ready else "False"
        self.store.patch("nodes", node, {"status": {"conditions": conditions}}, subresource="status")

    def create_egressip(self, name, ips, namespace_labels=None, pod_labels=None):
        spec = {"egressIPs": list(ips), "namespaceSelector": {"matchLabels": namespace_labels or {"egress": name}}}
        if pod_labels:
            spec["podSelector"] = {"matchLabels": pod_labels}
        return self.store.create(EGRESSIPS, {"apiVersion": "k8s.ovn.org/v1", "kind": "EgressIP",
                                             "metadata": {"name": name}, "spec": spec})

    def namespace(self, name, labels=None):
        return self.store.create("namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                "metadata": {"name": name, "labels": labels or {}}})

    def pod(self, namespace, name, command=None, labels=None, node=None, host_network=False):
        spec = {"containers": [{"name": "c", "image": "registry.example.com/curl:1", "command": command or ["sleep", "inf"]}],
                "restartPolicy": "Never"}
        if node:
            spec["nodeName"] = node
        if host_network:
            spec["hostNetwork"] = True
        return self.store.create("pods", {"apiVersion": "v1", "kind": "Pod",
                                          "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
                                          "spec": spec})

    def settle(self, probe=False):
        return self.runner.settle(timeout=10.0, probe=probe)


class TunedClock:
    """A hand-driven monotonic clock for the TuneD daemon of a FakeCluster (its apply delay passes only on advance)."""

    def __init__(self, cluster):
        self.value = 1000.0
        cluster.runner.tuned.clock = lambda: self.value

    def advance(self, seconds):
        self.value += seconds
