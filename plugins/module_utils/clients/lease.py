# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-cluster lock: a coordination.k8s.io/v1 Lease, its holder and the run that owns it.

Pure parts (times, expiry, the bodies written, messages) and the few I/O helpers: the Lease through
K8sClient.request, the owning ansible-playbook process through /proc (Linux). A Lease is free when it
has no holder, or when its holder did not renew it within leaseDurationSeconds (renewTime by the API's
record, or no change seen by this process for that long, which holds whatever the clocks say).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import getpass
import os
import re
import socket

from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube

GROUP_VERSION = kube.api_version(kube.LEASES)
DEFAULT_NAME = 'egressip-lock'
DEFAULT_NAMESPACE = 'openshift-machine-api'
MANAGED_BY = {'egressip.ocp/managed-by': 'ocp.egressip'}
ANNOTATION = 'egressip.ocp/lock-'
CONVERGED_ANNOTATION = 'egressip.ocp/converged'  # the converged record of enable (model/converged.py); kept across holders
DETAIL_KEYS = ('user', 'host', 'playbook', 'pid', 'module')
_TIME_RE = re.compile(r'^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$')
UTC = datetime.timezone.utc


def now():
    return datetime.datetime.now(UTC)


def micro_time(moment):
    """MicroTime as the API wants it (RFC3339, six fraction digits, UTC)."""
    return moment.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%S.%fZ')


def parse_time(value):
    """A Lease time (MicroTime, or any RFC3339 time) as an aware datetime; None when absent or unreadable."""
    match = _TIME_RE.match(value or '')
    if not match:
        return None
    fields = [int(part) for part in match.groups()[:6]]
    micro = int(((match.group(7) or '') + '000000')[:6])
    zone = match.group(8)
    offset = datetime.timedelta(0) if zone == 'Z' else (1 if zone[0] == '+' else -1) * datetime.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    try:
        return datetime.datetime(*(fields + [micro]), tzinfo=datetime.timezone(offset))
    except ValueError:
        return None


def lease_path(namespace, name=None):
    return kube.path(kube.LEASES, name, namespace)


def describe(lease, moment):
    """What the Lease says, for results and messages: holder, its details, times, expiry."""
    if lease is None:
        return None
    spec = lease.get('spec') or {}
    annotations = (lease.get('metadata') or {}).get('annotations') or {}
    renewed = parse_time(spec.get('renewTime')) or parse_time(spec.get('acquireTime'))
    duration = spec.get('leaseDurationSeconds')
    expires = renewed + datetime.timedelta(seconds=duration) if renewed and duration else None
    info = {
        'namespace': lease['metadata'].get('namespace'), 'name': lease['metadata'].get('name'),
        'holder': spec.get('holderIdentity') or None,
        'acquire_time': spec.get('acquireTime'), 'renew_time': spec.get('renewTime'),
        'lease_duration_seconds': duration, 'lease_transitions': spec.get('leaseTransitions', 0),
        'expires_at': micro_time(expires) if expires else None,
        'expired': bool(spec.get('holderIdentity')) and (expires is None or expires <= moment),
        'resource_version': lease['metadata'].get('resourceVersion'),
    }
    info['details'] = dict((key, annotations.get(ANNOTATION + key)) for key in DETAIL_KEYS if annotations.get(ANNOTATION + key))
    info['converged'] = annotations.get(CONVERGED_ANNOTATION) or None
    return info


def is_free(info, unchanged_seconds=0):
    """No holder, an expired one, or (clock-skew safe) a record this process saw unchanged for a whole duration."""
    if info is None or not info['holder'] or info['expired']:
        return True
    return bool(info['lease_duration_seconds']) and unchanged_seconds >= info['lease_duration_seconds']


def _seconds(moment, text):
    then = parse_time(text)
    return int(round((moment - then).total_seconds())) if then else None


def holder_text(info, moment):
    """`alice@bastion/... (user alice, host bastion, playbook enable, pid 4242) since <acquireTime> (... s ago), ...`."""
    details = ', '.join('%s %s' % (key, info['details'][key]) for key in DETAIL_KEYS if key in info['details'])
    text = info['holder'] + (' (%s)' % details if details else '')
    since = _seconds(moment, info['acquire_time'])
    text += ' since %s' % info['acquire_time']
    if since is not None:
        text += ' (%d s ago)' % since
    renewed = _seconds(moment, info['renew_time'])
    if renewed is not None:
        text += ', last renewed %d s ago' % renewed
    if info['expires_at']:
        text += ', expires at %s unless renewed' % info['expires_at']
    return text


