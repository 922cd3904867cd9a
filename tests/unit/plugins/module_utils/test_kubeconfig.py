"""_kubeconfig: kubeconfig files and dicts read with kubectl's rules, the Pod service account, credential plugins."""

import base64
import os
import shutil
import stat
import sys
import tempfile

import pytest
import yaml

from ansible_collections.ocp.egressip.plugins.module_utils.clients import kubeconfig as _kubeconfig
from ansible_collections.ocp.egressip.plugins.module_utils.clients.kubeconfig import Kubeconfig, KubeconfigError

TOKEN = 'sha256~kubeconfig-t0ken'
EXEC_TOKEN = 'exec-plugin-t0ken-42'
EXEC_API_VERSION = 'client.authentication.k8s.io/v1beta1'
PEM = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUfakefakefake\n-----END CERTIFICATE-----\n'


def b64(data):
    if isinstance(data, str):
        data = data.encode('utf-8')
    return base64.b64encode(data).decode('ascii')


def config(clusters=None, users=None, contexts=None, current=None):
    """A kubeconfig dict from ``{name: value}`` mappings."""
    content = {'apiVersion': 'v1', 'kind': 'Config'}
    for plural, singular, entries in (('clusters', 'cluster', clusters), ('users', 'user', users), ('contexts', 'context', contexts)):
        if entries is not None:
            content[plural] = [{'name': name, singular: value} for name, value in entries.items()]
    if current is not None:
        content['current-context'] = current
    return content


def simple(server='https://api.example.com:6443', user=None, cluster_extra=None):
    cluster = {'server': server}
    cluster.update(cluster_extra or {})
    return config(clusters={'c': cluster}, users={'u': user if user is not None else {'token': TOKEN}},
                  contexts={'ctx': {'cluster': 'c', 'user': 'u'}}, current='ctx')


def write(path, content):
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content)
    else:
        path.write_text(yaml.safe_dump(content))
    return str(path)


def touch(path, text='x'):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def connect(tmp_path, content, context=None, name='config'):
    return Kubeconfig.from_files([write(tmp_path / name, content)]).connection(context)


def error_of(tmp_path, content, context=None):
    with pytest.raises(KubeconfigError) as info:
        connect(tmp_path, content, context)
    return str(info.value)


@pytest.fixture
def private_dir(monkeypatch, tmp_path):
    """Data-given client certificates and keys go to a fresh directory under tmp_path."""
    base = tmp_path / 'tmpdir'
    base.mkdir()
    monkeypatch.setattr(tempfile, 'tempdir', str(base))
    monkeypatch.setattr(_kubeconfig, '_TEMP_DIR', [])
    return base


# ---------------------------------------------------------------------------------------------------------------
# Merging several files


def test_first_file_wins_for_entries_of_the_same_name(tmp_path):
    first = write(tmp_path / 'one' / 'config', config(
        clusters={'shared': {'server': 'https://first.example.com:6443'}},
        users={'admin': {'token': 'first-token'}},
        contexts={'main': {'cluster': 'shared', 'user': 'admin'}},
        current='main'))
    second = write(tmp_path / 'two' / 'config', config(
        clusters={'shared': {'server': 'https://second.example.com:6443'}, 'extra': {'server': 'https://extra.example.com'}},
        users={'admin': {'token': 'second-token'}, 'viewer': {'token': 'viewer-token'}},
        contexts={'main': {'cluster': 'extra', 'user': 'viewer'}, 'other': {'cluster': 'extra', 'user': 'viewer'}},
        current='other'))
    merged = Kubeconfig.from_files([first, second])
    assert merged.current_context == 'main'
    connection = merged.connection()
    assert connection.host == 'https://first.example.com:6443'
    assert connection.authorization == 'Bearer first-token'
    assert 'second-token' not in connection.secrets
    # entries only the second file defines are usable
    other = merged.connection('other')
    assert other.host == 'https://extra.example.com'
    assert other.authorization == 'Bearer viewer-token'


