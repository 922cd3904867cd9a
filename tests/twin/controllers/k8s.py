"""Small readers and builders for API objects (plain dicts), shared by the controllers."""

import datetime
import ipaddress


def now():
    """RFC 3339 timestamp with second precision, as metav1.Time serialises."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def name_of(obj):
    return obj["metadata"]["name"]


def labels_of(obj):
    return dict((obj.get("metadata") or {}).get("labels") or {})


def annotations_of(obj):
    return dict((obj.get("metadata") or {}).get("annotations") or {})


def condition(obj, condition_type):
    """The condition of that type in obj.status.conditions, or None."""
    for item in (obj.get("status") or {}).get("conditions") or []:
        if item.get("type") == condition_type:
            return item
    return None


def node_ready(node):
    """Node Ready condition is "True" (OVN-K isEgressNodeReady; anything else is not ready)."""
    ready = condition(node, "Ready")
    return bool(ready) and ready.get("status") == "True"


def node_internal_ip(node, version=4):
    """The first InternalIP of a Node of that IP version (IPv4: else the first of any version), or None."""
    addresses = [address.get("address") for address in (node.get("status") or {}).get("addresses") or []
                 if address.get("type") == "InternalIP"]
    matching = [text for text in addresses if (":" in str(text)) == (version == 6)]
    if matching:
        return matching[0]
    return addresses[0] if addresses and version == 4 else None


def provider_uuid(node):
    """BIOS UUID of the node's VM from spec.providerID `vsphere://<uuid>` (vSphere cloud provider)."""
    provider_id = (node.get("spec") or {}).get("providerID") or ""
    prefix = "vsphere://"
    return provider_id[len(prefix):].lower() if provider_id.startswith(prefix) else None


def parse_interface(text):
    """`10.20.0.11/24` -> IPv4Interface/IPv6Interface, or None when it does not parse."""
    try:
        return ipaddress.ip_interface(str(text).strip())
    except ValueError:
        return None


def parse_ip(text):
    try:
        return ipaddress.ip_address(str(text).strip())
    except ValueError:
        return None


def is_global_unicast(address):
    """Go's net.IP.IsGlobalUnicast: private ranges count, loopback/link-local/multicast do not."""
    if address.is_loopback or address.is_link_local or address.is_multicast or address.is_unspecified:
        return False
    return not (address.version == 4 and address == ipaddress.IPv4Address("255.255.255.255"))


def set_condition(conditions, condition_type, status, reason, message, timestamp, heartbeat=True):
    """Set one condition in a list (kubernetes-nmstate ConditionList.Set), return the new list.

    lastTransitionTime moves only when the status changes; an unchanged condition is left
    as it is so that a reconcile that changes nothing writes nothing.
    """
    result = [dict(item) for item in conditions or []]
    for item in result:
        if item.get("type") != condition_type:
            continue
        if (item.get("status"), item.get("reason", ""), item.get("message", "")) == (status, reason, message):
            return result
        if item.get("status") != status:
            item["lastTransitionTime"] = timestamp
        item.update({"status": status, "reason": reason, "message": message})
        if heartbeat:
            item["lastHeartbeatTime"] = timestamp
        return result
    new = {"type": condition_type, "status": status, "reason": reason, "message": message,
           "lastTransitionTime": timestamp}
    if heartbeat:
        new["lastHeartbeatTime"] = timestamp
    result.append(new)
    return result
