# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The catalogue entries of the lifecycle: migrate, upgrade, disable, the cluster lock and the permissions of the credentials.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# --- lifecycle: migrate (adopting a hand-made setup), upgrade, before/after comparisons ---------
LIFECYCLE_CHECKS = {
    'migrate_vsphere_target_unknown': {
        'severity': 'error',
        'title': 'Migrate cannot tell which vCenter datacenter and vSphere cluster run the nodes',
        'remedy': 'Give migrate_hints.datacenter and migrate_hints.cluster (the Infrastructure object names none, or several).',
    },
    'migrate_no_secondary_network': {
        'severity': 'error',
        'title': 'Migrate found no secondary network on any node',
        'remedy': 'Nothing to adopt: no node has an address outside the primary network in k8s.ovn.org/host-cidrs. Use the enable playbook instead.',
    },
    'migrate_network_ambiguous': {
        'severity': 'error',
        'title': 'The nodes hold addresses in several secondary subnets of one family and no egress IP tells which one is the egress network',
        'remedy': 'Give migrate_hints.cidr (the IPv4 secondary egress subnet, for example 10.20.0.0/24) or, for IPv6, migrate_hints.ipv6.cidr.',
    },
    'migrate_portgroup_undetermined': {
        'severity': 'error',
        'title': 'Migrate cannot tell which port group carries the secondary NICs',
        'remedy': 'Give migrate_hints.portgroup (the port group name), or check that the node VMs and their NICs are in the vSphere cluster read.',
    },
    'migrate_gateway_unknown': {
        'severity': 'error',
        'title': 'No default route through the secondary NIC names the gateway of the secondary network',
        'remedy': 'Give migrate_hints.gateway; enable then adds the gateway route (metric above br-ex) that DOMAIN prerequisite 5 requires.',
    },
    'migrate_address_range_conflict': {
        'severity': 'error',
        'title': 'No single address range covers the node base addresses without also covering an egress IP or the gateway',
        'remedy': 'Give migrate_hints.node_address_range (first-last or a CIDR block holding every base address and no egress IP).',
    },
    'migrate_address_range_extended': {
        'severity': 'warning',
        'title': 'The node address range was extended beyond the addresses in use, for nodes that have no base address yet',
        'remedy': 'Check that the added addresses are free on the secondary network (migrate sees only node and EgressIP addresses).',
    },
    'migrate_node_incomplete': {
        'severity': 'warning',
        'title': 'A node has a secondary NIC without an address, or an address without a NIC on the port group',
        'remedy': 'Nothing to do if the node should be an egress node: enable adds what is missing. Otherwise take the NIC off first.',
    },
    'migrate_nic_disconnected': {
        'severity': 'warning',
        'title': 'A secondary NIC is not connected (now or at power-on); enable will connect it',
        'remedy': 'Find out why it was disconnected; while it is, egress IPs on that node are blackholed (DOMAIN section 6).',
    },
    'migrate_nic_not_adoptable': {
        'severity': 'error',
        'title': 'A secondary NIC is not what the vSphere step accepts (not vmxnet3, or two NICs on the port group)',
        'remedy': 'Replace the NIC by one vmxnet3 NIC on the port group in a maintenance window; migrate never changes NICs itself.',
    },
    'migrate_policy_duplicate': {
        'severity': 'warning',
        'title': 'A hand-made NMState policy configures the secondary NIC; after adoption two policies describe it',
        'remedy': 'After the adoption has been verified, set node_network_replace_hand_made: true in the variables file and run enable: '
                  'it deletes the hand-made policies that configure only that NIC once the collection\'s policy is Available there and '
                  'reports the others, which you delete or trim yourself (deleting a policy never changes the node).',
    },
    'migrate_object_name_taken': {
        'severity': 'error',
        'title': 'An object made by hand has the name the collection uses, without its ownership label',
        'remedy': 'Delete or rename that object (deleting an NMState policy never changes the node), then run migrate again.',
    },
    'migrate_address_not_from_nmstate': {
        'severity': 'warning',
        'title': 'A node base address does not come from any NMState policy',
        'remedy': 'The collection takes the NIC over with an NMState policy; NetworkManager may reactivate the NIC. Adopt in a maintenance window.',
    },
    'migrate_ipv6_dynamic': {
        'severity': 'warning',
        'title': 'A hand-made NMState policy gives the secondary NIC IPv6 addresses by autoconf (SLAAC) or DHCPv6',
        'remedy': 'Set autoconf: false and dhcp: false in the ipv6 part of the hand-made policy (or delete it once the adoption is '
                  'verified) so that it and the collection\'s policy agree; the base address and the gateway route stay.',
    },
    'migrate_interface_names_differ': {
        'severity': 'warning',
        'title': 'The hand-made NMState policies give the secondary NIC different profile names',
        'remedy': 'The collection uses one name (node_network_interface_name); nodes with another name get a new NetworkManager profile.',
    },
    'migrate_forwarding_by_hand': {
        'severity': 'warning',
        'title': 'IP forwarding on the secondary NIC comes from a Tuned profile made by hand',
        'remedy': 'Read the message: either the collection takes over (then remove forwarding from your profile) or it stays yours (external).',
    },
    'migrate_labelled_outside_selection': {
        'severity': 'warning',
        'title': 'Nodes outside the discovered egress nodes carry the egress-assignable label',
        'remedy': 'Nothing to do: the variables file sets egress_nodes_exclusive: false so enable leaves their label alone.',
    },
    'migrate_label_would_be_removed': {
        'severity': 'error',
        'title': 'Enable would remove the egress-assignable label from a node that hosts egress IPs, moving them',
        'remedy': 'Make the node capable again (NIC connected and up, address in host-cidrs) before adopting; migrate never moves an egress IP.',
    },
    'migrate_selector_by_hostname': {
        'severity': 'info',
        'title': 'No node label selects exactly the egress nodes; the selector lists their hostnames',
        'remedy': 'Optionally label the egress nodes (for example node-role.kubernetes.io/egress) and use that label as egressip_nodes.selector.',
    },
    'migrate_egressip_not_adoptable': {
        'severity': 'warning',
        'title': 'An EgressIP object cannot be described by the variables file and is left as it is',
        'remedy': 'Read the reason; the object keeps working, but the collection neither checks nor changes it.',
    },
    'migrate_egressip_sdn_converted': {
        'severity': 'info',
        'title': 'An EgressIP object was created by the OpenShift SDN to OVN-Kubernetes migration',
        'remedy': 'Nothing to do; it keeps its name (renaming would move its IPs). On the primary network it stays outside the variables file.',
    },
    'migrate_adoption_plan': {
        'severity': 'info',
        'title': 'What running enable with the discovered variables changes (gaps it closes)',
        'remedy': 'Review, then run migrate with migrate_adopt: true (or enable with the variables file).',
    },
    'lifecycle_egress_ip_moved': {
        'severity': 'error',
        'title': 'An egress IP is on another node than before',
        'remedy': 'Read the message for the nodes; no failback exists, so the IP stays where it is until its node fails or loses its label.',
    },
    'lifecycle_egress_ip_unassigned': {
        'severity': 'error',
        'title': 'An egress IP that was assigned before is unassigned now',
        'remedy': 'Run the verify playbook; check the EgressIP events and that enough labelled, capable nodes are Ready.',
    },
    'lifecycle_egress_ip_removed': {
        'severity': 'error',
        'title': 'An egress IP or EgressIP object that existed before is gone',
        'remedy': 'Find who changed the EgressIP object (the variables file, GitOps, by hand) and restore it if that was not intended.',
    },
    'lifecycle_address_dropped': {
        'severity': 'error',
        'title': 'A node lost an address from k8s.ovn.org/host-cidrs',
        'remedy': 'Check the NMState policies and enactments of that node and its VM NIC; egress IPs of that subnet cannot stay on it.',
    },
    'lifecycle_label_removed': {
        'severity': 'warning',
        'title': 'A node lost the egress-assignable label',
        'remedy': 'Intended if the node left the egress nodes; otherwise run enable to label the capable nodes again.',
    },
    'lifecycle_baseline_invalid': {
        'severity': 'error',
        'title': 'The snapshot to compare with is missing, unreadable or from another cluster',
        'remedy': 'Run the upgrade playbook with upgrade_phase=pre first and keep its snapshot file; give its path as upgrade_snapshot_file.',
    },
    'upgrade_target_version_unsupported': {
        'severity': 'error',
        'title': 'The target OpenShift version is older than 4.14, older than the current one, or unreadable',
        'remedy': 'Upgrade to 4.14 or newer (secondary-interface EgressIP needs it); OpenShift does not support downgrades.',
    },
    'upgrade_target_version_unknown': {
        'severity': 'info',
        'title': 'No target version was given or requested in ClusterVersion; only the current version was checked',
        'remedy': 'Give upgrade_target_version to check it too.',
    },
    'upgrade_capacity_insufficient': {
        'severity': 'error',
        'title': 'During the rolling reboots too few capable egress nodes stay up for an EgressIP object',
        'remedy': 'Label more capable egress nodes, lower maxUnavailable of the MachineConfigPool, or give the object fewer IPs before upgrading.',
    },
    'upgrade_pools_not_read': {
        'severity': 'info',
        'title': 'MachineConfigPools could not be read; maxUnavailable was taken from upgrade_default_max_unavailable',
        'remedy': 'Give upgrade_max_unavailable if your pools roll more than one node at a time, or grant list on machineconfigpools.',
    },
    'upgrade_nmstate_not_ready': {
        'severity': 'error',
        'title': 'NMState is missing, or an egress node address policy is not Available',
        'remedy': 'Fix NMState first: after each reboot the node base address comes back only through its policy.',
    },
    'upgrade_address_not_persistent': {
        'severity': 'warning',
        'title': 'An egress node base address does not come from an NMState policy of the collection',
        'remedy': 'Confirm it survives a reboot (NetworkManager keyfile, MachineConfig), or adopt it with the migrate playbook.',
    },
    'upgrade_version_changed': {
        'severity': 'info',
        'title': 'The OpenShift version changed since the snapshot',
        'remedy': 'Nothing to do; recorded for the report.',
    },
    'upgrade_placement_skewed': {
        'severity': 'info',
        'title': 'After the rolling reboots the egress IPs are spread unevenly (OVN-Kubernetes has no failback)',
        'remedy': 'Nothing is broken; to spread them again, remove and re-add the label of a loaded node in a quiet period (this moves its IPs).',
    },
    'upgrade_marked_object_incomplete': {
        'severity': 'warning',
        'title': 'An object carries the collection label but lacks marks this version relies on',
        'remedy': 'Run the upgrade playbook with upgrade_phase=collection (enable converges it; addresses held are kept).',
    },
    'upgrade_managed_objects': {
        'severity': 'info',
        'title': 'The objects this collection manages, recognised by their ownership label',
        'remedy': 'Nothing to do; enable converges them to what this version of the collection writes.',
    },
    'guard_object_not_owned': {
        'severity': 'error',
        'title': 'An object with a name the in-cluster guard uses exists but was not created by this collection',
        'remedy': 'Delete or rename that object, choose another egressip_guard.in_cluster.namespace, or label it '
                  'egressip.ocp/managed-by=ocp.egressip to hand it to the collection (disable then deletes it).',
    },
}


