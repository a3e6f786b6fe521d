package app

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cucumber/godog"
	messages "github.com/cucumber/messages/go/v34"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// graphSpec is a v1beta1 upgrade as a graph step declared it.
type graphSpec struct {
	name       string
	components []upgradesv1beta1.Component
}

// object builds the v1beta1 ApplicationUpgrade.
func (g *graphSpec) object(namespace string) *upgradesv1beta1.ApplicationUpgrade {
	u := &upgradesv1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: g.name}}
	for _, c := range g.components {
		u.Spec.Components = append(u.Spec.Components, *c.DeepCopy())
	}
	return u
}

// component returns the component named name.
func (g *graphSpec) component(name string) (upgradesv1beta1.Component, bool) {
	for _, c := range g.components {
		if c.Name == name {
			return c, true
		}
	}
	return upgradesv1beta1.Component{}, false
}

func (s *scenario) registerGraph(sc *godog.ScenarioContext) {
	sc.Step(`^the Deployments? ((?:"[a-z0-9-]+"(?:, | and )?)+),? (?:each )?with (\d+) replicas?(.*)$`, s.namedDeployments)
	sc.Step(`^(\d+) Deployments "([a-z0-9-]+)-1" to "([a-z0-9-]+)-(\d+)", each with (\d+) replicas?(.*)$`, s.numberedDeployments)
	sc.Step(`^the (StatefulSet|DaemonSet) "([a-z0-9-]+)"(?: with (\d+) replicas?)?(.*)$`, s.workloadStep)
	sc.Step(`^the graph upgrade "([^"]+)" is applied:$`, s.applyGraphTable)
	sc.Step(`^the graph upgrade "([^"]+)" of "([^"]+)" alone is applied$`, func(ctx context.Context, name, dep string) error {
		return s.applyGraph(ctx, &graphSpec{name: name, components: []upgradesv1beta1.Component{s.componentOf(dep, TargetTag)}})
	})
	sc.Step(`^the graph upgrade "([^"]+)" of every Deployment, none depending on another, to the tag "([^"]+)" is applied$`, s.applyIndependent)
	sc.Step(`^"([^"]+)" is read as v1alpha1 and written back unchanged$`, s.alphaRoundTrip)

	sc.Step(`^the components were written in the order "([^"]+)"$`, s.writtenInOrder)
	sc.Step(`^no component's image is written while an old pod of a component it depends on exists$`, s.graphNeverEarly)
	sc.Step(`^every component(?: of "([^"]+)")? is "([^"]+)"$`, s.everyComponentIs)
	sc.Step(`^the components? ((?:"[a-z0-9-]+"(?:, | and )?)+) (?:is|are) "([^"]+)"$`, s.componentsAre)
	sc.Step(`^the component "([^"]+)" becomes "([^"]+)" within (\d+) seconds$`, s.componentBecomes)
	sc.Step(`^the status shows "([^"]+)" components rolled out$`, s.rolledOutCount)
	sc.Step(`^"([^"]+)" and "([^"]+)" were rolling out at the same time$`, s.overlapped)
	sc.Step(`^"([^"]+)" is written only after the last old pod of "([^"]+)" and of "([^"]+)" is deleted$`, s.writtenAfterBoth)
	sc.Step(`^"([^"]+)" took less than (\d+) times as long as "([^"]+)"$`, s.tookLessThan)
	sc.Step(`^the images? of ((?:"[a-z0-9-]+"(?:, | and )?)+) (?:is|are) never written$`, s.neverWritten)
	sc.Step(`^the upgrade is refused with a message containing "([^"]+)"$`, s.refusedWith)
	sc.Step(`^the upgrade "([^"]+)" does not exist$`, s.doesNotExist)
	sc.Step(`^the upgrade "([^"]+)" is refused or held with a message naming "([^"]+)" within (\d+) seconds$`, s.refusedOrHeld)
	sc.Step(`^"([^"]+)" is applied again if it was refused$`, s.reapply)
	sc.Step(`^"([^"]+)" read as v1beta1 has the components "([^"]+)" and "([^"]+)", "([^"]+)" depending on "([^"]+)"$`, s.hasTwoComponents)
	sc.Step(`^"([^"]+)" read as v1beta1 still has (\d+) components, "([^"]+)" depending on "([^"]+)"$`, s.stillHas)
}

var quoted = regexp.MustCompile(`"([^"]+)"`)

// names reads a list such as `"a", "b" and "c"`.
func names(list string) []string {
	var out []string
	for _, m := range quoted.FindAllStringSubmatch(list, -1) {
		out = append(out, m[1])
	}
	return out
}

