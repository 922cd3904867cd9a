"""Pure nmstate semantics: apply one desiredState to a node's profiles, render its current state.

Follows nmstate (nmstate.io "Matching Interface using MAC address", rust/src/lib/ifaces):
an interface with `identifier: mac-address` is matched by MAC and `name` becomes the
NetworkManager profile name while the kernel name stays; an interface missing from the host
makes the whole apply fail and roll back (DOMAIN.md section 8).

Routes (rust/src/lib/route.rs `MergedRoutes::new`, query_apply/route.rs `MergedRoutes::verify`):
before nmstate 2.2.43 a route's `next-hop-interface` is taken as a kernel interface name, so a
profile name (of a MAC-matched interface) puts the route on no interface; verification then fails
with "Desired route ... not found after apply" and the whole apply rolls back. nmstate 2.2.43
(PR #2841, `resolve_next_hop_iface_ref`) prefers the kernel name and falls back to a profile name,
refusing a profile name that several interfaces share.

IP families (rust/src/lib/ip.rs `InterfaceIpv4`/`InterfaceIpv6`): `ipv4` and `ipv6` are applied each on its own: a
family the desired interface leaves out keeps what it has, `enabled: false` removes the family's addresses and the
routes of that family through the interface, a static `address` list replaces them. The twin's secondary networks have
no DHCP server and no router advertisements, so `dhcp` / `autoconf` without a static list give no address. IPv6
link-local addresses (fe80::/64, which the kernel adds to every IPv6-enabled link) are not modelled.
"""

import copy
import ipaddress

from .hostnet import BRIDGE, MACHINE_NETWORK, MACHINE_NETWORK_V6, NodeNet, Profile
from .inventory import mac_key


class PolicyError(Exception):
    """nmstatectl refused or rolled back the desired state; the message is nmstate's."""


def failure_message(node, error):
    """Enactment message, shaped as kubernetes-nmstate's NNCP reconciler reports a failed apply."""
    return ("error reconciling NodeNetworkConfigurationPolicy on node %s at desired state apply: \"\",\n"
            " failed to execute nmstatectl set --no-commit --timeout 480: 'exit status 1' '' "
            "'NmstateError: %s'" % (node, error))


# nmstate 2.2.43 (2025-03-25) is the first release with PR #2841 (route next hop by profile name)
PROFILE_NAME_NEXT_HOP_SINCE = (2, 2, 43)
DEFAULT_VERSION = "2.2.38"


def parse_version(text):
    """(major, minor, patch) of an nmstate version such as '2.2.38' or 'nmstatectl 2.2.38'; None when unreadable."""
    parts = str(text or "").split()[-1:] or [""]
    numbers = parts[0].split("-")[0].split(".")
    try:
        return tuple(int(number) for number in numbers[:3])
    except ValueError:
        return None


def resolves_profile_names(version):
    parsed = parse_version(version)
    return parsed is not None and parsed >= PROFILE_NAME_NEXT_HOP_SINCE


def apply_desired_state(nodenet, host, desired, version=DEFAULT_VERSION):
    """New NodeNet after applying `desired` on `host`; raises PolicyError and changes nothing on failure.

    version: the handler's nmstate release; it decides how a route's next-hop-interface is resolved.
    """
    result = copy.deepcopy(nodenet)
    # kernel name -> kernel name, and (2.2.43+) profile name -> [kernel names] of the desired interfaces
    logical = {"kernel": {}, "profiles": {}, "by_profile": resolves_profile_names(version), "absent": set(),
               "ipv4_disabled": set(), "ipv6_disabled": set()}
    for iface in (desired or {}).get("interfaces") or []:
        _apply_interface(result, host, iface, logical)
    for route in ((desired or {}).get("routes") or {}).get("config") or []:
        _apply_route(result, host, route, logical)
    return result


