# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""vSphere connection and batched PropertyCollector reads (the module base is clients/module.py).

Connection options and environment variables are those of vmware.vmware, so the same AAP
credential and ``module_defaults`` serve both collections. Private module_util: no API
promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import atexit
import collections
import os
import socket
import ssl
import traceback

try:
    from http.client import HTTPException
except ImportError:  # pragma: no cover - Python 2 is not supported by the connection code
    HTTPException = Exception

# pyVmomi on first use (clients/pyvmomi.py); whether it is installed is checked by the module base
from ansible_collections.ocp.egressip.plugins.module_utils.clients.pyvmomi import vim, vmodl
from ansible_collections.ocp.egressip.plugins.module_utils.clients.pyvmomi import smart_connect as SmartConnect  # noqa: N812
from ansible_collections.ocp.egressip.plugins.module_utils.clients.pyvmomi import disconnect as Disconnect  # noqa: N812

from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure, library_versions
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere_options import VSPHERE_ENV

# Seconds allowed to open the TCP connection before the vCenter counts as unreachable.
CONNECT_TIMEOUT = 15

# One object read by the PropertyCollector: its reference, moid and {property path: value}.
ObjectRecord = collections.namedtuple('ObjectRecord', ['ref', 'moid', 'props'])


def fault_name(fault):
    """The vSphere fault type as vCenter names it (``InvalidLogin``, ``NotFound``, ...)."""
    return getattr(fault, '_wsdlName', None) or type(fault).__name__


# Properties every fault has; the others (privilegeId, object, deviceIndex...) say what went wrong.
_FAULT_BASE_PROPERTIES = ('dynamicType', 'dynamicProperty', 'msg', 'faultCause', 'faultMessage')


def _fault_value(value):
    moid = getattr(value, '_moId', None)
    if moid is not None:
        return '%s:%s' % (getattr(value, '_wsdlName', None) or type(value).__name__, moid)
    if isinstance(value, (list, tuple)):
        return ', '.join(_fault_value(item) for item in value)
    return str(value)


def _fault_details(fault):
    """``name=value`` of the fault's own properties that are set (pyVmomi's repr is a multi-line dump)."""
    try:
        properties = [prop.name for prop in fault._GetPropertyList()]  # pylint: disable=protected-access
    except AttributeError:
        return ''
    details = []
    for name in properties:
        value = getattr(fault, name, None)
        if name in _FAULT_BASE_PROPERTIES or value is None or (isinstance(value, (list, tuple)) and not value):
            continue
        text = _fault_value(value)
        if text:
            details.append('%s=%s' % (name, text))
    return ', '.join(details)


def fault_text(fault):
    """``<FaultType>: <message>`` for a vim/vmodl fault, keeping the server's wording.

    Without a message (vCenter sends some faults bare): the fault's own properties, such as
    ``object=Network:network-7, privilegeId=Network.Assign`` for NoPermission.
    """
    message = getattr(fault, 'msg', None)
    if not message:
        localized = [getattr(item, 'message', None) for item in (getattr(fault, 'faultMessage', None) or [])]
        message = '; '.join(text for text in localized if text) or _fault_details(fault) or 'no message from vCenter'
    return '%s: %s' % (fault_name(fault), message)


def _failure(msg, **details):
    details.update(library_versions('pyvmomi'))
    return ModuleFailure(msg, **details)


def _param(params, name):
    value = params.get(name)
    if value in (None, ''):
        raise _failure('vCenter %s is not set: set the %s option or the %s environment variable' % (name, name, VSPHERE_ENV[name]))
    return value


def _probe_tcp(host, port, endpoint_text):
    """Fail fast with a clear message when nothing answers on host:port (no login, no request)."""
    try:
        sock = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT)
    except socket.timeout:
        raise _failure('Cannot reach %s: no answer within %d seconds (check hostname, port and firewall)' % (endpoint_text, CONNECT_TIMEOUT),
                       reason='unreachable')
    except (OSError, socket.error) as exc:
        raise _failure('Cannot reach %s: %s (check hostname, port and firewall)' % (endpoint_text, _os_error_text(exc)), reason='unreachable')
    sock.close()


def _os_error_text(exc):
    return getattr(exc, 'strerror', None) or str(exc) or type(exc).__name__


