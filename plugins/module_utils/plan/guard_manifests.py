# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The in-cluster guard as manifests, pure parts: its Namespace, ServiceAccount, least-privilege RBAC, the variables
ConfigMap, the CronJob that runs one guard round a minute in the execution environment image, and the PrometheusRule
whose alerts the cluster's monitoring evaluates.

The RBAC comes from the guard playbook's permission table, which the caller passes (checks/permissions.py
RULES['guard'] and NAMESPACES: a plan does not import checks): the cluster-wide rules in a ClusterRole, the namespaced
ones (the status ConfigMap and the Lease read in the guard's namespace, the Events in ``default``) in a Role per
namespace, so the service account can write nothing else.

Pure code: no I/O. Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from decimal import ROUND_UP, Decimal

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding

NAME = 'egressip-guard'
NAME_LABEL = 'app.kubernetes.io/name'
# what marks an object of the in-cluster guard: the collection's label and the guard's name label, on every object
SELECTOR = '%s=%s,%s=%s' % (MANAGED_BY_LABEL, MANAGED_BY_VALUE, NAME_LABEL, NAME)
# every kind of the in-cluster guard, in apply order (delete in the reverse)
KINDS = ('Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'ConfigMap', 'CronJob', 'PrometheusRule')
VARIABLES_CONFIGMAP = 'egressip-guard-variables'
VARIABLES_DIR = '/etc/ocp-egressip'
VARIABLES_FILE = 'variables.yml'
PLATFORM_MONITORING_LABEL = 'openshift.io/cluster-monitoring'
RUNBOOK = 'docs/guard.md'
DEFAULTS = {
    'namespace': 'ocp-egressip-guard', 'schedule': '* * * * *', 'image': '', 'image_pull_secret': '',
    'vcenter_secret': 'egressip-guard-vcenter', 'starting_deadline_seconds': 50, 'active_deadline_seconds': 300,
    'alerts': True, 'platform_monitoring': True, 'failed_jobs_history_limit': 3, 'successful_jobs_history_limit': 1,
    # a round at 500 nodes peaks at about 160 MiB on the twin (docs/guard.md#resources); given, it replaces this whole
    'resources': {'requests': {'cpu': '100m', 'memory': '256Mi'}, 'limits': {'memory': '512Mi'}},
}
# a Kubernetes resource quantity (k8s.io/apimachinery resource.Quantity): a number, then a binary or decimal SI suffix or
# an exponent
QUANTITY = re.compile(r'^\+?(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$')
BINARY_SI = ('', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei')
DECIMAL_SI = {-9: 'n', -6: 'u', -3: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E'}
DECIMAL_POWERS = dict((text, power) for power, text in DECIMAL_SI.items())
RESOURCE_KEYS = ('requests', 'limits')
# Variables of the public file the guard round reads; connection variables and credentials never go in the ConfigMap.
GUARD_VARIABLES = ('egressip_acknowledge_unsupported', 'egressip_network', 'egressip_vsphere', 'egressip_nodes',
                   'egressip_objects', 'egressip_verify')


def settings(in_cluster):
    """The in-cluster options with their defaults (egressip_guard.in_cluster)."""
    result = dict(DEFAULTS)
    result.update((key, value) for key, value in (in_cluster or {}).items() if value is not None)
    return result


def _metadata(name, namespace=None, labels=None):
    metadata = {'name': name, 'labels': dict({MANAGED_BY_LABEL: MANAGED_BY_VALUE, NAME_LABEL: NAME}, **(labels or {}))}
    if namespace:
        metadata['namespace'] = namespace
    return metadata


def _rules(entries):
    merged = {}
    for group, resource, verbs, _scope, _when in entries:
        merged.setdefault((group, resource), set()).update(verbs)
    by_verbs = {}
    for (group, resource), verbs in merged.items():
        by_verbs.setdefault((group, tuple(sorted(verbs))), []).append(resource)
    return [{'apiGroups': [group], 'resources': sorted(resources), 'verbs': list(verbs)} for (group, verbs), resources in sorted(by_verbs.items())]


def rbac(namespace, rules, namespaces):
    """ServiceAccount, ClusterRole + binding for the cluster-wide rules, a Role + binding per namespace of the others.

    rules: (group, resource, verbs, scope, when) as in checks/permissions.py; namespaces: scope -> namespace, the
    scope 'lock' being the guard's own namespace. The in-cluster guard does not remediate, so it never takes the cluster
    lock: the rules only a run under the lock needs (when 'lock': node labels, the Lease's writes) are left out."""
    subject = [{'kind': 'ServiceAccount', 'name': NAME, 'namespace': namespace}]
    rules = [entry for entry in rules if entry[4] != 'lock']
    cluster_wide = [entry for entry in rules if not entry[3]]
    by_namespace = {}
    for entry in rules:
        if entry[3]:
            target = namespace if entry[3] == 'lock' else namespaces[entry[3]]
            by_namespace.setdefault(target, []).append(entry)
    manifests = [
        {'apiVersion': 'v1', 'kind': 'ServiceAccount', 'metadata': _metadata(NAME, namespace)},
        {'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'ClusterRole', 'metadata': _metadata(NAME), 'rules': _rules(cluster_wide)},
        {'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'ClusterRoleBinding', 'metadata': _metadata(NAME), 'subjects': subject,
         'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole', 'name': NAME}},
    ]
    for target in sorted(by_namespace):
        manifests.append({'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'Role', 'metadata': _metadata(NAME, target),
                          'rules': _rules(by_namespace[target])})
        manifests.append({'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'RoleBinding', 'metadata': _metadata(NAME, target),
                          'subjects': subject, 'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'Role', 'name': NAME}})
    return manifests


def guard_variables(variables, namespace):
    """The variables file of the in-cluster guard: what a round reads, with the status ConfigMap and the lock in its namespace."""
    chosen = dict((key, variables[key]) for key in GUARD_VARIABLES if key in variables)
    chosen['egressip_guard'] = {'namespace': namespace}
    chosen['egressip_lock'] = {'namespace': namespace}
    return chosen


def cronjob(config):
    """The CronJob: one round per schedule, never two at once, a round that cannot start in time is skipped."""
    namespace = config['namespace']
    container = {
        'name': 'guard', 'image': config['image'],
        'command': ['ansible-playbook', '-i', 'localhost,', 'ocp.egressip.guard', '-e', '@%s/%s' % (VARIABLES_DIR, VARIABLES_FILE)],
        # an arbitrary UID (restricted SCC) has no home directory: Ansible's temporary files go to /tmp
        'env': [{'name': 'HOME', 'value': '/tmp'}, {'name': 'ANSIBLE_NOCOLOR', 'value': '1'},
                {'name': 'ANSIBLE_LOCAL_TEMP', 'value': '/tmp/.ansible-local'}],
        'volumeMounts': [{'name': 'variables', 'mountPath': VARIABLES_DIR, 'readOnly': True}],
        'securityContext': {'allowPrivilegeEscalation': False, 'capabilities': {'drop': ['ALL']}, 'runAsNonRoot': True},
        'resources': dict((key, dict((name, canonical_quantity(value)) for name, value in config['resources'][key].items()))
                          for key in RESOURCE_KEYS if config['resources'].get(key)),
    }
    if config['vcenter_secret']:
        # VMWARE_HOST, VMWARE_USER, VMWARE_PASSWORD (and VMWARE_VALIDATE_CERTS); without the Secret the vCenter checks are skipped
        container['envFrom'] = [{'secretRef': {'name': config['vcenter_secret'], 'optional': True}}]
    pod = {'serviceAccountName': NAME, 'restartPolicy': 'Never', 'containers': [container],
           'securityContext': {'runAsNonRoot': True, 'seccompProfile': {'type': 'RuntimeDefault'}},
           'volumes': [{'name': 'variables', 'configMap': {'name': VARIABLES_CONFIGMAP}}]}
    if config['image_pull_secret']:
        pod['imagePullSecrets'] = [{'name': config['image_pull_secret']}]
    labels = {'app.kubernetes.io/name': NAME}
    return {'apiVersion': 'batch/v1', 'kind': 'CronJob', 'metadata': _metadata(NAME, namespace), 'spec': {
        'schedule': config['schedule'], 'concurrencyPolicy': 'Forbid',
        'startingDeadlineSeconds': int(config['starting_deadline_seconds']),
        'successfulJobsHistoryLimit': int(config['successful_jobs_history_limit']),
        'failedJobsHistoryLimit': int(config['failed_jobs_history_limit']),
        'jobTemplate': {'metadata': {'labels': labels}, 'spec': {
            'backoffLimit': 0, 'activeDeadlineSeconds': int(config['active_deadline_seconds']),
            'template': {'metadata': {'labels': labels}, 'spec': pod}}}}}


def alert_rules(namespace):
    """The alerting rules (Prometheus rule-group format): the guard's round failing, the guard not succeeding, and
    OVN-Kubernetes finding an egress node unreachable."""
    jobs = 'namespace="%s", job_name=~"%s-.*"' % (namespace, NAME)
    return [{'name': 'ocp-egressip-guard', 'rules': [
        {'alert': 'EgressIPGuardRoundFailed',
         'expr': '(kube_job_status_failed{%s} > 0) and on (namespace, job_name) (time() - kube_job_status_start_time{%s} < 300)'
                 % (jobs, jobs),
         'labels': {'severity': 'critical'},
         'annotations': {
             'summary': 'A guard round of EgressIP on the secondary network failed: an egress path is broken or the guard cannot run.',
             'description': 'Job {{ $labels.job_name }} in {{ $labels.namespace }} failed. Read the Warning Events of the EgressIP '
                            'objects (oc get events -n default --field-selector involvedObject.kind=EgressIP), the ConfigMap '
                            'egressip-guard-status and the Job log; each finding names its fix (%s#the-guard-failed).' % RUNBOOK,
             'runbook_url': '%s#the-guard-failed' % RUNBOOK}},
        {'alert': 'EgressIPGuardNotSucceeding',
         'expr': 'time() - max by (namespace) (kube_cronjob_status_last_successful_time{namespace="%s", cronjob="%s"}) > 300'
                 % (namespace, NAME),
         'for': '1m',
         'labels': {'severity': 'warning'},
         'annotations': {
             'summary': 'No guard round of EgressIP on the secondary network succeeded for 5 minutes.',
             'description': 'The CronJob %s in {{ $labels.namespace }} has not completed a round for {{ $value | humanizeDuration }}: '
                            'rounds fail, are skipped (startingDeadlineSeconds) or cannot start (image, quota). Nobody is '
                            'watching the egress paths meanwhile (%s#the-guard-is-not-running).' % (NAME, RUNBOOK),
             'runbook_url': '%s#the-guard-is-not-running' % RUNBOOK}},
        {'alert': 'EgressIPNodeUnreachable',
         'expr': 'increase(ovnkube_clustermanager_egress_ips_node_unreachable_total[5m]) > 0',
         'labels': {'severity': 'warning'},
         'annotations': {
             'summary': 'OVN-Kubernetes found an egress node unreachable and moved its egress IPs.',
             'description': 'ovnkube-cluster-manager found egress node(s) unreachable in the last 5 minutes; their egress IPs moved '
                            'to other nodes. Check the nodes and the next guard round (%s#an-egress-node-was-unreachable).' % RUNBOOK,
             'runbook_url': '%s#an-egress-node-was-unreachable' % RUNBOOK}},
    ]}]


def prometheus_rule(namespace):
    return {'apiVersion': 'monitoring.coreos.com/v1', 'kind': 'PrometheusRule', 'metadata': _metadata(NAME, namespace),
            'spec': {'groups': alert_rules(namespace)}}


def manifests(in_cluster, variables, to_yaml, rules, namespaces):
    """Every manifest of the in-cluster guard, in apply order; `to_yaml` renders the variables file of the ConfigMap,
    rules and namespaces are the guard playbook's permissions (see rbac)."""
    config = settings(in_cluster)
    namespace = config['namespace']
    labels = {PLATFORM_MONITORING_LABEL: 'true'} if config['alerts'] and config['platform_monitoring'] else {}
    result = [{'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': _metadata(namespace, labels=labels)}]
    result += rbac(namespace, rules, namespaces)
    result.append({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': _metadata(VARIABLES_CONFIGMAP, namespace),
                   'data': {VARIABLES_FILE: to_yaml(guard_variables(variables, namespace))}})
    result.append(cronjob(config))
    if config['alerts']:
        result.append(prometheus_rule(namespace))
    return result


def input_problems(in_cluster):
    """(key, value, problem, fix) for each wrong option of egressip_guard.in_cluster."""
    config = settings(in_cluster)
    problems = []
    if not config['image']:
        problems.append(('image', config['image'], 'is empty', 'give the execution environment image that has the collection '
                         '(for example the one scripts/ee_context.sh builds, pushed to a registry the cluster can pull from).'))
    if len(str(config['schedule']).split()) != 5:
        problems.append(('schedule', config['schedule'], 'is not a cron schedule of five fields', 'write it as "* * * * *" (every minute).'))
    for key in ('starting_deadline_seconds', 'active_deadline_seconds', 'failed_jobs_history_limit', 'successful_jobs_history_limit'):
        try:
            if int(config[key]) < (1 if 'seconds' in key else 0):
                raise ValueError()
        except (TypeError, ValueError):
            problems.append((key, config[key], 'is not a whole number of at least %d' % (1 if 'seconds' in key else 0), 'give a number.'))
    return problems + resource_problems(config['resources'])


def _parsed_quantity(value):
    """(the number as a Decimal, its format: 'binary', 'decimal' or 'exponent') of a Kubernetes quantity, else None."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    match = QUANTITY.match(str(value).strip())
    if not match:
        return None
    number, suffix = Decimal(match.group(1)), match.group(2) or ''
    if suffix in DECIMAL_POWERS:
        number, form = number.scaleb(DECIMAL_POWERS[suffix]), 'decimal'
    elif suffix in BINARY_SI:
        number, form = number * 1024 ** BINARY_SI.index(suffix), 'binary'
    else:
        number, form = number.scaleb(int(suffix[1:])), 'exponent'
    # the API server keeps nine decimal places, rounding up; a fraction of a byte is no binary amount
    number = number.quantize(Decimal('1e-9'), rounding=ROUND_UP) if number.as_tuple().exponent < -9 else number
    return number, ('decimal' if form == 'binary' and number < 1 else form)


def quantity(value):
    """The number a Kubernetes quantity stands for (a Decimal), or None when `value` is not one (a bool, a negative, text)."""
    parsed = _parsed_quantity(value)
    return parsed and parsed[0]


def canonical_quantity(value):
    """A quantity as the API server stores it (resource.Quantity's canonical form: 0.5 is 500m, 1.5Gi is 1536Mi, 2000 is
    2k), so that what the collection writes reads back the same and a rerun finds nothing to change."""
    number, form = _parsed_quantity(value)
    if number == 0:
        return '0'
    if form == 'binary' and number >= 1024 and number == number.to_integral_value():
        number, power = int(number), 0
        while number % 1024 == 0 and power < len(BINARY_SI) - 1:
            number, power = number // 1024, power + 1
        return '%d%s' % (number, BINARY_SI[power])
    _sign, digits, exponent = number.normalize().as_tuple()
    mantissa = int(''.join(str(digit) for digit in digits) or '0')
    while exponent % 3:
        mantissa, exponent = mantissa * 10, exponent - 1
    if form == 'exponent':
        return '%d%s' % (mantissa, 'e%d' % exponent if exponent else '')
    return '%d%s' % (mantissa, DECIMAL_SI.get(exponent, 'e%d' % exponent))


def resource_problems(resources):
    """(key, value, problem, fix) for the container resources of the CronJob: requests and limits, each a map of resource
    name to quantity, no request above its limit (the API server refuses such a CronJob: 422)."""
    fix = 'write it as a container\'s resources, e.g. {requests: {cpu: 100m, memory: 256Mi}, limits: {memory: 512Mi}}.'
    if not isinstance(resources, dict) or any(key not in RESOURCE_KEYS for key in resources):
        return [('resources', resources, 'is not a map of requests and limits', fix)]
    problems = []
    for key in RESOURCE_KEYS:
        given = resources.get(key) or {}
        if not isinstance(given, dict):
            problems.append(('resources.%s' % key, given, 'is not a map of resource name to quantity', fix))
            continue
        problems += [('resources.%s.%s' % (key, name), value, 'is not a Kubernetes quantity',
                      'give a number with an optional suffix, e.g. 250m (CPU) or 512Mi (memory).')
                     for name, value in sorted(given.items()) if quantity(value) is None]
    requests, limits = resources.get('requests') or {}, resources.get('limits') or {}
    if isinstance(requests, dict) and isinstance(limits, dict):
        for name in sorted(set(requests) & set(limits)):
            wanted, most = quantity(requests[name]), quantity(limits[name])
            if wanted is not None and most is not None and wanted > most:
                problems.append(('resources.requests.%s' % name, requests[name], 'is above its limit %s' % limits[name],
                                 'request at most the limit (the API server refuses the CronJob otherwise).'))
    return problems


def names(in_cluster):
    """{kind: the name of the guard's objects of that kind} (one name per kind: the Namespace is the guard's namespace)."""
    result = dict((kind, NAME) for kind in KINDS)
    result.update(Namespace=settings(in_cluster)['namespace'], ConfigMap=VARIABLES_CONFIGMAP)
    return result


def plan(guard, variables, to_yaml, rules, namespaces):
    """(manifests, refusals) of the in-cluster guard for egressip_guard.in_cluster (`guard`; its key `enabled` is the
    caller's business): what render writes and egressip_guard_deploy applies, or the guard_input_invalid findings."""
    findings = [catalogue_finding('guard_input_invalid', 'egressip_guard.in_cluster.%s %r %s: %s' % (key, value, problem, fix),
                                  objects=[{'kind': 'option', 'name': 'egressip_guard.in_cluster.%s' % key}])
                for key, value, problem, fix in input_problems(guard)]
    if findings:
        return [], findings
    in_cluster = dict((key, value) for key, value in (guard or {}).items() if key != 'enabled')
    return manifests(in_cluster, variables or {}, to_yaml, rules, namespaces), []
