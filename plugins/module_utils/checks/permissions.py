# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes permissions each playbook uses, the ClusterRoles shipped for them, and the preflight check.

RULES is the single source: rbac/<playbook>.yml is rendered from it (scripts/render_rbac.py; a unit test keeps the
files equal to it), and preflight asks the API server, with one SelfSubjectAccessReview per verb and resource,
whether the credentials hold each rule before the run's first write. The rules were read off the twin's request
log of each playbook's tests (docs/rbac.md says how), not guessed.

A rule: (apiGroup, resource, verbs, scope, when). scope is None (cluster-scoped, or any namespace: the run
derives the namespace from the configuration), or a key of NAMESPACES (a fixed namespace, or the cluster lock's);
when is None (always), 'lock' (only when the run takes the cluster lock) or 'guard' (only when the run applies or
removes the in-cluster guard, egressip_guard.in_cluster.enabled).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools

from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.clients.parallel import run_parallel

PLAYBOOKS = ('enable', 'verify', 'failover_drill', 'support_report', 'migrate', 'upgrade', 'disable', 'render', 'guard')
ROLE_PREFIX = 'ocp-egressip-'
NAMESPACES = {
    'machine_api': 'openshift-machine-api',
    'tuned': 'openshift-cluster-node-tuning-operator',
    'lock': None,  # the cluster lock's namespace (egressip_lock.namespace), given by the caller
    'events': 'default',  # Events on cluster-scoped objects (the EgressIPs) live in default
}
SSAR_PATH = kube.path(kube.SELF_SUBJECT_ACCESS_REVIEWS)
REVIEWS_AT_ONCE = 8
READ = ('get', 'list')

# what every run reads about the cluster (preflight's snapshot, verify's audit)
_CLUSTER_READS = [
    ('config.openshift.io', 'clusterversions', READ, None, None),
    ('config.openshift.io', 'infrastructures', READ, None, None),
    ('config.openshift.io', 'networks', READ, None, None),
    ('operator.openshift.io', 'networks', READ, None, None),
    ('', 'nodes', READ, None, None),
    ('', 'namespaces', READ, None, None),
    ('', 'pods', READ, None, None),
    ('k8s.ovn.org', 'egressips', READ, None, None),
    ('nmstate.io', 'nmstates', READ, None, None),
    ('nmstate.io', 'nodenetworkconfigurationpolicies', READ, None, None),
    ('nmstate.io', 'nodenetworkconfigurationenactments', READ, None, None),
    ('nmstate.io', 'nodenetworkstates', READ, None, None),
    ('tuned.openshift.io', 'tuneds', READ, None, None),
    ('tuned.openshift.io', 'profiles', READ, None, None),
    ('machine.openshift.io', 'machinesets', READ, None, None),
    ('machine.openshift.io', 'machines', READ, None, None),
    # whether the cluster lock is held: every writing module reads it, in check mode too (clients/module_lock.py)
    ('coordination.k8s.io', 'leases', ('get',), 'lock', None),
]
_LOCK = [('coordination.k8s.io', 'leases', ('get', 'create', 'update'), 'lock', 'lock')]
# the wire check: probe pods in the selected namespaces (create, read their log, delete them)
_PROBES = [
    ('', 'pods', ('create', 'deletecollection'), None, None),
    ('', 'pods/log', ('get',), None, None),
    ('', 'namespaces', ('create', 'delete'), None, None),  # the probe namespace, with egressip_verify.wire.create_namespace
]
_LABELS = [('', 'nodes', ('patch',), None, None)]
_MACHINE_API = [
    ('machine.openshift.io', 'machinesets', ('patch',), 'machine_api', None),
    ('machine.openshift.io', 'machines', ('patch',), 'machine_api', None),
]
_REMOVALS = _LABELS + _MACHINE_API + [
    ('k8s.ovn.org', 'egressips', ('patch', 'delete'), None, None),
    ('nmstate.io', 'nodenetworkconfigurationpolicies', ('patch', 'delete'), None, None),
    ('tuned.openshift.io', 'tuneds', ('patch', 'delete'), 'tuned', None),
]
_WRITES = _REMOVALS + [
    ('k8s.ovn.org', 'egressips', ('create',), None, None),
    ('nmstate.io', 'nodenetworkconfigurationpolicies', ('create',), None, None),
    ('tuned.openshift.io', 'tuneds', ('create',), 'tuned', None),
]

# the in-cluster guard's objects (egressip_guard_deploy): one list per kind in all namespaces, then the writes
_GUARD_KINDS = [('', 'namespaces'), ('', 'serviceaccounts'), ('', 'configmaps'), ('batch', 'cronjobs'),
                ('monitoring.coreos.com', 'prometheusrules')] + [
    ('rbac.authorization.k8s.io', plural) for plural in ('clusterroles', 'clusterrolebindings', 'roles', 'rolebindings')]
_GUARD_REMOVAL = [(group, plural, ('list', 'delete'), None, 'guard') for group, plural in _GUARD_KINDS]
# RBAC escalation prevention: who creates the guard's Roles must hold what they grant; of the guard's rules (RULES['guard'])
# enable holds all but the Events it writes in default
_GUARD_APPLY = _GUARD_REMOVAL + [(group, plural, ('create', 'patch'), None, 'guard') for group, plural in _GUARD_KINDS] + [
    ('', 'events', ('create', 'patch'), 'events', 'guard'),
    ('', 'configmaps', ('get',), None, 'guard'),
]

RULES = {
    'enable': _CLUSTER_READS + _LOCK + _PROBES + _WRITES + _GUARD_APPLY,
    # read-only but for the wire check's probe pods; remediation moves labels under the cluster lock
    'verify': _CLUSTER_READS + _PROBES + [('', 'nodes', ('patch',), None, 'lock')] + _LOCK,
    'failover_drill': _CLUSTER_READS + _LOCK + _PROBES + _LABELS,
    'support_report': _CLUSTER_READS,
    'migrate': _CLUSTER_READS + _LOCK + _PROBES + _WRITES,
    'upgrade': _CLUSTER_READS + _LOCK + _PROBES + _WRITES,
    'disable': _CLUSTER_READS + _LOCK + _REMOVALS + _GUARD_REMOVAL,
    'render': _CLUSTER_READS,
    # a guard round: verify (its probe pods), then Events on the EgressIPs and the status ConfigMap beside the lock's Lease;
    # with egressip_guard.remediate, labels moved under the cluster lock
    'guard': _CLUSTER_READS + _PROBES + [('', 'events', ('create', 'patch'), 'events', None),
                                         ('', 'configmaps', ('get', 'create', 'patch'), 'lock', None),
                                         ('', 'nodes', ('patch',), None, 'lock')] + _LOCK,
}


# granted by the shipped ClusterRoles, never required: without it the wire check lists its probe pods until they finish
# instead of watching them in one request (checks/verify_io.py)
_PROBE_WATCH = [('', 'pods', ('watch',), None, None)]
OPTIONAL = dict((playbook, _PROBE_WATCH) for playbook, rules in RULES.items() if _PROBES[0] in rules)


def role_name(playbook):
    return ROLE_PREFIX + playbook.replace('_', '-')


def role_file(playbook):
    return 'rbac/%s.yml' % playbook


def cluster_role(playbook):
    """The ClusterRole a user binds to run the playbook: one PolicyRule per apiGroup and verb set, resources sorted."""
    merged = {}
    for group, resource, verbs, _scope, _when in RULES[playbook] + OPTIONAL.get(playbook, []):
        merged.setdefault((group, resource), set()).update(verbs)
    by_verbs = {}
    for (group, resource), verbs in merged.items():
        by_verbs.setdefault((group, tuple(sorted(verbs))), []).append(resource)
    rules = [{'apiGroups': [group], 'resources': sorted(resources), 'verbs': list(verbs)}
             for (group, verbs), resources in sorted(by_verbs.items())]
    return {'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'ClusterRole',
            'metadata': {'name': role_name(playbook), 'labels': {'app.kubernetes.io/part-of': 'ocp.egressip'}},
            'rules': rules}


def manifest_text(playbook):
    """rbac/<playbook>.yml: a comment saying what it is for, then the ClusterRole (YAML, keys in a fixed order)."""
    role = cluster_role(playbook)
    name = role['metadata']['name']
    lines = ['---',
             '# The Kubernetes permissions of playbooks/%s.yml (docs/rbac.md). Rendered from plugins/module_utils/checks/permissions.py' % playbook,
             '# by scripts/render_rbac.py: edit RULES there, not this file. Bind it to the account that runs the playbook:',
             '#   kubectl apply -f %s' % role_file(playbook),
             '#   kubectl create clusterrolebinding %s --clusterrole=%s --serviceaccount=<namespace>:<name>' % (name, name),
             'apiVersion: %s' % role['apiVersion'], 'kind: %s' % role['kind'], 'metadata:', '  name: %s' % name,
             '  labels:', '    app.kubernetes.io/part-of: ocp.egressip', 'rules:']
    for rule in role['rules']:
        lines.append('  - apiGroups: ["%s"]' % rule['apiGroups'][0])
        lines.append('    resources: [%s]' % ', '.join(rule['resources']))
        lines.append('    verbs: [%s]' % ', '.join(rule['verbs']))
    return '\n'.join(lines) + '\n'


def needed(playbook, lock_namespace=None, takes_lock=True, guard=False):
    """(verb, group, resource, subresource, namespace) the run will ask for, each once, in RULES order; `guard`: the run
    applies or removes the in-cluster guard."""
    seen, out = set(), []
    for group, resource, verbs, scope, when in RULES[playbook]:
        if (when == 'lock' and not takes_lock) or (when == 'guard' and not guard):
            continue
        namespace = lock_namespace if scope == 'lock' else NAMESPACES.get(scope) if scope else None
        plural, _slash, subresource = resource.partition('/')
        for verb in verbs:
            key = (verb, group, plural, subresource, namespace or '')
            if key not in seen:
                seen.add(key)
                out.append(key)
    return out


def _review(client, verb, group, plural, subresource, namespace):
    attributes = dict((key, value) for key, value in (('verb', verb), ('group', group), ('resource', plural),
                                                      ('subresource', subresource), ('namespace', namespace)) if value)
    body = {'apiVersion': 'authorization.k8s.io/v1', 'kind': 'SelfSubjectAccessReview', 'spec': {'resourceAttributes': attributes}}
    return (client.request('create', 'selfsubjectaccessreviews', SSAR_PATH, body=body).get('status') or {})


def describe(verb, group, plural, subresource, namespace):
    resource = plural + ('/' + subresource if subresource else '') + ('.' + group if group else '')
    return '%s %s %s' % (verb, resource, 'in namespace %s' % namespace if namespace else 'cluster-wide')


def check(client, playbook, lock_namespace=None, takes_lock=True, guard=False):
    """Findings for every permission the playbook needs that the credentials lack (kube_permission_missing, one
    finding listing them), or kube_permission_unchecked when the API refuses the reviews themselves."""
    items = needed(playbook, lock_namespace, takes_lock, guard)
    # one review per verb and resource, asked REVIEWS_AT_ONCE at a time (about 50 for enable: 1.5 s one after the other)
    statuses, failures = run_parallel([functools.partial(_review, client, *item) for item in items], limit=REVIEWS_AT_ONCE)
    if failures:
        return [catalogue_finding('kube_permission_unchecked', 'Preflight could not ask the API which permissions the credentials hold '
                                  '(SelfSubjectAccessReview refused: %s); the %s run goes on unchecked.' % (failures[0].msg, playbook))]
    missing = [item for item, status in zip(items, statuses) if not status.get('allowed')]
    if not missing:
        return []
    message = 'The Kubernetes credentials lack %d permission(s) the %s playbook uses: %s.' % (
        len(missing), playbook, '; '.join(describe(*item) for item in missing))
    remedy = ('Bind ClusterRole %s (the file %s of this collection, docs/rbac.md) to the user or service account that runs it: '
              'kubectl apply -f %s; kubectl create clusterrolebinding %s --clusterrole=%s --serviceaccount=<namespace>:<name>.'
              % (role_name(playbook), role_file(playbook), role_file(playbook), role_name(playbook), role_name(playbook)))
    objects = [{'kind': 'ClusterRole', 'name': role_name(playbook)}]
    return [catalogue_finding('kube_permission_missing', message, objects=objects, remedy=remedy)]


# --- vCenter privileges ------------------------------------------------------------------------------------------------
# Privilege ids of the vSphere API (AuthorizationManager.privilegeList) each playbook's vCenter steps use, by the entity
# they act on; System.Anonymous/System.Read/System.View, which every role holds, are not listed. docs/rbac.md has the roles.
_NIC_PRIVILEGES = ('VirtualMachine.Config.AddRemoveDevice', 'VirtualMachine.Config.EditDevice', 'Network.Assign')
VCENTER_PRIVILEGES = {
    'enable': {'standard': {'host': ('Host.Config.Network',), 'vm': _NIC_PRIVILEGES},
               'distributed': {'datacenter': ('DVPortgroup.Create', 'DVPortgroup.Modify'), 'vm': _NIC_PRIVILEGES}},
    'disable': {'standard': {'host': ('Host.Config.Network',), 'vm': ('VirtualMachine.Config.AddRemoveDevice',)},
                'distributed': {'datacenter': ('DVPortgroup.Delete',), 'vm': ('VirtualMachine.Config.AddRemoveDevice',)}},
    'failover_drill': {'any': {'vm': ('VirtualMachine.Interact.PowerOff', 'VirtualMachine.Interact.PowerOn',
                                      'VirtualMachine.Interact.DeviceConnection')}},
}
VCENTER_PRIVILEGES['migrate'] = VCENTER_PRIVILEGES['upgrade'] = VCENTER_PRIVILEGES['enable']  # both run enable's steps


def vcenter_privileges(playbook, switch_type='standard'):
    """{'datacenter'|'host'|'vm': privilege ids} the playbook's vCenter steps use ({} for the read-only playbooks)."""
    by_switch = VCENTER_PRIVILEGES.get(playbook) or {}
    return dict(by_switch.get('any') or by_switch.get(switch_type or 'standard') or {})


def vcenter_findings(privileges, playbook):
    """vcenter_privilege_missing for what read_privileges found missing (privileges None: not checked)."""
    if not privileges or not privileges.get('missing'):
        return []
    grouped = {}
    for item in privileges['missing']:
        grouped.setdefault(item['privilege'], []).append('%s %s' % (item['kind'], item['entity']))
    message = 'The vCenter account %s lacks privilege(s) the %s playbook uses: %s.' % (
        privileges.get('user') or '(unknown)', playbook,
        '; '.join('%s on %s' % (privilege, ', '.join(sorted(where))) for privilege, where in sorted(grouped.items())))
    remedy = ('Give the account a vCenter role with %s (docs/rbac.md lists the role of each playbook) on the datacenter, with '
              '"Propagate to children".' % ', '.join(sorted(grouped)))
    kinds = {'datacenter': 'Datacenter', 'host': 'HostSystem', 'vm': 'VirtualMachine'}
    objects = [{'kind': kinds[kind], 'name': name} for kind, name in sorted(set((item['kind'], item['entity']) for item in privileges['missing']))]
    return [catalogue_finding('vcenter_privilege_missing', message, objects=objects, remedy=remedy)]
