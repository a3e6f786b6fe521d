package app

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/cucumber/godog"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/scenarios/cluster"
)

// kill is one SIGKILL of the operator during a scenario.
type kill struct {
	n int
	// after is the random wait before it: from the worker image's write
	// (the first) or from the previous kill's restart.
	after time.Duration
	// phase is the upgrade's phase, read just before the kill.
	phase string
}

func (s *scenario) registerKills(sc *godog.ScenarioContext) {
	sc.Step(`^the operator is killed with SIGKILL (\d+) times during the worker rollout$`, s.killDuringWorkerRollout)
	sc.Step(`^every kill came during the worker rollout$`, s.killsDuringWorkerRollout)
}

// killDuringWorkerRollout waits until the operator has written the worker
// image, then n times waits a random moment (the first within a second,
// the others 0.3 to 2.5 s after the previous restart; drawn from the
// scenario's seed), kills the operator (SIGKILL of the process on a real
// cluster, cluster.Killer) and starts a new one at once.
func (s *scenario) killDuringWorkerRollout(ctx context.Context, n int) error {
	k, ok := s.cl.(cluster.Killer)
	if !ok {
		return fmt.Errorf("the %s backend cannot kill the operator: %w", s.cfg.Backend.Name(), cluster.ErrUnsupported)
	}
	name, err := s.upgradeName("")
	if err != nil {
		return err
	}
	if err := s.workerWritten(ctx, s.upgrades[name].workerImage); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(s.seed), uint64(s.seed)^0x9e3779b97f4a7c15))
	for i := 1; i <= n; i++ {
		after := time.Duration(rng.Int64N(int64(time.Second)))
		if i > 1 {
			after = 300*time.Millisecond + time.Duration(rng.Int64N(int64(2200*time.Millisecond)))
		}
		// The random moment itself, not a synchronisation: the operator
		// runs (and must not exit) until then.
		if err := s.cl.Consistently(ctx, "the operator runs until kill "+fmt.Sprint(i), after, func(context.Context) (bool, error) { return true, nil }); err != nil {
			return s.killErr(err)
		}
		st, err := s.readStatus(ctx, name)
		if err != nil {
			return s.killErr(err)
		}
		s.kills = append(s.kills, kill{n: i, after: after, phase: st.phase})
		if err := k.KillOperator(ctx); err != nil {
			return s.killErr(fmt.Errorf("kill %d: %w", i, err))
		}
	}
	return nil
}

// killErr names the seed the kill moments were drawn from.
func (s *scenario) killErr(err error) error {
	return fmt.Errorf("%w (kill moments from scenario seed %d: %s)", err, s.seed, s.describeKills())
}

func (s *scenario) describeKills() string {
	parts := make([]string, len(s.kills))
	for i, k := range s.kills {
		parts[i] = fmt.Sprintf("kill %d after %s in %s", k.n, k.after.Round(time.Millisecond), k.phase)
	}
	return strings.Join(parts, ", ")
}

// workerWritten waits until the worker Deployment's template carries image.
func (s *scenario) workerWritten(ctx context.Context, image string) error {
	key := types.NamespacedName{Namespace: s.cl.Namespace(), Name: s.role(roleWorker).name}
	return s.cl.Eventually(ctx, "the worker image "+image+" written", time.Minute, func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := s.cl.Client().Get(ctx, key, &d); err != nil {
			return false, err
		}
		return slices.ContainsFunc(d.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Image == image }), nil
	})
}

// killsDuringWorkerRollout: every kill found the upgrade rolling the worker
// out (UpgradingWorkers or WaitingForWorkers).
func (s *scenario) killsDuringWorkerRollout() error {
	if len(s.kills) == 0 {
		return fmt.Errorf("the operator was never killed")
	}
	for _, k := range s.kills {
		if k.phase != string(upgradesv1alpha1.PhaseUpgradingWorkers) && k.phase != string(upgradesv1alpha1.PhaseWaitingForWorkers) {
			return s.killErr(fmt.Errorf("kill %d came in phase %q, not during the worker rollout", k.n, k.phase))
		}
	}
	return nil
}