def spec_for(holder, duration, moment, transitions, acquire_time=None):
    return {'holderIdentity': holder, 'leaseDurationSeconds': duration, 'acquireTime': acquire_time or micro_time(moment),
            'renewTime': micro_time(moment), 'leaseTransitions': transitions}


def new_lease(namespace, name, holder, details, duration, moment):
    return {'apiVersion': GROUP_VERSION, 'kind': 'Lease',
            'metadata': {'name': name, 'namespace': namespace, 'labels': dict(MANAGED_BY), 'annotations': _annotations(details)},
            'spec': spec_for(holder, duration, moment, 0)}


def _annotations(details):
    return dict((ANNOTATION + key, str(details[key])) for key in DETAIL_KEYS if details.get(key) not in (None, ''))


def _with_holder_annotations(lease, details):
    annotations = dict((key, value) for key, value in ((lease['metadata'].get('annotations') or {}).items()) if not key.startswith(ANNOTATION))
    annotations.update(_annotations(details))
    lease['metadata']['annotations'] = annotations
    return lease


def taken_over(lease, holder, details, duration, moment):
    """The update that takes a free Lease: a new holder counts one more transition (as client-go's leader election)."""
    spec = lease.get('spec') or {}
    transitions = spec.get('leaseTransitions', 0) + (1 if spec.get('holderIdentity') != holder else 0)
    lease = dict(lease, spec=spec_for(holder, duration, moment, transitions))
    lease['metadata'] = dict(lease['metadata'])
    return _with_holder_annotations(lease, details)


def renewed(lease, duration, moment):
    spec = dict(lease.get('spec') or {})
    spec.update({'renewTime': micro_time(moment), 'leaseDurationSeconds': duration})
    return dict(lease, spec=spec)


def released(lease, moment, converged=None):
    """No holder any more; transitions and duration stay, so the next holder counts on from there.

    converged: the converged record to leave on the Lease (its CONVERGED_ANNOTATION, model/converged.py); '' removes it,
    None keeps what is there."""
    spec = dict((key, value) for key, value in (lease.get('spec') or {}).items() if key not in ('holderIdentity', 'acquireTime'))
    spec['renewTime'] = micro_time(moment)
    lease = dict(lease, spec=spec)
    lease['metadata'] = dict(lease['metadata'])
    lease = _with_holder_annotations(lease, {})
    if converged is not None:
        annotations = dict((key, value) for key, value in lease['metadata']['annotations'].items() if key != CONVERGED_ANNOTATION)
        if converged:
            annotations[CONVERGED_ANNOTATION] = converged
        lease['metadata']['annotations'] = annotations
    return lease


class LeaseStore(object):
    """The lock Lease through K8sClient.request; conflicts come back as None instead of failures."""

    def __init__(self, client, namespace, name):
        self.client = client
        self.namespace = namespace
        self.name = name
        self.resource = 'Lease %s/%s' % (namespace, name)

    def read(self):
        try:
            return self.client.request('get', self.resource, lease_path(self.namespace, self.name))
        except ModuleFailure as failure:
            if failure.details.get('status') == 404:
                return None
            raise

    def create(self, body):
        return self._write('create', lease_path(self.namespace), body)

    def replace(self, body):
        return self._write('replace', lease_path(self.namespace, self.name), body)

    def _write(self, verb, path, body):
        try:
            return self.client.request(verb, self.resource, path, body=body)
        except ModuleFailure as failure:
            if failure.details.get('status') == 409:
                return None
            if failure.details.get('status') == 404 and verb == 'create':
                raise ModuleFailure('%s Namespace %s must exist (the lock lives there); set egressip_lock.namespace to a namespace the '
                                    'credentials may write Leases in.' % (failure.msg, self.namespace), **failure.details)
            raise


# --- the run that owns the lock: the ansible-playbook process (Linux /proc) -----------------------

