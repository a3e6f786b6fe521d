package simulator

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected transcripts under testdata/transcripts")

// transcriptSep separates a transcript file's script from its expected output.
const transcriptSep = "----\n"

// TestTranscripts runs every script under testdata/transcripts and compares
// the rollout trace with the expected one below the "----" line. Run
// `go test ./simulator/ -run TestTranscripts -rewrite` to regenerate, then
// review the diff.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/transcripts/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts found: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			script, want, _ := strings.Cut(string(data), transcriptSep)
			got, err := runTranscript(script)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if *rewrite {
				if err := os.WriteFile(f, []byte(script+transcriptSep+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("%s: transcript differs (rerun with -rewrite and review the diff):\n%s", f, lineDiff(want, got))
			}
			for _, c := range transcriptChecks[filepath.Base(f)] {
				if err := c(got); err != nil {
					t.Errorf("%s: %v", f, err)
				}
			}
		})
	}
}

// runTranscript executes a script and returns its trace. Commands:
//
//	seed N                         seed of the simulation (default 1)
//	deployment NAME key=value...   create a Deployment in namespace default
//	settle DURATION                run quietly, then print the Deployment status
//	run DURATION                   run, tracing every step
//	set image=TAG | imageRef=REF | replicas=N | envFromConfigMap=NAME
//	                               update the Deployment
//	pause / resume                 set spec.paused
//	configmap NAME                 create a ConfigMap
//	nodes N                        simulate N nodes (before the first object)
//	statefulset NAME key=value...  create a StatefulSet (see transcriptStatefulSet)
//	daemonset NAME key=value...    create a DaemonSet (see transcriptDaemonSet)
//	delete-pod NAME                delete a pod (what OnDelete waits for)
//	delete-pod-on NODE             delete the (first, by name) live pod on a node
func runTranscript(script string) (string, error) {
	h := &transcriptHarness{seed: 1, out: &strings.Builder{}}
	for n, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := h.exec(strings.Fields(line)); err != nil {
			return h.out.String(), fmt.Errorf("line %d %q: %w", n+1, line, err)
		}
	}
	return h.out.String(), nil
}

type transcriptHarness struct {
	seed   int64
	nodes  int
	kind   string // "" (Deployment), "statefulset" or "daemonset"
	sim    *Sim
	tracer *RolloutTracer
	name   string
	out    *strings.Builder
}

func (h *transcriptHarness) ensureSim() {
	if h.sim != nil {
		return
	}
	h.sim = New(Options{Seed: h.seed})
	h.sim.InstallKubeControllers(KubeOptions{Nodes: NodeNames(h.nodes)})
	h.tracer = NewRolloutTracer(h.sim, h.out)
}

func (h *transcriptHarness) exec(f []string) error {
	ctx := context.Background()
	if handled, err := h.execWorkload(f); handled {
		return err
	}
	if f[0] != "seed" && f[0] != "deployment" {
		fmt.Fprintf(h.out, "> %s\n", strings.Join(f, " "))
	}
	switch f[0] {
	case "seed":
		v, err := strconv.ParseInt(f[1], 10, 64)
		h.seed = v
		return err
	case "deployment":
		h.ensureSim()
		h.tracer.SetEnabled(false)
		h.name = f[1]
		d, err := transcriptDeployment(f[1], kv(f[2:]))
		if err != nil {
			return err
		}
		return h.sim.Client().Create(ctx, d)
	case "settle", "run":
		dur, err := time.ParseDuration(f[1])
		if err != nil {
			return err
		}
		h.tracer.SetEnabled(f[0] == "run")
		if _, err := h.sim.RunFor(ctx, dur); err != nil {
			return err
		}
		if f[0] == "settle" && h.kind != "" {
			return h.printWorkload()
		}
		if f[0] == "settle" {
			d := &appsv1.Deployment{}
			if err := h.sim.Client().Get(ctx, client.ObjectKey{Namespace: "default", Name: h.name}, d); err != nil {
				return err
			}
			fmt.Fprintf(h.out, "%s deploy %s %s\n", FormatElapsed(h.sim.Elapsed()), h.name, DeploymentStatusLine(d))
		}
		return nil
	case "set", "pause", "resume":
		if h.kind != "" {
			return h.updateWorkload(f)
		}
		return h.update(f)
	case "configmap":
		return h.sim.Client().Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: f[1]}})
	}
	return fmt.Errorf("unknown command %q", f[0])
}