# A PEM file of CA certificates trusted for vCenter besides the system's (the collection's AAP credential type injects it).
VCENTER_CA_BUNDLE_ENV = 'OCP_EGRESSIP_VCENTER_CA_BUNDLE'


def _trust_ca_bundle(ssl_context, path):
    if not path:
        return
    try:
        ssl_context.load_verify_locations(cafile=path)
    except (OSError, ssl.SSLError) as exc:
        raise _failure('%s %s cannot be used as the vCenter CA bundle: %s. Give a readable PEM file of CA certificates, or unset it.'
                       % (VCENTER_CA_BUNDLE_ENV, path, _os_error_text(exc)), reason='ca_bundle_invalid')


def connect_vsphere(params):
    """Log in to vCenter with the connection options; returns a VsphereClient.

    Raises ModuleFailure naming the host and port (never the password) for a wrong login,
    an untrusted certificate, or an unreachable host.
    """
    hostname = _param(params, 'hostname')
    username = _param(params, 'username')
    password = _param(params, 'password')
    port = params.get('port') or 443
    proxy_host = params.get('proxy_host')
    proxy_port = params.get('proxy_port')
    endpoint = '%s:%s' % (hostname, port)
    endpoint_text = 'vCenter %s' % endpoint
    if proxy_host:
        if not proxy_port:
            raise _failure('proxy_host %s is set but proxy_port is not: set proxy_port or %s' % (proxy_host, VSPHERE_ENV['proxy_port']))
        endpoint_text += ' through proxy %s:%s' % (proxy_host, proxy_port)
        _probe_tcp(proxy_host, proxy_port, 'the proxy %s:%s for vCenter %s' % (proxy_host, proxy_port, endpoint))
    else:
        _probe_tcp(hostname, port, endpoint_text)

    if params.get('validate_certs', True):
        ssl_context = ssl.create_default_context()
        _trust_ca_bundle(ssl_context, os.environ.get(VCENTER_CA_BUNDLE_ENV))
    else:
        ssl_context = ssl._create_unverified_context()  # pylint: disable=protected-access
    # An explicit context also stops pyVmomi from silently skipping verification for localhost.
    connect_args = dict(host=hostname, port=port, user=username, pwd=password, sslContext=ssl_context)
    if proxy_host:
        connect_args.update(httpProxyHost=proxy_host, httpProxyPort=proxy_port)
    try:
        service_instance = SmartConnect(**connect_args)
    except vim.fault.InvalidLogin as exc:
        raise _failure('%s refused the login of user %s: %s Check the username and password (%s, %s).'
                       % (endpoint_text, username, (exc.msg or 'invalid login').rstrip('.') + '.', VSPHERE_ENV['username'], VSPHERE_ENV['password']),
                       reason='login_refused', fault=fault_name(exc))
    except vim.fault.NoPermission as exc:
        raise _failure('User %s may not log in to %s: %s' % (username, endpoint_text, fault_text(exc)), reason='no_permission', fault=fault_name(exc))
    except vmodl.MethodFault as exc:
        raise _failure('Login to %s as %s failed: %s' % (endpoint_text, username, fault_text(exc)), reason='login_failed', fault=fault_name(exc))
    except ssl.SSLCertVerificationError as exc:
        raise _failure('The TLS certificate of %s is not trusted: %s. Add the vCenter CA certificate to the system trust store '
                       '(or point %s or SSL_CERT_FILE at it), or set validate_certs: false (%s=false) where the network is trusted.'
                       % (endpoint_text, getattr(exc, 'verify_message', None) or exc.reason or exc, VCENTER_CA_BUNDLE_ENV,
                          VSPHERE_ENV['validate_certs']),
                       reason='certificate_untrusted')
    except ssl.SSLError as exc:
        raise _failure('TLS handshake with %s failed: %s' % (endpoint_text, exc.reason or exc), reason='tls_failed')
    except (OSError, socket.error, HTTPException) as exc:
        raise _failure('Cannot talk to %s: %s' % (endpoint_text, _os_error_text(exc)), reason='unreachable')
    except Exception as exc:  # pylint: disable=broad-except
        # pyVmomi raises a bare Exception when no vSphere API answers at /sdk.
        raise _failure('%s does not answer as a vSphere API endpoint: %s' % (endpoint_text, exc), reason='not_vsphere')
    atexit.register(_disconnect_quietly, service_instance)
    return VsphereClient(service_instance, endpoint)


