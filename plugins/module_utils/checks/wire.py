# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verify's wire check, pure parts: the ``wire`` option, the probe namespace and pod, what a probe's log means, and
the wire's findings folded into the verify result (the requests are in checks/verify_io.py).

Pure code: no I/O. Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import INFO
from ansible_collections.ocp.egressip.plugins.module_utils.model.egress_network import normal_ip
from ansible_collections.ocp.egressip.plugins.module_utils.core.selectors import selector_matches

# --- the wire ----------------------------------------------------------------------------------------

PROBE_RUN_LABEL = 'egressip.ocp/probe'
PROBE_OBJECT_LABEL = 'egressip.ocp/egressip'
PROBE_FAMILY_LABEL = 'egressip.ocp/probe-family'  # '6' on the probes to wire.echo_target_ipv6
PROBE_NAMESPACE_PREFIX = 'egressip-probe-'
CURL_MAX_TIME = 5


def validate_wire(wire, field='wire'):
    """Messages (field, value, fix) for a malformed ``wire`` option; empty when it is usable."""
    messages = []
    target = str(wire.get('echo_target') or '').strip()
    host, _sep, port = target.rpartition(':') if target.count(':') == 1 else (target, '', '')
    if not target or '/' in target or ' ' in target or not host or (port and not (port.isdigit() and 0 < int(port) < 65536)):
        messages.append("%s.echo_target=%r is not host:port; give the echo service as host:port, e.g. 192.0.2.10:8080 "
                        "(no scheme, no path)." % (field, wire.get('echo_target')))
    if wire.get('echo_target_ipv6') is not None and _ipv6_target(wire['echo_target_ipv6']) is None:
        messages.append("%s.echo_target_ipv6=%r is not [IPv6 address]:port; give the IPv6 echo service as e.g. [2001:db8::10]:8080 "
                        "(brackets, no scheme, no path)." % (field, wire.get('echo_target_ipv6')))
    for key, low in (('timeout', 1), ('probes', 1)):
        if wire.get(key) is not None and wire[key] < low:
            messages.append('%s.%s=%r must be at least %d.' % (field, key, wire[key], low))
    for name, namespace in sorted((wire.get('namespaces') or {}).items()):
        if not isinstance(namespace, str) or not namespace:
            messages.append('%s.namespaces.%s=%r is not a namespace name; map each EgressIP name to one namespace name.'
                            % (field, name, namespace))
    return messages


def labels_for(selector):
    """Labels that satisfy a LabelSelector (matchLabels, In: first value, Exists: empty), or None when none can."""
    selector = selector or {}
    labels = dict((key, '' if value is None else str(value)) for key, value in (selector.get('matchLabels') or {}).items())
    for expression in selector.get('matchExpressions') or []:
        key, operator, values = expression.get('key'), expression.get('operator'), expression.get('values') or []
        if key in labels:
            continue
        if operator == 'In' and values:
            labels[key] = str(values[0])
        elif operator == 'Exists':
            labels[key] = ''
    try:
        return labels if selector_matches(selector, labels) else None
    except ValueError:
        return None


