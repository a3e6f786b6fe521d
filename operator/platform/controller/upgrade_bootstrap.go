package controller

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
)

// Bootstrap creates the singleton `system` Upgrade from the live system
// (spec.release = the running product release and Kubernetes version) when
// it does not exist. As a manager Runnable it runs on the leader only and
// retries until it succeeds; the controller fills the status.
type Bootstrap struct {
	Client client.Client
	VIM    vim.Client
	// RetryInterval is the pause between attempts; default 10s.
	RetryInterval time.Duration
}

var (
	_ manager.Runnable               = (*Bootstrap)(nil)
	_ manager.LeaderElectionRunnable = (*Bootstrap)(nil)
)

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (b *Bootstrap) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable: Once until it succeeds or ctx ends.
func (b *Bootstrap) Start(ctx context.Context) error {
	interval := b.RetryInterval
	if interval <= 0 {
		interval = 10 * time.Second
	}
	logger := log.FromContext(ctx).WithName("bootstrap")
	for {
		err := b.Once(ctx)
		if err == nil {
			return nil
		}
		logger.Error(err, "cannot create the system Upgrade yet; retrying", "in", interval.String())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// Once creates `system` from the live system unless it exists.
func (b *Bootstrap) Once(ctx context.Context) error {
	var u v1alpha1.Upgrade
	err := b.Client.Get(ctx, client.ObjectKey{Name: v1alpha1.SystemName}, &u)
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("get upgrade %s: %w", v1alpha1.SystemName, err)
	}
	live, err := Observe(ctx, b.VIM)
	if err != nil {
		return fmt.Errorf("observe the system to create upgrade %s: %w", v1alpha1.SystemName, err)
	}
	u = v1alpha1.Upgrade{
		ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.SystemName},
		Spec: v1alpha1.UpgradeSpec{Release: v1alpha1.ReleaseSpec{
			Platform: live.Running.Platform.String(), Kubernetes: live.Running.Kubernetes.String(),
		}},
	}
	if err := b.Client.Create(ctx, &u); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create upgrade %s: %w", v1alpha1.SystemName, err)
	}
	log.FromContext(ctx).Info("created the system Upgrade from the live system", "release", live.Running.String())
	return nil
}