def _disconnect_quietly(service_instance):
    try:
        Disconnect(service_instance)
    except Exception:  # pylint: disable=broad-except
        pass  # the session times out on the server; a failed logout must not change the result


class VsphereClient(object):
    """A logged-in vCenter session with batched reads.

    Every read is one PropertyCollector RetrievePropertiesEx (plus ContinueRetrievePropertiesEx
    pages), so its cost does not grow with the number of objects read.
    """

    def __init__(self, service_instance, endpoint):
        self.service_instance = service_instance
        self.endpoint = endpoint
        self.content = self.call('RetrieveServiceContent', 'reading the service content', service_instance.RetrieveContent)

    def call(self, method, purpose, func, *args, **kwargs):
        """Run one vCenter call; a fault becomes a ModuleFailure that keeps its fault type and message."""
        try:
            return func(*args, **kwargs)
        except vmodl.MethodFault as exc:
            raise _failure('vCenter %s: %s (%s) failed: %s' % (self.endpoint, purpose, method, fault_text(exc)), fault=fault_name(exc))
        except (OSError, socket.error, HTTPException) as exc:
            raise _failure('vCenter %s: %s (%s) failed: connection error: %s' % (self.endpoint, purpose, method, _os_error_text(exc)),
                           reason='connection_error')
        except Exception as exc:  # pylint: disable=broad-except
            # e.g. an answer pyVmomi cannot parse: still name the endpoint and the call, keep the traceback for -vvv
            raise _failure('vCenter %s: %s (%s) failed: unexpected %s: %s' % (self.endpoint, purpose, method, type(exc).__name__, exc),
                           reason='unexpected_error', exception=traceback.format_exc())

    def retrieve_view(self, container, specs, purpose, recursive=True):
        """Read properties of every object of the given types under ``container``.

        ``specs`` is a list of ``(vim type, [property paths])``. One ContainerView is created,
        read with one RetrievePropertiesEx (paged) and destroyed afterwards.
        """
        view_manager = self.content.viewManager
        view = self.call('CreateContainerView', purpose, view_manager.CreateContainerView, container, [spec[0] for spec in specs], recursive)
        try:
            traversal = vmodl.query.PropertyCollector.TraversalSpec(name='traverseView', type=vim.view.ContainerView, path='view', skip=False)
            object_spec = vmodl.query.PropertyCollector.ObjectSpec(obj=view, skip=True, selectSet=[traversal])
            return self._retrieve([object_spec], specs, purpose)
        finally:
            try:
                view.DestroyView()
            except Exception:  # pylint: disable=broad-except
                pass  # views die with the session; a failed clean-up must not hide the read's outcome

    def retrieve_objects(self, refs, vim_type, paths, purpose):
        """Read properties of known objects (by reference) in one RetrievePropertiesEx.

        Objects deleted since their reference was read are left out.
        """
        object_specs = [vmodl.query.PropertyCollector.ObjectSpec(obj=ref, skip=False) for ref in refs]
        return self._retrieve(object_specs, [(vim_type, paths)], purpose, report_missing=True)

    def _retrieve(self, object_specs, specs, purpose, report_missing=False):
        if not object_specs:
            return []
        collector = self.content.propertyCollector
        filter_spec = vmodl.query.PropertyCollector.FilterSpec(
            objectSet=object_specs,
            propSet=[vmodl.query.PropertyCollector.PropertySpec(type=vim_type, pathSet=list(paths), all=False) for vim_type, paths in specs],
            reportMissingObjectsInResults=report_missing,
        )
        options = vmodl.query.PropertyCollector.RetrieveOptions()
        result = self.call('RetrievePropertiesEx', purpose, collector.RetrievePropertiesEx, specSet=[filter_spec], options=options)

        def next_page(token):
            return self.call('ContinueRetrievePropertiesEx', purpose, collector.ContinueRetrievePropertiesEx, token=token)

        return list(_records_from_pages(result, next_page))


def _records_from_pages(result, next_page):
    """Yield an ObjectRecord per object over all pages of a RetrievePropertiesEx result."""
    while result is not None:
        for content in result.objects or []:
            props = dict((prop.name, prop.val) for prop in (content.propSet or []))
            if not props and content.missingSet:
                continue  # object vanished since its reference was read
            yield ObjectRecord(ref=content.obj, moid=content.obj._moId, props=props)  # pylint: disable=protected-access
        if not result.token:
            return
        result = next_page(result.token)
