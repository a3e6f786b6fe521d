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

// TestComputeChecks: what a real system cannot tell before a step starts
// is the step's Check, not invented data: a major GA step is checked at the
// USM deploy precheck, a kube step after a planned release when it starts.
func TestComputeChecks(t *testing.T) {
	from, to := comp("starlingx-13.01.0", "v1.33.0"), comp("starlingx-27.03.2", "v1.35.0")
	steps, err := Compute(from, to, stx(from), Duplex)
	require.NoError(t, err)
	checks := map[string]string{}
	for _, s := range steps {
		checks[s.String()] = s.Check
	}
	assert.Equal(t, map[string]string{
		"sw-deploy(starlingx-13.01.2)": "",
		"kube-upgrade(v1.34.1)":        "",
		"sw-deploy(starlingx-27.03.0)": "checked at precheck: the USM deploy precheck refuses 'starlingx-27.03.0' unless its feed includes the active Kubernetes v1.34.1",
		"sw-deploy(starlingx-27.03.2)": "",
		"kube-upgrade(v1.35.0)":        "checked when the step starts: sysinv lists the Kubernetes versions of the release it runs, and v1.35.0 is not listed for it yet; once starlingx-27.03.2 runs the plan is recomputed from its list, one step per minor version on a duplex system",
	}, checks)
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
					release.Product{ID: id("starlingx-13.01.9"), State: release.ProductDeployed},
					release.Product{ID: id("starlingx-13.01.10"), State: release.ProductAvailable, Requires: ids("starlingx-13.01.9")})
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
		{name: "highest k8s capped by the target k8s", from: comp("starlingx-13.01.2", "v1.32.2"), to: comp("starlingx-27.03.0", "v1.33.0"), mode: Simplex,
			steps: []string{"kube-upgrade(v1.33.0)", "sw-deploy(starlingx-27.03.0)"}},
		{name: "GA named without its patch part (USM's starlingx-27.03)", from: comp("starlingx-13.01.2", "v1.34.1"), to: comp("starlingx-27.03.1", ""),
			edit:  func(c *release.Catalog) { c.Products[4].ID = id("starlingx-27.03") },
			steps: []string{"sw-deploy(starlingx-27.03)", "sw-deploy(starlingx-27.03.1)"}},
		{name: "patch + k8s the patch brings is checked when the step starts", from: comp("starlingx-13.01.1", "v1.34.1"), to: comp("starlingx-13.01.2", "v1.34.5"), mode: Simplex,
			steps: []string{"sw-deploy(starlingx-13.01.2)", "kube-upgrade(v1.34.5)"}},
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
		{name: "duplex major to a patch expands the k8s jump sysinv lists; the new major's waits for its list", from: comp("starlingx-13.01.1", "v1.32.2"), to: comp("starlingx-27.03.2", "v1.36.1"), mode: Duplex,
			steps: []string{"sw-deploy(starlingx-13.01.2)", "kube-upgrade(v1.33.0)", "kube-upgrade(v1.34.1)", "sw-deploy(starlingx-27.03.0)",
				"sw-deploy(starlingx-27.03.2)", "kube-upgrade(v1.36.1)"}},
		{name: "once the new major runs, its list expands the jump", from: comp("starlingx-27.03.2", "v1.34.1"), to: comp("starlingx-27.03.2", "v1.36.1"), mode: Duplex,
			steps: []string{"kube-upgrade(v1.35.0)", "kube-upgrade(v1.36.1)"}},
		{name: "simplex major to a patch", from: comp("starlingx-13.01.1", "v1.32.2"), to: comp("starlingx-27.03.2", "v1.36.1"), mode: Simplex,
			steps: []string{"sw-deploy(starlingx-13.01.2)", "kube-upgrade(v1.34.1)", "sw-deploy(starlingx-27.03.0)", "sw-deploy(starlingx-27.03.2)", "kube-upgrade(v1.36.1)"}},
		{name: "duplex picks the highest patch of an intermediate minor", from: comp("starlingx-13.01.2", "v1.32.2"), to: comp("starlingx-13.01.2", "v1.34.1"), mode: Duplex,
			edit: func(c *release.Catalog) {
				c.Kubes = append(c.Kubes, release.Kube{Version: kv("v1.33.7"), State: release.KubeAvailable, UpgradeFrom: kvs("v1.32.2")})
				c.Kubes[2].UpgradeFrom = kvs("v1.33.0", "v1.33.7")
			},
			steps: []string{"kube-upgrade(v1.33.7)", "kube-upgrade(v1.34.1)"}},
		{name: "duplex refuses when an intermediate minor is missing", from: comp("starlingx-13.01.2", "v1.32.2"), to: comp("starlingx-13.01.2", "v1.34.1"), mode: Duplex,
			edit:    func(c *release.Catalog) { c.Kubes[1].State = release.KubeUnavailable },
			wantErr: "a duplex system upgrades Kubernetes one minor version per step, and sysinv lists no usable v1.33.x for 'starlingx-13.01.2' that upgrades from v1.32.2 on the way to v1.34.1; upload one"},
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
		{name: "k8s not listed for the running release", from: comp("starlingx-13.01.2", "v1.34.1"), to: comp("starlingx-13.01.2", "v1.35.0"),
			wantErr: "kubernetes version 'v1.35.0' is not one of the Kubernetes versions sysinv lists for 'starlingx-13.01.2' (v1.32.2, v1.33.0, v1.34.1)"},
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
		{name: "running release unknown", from: release.Composite{Platform: id("starlingx-13.01.1")}, to: comp("starlingx-13.01.2", ""),
			wantErr: "the running release 'starlingx-13.01.1' is not known in full (want '<product> / <k8s>'); wait for the controller to observe the system"},
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