def _resolve_link(host, iface):
    """(link, profile key, profile name) for a desired ethernet interface; link None when absent."""
    name = iface.get("name")
    if iface.get("identifier") == "mac-address":
        mac = iface.get("mac-address")
        if not mac:
            raise PolicyError("InvalidArgument: Desired interface %s has `identifier: mac-address` but not MAC "
                              "address defined" % name)
        link = host.link_by_mac(mac)
        if link is None and iface.get("state") != "absent":
            raise PolicyError("InvalidArgument: Desired interface %s has `identifier: mac-address` with MAC address "
                              "%s, but no interface is holding that MAC address" % (name, mac_key(mac)))
        return link, "mac:" + mac_key(mac), iface.get("profile-name") or name
    link = host.link(name)
    if link is None and iface.get("state") != "absent":
        kind = iface.get("type") or "unknown"
        raise PolicyError("InvalidArgument: Failed to find %s type interface %s in current state" % (kind, name))
    return link, "name:" + str(name), name


def _apply_interface(nodenet, host, iface, logical):
    if (iface.get("type") or "ethernet") not in ("ethernet", "unknown"):
        return  # bonds, VLANs, bridges...: accepted, not modelled by the twin
    link, key, profile_name = _resolve_link(host, iface)
    if link is None:  # state: absent of something that is not there: nothing to do
        nodenet.profiles.pop(key, None)
        return
    if link.primary:
        # br-ex's port: moving it breaks the node's connectivity, nmstate's probes roll it back
        raise PolicyError("rolling back desired state configuration: failed runnig probes after network changes: "
                          "failed runnig probe 'ping' with after network reconfiguration")
    logical["kernel"][link.name] = link.name
    logical["profiles"].setdefault(profile_name, set()).add(link.name)
    if (iface.get("state") or "up") == "absent":
        logical["absent"].add(link.name)
    for family in ("ipv4", "ipv6"):
        if (iface.get(family) or {}).get("enabled") is False:
            logical[family + "_disabled"].add(link.name)
    current = nodenet.profile_for(link)
    for other in [k for k, p in nodenet.profiles.items() if _binds(p, link)]:
        del nodenet.profiles[other]
    state = iface.get("state") or "up"
    if state == "absent":
        return
    profile = Profile(name=profile_name, mac=link.mac if key.startswith("mac:") else None,
                      ifname=None if key.startswith("mac:") else link.name, up=state != "down",
                      addresses=current.addresses if current else (), routes=current.routes if current else ())
    for family, version in (("ipv4", 4), ("ipv6", 6)):
        if family not in iface:
            continue
        kept = tuple(a for a in profile.addresses if a.version != version)
        profile.addresses = kept + _family_addresses(iface.get(family) or {}, version,
                                                     tuple(a for a in profile.addresses if a.version == version))
        if (iface.get(family) or {}).get("enabled") is False:
            # routes through an interface whose family is disabled are removed (MergedRoutes::new)
            profile.routes = tuple(r for r in profile.routes if _route_version(r) != version)
    nodenet.profiles[profile.key] = profile


def _binds(profile, link):
    return profile.mac == link.mac if profile.mac else profile.ifname == link.name


def _route_version(route):
    return 6 if ":" in str(route.get("destination")) else 4


def _family_addresses(config, version, current):
    """The addresses of one family after applying its `ipv4` / `ipv6` section."""
    if config.get("enabled") is False:
        return ()
    if "address" not in config:
        # dhcp / autoconf: the twin's secondary networks have no DHCP server and no router advertisements
        return () if config.get("dhcp") or (version == 6 and config.get("autoconf")) else current
    kind = ipaddress.IPv4Interface if version == 4 else ipaddress.IPv6Interface
    addresses = []
    for entry in config.get("address") or []:
        try:
            addresses.append(kind("%s/%s" % (entry.get("ip"), int(entry.get("prefix-length")))))
        except (ValueError, TypeError) as error:
            raise PolicyError("InvalidArgument: Invalid IPv%d address %s/%s: %s"
                              % (version, entry.get("ip"), entry.get("prefix-length"), error)) from error
    return tuple(addresses)


_ROUTE_KEYS = ("destination", "next-hop-interface", "next-hop-address", "metric", "table-id")


def _route_matches(route, query):
    return all(route.get(key) == value for key, value in query.items() if key in _ROUTE_KEYS)


