# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The public variables file (docs/variables.md) as one schema, checked before anything is written.

Pure code, standard library only. ``validate(variables)`` takes every ``egressip_*`` variable of the play
({name: value}) and returns findings from the catalogue: ``variables_unknown_key`` for a variable or key the
collection does not know (with the nearest known one: "did you mean route_metric?"), ``variables_invalid`` for a
value of the wrong type, out of bounds or malformed. Messages name the public variable path
(``egressip_network.route_metric``), never a role variable or a Python type. Values are converted the way Ansible
converts module options (``"200"`` is an integer, ``"yes"`` a boolean), so a templated value passes;
``normalized(variables)`` returns them converted. Rules owned elsewhere (addresses, EgressIP objects, the address
plan) stay there and are called by preflight; what is here is the shape every step relies on.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import json

from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding

# The kernel keeps a route's metric (priority) as u32, and so do NetworkManager's routes; nmstate's
# RouteEntry.metric is an i64 that nm/settings/route.rs casts to u32, so a larger value would silently wrap.
ROUTE_METRIC_MAX = 4294967295
# vSphere names of inventory entities (a port group is a Network entity) are at most 80 characters, and
# vCenter stores %, / and \ escaped as %25, %2f, %5c.
VSPHERE_NAME_MAX = 80
VSPHERE_ESCAPED = '%/\\'
VLAN_MAX = 4094
SELECTOR_OPERATORS = ('In', 'NotIn', 'Exists', 'DoesNotExist')
LABEL_SELECTOR_KEYS = ('matchLabels', 'matchExpressions')
# Variables that playbooks of this collection set for their own steps: not part of the file, never refused.
PLAYBOOK_VARIABLES = ('egressip_enable_pending', 'egressip_fleet_failure', 'egressip_enable_converged', 'egressip_enable_steps',
                      'egressip_enable_wrote', 'egressip_enable_record', 'egressip_enable_collection')
SECRET_SHOWN = '(secret value not shown)'
SHOWN_MAX = 160
TRUE_STRINGS = ('y', 'yes', 'on', '1', 'true', 't')
FALSE_STRINGS = ('n', 'no', 'off', '0', 'false', 'f', '')


class Field:
    """One node of the schema: kind ('bool', 'str', 'int', 'number', 'choice', 'dict', 'list', 'map', 'raw'),
    its keys (dict), element (list, map values), bounds, choices, required keys, extra check."""

    def __init__(self, kind, keys=None, element=None, minimum=None, maximum=None, choices=None, required=(), check=None,
                 example=None, secret=False):
        self.kind, self.keys, self.element, self.required = kind, keys or {}, element, required
        self.minimum, self.maximum, self.choices = minimum, maximum, choices
        self.check, self.example, self.secret = check, example, secret


def _str(check=None, example=None):
    return Field('str', check=check, example=example)


def _int(minimum=None, maximum=None, example=None):
    return Field('int', minimum=minimum, maximum=maximum, example=example)


def _bool():
    return Field('bool')


def _choice(*choices):
    return Field('choice', choices=choices)


def _dict(required=(), check=None, **keys):
    return Field('dict', keys=keys, required=required, check=check)


# --- extra checks of single values -----------------------------------------------------------------


def vsphere_name_length(value):
    """The length vCenter counts for a name: %, / and \\ are stored escaped (three characters each)."""
    return sum(3 if char in VSPHERE_ESCAPED else 1 for char in value)


def _portgroup_name(path, value):
    if not value.strip():
        return [_invalid(path, value, 'is empty', 'give the port group name, e.g. ocp-egress-120.')]
    length = vsphere_name_length(value)
    if length > VSPHERE_NAME_MAX:
        return [_invalid(path, value, 'is %d characters long: vSphere limits a network name to %d characters (%%, / and \\ '
                         'count as 3, vCenter escapes them)' % (length, VSPHERE_NAME_MAX),
                         'choose a name of at most %d characters, e.g. ocp-egress-120.' % VSPHERE_NAME_MAX)]
    return []


