//go:build e2e

package platforme2e

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/lunadas/upgrade-operator/fakevim"
	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// TestPlatformE2E starts one local control plane and runs the platform
// scenarios on it, each on a fresh fakevim system.
func TestPlatformE2E(t *testing.T) {
	began := time.Now()
	h := newHarness(t)
	t.Run("Bootstrap", func(t *testing.T) { h.t = t; testBootstrap(t, h) })
	t.Run("HostileUpgrades", func(t *testing.T) { h.t = t; testHostile(t, h) })
	t.Run("PlanPatchK8sMajorWithRestarts", func(t *testing.T) { h.t = t; testPlan(t, h) })
	t.Run("SeedUsageExamples", func(t *testing.T) { h.t = t; testUsage(t, h) })
	t.Run("SeedAbortExample", func(t *testing.T) { h.t = t; testAbort(t, h) })
	t.Logf("platform e2e took %s", time.Since(began).Round(time.Millisecond))
}

// testBootstrap: the operator creates `system` from the live system; the
// webhook refuses its deletion and other names (the seed's Testing section).
func testBootstrap(t *testing.T, h *harness) {
	h.fresh(starlingx.Duplex, 60)
	u, err := h.system()
	require.NoError(t, err)
	assert.Equal(t, v1alpha1.ReleaseSpec{Platform: "starlingx-13.01.0", Kubernetes: "v1.33.0"}, u.Spec.Release)
	assert.Equal(t, "starlingx-13.01.0 / v1.33.0", u.Status.Release)
	assert.Equal(t, v1alpha1.SystemModeDuplex, u.Status.SystemMode)
	assert.Len(t, u.Status.UploadedProductReleases, 5)
	assert.True(t, meta.IsStatusConditionTrue(u.Status.Conditions, v1alpha1.ConditionReady))

	err = h.c.Delete(t.Context(), u)
	require.Error(t, err)
	assert.True(t, apierrors.IsForbidden(err))
	assert.Contains(t, err.Error(), "The 'system' Upgrade CR cannot be deleted.")
	err = h.mergePatch(`{"spec":{"release":{"platform":"starlingx-99.99.0"}}}`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Product release 'starlingx-99.99.0' is not uploaded")
}

// testPlan runs patch → k8s → major (→ k8s) to completion on a simplex
// system at 400× speed, restarting the operator twice during steps, and
// reads the printer columns while it runs.
func testPlan(t *testing.T, h *harness) {
	h.fresh(starlingx.Simplex, 400)
	began := time.Now()
	table, err := watchTableRows(t.Context(), h.cfg)
	require.NoError(t, err)
	require.NoError(t, h.mergePatch(`{"spec":{"release":{"platform":"starlingx-27.03.0","kubernetes":"v1.35.0"}}}`))
	deploying := func(rel string, states ...string) func() (bool, error) {
		return func() (bool, error) {
			u, err := h.system()
			if err != nil || u.Status.ActiveDeploy.ReleaseDeploying != rel {
				return false, nil
			}
			st, _ := h.fakeState()["strategy"].(map[string]any)
			return st != nil && contains(states, fmt.Sprint(st["state"])), nil
		}
	}
	h.waitFor("step 2 kube-upgrade(v1.34.1) to apply", time.Minute, deploying("k8s-v1.34.1", "applying"))
	t.Log("restarting the operator while step 2 applies")
	h.restartOperator()
	h.waitFor("step 4 kube-upgrade(v1.35.0) to have its strategy", time.Minute, deploying("k8s-v1.35.0", "building", "ready-to-apply", "applying"))
	t.Log("restarting the operator during step 4")
	h.restartOperator()
	h.waitFor("the deployment to complete", time.Minute, func() (bool, error) {
		u, err := h.system()
		return err == nil && u.Status.ActiveDeploy.Status == v1alpha1.DeployStatusNone &&
			meta.IsStatusConditionTrue(u.Status.Conditions, v1alpha1.ConditionReady) && u.Status.Release == "starlingx-27.03.0 / v1.35.0", nil
	})
	took := time.Since(began)
	t.Logf("patch → k8s → major → k8s took %s", took.Round(time.Millisecond))
	assert.Less(t, took, time.Minute, "well under a minute")

	u, err := h.system()
	require.NoError(t, err)
	var plan []string
	for _, s := range u.Status.DeployPlan.DeploySteps {
		plan = append(plan, fmt.Sprintf("%s(%s)", s.Type, s.Target))
	}
	assert.Equal(t, []string{"sw-deploy(starlingx-13.01.2)", "kube-upgrade(v1.34.1)", "sw-deploy(starlingx-27.03.0)", "kube-upgrade(v1.35.0)"}, plan)
	assert.Equal(t, map[string]int{"sw-upgrade": 2, "kube-upgrade": 2}, h.strategyCreates(),
		"fakevim's request log: one strategy per step, none created twice across the two restarts")
	assert.Equal(t, "starlingx-27.03.0", h.fakeState()["deployedRelease"])
	assert.Equal(t, "v1.35.0", h.fakeState()["activeKubeVersion"])
	assert.Nil(t, h.fakeState()["strategy"], "the last strategy is deleted")
	assert.Equal(t, []string{"DeployStarted", "DeployStepCompleted", "DeployStepCompleted", "DeployStepCompleted", "DeployCompleted"},
		eventsWhen(t, h, "Deploy", func(r []string) bool { return len(r) >= 5 }))

	// Closing figures: the requests the operator sent per strategy step
	// (each step starts with its strategy create), by service.
	perStep := requestsPerStep(h.fake.Requests())
	require.Len(t, perStep, 4, "one strategy create per step")
	for i, counts := range perStep {
		t.Logf("requests during step %d %s: %v", i+1, plan[i], counts)
		assert.Less(t, counts["total"], 1000, "step %s: requests stay bounded", plan[i])
	}

	h.waitFor("the table watch to show the completed row", 30*time.Second, func() (bool, error) {
		r := table.last()
		return r != nil && r["STATUS"] == "None" && r["RELEASE"] == "starlingx-27.03.0 / v1.35.0", nil
	})
	names, rows, err := table.stop()
	require.NoError(t, err)
	checkColumns(t, names, rows)
}

// checkColumns: `kubectl get upgrade` shows the seed's columns, and the
// rows read during the deployment carry live values.
func checkColumns(t *testing.T, names []string, rows []row) {
	assert.Equal(t, []string{"NAME", "RELEASE", "STATUS", "DURATION", "DEPLOY-FROM", "DEPLOY-TO"}, names)
	progress := regexp.MustCompile(`^(build|apply)\(\d+%\)/stg:\(\d+/\d+\) \S`)
	duration := regexp.MustCompile(`^(\d+:)?\d\d:\d\d$`)
	deployingRel := map[string]bool{}
	var statuses, durations []string
	for _, r := range rows {
		if r["STATUS"] != "Deploying" {
			continue
		}
		assert.Equal(t, "starlingx-13.01.0 / v1.33.0", r["DEPLOY-FROM"])
		assert.Equal(t, "starlingx-27.03.0 / v1.35.0", r["DEPLOY-TO"])
		assert.Regexp(t, duration, r["DURATION"])
		deployingRel[r["DEPLOYING-REL"]] = true
		if progress.MatchString(r["DEPLOYING-REL-STATUS"]) {
			statuses = append(statuses, r["DEPLOYING-REL-STATUS"])
		}
		durations = append(durations, r["DURATION"])
	}
	t.Logf("%d distinct rows while deploying; e.g. %v", len(durations), sample(rows))
	for _, rel := range []string{"starlingx-13.01.2", "k8s-v1.34.1", "starlingx-27.03.0", "k8s-v1.35.0"} {
		assert.True(t, deployingRel[rel], "DEPLOYING-REL showed %s (saw %v)", rel, deployingRel)
	}
	assert.GreaterOrEqual(t, len(distinct(statuses)), 4, "DEPLOYING-REL-STATUS moved: %v", distinct(statuses))
	assert.GreaterOrEqual(t, len(distinct(durations)), 3, "DURATION moved: %v", distinct(durations))
	last := rows[len(rows)-1]
	assert.Equal(t, "None", last["STATUS"])
	assert.Equal(t, "starlingx-27.03.0 / v1.35.0", last["RELEASE"])
}

// testUsage applies the seed's usage examples in turn on a duplex system:
// patch, k8s, both, a dry run of the major release, then the major release
// (the swact to controller-0 goes over sysinv's PATCH /v1/ihosts).
func testUsage(t *testing.T, h *harness) {
	h.fresh(starlingx.Duplex, 900)
	steps := []struct{ patch, runs string }{
		{`{"spec":{"release":{"platform":"starlingx-13.01.1"}}}`, "starlingx-13.01.1 / v1.33.0"},
		{`{"spec":{"release":{"kubernetes":"v1.34.1"}}}`, "starlingx-13.01.1 / v1.34.1"},
		{`{"spec":{"release":{"platform":"starlingx-13.01.2","kubernetes":"v1.34.1"}}}`, "starlingx-13.01.2 / v1.34.1"},
	}
	for _, s := range steps {
		require.NoError(t, h.mergePatch(s.patch))
		h.waitUntilRuns(s.runs)
	}
	require.NoError(t, h.mergePatch(`{"spec":{"release":{"platform":"starlingx-27.03.0"},"deployPolicy":{"dryRun":true}}}`))
	h.waitFor("the dry-run plan", 30*time.Second, func() (bool, error) {
		u, err := h.system()
		return err == nil && u.Status.ObservedGeneration == u.Generation && u.Status.DeployPlan.DryRun, nil
	})
	polls := h.observations()
	h.waitFor("the operator to observe the system twice more under the dry run", 30*time.Second, func() (bool, error) {
		return h.observations() >= polls+2, nil
	})
	u, err := h.system()
	require.NoError(t, err)
	assert.Equal(t, "OK", u.Status.DeployPlan.ValidationResult)
	assert.Equal(t, "starlingx-27.03.0 / v1.34.1", u.Status.DeployPlan.ToRelease)
	require.Len(t, u.Status.DeployPlan.DeploySteps, 1)
	assert.Equal(t, "starlingx-27.03.0", u.Status.DeployPlan.DeploySteps[0].Target)
	creates := h.strategyCreates()
	assert.Equal(t, map[string]int{"sw-upgrade": 2, "kube-upgrade": 1}, creates)
	assert.NotEqual(t, v1alpha1.DeployStatusDeploying, u.Status.ActiveDeploy.Status, "a dry run does not deploy")

	require.NoError(t, h.mergePatch(`{"spec":{"deployPolicy":{"dryRun":false}}}`))
	require.NoError(t, h.mergePatch(`{"spec":{"release":{"platform":"starlingx-27.03.0"}}}`))
	h.waitUntilRuns("starlingx-27.03.0 / v1.34.1")
	assert.Equal(t, map[string]int{"sw-upgrade": 3, "kube-upgrade": 1}, h.strategyCreates())
	swacts := 0
	for _, r := range h.fake.Requests() {
		if r.Service == "sysinv" && r.Method == "PATCH" {
			swacts++
		}
	}
	assert.Equal(t, 1, swacts, "one swact to controller-0 before the major release")
	assert.Equal(t, "controller-0", fmt.Sprint(h.fakeState()["activeController"]) /* the major's own stages end on controller-0 */)
	assert.Contains(t, eventsWhen(t, h, "Swact", func(r []string) bool { return contains(r, "SwactInitiated") }), "SwactInitiated")
}

// testAbort: the seed's abort example while the first step of a
// deployment from starlingx-13.01.0 / v1.33.0 applies.
func testAbort(t *testing.T, h *harness) {
	h.fresh(starlingx.Simplex, 120)
	require.NoError(t, h.mergePatch(`{"spec":{"release":{"platform":"starlingx-13.01.2","kubernetes":"v1.34.1"}}}`))
	h.waitFor("step 1 to apply", 30*time.Second, func() (bool, error) {
		st, _ := h.fakeState()["strategy"].(map[string]any)
		return st != nil && fmt.Sprint(st["state"]) == "applying", nil
	})
	err := h.mergePatch(`{"spec":{"release":{"platform":"starlingx-13.01.1"}}}`)
	require.Error(t, err, "only an abort may change spec.release while deploying")
	assert.Contains(t, err.Error(), "except back to 'starlingx-13.01.0 / v1.33.0'")
	require.NoError(t, h.mergePatch(`{"spec":{"release":{"platform":"starlingx-13.01.0","kubernetes":"v1.33.0"}}}`))
	h.waitFor("the abort to finish", 30*time.Second, func() (bool, error) {
		u, err := h.system()
		return err == nil && u.Status.ActiveDeploy.Status != v1alpha1.DeployStatusDeploying && u.Status.ObservedGeneration == u.Generation, nil
	})
	u, err := h.system()
	require.NoError(t, err)
	assert.Equal(t, v1alpha1.DeployStatusNone, u.Status.ActiveDeploy.Status, u.Status.ActiveDeploy.StatusReason)
	assert.Contains(t, u.Status.ActiveDeploy.StatusReason, "aborted")
	assert.Nil(t, h.fakeState()["strategy"])
	assert.Empty(t, h.fakeState()["deploys"], "the USM deploy the step started was rolled back and deleted")
	assert.Equal(t, "starlingx-13.01.0", h.fakeState()["deployedRelease"])
	assert.Equal(t, map[string]int{"sw-upgrade": 2}, h.strategyCreates(), "the step's strategy, then the rollback strategy")
	actions := 0
	for _, r := range h.fake.Requests() {
		if r.Action == "abort" {
			actions++
		}
	}
	assert.Equal(t, 1, actions, "one abort action")
	reasons := eventsWhen(t, h, "Deploy", func(r []string) bool { return contains(r, "DeployAborted") && contains(r, "DeployRollback") })
	assert.Contains(t, reasons, "DeployAborted")
	assert.Contains(t, reasons, "DeployRollback")
}

func (h *harness) waitUntilRuns(composite string) {
	h.waitFor("the system to run "+composite, time.Minute, func() (bool, error) {
		u, err := h.system()
		return err == nil && u.Status.ObservedGeneration == u.Generation && u.Status.ActiveDeploy.Status == v1alpha1.DeployStatusNone &&
			u.Status.Release == composite, nil
	})
}

// eventReasons lists the reasons (with the prefix) of the events regarding
// the system Upgrade since the current fakevim system started, oldest first.
// eventsWhen returns the reasons of system's events starting with prefix,
// in time order, once done holds for them (at most 30 s: the manager's
// event broadcaster writes events asynchronously, after the status write
// the test waited for); the caller asserts on what it gets.
func eventsWhen(t *testing.T, h *harness, prefix string, done func([]string) bool) []string {
	t.Helper()
	var reasons []string
	_ = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		reasons = eventReasons(t, h, prefix)
		return done(reasons), nil
	})
	return reasons
}

