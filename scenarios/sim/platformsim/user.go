package platformsim

import (
	"context"
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/webhook"
)

// Upgrade reads the `system` Upgrade.
func (e *Env) Upgrade() (*v1alpha1.Upgrade, error) {
	u := &v1alpha1.Upgrade{}
	if err := e.Sim.Client().Get(context.Background(), client.ObjectKey{Name: v1alpha1.SystemName}, u); err != nil {
		return nil, fmt.Errorf("get upgrade %s: %w", v1alpha1.SystemName, err)
	}
	return u, nil
}

// Patch is the user's `kubectl patch upgrade system --type merge -p body`:
// the admission webhook's rules (webhook.Validator) judge the patched
// object against the stored one, as kube-apiserver would call the webhook,
// then the merge patch is written. A refusal is returned as the error.
func (e *Env) Patch(body string) error {
	old, err := e.Upgrade()
	if err != nil {
		return err
	}
	raw, err := json.Marshal(old)
	if err != nil {
		return err
	}
	merged, err := jsonpatch.MergePatch(raw, []byte(body))
	if err != nil {
		return fmt.Errorf("merge patch %s: %w", body, err)
	}
	updated := &v1alpha1.Upgrade{}
	if err := json.Unmarshal(merged, updated); err != nil {
		return fmt.Errorf("merge patch %s: %w", body, err)
	}
	if _, err := (&webhook.Validator{}).ValidateUpdate(context.Background(), old, updated); err != nil {
		return fmt.Errorf("admission webhook denied the request: %w", err)
	}
	target := &v1alpha1.Upgrade{}
	target.Name = v1alpha1.SystemName
	return e.Sim.Client().Patch(context.Background(), target, client.RawPatch(types.MergePatchType, []byte(body)))
}
