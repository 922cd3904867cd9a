# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report: one row per cluster (inventory host) of one ansible-playbook run, the clusters that failed, the
clusters of the play that have not run (yet), and totals.

``row(inventory, record, time)`` turns what the roles left for one cluster (the ``record`` the fleet_report role builds:
``verify``, ``support``, ``guard``, ``failover_drill``, ``upgrade``, ``migrate``, ``preflight``, ``changes``, ``failure``,
``cluster``, ``playbook``) into the row the report keeps. Only the keys named here are read, each into a value of a known
type, so nothing else of a record (a variable value, a credential) can reach a report file. ``build(rows, clusters)``
makes the report, ``render_markdown`` its Markdown; ``fleet_html.render_html`` its HTML page; JSON is
``report.render_json``.

Drift from the variables file is what verify or the support report found to differ from it: the finding ids in
``DRIFT_IDS`` (an EgressIP object or IP of the variables missing from the cluster, the port group of the variables missing
or on another VLAN, a MachineSet without the secondary port group).

Pure code: no I/O. Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.ocp.egressip.plugins.module_utils.model import cluster_identity as _identity
from ansible_collections.ocp.egressip.plugins.module_utils.reports import report as _report

KIND = 'fleet'
VERDICTS = ('ok', 'warning', 'error', 'failed')
PLAYBOOKS = ('enable', 'verify', 'failover_drill', 'support_report', 'migrate', 'upgrade', 'disable', 'render', 'guard')
# the sources a record may hold, in the order their facts are preferred (egress IPs, the cluster block)
SOURCES = ('verify', 'guard', 'failover_drill', 'support', 'upgrade', 'migrate', 'preflight')
DRIFT_IDS = ('egressip_object_missing', 'portgroup_missing', 'portgroup_vlan_mismatch', 'blackhole_portgroup_vlan_mismatch',
             'machineset_missing_secondary_device')
IP_FIELDS = ('total', 'assigned', 'healthy', 'blackholed')
SECRET_WORDS = ('password', 'passwd', 'token', 'api_key', 'apikey', 'secret', 'client_key', 'credential')
# a word naming a credential, then = or : and its value (quoted, or up to a space or delimiter); "Bearer <token>"
SECRET_VALUE = re.compile(r'(?i)\b([A-Za-z0-9_.-]*(?:%s)[A-Za-z0-9_.-]*)(["\']?\s*[=:]\s*)(\[redacted\]|"[^"]*"|\'[^\']*\'|[^\s,;}\]]+)'
                          % '|'.join(SECRET_WORDS))
BEARER = re.compile(r'(?i)\b(bearer)(\s+)(\[redacted\]|[^\s,;}\]]+)')
URL_USERINFO = re.compile(r'(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]+@')
TEXT_LIMIT, MESSAGE_LIMIT, CHANGES_LIMIT, DRIFT_LIMIT = 200, 1000, 12, 50


def _text(value, limit=TEXT_LIMIT):
    """A plain one-line string (None for nothing), at most `limit` characters; numbers as text, other types dropped."""
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list, tuple)):
        return None
    text = ' '.join(str(value).split())
    if not text:
        return None
    return text if len(text) <= limit else text[:limit - 3] + '...'


def redact(text):
    """`text` with the value after any word naming a credential (``password=...``, ``token: ...``, ``Bearer ...``) and
    the user information of URLs replaced by ``[redacted]``: defence in depth, module messages carry none."""
    if not text:
        return text
    text = URL_USERINFO.sub(r'\1[redacted]@', text)
    for pattern in (SECRET_VALUE, BEARER):
        text = pattern.sub(lambda match: '%s%s[redacted]' % (match.group(1), match.group(2)), text)
    return text


