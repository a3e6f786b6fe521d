//go:build e2e && realnode

package install

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
	"github.com/lunadas/upgrade-operator/scenarios/real/nodeimages"
	"github.com/lunadas/upgrade-operator/scenarios/real/realcluster"
	"github.com/lunadas/upgrade-operator/scenarios/real/realnode"
)

// operatorSelector selects the chart's manager pods of release "uo".
const operatorSelector = "app.kubernetes.io/name=upgrade-operator,app.kubernetes.io/instance=uo"

// TestInClusterOnRealNode (make test-node-incluster): the operator as a pod
// on the real node, from its own image (the node image archive's
// OperatorImage, the current go build of ./cmd/upgrade-operator),
// installed by `helm install` of the chart with its ServiceAccount, RBAC,
// in-process certificate rotation (the kubelet mounts the Secret the
// rotator fills), metrics, and both webhooks served from the pod. The pod
// runs in the node's network (manager.hostNetwork) and the API server
// calls the webhooks at https://localhost:<port> (webhook.url): every
// connection stays on loopback. The demo upgrade then runs on real
// containers, and the operator pod is deleted with `kubectl delete pod`
// while the worker rolls out; its Deployment starts a new pod, which takes
// the Lease and completes the upgrade in order: the event log judge finds
// no violation and the API image is written after the last old worker
// container exited.
func TestInClusterOnRealNode(t *testing.T) {
	ctrllog.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	requireCurrentOperatorImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{Logf: t.Logf, RealNode: true})
	if errors.Is(err, controlplane.ErrRealNodeUnavailable) {
		t.Skipf("skipped: %v", err)
	}
	require.NoError(t, err, "start the local control plane with the real node (make node)")
	t.Cleanup(func() {
		if t.Failed() {
			cp.KeepLogs()
		}
		if err := cp.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})
	t.Logf("control plane with real node ready in %s", cp.StartupDuration.Round(time.Millisecond))
	c, err := client.New(cp.RESTConfig, client.Options{Scheme: realcluster.Scheme()})
	require.NoError(t, err)

	op := &inClusterOperator{t: t, cp: cp, c: c, metricsPort: freePort(t), webhookPort: freePort(t), probesPort: freePort(t)}
	createNamespaces(t, c, "job-system") // watched: the chart's Role goes there
	if err := op.install(ctx); err != nil {
		op.dumpLogs()
		require.NoError(t, err)
	}
	scraper, stranger := metricsScrapers(t, ctx, cp.RESTConfig, c, releaseNamespace, "uo-upgrade-operator-metrics-reader")
	res, err := realcluster.RunDemo(ctx, realcluster.DemoConfig{
		RESTConfig: cp.RESTConfig, Timeout: 5 * time.Minute,
		PodTemplate:  realnode.AdaptPodTemplate,
		SkipCRDs:     true, // the chart's, conversion served by the pod
		StartManager: op.start,
	})
	op.wait()
	if err != nil {
		op.dumpLogs()
	}
	require.NoError(t, err, "the demo upgrade driven by the operator pod")
	require.NoError(t, op.err, "the operator pod's restart")

	rep, err := realnode.CheckExits(res.Events, "job-system", "job-worker", "job-api")
	require.NoError(t, err)
	t.Logf("last of %d old worker containers exited at %.3fs, API image written at %.3fs", rep.OldPods, rep.LastOldExit, rep.APIWrite)
	for key, r := range res.Reports {
		assert.Empty(t, r.Violations, "%s: ordering violations", key)
	}

	// The new pod, not the deleted one, finished: it holds the Lease, it
	// observed the handoff (metrics from the pod, on the node's loopback:
	// the chart's default HTTPS, tokens reviewed by the pod's
	// ServiceAccount) and it serves both webhooks.
	assert.NotEqual(t, op.deleted.Name, op.restarted.Name)
	assert.NotEqual(t, op.holderAtDelete, op.leaseHolder(ctx), "the new pod took the Lease")
	m := assertSecureMetrics(t, fmt.Sprintf("https://127.0.0.1:%d/metrics", op.metricsPort), scraper, stranger)
	assert.GreaterOrEqual(t, m[handoffCount], 1.0, "the restarted pod observed the handoff")
	var a upgradesv1alpha1.ApplicationUpgrade
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "job-system", Name: "upgrade-v2"}, &a), "a v1alpha1 read: conversion served by the pod")
	assert.Equal(t, "registry.example.com/job-api:v2.0.0", a.Spec.API.Image)
	bad := betaUpgrade("job-system", "bad", v1beta1.Component{Name: "a", DeploymentRef: v1beta1.DeploymentReference{Name: "job-api"}, Image: "app:v2\x1b[2J"})
	err = c.Create(ctx, bad, client.DryRunAll)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "denied the request", "the admission webhook served by the pod answered")
	logs := op.kubectl(ctx, "logs", "-n", releaseNamespace, op.restarted.Name)
	assert.NotContains(t, strings.ToLower(logs), "forbidden", "the chart's RBAC suffices")
	t.Logf("operator pod %s deleted while the worker rolled out; %s completed the upgrade in %s", op.deleted.Name, op.restarted.Name, res.Elapsed.Round(time.Millisecond))
}

