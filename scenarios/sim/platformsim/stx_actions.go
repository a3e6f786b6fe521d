package platformsim

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// ApplyStrategy implements vim.VIM.
func (c *Client) ApplyStrategy(_ context.Context, t vim.StrategyType, uuid string, stageID *int) (*vim.Strategy, error) {
	action := "apply-all"
	if stageID != nil {
		action = "apply-stage"
	}
	return c.action(t, uuid, action, func(m *starlingx.System, now time.Time) (starlingx.Strategy, error) {
		return m.ApplyStrategy(now, starlingx.StrategyType(t), uuid, stageID)
	})
}

// AbortStrategy implements vim.VIM.
func (c *Client) AbortStrategy(_ context.Context, t vim.StrategyType, uuid string, stageID *int) (*vim.Strategy, error) {
	action := "abort"
	if stageID != nil {
		action = "abort-stage"
	}
	return c.action(t, uuid, action, func(m *starlingx.System, now time.Time) (starlingx.Strategy, error) {
		return m.AbortStrategy(now, starlingx.StrategyType(t), uuid, stageID)
	})
}

func (c *Client) action(t vim.StrategyType, uuid, action string, fn func(*starlingx.System, time.Time) (starlingx.Strategy, error)) (*vim.Strategy, error) {
	var st starlingx.Strategy
	var err error
	c.with(func(m *starlingx.System, now time.Time) { st, err = fn(m, now) })
	if err != nil {
		return nil, vimError("vim", fmt.Sprintf("%s %s strategy %s", action, t, uuid), http.MethodPost, strategyPath(t)+"/actions", err)
	}
	return toStrategy(st), nil
}

// DeleteStrategy implements vim.VIM.
func (c *Client) DeleteStrategy(_ context.Context, t vim.StrategyType, uuid string, force bool) error {
	var err error
	c.with(func(m *starlingx.System, now time.Time) {
		err = m.DeleteStrategy(now, starlingx.StrategyType(t), uuid, force)
	})
	return vimError("vim", fmt.Sprintf("delete %s strategy %s", t, uuid), http.MethodDelete, strategyPath(t), err)
}

// CurrentStrategy implements vim.VIM.
func (c *Client) CurrentStrategy(_ context.Context) (*vim.CurrentStrategy, error) {
	var out *vim.CurrentStrategy
	c.with(func(m *starlingx.System, now time.Time) {
		if t, state, ok := m.CurrentStrategy(now); ok {
			out = &vim.CurrentStrategy{Name: vim.StrategyType(t), State: vim.StrategyState(state)}
		}
	})
	return out, nil
}
