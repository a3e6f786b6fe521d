package controller

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// The status patch built from the status fields is MergeFrom's patch: for
// seeded random pairs of statuses (fields set, changed, emptied, removed;
// components and conditions added, dropped, reordered), both decode to the
// same JSON document.
func TestStatusMergePatchIsMergeFroms(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	for i := range 2000 {
		from := &v1beta1.ApplicationUpgrade{
			ObjectMeta: metav1.ObjectMeta{Name: "upgrade-v2", Namespace: "job-system", ResourceVersion: fmt.Sprint(rng.IntN(1000)),
				Generation: 3, Labels: map[string]string{"app": "job"}},
			Spec: v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{{Name: "worker"}, {Name: "api", DependsOn: []string{"worker"}}}},
		}
		from.Status = randomStatus(rng)
		to := from.DeepCopy()
		switch rng.IntN(4) {
		case 0:
			to.Status = randomStatus(rng)
		case 1: // the same status
		default:
			mutateStatus(rng, &to.Status)
		}
		want, err := client.MergeFromWithOptions(from, client.MergeFromWithOptimisticLock{}).Data(to)
		require.NoError(t, err)
		p, err := statusMergePatch(from, to)
		require.NoError(t, err)
		require.Equal(t, types.MergePatchType, p.Type())
		got, err := p.Data(to)
		require.NoError(t, err)
		require.Equal(t, decodeJSON(t, want), decodeJSON(t, got), "pair %d: %s", i, want)
	}
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

func randomStatus(rng *rand.Rand) v1beta1.ApplicationUpgradeStatus {
	var st v1beta1.ApplicationUpgradeStatus
	mutateStatus(rng, &st)
	mutateStatus(rng, &st)
	return st
}

// mutateStatus changes one to three fields of st at random, to a new
// value or to empty.
func mutateStatus(rng *rand.Rand, st *v1beta1.ApplicationUpgradeStatus) {
	pick := func(vals ...string) string { return vals[rng.IntN(len(vals))] }
	for range 1 + rng.IntN(3) {
		switch rng.IntN(8) {
		case 0:
			st.Phase = v1beta1.Phase(pick("", "Pending", "Upgrading", "Completed"))
		case 1:
			switch rng.IntN(3) {
			case 0:
				st.PhaseStartTime = nil
			default:
				ts := metav1.NewTime(time.Unix(1_700_000_000+int64(rng.IntN(3)), 0))
				st.PhaseStartTime = &ts
			}
		case 2:
			st.Message = pick("", "waiting for <worker> & co", "Upgrade completed: 2 components rolled out")
		case 3:
			st.RolledOut = pick("", "0/2", "1/2", "2/2")
		case 4:
			st.Workloads = pick("", "2 Deployment")
		case 5:
			st.ObservedGeneration = int64(rng.IntN(3))
		case 6:
			st.Components = nil
			for _, n := range []string{"worker", "api", "db"}[:rng.IntN(4)] {
				st.Components = append(st.Components, v1beta1.ComponentStatus{Name: n, Wave: int32(rng.IntN(2)),
					Phase: v1beta1.ComponentPhase(pick("", "Pending", "Upgrading", "RolledOut")), Image: pick("", "job:v1", "job:v2"),
					WrittenGeneration: int64(rng.IntN(3)), RefusedWrites: int32(rng.IntN(2)), Message: pick("", "old pod terminating")})
			}
			rng.Shuffle(len(st.Components), func(i, j int) { st.Components[i], st.Components[j] = st.Components[j], st.Components[i] })
		case 7:
			st.Conditions = nil
			for _, c := range []string{"Ready", "Progressing", "Stalled"}[:rng.IntN(4)] {
				st.Conditions = append(st.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionStatus(pick("True", "False")),
					ObservedGeneration: int64(rng.IntN(3)), Reason: pick("Upgrading", "Completed"), Message: pick("", "m"),
					LastTransitionTime: metav1.NewTime(time.Unix(1_700_000_000+int64(rng.IntN(2)), 0))})
			}
		}
	}
}