// requireCurrentOperatorImage fails unless the operator image's binary
// (bin/node-images-bin/manager, which make node-images puts in the
// archive) is what go build makes of ./cmd/upgrade-operator now, with the
// same flags (nodeimages.BuildBinaries).
func requireCurrentOperatorImage(t *testing.T) {
	t.Helper()
	root := repoRoot(t)
	have, err := os.ReadFile(filepath.Join(root, "bin", "node-images-bin", "manager"))
	require.NoError(t, err, "run make node (node images)")
	dir := t.TempDir()
	require.NoError(t, nodeimages.BuildBinaries(context.Background(), "go", root, dir))
	want, err := os.ReadFile(filepath.Join(dir, "manager"))
	require.NoError(t, err)
	require.Equal(t, sha256.Sum256(want), sha256.Sum256(have), "the operator image %s is stale: run make node-images", nodeimages.OperatorImage)
}

// inClusterOperator installs the chart onto the real node and deletes its
// pod mid-rollout.
type inClusterOperator struct {
	t                                    *testing.T
	cp                                   *controlplane.ControlPlane
	c                                    client.Client
	metricsPort, webhookPort, probesPort int

	first          corev1.Pod
	done           chan struct{}
	err            error // of the restart, read after done
	deleted        corev1.Pod
	restarted      corev1.Pod
	holderAtDelete string
}

// values are the chart values of the install: one replica on the real
// node, in its network, webhooks at https://localhost:<port>, the API
// server at its loopback address (no kube-proxy routes the kubernetes
// Service's ClusterIP), the image from the archive, watching job-system.
func (o *inClusterOperator) values() map[string]any {
	u, err := url.Parse(o.cp.RESTConfig.Host)
	require.NoError(o.t, err)
	return map[string]any{
		"watchNamespaces": []string{"job-system"},
		"manager": map[string]any{
			"replicas":     1,
			"hostNetwork":  true,
			"image":        map[string]any{"pullPolicy": "Never"},
			"nodeSelector": map[string]string{controlplane.RealNodeLabel: "true"},
			"tolerations":  []map[string]string{{"key": controlplane.RealNodeTaintKey, "operator": "Exists", "effect": "NoSchedule"}},
			"env": []map[string]string{
				{"name": "KUBERNETES_SERVICE_HOST", "value": u.Hostname()},
				{"name": "KUBERNETES_SERVICE_PORT", "value": u.Port()},
			},
		},
		"webhook": map[string]any{"url": fmt.Sprintf("https://localhost:%d", o.webhookPort), "port": o.webhookPort},
		"metrics": map[string]any{"port": o.metricsPort},
		"probes":  map[string]any{"port": o.probesPort},
	}
}

// install runs `helm install` (CRDs included) and waits for the operator
// pod to be Ready: its webhooks serve.
func (o *inClusterOperator) install(ctx context.Context) error {
	data, err := yaml.Marshal(o.values())
	if err != nil {
		return err
	}
	valuesFile := filepath.Join(o.t.TempDir(), "values.yaml")
	if err := os.WriteFile(valuesFile, data, 0o644); err != nil {
		return err
	}
	began := time.Now()
	helm, err := Tool("helm")
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, helm, "install", "uo", ChartDir, "--namespace", releaseNamespace, "--create-namespace",
		"--kubeconfig", o.cp.Kubeconfig, "-f", valuesFile, "--wait", "--timeout", "4m")
	cmd.Dir = repoRoot(o.t)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("helm install: %w\n%s", err, out)
	}
	first, err := o.readyPod(ctx, "")
	if err != nil {
		return err
	}
	o.t.Logf("helm install: operator pod %s (image %s, ServiceAccount %s) Ready on %s in %s",
		first.Name, first.Spec.Containers[0].Image, first.Spec.ServiceAccountName, first.Spec.NodeName, time.Since(began).Round(time.Millisecond))
	if first.Spec.NodeName != controlplane.RealNodeName || first.Spec.Containers[0].Image != nodeimages.OperatorImage {
		return fmt.Errorf("operator pod %s: node %s image %s, want %s and %s", first.Name, first.Spec.NodeName, first.Spec.Containers[0].Image, controlplane.RealNodeName, nodeimages.OperatorImage)
	}
	o.first = *first
	return nil
}

