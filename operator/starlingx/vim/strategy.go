package vim

import (
	"context"
	"fmt"
	"net/http"
)

func strategyPath(t StrategyType) string { return "/api/orchestration/" + string(t) + "/strategy" }

// GetStrategy is GET /api/orchestration/{t}/strategy.
func (c *HTTPClient) GetStrategy(ctx context.Context, t StrategyType) (*Strategy, error) {
	var env strategyEnvelope
	err := c.call(ctx, request{service: "vim", op: "get the " + string(t) + " strategy", method: http.MethodGet, path: strategyPath(t), out: &env})
	return env.Strategy, err
}

// GetStrategyByUUID returns the strategy of type t when its uuid is uuid,
// else IsNotFound "strategy does not exist". It reads GET
// /api/orchestration/{t}/strategy and compares the uuid: the real VIM's
// GET …/strategy/{uuid} never finds a strategy (SwUpdateStrategyAPI.get_one
// does not set the request's sw_update_type, so
// vim_sw_update_api_get_strategy looks up type "unknown" and answers
// NOT_FOUND: 404), so the client does not call it.
func (c *HTTPClient) GetStrategyByUUID(ctx context.Context, t StrategyType, uuid string) (*Strategy, error) {
	op := fmt.Sprintf("get %s strategy %s", t, uuid)
	cur, err := c.GetStrategy(ctx, t)
	if err != nil {
		return nil, err
	}
	if cur == nil || cur.UUID != uuid {
		return nil, &Error{Service: "vim", Op: op, Method: http.MethodGet, Path: strategyPath(t), StatusCode: http.StatusNotFound, FaultString: "strategy does not exist"}
	}
	return cur, nil
}

// CreateSwUpgradeStrategy is POST /api/orchestration/sw-upgrade/strategy.
func (c *HTTPClient) CreateSwUpgradeStrategy(ctx context.Context, req SwUpgradeRequest) (*Strategy, error) {
	req.defaults()
	return c.create(ctx, StrategySwUpgrade, fmt.Sprintf("create sw-upgrade strategy for %v", req.Releases), req)
}

// CreateKubeUpgradeStrategy is POST /api/orchestration/kube-upgrade/strategy.
func (c *HTTPClient) CreateKubeUpgradeStrategy(ctx context.Context, req KubeUpgradeRequest) (*Strategy, error) {
	req.defaults()
	return c.create(ctx, StrategyKubeUpgrade, "create kube-upgrade strategy to "+req.ToVersion, req)
}

func (c *HTTPClient) create(ctx context.Context, t StrategyType, op string, body any) (*Strategy, error) {
	var env strategyEnvelope
	if err := c.call(ctx, request{service: "vim", op: op, method: http.MethodPost, path: strategyPath(t), body: body, out: &env}); err != nil {
		return nil, err
	}
	if env.Strategy == nil {
		return nil, &Error{Service: "vim", Op: op, Method: http.MethodPost, Path: strategyPath(t), FaultString: "the VIM answered without a strategy"}
	}
	return env.Strategy, nil
}

// ApplyStrategy posts apply-all or apply-stage to .../strategy/actions.
func (c *HTTPClient) ApplyStrategy(ctx context.Context, t StrategyType, uuid string, stageID *int) (*Strategy, error) {
	act := actionRequest{Action: "apply-all"}
	if stageID != nil {
		act = actionRequest{Action: "apply-stage", StageID: stageID}
	}
	return c.action(ctx, t, uuid, act)
}

// AbortStrategy posts abort or abort-stage to .../strategy/actions.
func (c *HTTPClient) AbortStrategy(ctx context.Context, t StrategyType, uuid string, stageID *int) (*Strategy, error) {
	act := actionRequest{Action: "abort"}
	if stageID != nil {
		act = actionRequest{Action: "abort-stage", StageID: stageID}
	}
	return c.action(ctx, t, uuid, act)
}

// action checks that uuid is the current strategy (the wire carries no
// uuid), then posts the action once (202 with the strategy).
func (c *HTTPClient) action(ctx context.Context, t StrategyType, uuid string, act actionRequest) (*Strategy, error) {
	op := fmt.Sprintf("%s %s strategy %s", act.Action, t, uuid)
	path := strategyPath(t) + "/actions"
	if err := c.guard(ctx, t, uuid, op, path, http.MethodPost); err != nil {
		return nil, err
	}
	var env strategyEnvelope
	if err := c.call(ctx, request{service: "vim", op: op, method: http.MethodPost, path: path, body: act, out: &env}); err != nil {
		return nil, err
	}
	if env.Strategy == nil {
		return nil, &Error{Service: "vim", Op: op, Method: http.MethodPost, Path: path, FaultString: "the VIM answered without a strategy"}
	}
	return env.Strategy, nil
}

// guard answers IsNotFound "strategy does not exist" when uuid is set and
// the VIM's strategy of type t has another uuid or is gone.
func (c *HTTPClient) guard(ctx context.Context, t StrategyType, uuid, op, path, method string) error {
	if uuid == "" {
		return nil
	}
	cur, err := c.GetStrategy(ctx, t)
	if err != nil {
		return err
	}
	if cur == nil || cur.UUID != uuid {
		return &Error{Service: "vim", Op: op, Method: method, Path: path, StatusCode: http.StatusNotFound, FaultString: "strategy does not exist"}
	}
	return nil
}

// DeleteStrategy is DELETE /api/orchestration/{t}/strategy with
// {"force": force}.
func (c *HTTPClient) DeleteStrategy(ctx context.Context, t StrategyType, uuid string, force bool) error {
	op := fmt.Sprintf("delete %s strategy %s", t, uuid)
	if err := c.guard(ctx, t, uuid, op, strategyPath(t), http.MethodDelete); err != nil {
		return err
	}
	return c.call(ctx, request{service: "vim", op: op, method: http.MethodDelete, path: strategyPath(t), body: map[string]bool{"force": force}})
}

// CurrentStrategy is GET /api/orchestration/current-strategy/strategy.
func (c *HTTPClient) CurrentStrategy(ctx context.Context) (*CurrentStrategy, error) {
	var env currentEnvelope
	err := c.call(ctx, request{service: "vim", op: "get the current strategy", method: http.MethodGet,
		path: "/api/orchestration/current-strategy/strategy", out: &env})
	return env.Strategy, err
}
