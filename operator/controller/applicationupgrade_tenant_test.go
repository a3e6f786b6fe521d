package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

var deploymentsGR = schema.GroupResource{Group: "apps", Resource: "deployments"}

// refuseWrites makes every Deployment write (the image's server-side
// apply, or a patch) fail with err and counts them.
func refuseWrites(w *world, err error) *int {
	n := new(int)
	inner := w.c
	w.r.Client = interceptor.NewClient(inner.(client.WithWatch), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if _, ok := obj.(*appsv1.Deployment); ok {
				*n++
				return err
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
			*n++ // the operator applies only Deployments' images
			return err
		},
	})
	return n
}

func reconcileErr(w *world, name string) error {
	w.afterBackOff(name)
	_, err := w.r.Reconcile(context.Background(), ctrlRequest{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}})
	return err
}

// A write the API server refuses for good (a ValidatingAdmissionPolicy's
// 422, RBAC's or a webhook's 403, a quota's 403) fails the component after
// MaxRefusedWrites attempts with the API's message, a Warning event and
// Stalled=True; the dependent is Blocked and never written.
func TestRefusedWriteFailsTheComponent(t *testing.T) {
	policy := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "d-db", field.ErrorList{
		field.Invalid(field.NewPath("spec", "template"), "db:v2", `ValidatingAdmissionPolicy 'deny-images' with binding 'deny' denied request: images from this registry are not allowed`)})
	cases := map[string]error{
		"admission policy (422)": policy,
		"RBAC (403)":             apierrors.NewForbidden(deploymentsGR, "d-db", fmt.Errorf("user cannot patch")),
		"quota (403)":            apierrors.NewForbidden(deploymentsGR, "d-db", fmt.Errorf("exceeded quota: compute, requested: pods=1")),
	}
	for name, refusal := range cases {
		t.Run(name, func(t *testing.T) {
			w := graphWorld(t, node("db"), node("api", "db"))
			w.pass("g")
			w.pass("g") // db Upgrading
			eventReasons(w.rec)
			writes := refuseWrites(w, refusal)
			for i := 1; i < MaxRefusedWrites; i++ {
				require.Error(t, reconcileErr(w, "g"), "attempt %d is retried with back-off", i)
				u := w.beta("g")
				assert.Equal(t, v1beta1.ComponentUpgrading, u.Status.Component("db").Phase)
				assert.Equal(t, int32(i), u.Status.Component("db").RefusedWrites)
				assert.Contains(t, u.Status.Component("db").Message, fmt.Sprintf("attempt %d of 3", i))
			}
			require.NoError(t, reconcileErr(w, "g"), "the last attempt fails the component: nothing left to retry")
			assert.Equal(t, MaxRefusedWrites, *writes)
			u := w.beta("g")
			db := u.Status.Component("db")
			assert.Equal(t, v1beta1.ComponentFailed, db.Phase)
			assert.Contains(t, db.Message, "refused 3 times")
			assert.Contains(t, db.Message, refusal.(apierrors.APIStatus).Status().Message)
			assert.Contains(t, db.Message, "deployment job-system/d-db")
			reasons := eventReasons(w.rec)
			assert.Contains(t, reasons, ReasonWriteRefused)
			u = w.pass("g") // the dependent is blocked, the upgrade Failed
			assert.Equal(t, v1beta1.PhaseFailed, u.Status.Phase)
			assert.Equal(t, v1beta1.ComponentBlocked, u.Status.Component("api").Phase)
			assert.Equal(t, metav1.ConditionTrue, findCondition(u.Status.Conditions, v1beta1.ConditionStalled).Status)
			assert.Contains(t, findCondition(u.Status.Conditions, v1beta1.ConditionStalled).Message, "refused 3 times")
			assert.Equal(t, MaxRefusedWrites, *writes, "no write after Failed")
			d, _ := w.get("d-db")
			assert.Equal(t, "db:v1", d.Spec.Template.Spec.Containers[0].Image)
		})
	}
}

