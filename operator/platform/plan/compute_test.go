package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/operator/platform/release"
)

type planCase struct {
	name      string
	from      release.Composite
	to        release.Composite
	mode      SystemMode             // Duplex when empty, unless emptyMode
	emptyMode bool                   // run with the empty (unknown) mode
	edit      func(*release.Catalog) // changes to stx(from), optional
	steps     []string
	wantErr   string
}

// TestComputeSeedTable has one case per row of the seed's table, plus C18.
func TestComputeSeedTable(t *testing.T) {
	runPlanCases(t, []planCase{
		{name: "patch only", from: comp("starlingx-13.01.1", "v1.33.0"), to: comp("starlingx-13.01.2", "v1.33.0"),
			steps: []string{"sw-deploy(starlingx-13.01.2)"}},
		{name: "k8s only", from: comp("starlingx-13.01.2", "v1.33.0"), to: comp("starlingx-13.01.2", "v1.34.1"),
			steps: []string{"kube-upgrade(v1.34.1)"}},
		{name: "patch + k8s", from: comp("starlingx-13.01.1", "v1.33.0"), to: comp("starlingx-13.01.2", "v1.34.1"),
			steps: []string{"sw-deploy(starlingx-13.01.2)", "kube-upgrade(v1.34.1)"}},
		{name: "major upgrade to GA", from: comp("starlingx-13.01.0", "v1.33.0"), to: comp("starlingx-27.03.0", "v1.35.0"),
			steps: []string{"sw-deploy(starlingx-13.01.2)", "kube-upgrade(v1.34.1)", "sw-deploy(starlingx-27.03.0)", "kube-upgrade(v1.35.0)"}},
		{name: "major upgrade to a patch", from: comp("starlingx-13.01.0", "v1.33.0"), to: comp("starlingx-27.03.2", "v1.35.0"),
			steps: []string{"sw-deploy(starlingx-13.01.2)", "kube-upgrade(v1.34.1)", "sw-deploy(starlingx-27.03.0)", "sw-deploy(starlingx-27.03.2)", "kube-upgrade(v1.35.0)"}},
		{name: "C18 major upgrade from a patch release with a newer k8s available", from: comp("starlingx-13.01.1", "v1.33.0"), to: comp("starlingx-27.03.0", "v1.35.0"),
			steps: []string{"sw-deploy(starlingx-13.01.2)", "kube-upgrade(v1.34.1)", "sw-deploy(starlingx-27.03.0)", "kube-upgrade(v1.35.0)"}},
	})
}

// TestComputeSelection covers the choices inside the table's rows.
func TestComputeSelection(t *testing.T) {
	runPlanCases(t, []planCase{
		{name: "already at target", from: comp("starlingx-13.01.2", "v1.34.1"), to: comp("starlingx-13.01.2", "v1.34.1"), steps: []string{}},
		{name: "target k8s omitted keeps the running version", from: comp("starlingx-13.01.1", "v1.33.0"), to: comp("starlingx-13.01.2", ""),
			steps: []string{"sw-deploy(starlingx-13.01.2)"}},
		{name: "patch number compared numerically", from: comp("starlingx-13.01.9", "v1.33.0"), to: comp("starlingx-13.01.10", "v1.33.0"),
			edit: func(c *release.Catalog) {
				c.Products = append(c.Products,
					release.Product{ID: id("starlingx-13.01.9"), State: release.ProductDeployed, Kube: kvs("v1.33.0")},
					release.Product{ID: id("starlingx-13.01.10"), State: release.ProductAvailable, Requires: ids("starlingx-13.01.9"), Kube: kvs("v1.33.0")})
			},
			steps: []string{"sw-deploy(starlingx-13.01.10)"}},
		{name: "major from the highest patch skips the patch step", from: comp("starlingx-13.01.2", "v1.33.0"), to: comp("starlingx-27.03.0", "v1.35.0"),
			steps: []string{"kube-upgrade(v1.34.1)", "sw-deploy(starlingx-27.03.0)", "kube-upgrade(v1.35.0)"}},
		{name: "major with the highest k8s already running", from: comp("starlingx-13.01.2", "v1.34.1"), to: comp("starlingx-27.03.0", "v1.35.0"),
			steps: []string{"sw-deploy(starlingx-27.03.0)", "kube-upgrade(v1.35.0)"}},
		{name: "major whose target k8s is the bridge version", from: comp("starlingx-13.01.1", "v1.33.0"), to: comp("starlingx-27.03.0", "v1.34.1"),
			steps: []string{"sw-deploy(starlingx-13.01.2)", "kube-upgrade(v1.34.1)", "sw-deploy(starlingx-27.03.0)"}},
		{name: "major without target k8s ends on the bridge version", from: comp("starlingx-13.01.1", "v1.33.0"), to: comp("starlingx-27.03.1", ""),
			steps: []string{"sw-deploy(starlingx-13.01.2)", "kube-upgrade(v1.34.1)", "sw-deploy(starlingx-27.03.0)", "sw-deploy(starlingx-27.03.1)"}},
		{name: "highest patch skips an unavailable one", from: comp("starlingx-13.01.0", "v1.34.1"), to: comp("starlingx-27.03.0", "v1.34.1"),
			steps: []string{"sw-deploy(starlingx-13.01.2)", "sw-deploy(starlingx-27.03.0)"}},
		{name: "highest k8s capped by what the new major supports", from: comp("starlingx-13.01.2", "v1.32.2"), to: comp("starlingx-27.03.0", "v1.35.0"), mode: Simplex,
			edit:  func(c *release.Catalog) { c.Products[4].Kube = kvs("v1.33.0", "v1.35.0") },
			steps: []string{"kube-upgrade(v1.33.0)", "sw-deploy(starlingx-27.03.0)", "kube-upgrade(v1.35.0)"}},
	})
}

