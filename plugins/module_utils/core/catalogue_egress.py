# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The catalogue entries of the node and EgressIP checks (preflight, the node steps, egressip, verify, the drill).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# --- node network: addresses, routes, forwarding, labels -------------------------------------
NODE_CHECKS = {
    'node_network_input_invalid': {
        'severity': 'error',
        'title': 'An option of the secondary network or node list is malformed',
        'remedy': 'Correct the named option as the message says and run again.',
    },
    'node_gateway_outside_cidr': {
        'severity': 'error',
        'title': 'The secondary gateway is not inside the secondary cidr',
        'remedy': 'Set egressip_network.gateway to the router address of egressip_network.cidr.',
    },
    'node_address_range_outside_cidr': {
        'severity': 'error',
        'title': 'node_address_range is not inside the secondary cidr',
        'remedy': 'Choose egressip_network.node_address_range inside egressip_network.cidr.',
    },
    'node_address_range_reserved': {
        'severity': 'error',
        'title': 'node_address_range includes the network, broadcast or gateway address',
        'remedy': 'Start the range after the network and gateway addresses and end it before the broadcast address.',
    },
    'node_address_range_too_small': {
        'severity': 'error',
        'title': 'node_address_range has fewer free addresses than nodes to address',
        'remedy': 'Widen egressip_network.node_address_range, or address fewer nodes.',
    },
    'node_network_overlaps_host_subnet': {
        'severity': 'error',
        'title': 'The secondary cidr overlaps the primary machine network or another host subnet',
        'remedy': 'Use a secondary subnet that no node already has on another interface (DOMAIN: prerequisite 4).',
    },
    'node_address_in_use': {
        'severity': 'error',
        'title': 'A node base address is already used by another node or an EgressIP object',
        'remedy': 'Free the address, or give the node another one; allocations never move on their own.',
    },
    'node_address_allocation_fixed': {
        'severity': 'error',
        'title': 'A node already has an allocation that would have to move',
        'remedy': 'Allocations never move: release the node with state: absent first (it loses its address), then run again.',
    },
    'node_object_not_owned': {
        'severity': 'error',
        'title': 'A policy or Tuned with the name the collection uses exists but was not created by it',
        'remedy': 'Rename or delete that object, or label it egressip.ocp/managed-by=ocp.egressip to let the collection adopt it.',
    },
    'node_policy_degraded': {
        'severity': 'error',
        'title': 'NMState could not apply the secondary NIC address on a node',
        'remedy': 'Read the enactment message: usually the MAC has no NIC on that node VM (NIC not added or wrong MAC).',
    },
    'node_nic_not_in_state': {
        'severity': 'error',
        'title': 'The NodeNetworkState of a node does not list its secondary NIC (needed for the route\'s kernel interface name)',
        'remedy': 'Check that the MAC is the one of the node VM\'s secondary NIC (vsphere_vm_nic\'s result) and that the NMState '
                  'handler runs on the node (oc get nns <node> -o yaml). NodeNetworkState is refreshed about every 60 s; raise '
                  'state_wait_timeout (node_network_state_wait_timeout) if the cluster is slower.',
    },
    'node_address_claim_conflict': {
        'severity': 'error',
        'title': 'Another writer claimed the same node base address at the same time, again and again',
        'remedy': 'Several runs write the node addresses of this cluster at once without the cluster lock; let one finish '
                  '(ocp.egressip.cluster_lock) and run again: the policies stay parked (matching no node) until then.',
    },
    'node_nmstate_version': {
        'severity': 'info',
        'title': 'The nmstate release of the NMState handler on the nodes',
        'remedy': 'Nothing to do: the collection names the kernel interface in routes, which every nmstate release accepts.',
    },
    'kube_tls_unverified': {
        'severity': 'warning',
        'title': 'The Kubernetes API certificate is not checked',
        'remedy': 'Give the CA of the API (ca_cert / K8S_AUTH_SSL_CA_CERT, or certificate-authority-data in the kubeconfig) and leave '
                  'validate_certs on; under AAP fill the CA field of the Bearer Token credential or use the kubeconfig credential type '
                  '(docs/aap.md).',
    },
    'vcenter_tls_unverified': {
        'severity': 'warning',
        'title': 'The vCenter certificate is not checked',
        'remedy': 'Trust the vCenter CA (system trust store, SSL_CERT_FILE or OCP_EGRESSIP_VCENTER_CA_BUNDLE) and set validate_certs true; '
                  'under AAP use the collection\'s vCenter credential type, extensions/aap/credential_types/vcenter.yml (docs/aap.md).',
    },
    'node_nmstate_version_unknown': {
        'severity': 'warning',
        'title': 'The nmstate release of the NMState handler could not be read',
        'remedy': 'Check that the NMState handler runs on every node (oc get nns -o yaml shows status.handlerNmstateVersion); the '
                  'collection does not depend on the release, but a support case needs it.',
    },
    'node_policy_timeout': {
        'severity': 'error',
        'title': 'A NodeNetworkConfigurationPolicy did not become Available in time',
        'remedy': 'Check the NodeNetworkConfigurationEnactment of the node and the nmstate handler pod, or raise wait_timeout.',
    },
    'node_policy_orphaned': {
        'severity': 'warning',
        'title': 'A policy of the collection names a node that no longer exists; its address stays reserved',
        'remedy': 'Release it with state: absent for that node to free the address.',
    },
    'node_hosts_egress_ips': {
        'severity': 'error',
        'title': 'Removing a node\'s address or label would strand the egress IPs it hosts',
        'remedy': 'Move the egress IPs first (label a capable replacement node), or set force: true to accept the interruption.',
    },
    'node_hosts_unowned_egress_ips': {
        'severity': 'error',
        'title': 'Removing a node\'s label would move an egress IP this collection does not own',
        'remedy': 'Keep the label: hand it back (oc annotate node <node> egressip.ocp/egress-assignable-, so it counts as set by hand), '
                  'or move that egress IP first, or set force: true to accept the move.',
    },
    'egress_label_set_by_hand': {
        'severity': 'warning',
        'title': 'A node carries the egress-assignable label without the record that this collection set it',
        'remedy': 'Leave it (it is kept), hand it over with adopt: true (egress_nodes_adopt) or '
                  'oc annotate node <node> egressip.ocp/egress-assignable=ocp.egressip, or remove it by hand.',
    },
    'node_route_metric_too_low': {
        'severity': 'error',
        'title': 'The secondary gateway route metric is not above the primary default route',
        'remedy': 'Set egressip_network.route_metric above the metric of the primary default route (br-ex stays the default-route interface).',
    },
    'node_network_state_missing': {
        'severity': 'error',
        'title': 'A node has no NodeNetworkState (is the Kubernetes NMState Operator running?)',
        'remedy': 'Install the Kubernetes NMState Operator and create the NMState CR named nmstate, then wait for its handler on the node.',
    },
    'node_nic_not_found': {
        'severity': 'error',
        'title': 'No interface with the NIC\'s MAC address is visible on the node',
        'remedy': 'Check that the vNIC was added to the node VM with this MAC and is connected; NodeNetworkState refreshes within a minute.',
    },
    'node_ip_forwarding_global': {
        'severity': 'warning',
        'title': 'IP forwarding is enabled cluster wide (gatewayConfig.ipForwarding: Global)',
        'remedy': 'Intended when chosen: every interface of every node forwards. Use per_interface to limit it to the secondary NIC.',
    },
    'node_ip_forwarding_off': {
        'severity': 'warning',
        'title': 'IP forwarding is not enabled on the secondary NIC of an egress node',
        'remedy': 'Run ip_forwarding (per_interface or global); without forwarding, egress traffic is silently dropped.',
    },
    'node_forwarding_degraded': {
        'severity': 'error',
        'title': 'TuneD reported an error applying the forwarding profile on a node (Profile Degraded)',
        'remedy': 'Read the TuneD message in the finding (oc -n openshift-cluster-node-tuning-operator get profile <node> -o yaml and the '
                  'tuned pod log of that node), fix its cause, and run again; forwarding stays off on that node until then.',
    },
    'node_forwarding_timeout': {
        'severity': 'error',
        'title': 'The forwarding profile was not reported applied on a node in time',
        'remedy': 'Check the Profile of the node (which profile the operator recommends, the Applied message) and the tuned pod of '
                  'that node, or raise wait_timeout; a Tuned with a lower priority number for the node wins over this one.',
    },
    'node_forwarding_hosts_egress_ips': {
        'severity': 'error',
        'title': 'IP forwarding is not removed from a NIC whose node hosts egress IPs of the secondary network',
        'remedy': 'Delete the EgressIP objects or move their IPs off those nodes first (the disable role deletes them before this '
                  'step), or set force: true to accept that their traffic is dropped once forwarding is off.',
    },
    'node_not_capable': {
        'severity': 'warning',
        'title': 'A node matches the egress node selector but cannot host secondary-network egress IPs',
        'remedy': 'Give the node its secondary NIC and address (vSphere NIC, node_nic_address) and wait for host-cidrs to show the subnet.',
    },
}

