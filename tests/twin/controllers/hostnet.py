"""The simulated network stack of one node: vNICs as kernel links, NetworkManager profiles, routes.

This is the node-local truth that NMState writes into and that ovnkube-node, the NodeNetworkState
report and the wire read. API objects are reports of it, never its source.
"""

import dataclasses
import ipaddress
import time

from .inventory import mac_key

# Primary machine network of the twin (tests/twin/README.md "Seed state"): br-ex holds the
# node's InternalIP with this prefix.
MACHINE_NETWORK = ipaddress.ip_network("192.168.10.0/24")
BRIDGE = "br-ex"
# Dual-stack twin (`--dual-stack`): br-ex also holds the node's IPv6 InternalIP in this /64 (a unique-local prefix of
# the twin's choosing, the same host part as the IPv4 address).
MACHINE_NETWORK_V6 = ipaddress.ip_network("fd00:10::/64")
STACK = {"dual": False}


def configure_stack(dual_stack=False):
    """IPv4 only (default) or dual stack (twin option `--dual-stack`): nodes, Network config, br-ex, annotations."""
    STACK["dual"] = bool(dual_stack)
    return dict(STACK)


# What NetworkManager does when a secondary vNIC loses its carrier (DOMAIN.md section 6).
CARRIER_LOSS_MODES = ("remove", "keep")
# NetworkManager's LINK_DISCONNECT_DELAY (src/nm-device.c): seconds before it acts on a lost carrier.
CARRIER_LOSS_DELAY = 4.0


@dataclasses.dataclass
class CarrierPolicy:
    """Per-cluster NetworkManager behaviour on carrier loss (the `ignore-carrier` setting is unconfirmed on RHCOS).

    remove: without `ignore-carrier`, NetworkManager deactivates the device `delay` seconds after
    the carrier went (device state unavailable, reason carrier-changed): its addresses and routes go.
    keep: with `ignore-carrier` (NetworkManager-config-server), the device stays activated and keeps them.
    Either way, autoconnect activates the profile again when the carrier returns.
    """
    mode: str = "remove"
    delay: float = CARRIER_LOSS_DELAY
    clock: object = time.monotonic


CARRIER = CarrierPolicy()


def configure_carrier(mode="remove", delay=CARRIER_LOSS_DELAY, clock=None):
    """Set the cluster's carrier-loss behaviour (twin option `--carrier-loss`, `--carrier-loss-delay`)."""
    if mode not in CARRIER_LOSS_MODES:
        raise ValueError("carrier loss mode must be one of %s, not %r" % (", ".join(CARRIER_LOSS_MODES), mode))
    CARRIER.mode, CARRIER.delay = mode, float(delay)
    CARRIER.clock = clock or time.monotonic
    return CARRIER


def kernel_names(count=40):
    """Kernel names of vmxnet3 NICs in the order VMware hands out PCI slots.

    On VMware the guest names a vmxnet3 NIC after its PCI slot (systemd "ens<slot>"): the first
    three NICs get slots 192, 224 and 256 (ens192, ens224, ens256); further NICs land on the
    next functions of the PCI bridges: 161, 193, 225, 257, then 162, 194, ... A removed NIC
    frees its slot and the next NIC added takes the lowest free one (inference from how
    vCenter assigns pciSlotNumber; the twin keeps names stable for NICs that stay).
    """
    names = ["ens192", "ens224", "ens256"]
    step = 1
    while len(names) < count:
        names.extend("ens%d" % (base + step) for base in (160, 192, 224, 256))
        step += 1
    return names[:count]


SLOT_NAMES = kernel_names()


class SlotMap:
    """MAC -> kernel name for the NICs of one VM, stable while a NIC exists."""

    def __init__(self, known=None):
        self.by_mac = dict(known or {})

    def refresh(self, macs):
        """Forget removed NICs, name new ones with the lowest free slot (NIC order)."""
        macs = [mac_key(mac) for mac in macs]
        self.by_mac = {mac: name for mac, name in self.by_mac.items() if mac in macs}
        for mac in macs:
            if mac not in self.by_mac:
                used = set(self.by_mac.values())
                self.by_mac[mac] = next(name for name in SLOT_NAMES if name not in used)
        return dict(self.by_mac)


@dataclasses.dataclass
class Profile:
    """A NetworkManager connection written by nmstate (persists on disk across NIC removal).

    `mac` set: `identifier: mac-address` profile (matches that MAC only, name is the profile
    name); otherwise it binds to the kernel interface name `ifname`.
    """
    name: str
    mac: str = None
    ifname: str = None
    up: bool = True
    addresses: tuple = ()
    routes: tuple = ()

    @property
    def key(self):
        return "mac:" + self.mac if self.mac else "name:" + self.ifname