// start is DemoConfig.StartManager (the pod already runs): it deletes the
// pod once the worker rolls out, in the background.
func (o *inClusterOperator) start(ctx context.Context) (<-chan error, error) {
	first := &o.first
	errs := make(chan error, 1)
	o.done = make(chan struct{})
	go func() {
		defer close(o.done)
		if err := o.restartMidRollout(ctx, first); err != nil {
			o.err = err
			errs <- err
		}
	}()
	return errs, nil
}

// restartMidRollout waits until the worker component rolls out, checks the
// API image is still the old one, deletes the operator pod with kubectl
// and waits for its replacement to be Ready.
func (o *inClusterOperator) restartMidRollout(ctx context.Context, pod *corev1.Pod) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var u v1beta1.ApplicationUpgrade
		if err := o.c.Get(ctx, client.ObjectKey{Namespace: "job-system", Name: "upgrade-v2"}, &u); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return u.Status.Component("worker").Phase == v1beta1.ComponentRollingOut, nil
	})
	if err != nil {
		return fmt.Errorf("the worker never rolled out: %w", err)
	}
	var api appsv1.Deployment
	if err := o.c.Get(ctx, client.ObjectKey{Namespace: "job-system", Name: "job-api"}, &api); err != nil {
		return err
	}
	if img := api.Spec.Template.Spec.Containers[0].Image; img != "registry.example.com/job-api:v1.0.0" {
		return fmt.Errorf("job-api already has image %s when the operator pod is to be deleted: not mid-rollout", img)
	}
	o.holderAtDelete = o.leaseHolder(ctx)
	o.deleted = *pod
	out := o.kubectl(ctx, "delete", "pod", "-n", releaseNamespace, pod.Name)
	o.t.Logf("mid-rollout (worker RollingOut, job-api still v1.0.0): kubectl delete pod: %s", strings.TrimSpace(out))
	next, err := o.readyPod(ctx, pod.Name)
	if err != nil {
		return err
	}
	o.restarted = *next
	o.t.Logf("replacement pod %s Ready", next.Name)
	return nil
}

// readyPod waits for a Ready operator pod other than not.
func (o *inClusterOperator) readyPod(ctx context.Context, not string) (*corev1.Pod, error) {
	var found *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := o.c.List(ctx, &pods, client.InNamespace(releaseNamespace), client.MatchingLabels{"app.kubernetes.io/instance": "uo", "app.kubernetes.io/name": "upgrade-operator"}); err != nil {
			return false, nil
		}
		for i, p := range pods.Items {
			if p.Name == not || p.DeletionTimestamp != nil {
				continue
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					found = &pods.Items[i]
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("no Ready operator pod (other than %q): %w", not, err)
	}
	return found, nil
}

func (o *inClusterOperator) leaseHolder(ctx context.Context) string {
	var l coordinationv1.Lease
	if err := o.c.Get(ctx, client.ObjectKey{Namespace: releaseNamespace, Name: manager.DefaultLeaderElectionID}, &l); err != nil {
		return ""
	}
	return ptr.Deref(l.Spec.HolderIdentity, "")
}

// kubectl runs bin/kubectl against the control plane and returns its
// output (an error's text when it fails).
func (o *inClusterOperator) kubectl(ctx context.Context, args ...string) string {
	bin, err := Tool("kubectl")
	if err != nil {
		return err.Error()
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", o.cp.Kubeconfig}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Sprintf("kubectl %s: %v: %s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

func (o *inClusterOperator) wait() {
	if o.done != nil {
		<-o.done
	}
}

// dumpLogs logs the operator pods' state and logs (on failure).
func (o *inClusterOperator) dumpLogs() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o.t.Logf("operator pods:\n%s", o.kubectl(ctx, "get", "pods", "-n", releaseNamespace, "-o", "wide"))
	o.t.Logf("describe:\n%s", o.kubectl(ctx, "describe", "pods", "-n", releaseNamespace, "-l", operatorSelector))
	o.t.Logf("logs:\n%s", o.kubectl(ctx, "logs", "-n", releaseNamespace, "-l", operatorSelector, "--tail", "60"))
}
