"""docs/fleet.md, "GitOps: one directory per cluster": the Argo CD ApplicationSet and the Flux Kustomization there use
only fields of those APIs, with their required fields and allowed values, and point each cluster at the directory the
render role writes for it (<render_dest>/<inventory host>, through the launch_path filter), relative to the GitOps
repository the docs clone at gitops/.

The fields are read from the APIs' Go types (the CRDs are generated from them):
- Argo CD, argoproj/argo-cd pkg/apis/application/v1alpha1/applicationset_types.go (ApplicationSetSpec,
  ApplicationSetGenerator, ClusterGenerator, ApplicationSetTemplate(Meta)) at 00d0a3e7faeb2d8994a969a918b5fe356c8fa4fd
  and pkg/apis/application/v1alpha1/types.go (ApplicationSpec, ApplicationSource, ApplicationDestination, SyncPolicy);
  the cluster generator's parameters (name, nameNormalized, server, metadata.labels.<key>,
  metadata.annotations.<key>, values.<key>) from applicationset/generators/cluster.go at
  0513e43bd11962a0480b267b563cd71bf7451b83; the template is fasttemplate with {{ and }} unless goTemplate is set.
- Flux, fluxcd/kustomize-controller api/v1/kustomization_types.go (KustomizationSpec: interval, prune, sourceRef are
  +required) at 02e1e732b855fe48302a83d260bc6ee7bebaf974 and api/v1/reference_types.go (CrossNamespaceSourceReference,
  kind enum) at 0c36aa09045a6ffc8dcfab133f50fd10378fb61c.
"""

import os
import re

import pytest
import yaml

from ansible_collections.ocp.egressip.plugins.filter.launch_path import launch_path

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, 'docs', 'fleet.md')
CLUSTERS = ('cluster-a', 'cluster-b')

APPLICATIONSET_SPEC = {'goTemplate', 'generators', 'template', 'syncPolicy', 'strategy', 'strategyRef',
                       'preservedFields', 'goTemplateOptions', 'applyNestedSelectors', 'ignoreApplicationDifferences',
                       'templatePatch'}
GENERATOR = {'list', 'clusters', 'git', 'scmProvider', 'clusterDecisionResource', 'pullRequest', 'matrix', 'merge',
             'selector', 'plugin'}
CLUSTER_GENERATOR = {'selector', 'template', 'values', 'flatList'}
LABEL_SELECTOR = {'matchLabels', 'matchExpressions'}
SELECTOR_OPERATORS = {'In', 'NotIn', 'Exists', 'DoesNotExist'}
TEMPLATE_META = {'name', 'namespace', 'labels', 'annotations', 'finalizers'}
APPLICATION_SPEC = {'source', 'sources', 'destination', 'project', 'syncPolicy', 'ignoreDifferences', 'info',
                    'revisionHistoryLimit', 'sourceHydrator'}
APPLICATION_SOURCE = {'repoURL', 'path', 'targetRevision', 'helm', 'kustomize', 'directory', 'plugin', 'chart', 'ref',
                      'name'}
DESTINATION = {'server', 'namespace', 'name'}
SYNC_POLICY = {'automated', 'syncOptions', 'retry', 'managedNamespaceMetadata'}

KUSTOMIZATION_SPEC = {'commonMetadata', 'dependsOn', 'decryption', 'interval', 'retryInterval', 'kubeConfig', 'path',
                      'postBuild', 'prune', 'deletionPolicy', 'healthChecks', 'namePrefix', 'nameSuffix', 'patches',
                      'images', 'serviceAccountName', 'sourceRef', 'suspend', 'targetNamespace', 'timeout', 'force',
                      'wait', 'components', 'ignoreMissingComponents', 'healthCheckExprs', 'driftIgnoreRules'}
KUSTOMIZATION_REQUIRED = {'interval', 'prune', 'sourceRef'}
SOURCE_REFERENCE = {'apiVersion', 'kind', 'name', 'namespace'}
SOURCE_KINDS = {'OCIRepository', 'GitRepository', 'Bucket', 'ExternalArtifact'}
DURATION = re.compile(r'^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$')


def gitops_section():
    with open(DOC, encoding='utf-8') as handle:
        text = handle.read()
    start = text.index('## GitOps: one directory per cluster')
    end = text.index('\n## ', start + 1)
    return text[start:end]


def yaml_blocks(section):
    return [yaml.safe_load(block) for block in re.findall(r'```yaml\n(.*?)```', section, re.S)]


@pytest.fixture(scope='module')
def section():
    return gitops_section()


@pytest.fixture(scope='module')
def documents(section):
    by_kind = {}
    for document in yaml_blocks(section):
        by_kind.setdefault(document['kind'], []).append(document)
    return by_kind


@pytest.fixture(scope='module')
def repository_paths(section):
    """What the documented render command writes for each cluster, relative to the GitOps repository at gitops/."""
    command = re.search(r'ocp\.egressip\.render -e render_dest=(\S+?)`', section)
    assert command, 'the GitOps section names the render command with its render_dest'
    assert 'clone of your GitOps repository at `gitops/`' in section
    clone = os.path.join(os.getcwd(), 'gitops')
    return dict((cluster, os.path.relpath(launch_path(command.group(1), cluster=cluster), clone)) for cluster in CLUSTERS)


def unknown(keys, accepted):
    return sorted(set(keys) - accepted)


def fasttemplate(text, params):
    """Argo CD's non-Go template: each {{key}} replaced by its parameter (a missing one is an error, as with
    render.Replace(..., true))."""
    def replace(match):
        key = match.group(1).strip()
        assert key in params, 'the template uses {{%s}}, which the cluster generator does not give' % key
        return params[key]
    return re.sub(r'{{(.*?)}}', replace, text)