# --- egress IPs: plan, placement, verification ------------------------------------------------
EGRESSIP_CHECKS = {
    # Also used here, defined with preflight in PLATFORM_CHECKS: egress_nodes_capacity_insufficient.
    'egressip_input_invalid': {
        'severity': 'error',
        'title': 'An EgressIP entry of the variables file is malformed (name, IP list, selector)',
        'remedy': 'Correct the named field as the message says and run again.',
    },
    'egressip_selector_missing': {
        'severity': 'error',
        'title': 'An EgressIP has no namespace_selector, or an empty one that selects every namespace',
        'remedy': 'Give namespace_selector the labels of the namespaces that should use the egress IPs, e.g. {matchLabels: {team: payments}}.',
    },
    'egressip_outside_network': {
        'severity': 'error',
        'title': 'An egress IP is outside the secondary network (egressip_network.cidr)',
        'remedy': 'Use an address inside egressip_network.cidr; an IP no node network holds is never assigned (NoMatchingNodeFound).',
    },
    'egressip_family_missing': {
        'severity': 'error',
        'title': 'An egress IP is of an IP family the secondary network has no part of (an IPv6 egress IP without egressip_network.ipv6)',
        'remedy': 'Give egressip_network the part of that family (ipv6: {cidr, gateway, node_address_range} for IPv6), or use an egress IP of a family it has.',
    },
    'egressip_link_local': {
        'severity': 'error',
        'title': 'An egress IP is a link-local address (OVN-Kubernetes places egress IPs only in global unicast networks)',
        'remedy': 'Use a global unicast address of the secondary network (unique-local fd00::/8 and private IPv4 ranges are fine).',
    },
    'egressip_reserved_address': {
        'severity': 'error',
        'title': 'An egress IP is the network, broadcast or gateway address of the secondary network',
        'remedy': 'Use a host address of the secondary network other than the gateway.',
    },
    'egressip_in_node_address_range': {
        'severity': 'error',
        'title': 'An egress IP is inside node_address_range, which the address plan keeps for the node NIC base addresses',
        'remedy': 'Choose egress IPs outside egressip_network.node_address_range (e.g. above it), or shrink the range.',
    },
    'egressip_node_address': {
        'severity': 'error',
        'title': 'An egress IP is the address of a node (OVN-Kubernetes refuses it: EgressIPConflict)',
        'remedy': 'Choose an address no node holds; oc get nodes -o yaml shows k8s.ovn.org/host-cidrs of each node.',
    },
    'egressip_claimed': {
        'severity': 'error',
        'title': 'An egress IP is already requested by another EgressIP object (OVN-Kubernetes refuses it: UnsupportedRequest)',
        'remedy': 'Choose another address, or remove it from the other object first (or manage that object here and set exclusive).',
    },
    'egressip_duplicate': {
        'severity': 'error',
        'title': 'An egress IP is listed twice in the EgressIP objects of the variables file',
        'remedy': 'List each egress IP once, in one object.',
    },
    'egressip_not_owned': {
        'severity': 'error',
        'title': 'An EgressIP object of that name exists and was not created by this collection',
        'remedy': 'Rename the entry, or set adopt: true to take the object over (its spec is then replaced by the variables file).',
    },
    'egressip_delete_assigned': {
        'severity': 'error',
        'title': 'Deleting an EgressIP object whose egress IPs are assigned would stop the traffic they carry',
        'remedy': 'Move the workloads off those egress IPs first, or set force: true (disable_force: true, egressips_force: true) '
                  'to delete the object and accept that its egress IPs stop carrying traffic.',
    },
    'egressip_unassigned': {
        'severity': 'error',
        'title': 'An egress IP is not assigned, or not to a node whose host-cidrs hold its network',
        'remedy': 'Read the Warning events quoted in the message (NoMatchingNodeFound: no labelled node holds the subnet; '
                  'EgressIPConflict: a node has the address; UnsupportedRequest: another object claims it), fix the cause, run again.',
    },
    'egressip_single_point_of_failure': {
        'severity': 'warning',
        'title': 'The failure of one node would leave an egress IP unassigned',
        'remedy': 'Label one more capable node (NIC, address, k8s.ovn.org/egress-assignable) than the largest EgressIP object has IPs.',
    },
    # verify: the secondary path of each assigned egress IP, the wire check, blackhole remediation
    'egressip_object_missing': {
        'severity': 'error',
        'title': 'An EgressIP object of the variables file is missing from the cluster, or lacks some of its IPs',
        'remedy': 'Run the enable playbook (or the egressips role) so the cluster holds the objects of the variables file.',
    },
    'egressip_on_unhealthy_node': {
        'severity': 'warning',
        'title': 'An egress IP is still listed on a node that is not Ready or no longer egress-assignable',
        'remedy': 'OVN-Kubernetes moves it within seconds: run verify again. If it stays, read the ovnkube-cluster-manager logs '
                  'in openshift-ovn-kubernetes.',
    },
    'blackhole_forwarding_off': {
        'severity': 'error',
        'title': 'IP forwarding is off on the secondary NIC of a node hosting an egress IP, so its traffic is dropped (blackhole)',
        'remedy': 'Run ip_forwarding (node_network role) and wait until the node\'s Profile reports the profile applied; if its '
                  'Profile is Degraded, fix what TuneD reports. OVN-Kubernetes does not check forwarding and never moves the IP.',
    },
    'egressip_blackhole': {
        'severity': 'error',
        'title': 'An egress IP is assigned to a node whose secondary path is broken, so its traffic is dropped (blackhole)',
        'remedy': 'Fix the path named in the message (reconnect the vNIC, create the port group on every host, restore the base '
                  'address, power the VM on), or run verify with remediate: true to remove the node\'s egress-assignable label so '
                  'OVN-Kubernetes moves the IP to a capable node (OVN-Kubernetes does not notice this failure by itself).',
    },
    'egressip_node_path_broken': {
        'severity': 'warning',
        'title': 'An egress-assignable node hosts no egress IP, but its secondary path is broken: an IP placed there would be dropped',
        'remedy': 'Fix the path named in the message, or remove the node\'s k8s.ovn.org/egress-assignable label until it is fixed '
                  '(verify with remediate: true does).',
    },
    'egressip_node_capacity_lost': {
        'severity': 'warning',
        'title': 'An egress node lost its secondary address when its vNIC was disconnected: a failover and less capacity, not a blackhole',
        'remedy': 'Connect the vNIC again (NetworkManager autoconnect restores the address; the moved IPs do not move back); check '
                  'that the capable nodes left are at least the IPs per EgressIP object + 1.',
    },
    'blackhole_nic_disconnected': {
        'severity': 'error',
        'title': 'The secondary vNIC of an egress node is disconnected but the node keeps its address (ignore-carrier): its IPs stay and are dropped',
        'remedy': 'Connect the vNIC again in vCenter, or run verify with remediate: true so OVN-Kubernetes moves the IPs.',
    },
    'blackhole_portgroup_missing_on_host': {
        'severity': 'error',
        'title': 'The standard port group of an egress node\'s vNIC is missing (removed or renamed) on the ESXi host its VM runs on now',
        'remedy': 'Create the port group with the same name and VLAN on that host (vsphere_portgroup), or move the VM back; '
                  'remediate: true moves the IPs meanwhile.',
    },
    'blackhole_portgroup_vlan_mismatch': {
        'severity': 'error',
        'title': 'The port group has another VLAN on the ESXi host an egress node\'s VM runs on than the network\'s VLAN',
        'remedy': 'Set the port group\'s VLAN on that host back to the network\'s VLAN (vsphere_portgroup), or move the VM; '
                  'remediate: true moves the IPs meanwhile.',
    },
    'blackhole_vswitch_no_uplink': {
        'severity': 'error',
        'title': 'The standard vSwitch of the port group on the ESXi host an egress node\'s VM runs on has no working physical uplink',
        'remedy': 'Bridge a connected physical NIC to that vSwitch on that host (or fix its cable or switch port), or move the VM; '
                  'remediate: true moves the IPs meanwhile.',
    },
    'blackhole_gateway_route_missing': {
        'severity': 'error',
        'title': 'The secondary NIC of an egress node has no route via the network\'s gateway in NodeNetworkState',
        'remedy': 'Run the node step (node_nic_address) so the NIC gets its gateway route back; remediate: true moves the IPs meanwhile.',
    },
    'egressip_remediation_skipped': {
        'severity': 'warning',
        'title': 'Remediation left a broken node labelled: the collection did not set its label, or it hosts egress IPs the collection does not own',
        'remedy': 'Fix the node\'s secondary path, or remove the label yourself once the egress IPs it hosts (for example primary-network '
                  'ones) may move: oc label node <node> k8s.ovn.org/egress-assignable-.',
    },
    'egressip_remediation_deferred': {
        'severity': 'warning',
        'title': 'Remediation left a broken node labelled for now: its hold-down, the floor of egress nodes or the per-run limit',
        'remedy': 'Fix the node\'s secondary path (the other findings say how); a later guard round unlabels it when the limit and '
                  'the hold-down allow, or remove the label yourself: oc label node <node> k8s.ovn.org/egress-assignable-.',
    },
    'egressip_remediation_refused': {
        'severity': 'error',
        'title': 'A node with a broken secondary path was not unlabelled: no capable replacement could take its egress IPs',
        'remedy': 'Fix the node\'s secondary path, or make another node capable first (NIC, address, label); removing the label '
                  'now would leave the IPs unassigned.',
    },
    'egressip_blackhole_remediated': {
        'severity': 'info',
        'title': 'A node with a broken secondary path was unlabelled and OVN-Kubernetes moved its egress IPs',
        'remedy': 'Fix the node\'s secondary path, then label it again (egress_nodes or the enable playbook); the IPs do not move '
                  'back (no failback).',
    },
    'egressip_wire_failed': {
        'severity': 'error',
        'title': 'The echo target off the cluster did not see an egress IP of the object as the source of a probe pod',
        'remedy': 'No answer: check the path of the node hosting the IP (vNIC, port group and VLAN, gateway route, IP forwarding, '
                  'firewall). Another source address: the EgressIP does not select the probe pod, or SNAT happens elsewhere.',
    },
    'egressip_wire_not_checked': {
        'severity': 'warning',
        'title': 'The wire check could not run for an EgressIP object (no namespace it selects, probe pod not run, check mode)',
        'remedy': 'Name a namespace the object selects in wire.namespaces, or set wire.create_namespace: true; check that the '
                  'probe image can be pulled and that the echo target answers.',
    },
    # failover drill: measured moves against the prediction, cordon and failback
    'egressip_drill_not_reassigned': {
        'severity': 'error',
        'title': 'An egress IP that left its node (failover drill, blackhole remediation) was not assigned to another node in time',
        'remedy': 'Check capacity (capable nodes >= IPs per object + 1), the Warning events of the EgressIP and the reachability '
                  'settings; raise the drill timeout on a slow cluster.',
    },
    'egressip_drill_prediction_mismatch': {
        'severity': 'error',
        'title': 'During the failover drill an egress IP landed outside the nodes the prediction allowed',
        'remedy': 'Keep the JSON report and compare its prediction with the cluster state: the placement model and the cluster '
                  'disagree (report it to the collection maintainers).',
    },
    'egressip_drill_wire_not_restored': {
        'severity': 'error',
        'title': 'After a failover the echo target did not see the egress IP again within the timeout',
        'remedy': 'Check the secondary path of the node that took the IP (vNIC, port group, address, forwarding) and stale ARP '
                  'entries for the IP on the gateway (ovn-kubernetes#6553).',
    },
    'egressip_drill_unexpected_move': {
        'severity': 'warning',
        'title': 'An egress IP moved when nothing should (cordon, or failback after the node was restored)',
        'remedy': 'The cluster does not behave as documented (cordon is ignored, no failback): keep the JSON report and check '
                  'the OpenShift version and the ovnkube-cluster-manager logs.',
    },
    'egressip_drill_nothing_to_move': {
        'severity': 'info',
        'title': 'A drilled node hosted no egress IP, so its failure moved nothing',
        'remedy': 'Nothing to do; choose nodes that host egress IPs (the default) to measure reassignment.',
    },
    'guard_input_invalid': {
        'severity': 'error',
        'title': 'The guard was given something other than a verification result',
        'remedy': 'Pass the registered result of ocp.egressip.egressip_verify as verification (the guard role does).',
    },
    'guard_remediation_locked': {
        'severity': 'warning',
        'title': 'The guard round did not remediate: it could not take the cluster lock (another writing run holds it)',
        'remedy': 'Nothing to do when an enable, upgrade or disable is running: the next round remediates once it ended. '
                  'Otherwise see cluster_lock_held (a stale Lease frees itself after its lease duration).',
    },
}