def test_a_context_of_the_first_file_may_use_a_cluster_and_user_of_the_second(tmp_path):
    first = write(tmp_path / 'one' / 'config', config(contexts={'mixed': {'cluster': 'remote', 'user': 'robot'}}, current='mixed'))
    second = write(tmp_path / 'two' / 'config', config(clusters={'remote': {'server': 'https://remote.example.com'}},
                                                       users={'robot': {'token': 'robot-token'}}))
    connection = Kubeconfig.from_files([first, second]).connection()
    assert (connection.host, connection.authorization) == ('https://remote.example.com', 'Bearer robot-token')


def test_current_context_comes_from_the_second_file_when_the_first_sets_none(tmp_path):
    first = write(tmp_path / 'one' / 'config', config(clusters={'a': {'server': 'https://a.example.com'}},
                                                      users={'ua': {'token': 'token-a'}},
                                                      contexts={'ctx-a': {'cluster': 'a', 'user': 'ua'}}))
    second = write(tmp_path / 'two' / 'config', config(clusters={'b': {'server': 'https://b.example.com'}},
                                                       users={'ub': {'token': 'token-b'}},
                                                       contexts={'ctx-b': {'cluster': 'b', 'user': 'ub'}},
                                                       current='ctx-b'))
    third = write(tmp_path / 'three' / 'config', config(current='ctx-a'))
    merged = Kubeconfig.from_files([first, second, third])
    assert merged.current_context == 'ctx-b'
    assert merged.connection().host == 'https://b.example.com'
    assert merged.connection('ctx-a').authorization == 'Bearer token-a'


# ---------------------------------------------------------------------------------------------------------------
# Paths: relative to the file that defines the entry, ~ expanded


def test_relative_paths_resolve_against_the_directory_of_the_file_defining_the_entry(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = write(tmp_path / 'one' / 'config', config(
        clusters={'c1': {'server': 'https://one.example.com', 'certificate-authority': 'ca.crt'}},
        users={'u1': {'tokenFile': 'token'}},
        contexts={'ctx1': {'cluster': 'c1', 'user': 'u1'}, 'cross': {'cluster': 'c2', 'user': 'u2'}},
        current='ctx1'))
    second_dir = tmp_path / 'elsewhere' / 'kube'
    second = write(second_dir / 'config', config(
        clusters={'c2': {'server': 'https://two.example.com', 'certificate-authority': 'certs/ca.crt'}},
        users={'u2': {'client-certificate': 'certs/client.crt', 'client-key': '../keys/client.key', 'tokenFile': 'secret/token'}}))
    ca1 = touch(tmp_path / 'one' / 'ca.crt')
    touch(tmp_path / 'one' / 'token', 'token-one\n')
    ca2 = touch(second_dir / 'certs' / 'ca.crt')
    cert2 = touch(second_dir / 'certs' / 'client.crt')
    key2 = touch(tmp_path / 'elsewhere' / 'keys' / 'client.key')
    touch(second_dir / 'secret' / 'token', '  token-two \n')
    merged = Kubeconfig.from_files([first, second])

    one = merged.connection()
    assert one.ssl_ca_cert == ca1
    assert one.authorization == 'Bearer token-one'

    two = merged.connection('cross')  # a context of the first file, a cluster and user of the second
    assert two.ssl_ca_cert == ca2
    assert (two.cert_file, two.key_file) == (cert2, key2)
    assert two.authorization == 'Bearer token-two'
    assert 'token-two' in two.secrets


def test_relative_path_missing_beside_its_file_is_an_error_even_if_it_exists_in_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    touch(tmp_path / 'ca.crt')
    message = error_of(tmp_path / 'kube', simple(cluster_extra={'certificate-authority': 'ca.crt'}))
    assert 'certificate-authority' in message
    assert str(tmp_path / 'kube' / 'ca.crt') in message


def test_tilde_is_expanded(tmp_path, monkeypatch):
    home = tmp_path / 'home'
    monkeypatch.setenv('HOME', str(home))
    ca = touch(home / '.kube' / 'ca.crt')
    touch(home / '.kube' / 'token', 'home-token')
    connection = connect(tmp_path / 'conf', simple(cluster_extra={'certificate-authority': '~/.kube/ca.crt'},
                                                   user={'tokenFile': '~/.kube/token'}))
    assert connection.ssl_ca_cert == ca
    assert connection.authorization == 'Bearer home-token'


# ---------------------------------------------------------------------------------------------------------------
# Data given inline


def test_certificate_authority_data_becomes_pem_text(tmp_path):
    connection = connect(tmp_path, simple(cluster_extra={'certificate-authority-data': b64(PEM),
                                                         'certificate-authority': 'ignored-when-data-is-given.crt'}))
    assert connection.ca_cert_data == PEM
    assert connection.ssl_ca_cert is None


def test_client_certificate_and_key_data_become_private_files(tmp_path, private_dir):
    cert_bytes = PEM.encode('ascii') + b'\x00\xff binary tail'
    key_bytes = b'-----BEGIN PRIVATE KEY-----\nsecret-key-material\n-----END PRIVATE KEY-----\n'
    connection = connect(tmp_path, simple(user={'client-certificate-data': b64(cert_bytes), 'client-key-data': b64(key_bytes)}))
    assert connection.authorization is None
    for path, content in ((connection.cert_file, cert_bytes), (connection.key_file, key_bytes)):
        with open(path, 'rb') as handle:
            assert handle.read() == content
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        directory = os.path.dirname(path)
        # <tmp>/ocp-egressip-k8s-<uid>/<pid>-<random>: where the next run finds what a SIGKILL left behind
        assert os.path.dirname(directory) == str(private_dir / ('ocp-egressip-k8s-%d' % os.getuid()))
        assert os.path.basename(directory).startswith('%d-' % os.getpid())
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(os.path.dirname(directory)).st_mode) == 0o700
    assert connection.cert_file != connection.key_file