def label_selector_problems(selector):
    """[(sub-path, value, problem, fix)] for a LabelSelector {matchLabels, matchExpressions}; [] when well formed.

    Shared by the EgressIP selectors (_egressip_validation) and the egress node selector."""
    fix = 'write a LabelSelector: {matchLabels: {team: payments}} and/or {matchExpressions: [{key, operator, values}]}.'
    if not isinstance(selector, dict):
        return [('', selector, 'is not a dictionary', fix)]
    unknown = sorted(str(key) for key in selector if key not in LABEL_SELECTOR_KEYS)
    if unknown:
        hints = ''.join(_did_you_mean(key, LABEL_SELECTOR_KEYS) for key in unknown)
        return [('', selector, 'has key(s) %s; a LabelSelector has only matchLabels and matchExpressions%s' % (', '.join(unknown), hints),
                 fix)]
    problems = []
    labels = selector.get('matchLabels')
    if labels is not None and (not isinstance(labels, dict) or not all(isinstance(value, str) for value in labels.values())):
        problems.append(('.matchLabels', labels, 'is not a map of label to string value',
                         'quote values that YAML reads as numbers or booleans, e.g. {tier: "1"}.'))
    expressions = selector.get('matchExpressions')
    if expressions is not None:
        if not isinstance(expressions, list):
            return problems + [('.matchExpressions', expressions, 'is not a list', fix)]
        for position, expression in enumerate(expressions):
            problems += [('.matchExpressions[%d]' % position, value, problem, hint)
                         for value, problem, hint in _expression_problems(expression)]
    return problems


def _expression_problems(expression):
    example = 'e.g. {key: team, operator: In, values: [payments]}.'
    if not isinstance(expression, dict) or not expression.get('key'):
        return [(expression, 'needs a key and an operator among %s' % ', '.join(SELECTOR_OPERATORS), example)]
    if expression.get('operator') not in SELECTOR_OPERATORS:
        return [(expression, 'has operator %r; a selector operator is one of %s%s' % (
            expression.get('operator'), ', '.join(SELECTOR_OPERATORS), _did_you_mean(expression.get('operator'), SELECTOR_OPERATORS)),
            'use one of %s, %s' % (', '.join(SELECTOR_OPERATORS), example))]
    unknown = sorted(key for key in expression if key not in ('key', 'operator', 'values'))
    if unknown:
        return [(expression, 'has key(s) %s; an expression has only key, operator and values' % ', '.join(unknown),
                 'remove them, e.g. {key: team, operator: In, values: [payments]}.')]
    values = expression.get('values') or []
    if expression['operator'] in ('In', 'NotIn') and not values:
        return [(expression, 'has operator %s but no values' % expression['operator'], 'list the values.')]
    if expression['operator'] in ('Exists', 'DoesNotExist') and values:
        return [(expression, 'has operator %s, which takes no values' % expression['operator'], 'remove values, or use In / NotIn.')]
    return []


def node_selector_problems(path, selector):
    """Findings for egressip_nodes.selector: a label map {label: value} or a LabelSelector."""
    if not isinstance(selector, dict):
        return [_invalid(path, selector, 'is not a dictionary', 'give {label: value} or {matchLabels: ..., matchExpressions: ...}.')]
    if any(key in selector for key in LABEL_SELECTOR_KEYS):
        return [_invalid(path + sub, value, problem, fix) for sub, value, problem, fix in label_selector_problems(selector)]
    findings = []
    for label, value in sorted(selector.items()):
        if isinstance(value, (dict, list)):
            findings.append(_invalid('%s.%s' % (path, label), value, 'is not a label value%s' % _did_you_mean(label, LABEL_SELECTOR_KEYS),
                                     'give a string value (\'\' for a label without value), or write a LabelSelector.'))
    return findings


def _node_selector(path, value):
    return node_selector_problems(path, value)


def _rollout(path, value):
    """egressip_rollout, Ansible's serial: a batch size or a list of them, each a count (1) or a percentage ("25%")."""
    fix = 'give a list of batch sizes, each a number of clusters or a percentage, e.g. [1, "25%"] (the first batch is the canary).'
    for position, size in enumerate(value if isinstance(value, list) else [value]):
        text = str(size).strip()
        number = text[:-1] if text.endswith('%') else text
        if isinstance(size, bool) or not number.isdigit() or int(number) < 1 or (text.endswith('%') and int(number) > 100):
            where = '%s[%d]' % (path, position) if isinstance(value, list) else path
            return [_invalid(where, size, 'is not a batch size (a number of clusters from 1, or a percentage from 1% to 100%)', fix)]
    return [] if value != [] else [_invalid(path, value, 'is empty', fix)]