// declare creates the Deployment name as the step's clauses say.
func (s *scenario) declare(ctx context.Context, name string, replicas int, rest string) error {
	spec, err := parseDeployment(roleComponent, name, int32(replicas), strings.TrimPrefix(strings.TrimSpace(rest), ","))
	if err != nil {
		return err
	}
	if s.named == nil {
		s.named = map[string]*deploymentSpec{}
	}
	s.named[name] = spec
	s.declared = append(s.declared, name)
	obj, err := s.deploymentObject(ctx, spec)
	if err != nil {
		return err
	}
	if err := s.cl.Client().Create(ctx, obj); err != nil {
		return fmt.Errorf("create deployment %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	return nil
}

func (s *scenario) namedDeployments(ctx context.Context, list string, replicas int, rest string) error {
	for _, n := range names(list) {
		if err := s.declare(ctx, n, replicas, rest); err != nil {
			return err
		}
	}
	return nil
}

func (s *scenario) numberedDeployments(ctx context.Context, n int, prefix, prefix2 string, last, replicas int, rest string) error {
	if prefix != prefix2 || last != n {
		return fmt.Errorf("say %d Deployments \"%s-1\" to \"%s-%d\"", n, prefix, prefix, n)
	}
	for i := 1; i <= n; i++ {
		if err := s.declare(ctx, fmt.Sprintf("%s-%d", prefix, i), replicas, rest); err != nil {
			return err
		}
	}
	return nil
}

// componentOf is the component of Deployment name (the component has the
// Deployment's name) moving it to tag.
func (s *scenario) componentOf(name, tag string) upgradesv1beta1.Component {
	c := upgradesv1beta1.Component{Name: name, DeploymentRef: upgradesv1beta1.DeploymentReference{Name: name}, Image: imageOf(name, tag)}
	if d := s.named[name]; d != nil && len(d.containers) > 0 {
		c.ContainerName = d.containers[0]
	}
	if d := s.named[name]; d != nil && d.kind != "" {
		c.DeploymentRef = upgradesv1beta1.DeploymentReference{}
		c.WorkloadRef = &upgradesv1beta1.WorkloadReference{Kind: upgradesv1beta1.WorkloadKind(d.kind), Name: name}
	}
	return c
}

// applyGraphTable applies the upgrade a table declares: columns
// "component" and "depends on" (comma-separated), optional "image" and
// "deployment".
func (s *scenario) applyGraphTable(ctx context.Context, name string, table *godog.Table) error {
	if len(table.Rows) < 2 {
		return fmt.Errorf("the table needs a header row (component | depends on) and a row per component")
	}
	col := map[string]int{}
	for i, c := range table.Rows[0].Cells {
		col[strings.TrimSpace(c.Value)] = i
	}
	if _, ok := col["component"]; !ok {
		return fmt.Errorf("the table has no \"component\" column")
	}
	cell := func(r *messages.PickleTableRow, key string) string {
		i, ok := col[key]
		if !ok || i >= len(r.Cells) {
			return ""
		}
		return strings.TrimSpace(r.Cells[i].Value)
	}
	g := &graphSpec{name: name}
	for _, row := range table.Rows[1:] {
		r := row
		cname := cell(r, "component")
		dep := cmp.Or(cell(r, "deployment"), cname)
		c := s.componentOf(dep, TargetTag)
		c.Name = cname
		if img := cell(r, "image"); img != "" {
			c.Image = img
		}
		for _, d := range strings.Split(cell(r, "depends on"), ",") {
			if d = strings.TrimSpace(d); d != "" {
				c.DependsOn = append(c.DependsOn, d)
			}
		}
		g.components = append(g.components, c)
	}
	return s.applyGraph(ctx, g)
}

func (s *scenario) applyIndependent(ctx context.Context, name, tag string) error {
	g := &graphSpec{name: name}
	for _, d := range s.declared {
		g.components = append(g.components, s.componentOf(d, tag))
	}
	return s.applyGraph(ctx, g)
}

// applyGraph creates the v1beta1 upgrade. An admission refusal (Invalid,
// Forbidden, BadRequest) is kept for a refusal step, not failed here; a
// later step about the upgrade reports it.
func (s *scenario) applyGraph(ctx context.Context, g *graphSpec) error {
	if s.graphs == nil {
		s.graphs, s.refused = map[string]*graphSpec{}, map[string]error{}
	}
	s.graphs[g.name] = g
	s.order = append(s.order, g.name)
	obj := g.object(s.cl.Namespace())
	err := s.cl.Client().Create(ctx, obj)
	switch {
	case err == nil:
		return nil
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err):
		s.refused[g.name] = err
		return nil
	}
	return fmt.Errorf("create applicationupgrade %s/%s (v1beta1): %w", obj.Namespace, g.name, err)
}

// getGraph reads upgrade name as v1beta1.
func (s *scenario) getGraph(ctx context.Context, name string) (*upgradesv1beta1.ApplicationUpgrade, error) {
	if err := s.refused[name]; err != nil {
		return nil, fmt.Errorf("upgrade %s was refused when applied: %w", name, err)
	}
	var u upgradesv1beta1.ApplicationUpgrade
	err := s.cl.Client().Get(ctx, types.NamespacedName{Namespace: s.cl.Namespace(), Name: name}, &u)
	return &u, err
}

// upgradeStatus is what the phase, message and hold steps read, in the
// API version the upgrade was applied in.
type upgradeStatus struct {
	phase, message         string
	generation, observedAt int64
}

func (s *scenario) readStatus(ctx context.Context, name string) (upgradeStatus, error) {
	if s.graphs[name] != nil {
		u, err := s.getGraph(ctx, name)
		if err != nil {
			return upgradeStatus{}, err
		}
		return upgradeStatus{string(u.Status.Phase), u.Status.Message, u.Generation, u.Status.ObservedGeneration}, nil
	}
	u, err := s.getUpgrade(ctx, name)
	if err != nil {
		return upgradeStatus{}, err
	}
	return upgradeStatus{string(u.Status.Phase), u.Status.Message, u.Generation, u.Status.ObservedGeneration}, nil
}

// alphaRoundTrip reads upgrade name as v1alpha1 and updates it unchanged,
// as an old client (kubectl edit with the v1alpha1 schema) does — and, like
// it, reads again and retries when the operator's status patch got in
// between (a Conflict).
func (s *scenario) alphaRoundTrip(ctx context.Context, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var u upgradesv1alpha1.ApplicationUpgrade
		if err := s.cl.Client().Get(ctx, types.NamespacedName{Namespace: s.cl.Namespace(), Name: name}, &u); err != nil {
			return fmt.Errorf("read applicationupgrade %s as v1alpha1: %w", name, err)
		}
		if err := s.cl.Client().Update(ctx, &u); err != nil {
			return fmt.Errorf("write applicationupgrade %s back as v1alpha1: %w", name, err)
		}
		return nil
	})
}

