package starlingx

import "time"

// Strategy returns the strategy of type typ, if the VIM holds one of that
// type (GET /api/orchestration/{type}/strategy).
func (s *System) Strategy(now time.Time, typ StrategyType) (Strategy, bool) {
	s.Advance(now)
	if s.strategy == nil || s.strategy.Type != typ {
		return Strategy{}, false
	}
	return s.strategy.clone(), true
}

// StrategyByUUID returns the strategy with this uuid, of any type
// (GET /api/orchestration/{type}/strategy/{uuid}).
func (s *System) StrategyByUUID(now time.Time, uuid string) (Strategy, bool) {
	s.Advance(now)
	if s.strategy == nil || s.strategy.UUID != uuid {
		return Strategy{}, false
	}
	return s.strategy.clone(), true
}

// CurrentStrategy is the type and state of whichever strategy exists
// (GET /api/orchestration/current-strategy/strategy).
func (s *System) CurrentStrategy(now time.Time) (StrategyType, StrategyState, bool) {
	s.Advance(now)
	if s.strategy == nil {
		return "", "", false
	}
	return s.strategy.Type, s.strategy.State, true
}

// lookup finds the strategy an action names: 404 "strategy does not
// exist" when uuid is given and names no current strategy of type typ
// (objects/_sw_update.py strategy_apply / strategy_abort / strategy_delete),
// else the REST layer's bare 404 when none of type typ exists.
func (s *System) lookup(typ StrategyType, uuid string) (*Strategy, error) {
	if uuid != "" && (s.strategy == nil || s.strategy.Type != typ || uuid != s.strategy.UUID) {
		return nil, errf(404, ReasonStrategyDoesNotExist)
	}
	if s.strategy == nil || s.strategy.Type != typ {
		return nil, errf(404, "The resource could not be found.")
	}
	return s.strategy, nil
}

// DeleteStrategy deletes the strategy of type typ. Without force it is
// refused (409) while building, applying or aborting. uuid "" means
// whichever strategy of that type exists, as on the wire.
func (s *System) DeleteStrategy(now time.Time, typ StrategyType, uuid string, force bool) error {
	s.Advance(now)
	st, err := s.lookup(typ, uuid)
	if err != nil {
		return err
	}
	if !force {
		switch st.State {
		case StateBuilding:
			return errf(409, "strategy is being built, can't delete")
		case StateApplying:
			return errf(409, "strategy is being applied, can't delete")
		case StateAborting:
			return errf(409, "strategy is being aborted, can't delete")
		}
	}
	s.record(EventStrategyState, st.UUID, string(st.Type)+" deleted")
	s.strategy = nil
	return nil
}