def _portgroup(required=()):
    """egressip_vsphere.portgroup; a failure domain's portgroup overrides any of its keys (none required there)."""
    return _dict(
        required=required,
        name=_str(check=_portgroup_name), switch_type=_choice('standard', 'distributed'), switch=_str(),
        vlan_id=_int(0, VLAN_MAX, example=120),
        security=_dict(promiscuous=_bool(), mac_changes=_bool(), forged_transmits=_bool()),
        port_binding=_choice('static', 'ephemeral'), num_ports=_int(0, example=8), elastic=_bool())


def _failure_domains(path, value):
    """Each failure domain once: its name is the Infrastructure's failure domain name."""
    names = [entry.get('name') for entry in value if isinstance(entry, dict)]
    twice = sorted(set(str(name) for name in names if names.count(name) > 1))
    if twice:
        return [_invalid(path, value, 'names failure domain(s) %s more than once' % ', '.join(twice),
                         'give one entry per failure domain (its name as in the Infrastructure object), e.g. '
                         '[{name: us-east-1a, cluster: Cluster1, portgroup: {name: ocp-egress-a}}].')]
    return []


SCHEMA = {
    'egressip_acknowledge_unsupported': _bool(),
    'egressip_vsphere': _dict(
        datacenter=_str(), cluster=_str(),
        portgroup=_portgroup(required=('name', 'switch_type', 'switch')),
        # several vSphere clusters behind one OpenShift cluster (model/failure_domains.py, docs/how-it-works.md, Failure domains)
        failure_domains=Field('list', check=_failure_domains, element=_dict(
            required=('name',), name=_str(), datacenter=_str(), cluster=_str(), portgroup=_portgroup())),
        accept_untested_nsx=_bool()),
    'egressip_network': _dict(
        cidr=_str(), gateway=_str(), node_address_range=_str(),
        route_metric=_int(0, ROUTE_METRIC_MAX, example=200),
        ip_forwarding=_choice('per_interface', 'global', 'external'),
        ipv6=_dict(required=('cidr', 'gateway', 'node_address_range'), cidr=_str(), gateway=_str(), node_address_range=_str(),
                   route_metric=_int(0, ROUTE_METRIC_MAX, example=210))),
    'egressip_nodes': _dict(selector=Field('raw', check=_node_selector)),
    'egressip_objects': Field('list', element=_dict(
        required=('name', 'egress_ips', 'namespace_selector'),
        name=_str(), egress_ips=Field('list', element=_str()), namespace_selector=Field('raw'), pod_selector=Field('raw'))),
    'egressip_verify': _dict(
        wire=_dict(echo_target=_str(), echo_target_ipv6=_str(), namespaces=Field('map', element=_str()), create_namespace=_bool(), image=_str(),
                   timeout=_int(1, example=60), probes=_int(1, example=1)),
        remediate=_bool()),
    'egressip_drill': _dict(
        nodes=Field('list', element=_str()), trigger=_choice('unlabel', 'disconnect_nic', 'power_off'),
        confirm_power_off=_bool(), cordon_check=_bool(), wait_timeout=_int(1, example=120),
        poll_interval=Field('number', minimum=0.01, example=1.0), observe_seconds=Field('number', minimum=0, example=10)),
    'egressip_report_dir': _str(),
    # the fleet (docs/fleet.md): the clusters a run covers, its rollout and each cluster's connection (host variables)
    'egressip_hosts': _str(),
    'egressip_rollout': Field('raw', check=_rollout),
    'egressip_max_fail_percentage': Field('number', minimum=0, maximum=100, example=0),
    # enable skips its steps on a cluster its converged record says has not changed (docs/how-it-works.md#the-converged-record)
    'egressip_skip_when_converged': _bool(),
    # kubernetes.core's option names (clients/k8s.py k8s_argument_spec), vmware.vmware's (clients/vsphere_options.py)
    'egressip_kubernetes': _dict(
        kubeconfig=Field('raw', secret=True), context=_str(), host=_str(), api_key=Field('str', secret=True), validate_certs=_bool(),
        ca_cert=_str(), client_cert=_str(), client_key=_str(), proxy=_str(), no_proxy=_str(), impersonate_user=_str(),
        impersonate_groups=Field('list', element=_str())),
    'egressip_vcenter': _dict(
        hostname=_str(), username=_str(), password=Field('str', secret=True), port=_int(1, 65535, example=443), validate_certs=_bool(),
        proxy_host=_str(), proxy_port=_int(1, 65535, example=3128)),
    # the cluster lock of the writing playbooks (roles/cluster_lock, docs/reliability.md)
    'egressip_lock': _dict(namespace=_str(), name=_str(), lease_duration=_int(3, example=60), wait_timeout=_int(0, example=120),
                           progress_interval=_int(0, example=10), max_hold=_int(1, example=21600)),
    # how the guard playbook records a round (roles/guard, docs/guard.md)
    'egressip_guard': _dict(namespace=_str(), status_configmap=_str(), events=_bool(), instance=_str(), remediate=_bool(),
                            max_remediations=_int(1, example=1), hold_down=_int(0, example=1800), min_egress_nodes=_int(0, example=3),
                            lock_wait_timeout=_int(0, example=0),
                            in_cluster=_dict(
        enabled=_bool(), namespace=_str(), schedule=_str(example='* * * * *'), image=_str(), image_pull_secret=_str(),
        vcenter_secret=_str(), starting_deadline_seconds=_int(1, example=50), active_deadline_seconds=_int(1, example=300),
        successful_jobs_history_limit=_int(0, example=1), failed_jobs_history_limit=_int(0, example=3), alerts=_bool(),
        platform_monitoring=_bool(),
        # the quantities are checked where the CronJob is planned (plan/guard_manifests.py resource_problems)
        resources=_dict(requests=Field('map', element=Field('raw')), limits=Field('map', element=Field('raw'))))),
}