def _count(value):
    """A non-negative integer (also from its text), or None when `value` is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    return value if isinstance(value, int) and value >= 0 else None


def _dict(value):
    return value if isinstance(value, dict) else {}


def _sources(record):
    """{source: dict} of the sources the record holds; a verify result ({report: ...}) counts as its report."""
    found = {}
    for name in SOURCES:
        value = _dict(record.get(name))
        if name in ('verify', 'failover_drill') and isinstance(value.get('report'), dict):
            value = value['report']
        if value:
            found[name] = value
    if 'verify' in found or 'support' in found or 'failover_drill' in found:
        found.pop('preflight', None)  # preflight planned before the run's changes; what ran after it says more
    return found


def _summary_counts(summary):
    """(errors, warnings) of a summary (verify says errors/warnings, the support report and upgrade error/warning)."""
    errors = _count(summary.get('errors', summary.get('error')))
    warnings = _count(summary.get('warnings', summary.get('warning')))
    return errors, warnings


def _findings(sources):
    """The error and warning findings of every source, once each (id, severity, message)."""
    seen, kept = set(), []
    for source in sources.values():
        for item in source.get('findings') or []:
            if not isinstance(item, dict) or item.get('severity') not in ('error', 'warning'):
                continue
            key = (_text(item.get('id')), item.get('severity'), _text(item.get('message'), MESSAGE_LIMIT))
            if key[0] and key not in seen:
                seen.add(key)
                kept.append({'id': key[0], 'severity': key[1], 'message': redact(key[2]) or ''})
    return kept


def _finding_counts(sources, findings):
    """{'errors', 'warnings', 'ids'}: counted from the findings; a source with a summary but no findings (guard) counts too."""
    errors = len([item for item in findings if item['severity'] == 'error'])
    warnings = len(findings) - errors
    for source in sources.values():
        if not isinstance(source.get('findings'), list):
            more_errors, more_warnings = _summary_counts(_dict(source.get('summary')))
            errors, warnings = max(errors, more_errors or 0), max(warnings, more_warnings or 0)
    ids = {}
    for item in findings:
        ids[item['id']] = ids.get(item['id'], 0) + 1
    return {'errors': errors, 'warnings': warnings, 'ids': ids}


def _egress_ips(sources):
    """{total, assigned, healthy, blackholed} from the first source with a verify-like summary (None where unknown)."""
    candidates = [sources.get('verify'), sources.get('guard'), _dict(sources.get('failover_drill')).get('final'), sources.get('support')]
    for source in candidates:
        summary = _dict(_dict(source).get('summary'))
        if _count(summary.get('egress_ips')) is not None:
            values = dict((field, _count(summary.get(field))) for field in IP_FIELDS[1:])
            values['total'] = _count(summary['egress_ips'])
            return values
    return dict((field, None) for field in IP_FIELDS)


def _cluster(record, sources):
    """The cluster block (name, id, openshift_version, api_url): the record's own, else the first report's that has it."""
    blocks = [_dict(record.get('cluster'))]
    blocks += [_dict(_dict(source).get('cluster')) for source in
               (sources.get('verify'), _dict(sources.get('failover_drill')).get('final'), sources.get('failover_drill'),
                sources.get('support'), sources.get('preflight'))]
    upgrade_version = _dict(_dict(sources.get('upgrade')).get('versions')).get('current')
    block = {}
    for field in _identity.FIELDS:
        value = next((item.get(field) for item in blocks if _text(item.get(field))), None)
        if field == 'openshift_version' and value is None:
            value = upgrade_version
        block[field] = _identity.api_url(value) if field == 'api_url' else _text(value)
    return block


def _generated_at(sources):
    for name in ('verify', 'failover_drill', 'support'):
        stamp = _text(_dict(sources.get(name)).get('generated_at'))
        if stamp:
            return stamp
    return None


def _failure(record):
    failure = record.get('failure')
    if not isinstance(failure, dict):
        return None
    return {'task': redact(_text(failure.get('task'))) or 'unknown task',
            'message': redact(_text(failure.get('message'), MESSAGE_LIMIT)) or 'no message'}


def verdict(row):
    """failed (the play failed), error (an error finding), warning (a warning finding or drift), else ok."""
    if row['failure']:
        return 'failed'
    if row['findings']['errors'] or row.get('source_failed'):
        return 'error'
    if row['findings']['warnings'] or row['drift']['count']:
        return 'warning'
    return 'ok'


def row(inventory, record, time=None):
    """The row of one cluster from its record (see the module's documentation); `time` is when its play finished."""
    record = _dict(record)
    sources = _sources(record)
    findings = _findings(sources)
    drift = [item for item in findings if item['id'] in DRIFT_IDS]
    playbook = _text(record.get('playbook'))
    result = {
        'inventory': _text(inventory),
        'playbook': playbook if playbook in PLAYBOOKS else None,
        'cluster': _cluster(record, sources),
        'egress_ips': _egress_ips(sources),
        'findings': _finding_counts(sources, findings),
        'drift': {'count': len(drift), 'items': [{'id': item['id'], 'message': item['message']} for item in drift[:DRIFT_LIMIT]]},
        'changes': [redact(line) for line in (_text(item) for item in (record.get('changes') or [])[:CHANGES_LIMIT]
                                              if isinstance(record.get('changes'), list)) if line],
        'checks': sorted(sources),
        'generated_at': _generated_at(sources),
        'time': _text(time or record.get('time')),
        'failure': _failure(record),
        'support_status': _text(_dict(sources.get('support')).get('status')),
    }
    result['source_failed'] = any(_dict(source.get('summary')).get('ok') is False for source in sources.values())
    result['verdict'] = verdict(result)
    return result


def normal_row(value):
    """A stored row read back (fleet_files): made again from its own fields, so a hand-edited file cannot add keys."""
    value = _dict(value)
    rebuilt = row(value.get('inventory'), {}, value.get('time'))
    for key in ('playbook', 'generated_at', 'support_status'):
        rebuilt[key] = _text(value.get(key)) if key != 'playbook' or value.get(key) in PLAYBOOKS else None
    rebuilt['cluster'] = dict((field, _text(_dict(value.get('cluster')).get(field))) for field in _identity.FIELDS)
    rebuilt['egress_ips'] = dict((field, _count(_dict(value.get('egress_ips')).get(field))) for field in IP_FIELDS)
    counts = _dict(value.get('findings'))
    rebuilt['findings'] = {'errors': _count(counts.get('errors')) or 0, 'warnings': _count(counts.get('warnings')) or 0,
                           'ids': dict((_text(key), _count(number) or 0) for key, number in _dict(counts.get('ids')).items() if _text(key))}
    items = [item for item in _dict(value.get('drift')).get('items') or [] if isinstance(item, dict)]
    rebuilt['drift'] = {'count': _count(_dict(value.get('drift')).get('count')) or 0,
                        'items': [{'id': _text(item.get('id')), 'message': redact(_text(item.get('message'), MESSAGE_LIMIT))} for item in items]}
    rebuilt['changes'] = [redact(_text(line)) for line in value.get('changes') or [] if _text(line)] if isinstance(value.get('changes'), list) else []
    rebuilt['checks'] = sorted(name for name in value.get('checks') or [] if name in SOURCES) if isinstance(value.get('checks'), list) else []
    rebuilt['failure'] = _failure(value)
    rebuilt['source_failed'] = value.get('source_failed') is True
    rebuilt['verdict'] = verdict(rebuilt)
    return rebuilt


def _sum(rows, getter):
    values = [getter(item) for item in rows]
    return sum(value for value in values if value is not None)


def totals(rows, not_run):
    counts = dict((name, len([item for item in rows if item['verdict'] == name])) for name in VERDICTS)
    counts.update({
        'clusters': len(rows) + len(not_run), 'ran': len(rows), 'not_run': len(not_run),
        'egress_ips': dict((field, _sum(rows, lambda item, field=field: item['egress_ips'][field])) for field in IP_FIELDS),
        'errors': _sum(rows, lambda item: item['findings']['errors']),
        'warnings': _sum(rows, lambda item: item['findings']['warnings']),
        'drift': _sum(rows, lambda item: item['drift']['count']),
    })
    return counts


def build(rows, clusters=None):
    """The fleet report from the rows of one run; `clusters` (the play's hosts) names those without a row as not run."""
    rows = sorted((normal_row(item) for item in rows), key=lambda item: item['inventory'] or '')
    ran = set(item['inventory'] for item in rows)
    not_run = sorted(set(name for name in (_text(item) for item in clusters or []) if name and name not in ran))
    failed = [dict(item['failure'], inventory=item['inventory'], cluster=item['cluster']['name'], playbook=item['playbook'])
              for item in rows if item['failure']]
    times = sorted(item['time'] for item in rows if item['time'])
    return {
        'kind': KIND,
        'generated_at': times[-1] if times else None,
        'playbooks': sorted(set(item['playbook'] for item in rows if item['playbook'])),
        'verdict': 'failed' if failed else next((name for name in ('error', 'warning') if any(item['verdict'] == name for item in rows)), 'ok'),
        'clusters': rows,
        'failed': failed,
        'not_run': not_run,
        'totals': totals(rows, not_run),
    }


def _without_times(item):
    return dict((key, value) for key, value in item.items() if key not in ('time', 'generated_at'))


def rebuild(report):
    """The report again from a fleet_report.json read back (its rows and its clusters not run)."""
    report = _dict(report)
    rows = [item for item in report.get('clusters') or [] if isinstance(item, dict)]
    names = [item.get('inventory') for item in rows] + [name for name in report.get('not_run') or [] if isinstance(name, str)]
    return build(rows, names)


def covers(before, after):
    """Whether the report `before` (read back) already says what `after` says of every cluster that has reported in this
    run (times aside) and is about the same clusters: then the files of `before` stay, and a rerun that finds the same
    changes nothing even while the clusters it has not reached yet are pending."""
    if not isinstance(before, dict) or before.get('kind') != KIND:
        return False
    old = rebuild(before)
    rows = dict((item['inventory'], item) for item in old['clusters'])
    if set(rows) | set(old['not_run']) != set(item['inventory'] for item in after['clusters']) | set(after['not_run']):
        return False
    return all(item['inventory'] in rows and _without_times(rows[item['inventory']]) == _without_times(item) for item in after['clusters'])


# --- Markdown ---------------------------------------------------------------------------------------

VERDICT_WORDS = {'ok': 'OK', 'warning': 'WARNING', 'error': 'ERROR', 'failed': 'FAILED'}
CLUSTER_HEADERS = ('Inventory host', 'Cluster', 'Cluster ID', 'OpenShift', 'Playbook', 'Verdict', 'Egress IPs', 'Assigned', 'Healthy',
                   'Blackholed', 'Errors', 'Warnings', 'Drift', 'Finished (UTC)')


def _number(value):
    return '-' if value is None else value


def cluster_cells(item):
    """The cells of a cluster's row in the Markdown and HTML tables, in CLUSTER_HEADERS order."""
    cluster, ips = item['cluster'], item['egress_ips']
    return [item['inventory'], cluster['name'], cluster['id'], cluster['openshift_version'], item['playbook'],
            VERDICT_WORDS[item['verdict']]] + [_number(ips[field]) for field in IP_FIELDS] + [
        item['findings']['errors'], item['findings']['warnings'], item['drift']['count'], item['time']]


def headline(report):
    """The verdict line: counts per verdict, the egress IPs and the findings of the whole fleet."""
    counts = report['totals']
    ips = counts['egress_ips']
    text = ('Fleet: %s - %d cluster(s): %d ok, %d warning, %d error, %d failed%s; %d egress IP(s), %d assigned, %d healthy, '
            '%d blackholed; %d error(s), %d warning(s), %d drift finding(s).'
            % (VERDICT_WORDS[report['verdict']], counts['clusters'], counts['ok'], counts['warning'], counts['error'], counts['failed'],
               ', %d not run' % counts['not_run'] if counts['not_run'] else '', ips['total'], ips['assigned'], ips['healthy'],
               ips['blackholed'], counts['errors'], counts['warnings'], counts['drift']))
    return text


def about_line(report):
    return 'Playbook(s): %s; the last cluster finished %s.' % (
        ', '.join(report['playbooks']) or 'none', '%s (UTC)' % report['generated_at'] if report['generated_at'] else 'at an unknown time')


def render_markdown(report):
    """The Markdown fleet report: the verdict, a table of the clusters, the failed ones with their task and message,
    those not run, the drift from the variables files, what the runs changed, and the totals."""
    head = ['**%s**' % headline(report), '', about_line(report), '']
    sections = [head, ['## Clusters', ''] + _report.table(CLUSTER_HEADERS, [cluster_cells(item) for item in report['clusters']]) + ['']]
    sections.append(['## Failed clusters', ''] + _report.table(
        ['Inventory host', 'Cluster', 'Playbook', 'Task', 'Message'],
        [(item['inventory'], item['cluster'], item['playbook'], item['task'], item['message']) for item in report['failed']]) + [''])
    if report['not_run']:
        sections.append(['## Not run', '', 'Clusters of the play without a record in this run (the rollout stopped before their '
                         'batch, or their play has not ended yet): %s.' % ', '.join('`%s`' % name for name in report['not_run']), ''])
    drift = [(item['inventory'], '`%s`' % entry['id'], entry['message']) for item in report['clusters'] for entry in item['drift']['items']]
    sections.append(['## Drift from the variables files', ''] + _report.table(['Inventory host', 'Id', 'Message'], drift) + [''])
    changes = [(item['inventory'], line) for item in report['clusters'] for line in item['changes']]
    if changes:
        sections.append(['## What the runs changed', ''] + _report.table(['Inventory host', 'Change'], changes) + [''])
    counts = report['totals']
    sections.append(['## Totals', ''] + _report.table(
        ['Clusters', 'OK', 'Warning', 'Error', 'Failed', 'Not run', 'Egress IPs', 'Assigned', 'Healthy', 'Blackholed', 'Errors',
         'Warnings', 'Drift'],
        [[counts['clusters'], counts['ok'], counts['warning'], counts['error'], counts['failed'], counts['not_run']]
         + [counts['egress_ips'][field] for field in IP_FIELDS] + [counts['errors'], counts['warnings'], counts['drift']]]) + [''])
    return _report.document('EgressIP fleet report', sections)
