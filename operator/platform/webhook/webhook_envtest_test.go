//go:build envtest

package webhook

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
)

// TestWebhookOnAPIServer runs the webhook behind a real kube-apiserver.
func TestWebhookOnAPIServer(t *testing.T) {
	s := startAPIServer(t)
	t.Run("create", func(t *testing.T) { testCreate(t, s) })
	t.Run("seed examples", func(t *testing.T) { testSeedExamples(t, s) })
	t.Run("update rules", func(t *testing.T) { testUpdateRules(t, s) })
	t.Run("malformed", func(t *testing.T) { testMalformed(t, s) })
	t.Run("printer columns", func(t *testing.T) { testPrinterColumns(t, s) })
}

// testCreate: `system` with snapshot is refused (mode unknown on create),
// plain `system` admitted with the schema's defaults, `other` refused.
func testCreate(t *testing.T, s *apiServer) {
	ctx := context.Background()
	snap := newSystem(baseSpec(), v1alpha1.UpgradeStatus{})
	snap.Spec.DeployPolicy.RollbackPolicy = v1alpha1.RollbackPolicySnapshot
	err := s.c.Create(ctx, snap)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rollbackPolicy 'snapshot' is only allowed on AIO-SX systems, and the system mode is not known yet")

	bare := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "upgrade.starlingx.io/v1alpha1", "kind": "Upgrade",
		"metadata": map[string]any{"name": "system"},
		"spec":     map[string]any{"release": map[string]any{"platform": "starlingx-13.01.1", "kubernetes": "v1.33.0"}},
	}}
	require.NoError(t, s.c.Create(ctx, bare))
	got := s.system(t)
	assert.Equal(t, baseSpec(), got.Spec, "the schema fills deployPolicy's defaults")

	other := newSystem(baseSpec(), v1alpha1.UpgradeStatus{})
	other.Name = "other"
	err = s.c.Create(ctx, other)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "only the 'system' Upgrade CR is allowed; cannot create 'other'")
}

// testSeedExamples replays the seed's "Verify webhook" and dry-run commands.
func testSeedExamples(t *testing.T, s *apiServer) {
	ctx := context.Background()
	s.reset(t, nil, nil)

	err := s.c.Delete(ctx, s.system(t))
	require.Error(t, err, "kubectl delete upgrade system")
	assert.Contains(t, err.Error(), "The 'system' Upgrade CR cannot be deleted.")

	other := &unstructured.Unstructured{}
	require.NoError(t, json.Unmarshal([]byte(`{"apiVersion":"upgrade.starlingx.io/v1alpha1","kind":"Upgrade",
		"metadata":{"name":"other"},"spec":{"release":{"platform":"starlingx-99.99.0"}}}`), &other.Object))
	err = s.c.Create(ctx, other)
	require.Error(t, err, "kubectl apply other")
	assert.Contains(t, err.Error(), "only the 'system' Upgrade CR is allowed; cannot create 'other'")

	err = s.mergePatch(`{"spec":{"release":{"platform":"starlingx-99.99.0"}}}`)
	require.Error(t, err, "kubectl patch to an unknown release")
	assert.Contains(t, err.Error(), "Product release 'starlingx-99.99.0' is not uploaded")

	require.NoError(t, s.mergePatch(`{"spec":{"deployPolicy":{"dryRun":true}}}`), "dry-run patch")
	assert.True(t, s.system(t).Spec.DeployPolicy.DryRun)
	require.NoError(t, s.mergePatch(`{"spec":{"release":{"platform":"starlingx-27.03.0","kubernetes":"v1.35.0"},"deployPolicy":{"dryRun":true}}}`), "dry-run major upgrade")
}

// testUpdateRules runs every update rule, admitted and refused, through the API server.
func testUpdateRules(t *testing.T, s *apiServer) {
	for _, tc := range updateCases() {
		t.Run(tc.name, func(t *testing.T) {
			s.reset(t, tc.from, tc.status)
			u := s.system(t)
			want := u.Spec.DeepCopy()
			tc.change(&u.Spec)
			err := s.c.Update(context.Background(), u)
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apierrors.IsForbidden(err), "a webhook denial is 403 Forbidden: %v", err)
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.Equal(t, *want, s.system(t).Spec, "a refused update changes nothing")
		})
	}
}

func (s *apiServer) mergePatch(body string) error {
	u := &v1alpha1.Upgrade{}
	u.Name = v1alpha1.SystemName
	return s.c.Patch(context.Background(), u, client.RawPatch(types.MergePatchType, []byte(body)))
}

// testPrinterColumns asks the API server for `kubectl get upgrade` tables.
func testPrinterColumns(t *testing.T, s *apiServer) {
	s.reset(t, nil, func(st *v1alpha1.UpgradeStatus) {
		deploying(st)
		st.ActiveDeploy.TimeDuration = "18:37"
		st.ActiveDeploy.ReleaseDeployingStatus = "apply(69%)/stg:(3/4) sw-upgrade-controllers"
	})
	names, row := tableColumns(t, s.cfg, false)
	assert.Equal(t, []string{"NAME", "RELEASE", "STATUS", "DURATION", "DEPLOY-FROM", "DEPLOY-TO"}, names)
	assert.Equal(t, []any{"system", "starlingx-13.01.1 / v1.33.0", "Deploying", "18:37", "starlingx-13.01.1 / v1.33.0", "starlingx-27.03.0 / v1.35.0"}, row)
	names, row = tableColumns(t, s.cfg, true)
	assert.Equal(t, []string{"NAME", "RELEASE", "STATUS", "DURATION", "DEPLOY-FROM", "DEPLOY-TO", "DEPLOYING-REL", "DEPLOYING-REL-STATUS"}, names)
	assert.Equal(t, []any{"starlingx-13.01.2", "apply(69%)/stg:(3/4) sw-upgrade-controllers"}, row[6:])
}

// tableColumns returns the column names as kubectl prints them (upper
// case; wide includes priority>0 columns) and the first row's cells.
func tableColumns(t *testing.T, cfg *rest.Config, wide bool) ([]string, []any) {
	hc, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	u, err := url.JoinPath(cfg.Host, "apis/upgrade.starlingx.io/v1alpha1/upgrades")
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var table struct {
		ColumnDefinitions []struct {
			Name     string `json:"name"`
			Priority int    `json:"priority"`
		} `json:"columnDefinitions"`
		Rows []struct {
			Cells []any `json:"cells"`
		} `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(body, &table), "%s: %s", req.URL, body)
	require.Len(t, table.Rows, 1)
	var names []string
	var cells []any
	for i, c := range table.ColumnDefinitions {
		if c.Priority > 0 && !wide {
			continue
		}
		names = append(names, strings.ToUpper(c.Name))
		cells = append(cells, table.Rows[0].Cells[i])
	}
	return names, cells
}