# --- findings ------------------------------------------------------------------------------------------


def _option(path):
    return [{'kind': 'option', 'name': path}]


def _invalid(path, value, problem, fix):
    return catalogue_finding('variables_invalid', '%s %s %s.' % (path, _shown(value), problem), objects=_option(path),
                             remedy='%s: %s' % (path, fix))


def _masked(finding, value):
    """The finding without the secret value (as _shown wrote it)."""
    shown = _shown(value)
    return dict(finding, **dict((key, finding[key].replace(shown, SECRET_SHOWN)) for key in ('message', 'remedy')
                                if isinstance(finding.get(key), str)))


def _shown(value):
    """The value as the user wrote it, never transformed (Ansible masks it where it is a secret); long containers by kind."""
    if isinstance(value, (dict, list)):
        try:
            text = json.dumps(value, sort_keys=True)
        except (TypeError, ValueError):
            text = None
        if text is not None and len(text) <= SHOWN_MAX:
            return text
        return '(a dictionary)' if isinstance(value, dict) else '(a list)'
    return repr(value) if isinstance(value, str) else str(value)


def _did_you_mean(key, known):
    close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.6)
    return ' (did you mean %s?)' % close[0] if close else ''


def _unknown(path, key, known, parent):
    where = '%s.%s' % (path, key) if path else str(key)
    hint = _did_you_mean(key, known)
    if path:
        message = '%s is not a key of %s%s.' % (where, parent, hint)
        fix = 'rename or remove it; the keys of %s are %s (docs/variables.md).' % (parent, ', '.join(sorted(known)))
    else:
        message = '%s is not a variable of the ocp.egressip variables file%s.' % (where, hint)
        fix = 'rename or remove it; the variables are %s (docs/variables.md).' % ', '.join(sorted(known))
    return catalogue_finding('variables_unknown_key', message, objects=_option(where), remedy='%s: %s' % (where, fix))


# --- conversion as Ansible's module options do it ----------------------------------------------------


