"""_permissions: the shipped rbac/*.yml files equal RULES, what each playbook asks the API, and the findings."""

import os

import yaml

from ansible_collections.ocp.egressip.plugins.module_utils.checks import permissions as _permissions
from ansible_collections.ocp.egressip.plugins.module_utils.clients import vcenter as _vcenter
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))


class FakeClient:
    """Answers SelfSubjectAccessReviews from a set of (verb, resource, namespace) it denies; records every review."""

    def __init__(self, denied=(), fail=None):
        self.denied = set(denied)
        self.fail = fail
        self.reviews = []

    def request(self, verb, resource, path, body=None, **_kwargs):
        assert (verb, resource, path) == ('create', 'selfsubjectaccessreviews', _permissions.SSAR_PATH)
        if self.fail:
            raise ModuleFailure(self.fail, status=403)
        attrs = body['spec']['resourceAttributes']
        self.reviews.append(attrs)
        resource = attrs['resource'] + ('/' + attrs['subresource'] if attrs.get('subresource') else '')
        return {'status': {'allowed': (attrs['verb'], resource, attrs.get('namespace', '')) not in self.denied}}


def test_every_playbook_has_its_cluster_role_file_rendered_from_rules():
    assert sorted(os.listdir(os.path.join(ROOT, 'rbac'))) == sorted('%s.yml' % name for name in _permissions.PLAYBOOKS)
    for playbook in _permissions.PLAYBOOKS:
        with open(os.path.join(ROOT, _permissions.role_file(playbook)), encoding='utf-8') as handle:
            text = handle.read()
        assert text == _permissions.manifest_text(playbook), 'rbac/%s.yml differs from RULES: run scripts/render_rbac.py' % playbook
        assert yaml.safe_load(text) == _permissions.cluster_role(playbook)


def test_read_only_playbooks_are_granted_no_write():
    for playbook in ('render', 'support_report'):
        verbs = set(verb for rule in _permissions.cluster_role(playbook)['rules'] for verb in rule['verbs'])
        assert verbs == {'get', 'list'}, playbook


def test_the_lock_is_checked_in_its_namespace_and_only_when_the_run_takes_it():
    needed = _permissions.needed('verify', lock_namespace='egress-locks', takes_lock=True)
    assert ('update', 'coordination.k8s.io', 'leases', '', 'egress-locks') in needed
    assert ('patch', '', 'nodes', '', '') in needed
    read_only = _permissions.needed('verify', lock_namespace='egress-locks', takes_lock=False)
    assert not [item for item in read_only if item[2] == 'leases' and item[0] != 'get' or item[0] == 'patch']
    assert ('get', 'coordination.k8s.io', 'leases', '', 'egress-locks') in read_only  # whether another run holds the lock
    assert ('get', '', 'pods', 'log', '') in read_only  # the wire check reads its probes' logs
    assert ('patch', 'machine.openshift.io', 'machines', '', 'openshift-machine-api') in _permissions.needed('enable')


def test_all_granted_is_no_finding_and_each_verb_and_resource_is_asked_once():
    client = FakeClient()
    assert _permissions.check(client, 'disable', 'openshift-machine-api') == []
    keys = [(a['verb'], a.get('group', ''), a['resource'], a.get('namespace', '')) for a in client.reviews]
    assert len(keys) == len(set(keys)) == len(_permissions.needed('disable', 'openshift-machine-api'))


def test_a_missing_permission_names_the_verb_the_resource_and_the_cluster_role_file():
    client = FakeClient(denied={('patch', 'nodes', ''), ('create', 'leases', 'openshift-machine-api')})
    findings = _permissions.check(client, 'enable', 'openshift-machine-api')
    assert [f['id'] for f in findings] == ['kube_permission_missing'] and findings[0]['severity'] == 'error'
    assert findings[0]['message'] == ('The Kubernetes credentials lack 2 permission(s) the enable playbook uses: create '
                                      'leases.coordination.k8s.io in namespace openshift-machine-api; patch nodes cluster-wide.')
    assert 'ClusterRole ocp-egressip-enable (the file rbac/enable.yml' in findings[0]['remedy']
    assert findings[0]['objects'] == [{'kind': 'ClusterRole', 'name': 'ocp-egressip-enable'}]


def test_refused_reviews_are_a_warning_not_a_stop():
    findings = _permissions.check(FakeClient(fail='create selfsubjectaccessreviews failed: HTTP 403'), 'verify', takes_lock=False)
    assert [(f['id'], f['severity']) for f in findings] == [('kube_permission_unchecked', 'warning')]
    assert 'HTTP 403' in findings[0]['message'] and 'verify run goes on unchecked' in findings[0]['message']


class Ref:
    def __init__(self, moid):
        self._moId = moid  # pylint: disable=invalid-name


