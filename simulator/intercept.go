package simulator

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// APIRequest describes an API call a client is about to make.
type APIRequest struct {
	// Client is "client" for Sim.Client(); the models use
	// "kube-controller-manager", "kube-scheduler" and "kubelet".
	Client string
	// Verb is get, list, create, update, patch, delete or deletecollection.
	Verb        string
	GVK         schema.GroupVersionKind
	Namespace   string
	Name        string
	Subresource string // "status", "binding" or ""
}

// SetAPIInterceptor installs f, called before every API call of every
// client. A non-nil error fails the call without effect and is returned to
// the caller as is (fault injection: apierrors.NewConflict,
// NewServiceUnavailable, NewTimeoutError...). Nil removes the interceptor.
func (s *Sim) SetAPIInterceptor(f func(APIRequest) error) { s.intercept = f }

func (c *simClient) intercept(verb string, gvk schema.GroupVersionKind, ns, name, sub string) error {
	if a := c.s.active; a != nil && a.crashed {
		return errProcessKilled
	}
	if c.s.intercept == nil {
		return nil
	}
	return c.s.intercept(APIRequest{Client: c.name, Verb: verb, GVK: gvk, Namespace: ns, Name: name, Subresource: sub})
}

// restMapper maps every kind in the scheme, with the store's idea of which
// are cluster-scoped; rebuilt when SetClusterScoped changes it.
func (s *Sim) restMapper() meta.RESTMapper {
	if s.mapper != nil && s.mapperKinds == len(s.store.clusterScoped) {
		return s.mapper
	}
	m := meta.NewDefaultRESTMapper(nil)
	for gvk := range s.scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		scope := meta.RESTScopeNamespace
		if !s.store.namespaced(gvk) {
			scope = meta.RESTScopeRoot
		}
		m.Add(gvk, scope)
	}
	s.mapper, s.mapperKinds = m, len(s.store.clusterScoped)
	return m
}
