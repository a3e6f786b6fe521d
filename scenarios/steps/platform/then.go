package platform

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cucumber/godog"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

func registerThen(sc *godog.ScenarioContext, w *world) {
	registerPlanChecks(sc, w)
	registerRunChecks(sc, w)
	registerEventChecks(sc, w)
	registerStatusChecks(sc, w)
	registerVIMChecks(sc, w)
	registerRevert(sc, w)
	registerAdmin(sc, w)
}

// settle runs until the controller has written the status for the
// current generation.
func (w *world) settle() (*v1alpha1.Upgrade, error) {
	if _, err := w.upgrade(); err != nil {
		return nil, err
	}
	if err := w.runUntil("the operator to act on the spec", time.Hour, w.env.Observed); err != nil {
		return nil, err
	}
	return w.env.Upgrade()
}

func registerPlanChecks(sc *godog.ScenarioContext, w *world) {
	sc.Then(`^the deploy plan is "([^"]*)"$`, func(want string) error {
		u, err := w.settle()
		if err != nil {
			return err
		}
		if got := planString(u.Status.DeployPlan); got != want {
			return fmt.Errorf("deploy plan %q, want %q (validationResult %q)", got, want, u.Status.DeployPlan.ValidationResult)
		}
		return nil
	})
	sc.Then(`^the deploy plan is:$`, func(t *godog.Table) error {
		var want []string
		for i, row := range t.Rows {
			if i == 0 {
				continue
			}
			want = append(want, fmt.Sprintf("%s(%s)", row.Cells[0].Value, row.Cells[1].Value))
		}
		u, err := w.settle()
		if err != nil {
			return err
		}
		if got := planString(u.Status.DeployPlan); got != strings.Join(want, " → ") {
			return fmt.Errorf("deploy plan %q, want %q", got, strings.Join(want, " → "))
		}
		return nil
	})
	sc.Then(`^step (\d+) of the deploy plan is checked "([^"]*)"$`, func(n int, want string) error {
		u, err := w.settle()
		if err != nil {
			return err
		}
		steps := u.Status.DeployPlan.DeploySteps
		if n < 1 || n > len(steps) {
			return fmt.Errorf("the deploy plan %q has no step %d", planString(u.Status.DeployPlan), n)
		}
		if !strings.Contains(steps[n-1].Check, want) {
			return fmt.Errorf("step %d %s(%s) has check %q, want it to contain %q", n, steps[n-1].Type, steps[n-1].Target, steps[n-1].Check, want)
		}
		return nil
	})
	sc.Then(`^status.deployPlan says dryRun (true|false), validationResult "([^"]*)", from "([^"]*)" to "([^"]*)"$`,
		func(dry, result, from, to string) error {
			u, err := w.settle()
			if err != nil {
				return err
			}
			p := u.Status.DeployPlan
			got := fmt.Sprintf("dryRun %t, validationResult %q, from %q to %q", p.DryRun, p.ValidationResult, p.FromRelease, p.ToRelease)
			if want := fmt.Sprintf("dryRun %s, validationResult %q, from %q to %q", dry, result, from, to); got != want {
				return fmt.Errorf("status.deployPlan says %s, want %s", got, want)
			}
			return nil
		})
}

func registerRunChecks(sc *godog.ScenarioContext, w *world) {
	sc.Then(`^the deployment completes within (\d+) hours?$`, func(h int) error {
		if _, err := w.upgrade(); err != nil {
			return err
		}
		if err := w.runUntil("the deployment to end", time.Duration(h)*time.Hour, w.env.Settled); err != nil {
			return err
		}
		u, _ := w.env.Upgrade()
		ready := meta.FindStatusCondition(u.Status.Conditions, v1alpha1.ConditionReady)
		if u.Status.ActiveDeploy.Status != v1alpha1.DeployStatusNone || ready == nil || ready.Status != "True" {
			return fmt.Errorf("the deployment ended without completing:\n%s", w.describe())
		}
		return nil
	})
	sc.Then(`^the system runs "([^"]*)"$`, func(want string) error {
		if _, err := w.upgrade(); err != nil {
			return err
		}
		if got := w.env.SystemRuns(); got != want {
			return fmt.Errorf("the system runs %q, want %q\n%s", got, want, w.describe())
		}
		u, err := w.settle()
		if err != nil {
			return err
		}
		if u.Status.Release != want {
			return fmt.Errorf("status.release is %q, the system runs %q", u.Status.Release, want)
		}
		return nil
	})
	sc.Then(`^the operator crashed (\d+) times?$`, func(n int) error {
		if got := w.env.Crashes(); got != n {
			return fmt.Errorf("the operator crashed %d time(s), want %d", got, n)
		}
		return nil
	})
	sc.Then(`^the operator saw the VIM unavailable at least (\d+) times?$`, func(n int) error {
		if got := w.env.UnavailableAnswers(); got < n {
			return fmt.Errorf("the operator saw %d unavailable answer(s), want at least %d", got, n)
		}
		return nil
	})
}

func registerEventChecks(sc *godog.ScenarioContext, w *world) {
	sc.Then(`^the (?:deployment )?events were (.+?)(?:, in that order)?$`, func(list string) error {
		want, err := parseEventList(list)
		if err != nil {
			return err
		}
		wanted := map[string]bool{}
		for _, r := range want {
			wanted[r] = true
		}
		var got []string
		for _, e := range w.env.Events() {
			if wanted[e.Reason] {
				got = append(got, e.Reason)
			}
		}
		if strings.Join(got, ", ") != strings.Join(want, ", ") {
			return fmt.Errorf("events (among %v) were\n  %s\nwant\n  %s\n%s", keys(wanted), strings.Join(got, ", "), strings.Join(want, ", "), w.describe())
		}
		return nil
	})
	sc.Then(`^an event "([^"]*)" says "([^"]*)"$`, func(reason, text string) error {
		for _, e := range w.env.Events() {
			if e.Reason == reason && strings.Contains(e.Message, text) {
				return nil
			}
		}
		return fmt.Errorf("no %s event says %q\n%s", reason, text, w.describe())
	})
	sc.Then(`^no event "([^"]*)" was emitted$`, func(reason string) error {
		for _, e := range w.env.Events() {
			if e.Reason == reason {
				return fmt.Errorf("a %s event was emitted: %s", reason, e.Message)
			}
		}
		return nil
	})
}

// parseEventList reads "DeployStarted, 3 DeployStepCompleted and
// DeployCompleted" into the expanded sequence of reasons.
func parseEventList(list string) ([]string, error) {
	var out []string
	for _, item := range strings.Split(strings.ReplaceAll(list, " and ", ", "), ",") {
		f := strings.Fields(item)
		switch len(f) {
		case 1:
			out = append(out, f[0])
		case 2:
			n, err := strconv.Atoi(f[0])
			if err != nil {
				return nil, fmt.Errorf("event list item %q: want 'N Reason' or 'Reason'", item)
			}
			for i := 0; i < n; i++ {
				out = append(out, f[1])
			}
		default:
			return nil, fmt.Errorf("event list item %q: want 'N Reason' or 'Reason'", item)
		}
	}
	return out, nil
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// quoted lists the "..." values of s.
func quoted(s string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

func deployingOf(step string) string {
	kind, target, _ := strings.Cut(strings.TrimSuffix(step, ")"), "(")
	if kind == "kube-upgrade" {
		return "k8s-" + target
	}
	return target
}

func strategyTypeOf(step string) string {
	if strings.HasPrefix(step, "kube-upgrade") {
		return string(starlingx.KubeUpgrade)
	}
	return string(starlingx.SwUpgrade)
}
