package webhook

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
)

// Policy is the pure part of admission: what an object may say by itself
// and against the other upgrades, without the requester's rights on
// Deployments (Validator asks those first).
type Policy struct {
	// AllowCrossNamespaceRefs admits components whose Deployment is in
	// another namespace than the upgrade.
	AllowCrossNamespaceRefs bool
	// CanGet reports whether the requester may get ApplicationUpgrade
	// namespace/name; the overlap guard names another upgrade only when it
	// is in the requester's namespace or CanGet says so, otherwise it
	// says the Deployment is claimed. Nil: only same-namespace upgrades
	// are named.
	CanGet func(namespace, name string) bool
}

// Check is Policy{} (cross-namespace references refused, other
// namespaces' upgrades never named).Check.
func Check(old, u *v1beta1.ApplicationUpgrade, others []v1beta1.ApplicationUpgrade) error {
	return Policy{}.Check(old, u, others)
}

// Check is the admission decision, a pure function: nil when u may be
// stored, else one error joining every problem ("; "), each saying what to
// fix (a StatusError of 422 Invalid when u is wrong in itself, see
// invalid). old is nil on create; on update only Deployments that old did not
// reference are checked for overlap. others may include u itself (skipped
// by namespace/name). A Deployment refused as a cross-namespace reference
// is not checked for overlap.
func (p Policy) Check(old, u *v1beta1.ApplicationUpgrade, others []v1beta1.ApplicationUpgrade) error {
	msgs := p.static(u)
	static := len(msgs)
	had := map[string]bool{}
	if old != nil {
		for key := range DeploymentKeys(old) {
			had[key] = true
		}
	}
	claimed := map[string]*v1beta1.ApplicationUpgrade{} // Deployment namespace/name -> oldest listed claimer
	for i := range others {
		o := &others[i]
		if (o.Namespace == u.Namespace && o.Name == u.Name) || !Active(o) {
			continue
		}
		for key := range DeploymentKeys(o) {
			if _, ok := claimed[key]; !ok {
				claimed[key] = o
			}
		}
	}
	keys := DeploymentKeys(u)
	sorted := make([]string, 0, len(keys))
	for key := range keys {
		sorted = append(sorted, key)
	}
	sort.Strings(sorted)
	for _, key := range sorted {
		other, ok := claimed[key]
		w, _ := v1beta1.ParseIndexKey(key)
		if !ok || had[key] || (!p.AllowCrossNamespaceRefs && w.Namespace != u.Namespace) {
			continue
		}
		by := "another applicationupgrade"
		if other.Namespace == u.Namespace || (p.CanGet != nil && p.CanGet(other.Namespace, other.Name)) {
			by = "applicationupgrade " + other.Namespace + "/" + other.Name
		}
		msgs = append(msgs, fmt.Sprintf("spec.components[%s]: %s is already being upgraded by %s: wait until that upgrade is Completed or Failed (or delete it), or remove this component", keys[key], w, by))
	}
	if len(msgs) == 0 {
		return nil
	}
	if static > 0 {
		return invalid(strings.Join(msgs, "; ")) // wrong in itself: 422
	}
	return errors.New(strings.Join(msgs, "; "))
}

// static is every problem of u by itself: the graph and images
// (appupgrade.Validate) and, unless allowed, cross-namespace references.
func (p Policy) static(u *v1beta1.ApplicationUpgrade) []string {
	var msgs []string
	for _, err := range appupgrade.Validate(u) {
		msgs = append(msgs, err.Error())
	}
	if !p.AllowCrossNamespaceRefs {
		for _, err := range appupgrade.CrossNamespaceRefs(u) {
			msgs = append(msgs, err.Error())
		}
	}
	return msgs
}
