package starlingx

import "fmt"

// Error is a refusal the real service answers with an HTTP status and a
// reason; fakevim turns it into {"faultstring": Reason} with status Code.
// Codes used: 400 (bad request), 404 (no such strategy / release),
// 409 (strategy exists, or delete while busy), 500 (the VIM refused an
// apply; the real REST layer answers 500 for it, see
// nfv-vim api/controllers/v1/orchestration/sw_update/_sw_update_strategy.py).
type Error struct {
	Code   int
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Reason) }

func errf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Reason: fmt.Sprintf(format, args...)}
}

// ReasonStrategyDoesNotExist is the VIM's reason when an action names a
// strategy uuid other than the current one (nfv-vim objects/_sw_update.py).
const ReasonStrategyDoesNotExist = "strategy does not exist"
