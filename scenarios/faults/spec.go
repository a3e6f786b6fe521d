package faults

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Schedule is one run's faults: data, printed and parsed as a spec, and
// generated from a seed by Generate.
type Schedule struct {
	// Seed drives the simulator's random choices (kwok jitter); Generate
	// draws the scenario and the faults from it too.
	Seed int64
	// Scenario names a built-in scenario (Scenarios) or "manifests".
	Scenario string
	// Faults in spec order.
	Faults []Fault
}

// Spec is the comma-separated fault list, "" for none.
func (s Schedule) Spec() string { return FormatFaults(s.Faults) }

// String is a one-line description: "seed=7 scenario=demo faults=crash@3:down=2s".
func (s Schedule) String() string {
	spec := s.Spec()
	if spec == "" {
		spec = "none"
	}
	return fmt.Sprintf("seed=%d scenario=%s faults=%s", s.Seed, s.Scenario, spec)
}

// Command is the one command that replays the schedule; extra flags (such
// as --manifests DIR for scenario "manifests") come first.
func (s Schedule) Command(extra ...string) string {
	args := strings.Join(append(extra, fmt.Sprintf("--seed %d", s.Seed)), " ")
	if s.Scenario != "" && s.Scenario != "manifests" {
		args += " --scenario " + s.Scenario
	}
	spec := s.Spec()
	if spec == "" {
		spec = "none"
	}
	return fmt.Sprintf("make simulate ARGS=\"%s --faults %s\"", args, spec)
}

// FormatFaults joins faults as a spec.
func FormatFaults(fs []Fault) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, ",")
}

// ParseFaults parses a spec: comma-separated faults, each
// name[@when][:param=value]...; when is an API call number (conflict@3)
// or a virtual duration since the upgrades were created (node-lost@12.5s);
// "" or "none" is no fault. Parameters left out take the catalog default.
// Errors name the fault and say what is allowed.
func ParseFaults(spec string) ([]Fault, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "none" {
		return nil, nil
	}
	var out []Fault
	for _, item := range strings.Split(spec, ",") {
		f, err := parseFault(strings.TrimSpace(item))
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func parseFault(item string) (Fault, error) {
	parts := strings.Split(item, ":")
	head := parts[0]
	name, when, hasWhen := strings.Cut(head, "@")
	spec, ok := Lookup(Kind(name))
	if !ok {
		return Fault{}, fmt.Errorf("fault %q: unknown kind %q (known: %s)", item, name, strings.Join(Kinds(), ", "))
	}
	f := Fault{Kind: spec.Kind, Args: map[string]string{}}
	if err := f.parseWhen(spec, when, hasWhen); err != nil {
		return Fault{}, fmt.Errorf("fault %q: %w", item, err)
	}
	for _, p := range spec.Params {
		f.Args[p.Name] = p.Default
	}
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !hasParam(spec, k) {
			return Fault{}, fmt.Errorf("fault %q: unknown parameter %q (%s takes %s)", item, kv, name, paramNames(spec))
		}
		f.Args[k] = v
	}
	if err := validate(f); err != nil {
		return Fault{}, fmt.Errorf("fault %q: %w", item, err)
	}
	return f, nil
}

func (f *Fault) parseWhen(spec Spec, when string, hasWhen bool) error {
	switch {
	case spec.Trigger == AtSetup && hasWhen:
		return fmt.Errorf("%s applies before the run and takes no @", spec.Kind)
	case spec.Trigger == AtSetup:
		return nil
	case !hasWhen:
		return fmt.Errorf("%s needs @<when>: %s", spec.Kind, whenHelp(spec))
	}
	if n, err := strconv.Atoi(when); err == nil {
		if spec.Trigger == AtTime || n < 1 {
			return fmt.Errorf("@%s: %s", when, whenHelp(spec))
		}
		f.Call = n
		return nil
	}
	d, err := time.ParseDuration(when)
	if err != nil || d < 0 || spec.Trigger == AtCall {
		return fmt.Errorf("@%s: %s", when, whenHelp(spec))
	}
	f.At = d
	return nil
}

func whenHelp(spec Spec) string {
	switch spec.Trigger {
	case AtCall:
		return "an API call number from 1, e.g. " + string(spec.Kind) + "@3"
	case AtTime:
		return "a virtual time since the upgrades were created, e.g. " + string(spec.Kind) + "@12.5s"
	}
	return "an API call number from 1 (" + string(spec.Kind) + "@3) or a virtual time (" + string(spec.Kind) + "@12.5s)"
}

func hasParam(spec Spec, name string) bool {
	for _, p := range spec.Params {
		if p.Name == name {
			return true
		}
	}
	return false
}

func paramNames(spec Spec) string {
	if len(spec.Params) == 0 {
		return "no parameters"
	}
	names := make([]string, len(spec.Params))
	for i, p := range spec.Params {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// validate checks each parameter's value.
func validate(f Fault) error {
	for name, v := range f.Args {
		var err error
		switch name {
		case "n", "replicas", "events":
			var n int
			n, err = strconv.Atoi(v)
			if err == nil && (n < 0 || (name == "n" && n < 1)) {
				err = fmt.Errorf("out of range")
			}
		case "for", "every":
			// a window or an interval of no length does nothing (for) or
			// never ends (every): refused
			var d time.Duration
			d, err = time.ParseDuration(v)
			if err == nil && d <= 0 {
				err = fmt.Errorf("want a positive duration, e.g. 30s")
			}
		case "lag":
			// no lag is no fault, unless stale lags by events instead
			var d time.Duration
			d, err = time.ParseDuration(v)
			if n, _ := strconv.Atoi(f.Args["events"]); err == nil && d <= 0 && n <= 0 {
				err = fmt.Errorf("want a positive duration, e.g. 5s (or events=N for stale)")
			}
		case "down", "ready", "exit", "recreate", "gap":
			var d time.Duration
			d, err = time.ParseDuration(v)
			if err == nil && d < 0 {
				err = fmt.Errorf("negative")
			}
		case "dep":
			err = validDep(f.Kind, v)
		case "kind":
			err = oneOf(v, "all", "upgrades", "deployments", "replicasets", "pods", "statefulsets", "daemonsets", "controllerrevisions")
		case "field":
			err = oneOf(v, "labels", "annotations", "replicas", "restart")
		case "per":
			err = oneOf(v, "call", "target")
		case "p":
			var p float64
			p, err = strconv.ParseFloat(v, 64)
			if err == nil && (p < 0 || p > 100) {
				err = fmt.Errorf("want a percentage from 0 to 100")
			}
		case "node":
			if v == "" {
				err = fmt.Errorf("empty")
			}
		}
		if err != nil {
			return fmt.Errorf("parameter %s=%q: %w", name, v, err)
		}
	}
	return nil
}

// validDep checks a dep parameter's syntax: a component name (a DNS-1123
// label, as the CRD requires of a component's name), or for respec "both"
// or "all". Whether a run's upgrades have that component, and whether the
// fault means anything for its workload's kind, is RefuseTargets' job.
func validDep(k Kind, v string) error {
	if k == Respec && everyComponent(v) {
		return nil
	}
	if len(validation.IsDNS1123Label(v)) == 0 {
		return nil
	}
	if k == Respec {
		return fmt.Errorf("want a component's name (worker, api, or a graph's component such as db), or both or all for every component")
	}
	return fmt.Errorf("want a component's name (worker, api, or a graph's component such as db)")
}

func oneOf(v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("want one of %s", strings.Join(allowed, ", "))
}
