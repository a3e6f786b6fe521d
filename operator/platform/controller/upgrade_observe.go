package controller

import (
	"context"
	"fmt"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/deploy"
	"github.com/lunadas/upgrade-operator/operator/platform/plan"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
)

// Observe reads the live system through c: sysinv's system, hosts (duplex
// only), Kubernetes versions and kube upgrade, USM's releases and deploy,
// and the VIM's strategy (found through current-strategy, so a strategy of
// any type is seen). Every call must succeed: the controller never acts on
// a partial observation.
func Observe(ctx context.Context, c vim.Client) (deploy.Live, error) {
	var a deploy.Answers
	var err error
	if a.System, err = c.GetSystem(ctx); err != nil {
		return deploy.Live{}, err
	}
	if a.Releases, err = c.ListReleases(ctx, vim.ReleaseQuery{}); err != nil {
		return deploy.Live{}, err
	}
	if a.KubeVersions, err = c.ListKubeVersions(ctx); err != nil {
		return deploy.Live{}, err
	}
	if a.KubeUpgrades, err = c.ListKubeUpgrades(ctx); err != nil {
		return deploy.Live{}, err
	}
	if a.Deploys, err = c.ListDeploys(ctx); err != nil {
		return deploy.Live{}, err
	}
	if mode := v1alpha1.SystemMode(a.System.SystemMode); mode != v1alpha1.SystemModeSimplex {
		if a.Hosts, err = c.ListHosts(ctx); err != nil {
			return deploy.Live{}, err
		}
	}
	cur, err := c.CurrentStrategy(ctx)
	if err != nil {
		return deploy.Live{}, err
	}
	var other *deploy.Strategy
	if cur != nil {
		if a.Strategy, err = c.GetStrategy(ctx, cur.Name); err != nil {
			return deploy.Live{}, err
		}
		if a.Strategy == nil { // gone between the two calls, or a type the VIM does not detail
			other = &deploy.Strategy{Kind: plan.Kind(cur.Name), State: cur.State, Progress: string(cur.State)}
		}
	}
	live, err := deploy.LiveFrom(a)
	if err != nil {
		return live, fmt.Errorf("read the live system: %w", err)
	}
	if live.Strategy == nil {
		live.Strategy = other
	}
	return live, nil
}

// strategyType is the VIM's strategy type for a step kind.
func strategyType(k plan.Kind) vim.StrategyType {
	switch k {
	case plan.SwDeploy:
		return vim.StrategySwUpgrade
	case plan.KubeUpgrade:
		return vim.StrategyKubeUpgrade
	}
	return vim.StrategyType(k)
}
