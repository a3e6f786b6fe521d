// Package hostile is the bad-input corpus of issue 14: ApplicationUpgrades
// an attacker or a careless author might send. The admission webhook's unit
// test and the real-control-plane tenant suite (scenarios/real/install) both run
// it, so a case added here is tried at both levels.
package hostile

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// Case is one hostile ApplicationUpgrade, named for the test output.
type Case struct {
	Name    string
	Upgrade *v1beta1.ApplicationUpgrade
}

// Component is a component named name on Deployment dep ("ns/name" for
// another namespace) with image registry.example.com/<name>:v2.
func Component(name, dep string, dependsOn ...string) v1beta1.Component {
	ref := v1beta1.DeploymentReference{Name: dep}
	if ns, n, ok := strings.Cut(dep, "/"); ok {
		ref = v1beta1.DeploymentReference{Namespace: ns, Name: n}
	}
	return v1beta1.Component{Name: name, DeploymentRef: ref, Image: "registry.example.com/" + name + ":v2", DependsOn: dependsOn}
}

// Upgrade is the ApplicationUpgrade ns/name (generation 1) of components.
func Upgrade(ns, name string, components ...v1beta1.Component) *v1beta1.ApplicationUpgrade {
	return &v1beta1.ApplicationUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1},
		Spec:       v1beta1.ApplicationUpgradeSpec{Components: components},
	}
}

// Refused returns the cases that admission must refuse for an upgrade in
// namespace ns whose author may get and patch Deployments of ns only, with
// cross-namespace references off: images with every class of invalid
// character (all C0 controls, DEL, C1, Unicode spaces, bidi and zero-width
// format characters, ANSI escapes, invalid UTF-8), invalid, over-long and
// empty references; cyclic, empty, duplicate and dangling graphs; and
// references to other namespaces, alone or hidden in a wide graph. Each
// case is named "<class>: <what>"; every upgrade is named name.
func Refused(ns, name string) []Case {
	var out []Case
	add := func(label string, u *v1beta1.ApplicationUpgrade) { out = append(out, Case{Name: label, Upgrade: u}) }
	img := func(label, image string) {
		c := Component("a", "app")
		c.Image = image
		add("image: "+label, Upgrade(ns, name, c))
	}
	for r := rune(0); r < 0x20; r++ {
		img(fmt.Sprintf("C0 U+%04X", r), "app:v"+string(r))
	}
	img("DEL", "app:v2\x7f")
	for _, r := range []rune{0x85, 0x9b, 0xa0, 0x2028, 0x202e, 0x200b, 0xfeff, 0x3000} {
		img(fmt.Sprintf("U+%04X", r), "app:v2"+string(r))
	}
	img("ANSI", "app:\x1b[31mv2")
	img("invalid UTF-8", "app:\xff")
	img("uppercase", "App:v2")
	img("over-long", "app:"+strings.Repeat("x", 4000))
	img("name too long", strings.Repeat("a", 300)+":v2")
	img("empty", "")
	img("space", "app :v2")
	img("digest", "app@sha256:123")

	chain := func(n int) []v1beta1.Component {
		var cs []v1beta1.Component
		for i := 0; i < n; i++ {
			var deps []string
			if i > 0 {
				deps = []string{fmt.Sprintf("c%d", i-1)}
			}
			cs = append(cs, Component(fmt.Sprintf("c%d", i), fmt.Sprintf("d%d", i), deps...))
		}
		return cs
	}
	cyc := chain(32)
	cyc[0].DependsOn = []string{"c31"}
	add("graph: a 32-long cycle", Upgrade(ns, name, cyc...))
	add("graph: empty", Upgrade(ns, name))
	add("graph: duplicate names", Upgrade(ns, name, Component("a", "x"), Component("a", "y")))
	add("graph: unknown dependency", Upgrade(ns, name, Component("a", "x", "ghost")))
	add("graph: self dependency", Upgrade(ns, name, Component("a", "x", "a")))
	add("graph: one Deployment twice", Upgrade(ns, name, Component("a", "x"), Component("b", ns+"/x")))
	for _, other := range []string{"kube-system", "victim", "default", "upgrade-operator-system"} {
		add("cross-namespace: "+other, Upgrade(ns, name, Component("a", other+"/target")))
	}
	add("cross-namespace: hidden in a wide graph", Upgrade(ns, name, append(chain(10), Component("z", "kube-system/coredns", "c9"))...))
	return out
}