def test_a_detached_process_keeps_copies_of_the_data_given_certificate_after_this_run_removed_its_files(tmp_path, private_dir):
    """cluster_lock's renewer outlives the module run, whose exit removes the files written from kubeconfig data: the
    renewer writes copies of its own (read before the run ended) and points its connection at them."""
    connection = connect(tmp_path, simple(user={'client-certificate-data': b64('cert'), 'client-key-data': b64('key')}))
    run_dir = os.path.dirname(connection.cert_file)
    in_child = _kubeconfig.detached_copies(connection)
    shutil.rmtree(run_dir)   # the module run's atexit
    own = in_child()
    assert own and own != run_dir and os.path.dirname(connection.cert_file) == own == os.path.dirname(connection.key_file)
    for path, content in ((connection.cert_file, b'cert'), (connection.key_file, b'key')):
        with open(path, 'rb') as handle:
            assert handle.read() == content
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_a_detached_process_copies_nothing_of_certificates_the_kubeconfig_names_by_path(tmp_path, private_dir):
    touch(tmp_path / 'client.crt', 'cert')
    touch(tmp_path / 'client.key', 'key')
    connection = connect(tmp_path, simple(user={'client-certificate': str(tmp_path / 'client.crt'), 'client-key': str(tmp_path / 'client.key')}))
    assert _kubeconfig.detached_copies(connection)() is None
    assert connection.cert_file == str(tmp_path / 'client.crt') and connection.key_file == str(tmp_path / 'client.key')


def _dead_pid():
    import subprocess
    proc = subprocess.Popen(['true'])
    proc.wait()
    return proc.pid


def test_run_dirs_of_gone_processes_are_removed_by_the_next_run(tmp_path, private_dir):
    base = private_dir / ('ocp-egressip-k8s-%d' % os.getuid())
    base.mkdir(mode=0o700)
    stale = base / ('%d-abcd' % _dead_pid())
    stale.mkdir()
    (stale / 'key').write_bytes(b'left behind by a SIGKILL')
    alive = base / ('%d-efgh' % os.getppid())
    alive.mkdir()
    connect(tmp_path, simple(user={'client-certificate-data': b64('cert'), 'client-key-data': b64('key')}))
    assert not stale.exists()
    assert alive.exists()