@dataclasses.dataclass
class NodeNet:
    """Persistent per-node network configuration (what NetworkManager has on disk)."""
    profiles: dict = dataclasses.field(default_factory=dict)
    bridge_routes: tuple = ()
    carrier_lost: dict = dataclasses.field(default_factory=dict)  # MAC -> clock time the carrier was first seen lost

    def profile_for(self, link):
        """The profile NetworkManager activates on that link: MAC match first, then name."""
        by_mac = self.profiles.get("mac:" + link.mac)
        return by_mac if by_mac is not None else self.profiles.get("name:" + link.name)


@dataclasses.dataclass
class Link:
    """One vNIC as the guest sees it."""
    name: str
    mac: str
    nic: dict
    primary: bool
    profile: Profile = None
    deactivated: bool = False  # NetworkManager deactivated the device after a carrier loss (mode remove)

    @property
    def connected(self):
        return bool(self.nic.get("connected"))

    @property
    def admin_up(self):
        return self.profile.up if self.profile else True

    @property
    def up(self):
        """Carrier and admin state: a disconnected vNIC has no carrier."""
        return self.connected and self.admin_up

    @property
    def active(self):
        """The profile is activated on the link: admin up and not deactivated by a carrier loss."""
        return bool(self.profile) and self.profile.up and not self.deactivated

    @property
    def addresses(self):
        """Base addresses of the link: gone once NetworkManager deactivated it after a carrier loss (DOMAIN.md section 6)."""
        if self.primary or not self.active:
            return ()
        return self.profile.addresses


@dataclasses.dataclass
class HostView:
    """Everything about one node's network at one instant."""
    node: str
    vm: dict
    links: list
    primary: object
    routes: list
    primary6: object = None  # br-ex's IPv6 address on a dual-stack cluster

    @property
    def primaries(self):
        return [address for address in (self.primary, self.primary6) if address is not None]

    def in_primary(self, ip):
        """Whether an IP lies in a subnet of br-ex (the OVN-managed primary network), either family."""
        return any(ip.version == address.version and ip in address.network for address in self.primaries)

    def link(self, name):
        return next((link for link in self.links if link.name == name), None)

    def link_by_mac(self, mac):
        return next((link for link in self.links if link.mac == mac_key(mac)), None)

    def secondary_addresses(self):
        """(link, address) for every base address outside br-ex, links down included."""
        return [(link, address) for link in self.links for address in link.addresses]

    def link_for(self, ip):
        """Longest-prefix match of an IP over the secondary base addresses (DOMAIN.md section 4).

        /32 and /128 base addresses are ignored, as ovnkube-node does.
        """
        best = None
        for link, address in self.secondary_addresses():
            network = address.network
            if network.prefixlen == network.max_prefixlen or ip.version != network.version or ip not in network:
                continue
            if best is None or network.prefixlen > best[1].network.prefixlen:
                best = (link, address)
        return best


def build_host(node_name, vm, slots, nodenet, internal_ip, internal_ip6=None):
    """HostView from the VM's NICs (inventory), their kernel names and the node's profiles."""
    links = []
    names = slots.refresh([nic.get("mac") for nic in (vm or {}).get("nics") or []]) if vm else {}
    for nic in (vm or {}).get("nics") or []:
        mac = mac_key(nic.get("mac"))
        link = Link(name=names[mac], mac=mac, nic=nic, primary=names[mac] == SLOT_NAMES[0])
        link.profile = nodenet.profile_for(link)
        if not link.primary:
            link.deactivated = track_carrier(nodenet, link)
        links.append(link)
    links.sort(key=lambda link: SLOT_NAMES.index(link.name))
    primary = None
    primary6 = None
    if internal_ip and vm:
        primary = ipaddress.ip_interface("%s/%d" % (internal_ip, MACHINE_NETWORK.prefixlen))
    if internal_ip6 and vm:
        primary6 = ipaddress.ip_interface("%s/%d" % (internal_ip6, MACHINE_NETWORK_V6.prefixlen))
    routes = [dict(route) for route in nodenet.bridge_routes]
    for link in links:
        if link.active:
            routes.extend(dict(route) for route in link.profile.routes)
    return HostView(node=node_name, vm=vm, links=links, primary=primary, routes=routes, primary6=primary6)


def track_carrier(nodenet, link, policy=CARRIER):
    """Whether NetworkManager has deactivated the link by now; remembers when its carrier went.

    The carrier returning forgets the loss: autoconnect activates the profile again.
    """
    if link.connected:
        nodenet.carrier_lost.pop(link.mac, None)
        return False
    now = policy.clock()
    since = nodenet.carrier_lost.setdefault(link.mac, now)
    return policy.mode == "remove" and now - since >= policy.delay