func dependsOn(u *upgradesv1beta1.ApplicationUpgrade, caller, callee string) error {
	for _, c := range u.Spec.Components {
		if c.Name == caller {
			if len(c.DependsOn) == 1 && c.DependsOn[0] == callee {
				return nil
			}
			return fmt.Errorf("component %s depends on %v, want [%s]", caller, c.DependsOn, callee)
		}
	}
	return fmt.Errorf("no component %s in %s", caller, componentNames(u))
}

func componentNames(u *upgradesv1beta1.ApplicationUpgrade) []string {
	var out []string
	for _, c := range u.Spec.Components {
		out = append(out, c.Name)
	}
	return out
}

func (s *scenario) hasTwoComponents(ctx context.Context, name, a, b, caller, callee string) error {
	var u upgradesv1beta1.ApplicationUpgrade
	if err := s.cl.Client().Get(ctx, types.NamespacedName{Namespace: s.cl.Namespace(), Name: name}, &u); err != nil {
		return fmt.Errorf("read applicationupgrade %s as v1beta1: %w", name, err)
	}
	got := componentNames(&u)
	if len(got) != 2 || !(got[0] == a && got[1] == b || got[0] == b && got[1] == a) {
		return fmt.Errorf("components %v, want %s and %s", got, a, b)
	}
	return dependsOn(&u, caller, callee)
}

func (s *scenario) stillHas(ctx context.Context, name string, n int, caller, callee string) error {
	u, err := s.getGraph(ctx, name)
	if err != nil {
		return err
	}
	if got := componentNames(u); len(got) != n {
		return fmt.Errorf("components %v, want %d", got, n)
	}
	return dependsOn(u, caller, callee)
}

func (s *scenario) refusedWith(text string) error {
	name, err := s.upgradeName("")
	if err != nil {
		return err
	}
	refusal := s.refused[name]
	if refusal == nil {
		return fmt.Errorf("upgrade %s was accepted, want it refused with %q", name, text)
	}
	if !strings.Contains(refusal.Error(), text) {
		return fmt.Errorf("upgrade %s was refused with %q, which does not contain %q", name, refusal.Error(), text)
	}
	return nil
}