def route_text(route):
    """A route as nmstate's `impl Display for RouteEntry` writes it in its errors."""
    props = ["state: absent"] if route.get("state") == "absent" else []
    for key in ("destination", "next-hop-interface", "next-hop-address", "source", "metric", "table-id", "weight"):
        if route.get(key) is not None:
            props.append("%s: %s" % (key, route[key]))
    return " ".join(props)


def _next_hop_kernel(host, hop, logical):
    """Kernel name a route's next-hop-interface resolves to, or None (the route lands on no interface)."""
    if hop == BRIDGE or hop in logical["kernel"] or host.link(hop):
        return hop
    kernels = logical["profiles"].get(hop) or set()
    if not logical["by_profile"] or not kernels:
        return None
    if len(kernels) > 1:
        raise PolicyError("InvalidArgument: Route next hop interface %s is referring to multiple interfaces sharing "
                          "the same profile name: %s" % (hop, ", ".join(sorted(kernels))))
    return next(iter(kernels))


def _apply_route(nodenet, host, route, logical):
    """routes.config entries live in the profile of their next-hop interface (NetworkManager)."""
    hop = route.get("next-hop-interface")
    kernel = _next_hop_kernel(host, hop, logical) if route.get("state") != "absent" else (
        hop if hop == BRIDGE or hop in logical["kernel"] or host.link(hop) else None)
    if route.get("state") == "absent":
        query = dict(route, **({"next-hop-interface": kernel} if kernel else {}))
        nodenet.bridge_routes = tuple(r for r in nodenet.bridge_routes if not _route_matches(r, query))
        for profile in nodenet.profiles.values():
            profile.routes = tuple(r for r in profile.routes if not _route_matches(r, query))
        return
    try:
        ipaddress.ip_network(route.get("destination"), strict=False)
    except (ValueError, TypeError) as error:
        raise PolicyError("InvalidArgument: Invalid route destination %s" % route.get("destination")) from error
    if kernel is None:
        # stored on no interface: the apply's verification does not find it and nmstate rolls everything back
        raise PolicyError("VerificationError: Desired route %s not found after apply" % route_text(route))
    for marked, what, version in ((logical["absent"], "absent", None), (logical["ipv4_disabled"], "IPv4 disabled", 4),
                                  (logical["ipv6_disabled"], "IPv6 disabled", 6)):
        if kernel in marked and (version is None or _route_version(route) == version):
            raise PolicyError("InvalidArgument: The next hop interface of desired Route '%s' has been marked as %s"
                              % (route_text(route), what))
    entry = {key: route[key] for key in _ROUTE_KEYS if route.get(key) is not None}
    entry["next-hop-interface"] = kernel
    if kernel == BRIDGE:
        nodenet.bridge_routes = tuple(r for r in nodenet.bridge_routes if r != entry) + (entry,)
        return
    link = host.link(kernel)
    profile = nodenet.profile_for(link)
    if profile is None:
        profile = Profile(name=kernel, ifname=kernel)
        nodenet.profiles[profile.key] = profile
    profile.routes = tuple(r for r in profile.routes if r != entry) + (entry,)


