package simulator

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// BenchmarkRollout measures one rolling update of 3 replicas (maxSurge 1,
// maxUnavailable 0, ready 5 s, exit 20 s) to completion, old pods gone,
// including building the simulation and the initial rollout.
func BenchmarkRollout(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s := New(Options{Seed: 1})
		s.InstallKubeControllers(KubeOptions{})
		d, err := transcriptDeployment("web", map[string]string{"replicas": "3", "surge": "1", "unavailable": "0", "ready": "5s", "delete": "20s"})
		if err != nil {
			b.Fatal(err)
		}
		c := s.Client()
		if err := c.Create(ctx, d); err != nil {
			b.Fatal(err)
		}
		if _, err := s.RunFor(ctx, time.Minute); err != nil {
			b.Fatal(err)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
			b.Fatal(err)
		}
		d.Spec.Template.Spec.Containers[0].Image = "registry.example/web:v2"
		if err := c.Update(ctx, d); err != nil {
			b.Fatal(err)
		}
		res, err := s.Run(ctx, nil, time.Hour)
		if err != nil || !res.Idle {
			b.Fatalf("rollout did not settle: %v", err)
		}
		got := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil || got.Status.UpdatedReplicas != 3 || *got.Status.TerminatingReplicas != 0 {
			b.Fatalf("rollout incomplete: %v %s", err, DeploymentStatusLine(got))
		}
	}
}
