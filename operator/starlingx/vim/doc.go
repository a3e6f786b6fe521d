// Package vim is the operator's client for a StarlingX system: Keystone v3
// (token and service catalog), the VIM's orchestration API (nfv-vim,
// sw-upgrade and kube-upgrade strategies), USM (software releases and
// deploys) and sysinv (Kubernetes versions, kube upgrade, system, hosts).
//
// Controllers depend on the Client interface; New returns the HTTP
// implementation, and the simulator plugs its system model in behind the
// same interface.
//
// Behaviour:
//   - a Keystone token is fetched on first use, cached until shortly before
//     it expires, and fetched again once when a service answers 401;
//   - service URLs come from Config.Endpoints or, when empty, from the
//     token's catalog (vim/nfv, usm/usm, sysinv/platform);
//   - TLS verifies against the system roots plus Config.TLS.CABundle;
//     InsecureSkipVerify is an explicit opt-in;
//   - every attempt has its own timeout (Config.RequestTimeout); GETs are
//     retried with exponential backoff on 5xx, timeouts and connection
//     errors, never POST / PATCH / DELETE;
//   - errors are *Error, classified by IsNotFound / IsConflict /
//     IsUnavailable / IsBadRequest / IsUnauthorized, and carry the server's
//     faultstring; the password and tokens never appear in errors or logs.
//
// Wire shapes follow the public StarlingX sources: starlingx/nfv
// (nfv-vim api/controllers/v1/orchestration/sw_update, nfv-client
// openstack/sw_update.py), starlingx/update (software/api/controllers/v1,
// api-ref-usm-v1-update.rst) and starlingx/config (sysinv
// api/controllers/v1/kube_version.py, kube_upgrade.py, system.py, host.py).
package vim