def test_the_section_has_one_applicationset_and_one_flux_kustomization(documents):
    assert sorted(documents) == ['ApplicationSet', 'Kustomization']
    assert len(documents['ApplicationSet']) == 1 and len(documents['Kustomization']) == 1


def test_the_applicationset_uses_only_fields_of_the_argo_cd_api(documents):
    appset = documents['ApplicationSet'][0]
    assert appset['apiVersion'] == 'argoproj.io/v1alpha1'
    assert appset['metadata']['name'] and appset['metadata']['namespace']
    spec = appset['spec']
    assert not unknown(spec, APPLICATIONSET_SPEC), unknown(spec, APPLICATIONSET_SPEC)
    assert {'generators', 'template'} <= set(spec)
    for generator in spec['generators']:
        assert not unknown(generator, GENERATOR), unknown(generator, GENERATOR)
        clusters = generator['clusters']
        assert not unknown(clusters, CLUSTER_GENERATOR), unknown(clusters, CLUSTER_GENERATOR)
        selector = clusters['selector']
        assert not unknown(selector, LABEL_SELECTOR) and selector, selector
        for expression in selector.get('matchExpressions') or []:
            assert not unknown(expression, {'key', 'operator', 'values'}) and expression['operator'] in SELECTOR_OPERATORS
            assert bool(expression.get('values')) == (expression['operator'] in ('In', 'NotIn')), expression
    template = spec['template']
    assert not unknown(template, {'metadata', 'spec'}), template
    assert not unknown(template['metadata'], TEMPLATE_META), template['metadata']
    application = template['spec']
    assert not unknown(application, APPLICATION_SPEC), unknown(application, APPLICATION_SPEC)
    assert application['project'] and application['destination']
    source = application['source']
    assert not unknown(source, APPLICATION_SOURCE) and {'repoURL', 'path', 'targetRevision'} <= set(source), source
    destination = application['destination']
    assert not unknown(destination, DESTINATION), destination
    assert ('server' in destination) != ('name' in destination), 'a destination names its cluster by server or by name'
    policy = application.get('syncPolicy') or {}
    assert not unknown(policy, SYNC_POLICY), policy
    # partial manifests need server-side apply (docs/disable-and-render.md)
    assert 'ServerSideApply=true' in policy.get('syncOptions', [])


def test_each_cluster_secret_with_the_label_gets_the_directory_render_wrote_for_it(documents, repository_paths):
    spec = documents['ApplicationSet'][0]['spec']
    assert not spec.get('goTemplate'), 'the example is written for the fasttemplate syntax'
    label = spec['generators'][0]['clusters']['selector']['matchExpressions'][0]['key']
    applications = {}
    for cluster in CLUSTERS:
        # the cluster generator's parameters for one Argo CD cluster secret labelled with the inventory host
        params = {'name': 'openshift-%s' % cluster, 'nameNormalized': 'openshift-%s' % cluster,
                  'server': 'https://api.%s.example.com:6443' % cluster, 'metadata.labels.%s' % label: cluster,
                  'metadata.labels.argocd.argoproj.io/secret-type': 'cluster'}
        template = spec['template']
        name = fasttemplate(template['metadata']['name'], params)
        path = fasttemplate(template['spec']['source']['path'], params)
        server = fasttemplate(template['spec']['destination']['server'], params)
        assert os.path.normpath(path) == repository_paths[cluster], (cluster, path, repository_paths[cluster])
        assert server == params['server']
        applications[name] = path
    assert len(applications) == len(CLUSTERS), 'one Application per cluster, each with its own name'


def test_the_flux_kustomization_uses_only_fields_of_the_v1_api_and_the_path_render_wrote(documents, repository_paths, section):
    kustomization = documents['Kustomization'][0]
    assert kustomization['apiVersion'] == 'kustomize.toolkit.fluxcd.io/v1'
    spec = kustomization['spec']
    assert not unknown(spec, KUSTOMIZATION_SPEC), unknown(spec, KUSTOMIZATION_SPEC)
    assert KUSTOMIZATION_REQUIRED <= set(spec), KUSTOMIZATION_REQUIRED - set(spec)
    assert DURATION.match(spec['interval']), spec['interval']
    assert isinstance(spec['prune'], bool)
    reference = spec['sourceRef']
    assert not unknown(reference, SOURCE_REFERENCE) and {'kind', 'name'} <= set(reference), reference
    assert reference['kind'] in SOURCE_KINDS
    if 'targetNamespace' in spec:
        assert 1 <= len(spec['targetNamespace']) <= 63
    assert os.path.normpath(spec['path']) == repository_paths['cluster-a'], (spec['path'], repository_paths)
    # the tree beside it: each cluster's Kustomization file and render's directory for it
    for cluster in CLUSTERS:
        assert re.search(r'^clusters/%s/egressip\.yaml\s.*path \./%s$' % (cluster, re.escape(repository_paths[cluster])),
                         section, re.M), cluster
        assert re.search(r'^%s/\s' % re.escape(repository_paths[cluster]), section, re.M), cluster


def test_the_checks_see_a_wrong_field():
    broken = yaml_blocks('```yaml\nkind: Kustomization\nspec: {interval: 10 minutes, path: ./x, sourceRef: {kind: Git}}\n```')[0]
    spec = broken['spec']
    assert not DURATION.match(spec['interval'])
    assert KUSTOMIZATION_REQUIRED - set(spec) == {'prune'}
    assert spec['sourceRef']['kind'] not in SOURCE_KINDS
    assert unknown({'repoURL': 1, 'revision': 2}, APPLICATION_SOURCE) == ['revision']
    with pytest.raises(AssertionError):
        fasttemplate('egressip/{{metadata.labels.other}}', {'name': 'x'})
