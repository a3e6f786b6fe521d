package vim

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSecretNeverPrints(t *testing.T) {
	s := Secret("hunter2")
	c := Credentials{Username: "admin", Password: s}
	for _, out := range []string{
		fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s %q %x %d", s, s, s, s, s, s, s),
		fmt.Sprintf("%v %+v %#v", c, c, c), fmt.Sprintf("%v", &c),
	} {
		assert.NotContains(t, out, "hunter2")
		assert.Contains(t, out, "[redacted]")
	}
	b, err := json.Marshal(c)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "hunter2")
	assert.Equal(t, "hunter2", s.reveal())
}

func TestFaultString(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"wsme (VIM)", `{"faultcode": "Client", "faultstring": "strategy already exists of type:sw-upgrade", "debuginfo": null}`, "strategy already exists of type:sw-upgrade"},
		{"sysinv error_message", `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Swact action not allowed\", \"debuginfo\": null}"}`, "Swact action not allowed"},
		{"sysinv plain error_message", `{"error_message": "500 Internal Server Error"}`, "500 Internal Server Error"},
		{"keystone", `{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}`, "The request you have made requires authentication."},
		{"usm", `{"info": "", "warning": "", "error": "Release starlingx-9.9.9 not found"}`, "Release starlingx-9.9.9 not found"},
		{"haproxy", "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>", "503 Service Unavailable No server is available to handle this request."},
		{"empty", "", ""},
	} {
		assert.Equal(t, c.want, faultString([]byte(c.body)), c.name)
	}
}

func TestSecretSetScrubs(t *testing.T) {
	s := &secretSet{}
	s.add("pw")
	for i := 0; i < 100; i++ {
		s.add(fmt.Sprintf("token-%03d", i))
	}
	assert.Equal(t, "[redacted] [redacted] token-000", s.scrub("pw token-099 token-000"), "the password stays, old tokens rotate out")
}

func TestStripVersion(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:6385/v1":     "http://h:6385",
		"http://h:6385/v1/":    "http://h:6385",
		"http://h:5000/v3":     "http://h:5000",
		"http://h:4545":        "http://h:4545",
		"https://h:5493/":      "https://h:5493",
		"http://h/sysinv/v1.0": "http://h/sysinv",
		"http://h/vim":         "http://h/vim",
	} {
		assert.Equal(t, want, stripVersion(in), in)
	}
}

func TestStrategyDecoding(t *testing.T) {
	var st Strategy
	require.NoError(t, json.Unmarshal([]byte(`{"uuid":"u","name":"sw-upgrade","release":"starlingx-13.01.1","state":"applying",
		"current-phase":"apply","current-phase-completion-percentage":69,
		"apply-phase":{"phase-name":"apply","current-stage":3,"total-stages":4,"stages":[
		{"stage-name":"kube-upgrade-start"},{"stage-name":"kube-upgrade-kubelet v1.33.0"},
		{"stage-name":"kube-upgrade-kubelet v1.34.1"},{"stage-name":"kube-upgrade-complete"}]}}`), &st))
	assert.Equal(t, ReleaseList{"starlingx-13.01.1"}, st.Release, "an old VIM's single release string")
	assert.Equal(t, "apply(69%)/stg:(3/4) kube-upgrade-complete", st.Progress(), "the seed's releaseDeployingStatus")
	assert.Equal(t, "v1.34.1", st.KubeTarget())
	st.ApplyPhase.CurrentStage = 4
	assert.Equal(t, "apply(69%)/stg:(4/4) kube-upgrade-complete", st.Progress(), "done: the last stage's name")

	var list ReleaseList
	require.NoError(t, json.Unmarshal([]byte(`["a","b"]`), &list))
	assert.Equal(t, ReleaseList{"a", "b"}, list)
	require.NoError(t, json.Unmarshal([]byte(`null`), &list))
	assert.Error(t, json.Unmarshal([]byte(`3`), &list))
	var empty Strategy
	assert.Equal(t, "(0%)/stg:(0/0)", empty.Progress())
}

func TestStateClasses(t *testing.T) {
	for _, s := range []StrategyState{StateBuilding, StateApplying, StateAborting} {
		assert.True(t, s.Busy(), s)
		assert.False(t, s.Terminal(), s)
	}
	for _, s := range []StrategyState{StateBuildFailed, StateBuildTimeout, StateApplied, StateApplyFailed, StateApplyTimeout, StateAborted, StateAbortFailed, StateAbortTimeout} {
		assert.True(t, s.Terminal(), s)
		assert.False(t, s.Busy(), s)
	}
	assert.False(t, StateReadyToApply.Terminal())
	assert.False(t, StateReadyToApply.Busy())
}
