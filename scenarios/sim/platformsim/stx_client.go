// The stx_*.go files (formerly package stxsim) plug the StarlingX system
// model (simulator/starlingx) into the operator's vim.Client interface
// without HTTP, so the Upgrade controller runs against the model in
// virtual time. Answers and errors have the shapes the HTTP client gives
// against fakevim (stx_equivalence_test.go proves it for the same model).

package platformsim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// Client is a vim.Client over a model. Now is the model time of each call
// (the simulator's virtual clock). Safe for concurrent use.
type Client struct {
	mu    sync.Mutex
	model *starlingx.System
	now   func() time.Time
}

var _ vim.Client = (*Client)(nil)

// NewDirectClient returns a client over model at the times now returns.
func NewDirectClient(model *starlingx.System, now func() time.Time) *Client {
	return &Client{model: model, now: now}
}

// with runs fn on the model under the lock at the current time.
func (c *Client) with(fn func(m *starlingx.System, now time.Time)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fn(c.model, c.now())
}

// vimError converts a model refusal into the *vim.Error the HTTP client
// returns for the same answer.
func vimError(service, op, method, path string, err error) error {
	if err == nil {
		return nil
	}
	var e *starlingx.Error
	if errors.As(err, &e) {
		return &vim.Error{Service: service, Op: op, Method: method, Path: path, StatusCode: e.Code, FaultString: e.Reason}
	}
	return &vim.Error{Service: service, Op: op, Method: method, Path: path, StatusCode: http.StatusInternalServerError, FaultString: err.Error()}
}

func strategyPath(t vim.StrategyType) string { return "/api/orchestration/" + string(t) + "/strategy" }

// GetStrategy implements vim.VIM.
func (c *Client) GetStrategy(_ context.Context, t vim.StrategyType) (*vim.Strategy, error) {
	var out *vim.Strategy
	c.with(func(m *starlingx.System, now time.Time) {
		if st, ok := m.Strategy(now, starlingx.StrategyType(t)); ok {
			out = toStrategy(st)
		}
	})
	return out, nil
}

// GetStrategyByUUID implements vim.VIM.
func (c *Client) GetStrategyByUUID(_ context.Context, t vim.StrategyType, uuid string) (*vim.Strategy, error) {
	var out *vim.Strategy
	c.with(func(m *starlingx.System, now time.Time) {
		if st, ok := m.StrategyByUUID(now, uuid); ok {
			out = toStrategy(st)
		}
	})
	if out == nil {
		return nil, &vim.Error{Service: "vim", Op: fmt.Sprintf("get %s strategy %s", t, uuid), Method: http.MethodGet,
			Path: strategyPath(t) + "/" + uuid, StatusCode: http.StatusNotFound, FaultString: "The resource could not be found."}
	}
	return out, nil
}

// CreateSwUpgradeStrategy implements vim.VIM.
func (c *Client) CreateSwUpgradeStrategy(_ context.Context, r vim.SwUpgradeRequest) (*vim.Strategy, error) {
	req := starlingx.CreateRequest{Type: starlingx.SwUpgrade, Releases: r.Releases, Rollback: r.Rollback, Delete: r.Delete,
		Snapshot: r.Snapshot, Cleanup: r.Cleanup, PreUpgradeDeploy: r.PreUpgradeDeploy, KubeUpgrade: r.KubeUpgrade}
	applyCommon(&req, r.ControllerApplyType, r.StorageApplyType, r.WorkerApplyType, r.MaxParallelWorkerHosts, r.DefaultInstanceAction, r.AlarmRestrictions)
	return c.create(req, fmt.Sprintf("create sw-upgrade strategy for %v", r.Releases))
}

// CreateKubeUpgradeStrategy implements vim.VIM.
func (c *Client) CreateKubeUpgradeStrategy(_ context.Context, r vim.KubeUpgradeRequest) (*vim.Strategy, error) {
	req := starlingx.CreateRequest{Type: starlingx.KubeUpgrade, ToVersion: r.ToVersion}
	applyCommon(&req, r.ControllerApplyType, r.StorageApplyType, r.WorkerApplyType, r.MaxParallelWorkerHosts, r.DefaultInstanceAction, r.AlarmRestrictions)
	return c.create(req, "create kube-upgrade strategy to "+r.ToVersion)
}

// applyCommon copies the shared create fields with the HTTP client's
// defaults (serial, stop-start, strict).
func applyCommon(req *starlingx.CreateRequest, ctrl, storage, worker vim.ApplyType, maxPar int, action, alarms string) {
	def := func(t vim.ApplyType) starlingx.ApplyType {
		if t == "" {
			return starlingx.ApplySerial
		}
		return starlingx.ApplyType(t)
	}
	req.ControllerApplyType, req.StorageApplyType, req.WorkerApplyType = def(ctrl), def(storage), def(worker)
	req.MaxParallelWorkerHosts, req.DefaultInstanceAction, req.AlarmRestrictions = maxPar, action, alarms
}

func (c *Client) create(req starlingx.CreateRequest, op string) (*vim.Strategy, error) {
	var st starlingx.Strategy
	var err error
	c.with(func(m *starlingx.System, now time.Time) { st, err = m.CreateStrategy(now, req) })
	if err != nil {
		return nil, vimError("vim", op, http.MethodPost, strategyPath(vim.StrategyType(req.Type)), err)
	}
	return toStrategy(st), nil
}
