package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/lunadas/upgrade-operator/scenarios/cluster"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
	"github.com/lunadas/upgrade-operator/scenarios/real/realnode"
)

// RealNodeExitsCheck is the name of the check below in Outcome.Checks.
const RealNodeExitsCheck = "real-node exits"

// onRealNode: the scenario's pods ran as real containers (Config.RealNode,
// the real backend, tagged RealNodeTag).
func (s *scenario) onRealNode() bool {
	return s.cfg.RealNode && s.cfg.Backend.Name() == cluster.BackendReal && slices.Contains(s.tags, RealNodeTag)
}

// checkRealNodeExits is the ordering claim on real containers: when a
// real-node scenario wrote the API's image, every old worker pod's
// container had exited before (containerd's exit time, recorded as
// eventlog.Event.Exited by the kubelet's last status: whole seconds), and
// each deleted old worker pod carries such a time (realnode.CheckExits);
// when its containers ignore SIGTERM (C01, C02), each ran until its grace
// period ended, the kubelet's SIGKILL (realnode.CheckGraceKills).
// It returns nil elsewhere, and when the API image was never changed (a
// failed upgrade: no handoff to check). The figures go to log.
func (s *scenario) checkRealNodeExits(h judge.History, log io.Writer) error {
	worker, api := s.roles[roleWorker], s.roles[roleAPI]
	if !s.onRealNode() || worker == nil || api == nil {
		return nil
	}
	events := h.Events()
	if !apiImageChanged(events, s.cl.Namespace(), api.name) {
		return nil
	}
	rep, err := realnode.CheckExits(events, s.cl.Namespace(), worker.name, api.name)
	if err != nil {
		return fmt.Errorf("%s: %w", RealNodeExitsCheck, err)
	}
	fmt.Fprintf(log, "real node %q: %d old worker pods; last old worker container exited at %.1fs, API image written at %.3fs (%.1fs later)\n",
		s.name, rep.OldPods, rep.LastOldExit, rep.APIWrite, rep.APIWrite-rep.LastOldExit)
	grace, ignores, err := s.ignoresSIGTERM(worker)
	if err != nil || !ignores {
		return err
	}
	held, err := realnode.CheckGraceKills(events, s.cl.Namespace(), worker.name, grace)
	if err != nil {
		return fmt.Errorf("%s: %w", RealNodeExitsCheck, err)
	}
	fmt.Fprintf(log, "real node %q: old worker containers ignore SIGTERM; SIGKILLed %s s after their deletion (grace period %s)\n", s.name, seconds(held), grace)
	return nil
}

// ignoresSIGTERM: the role's pods on the real node ignore SIGTERM
// (realnode.AdaptPodTemplate: a drain as long as the grace period), and
// that grace period.
func (s *scenario) ignoresSIGTERM(spec *deploymentSpec) (time.Duration, bool, error) {
	obj, err := s.deploymentObject(context.Background(), spec) // on the real node: no real kubelets to prepare
	if err != nil {
		return 0, false, err
	}
	grace := time.Duration(corev1.DefaultTerminationGracePeriodSeconds) * time.Second
	if g := obj.Spec.Template.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	for _, c := range obj.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == "IGNORE_SIGTERM" && e.Value == "1" {
				return grace, true, nil
			}
		}
	}
	return grace, false, nil
}

func seconds(vs []float64) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprintf("%.1f", v)
	}
	return strings.Join(out, ", ")
}

// apiImageChanged: the log has a DeploymentWrite of api after its creation.
func apiImageChanged(events []eventlog.Event, namespace, api string) bool {
	writes := 0
	for _, e := range events {
		if e.Namespace == namespace && e.Event == eventlog.DeploymentWrite && e.Deployment == api {
			writes++
		}
	}
	return writes > 1
}

// exitsLog is where checkRealNodeExits prints its figures: stderr, except
// in mutation runs (their failures are the point).
func (s *scenario) exitsLog() io.Writer {
	if s.cfg.ExpectFailures {
		return io.Discard
	}
	return os.Stderr
}