def probe_namespace(egressip, namespaces, configured=None, create=False):
    """Where to run the probe pod of one EgressIP: (namespace, Namespace body to create or None, reason when nowhere).

    A configured namespace must exist and be selected by the object's namespaceSelector; else
    the first existing selected namespace (by name); else, with ``create``, a namespace
    ``egressip-probe-<object>`` carrying labels that satisfy the selector (deleted after the probe).
    """
    name = egressip['metadata']['name']
    selector = (egressip.get('spec') or {}).get('namespaceSelector') or {}
    live = dict(((item.get('metadata') or {}).get('name'), item) for item in namespaces
                if not (item.get('metadata') or {}).get('deletionTimestamp'))

    def selected(namespace):
        try:
            return selector_matches(selector, (namespace.get('metadata') or {}).get('labels') or {})
        except ValueError:
            return False

    if configured:
        if configured not in live:
            return None, None, 'namespace %s (wire.namespaces) does not exist' % configured
        if not selected(live[configured]):
            return None, None, 'namespace %s is not selected by EgressIP %s (namespaceSelector %s)' % (configured, name, selector)
        return configured, None, None
    for namespace_name in sorted(live):
        if selected(live[namespace_name]):
            return namespace_name, None, None
    if not create:
        return None, None, ('no namespace is selected by EgressIP %s (namespaceSelector %s); name one in wire.namespaces or set '
                            'wire.create_namespace: true' % (name, selector))
    labels = labels_for(dict(selector, matchLabels=dict(selector.get('matchLabels') or {}, **{MANAGED_BY_LABEL: MANAGED_BY_VALUE})))
    if labels is None:
        return None, None, 'no namespace labels can satisfy the namespaceSelector %s of EgressIP %s' % (selector, name)
    target = (PROBE_NAMESPACE_PREFIX + name)[:63].rstrip('-.')
    return target, {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': target, 'labels': labels}}, None


def _ipv6_target(text):
    """The IPv6 address of '[address]:port' (normalized), or None when the text is not that."""
    text = str(text or '').strip()
    if not text.startswith('[') or ']:' not in text:
        return None
    address, port = text[1:].split(']:', 1)
    normal = normal_ip(address)
    return normal if normal and ':' in normal and port.isdigit() and 0 < int(port) < 65536 else None


def echo_targets(wire, egressip):
    """[(echo target, IP family or None)] the probes of one EgressIP go to: ``echo_target`` and, when the object has
    IPv6 egress IPs and ``echo_target_ipv6`` is given, that one too (traffic of each family leaves with an egress IP of
    its own family)."""
    if not wire.get('echo_target_ipv6'):
        return [(wire['echo_target'], None)]
    ips = [normal_ip(ip) or '' for ip in (egressip.get('spec') or {}).get('egressIPs') or []]
    families = set(6 if ':' in ip else 4 for ip in ips if ip) or set([4])
    return [(target, family) for target, family in ((wire['echo_target'], 4), (wire['echo_target_ipv6'], 6)) if family in families]


def probe_pod(egressip, namespace, echo_target, image, run_id, timeout, family=None):
    """(Pod body, reason when the object's podSelector cannot select a probe): a pod that runs curl to the echo target once."""
    name = egressip['metadata']['name']
    pod_selector = (egressip.get('spec') or {}).get('podSelector')
    labels = labels_for(pod_selector) if pod_selector else {}
    if labels is None:
        return None, 'no pod labels can satisfy the podSelector %s of EgressIP %s' % (pod_selector, name)
    labels.update({MANAGED_BY_LABEL: MANAGED_BY_VALUE, PROBE_RUN_LABEL: run_id, PROBE_OBJECT_LABEL: name[:63]})
    if family is not None:
        labels[PROBE_FAMILY_LABEL] = str(family)
    if pod_selector and not selector_matches(pod_selector, labels):
        return None, 'the probe labels do not satisfy the podSelector %s of EgressIP %s' % (pod_selector, name)
    container = {
        'name': 'probe', 'image': image,
        'command': ['curl', '-sS', '--max-time', str(CURL_MAX_TIME), 'http://%s' % echo_target],
        'securityContext': {'allowPrivilegeEscalation': False, 'capabilities': {'drop': ['ALL']}, 'runAsNonRoot': True,
                            'seccompProfile': {'type': 'RuntimeDefault'}},
        'resources': {'requests': {'cpu': '10m', 'memory': '16Mi'}},
    }
    body = {'apiVersion': 'v1', 'kind': 'Pod',
            'metadata': {'generateName': (PROBE_NAMESPACE_PREFIX + name)[:52] + '-', 'namespace': namespace, 'labels': labels},
            'spec': {'restartPolicy': 'Never', 'activeDeadlineSeconds': int(timeout), 'terminationGracePeriodSeconds': 0,
                     'automountServiceAccountToken': False, 'containers': [container]}}
    return body, None


def probe_outcome(pod, log, timeout=None):
    """What one probe pod says: answered (with the source address the echo target saw), no_answer, or not_run."""
    metadata = pod.get('metadata') or {}
    status = pod.get('status') or {}
    phase = status.get('phase')
    text = (log or '').strip()
    outcome = {'egressip': (metadata.get('labels') or {}).get(PROBE_OBJECT_LABEL), 'namespace': metadata.get('namespace'),
               'pod': metadata.get('name'), 'phase': phase, 'outcome': 'no_answer', 'source_ip': None, 'log': text[:300] or None,
               'reason': None}
    family = (metadata.get('labels') or {}).get(PROBE_FAMILY_LABEL)
    if family in ('4', '6'):
        outcome['family'] = int(family)
    if phase == 'Succeeded':
        outcome['outcome'] = 'answered'
        outcome['source_ip'] = normal_ip(text.splitlines()[-1].strip()) if text else None
        return outcome
    if phase == 'Failed':
        outcome['reason'] = text[:300] or status.get('reason') or status.get('message') or 'the probe pod failed'
        return outcome
    started = phase == 'Running' or any(item.get('state', {}).get('running') or item.get('state', {}).get('terminated')
                                        for item in status.get('containerStatuses') or [])
    if not started:
        scheduled = next((item for item in status.get('conditions') or [] if item.get('type') == 'PodScheduled'), {})
        outcome['outcome'] = 'not_run'
        outcome['reason'] = 'the probe pod did not start within %s s (phase %s%s)' % (
            timeout, phase or 'unknown', ': %s' % scheduled['message'] if scheduled.get('message') else '')
        return outcome
    outcome['reason'] = 'the probe pod did not finish within %s s' % timeout
    return outcome


def apply_wire(result, probes):
    """Add the probe pods' outcomes to the rows and findings (returns a new result).

    probes: [{'egressip', 'namespace', 'pod', 'outcome': 'answered'|'no_answer'|'not_run', 'source_ip', 'log', 'reason'}].
    A probe passes when the echo target saw one of the IPs the object has assigned.
    """
    result = copy.deepcopy(result)
    assigned = {}
    for row in result['egress_ips']:
        if row['node']:
            assigned.setdefault(row['egressip'], []).append(row['ip'])
    checked = []
    for probe in probes:
        probe = dict(probe)
        expected = sorted(ip for ip in assigned.get(probe['egressip'], [])
                          if probe.get('family') is None or (':' in ip) == (probe['family'] == 6))
        probe['expected'] = expected
        probe['ok'] = probe['outcome'] == 'answered' and normal_ip(probe.get('source_ip')) in expected
        checked.append(probe)
        result['findings'].append(_probe_finding(probe))
    result['wire'] = checked
    seen = set((probe['egressip'], normal_ip(probe.get('source_ip'))) for probe in checked if probe['ok'])
    for row in result['egress_ips']:
        if (row['egressip'], row['ip']) in seen:
            row['wire'] = 'seen'
    result['findings'] = [item for item in result['findings'] if item is not None]
    return result


def _probe_finding(probe):
    where = 'probe pod %s/%s' % (probe.get('namespace'), probe.get('pod')) if probe.get('pod') else 'the probe'
    objects = [{'kind': 'EgressIP', 'name': probe['egressip']}]
    if probe.get('pod'):
        objects.append({'kind': 'Pod', 'namespace': probe.get('namespace'), 'name': probe.get('pod')})
    if probe['outcome'] == 'not_run':
        severity = INFO if probe.get('check_mode') else None
        return catalogue_finding('egressip_wire_not_checked', 'EgressIP %s: wire check not run: %s.' % (probe['egressip'], probe.get('reason')),
                                 objects=objects, severity=severity)
    if probe['ok']:
        return None
    expected = ', '.join(probe['expected']) or 'none assigned'
    if probe['outcome'] == 'answered':
        text = 'the echo target saw %s from %s, expected one of %s' % (probe.get('source_ip') or repr(probe.get('log')), where, expected)
    else:
        reason = probe.get('reason') or probe.get('log') or 'no answer'
        text = 'the echo target did not answer %s (%s), expected one of %s' % (where, reason, expected)
    return catalogue_finding('egressip_wire_failed', 'EgressIP %s: %s.' % (probe['egressip'], text), objects=objects)
