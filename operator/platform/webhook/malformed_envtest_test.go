//go:build envtest

package webhook

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
)

// malformedCase is a merge patch of the `system` Upgrade (stored with the
// base spec and base+status status) that the API server must refuse, by
// the CRD schema or by the webhook, with a message holding every `want`.
type malformedCase struct {
	name   string
	patch  string
	status func(*v1alpha1.UpgradeStatus)
	want   []string
}

func malformedCases() []malformedCase {
	long := "starlingx-13.01." + strings.Repeat("1", 60)
	return []malformedCase{
		// schema: release ids and versions
		{name: "platform with another prefix", patch: `{"spec":{"release":{"platform":"stx-13.01.0"}}}`,
			want: []string{"spec.release.platform", "must be a product release id starlingx-MM.mm[.pp] (USM's form), e.g. starlingx-13.01.0"}},
		{name: "platform with four parts", patch: `{"spec":{"release":{"platform":"starlingx-13.01.0.1"}}}`,
			want: []string{"spec.release.platform", "must be a product release id starlingx-MM.mm[.pp]"}},
		{name: "platform with a suffix", patch: `{"spec":{"release":{"platform":"starlingx-13.01.0-rc1"}}}`,
			want: []string{"spec.release.platform", "must be a product release id starlingx-MM.mm[.pp]"}},
		{name: "platform empty", patch: `{"spec":{"release":{"platform":""}}}`,
			want: []string{"spec.release.platform", "at least 1 chars long"}},
		{name: "platform missing", patch: `{"spec":{"release":{"platform":null}}}`,
			want: []string{"spec.release.platform", "Required value"}},
		{name: "platform too long", patch: `{"spec":{"release":{"platform":"` + long + `"}}}`,
			want: []string{"spec.release.platform", "may not be more than 64"}},
		{name: "platform not a string", patch: `{"spec":{"release":{"platform":13}}}`,
			want: []string{"spec.release.platform", "must be of type string"}},
		{name: "release not an object", patch: `{"spec":{"release":"starlingx-13.01.2"}}`,
			want: []string{"spec.release", "must be of type object"}},
		{name: "kubernetes without v", patch: `{"spec":{"release":{"kubernetes":"1.34.1"}}}`,
			want: []string{"spec.release.kubernetes", "must be a Kubernetes version vMAJOR.MINOR.PATCH, e.g. v1.34.1"}},
		{name: "kubernetes without patch", patch: `{"spec":{"release":{"kubernetes":"v1.34"}}}`,
			want: []string{"spec.release.kubernetes", "must be a Kubernetes version vMAJOR.MINOR.PATCH"}},
		{name: "kubernetes latest", patch: `{"spec":{"release":{"kubernetes":"latest"}}}`,
			want: []string{"spec.release.kubernetes", "must be a Kubernetes version vMAJOR.MINOR.PATCH"}},
		// schema: deploy policy enums and bounds
		{name: "alarm restriction unknown", patch: `{"spec":{"deployPolicy":{"alarmRestriction":"lenient"}}}`,
			want: []string{"spec.deployPolicy.alarmRestriction", `Unsupported value: "lenient": supported values: "strict", "relaxed", "permissive"`}},
		{name: "controller apply type unknown", patch: `{"spec":{"deployPolicy":{"controllerApplyType":"rolling"}}}`,
			want: []string{"spec.deployPolicy.controllerApplyType", `supported values: "serial", "parallel", "ignore"`}},
		{name: "worker apply type wrong case", patch: `{"spec":{"deployPolicy":{"workerApplyType":"Serial"}}}`,
			want: []string{"spec.deployPolicy.workerApplyType", `supported values: "serial", "parallel", "ignore"`}},
		{name: "one parallel worker host", patch: `{"spec":{"deployPolicy":{"maxParallelWorkerHosts":1}}}`,
			want: []string{"spec.deployPolicy.maxParallelWorkerHosts", "should be greater than or equal to 2"}},
		{name: "eleven parallel worker hosts", patch: `{"spec":{"deployPolicy":{"maxParallelWorkerHosts":11}}}`,
			want: []string{"spec.deployPolicy.maxParallelWorkerHosts", "should be less than or equal to 10"}},
		{name: "parallel worker hosts as a word", patch: `{"spec":{"deployPolicy":{"maxParallelWorkerHosts":"two"}}}`,
			want: []string{"spec.deployPolicy.maxParallelWorkerHosts", "must be of type integer"}},
		{name: "instance action unknown", patch: `{"spec":{"deployPolicy":{"instanceAction":"live-migrate"}}}`,
			want: []string{"spec.deployPolicy.instanceAction", `supported values: "stop-start", "migrate"`}},
		{name: "rollback policy unknown", patch: `{"spec":{"deployPolicy":{"rollbackPolicy":"always"}}}`,
			want: []string{"spec.deployPolicy.rollbackPolicy", `supported values: "default", "snapshot"`}},
		{name: "dry run as a word", patch: `{"spec":{"deployPolicy":{"dryRun":"yes"}}}`,
			want: []string{"spec.deployPolicy.dryRun", "must be of type boolean"}},
		{name: "deploy policy as a list", patch: `{"spec":{"deployPolicy":["serial"]}}`,
			want: []string{"spec.deployPolicy", "must be of type object"}},
		{name: "target deploy step unknown", patch: `{"spec":{"targetDeployStep":"deploy-all"}}`,
			want: []string{"spec.targetDeployStep", `supported values: "None", "pre-upgrade-deploy"`}},
		// webhook: catalog, entry point, in-flight, snapshot
		{name: "release not uploaded", patch: `{"spec":{"release":{"platform":"starlingx-99.99.0"}}}`,
			want: []string{"Product release 'starlingx-99.99.0' is not uploaded"}},
		{name: "release unavailable", patch: `{"spec":{"release":{"platform":"starlingx-13.01.3"}}}`,
			want: []string{"Product release 'starlingx-13.01.3' is unavailable; choose an available release"}},
		{name: "release still uploading", patch: `{"spec":{"release":{"platform":"starlingx-13.01.4"}}}`,
			want: []string{"Product release 'starlingx-13.01.4' is still uploading; wait until it is available"}},
		{name: "k8s the system does not know", patch: `{"spec":{"release":{"kubernetes":"v1.34.9"}}}`,
			want: []string{"Kubernetes version 'v1.34.9' is not one of the versions sysinv lists for product release 'starlingx-13.01.1'"}},
		{name: "k8s with a leading zero", patch: `{"spec":{"release":{"kubernetes":"v1.034.1"}}}`,
			want: []string{`spec.release: kubernetes version "v1.034.1" has a part "034" that is not a decimal number without leading zeros`}},
		{name: "major without its entry point", patch: `{"spec":{"release":{"platform":"starlingx-40.05.1","kubernetes":"v1.35.0"}}}`,
			want: []string{"Major upgrade to 'starlingx-40.05.1' needs its entry-point release 'starlingx-40.05.0', which is not uploaded"}},
		{name: "major with an unavailable entry point", patch: `{"spec":{"release":{"platform":"starlingx-50.01.1","kubernetes":"v1.35.0"}}}`,
			want: []string{"Major upgrade to 'starlingx-50.01.1' needs its entry-point release 'starlingx-50.01.0', which is unavailable"}},
		{name: "release change while deploying", patch: `{"spec":{"release":{"platform":"starlingx-13.01.2"}}}`, status: deploying,
			want: []string{"A deployment to 'starlingx-27.03.0 / v1.35.0' is in progress", "except back to 'starlingx-13.01.1 / v1.33.0'"}},
		{name: "snapshot on duplex", patch: `{"spec":{"deployPolicy":{"rollbackPolicy":"snapshot"}}}`,
			want: []string{"rollbackPolicy 'snapshot' is only allowed on AIO-SX systems; this system is duplex: use 'default'"}},
	}
}

// testMalformed: at least 25 malformed Upgrades, each refused with an
// actionable message naming the field or release and what is allowed.
func testMalformed(t *testing.T, s *apiServer) {
	cases := malformedCases()
	require.GreaterOrEqual(t, len(cases), 25)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s.reset(t, nil, tc.status)
			before := s.system(t).Spec
			err := s.mergePatch(tc.patch)
			require.Error(t, err, "patch %s must be refused", tc.patch)
			t.Logf("refused: %v", err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Equal(t, before, s.system(t).Spec, "a refused patch changes nothing")
		})
	}
}