// RefusedJSON returns ApplicationUpgrades in namespace ns, named name, as
// raw v1beta1 JSON the typed client cannot send: unknown fields at every
// level, wrong types, and an out-of-range value. A kubectl-like create
// (fieldValidation=Strict) must refuse each with a message naming the field.
func RefusedJSON(ns, name string) map[string]string {
	head := fmt.Sprintf(`"apiVersion":"upgrades.lunadas.dev/v1beta1","kind":"ApplicationUpgrade","metadata":{"namespace":%q,"name":%q}`, ns, name)
	comp := `{"name":"a","deploymentRef":{"name":"app"},"image":"registry.example.com/a:v2"%s}`
	spec := func(extraComp, extraSpec string) string {
		return "{" + head + `,"spec":{"components":[` + fmt.Sprintf(comp, extraComp) + "]" + extraSpec + "}}"
	}
	return map[string]string{
		"unknown field: spec":                    spec("", `,"force":true`),
		"unknown field: component":               spec(`,"replicas":3`, ""),
		"unknown field: deploymentRef":           "{" + head + `,"spec":{"components":[{"name":"a","deploymentRef":{"name":"app","uid":"0"},"image":"registry.example.com/a:v2"}]}}`,
		"unknown field: top level":               "{" + head + `,"specification":{},"spec":{"components":[` + fmt.Sprintf(comp, "") + `]}}`,
		"wrong type: components":                 "{" + head + `,"spec":{"components":{"a":{}}}}`,
		"wrong type: image":                      "{" + head + `,"spec":{"components":[{"name":"a","deploymentRef":{"name":"app"},"image":42}]}}`,
		"wrong type: dependsOn":                  spec(`,"dependsOn":"b"`, ""),
		"wrong type: deploymentRef":              "{" + head + `,"spec":{"components":[{"name":"a","deploymentRef":"app","image":"registry.example.com/a:v2"}]}}`,
		"wrong type: serviceAccountName":         spec("", `,"serviceAccountName":["a"]`),
		"invalid: component name uppercase":      "{" + head + `,"spec":{"components":[{"name":"A B","deploymentRef":{"name":"app"},"image":"registry.example.com/a:v2"}]}}`,
		"wrong type: containerName":              spec(`,"containerName":7`, ""),
		"wrong type: dependsOn item":             spec(`,"dependsOn":[7]`, ""),
		"invalid: components null":               "{" + head + `,"spec":{"components":null}}`,
		"invalid: deploymentRef name empty":      "{" + head + `,"spec":{"components":[{"name":"a","deploymentRef":{"name":""},"image":"registry.example.com/a:v2"}]}}`,
		"invalid: deploymentRef namespace":       "{" + head + `,"spec":{"components":[{"name":"a","deploymentRef":{"name":"app","namespace":"Kube System"},"image":"registry.example.com/a:v2"}]}}`,
		"invalid: metadata name":                 "{" + strings.Replace(head, fmt.Sprintf("%q", name), `"Not_A_Name"`, 1) + `,"spec":{"components":[` + fmt.Sprintf(comp, "") + `]}}`,
		"invalid: deploymentRef and workloadRef": "{" + head + `,"spec":{"components":[{"name":"a","deploymentRef":{"name":"app"},"workloadRef":{"kind":"StatefulSet","name":"app"},"image":"registry.example.com/a:v2"}]}}`,
		"invalid: no workload reference":         "{" + head + `,"spec":{"components":[{"name":"a","image":"registry.example.com/a:v2"}]}}`,
		"invalid: workloadRef kind":              "{" + head + `,"spec":{"components":[{"name":"a","workloadRef":{"kind":"CronJob","name":"app"},"image":"registry.example.com/a:v2"}]}}`,
		"invalid: workloadRef without kind":      "{" + head + `,"spec":{"components":[{"name":"a","workloadRef":{"name":"app"},"image":"registry.example.com/a:v2"}]}}`,
		"unknown field: workloadRef":             "{" + head + `,"spec":{"components":[{"name":"a","workloadRef":{"kind":"StatefulSet","name":"app","apiVersion":"apps/v1"},"image":"registry.example.com/a:v2"}]}}`,
		"unknown field: status":                  "{" + head + `,"spec":{"components":[` + fmt.Sprintf(comp, "") + `]},"status":{"phase":"Completed","approvedBy":"admin"}}`,
	}
}