def test_a_base_directory_others_could_write_is_not_used(tmp_path, private_dir):
    base = private_dir / ('ocp-egressip-k8s-%d' % os.getuid())
    base.mkdir()
    os.chmod(str(base), 0o777)
    connection = connect(tmp_path, simple(user={'client-certificate-data': b64('cert'), 'client-key-data': b64('key')}))
    assert os.path.dirname(os.path.dirname(connection.cert_file)) == str(private_dir)


def test_client_certificate_data_wins_over_the_file(tmp_path, private_dir):
    connection = connect(tmp_path, simple(user={'client-certificate-data': b64('cert'), 'client-certificate': 'missing.crt',
                                                'client-key-data': b64('key'), 'client-key': 'missing.key'}))
    with open(connection.cert_file) as handle:
        assert handle.read() == 'cert'


def test_base64_data_wrapped_over_several_lines_is_accepted_like_kubectl(tmp_path):
    encoded = b64(PEM * 3)
    wrapped = '\n'.join(encoded[index:index + 76] for index in range(0, len(encoded), 76)) + '\n'
    text = yaml.safe_dump(simple()).replace("server: https://api.example.com:6443",
                                            "server: https://api.example.com:6443\n    certificate-authority-data: |\n"
                                            + ''.join('      %s\n' % line for line in wrapped.splitlines()))
    assert '\n' in yaml.safe_load(text)['clusters'][0]['cluster']['certificate-authority-data'].strip()
    assert connect(tmp_path, text).ca_cert_data == PEM * 3


@pytest.mark.parametrize('where, key, owner', [
    ('cluster', 'certificate-authority-data', 'cluster c'),
    ('user', 'client-certificate-data', 'user u'),
    ('user', 'client-key-data', 'user u'),
])
def test_invalid_base64_names_the_key_and_owner_never_the_data(tmp_path, private_dir, where, key, owner):
    bad = 'S3CR3T-n0t*base64!!'
    user = {'client-certificate-data': b64('cert'), 'client-key-data': b64('key')}
    cluster_extra = {}
    (cluster_extra if where == 'cluster' else user)[key] = bad
    message = error_of(tmp_path, simple(user=user, cluster_extra=cluster_extra))
    assert key in message
    assert owner in message
    assert 'base64' in message
    assert bad not in message and 'S3CR3T' not in message


# ---------------------------------------------------------------------------------------------------------------
# Credentials


def test_token_is_bearer_and_secret(tmp_path):
    connection = connect(tmp_path, simple(user={'token': ' %s \n' % TOKEN}))
    assert connection.authorization == 'Bearer %s' % TOKEN
    assert TOKEN in connection.secrets
    assert 'Bearer %s' % TOKEN in connection.secrets


def test_token_wins_over_token_file(tmp_path):
    connection = connect(tmp_path, simple(user={'token': TOKEN, 'tokenFile': 'does-not-exist'}))
    assert connection.authorization == 'Bearer %s' % TOKEN


def test_token_file_is_read_and_stripped(tmp_path):
    touch(tmp_path / 'token', '\n  file-token-value \n\n')
    connection = connect(tmp_path, simple(user={'tokenFile': 'token'}))
    assert connection.authorization == 'Bearer file-token-value'
    assert 'file-token-value' in connection.secrets


def test_empty_token_file_is_an_error(tmp_path):
    token = touch(tmp_path / 'token', ' \n')
    message = error_of(tmp_path, simple(user={'tokenFile': 'token'}))
    assert 'tokenFile' in message and token in message and 'empty' in message
    assert 'user u' in message


def test_missing_token_file_is_an_error_naming_key_and_path(tmp_path):
    message = error_of(tmp_path, simple(user={'tokenFile': 'nowhere/token'}))
    assert 'tokenFile' in message
    assert str(tmp_path / 'nowhere' / 'token') in message
    assert 'does not exist' in message


