"""vCenter as the controllers see it: the vcsim `/_twin/inventory` JSON, read once per round.

The controllers never speak SOAP (tests/twin/README.md, "Interface between twin.kube and
twin.controllers"): vCenter's request log must only show what the collection and the tests did.
"""

import json
import ssl
import urllib.parse
import urllib.request


class HttpInventory:
    """Reads `GET <scheme://host:port>/_twin/inventory` from the vcsim of the twin.

    vcsim serves a self-signed certificate and this endpoint needs no credentials, so the
    certificate is not verified (loopback only).
    """

    def __init__(self, vcsim_url, timeout=10.0):
        parts = urllib.parse.urlsplit(vcsim_url)
        self.url = urllib.parse.urlunsplit((parts.scheme or "https", parts.netloc, "/_twin/inventory", "", ""))
        self.timeout = timeout
        self._context = ssl.create_default_context()
        self._context.check_hostname = False
        self._context.verify_mode = ssl.CERT_NONE

    def __call__(self):
        with urllib.request.urlopen(self.url, timeout=self.timeout, context=self._context) as response:  # nosec: loopback vcsim
            return json.loads(response.read().decode("utf-8"))


class StaticInventory:
    """An inventory held in memory (tests): call it to get a deep copy of the current dict."""

    def __init__(self, inventory):
        self.inventory = inventory

    def __call__(self):
        return json.loads(json.dumps(self.inventory))


class Inventory:
    """Indexes over one inventory snapshot."""

    def __init__(self, data):
        self.data = data or {}
        self.vms = list(self.data.get("vms") or [])
        self.hosts = {host["name"]: host for host in self.data.get("hosts") or []}
        self.switches = {dvs.get("uuid"): dvs for dvs in self.data.get("dvs") or []}
        self._by_uuid = {str(vm.get("uuid", "")).lower(): vm for vm in self.vms}

    def vm_by_uuid(self, uuid):
        return self._by_uuid.get(str(uuid or "").lower())

    def backing_present(self, vm, nic):
        """Whether the NIC's network exists where the VM runs now (DOMAIN.md section 6).

        Standard vSwitch port groups are per host: the port group name must exist on the VM's
        current host. A distributed port group exists on every member host of its switch, so
        the port group must exist on the switch and the VM's host must be a member.
        """
        if nic.get("switch_uuid"):
            switch = self.switches.get(nic["switch_uuid"])
            if not switch or not any(pg.get("key") == nic.get("portgroup_key") for pg in switch.get("portgroups") or []):
                return False
            members = switch.get("hosts")
            return members is None or vm.get("host") in members
        host = self.hosts.get(vm.get("host"))
        return bool(host) and any(pg.get("name") == nic.get("network") for pg in host.get("portgroups") or [])

    def portgroup_vlan(self, host_name, name):
        """VLAN of the standard port group `name` on one host, or None when the host lacks it."""
        host = self.hosts.get(host_name) or {}
        return next((pg.get("vlan") for pg in host.get("portgroups") or [] if pg.get("name") == name), None)

    def network_vlan(self, name):
        """The VLAN the standard port group carries on most hosts: the segment its subnet, gateway and peers are on.

        Ties go to the lowest VLAN (an inference: the twin has one physical segment per port group name).
        """
        counts = {}
        for host in self.hosts.values():
            vlan = self.portgroup_vlan(host["name"], name)
            if vlan is not None:
                counts[vlan] = counts.get(vlan, 0) + 1
        return min(counts, key=lambda vlan: (-counts[vlan], vlan)) if counts else None

    def uplink_problem(self, vm, nic):
        """Why the standard vSwitch of the NIC's port group on the VM's host carries nothing off the host, or None.

        A vSwitch's uplinks are its bridge's physical NICs (HostVirtualSwitchBondBridge.nicDevice); a
        physical NIC without linkSpeed has its link down (PhysicalNic.linkSpeed). A distributed port group
        is not judged here: its uplinks are the distributed switch's, per member host (not modelled).
        An inventory without uplink data (an older twin document) is not judged either.
        """
        if nic.get("switch_uuid"):
            return None
        host = self.hosts.get(vm.get("host")) or {}
        vswitch = next((pg.get("vswitch") for pg in host.get("portgroups") or [] if pg.get("name") == nic.get("network")), None)
        if vswitch is None or host.get("uplinks") is None:
            return None
        devices = host["uplinks"].get(vswitch) or []
        if not devices:
            return "vSwitch %s has no physical uplink" % vswitch
        up = {pnic.get("device"): pnic.get("link_up") for pnic in host.get("pnics") or []}
        if all(up.get(device) is False for device in devices):
            return "every physical uplink of vSwitch %s (%s) has its link down" % (vswitch, ", ".join(devices))
        return None

    def vlan_mismatch(self, vm, nic):
        """(VLAN on the VM's host, the network's VLAN) when a standard port group is tagged otherwise there; else None."""
        if nic.get("switch_uuid"):
            return None  # a distributed port group has one VLAN on every member host
        here = self.portgroup_vlan(vm.get("host"), nic.get("network"))
        wanted = self.network_vlan(nic.get("network"))
        return (here, wanted) if here is not None and wanted is not None and here != wanted else None


def mac_key(mac):
    """MACs compare case-insensitively; nmstate reports them upper-case."""
    return str(mac or "").upper()