# --- one writer per cluster: the lock Lease (cluster_lock module, every writing playbook) ---------
LOCK_CHECKS = {
    'cluster_lock_held': {
        'severity': 'error',
        'title': 'Another run holds the cluster lock (the Lease egressip-lock): one writer per cluster',
        'remedy': 'Wait until the run named ends (its Lease is released), or raise egressip_lock.wait_timeout; '
                  'a killed run\'s Lease expires by itself after leaseDurationSeconds once nothing of that run is left.',
    },
    'cluster_lock_lost': {
        'severity': 'warning',
        'title': 'The cluster lock of this run was taken by another holder before the run released it',
        'remedy': 'The renewal stopped (API unreachable longer than the lease duration, or the run was stopped): '
                  'run verify, then rerun the writing playbook once the other run has ended.',
    },
    'cluster_lock_owner_unknown': {
        'severity': 'error',
        'title': 'The cluster lock cannot tell which run it belongs to (no ansible-playbook process above the module)',
        'remedy': 'Run the playbooks with ansible-playbook on a Linux controller, or give the module a holder identity of your own.',
    },
}


# --- permissions of the credentials (preflight, _permissions.py, docs/rbac.md) ---------------
PERMISSION_CHECKS = {
    'kube_permission_missing': {
        'severity': 'error',
        'title': 'The Kubernetes credentials lack a permission (verb and resource) the playbook uses',
        'remedy': 'Bind the ClusterRole of the playbook (rbac/<playbook>.yml, docs/rbac.md) to the user or service account that runs it.',
    },
    'kube_permission_unchecked': {
        'severity': 'warning',
        'title': 'The API refused the SelfSubjectAccessReviews, so the permissions of the credentials were not checked',
        'remedy': 'Allow create on selfsubjectaccessreviews.authorization.k8s.io (the system:basic-user ClusterRole does), or accept the gap.',
    },
    'vcenter_privilege_missing': {
        'severity': 'error',
        'title': 'The vCenter account lacks a privilege the playbook uses on the vSphere cluster, its hosts or VMs',
        'remedy': 'Give the account the vCenter role of the playbook (docs/rbac.md) on the datacenter, propagating to its children.',
    },
}