// Transient errors (409, 429, 5xx, timeouts) keep backing off: no count, no
// Failed; a 409 quietly (a requeue, no error for the log).
func TestTransientWriteErrorsKeepRetrying(t *testing.T) {
	for name, err := range map[string]error{
		"conflict":    apierrors.NewConflict(deploymentsGR, "d-db", fmt.Errorf("modified")),
		"throttled":   apierrors.NewTooManyRequests("slow down", 1),
		"unavailable": apierrors.NewServiceUnavailable("etcd"),
		"timeout":     apierrors.NewTimeoutError("timeout", 1),
		"internal":    apierrors.NewInternalError(fmt.Errorf("boom")),
		"no status":   fmt.Errorf("dial tcp: connection refused"),
	} {
		t.Run(name, func(t *testing.T) {
			assert.False(t, TerminalWriteError(err))
			w := graphWorld(t, node("db"))
			w.pass("g")
			w.pass("g")
			refuseWrites(w, err)
			for i := 0; i < 2*MaxRefusedWrites; i++ {
				w.afterBackOff("g")
				res, rerr := w.r.Reconcile(context.Background(), ctrlRequest{NamespacedName: client.ObjectKey{Namespace: ns, Name: "g"}})
				if name == "conflict" {
					// Routine (the Deployment changed since it was read):
					// requeued after the back-off, not a "Reconciler error".
					require.NoError(t, rerr)
					require.Equal(t, writeBackoff(i), res.RequeueAfter)
				} else {
					require.Error(t, rerr)
				}
			}
			db := w.beta("g").Status.Component("db")
			assert.Equal(t, v1beta1.ComponentUpgrading, db.Phase)
			assert.Zero(t, db.RefusedWrites)
		})
	}
}

func TestTerminalWriteErrorClassifies(t *testing.T) {
	assert.True(t, TerminalWriteError(fmt.Errorf("wrapped: %w", apierrors.NewForbidden(deploymentsGR, "x", fmt.Errorf("no")))))
	assert.True(t, TerminalWriteError(apierrors.NewBadRequest("bad")))
	assert.True(t, TerminalWriteError(apierrors.NewNotFound(deploymentsGR, "x")))
	assert.False(t, TerminalWriteError(nil))
	assert.Equal(t, "plain", APIMessage(fmt.Errorf("plain")))
}

// A successful write resets the refused count.
func TestRefusedCountResetsOnSuccess(t *testing.T) {
	w := graphWorld(t, node("db"))
	w.pass("g")
	w.pass("g")
	inner := w.c
	refuseWrites(w, apierrors.NewForbidden(deploymentsGR, "d-db", fmt.Errorf("webhook said no")))
	require.Error(t, reconcileErr(w, "g"))
	assert.Equal(t, int32(1), w.beta("g").Status.Component("db").RefusedWrites)
	w.r.Client = inner
	u := w.pass("g")
	assert.Equal(t, v1beta1.ComponentRollingOut, u.Status.Component("db").Phase)
	assert.Zero(t, u.Status.Component("db").RefusedWrites)
}