// TestComputeDuplexKubernetes: duplex systems expand multi-minor jumps
// into one kube-upgrade per minor version; simplex jumps in one step.
func TestComputeDuplexKubernetes(t *testing.T) {
	runPlanCases(t, []planCase{
		{name: "duplex k8s two minors", from: comp("starlingx-13.01.2", "v1.32.2"), to: comp("starlingx-13.01.2", "v1.34.1"), mode: Duplex,
			steps: []string{"kube-upgrade(v1.33.0)", "kube-upgrade(v1.34.1)"}},
		{name: "duplex-direct k8s two minors", from: comp("starlingx-13.01.2", "v1.32.2"), to: comp("starlingx-13.01.2", "v1.34.1"), mode: DuplexDirect,
			steps: []string{"kube-upgrade(v1.33.0)", "kube-upgrade(v1.34.1)"}},
		{name: "unknown mode is treated as duplex", from: comp("starlingx-13.01.2", "v1.32.2"), to: comp("starlingx-13.01.2", "v1.34.1"), emptyMode: true,
			steps: []string{"kube-upgrade(v1.33.0)", "kube-upgrade(v1.34.1)"}},
		{name: "simplex k8s two minors in one step", from: comp("starlingx-13.01.2", "v1.32.2"), to: comp("starlingx-13.01.2", "v1.34.1"), mode: Simplex,
			steps: []string{"kube-upgrade(v1.34.1)"}},
		{name: "duplex major to a patch expands both k8s jumps", from: comp("starlingx-13.01.1", "v1.32.2"), to: comp("starlingx-27.03.2", "v1.36.1"), mode: Duplex,
			steps: []string{"sw-deploy(starlingx-13.01.2)", "kube-upgrade(v1.33.0)", "kube-upgrade(v1.34.1)", "sw-deploy(starlingx-27.03.0)",
				"sw-deploy(starlingx-27.03.2)", "kube-upgrade(v1.35.0)", "kube-upgrade(v1.36.1)"}},
		{name: "simplex major to a patch", from: comp("starlingx-13.01.1", "v1.32.2"), to: comp("starlingx-27.03.2", "v1.36.1"), mode: Simplex,
			steps: []string{"sw-deploy(starlingx-13.01.2)", "kube-upgrade(v1.34.1)", "sw-deploy(starlingx-27.03.0)", "sw-deploy(starlingx-27.03.2)", "kube-upgrade(v1.36.1)"}},
		{name: "duplex picks the highest patch of an intermediate minor", from: comp("starlingx-13.01.2", "v1.32.2"), to: comp("starlingx-13.01.2", "v1.34.1"), mode: Duplex,
			edit: func(c *release.Catalog) {
				c.Kubes = append(c.Kubes, release.Kube{Version: kv("v1.33.7"), State: release.KubeAvailable, UpgradeFrom: kvs("v1.32.2")})
				c.Kubes[2].UpgradeFrom = kvs("v1.33.0", "v1.33.7")
				c.Products[2].Kube = append(c.Products[2].Kube, kv("v1.33.7"))
			},
			steps: []string{"kube-upgrade(v1.33.7)", "kube-upgrade(v1.34.1)"}},
		{name: "duplex refuses when an intermediate minor is missing", from: comp("starlingx-13.01.2", "v1.32.2"), to: comp("starlingx-13.01.2", "v1.34.1"), mode: Duplex,
			edit:    func(c *release.Catalog) { c.Kubes[1].State = release.KubeUnavailable },
			wantErr: "a duplex system upgrades Kubernetes one minor version per step, and no usable v1.33.x that 'starlingx-13.01.2' supports upgrades from v1.32.2 on the way to v1.34.1; upload one"},
	})
}