def test_username_and_password_give_a_basic_header(tmp_path):
    connection = connect(tmp_path, simple(user={'username': 'alice', 'password': 'pa:ss w0rd'}))
    credentials = base64.b64encode(b'alice:pa:ss w0rd').decode('ascii')
    assert connection.authorization == 'Basic %s' % credentials
    assert 'pa:ss w0rd' in connection.secrets
    assert credentials in connection.secrets
    assert connection.authorization in connection.secrets


@pytest.mark.parametrize('key', ['certificate-authority', 'client-certificate', 'client-key'])
def test_missing_referenced_file_is_an_error_naming_key_and_path(tmp_path, key):
    touch(tmp_path / 'present.crt')
    user = {'client-certificate': 'present.crt', 'client-key': 'present.crt'}
    cluster_extra = {}
    (cluster_extra if key == 'certificate-authority' else user)[key] = 'absent/file.pem'
    message = error_of(tmp_path, simple(user=user, cluster_extra=cluster_extra))
    assert message.startswith(key + ' ')
    assert str(tmp_path / 'absent' / 'file.pem') in message
    assert ('cluster c' if key == 'certificate-authority' else 'user u') in message


@pytest.mark.parametrize('given', ['client-certificate', 'client-key'])
def test_certificate_without_key_or_key_without_certificate_is_an_error(tmp_path, given):
    touch(tmp_path / 'only.pem')
    message = error_of(tmp_path, simple(user={given: 'only.pem'}))
    assert 'user u' in message
    assert 'without' in message


def test_client_certificate_files_and_token_together(tmp_path):
    cert, key = touch(tmp_path / 'c.crt'), touch(tmp_path / 'c.key')
    connection = connect(tmp_path, simple(user={'token': TOKEN, 'client-certificate': 'c.crt', 'client-key': 'c.key'}))
    assert (connection.cert_file, connection.key_file, connection.authorization) == (cert, key, 'Bearer %s' % TOKEN)


def test_undefined_user_means_no_credentials(tmp_path):
    content = simple()
    content['contexts'][0]['context']['user'] = 'ghost'
    connection = connect(tmp_path, content)
    assert connection.host == 'https://api.example.com:6443'
    assert connection.authorization is None
    assert connection.cert_file is None and connection.key_file is None
    assert connection.secrets == set()


def test_context_without_user_means_no_credentials(tmp_path):
    content = simple()
    del content['contexts'][0]['context']['user']
    connection = connect(tmp_path, content)
    assert connection.authorization is None and connection.secrets == set()


# ---------------------------------------------------------------------------------------------------------------
# Cluster settings


def test_cluster_settings_are_copied(tmp_path):
    connection = connect(tmp_path, simple(server='https://10.0.0.1:6443///', cluster_extra={
        'insecure-skip-tls-verify': True, 'tls-server-name': 'api.internal', 'proxy-url': 'http://proxy.example.com:3128'}))
    assert connection.host == 'https://10.0.0.1:6443'
    assert connection.verify_ssl is False
    assert connection.tls_server_name == 'api.internal'
    assert connection.proxy == 'http://proxy.example.com:3128'


def test_cluster_defaults(tmp_path):
    connection = connect(tmp_path, simple(server='https://api.example.com/'))
    assert connection.host == 'https://api.example.com'
    assert connection.verify_ssl is True
    assert (connection.tls_server_name, connection.proxy, connection.ssl_ca_cert, connection.ca_cert_data) == (None, None, None, None)


def test_insecure_skip_tls_verify_false_keeps_verification(tmp_path):
    assert connect(tmp_path, simple(cluster_extra={'insecure-skip-tls-verify': False})).verify_ssl is True


def test_cluster_without_server_is_an_error(tmp_path):
    content = simple()
    del content['clusters'][0]['cluster']['server']
    message = error_of(tmp_path, content)
    assert 'cluster c' in message and 'context ctx' in message and 'no server' in message


# ---------------------------------------------------------------------------------------------------------------
# Contexts


def two_contexts():
    return config(clusters={'c': {'server': 'https://api.example.com'}}, users={'u': {'token': TOKEN}},
                  contexts={'zeta': {'cluster': 'c', 'user': 'u'}, 'alpha': {'cluster': 'c', 'user': 'u'}})


