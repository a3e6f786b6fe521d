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
// NewServiceUnavailable, NewTimeoutError...), except an error made by
// Ambiguous. Nil removes the interceptor.
func (s *Sim) SetAPIInterceptor(f func(APIRequest) error) { s.intercept = f }

// Ambiguous wraps err for an interceptor to return: a write (create,
// update, patch, delete, deletecollection, binding) is then committed as
// usual — watch events included — and err is returned to the caller in
// place of the result, as when a request times out after the API server
// applied it. A read fails with err.
func Ambiguous(err error) error { return &ambiguousError{err: err} }

type ambiguousError struct{ err error }

func (a *ambiguousError) Error() string { return "ambiguous: " + a.err.Error() }
func (a *ambiguousError) Unwrap() error { return a.err }

// intercept runs the interceptor for a read: any error fails it.
func (c *simClient) intercept(verb string, gvk schema.GroupVersionKind, ns, name, sub string) error {
	after, err := c.admitWrite(verb, gvk, ns, name, sub)
	if after != nil {
		return after
	}
	return err
}

// admitWrite runs the interceptor for a write: fail fails it without
// effect; after (from Ambiguous) lets it commit and replaces its result.
func (c *simClient) admitWrite(verb string, gvk schema.GroupVersionKind, ns, name, sub string) (after, fail error) {
	if a := c.s.active; a != nil && a.crashed {
		return nil, errProcessKilled
	}
	if a := c.s.active; a != nil && writeVerbs[verb] {
		a.writes++
	}
	if c.s.intercept == nil {
		return nil, nil
	}
	err := c.s.intercept(APIRequest{Client: c.name, Verb: verb, GVK: gvk, Namespace: ns, Name: name, Subresource: sub})
	if amb, ok := err.(*ambiguousError); ok {
		return amb.err, nil
	}
	return nil, err
}

// writeVerbs are the verbs SetWriteDuration counts.
var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// result is a write's outcome: the ambiguous error when there is one.
func result(after, err error) error {
	if after != nil {
		return after
	}
	return err
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