// With cross-namespace references off (the default) a component in
// another namespace fails with a message naming the flag, and its
// Deployment is never read: status discloses nothing of it.
func TestCrossNamespaceRefRefusedWithoutReading(t *testing.T) {
	victim := deployment("payments", "main", "payments:v1")
	victim.Namespace = "victim"
	cs := []v1beta1.Component{{Name: "pay", DeploymentRef: v1beta1.DeploymentReference{Namespace: "victim", Name: "payments"}, Image: "evil.example.com/x:1"}}
	u := &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g", UID: "uid-g", Generation: 1},
		Spec: v1beta1.ApplicationUpgradeSpec{Components: cs}}
	w := newWorld(t, u, victim)
	reads := 0
	inner := w.c
	w.r.Client = interceptor.NewClient(inner.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if key.Namespace == "victim" {
				reads++
			}
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			lo := (&client.ListOptions{}).ApplyOptions(opts)
			if lo.Namespace == "victim" {
				reads++
			}
			return c.List(ctx, list, opts...)
		},
	})
	w.pass("g")
	got := w.pass("g")
	assert.Equal(t, v1beta1.PhaseFailed, got.Status.Phase)
	assert.Contains(t, got.Status.Message, "--allow-cross-namespace-refs")
	assert.Zero(t, reads, "the other namespace is never read")
	for _, c := range got.Status.Components {
		assert.Empty(t, c.Image, "no image of another namespace in status")
	}
	d := &appsv1.Deployment{}
	require.NoError(t, inner.Get(context.Background(), client.ObjectKey{Namespace: "victim", Name: "payments"}, d))
	assert.Equal(t, "payments:v1", d.Spec.Template.Spec.Containers[0].Image)

	// Allowed by the flag, the same upgrade proceeds (admission checked the author's rights).
	w.r.AllowCrossNamespaceRefs = true
	require.NoError(t, inner.Delete(context.Background(), got))
	u2 := u.DeepCopy()
	u2.ResourceVersion = ""
	require.NoError(t, inner.Create(context.Background(), u2))
	w.pass("g")
	assert.Equal(t, v1beta1.PhaseProgressing, w.pass("g").Status.Phase)
}

// Control characters in an observed image (someone else wrote it to the
// Deployment) never reach status or events raw.
func TestStatusAndEventsFreeOfControlCharacters(t *testing.T) {
	w := graphWorld(t, node("db"))
	d, _ := w.get("d-db")
	d.Spec.Template.Spec.Containers[0].Image = "db:v1\x1b[31mRED\x1b[0m\u202e"
	require.NoError(t, w.c.Update(context.Background(), d))
	w.rollOut("d-db", "")
	require.NoError(t, reconcileErr(w, "g"))
	first := w.beta("g")
	assert.Contains(t, first.Status.Component("db").Image, `\u001b[31mRED`, "shown escaped")
	for i := 0; i < 4; i++ {
		_ = reconcileErr(w, "g")
	}
	u := w.beta("g")
	u.Status.Components = append(u.Status.Components, first.Status.Components...)
	all := u.Status.Message
	for _, c := range u.Status.Components {
		all += c.Message + c.Image + c.ShortImage
	}
	for _, c := range u.Status.Conditions {
		all += c.Message
	}
	for _, e := range drainEvents(w) {
		all += e
	}
	assert.NotContains(t, all, "\x1b")
	assert.NotContains(t, all, "\u202e")
}