def _as_int(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip('-').isdigit():
        return int(value.strip())
    return None


def _as_number(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    try:
        return float(str(value).strip())
    except ValueError:
        return None


def _as_bool(value):
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in TRUE_STRINGS:
        return True
    if text in FALSE_STRINGS and value is not None:
        return False
    return None


def _scalar(path, field, value):
    """(converted value, findings) for bool, str, int, number and choice fields."""
    if field.kind == 'bool':
        converted = _as_bool(value)
        return converted, [] if converted is not None else [_invalid(path, value, 'is not true or false', 'write true or false.')]
    if field.kind in ('str', 'choice'):
        if isinstance(value, (dict, list)) or value is None:
            return None, [_invalid(path, value, 'is not a string', 'write one value%s.' % _choices_text(field))]
        value = str(value)
        if field.kind == 'choice' and value not in field.choices:
            return None, [_invalid(path, value, 'is not one of %s%s' % (', '.join(field.choices), _did_you_mean(value, field.choices)),
                                   'write one of %s.' % ', '.join(field.choices))]
        return value, field.check(path, value) if field.check else []
    converted = _as_int(value) if field.kind == 'int' else _as_number(value)
    what = 'an integer' if field.kind == 'int' else 'a number'
    if converted is None:
        return None, [_invalid(path, value, 'is not %s' % what, 'write %s%s.' % (what, _example(field)))]
    return converted, _bounds(path, field, converted)


def _choices_text(field):
    return ', one of %s' % ', '.join(field.choices) if field.kind == 'choice' else ''


def _example(field):
    return ', e.g. %s' % field.example if field.example is not None else ''


def _bounds(path, field, value):
    low, high = field.minimum, field.maximum
    if (low is None or value >= low) and (high is None or value <= high):
        return []
    if path.endswith('route_metric'):
        problem = ('is out of range: a route metric is an unsigned 32-bit number for the kernel and NetworkManager (0 to %d); '
                   'nmstate would silently cut a larger one to 32 bits' % ROUTE_METRIC_MAX)
        return [_invalid(path, value, problem, 'give a metric above the primary default route (48) and at most %d, e.g. 200.'
                         % ROUTE_METRIC_MAX)]
    bounds = ('from %s to %s' % (low, high) if high is not None else 'at least %s' % low)
    return [_invalid(path, value, 'is out of range (%s)' % bounds, 'give a value %s%s.' % (bounds, _example(field)))]


# --- the walk ------------------------------------------------------------------------------------------


def _check(path, field, value):
    """(converted value, findings) of one value against its field; a secret value is never shown in a finding."""
    if field.secret:
        converted, findings = _check(path, Field(field.kind, check=field.check), value)
        return converted, [_masked(finding, value) for finding in findings]
    if field.kind == 'raw':
        return value, field.check(path, value) if field.check else []
    if field.kind == 'dict':
        return _check_dict(path, field, value)
    if field.kind in ('list', 'map'):
        return _check_container(path, field, value)
    return _scalar(path, field, value)


def _check_dict(path, field, value):
    if value is None:
        return {}, []
    if not isinstance(value, dict):
        shown = SECRET_SHOWN if any(child.secret for child in field.keys.values()) else value
        return None, [_invalid(path, shown, 'is not a dictionary', 'write it as a mapping of %s (docs/variables.md).'
                               % ', '.join(sorted(field.keys)))]
    converted, findings = {}, []
    for key in value:
        if key not in field.keys:
            findings.append(_unknown(path, key, field.keys, path))
    for key, child in field.keys.items():
        if key not in value or value[key] is None:
            continue
        converted[key], found = _check('%s.%s' % (path, key), child, value[key])
        findings += found
    missing = [key for key in field.required if value.get(key) in (None, '')]
    if missing:
        findings.append(_invalid(path, value, 'has no %s' % ', '.join(missing), 'add %s (docs/variables.md).' % ', '.join(missing)))
    if field.check:
        findings += field.check(path, value)
    return converted, findings


def _check_container(path, field, value):
    if value is None:
        return ([] if field.kind == 'list' else {}), []
    wanted = list if field.kind == 'list' else dict
    if not isinstance(value, wanted):
        what = 'a list' if field.kind == 'list' else 'a dictionary'
        return None, [_invalid(path, value, 'is not %s' % what, 'write it as %s (docs/variables.md).' % what)]
    items = enumerate(value) if field.kind == 'list' else sorted(value.items())
    converted, findings = ([] if field.kind == 'list' else {}), []
    for key, item in items:
        child, found = _check('%s[%s]' % (path, key) if field.kind == 'list' else '%s.%s' % (path, key), field.element, item)
        findings += found
        if field.kind == 'list':
            converted.append(child)
        else:
            converted[key] = child
    if field.check:
        findings += field.check(path, value)
    return converted, findings


def check(variables):
    """(normalized variables, findings) for {egressip_* name: value}."""
    normalized, findings = {}, []
    for name in sorted(variables or {}):
        if name in PLAYBOOK_VARIABLES:
            continue
        if name not in SCHEMA:
            findings.append(_unknown('', name, SCHEMA, ''))
            continue
        if variables[name] is None:
            continue
        normalized[name], found = _check(name, SCHEMA[name], variables[name])
        findings += found
    return normalized, findings


def field_findings(path, value):
    """The findings of one value at a dotted public path (``egressip_network.route_metric``), for callers that
    pass module options rather than the variables file."""
    name, _sep, rest = path.partition('.')
    field = SCHEMA[name]
    for key in rest.split('.') if rest else []:
        field = field.keys[key]
    return _check(path, field, value)[1]


def validate(variables):
    """Every finding for the variables file; [] when it fits the schema."""
    return check(variables)[1]