class Obj:
    def __init__(self, **attrs):
        self.__dict__.update(attrs)


class FakeVcenter:
    """AuthorizationManager.HasPrivilegeOnEntities of one session, denying (privilege, moid) pairs; records each call."""

    def __init__(self, denied=()):
        self.denied = set(denied)
        self.calls = []
        self.content = Obj(sessionManager=Obj(currentSession=Obj(key='session-1', userName='VSPHERE.LOCAL\\egress')),
                           authorizationManager=Obj(HasPrivilegeOnEntities=self.has_privilege))

    def has_privilege(self, entity, sessionId, privId):  # pylint: disable=invalid-name
        self.calls.append(([ref._moId for ref in entity], sessionId, privId))  # pylint: disable=protected-access
        return [Obj(entity=ref, privAvailability=[Obj(privId=priv, isGranted=(priv, ref._moId) not in self.denied) for priv in privId])
                for ref in entity]

    @staticmethod
    def call(_method, _purpose, func, *args, **kwargs):
        return func(*args, **kwargs)

    def retrieve_objects(self, refs, _vim_type, paths, _purpose):
        assert refs == [self.content.sessionManager] and paths == ['currentSession']
        return [Obj(props={'currentSession': self.content.sessionManager.currentSession})]


ENTITIES = {'datacenter': [('DC0', Ref('datacenter-2'))], 'host': [('H0', Ref('host-1')), ('H1', Ref('host-2'))],
            'vm': [('worker-0', Ref('vm-10'))]}


def test_enable_on_a_standard_switch_asks_host_and_vm_privileges_of_this_session():
    vcenter = FakeVcenter()
    wanted = _permissions.vcenter_privileges('enable', 'standard')
    assert _vcenter.read_privileges(vcenter, wanted, ENTITIES) == {'user': 'VSPHERE.LOCAL\\egress', 'missing': []}
    assert vcenter.calls == [(['host-1', 'host-2'], 'session-1', ['Host.Config.Network']),
                             (['vm-10'], 'session-1', list(_permissions._NIC_PRIVILEGES))]  # pylint: disable=protected-access
    assert _permissions.vcenter_privileges('enable', 'distributed')['datacenter'] == ('DVPortgroup.Create', 'DVPortgroup.Modify')
    assert _permissions.vcenter_privileges('verify') == {} and _permissions.vcenter_privileges('render') == {}


def test_a_missing_vcenter_privilege_is_a_finding_naming_privilege_entity_and_account():
    vcenter = FakeVcenter(denied={('Host.Config.Network', 'host-2'), ('Network.Assign', 'vm-10')})
    privileges = _vcenter.read_privileges(vcenter, _permissions.vcenter_privileges('enable'), ENTITIES)
    findings = _permissions.vcenter_findings(privileges, 'enable')
    assert [(f['id'], f['severity']) for f in findings] == [('vcenter_privilege_missing', 'error')]
    assert findings[0]['message'] == ('The vCenter account VSPHERE.LOCAL\\egress lacks privilege(s) the enable playbook uses: '
                                      'Host.Config.Network on host H1; Network.Assign on vm worker-0.')
    assert findings[0]['objects'] == [{'kind': 'HostSystem', 'name': 'H1'}, {'kind': 'VirtualMachine', 'name': 'worker-0'}]
    assert _permissions.vcenter_findings(None, 'enable') == [] and _permissions.vcenter_findings({'missing': []}, 'enable') == []


def test_the_collection_archive_keeps_the_cluster_role_files():
    with open(os.path.join(ROOT, 'galaxy.yml'), encoding='utf-8') as handle:
        ignored = yaml.safe_load(handle).get('build_ignore') or []
    assert not [pattern for pattern in ignored if pattern.strip('/*') in ('rbac', 'docs') or pattern.startswith('rbac/')]


def test_the_in_cluster_guard_permissions_are_asked_only_when_the_run_applies_it():
    cronjobs = ('create', 'batch', 'cronjobs', '', '')
    assert cronjobs not in _permissions.needed('enable') and cronjobs in _permissions.needed('enable', guard=True)
    removal = ('delete', 'rbac.authorization.k8s.io', 'clusterroles', '', '')
    assert removal not in _permissions.needed('disable') and removal in _permissions.needed('disable', guard=True)
    # RBAC escalation prevention: enable holds every rule it grants the guard (its ClusterRole and Roles)
    held = _permissions.needed('enable', lock_namespace='openshift-machine-api', guard=True)
    for verb, group, plural, subresource, _namespace in _permissions.needed('guard', lock_namespace='ocp-egressip-guard'):
        assert any(item[:4] == (verb, group, plural, subresource) for item in held), (verb, group, plural, subresource)
