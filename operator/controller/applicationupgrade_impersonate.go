package controller

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// ImpersonateFunc returns a client that acts as ServiceAccount
// namespace/name: every request carries Impersonate-User
// system:serviceaccount:namespace:name, so the API server authorizes it
// with that account's RBAC (the operator needs impersonate on
// serviceaccounts).
type ImpersonateFunc func(namespace, name string) (client.Client, error)

// NewImpersonator returns an ImpersonateFunc over cfg that builds one
// uncached client per ServiceAccount and reuses it (the RESTMapper is
// shared, so no discovery per client). Flux's kustomize-controller
// impersonates the same way (fluxcd/pkg runtime/client.Impersonator:
// rest.Config.Impersonate with the ServiceAccount's user name).
func NewImpersonator(cfg *rest.Config, scheme *runtime.Scheme, mapper meta.RESTMapper) ImpersonateFunc {
	var mu sync.Mutex
	clients := map[string]client.Client{}
	return func(namespace, name string) (client.Client, error) {
		// k8s.io/apiserver/pkg/authentication/serviceaccount.MakeUsername
		user := "system:serviceaccount:" + namespace + ":" + name
		mu.Lock()
		defer mu.Unlock()
		if c, ok := clients[user]; ok {
			return c, nil
		}
		ic := rest.CopyConfig(cfg)
		ic.Impersonate = rest.ImpersonationConfig{UserName: user}
		c, err := client.New(ic, client.Options{Scheme: scheme, Mapper: mapper})
		if err != nil {
			return nil, fmt.Errorf("client impersonating %s: %w", user, err)
		}
		clients[user] = c
		return c, nil
	}
}

// serviceAccount is the ServiceAccount whose rights apply to u's
// Deployment reads and writes: spec.serviceAccountName, else
// DefaultServiceAccount, else "" (the operator's own identity).
func (r *ApplicationUpgradeReconciler) serviceAccount(u *v1beta1.ApplicationUpgrade) string {
	if u.Spec.ServiceAccountName != "" {
		return u.Spec.ServiceAccountName
	}
	return r.DefaultServiceAccount
}

// deploymentClient is the client for u's Deployment reads and writes:
// one impersonating serviceAccount(u) in u's namespace, or r.Client.
func (r *ApplicationUpgradeReconciler) deploymentClient(u *v1beta1.ApplicationUpgrade) (client.Client, error) {
	sa := r.serviceAccount(u)
	if sa == "" {
		return r.Client, nil
	}
	if r.Impersonate == nil {
		return nil, fmt.Errorf("applicationupgrade %s/%s names serviceaccount %q but this operator cannot impersonate (no impersonating client configured)", u.Namespace, u.Name, sa)
	}
	return r.Impersonate(u.Namespace, sa)
}