def _stat(pid):
    """(state, ppid, pgid, start time in clock ticks since boot) of a process, or None."""
    try:
        with open('/proc/%d/stat' % pid) as handle:
            data = handle.read()
    except (IOError, OSError, ValueError):
        return None
    fields = data[data.rindex(')') + 2:].split()
    return fields[0], int(fields[1]), int(fields[2]), fields[19]


def _argv(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as handle:
            return [part.decode('utf-8', 'replace') for part in handle.read().split(b'\0') if part]
    except (IOError, OSError):
        return []


def _is_playbook(argv):
    return any(os.path.basename(part) == 'ansible-playbook' for part in argv[:2])


def playbook_process(start_pid=None):
    """The ansible-playbook process this module runs under: {pid, start, process_group_leader, playbooks}, or None.

    The nearest ancestor is a forked worker (same command line); the topmost of the contiguous
    ansible-playbook ancestors is the run itself.
    """
    pid, found = start_pid or os.getppid(), None
    while pid > 1:
        stat = _stat(pid)
        if stat is None:
            break
        argv = _argv(pid)
        if _is_playbook(argv):
            found = (pid, stat, argv)
        elif found:
            break
        pid = stat[1]
    if not found:
        return None
    pid, stat, argv = found
    return {'pid': pid, 'start': stat[3], 'process_group_leader': stat[2] == pid, 'playbooks': _playbooks(argv)}


def _playbooks(argv):
    """The playbook arguments of an ansible-playbook command line (option values such as -e @vars.yml left out)."""
    found, skip = [], False
    for part in argv[2:] if len(argv) > 1 and os.path.basename(argv[1]) == 'ansible-playbook' else argv[1:]:
        if skip or part.startswith('-'):
            skip = part.startswith('-') and '=' not in part and part not in ('--check', '-C', '--diff', '-D', '-v', '-vv', '-vvv', '-vvvv')
            continue
        if part.endswith(('.yml', '.yaml')) or part.startswith('ocp.egressip.'):
            found.append(os.path.basename(part))
    return found


def _alive(pid, start):
    stat = _stat(pid)
    return stat is not None and stat[0] != 'Z' and (start is None or stat[3] == start)


def _group_alive(pgid):
    """Whether a live (non-zombie) process is left in the process group: a module the killed run left behind."""
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat[2] == pgid and stat[0] != 'Z':
                return True
    return False


def owner_alive(owner):
    """The run is alive while its ansible-playbook lives or, when it led its process group, a process of the group does."""
    pid = int(owner['pid'])
    if _alive(pid, owner.get('start')):
        return True
    return bool(owner.get('process_group_leader')) and _group_alive(pid)


def run_details(owner, playbook):
    """Who holds the lock, written into the Lease for the next writer's message."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError, ImportError):
        user = 'uid %d' % os.getuid()
    return {'user': user, 'host': socket.gethostname(), 'playbook': playbook or ' '.join((owner or {}).get('playbooks') or []) or None,
            'pid': (owner or {}).get('pid')}


def default_holder(details, owner):
    """One identity per ansible-playbook run: user@host/pid.start (the start time tells a reused pid apart)."""
    return '%s@%s/ansible-playbook-%s.%s' % (details['user'].replace(' ', '-'), details['host'], owner['pid'], owner['start'])


def in_background(body):
    """Run ``body()`` in a detached process (double fork, new session, standard streams on /dev/null) and return its pid
    at once, as Ansible's async_wrapper starts a job: the module then ends while the process goes on. ``body`` must use
    only what is imported already (the module's payload is deleted when the module ends); the process ends when it
    returns, whatever it raises."""
    ready, written = os.pipe()
    first = os.fork()
    if first:
        os.close(written)
        with os.fdopen(ready, 'rb') as answer:
            pid = int(answer.read() or 0)
        os.waitpid(first, 0)
        return pid
    os.close(ready)
    try:
        os.setsid()
        second = os.fork()
        if second:
            os.write(written, str(second).encode())
            return None
        os.close(written)
        null = os.open(os.devnull, os.O_RDWR)
        for stream in (0, 1, 2):
            os.dup2(null, stream)
        body()
    except BaseException:  # pylint: disable=broad-except
        pass  # nowhere to report to: the Lease expires leaseDurationSeconds after the last renewal
    finally:
        os._exit(0)  # never back into the module (nor the AnsiballZ wrapper that removes the payload)
