package judge

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// ambiguous fails every call after making it.
type ambiguous struct{}

var errLost = errors.New("the response was lost")

func (ambiguous) Inject(*Op) error { return &CommitThenFail{Err: errLost} }
func (ambiguous) After(*Op)        {}

func TestCommitThenFailMakesTheCallThenFailsIt(t *testing.T) {
	inner := fake.NewClientBuilder().Build()
	r := NewRecorder(time.Time{}, time.Now)
	c := r.WrapClient(inner, 0, ambiguous{})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}
	err := c.Create(t.Context(), cm)
	require.ErrorIs(t, err, errLost, "the operator is told the write failed")
	require.NoError(t, inner.Get(t.Context(), client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}), "yet it committed")
	ops := r.History().Ops
	require.Len(t, ops, 1)
	assert.True(t, ops[0].Injected)
	assert.False(t, ops[0].OK())
}