def test_the_context_argument_wins_over_current_context(tmp_path):
    content = two_contexts()
    content['current-context'] = 'zeta'
    content['clusters'].append({'name': 'other', 'cluster': {'server': 'https://other.example.com'}})
    content['contexts'][1]['context']['cluster'] = 'other'
    assert connect(tmp_path, content, context='alpha').host == 'https://other.example.com'


def test_undefined_context_is_an_error_listing_the_contexts(tmp_path):
    message = error_of(tmp_path, two_contexts(), context='missing')
    assert 'context missing is not defined' in message
    assert 'contexts: alpha, zeta' in message


def test_no_current_context_is_an_error_listing_the_contexts(tmp_path):
    message = error_of(tmp_path, two_contexts())
    assert 'no current-context' in message
    assert 'contexts: alpha, zeta' in message


def test_no_contexts_at_all_says_none(tmp_path):
    message = error_of(tmp_path, config(clusters={'c': {'server': 'https://x'}}))
    assert 'contexts: none' in message


def test_context_naming_an_undefined_cluster_is_an_error_listing_the_clusters(tmp_path):
    content = config(clusters={'east': {'server': 'https://e'}, 'west': {'server': 'https://w'}},
                     contexts={'ctx': {'cluster': 'north', 'user': 'u'}}, current='ctx')
    message = error_of(tmp_path, content)
    assert 'context ctx names cluster north' in message
    assert 'clusters: east, west' in message


# ---------------------------------------------------------------------------------------------------------------
# Files that are no kubeconfig


@pytest.mark.parametrize('text, expected', [
    ('- just\n- a list\n', 'is not a kubeconfig'),
    ('a plain string\n', 'is not a kubeconfig'),
    ('clusters: [\n  {name: a\n', 'is not valid YAML'),
    ('', 'is empty'),
    ('# only a comment\n', 'is empty'),
])
def test_a_file_that_is_no_kubeconfig_is_an_error_with_its_path(tmp_path, text, expected):
    good = write(tmp_path / 'good', simple())
    path = write(tmp_path / 'bad', text)
    with pytest.raises(KubeconfigError) as info:
        Kubeconfig.from_files([good, path])
    assert path in str(info.value)
    assert expected in str(info.value)


def test_a_missing_file_is_an_error_with_its_path(tmp_path):
    path = str(tmp_path / 'absent')
    with pytest.raises(KubeconfigError) as info:
        Kubeconfig.from_files([path])
    assert 'cannot read %s' % path in str(info.value)


@pytest.mark.parametrize('content, expected', [
    ({'clusters': {'name': 'c'}}, 'clusters must be a list'),
    ({'users': [{'user': {'token': 't'}}]}, 'an entry of users has no name'),
    ({'contexts': ['ctx']}, 'an entry of contexts has no name'),
])
def test_malformed_lists_are_errors_with_the_path(tmp_path, content, expected):
    path = write(tmp_path / 'config', content)
    with pytest.raises(KubeconfigError) as info:
        Kubeconfig.from_files([path])
    assert str(info.value) == '%s: %s' % (path, expected)


# ---------------------------------------------------------------------------------------------------------------
# A kubeconfig given as a dict


def test_from_dict_resolves_relative_paths_against_the_current_directory(tmp_path, monkeypatch):
    cwd = tmp_path / 'cwd'
    ca = touch(cwd / 'certs' / 'ca.crt')
    touch(cwd / 'token', 'dict-token')
    monkeypatch.chdir(cwd)
    connection = Kubeconfig.from_dict(simple(cluster_extra={'certificate-authority': 'certs/ca.crt'}, user={'tokenFile': 'token'})).connection()
    assert connection.ssl_ca_cert == ca
    assert connection.authorization == 'Bearer dict-token'


def test_from_dict_that_is_not_a_mapping(tmp_path):
    with pytest.raises(KubeconfigError) as info:
        Kubeconfig.from_dict(['not', 'a', 'mapping'])
    assert 'the kubeconfig dictionary is not a kubeconfig' in str(info.value)