func eventReasons(t *testing.T, h *harness, prefix string) []string {
	var list eventsv1.EventList
	require.NoError(t, h.c.List(context.Background(), &list))
	u, err := h.system()
	require.NoError(t, err)
	sort.SliceStable(list.Items, func(i, j int) bool { return eventTime(list.Items[i]).Before(eventTime(list.Items[j])) })
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "Upgrade" && e.Regarding.UID == u.UID && strings.HasPrefix(e.Reason, prefix) {
			out = append(out, e.Reason)
		}
	}
	return out
}

func eventTime(e eventsv1.Event) time.Time {
	if !e.EventTime.IsZero() {
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func distinct(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func sample(rows []row) []row {
	if len(rows) <= 3 {
		return rows
	}
	return []row{rows[1], rows[len(rows)/2], rows[len(rows)-2]}
}

// requestsPerStep splits fakevim's request log at each strategy create
// (strategyCreate)
// and counts each part's requests by service and in total; requests
// before the first create are not counted.
func requestsPerStep(log []fakevim.Request) []map[string]int {
	var out []map[string]int
	for _, r := range log {
		if _, ok := strategyCreate(r); ok {
			out = append(out, map[string]int{})
		}
		if len(out) > 0 {
			out[len(out)-1][r.Service]++
			out[len(out)-1]["total"]++
		}
	}
	return out
}