// UpgradePatches returns JSON merge patches of the platform's singleton
// Upgrade `system` that must be refused (by the CRD's schema, strict field
// validation or the platform webhook): release ids with control, format
// and space characters, over-long, path-like and not-uploaded ids;
// Kubernetes versions that are not `vX.Y.Z` or not available; out-of-enum
// deploy policies and out-of-range host counts; unknown fields; wrong
// types. A refused patch leaves `system` as it was.
func UpgradePatches() map[string]string {
	out := map[string]string{}
	platform := func(label, id string) {
		b, _ := json.Marshal(map[string]any{"spec": map[string]any{"release": map[string]any{"platform": id}}})
		out["platform: "+label] = string(b)
	}
	for _, r := range []rune{0x00, 0x09, 0x0a, 0x1b, 0x7f, 0x85, 0xa0, 0x200b, 0x202e} {
		platform(fmt.Sprintf("U+%04X", r), "starlingx-13.01.1"+string(r))
	}
	platform("ANSI", "\x1b[2Jstarlingx-13.01.1")
	platform("leading space", " starlingx-13.01.1")
	platform("empty", "")
	platform("over-long", "starlingx-13.01."+strings.Repeat("9", 300))
	platform("path", "../../etc/passwd")
	platform("not uploaded", "starlingx-99.99.0")
	kube := func(label, v string) {
		b, _ := json.Marshal(map[string]any{"spec": map[string]any{"release": map[string]any{"kubernetes": v}}})
		out["kubernetes: "+label] = string(b)
	}
	kube("no v", "1.34.1")
	kube("tab", "v1.34.1\t")
	kube("escape", "v1.34.1\x1b[0m")
	kube("not available", "v9.99.0")
	kube("two parts", "v1.34")
	policy := func(label, field string, v any) {
		b, _ := json.Marshal(map[string]any{"spec": map[string]any{"deployPolicy": map[string]any{field: v}}})
		out["deployPolicy: "+label] = string(b)
	}
	policy("controllerApplyType", "controllerApplyType", "sideways")
	policy("workerApplyType", "workerApplyType", "all-at-once")
	policy("alarmRestriction", "alarmRestriction", "none")
	policy("instanceAction", "instanceAction", "explode")
	policy("rollbackPolicy", "rollbackPolicy", "never")
	policy("maxParallelWorkerHosts negative", "maxParallelWorkerHosts", -1)
	policy("maxParallelWorkerHosts huge", "maxParallelWorkerHosts", 100000)
	policy("dryRun string", "dryRun", "yes")
	out["targetDeployStep: unknown"] = `{"spec":{"targetDeployStep":"rollback-everything"}}`
	out["unknown field: spec"] = `{"spec":{"force":true}}`
	out["unknown field: release"] = `{"spec":{"release":{"version":"27.03"}}}`
	out["unknown field: deployPolicy"] = `{"spec":{"deployPolicy":{"speed":"fast"}}}`
	out["wrong type: release"] = `{"spec":{"release":"starlingx-27.03.0"}}`
	out["wrong type: platform"] = `{"spec":{"release":{"platform":27.03}}}`
	return out
}