func (s *scenario) doesNotExist(ctx context.Context, name string) error {
	var u upgradesv1beta1.ApplicationUpgrade
	err := s.cl.Client().Get(ctx, types.NamespacedName{Namespace: s.cl.Namespace(), Name: name}, &u)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("upgrade %s exists (phase %q)", name, u.Status.Phase)
}

func (s *scenario) componentPhase(u *upgradesv1beta1.ApplicationUpgrade, name string) string {
	for _, c := range u.Status.Components {
		if c.Name == name {
			return string(c.Phase)
		}
	}
	return ""
}

func (s *scenario) everyComponentIs(ctx context.Context, name, phase string) error {
	name, err := s.upgradeName(name)
	if err != nil {
		return err
	}
	u, err := s.getGraph(ctx, name)
	if err != nil {
		return err
	}
	var wrong []string
	for _, c := range u.Spec.Components {
		if p := s.componentPhase(u, c.Name); p != phase {
			wrong = append(wrong, c.Name+"="+p)
		}
	}
	if len(wrong) > 0 {
		return fmt.Errorf("components not %s: %s", phase, strings.Join(wrong, ", "))
	}
	return nil
}

func (s *scenario) componentsAre(ctx context.Context, list, phase string) error {
	name, err := s.upgradeName("")
	if err != nil {
		return err
	}
	u, err := s.getGraph(ctx, name)
	if err != nil {
		return err
	}
	var wrong []string
	for _, c := range names(list) {
		if p := s.componentPhase(u, c); p != phase {
			wrong = append(wrong, fmt.Sprintf("%s=%q", c, p))
		}
	}
	if len(wrong) > 0 {
		return fmt.Errorf("components not %s: %s (message: %s)", phase, strings.Join(wrong, ", "), u.Status.Message)
	}
	return nil
}

// componentBecomes waits until component comp of the scenario's upgrade
// (read as v1beta1, whichever version it was applied in) is in phase.
func (s *scenario) componentBecomes(ctx context.Context, comp, phase string, secs int) error {
	name, err := s.upgradeName("")
	if err != nil {
		return err
	}
	seen := ""
	err = s.cl.Eventually(ctx, fmt.Sprintf("component %s of %s is %s", comp, name, phase), time.Duration(secs)*time.Second, func(ctx context.Context) (bool, error) {
		u, err := s.getGraph(ctx, name)
		if err != nil {
			return false, err
		}
		seen = fmt.Sprintf("%q (%s)", s.componentPhase(u, comp), u.Status.Message)
		return s.componentPhase(u, comp) == phase, nil
	})
	if err != nil {
		return fmt.Errorf("%w; last seen %s", err, seen)
	}
	return nil
}

func (s *scenario) rolledOutCount(ctx context.Context, want string) error {
	name, err := s.upgradeName("")
	if err != nil {
		return err
	}
	u, err := s.getGraph(ctx, name)
	if err != nil {
		return err
	}
	if u.Status.RolledOut != want {
		return fmt.Errorf("status.rolledOut is %q, want %q", u.Status.RolledOut, want)
	}
	return nil
}

// refusedOrHeld: name was refused at admission naming other, or it is
// held (Pending) with a message naming other.
func (s *scenario) refusedOrHeld(ctx context.Context, name, other string, seconds int) error {
	if err := s.refused[name]; err != nil {
		if !strings.Contains(err.Error(), other) {
			return fmt.Errorf("upgrade %s was refused with %q, which does not name %s", name, err.Error(), other)
		}
		return nil
	}
	return s.held(ctx, name, other, seconds)
}

// reapply creates a refused upgrade (graph or v1alpha1) again, unchanged.
func (s *scenario) reapply(ctx context.Context, name string) error {
	g := s.graphs[name]
	if u := s.upgrades[name]; g == nil && u != nil {
		if s.refused[name] == nil {
			return nil
		}
		delete(s.refused, name)
		if err := s.cl.Client().Create(ctx, u.object(s.cl.Namespace())); err != nil {
			return fmt.Errorf("upgrade %s refused again: %w", name, err)
		}
		return nil
	}
	if g == nil {
		return fmt.Errorf("no graph upgrade %q was applied in this scenario", name)
	}
	if s.refused[name] == nil {
		return nil
	}
	delete(s.refused, name)
	s.order = slices.DeleteFunc(s.order, func(n string) bool { return n == name })
	if err := s.applyGraph(ctx, g); err != nil {
		return err
	}
	if err := s.refused[name]; err != nil {
		return fmt.Errorf("upgrade %s refused again: %w", name, err)
	}
	return nil
}