# ---------------------------------------------------------------------------------------------------------------
# In-cluster service account


def service_account(tmp_path, token='sa-token\n', ca=PEM):
    account = tmp_path / 'serviceaccount'
    account.mkdir()
    if token is not None:
        (account / 'token').write_text(token)
    if ca is not None:
        (account / 'ca.crt').write_text(ca)
    return account


def test_in_cluster_connection(tmp_path):
    account = service_account(tmp_path)
    connection = _kubeconfig.in_cluster_connection(environ={'KUBERNETES_SERVICE_HOST': '172.30.0.1', 'KUBERNETES_SERVICE_PORT': '443'},
                                                   account_dir=str(account))
    assert connection.host == 'https://172.30.0.1:443'
    assert connection.authorization == 'Bearer sa-token'
    assert 'sa-token' in connection.secrets
    assert connection.ssl_ca_cert == str(account / 'ca.crt')
    assert connection.verify_ssl is True


def test_in_cluster_ipv6_host_is_bracketed(tmp_path):
    account = service_account(tmp_path)
    connection = _kubeconfig.in_cluster_connection(environ={'KUBERNETES_SERVICE_HOST': 'fd02::1', 'KUBERNETES_SERVICE_PORT': '443'},
                                                   account_dir=str(account))
    assert connection.host == 'https://[fd02::1]:443'


def test_in_cluster_reads_os_environ_by_default(tmp_path, monkeypatch):
    account = service_account(tmp_path)
    monkeypatch.setenv('KUBERNETES_SERVICE_HOST', '10.0.0.1')
    monkeypatch.setenv('KUBERNETES_SERVICE_PORT', '6443')
    assert _kubeconfig.in_cluster_connection(account_dir=str(account)).host == 'https://10.0.0.1:6443'


@pytest.mark.parametrize('missing', ['token', 'ca.crt'])
def test_in_cluster_missing_file_is_an_error_naming_the_path(tmp_path, missing):
    account = service_account(tmp_path, **{'token' if missing == 'token' else 'ca': None})
    with pytest.raises(KubeconfigError) as info:
        _kubeconfig.in_cluster_connection(environ={'KUBERNETES_SERVICE_HOST': 'h', 'KUBERNETES_SERVICE_PORT': '1'}, account_dir=str(account))
    assert str(account / missing) in str(info.value)
    assert 'does not exist' in str(info.value)


def test_in_cluster_empty_token_is_an_error(tmp_path):
    account = service_account(tmp_path, token='\n')
    with pytest.raises(KubeconfigError) as info:
        _kubeconfig.in_cluster_connection(environ={'KUBERNETES_SERVICE_HOST': 'h', 'KUBERNETES_SERVICE_PORT': '1'}, account_dir=str(account))
    assert str(account / 'token') in str(info.value) and 'empty' in str(info.value)


@pytest.mark.parametrize('environ', [{}, {'KUBERNETES_SERVICE_HOST': '10.0.0.1'}, {'KUBERNETES_SERVICE_PORT': '443'}])
def test_in_cluster_without_environment_is_an_error(tmp_path, environ):
    account = service_account(tmp_path)
    with pytest.raises(KubeconfigError) as info:
        _kubeconfig.in_cluster_connection(environ=environ, account_dir=str(account))
    assert 'KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set' in str(info.value)


# ---------------------------------------------------------------------------------------------------------------
# Credential plugins: handed to the kubernetes library


def script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text('#!/bin/sh\n' + body)
    path.chmod(0o755)
    return str(path)


def token_plugin(tmp_path, token=EXEC_TOKEN):
    return script(tmp_path, 'exec-plugin', "cat <<'EOF'\n"
                  '{"apiVersion": "%s", "kind": "ExecCredential", "status": {"token": "%s"}}\n'
                  'EOF\n' % (EXEC_API_VERSION, token))


def exec_user(command, **extra):
    user = {'exec': {'apiVersion': EXEC_API_VERSION, 'command': command, 'interactiveMode': 'Never'}}
    user.update(extra)
    return user