func (h *transcriptHarness) update(f []string) error {
	ctx := context.Background()
	h.tracer.SetEnabled(true)
	d := &appsv1.Deployment{}
	if err := h.sim.Client().Get(ctx, client.ObjectKey{Namespace: "default", Name: h.name}, d); err != nil {
		return err
	}
	switch f[0] {
	case "pause", "resume":
		d.Spec.Paused = f[0] == "pause"
	default:
		for k, v := range kv(f[1:]) {
			switch k {
			case "image":
				d.Spec.Template.Spec.Containers[0].Image = "registry.example/" + h.name + ":" + v
			case "imageRef":
				d.Spec.Template.Spec.Containers[0].Image = v
			case "envFromConfigMap":
				d.Spec.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: v}}}}
			case "replicas":
				n, err := strconv.Atoi(v)
				if err != nil {
					return err
				}
				d.Spec.Replicas = ptr.To(int32(n))
			default:
				return fmt.Errorf("cannot set %q", k)
			}
		}
	}
	return h.sim.Client().Update(ctx, d)
}

func kv(args []string) map[string]string {
	m := map[string]string{}
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		m[k] = v
	}
	return m
}

// transcriptDeployment builds a Deployment from key=value settings:
// replicas, strategy (RollingUpdate|Recreate), surge, unavailable (int or
// percent), image (tag), create/ready/delete and createJitter/readyJitter/
// deleteJitter (kwok stage delays and their latest values), grace
// (terminationGracePeriodSeconds), minReady, deadline (progressDeadlineSeconds).
func transcriptDeployment(name string, o map[string]string) (*appsv1.Deployment, error) {
	atoi := func(k string, def int) (int32, error) {
		if v, ok := o[k]; ok {
			n, err := strconv.Atoi(v)
			return int32(n), err
		}
		return int32(def), nil
	}
	replicas, err1 := atoi("replicas", 1)
	grace, err2 := atoi("grace", 30)
	minReady, err3 := atoi("minReady", 0)
	deadline, err4 := atoi("deadline", 600)
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			return nil, err
		}
	}
	ann := map[string]string{}
	for k, a := range map[string]string{
		"create": AnnotationPodCreateDelay, "ready": AnnotationPodReadyDelay, "delete": AnnotationPodDeleteDelay,
		"createJitter": AnnotationPodCreateJitterDelay, "readyJitter": AnnotationPodReadyJitterDelay, "deleteJitter": AnnotationPodDeleteJitterDelay,
	} {
		if v, ok := o[k]; ok {
			ann[a] = v
		}
	}
	tag := o["image"]
	if tag == "" {
		tag = "v1"
	}
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			MinReadySeconds: minReady, ProgressDeadlineSeconds: ptr.To(deadline),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: ann},
				Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To(int64(grace)),
					Containers: []corev1.Container{{Name: "app", Image: "registry.example/" + name + ":" + tag}}},
			},
		},
	}
	switch o["strategy"] {
	case "", "RollingUpdate":
		ru := &appsv1.RollingUpdateDeployment{}
		if v, ok := o["surge"]; ok {
			ru.MaxSurge = ptr.To(intstr.Parse(v))
		}
		if v, ok := o["unavailable"]; ok {
			ru.MaxUnavailable = ptr.To(intstr.Parse(v))
		}
		d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: ru}
	case "Recreate":
		d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	default:
		return nil, fmt.Errorf("unknown strategy %q", o["strategy"])
	}
	return d, nil
}

// lineDiff shows the first differing lines of two transcripts.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  want: %s\n  got:  %s", i+1, wl, gl)
		}
	}
	return "(equal)"
}

// transcriptChecks are assertions on specific transcripts, so that a
// -rewrite cannot silently lose the behaviour the file is there to show.
var transcriptChecks = map[string][]func(string) error{}
