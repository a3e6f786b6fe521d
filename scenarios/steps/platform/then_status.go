package platform

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/cucumber/godog"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
)

func registerStatusChecks(sc *godog.ScenarioContext, w *world) {
	sc.Then(`^within (\d+) hours? the status is "([^"]*)" with a reason containing "([^"]*)"$`, func(h int, status, reason string) error {
		if _, err := w.upgrade(); err != nil {
			return err
		}
		return w.runUntil(fmt.Sprintf("status %q with a reason containing %q", status, reason), time.Duration(h)*time.Hour, func() bool {
			u, err := w.env.Upgrade()
			return err == nil && u.Status.ObservedGeneration == u.Generation && statusIs(u, status, reason)
		})
	})
	sc.Then(`^the status is "([^"]*)" with a reason containing "([^"]*)"$`, func(status, reason string) error {
		u, err := w.settle()
		if err != nil {
			return err
		}
		if !statusIs(u, status, reason) {
			return fmt.Errorf("status.activeDeploy is %q (%q), want %q with a reason containing %q", u.Status.ActiveDeploy.Status, u.Status.ActiveDeploy.StatusReason, status, reason)
		}
		return nil
	})
	sc.Then(`^the status was never (.+)$`, func(list string) error {
		bad := map[string]bool{}
		for _, s := range quoted(list) {
			bad[s] = true
		}
		for _, st := range w.env.History() {
			if bad[string(st.ActiveDeploy.Status)] {
				return fmt.Errorf("the status was %q (%s)", st.ActiveDeploy.Status, st.ActiveDeploy.StatusReason)
			}
		}
		return nil
	})
	registerConditionChecks(sc, w)
	registerStatusShapes(sc, w)
}

func registerConditionChecks(sc *godog.ScenarioContext, w *world) {
	sc.Then(`^the condition (Ready|Progressing|Stalled) is (True|False|Unknown)$`, func(typ, want string) error {
		u, err := w.settle()
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(u.Status.Conditions, typ)
		if c == nil || string(c.Status) != want {
			return fmt.Errorf("condition %s is %v, want %s\n%s", typ, c, want, w.describe())
		}
		return nil
	})
	sc.Then(`^the condition (Ready|Progressing|Stalled) was never (True|False|Unknown)$`, func(typ, bad string) error {
		for _, st := range w.env.History() {
			if c := meta.FindStatusCondition(st.Conditions, typ); c != nil && string(c.Status) == bad {
				return fmt.Errorf("condition %s was %s: %s: %s", typ, bad, c.Reason, c.Message)
			}
		}
		return nil
	})
	sc.Then(`^the condition Ready was Unknown with reason "([^"]*)" during the outage$`, func(reason string) error {
		for _, st := range w.env.History() {
			c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady)
			if c != nil && c.Status == "Unknown" && c.Reason == reason && !c.LastTransitionTime.Time.Before(w.outageFrom.Truncate(time.Second)) &&
				c.LastTransitionTime.Time.Before(w.outageTo.Add(time.Second)) {
				return nil
			}
		}
		return fmt.Errorf("condition Ready never became Unknown (%s) between %s and %s", reason, w.outageFrom, w.outageTo)
	})
}

func registerStatusShapes(sc *godog.ScenarioContext, w *world) {
	sc.Then(`^the system Upgrade has spec.release "([^"]*)"$`, func(want string) error {
		u, err := w.upgrade()
		if err != nil {
			return err
		}
		if got := u.Spec.Release.Platform + " / " + u.Spec.Release.Kubernetes; got != want {
			return fmt.Errorf("spec.release is %q, want %q", got, want)
		}
		return nil
	})
	sc.Then(`^the status shows release "([^"]*)", system mode "([^"]*)", (\d+) uploaded product releases and (\d+) Kubernetes versions$`,
		func(rel, mode string, nProducts, nKubes int) error {
			u, err := w.settle()
			if err != nil {
				return err
			}
			st := u.Status
			got := fmt.Sprintf("%s, %s, %d, %d", st.Release, st.SystemMode, len(st.UploadedProductReleases), len(st.UploadedK8sVersions))
			if want := fmt.Sprintf("%s, %s, %d, %d", rel, mode, nProducts, nKubes); got != want {
				return fmt.Errorf("status shows %s, want %s", got, want)
			}
			return nil
		})
	sc.Then(`^the status shows "([^"]*)" from "([^"]*)" to "([^"]*)", deploying "([^"]*)"$`, func(status, from, to, deploying string) error {
		u, err := w.upgrade()
		if err != nil {
			return err
		}
		ad := u.Status.ActiveDeploy
		got := fmt.Sprintf("%s from %q to %q, deploying %q", ad.Status, ad.DeployFromRelease, ad.DeployToRelease, ad.ReleaseDeploying)
		if want := fmt.Sprintf("%s from %q to %q, deploying %q", status, from, to, deploying); got != want {
			return fmt.Errorf("status shows %s, want %s", got, want)
		}
		return nil
	})
	sc.Then(`^status.activeDeploy.(releaseDeployingStatus|timeDuration) looks like "([^"]*)"$`, func(field, pattern string) error {
		u, err := w.upgrade()
		if err != nil {
			return err
		}
		got := u.Status.ActiveDeploy.ReleaseDeployingStatus
		if field == "timeDuration" {
			got = u.Status.ActiveDeploy.TimeDuration
		}
		if !likeRegexp(pattern).MatchString(got) {
			return fmt.Errorf("status.activeDeploy.%s is %q, want it like %q", field, got, pattern)
		}
		return nil
	})
}

// likeRegexp turns a "looks like" pattern into a regexp: N is a number,
// … anything, mm / ss / h two or one digits.
func likeRegexp(p string) *regexp.Regexp {
	q := regexp.QuoteMeta(p)
	r := strings.NewReplacer("N", `\d+`, "…", `.+`, "mm", `\d\d`, "ss", `\d\d`, "h", `\d+`).Replace(q)
	return regexp.MustCompile("^" + r + "$")
}

func statusIs(u *v1alpha1.Upgrade, status, reason string) bool {
	ad := u.Status.ActiveDeploy
	return string(ad.Status) == status && strings.Contains(ad.StatusReason, reason)
}