def test_exec_plugin_token_is_used(tmp_path):
    connection = connect(tmp_path, simple(server='https://exec.example.com:6443', user=exec_user(token_plugin(tmp_path)),
                                          cluster_extra={'tls-server-name': 'api.internal'}))
    assert connection.authorization == 'Bearer %s' % EXEC_TOKEN
    assert EXEC_TOKEN in connection.secrets
    assert connection.host == 'https://exec.example.com:6443'
    assert connection.verify_ssl is True
    assert connection.tls_server_name == 'api.internal'


def test_exec_plugin_of_the_second_file_with_a_context_of_the_first(tmp_path):
    """The library loads the same files, and gets the context this module resolved (the first current-context)."""
    first = write(tmp_path / 'one' / 'config', config(contexts={'ctx': {'cluster': 'c', 'user': 'plugin'}}, current='ctx'))
    second = write(tmp_path / 'two' / 'config', config(clusters={'c': {'server': 'https://two.example.com'}},
                                                       users={'plugin': exec_user(token_plugin(tmp_path))},
                                                       contexts={'other': {'cluster': 'c', 'user': 'plugin'}},
                                                       current='other'))
    connection = Kubeconfig.from_files([first, second]).connection()
    assert connection.host == 'https://two.example.com'
    assert connection.authorization == 'Bearer %s' % EXEC_TOKEN


def test_exec_plugin_from_a_dict(tmp_path):
    connection = Kubeconfig.from_dict(simple(user=exec_user(token_plugin(tmp_path, 'dict-exec-token')))).connection()
    assert connection.authorization == 'Bearer dict-exec-token'
    assert 'dict-exec-token' in connection.secrets


@pytest.mark.parametrize('body', [
    'echo "plugin exploded" >&2\nexit 3\n',
    'echo "not json"\n',
    'echo \'{"apiVersion": "%s", "kind": "ExecCredential", "status": {}}\'\n' % EXEC_API_VERSION,
], ids=['exit-status-3', 'output-not-json', 'no-token-in-status'])
def test_exec_plugin_without_a_credential_is_a_kubeconfig_error(tmp_path, body):
    plugin = script(tmp_path, 'bad-plugin', body)
    with pytest.raises(KubeconfigError) as info:
        connect(tmp_path, simple(user=exec_user(plugin)))
    assert 'context ctx' in str(info.value)


def test_token_wins_over_exec_and_the_command_never_runs(tmp_path):
    marker = tmp_path / 'plugin-ran'
    plugin = script(tmp_path, 'marking-plugin', 'touch "%s"\nexit 1\n' % marker)
    connection = connect(tmp_path, simple(user=exec_user(plugin, token=TOKEN)))
    assert connection.authorization == 'Bearer %s' % TOKEN
    assert not marker.exists()


def test_token_file_wins_over_exec_and_the_command_never_runs(tmp_path):
    marker = tmp_path / 'plugin-ran'
    plugin = script(tmp_path, 'marking-plugin', 'touch "%s"\nexit 1\n' % marker)
    touch(tmp_path / 'token', 'file-token')
    connection = connect(tmp_path, simple(user=exec_user(plugin, tokenFile='token')))
    assert connection.authorization == 'Bearer file-token'
    assert not marker.exists()


@pytest.mark.parametrize('user', [
    exec_user('/bin/false'),
    {'auth-provider': {'name': 'oidc', 'config': {'id-token': 'x'}}},
    {'auth-provider': {'name': 'oidc'}, 'token': 'a token does not bypass an auth-provider'},
])
def test_credential_plugin_without_the_kubernetes_library(tmp_path, monkeypatch, user):
    monkeypatch.setitem(sys.modules, 'kubernetes', None)
    message = error_of(tmp_path, simple(user=user))
    assert 'needs the Python library kubernetes' in message
    assert 'context ctx' in message


def test_no_credential_plugin_needs_no_kubernetes_library(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, 'kubernetes', None)
    touch(tmp_path / 'token', 'plain')
    assert connect(tmp_path, simple(user={'tokenFile': 'token'})).authorization == 'Bearer plain'
