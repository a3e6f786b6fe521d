package controller

import (
	"context"
	"fmt"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/deploy"
	"github.com/lunadas/upgrade-operator/operator/platform/plan"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
)

// act performs the decision's one VIM write.
func act(ctx context.Context, c vim.Client, a deploy.Action) error {
	t := strategyType(a.StrategyKind)
	switch a.Kind {
	case deploy.ActNone:
		return nil
	case deploy.ActCreate:
		return create(ctx, c, a.Step, a.Policy)
	case deploy.ActApply:
		_, err := c.ApplyStrategy(ctx, t, a.UUID, nil)
		return err
	case deploy.ActAbort:
		_, err := c.AbortStrategy(ctx, t, a.UUID, nil)
		return err
	case deploy.ActDelete:
		return c.DeleteStrategy(ctx, t, a.UUID, a.Force)
	case deploy.ActSwact:
		return c.SwactHost(ctx, a.Host)
	case deploy.ActRollback:
		// SwUpgradeStrategyCreateData with rollback: no release, no delete
		// (the VIM refuses "Cannot set both delete and rollback, delete is
		// set by default": SwUpgradeStrategy.build).
		_, err := c.CreateSwUpgradeStrategy(ctx, vim.SwUpgradeRequest{
			Releases: []string{}, Rollback: true,
			ControllerApplyType: vim.ApplyType(a.Policy.ControllerApplyType), WorkerApplyType: vim.ApplyType(a.Policy.WorkerApplyType),
			MaxParallelWorkerHosts: int(a.Policy.MaxParallelWorkerHosts), DefaultInstanceAction: string(a.Policy.InstanceAction),
			AlarmRestrictions: string(a.Policy.AlarmRestriction),
		})
		return err
	}
	return fmt.Errorf("unknown action %q", a.Kind)
}

// create creates the strategy of step with the deploy policy's options.
// sw-upgrade strategies end with sw-deploy-delete (Delete), so that the
// next step's build finds no completed deploy pending delete.
func create(ctx context.Context, c vim.Client, step plan.DeployStep, p v1alpha1.DeployPolicy) error {
	ctrl, worker := vim.ApplyType(p.ControllerApplyType), vim.ApplyType(p.WorkerApplyType)
	if step.Kind == plan.KubeUpgrade {
		// The real VIM accepts only serial controllers for kube-upgrade
		// (KubeUpgradeStrategyAPI.post: 400 otherwise), whatever
		// spec.deployPolicy.controllerApplyType says for sw-deploy steps.
		_, err := c.CreateKubeUpgradeStrategy(ctx, vim.KubeUpgradeRequest{
			ToVersion: step.Kube.String(), ControllerApplyType: vim.ApplySerial, WorkerApplyType: worker,
			MaxParallelWorkerHosts: int(p.MaxParallelWorkerHosts), DefaultInstanceAction: string(p.InstanceAction),
			AlarmRestrictions: string(p.AlarmRestriction),
		})
		return err
	}
	_, err := c.CreateSwUpgradeStrategy(ctx, vim.SwUpgradeRequest{
		Releases: []string{step.Release.String()}, ControllerApplyType: ctrl, WorkerApplyType: worker,
		MaxParallelWorkerHosts: int(p.MaxParallelWorkerHosts), DefaultInstanceAction: string(p.InstanceAction),
		AlarmRestrictions: string(p.AlarmRestriction), Delete: true,
		Snapshot: p.RollbackPolicy == v1alpha1.RollbackPolicySnapshot,
	})
	return err
}