func drainEvents(w *world) []string {
	var out []string
	for {
		select {
		case e := <-w.rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// relatedRecorder records each event's related object.
type relatedRecorder struct{ related, notes []string }

func (r *relatedRecorder) Eventf(_ runtime.Object, related runtime.Object, _, reason, _, note string, args ...interface{}) {
	name := ""
	if o, ok := related.(client.Object); ok && related != nil {
		name = o.GetNamespace() + "/" + o.GetName()
	}
	r.related = append(r.related, reason+" "+name)
	r.notes = append(r.notes, fmt.Sprintf(note, args...))
}

// Two image writes in one pass are two events, each related to its
// Deployment (client-go folds events with the same regarding, related,
// reason and action into one series, dropping the second note) and
// naming the component and the Deployment.
func TestOneEventPerImageWrite(t *testing.T) {
	w := graphWorld(t, node("a"), node("b"))
	rec := &relatedRecorder{}
	w.r.Recorder = rec
	w.pass("g")
	w.pass("g")
	w.pass("g")
	assert.Contains(t, rec.related, "ImageWritten job-system/d-a")
	assert.Contains(t, rec.related, "ImageWritten job-system/d-b")
	joined := strings.Join(rec.notes, "\n")
	assert.Contains(t, joined, "Set a image to a:v2 on deployment job-system/d-a")
	assert.Contains(t, joined, "Set b image to b:v2 on deployment job-system/d-b")
	for _, n := range rec.notes {
		assert.LessOrEqual(t, len(n), MaxEventNote)
	}
}

// serviceAccountName: the Deployment is read and written as that
// ServiceAccount; its missing patch right fails the component with the
// API's 403 message and nothing is written.
func TestServiceAccountImpersonation(t *testing.T) {
	w := graphWorld(t, node("db"))
	u := w.beta("g")
	u.Spec.ServiceAccountName = "deployer"
	require.NoError(t, w.c.Update(context.Background(), u))
	var asked []string
	forbidden := apierrors.NewForbidden(deploymentsGR, "d-db", fmt.Errorf(`User "system:serviceaccount:job-system:deployer" cannot patch resource "deployments"`))
	w.r.Impersonate = func(namespace, name string) (client.Client, error) {
		asked = append(asked, namespace+"/"+name)
		return interceptor.NewClient(w.c.(client.WithWatch), interceptor.Funcs{
			Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
				return forbidden
			},
			Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
				return forbidden
			},
		}), nil
	}
	for i := 0; i < 6 && !w.beta("g").Status.Phase.Terminal(); i++ {
		_ = reconcileErr(w, "g")
	}
	got := w.beta("g")
	assert.Equal(t, v1beta1.PhaseFailed, got.Status.Phase)
	assert.Contains(t, got.Status.Component("db").Message, `cannot patch resource "deployments"`)
	assert.NotEmpty(t, asked)
	for _, a := range asked {
		assert.Equal(t, "job-system/deployer", a)
	}
	d, _ := w.get("d-db")
	assert.Equal(t, "db:v1", d.Spec.Template.Spec.Containers[0].Image)

	// --default-service-account applies to upgrades without the field;
	// no impersonator configured refuses rather than using the operator's rights.
	w2 := graphWorld(t, node("db"))
	w2.r.DefaultServiceAccount = "tenant-sa"
	w2.pass("g")
	got = w2.pass("g")
	assert.Equal(t, v1beta1.PhaseFailed, got.Status.Phase)
	assert.Contains(t, got.Status.Message, `serviceaccount "tenant-sa"`)
}

// A ServiceAccount without get fails the component at its reference,
// without saying whether the Deployment exists.
func TestServiceAccountWithoutGet(t *testing.T) {
	w := graphWorld(t, node("db"))
	w.r.DefaultServiceAccount = "viewer"
	w.r.Impersonate = func(string, string) (client.Client, error) {
		return interceptor.NewClient(w.c.(client.WithWatch), interceptor.Funcs{
			Get: func(_ context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
				return apierrors.NewForbidden(deploymentsGR, key.Name, fmt.Errorf("RBAC: no"))
			},
		}), nil
	}
	w.pass("g")
	got := w.pass("g")
	assert.Equal(t, v1beta1.PhaseFailed, got.Status.Phase)
	assert.Contains(t, got.Status.Message, "serviceaccount job-system/viewer may not get deployment job-system/d-db")
	assert.Empty(t, got.Status.Component("db").Image)
	_ = corev1.EventTypeWarning
}

// Components reaching Rolled in one pass give one RolledOut event each,
// related to its workload: with the same regarding object, reason and
// action and no related object, client-go folds them into one series
// that keeps the first note (a 32-component upgrade showed 21 RolledOut
// events; tenant trial, 2026-12-03).
func TestOneRolledOutEventPerComponent(t *testing.T) {
	w := graphWorld(t, node("a"), node("b"), node("c"))
	rec := &relatedRecorder{}
	w.r.Recorder = rec
	written := w.drive()
	require.Equal(t, written["a"], written["c"], "one wave")
	require.Equal(t, v1beta1.PhaseCompleted, w.beta("g").Status.Phase, w.beta("g").Status.Message)
	var rolled []string
	for i, r := range rec.related {
		if strings.HasPrefix(r, "RolledOut ") {
			rolled = append(rolled, r)
			assert.Contains(t, rec.notes[i], "on deployment job-system/"+strings.TrimPrefix(r, "RolledOut job-system/"), "the note names the related workload")
		}
	}
	assert.ElementsMatch(t, []string{"RolledOut job-system/d-a", "RolledOut job-system/d-b", "RolledOut job-system/d-c"}, rolled)
}
