package starlingx

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newSystem(t *testing.T, mode SystemMode, mutate ...func(*Config)) *System {
	t.Helper()
	cfg := DemoConfig(mode, t0)
	for _, m := range mutate {
		m(&cfg)
	}
	s, err := New(cfg)
	require.NoError(t, err)
	return s
}

// runToEnd advances the model until nothing runs on its own.
func runToEnd(t *testing.T, s *System) {
	t.Helper()
	for i := 0; i < 10000; i++ {
		next, ok := s.NextEvent()
		if !ok {
			return
		}
		s.Advance(next)
	}
	t.Fatal("model still running after 10000 events")
}

// runUntil advances event by event until cond holds.
func runUntil(t *testing.T, s *System, cond func() bool) {
	t.Helper()
	for i := 0; i < 10000 && !cond(); i++ {
		next, ok := s.NextEvent()
		require.True(t, ok, "model stopped before the condition held")
		s.Advance(next)
	}
	require.True(t, cond())
}

func swReq(release string) CreateRequest {
	return CreateRequest{Type: SwUpgrade, ControllerApplyType: ApplySerial, StorageApplyType: ApplySerial,
		WorkerApplyType: ApplySerial, DefaultInstanceAction: InstanceStopStart, Releases: []string{release}, Delete: true}
}

func kubeReq(to string) CreateRequest {
	return CreateRequest{Type: KubeUpgrade, StorageApplyType: ApplySerial, WorkerApplyType: ApplySerial,
		DefaultInstanceAction: InstanceStopStart, ToVersion: to}
}

func stageNames(p Phase) []string {
	var out []string
	for _, st := range p.Stages {
		out = append(out, st.Name)
	}
	return out
}

func stepNames(st Stage) []string {
	var out []string
	for _, sp := range st.Steps {
		out = append(out, sp.Name)
	}
	return out
}

func ptr(i int) *int { return &i }

func code(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// built creates a strategy and runs its build phase to the end.
func built(t *testing.T, s *System, req CreateRequest) Strategy {
	t.Helper()
	st, err := s.CreateStrategy(s.Now(), req)
	require.NoError(t, err)
	require.Equal(t, StateBuilding, st.State)
	runToEnd(t, s)
	got, ok := s.Strategy(s.Now(), req.Type)
	require.True(t, ok)
	return got
}

// applied builds, applies and runs a strategy to its end, then deletes it.
func applied(t *testing.T, s *System, req CreateRequest) Strategy {
	t.Helper()
	st := built(t, s, req)
	require.Equal(t, StateReadyToApply, st.State, "build: %s", st.Build.Reason)
	_, err := s.ApplyStrategy(s.Now(), req.Type, st.UUID, nil)
	require.NoError(t, err)
	runToEnd(t, s)
	got, _ := s.Strategy(s.Now(), req.Type)
	require.Equal(t, StateApplied, got.State, "apply: %s", got.Apply.Reason)
	require.NoError(t, s.DeleteStrategy(s.Now(), req.Type, got.UUID, false))
	return got
}

// stateHistory lists the states strategy uuid went through, in order.
func stateHistory(s *System, uuid string) []StrategyState {
	var out []StrategyState
	for _, e := range s.Events() {
		if e.Kind == EventStrategyState && e.Subject == uuid {
			if i := strings.LastIndex(e.Detail, " "); i >= 0 {
				out = append(out, StrategyState(e.Detail[i+1:]))
			}
		}
	}
	return out
}