def current_state(host):
    """status.currentState of the node's NodeNetworkState, as `nmstatectl show` reports it."""
    interfaces = [{"name": "lo", "type": "loopback", "state": "up", "mac-address": "00:00:00:00:00:00", "mtu": 65536,
                   "ipv4": {"enabled": True, "address": [{"ip": "127.0.0.1", "prefix-length": 8}]},
                   "ipv6": {"enabled": True, "address": [{"ip": "::1", "prefix-length": 128}]}}]
    primary_link = next((link for link in host.links if link.primary), None)
    if host.primary and primary_link:
        interfaces.append({"name": BRIDGE, "type": "ovs-bridge", "state": "up",
                           "bridge": {"port": [{"name": primary_link.name}, {"name": BRIDGE}]}})
        interfaces.append({"name": BRIDGE, "type": "ovs-interface", "state": "up" if primary_link.up else "down",
                           "mac-address": primary_link.mac, "mtu": 1500,
                           "ipv4": {"enabled": True, "dhcp": True, "address": [_address(host.primary)]},
                           "ipv6": ({"enabled": True, "dhcp": True, "autoconf": False, "address": [_address(host.primary6)]}
                                    if host.primary6 else {"enabled": False})})
    for link in host.links:
        interfaces.append(_link_state(link))
    interfaces.sort(key=lambda entry: (entry["name"], entry["type"]))
    config = [dict(route) for route in host.routes]
    running = [dict(route) for route in config if _route_up(host, route)]
    if host.primary and primary_link and primary_link.up:
        gateway = str(next(MACHINE_NETWORK.hosts()))
        running.append({"destination": "0.0.0.0/0", "next-hop-interface": BRIDGE, "next-hop-address": gateway,
                        "metric": 48, "table-id": 254})
        if host.primary6:
            # configure-ovs gives br-ex ipv6.route-metric 48 as well
            running.append({"destination": "::/0", "next-hop-interface": BRIDGE,
                            "next-hop-address": str(next(MACHINE_NETWORK_V6.hosts())), "metric": 48, "table-id": 254})
    return {"interfaces": interfaces, "routes": {"config": config, "running": running},
            "dns-resolver": {"config": {}, "running": {"server": [str(next(MACHINE_NETWORK.hosts()))]}}}


def _address(interface):
    return {"ip": str(interface.ip), "prefix-length": interface.network.prefixlen}


def _link_state(link):
    entry = {"name": link.name, "type": "ethernet", "state": "up" if link.up else "down",
             "mac-address": link.mac, "mtu": 1500, "ipv6": {"enabled": False}}
    if link.primary:
        entry.update({"controller": BRIDGE, "ipv4": {"enabled": False}})
        return entry
    for family, version in (("ipv4", 4), ("ipv6", 6)):
        addresses = [_address(a) for a in link.addresses if a.version == version]
        entry[family] = {"enabled": False}
        if addresses:
            entry[family] = dict({"enabled": True, "dhcp": False}, **({"autoconf": False} if version == 6 else {}))
            entry[family]["address"] = addresses
    if link.profile and link.profile.mac:
        entry.update({"identifier": "mac-address", "profile-name": link.profile.name})
    return entry


def _route_up(host, route):
    hop = route.get("next-hop-interface")
    if hop == BRIDGE:
        return True
    link = host.link(hop)
    return bool(link) and link.up


def restore_nodenet(nns):
    """Rebuild the persisted profiles from a NodeNetworkState (twin restarted on a kept store)."""
    nodenet = NodeNet()
    state = ((nns or {}).get("status") or {}).get("currentState") or {}
    for entry in state.get("interfaces") or []:
        if entry.get("type") != "ethernet" or entry.get("controller"):
            continue
        addresses = tuple(ipaddress.ip_interface("%s/%s" % (a["ip"], a["prefix-length"]))
                          for family in ("ipv4", "ipv6") for a in (entry.get(family) or {}).get("address") or [])
        if entry.get("identifier") == "mac-address":
            profile = Profile(name=entry.get("profile-name") or entry["name"], mac=mac_key(entry.get("mac-address")),
                              addresses=addresses)
        elif addresses:
            profile = Profile(name=entry["name"], ifname=entry["name"], addresses=addresses)
        else:
            continue
        profile.routes = tuple(r for r in (state.get("routes") or {}).get("config") or []
                               if r.get("next-hop-interface") == entry["name"])
        nodenet.profiles[profile.key] = profile
    nodenet.bridge_routes = tuple(r for r in (state.get("routes") or {}).get("config") or []
                                  if r.get("next-hop-interface") == BRIDGE)
    return nodenet


def slots_from_state(nns):
    """MAC -> kernel name as the NodeNetworkState last reported it."""
    state = ((nns or {}).get("status") or {}).get("currentState") or {}
    return {mac_key(e.get("mac-address")): e["name"] for e in state.get("interfaces") or []
            if e.get("type") == "ethernet" and e.get("mac-address")}