// TestComputeRefusals: every refusal names the release and what to do.
func TestComputeRefusals(t *testing.T) {
	runPlanCases(t, []planCase{
		{name: "target not uploaded", from: comp("starlingx-13.01.1", "v1.33.0"), to: comp("starlingx-99.99.0", ""),
			wantErr: "product release 'starlingx-99.99.0' is not uploaded"},
		{name: "target unavailable", from: comp("starlingx-13.01.2", "v1.33.0"), to: comp("starlingx-13.01.3", ""),
			wantErr: "product release 'starlingx-13.01.3' is unavailable; it must be available to deploy"},
		{name: "product downgrade", from: comp("starlingx-13.01.2", "v1.33.0"), to: comp("starlingx-13.01.0", "v1.33.0"),
			wantErr: "product release 'starlingx-13.01.0' is older than the running 'starlingx-13.01.2'; a plan only moves forward: choose 'starlingx-13.01.2' or newer"},
		{name: "k8s downgrade", from: comp("starlingx-13.01.2", "v1.34.1"), to: comp("starlingx-13.01.2", "v1.33.0"),
			wantErr: "kubernetes v1.33.0 is older than the running v1.34.1"},
		{name: "k8s not supported by the target release", from: comp("starlingx-13.01.2", "v1.34.1"), to: comp("starlingx-13.01.2", "v1.35.0"),
			wantErr: "product release 'starlingx-13.01.2' does not support Kubernetes v1.35.0 (it supports v1.32.2, v1.33.0, v1.34.1)"},
		{name: "k8s unknown", from: comp("starlingx-13.01.2", "v1.34.1"), to: comp("starlingx-13.01.2", "v1.34.9"),
			wantErr: "kubernetes version 'v1.34.9' is not one of the system's Kubernetes versions"},
		{name: "k8s unavailable", from: comp("starlingx-13.01.2", "v1.33.0"), to: comp("starlingx-13.01.2", "v1.34.1"),
			edit:    func(c *release.Catalog) { c.Kubes[2].State = release.KubeUnavailable },
			wantErr: "kubernetes version 'v1.34.1' is unavailable"},
		{name: "entry point missing", from: comp("starlingx-13.01.2", "v1.34.1"), to: comp("starlingx-27.03.2", "v1.35.0"),
			edit:    func(c *release.Catalog) { c.Products = append(c.Products[:4], c.Products[5:]...) },
			wantErr: "major upgrade to 'starlingx-27.03.2' needs its entry-point release 'starlingx-27.03.0': product release 'starlingx-27.03.0' is not uploaded"},
		{name: "entry point unavailable", from: comp("starlingx-13.01.2", "v1.34.1"), to: comp("starlingx-27.03.0", "v1.35.0"),
			edit:    func(c *release.Catalog) { c.Products[4].State = release.ProductUploadFailed },
			wantErr: "product release 'starlingx-27.03.0' is upload-failed; it must be available to deploy"},
		{name: "required patch not deployable", from: comp("starlingx-13.01.1", "v1.34.1"), to: comp("starlingx-27.03.0", "v1.35.0"),
			edit:    func(c *release.Catalog) { c.Products[2].State = release.ProductUnavailable },
			wantErr: "cannot sw-deploy(starlingx-27.03.0) (entry point of major release 27.03): product release 'starlingx-27.03.0' requires 'starlingx-13.01.2', which is neither deployed nor deployable with it; upload and deploy 'starlingx-13.01.2' first"},
		{name: "no k8s version shared by both majors", from: comp("starlingx-13.01.2", "v1.33.0"), to: comp("starlingx-27.03.0", "v1.35.0"),
			edit:    func(c *release.Catalog) { c.Products[4].Kube = kvs("v1.35.0", "v1.36.1") },
			wantErr: "no usable Kubernetes version from v1.33.0 up is supported by both 'starlingx-13.01.2' (v1.32.2, v1.33.0, v1.34.1) and 'starlingx-27.03.0' (v1.35.0, v1.36.1); upload a Kubernetes version both support"},
		{name: "patch does not support the running k8s", from: comp("starlingx-13.01.1", "v1.32.2"), to: comp("starlingx-13.01.2", "v1.34.1"), mode: Simplex,
			edit:    func(c *release.Catalog) { c.Products[2].Kube = kvs("v1.33.0", "v1.34.1") },
			wantErr: "product release 'starlingx-13.01.2' does not support the running Kubernetes v1.32.2 (it supports v1.33.0, v1.34.1)"},
		{name: "running release unknown", from: release.Composite{Platform: id("starlingx-13.01.1")}, to: comp("starlingx-13.01.2", ""),
			wantErr: "the running release 'starlingx-13.01.1' is not known in full (want '<product> / <k8s>'); wait for the controller to observe the system"},
		{name: "running release missing from the catalog", from: comp("starlingx-13.01.2", "v1.33.0"), to: comp("starlingx-13.01.2", "v1.34.1"),
			edit:    func(c *release.Catalog) { c.Products = c.Products[3:] },
			wantErr: "running product release 'starlingx-13.01.2' is not among the uploaded releases, so its Kubernetes versions are unknown"},
	})
}

func runPlanCases(t *testing.T, cases []planCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cat := stx(tc.from)
			if tc.edit != nil {
				tc.edit(&cat)
			}
			mode := tc.mode
			if mode == "" && !tc.emptyMode {
				mode = Duplex
			}
			steps, err := Compute(tc.from, tc.to, cat, mode)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				assert.Nil(t, steps)
				return
			}
			require.NoError(t, err)
			got := make([]string, len(steps))
			for i, s := range steps {
				got[i] = s.String()
				assert.NotEmpty(t, s.Reason, "step %d has no reason", i)
			}
			assert.Equal(t, tc.steps, got)
			assertValidPlan(t, tc.from, tc.to, steps, cat, mode)
		})
	}
}
