package fakevim

import (
	"time"

	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// ApplyFaults adds the faults of f (see FaultRequest).
func (s *Server) ApplyFaults(f FaultRequest) {
	s.WithModel(func(m *starlingx.System, now time.Time) {
		mf := m.Faults()
		if f.Reset {
			mf = starlingx.Faults{}
			s.faults = HTTPFaults{}
		}
		mf.BuildFailures += f.FailNextBuilds
		mf.BuildTimeouts += f.TimeoutNextBuilds
		if f.BuildFailReason != "" {
			mf.BuildFailReason = f.BuildFailReason
		}
		typ := starlingx.StrategyType(f.StrategyType)
		if f.FailApplyAtStage != nil {
			mf.ApplyFailures = append(mf.ApplyFailures, starlingx.StageFault{StageID: *f.FailApplyAtStage, Type: typ, Reason: f.ApplyFailReason})
		}
		if f.TimeoutApplyAtStage != nil {
			mf.ApplyTimeouts = append(mf.ApplyTimeouts, starlingx.StageFault{StageID: *f.TimeoutApplyAtStage, Type: typ})
		}
		m.SetFaults(mf)
		if f.Alarms != nil {
			var alarms []starlingx.Alarm
			for _, a := range *f.Alarms {
				alarms = append(alarms, starlingx.Alarm{ID: a.ID, Severity: a.Severity, Reason: a.Reason, MgmtAffecting: a.MgmtAffecting})
			}
			m.SetAlarms(now, alarms)
		}
		s.addHTTPFaults(f)
	})
}

// addHTTPFaults updates the HTTP faults; the caller holds s.mu.
func (s *Server) addHTTPFaults(f FaultRequest) {
	h := &s.faults
	h.UnavailableNext += f.UnavailableNext
	if f.UnavailableFor > 0 {
		h.UnavailableUntil = s.opts.Wall().Add(time.Duration(f.UnavailableFor))
	}
	if f.Delay > 0 {
		h.Delay, h.DelayNext = time.Duration(f.Delay), f.DelayNext
	}
	if len(f.Services) > 0 {
		h.Services = append([]string(nil), f.Services...)
	}
	if f.ExpireTokens {
		s.tokens = map[string]time.Time{}
	}
}

// faultsView is GET /admin/faults.
func (s *Server) faultsView() map[string]any {
	var mf starlingx.Faults
	s.WithModel(func(m *starlingx.System, _ time.Time) { mf = m.Faults() })
	h := s.HTTPFaults()
	return map[string]any{
		"failNextBuilds": mf.BuildFailures, "buildFailReason": mf.BuildFailReason, "timeoutNextBuilds": mf.BuildTimeouts,
		"applyFailures": mf.ApplyFailures, "applyTimeouts": mf.ApplyTimeouts,
		"unavailableNext": h.UnavailableNext, "unavailableUntil": h.UnavailableUntil,
		"delay": Duration(h.Delay), "delayNext": h.DelayNext, "services": h.Services,
	}
}

// State is GET /admin/state: what the model looks like now.
func (s *Server) State() map[string]any {
	out := map[string]any{}
	s.WithModel(func(m *starlingx.System, now time.Time) {
		out["modelTime"] = now
		out["systemMode"] = m.SystemInfo(now).SystemMode
		out["deployedRelease"] = m.DeployedRelease(now)
		out["activeKubeVersion"] = m.ActiveKubeVersion(now)
		out["activeController"] = m.ActiveController(now)
		out["deploys"] = m.Deploys(now)
		out["kubeUpgrades"] = m.KubeUpgrades(now)
		if t, state, ok := m.CurrentStrategy(now); ok {
			st, _ := m.Strategy(now, t)
			out["strategy"] = map[string]any{"type": t, "state": state, "uuid": st.UUID,
				"currentPhase": st.CurrentPhase, "completion": st.CurrentPhaseCompletion()}
		}
	})
	return out
}
