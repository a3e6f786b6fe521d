package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/lunadas/upgrade-operator/scenarios/judge"
	"github.com/lunadas/upgrade-operator/scenarios/sim/simrun"
)

// jsonResult is `-o json` of one run: the verdict, and per upgrade its
// final phase and each dependency edge's handoff.
type jsonResult struct {
	Verdict        string  `json:"verdict"` // "ok", "ordering-violation", "not-completed"
	ExitCode       int     `json:"exitCode"`
	Error          string  `json:"error,omitempty"`
	Seed           int64   `json:"seed"`
	ElapsedSeconds float64 `json:"elapsedSeconds"` // virtual
	Reconciles     int     `json:"reconciles"`
	Replay         string  `json:"replay"`
	// Judge is the one judge's first failure (judge.Judge: porcupine,
	// an invariant, an edge's ordering); omitted when it passed.
	Judge    string        `json:"judge,omitempty"`
	Upgrades []jsonUpgrade `json:"upgrades"`
}

type jsonUpgrade struct {
	Name    string     `json:"name"` // namespace/name
	Phase   string     `json:"phase"`
	Message string     `json:"message"`
	Edges   []jsonEdge `json:"edges"`
}

// jsonEdge: Dependent's image written after Dependency's last old pod was
// deleted; HandoffSeconds is that gap (virtual), null when there was no
// such pair (the dependent was never written).
type jsonEdge struct {
	Dependency     string   `json:"dependency"`
	Dependent      string   `json:"dependent"`
	HandoffSeconds *float64 `json:"handoffSeconds"`
	Violations     []string `json:"violations"`
}

var verdictNames = map[int]string{exitOK: "ok", exitViolation: "ordering-violation", exitNotComplete: "not-completed"}

// writeJSON prints res as jsonResult; verdictErr is verdict's result.
func writeJSON(w io.Writer, res *simrun.Result, o options, verdictErr error) error {
	code := exitCode(verdictErr)
	out := jsonResult{Verdict: verdictNames[code], ExitCode: code, Seed: o.seed, ElapsedSeconds: res.Elapsed.Seconds(),
		Reconciles: res.Reconciles, Replay: replay(o), Upgrades: []jsonUpgrade{}}
	if verdictErr != nil {
		out.Error = verdictErr.Error()
	}
	if j := res.Judged; j != nil && !j.OK() {
		out.Judge = j.Summary()
	}
	for _, u := range res.Upgrades {
		key := u.Namespace + "/" + u.Name
		ju := jsonUpgrade{Name: key, Phase: string(u.Status.Phase), Message: u.Status.Message, Edges: []jsonEdge{}}
		if edges, ok := res.Edges[key]; ok {
			for _, e := range edges {
				ju.Edges = append(ju.Edges, edge(e.Edge.Dependency, e.Edge.Dependent, e.Report))
			}
		} else {
			ju.Edges = append(ju.Edges, edge("worker", "api", res.Reports[key]))
		}
		out.Upgrades = append(out.Upgrades, ju)
	}
	return encodeJSON(w, out)
}

// encodeJSON writes v indented, one object.
func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

func edge(dependency, dependent string, r judge.Report) jsonEdge {
	e := jsonEdge{Dependency: dependency, Dependent: dependent, Violations: r.Violations}
	if e.Violations == nil {
		e.Violations = []string{}
	}
	if r.Handoff >= 0 {
		h := r.Handoff
		e.HandoffSeconds = &h
	}
	return e
}
