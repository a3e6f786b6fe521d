// Package manager wires the reconcilers into a controller-runtime manager:
// cache scoping, field indexes, leader election, metrics and health probes.
package manager

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	starlingxv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	appwebhook "github.com/lunadas/upgrade-operator/operator/appupgrade/webhook"
	"github.com/lunadas/upgrade-operator/operator/controller"
)

// DefaultMaxConcurrentReconciles is --max-concurrent-reconciles' default:
// kube-controller-manager's Deployment controller runs 5 workers
// (--concurrent-deployment-syncs); with one, 20 upgrades created at once
// among 1,000 churned Deployments waited seconds in the queue (handoff p99
// 3.7–5.8 s at machine load 6–8), with four 0.4 s (at load 2.7: single
// runs on a shared machine; make bench -phases load, docs/performance.md).
const DefaultMaxConcurrentReconciles = 4

// Options are the manager's settings, one per command-line flag.
type Options struct {
	// WatchNamespaces scopes every cache (Deployments, ReplicaSets, pods,
	// ApplicationUpgrades) to these namespaces; empty means cluster-wide.
	WatchNamespaces []string
	// MetricsAddr is the metrics listen address, "0" disables it.
	MetricsAddr string
	// ProbeAddr is the health/readiness probe listen address, "0" disables it.
	ProbeAddr string
	// LeaderElect enables leader election (a Lease named LeaderElectionID).
	LeaderElect bool
	// LeaderElectionNamespace holds the Lease; empty means the in-cluster namespace.
	LeaderElectionNamespace string
	// LeaderElectionID is the Lease name.
	LeaderElectionID string
	// MaxConcurrentReconciles is how many upgrades each controller
	// reconciles at once (controller-runtime's workers; one request is never
	// reconciled twice at once). 0 means 1; the command's default is
	// DefaultMaxConcurrentReconciles.
	MaxConcurrentReconciles int

	// AssessFunc replaces the rollout assessment (rollout.Assess when nil).
	// Only tests set it: the mutation check weakens the readiness rule and
	// expects the end-to-end suite to catch the ordering violation.
	AssessFunc controller.AssessFunc
	// Reconciler, when set, is called with the ApplicationUpgrade
	// reconciler before it is registered and returns the reconciler to
	// register, which must delegate to it (tests: a recording client, a
	// deliberately weakened policy). Nil registers the product's reconciler.
	Reconciler func(*controller.ApplicationUpgradeReconciler) reconcile.Reconciler
	// SkipNameValidation lets several managers run in one process (tests
	// that restart the operator in-process or run a second, differently
	// configured manager); controller names must otherwise be unique.
	SkipNameValidation bool
	// Platform configures the platform Upgrade controller (off unless Enabled).
	Platform PlatformOptions
	// Webhook configures the admission webhook server.
	Webhook WebhookOptions
	// AllowCrossNamespaceRefs lets an ApplicationUpgrade name Deployments
	// in other namespaces (--allow-cross-namespace-refs); off by default,
	// such upgrades are refused at admission and failed by the controller.
	AllowCrossNamespaceRefs bool
	// DefaultServiceAccount is impersonated, in each upgrade's namespace,
	// for upgrades without spec.serviceAccountName
	// (--default-service-account); empty uses the operator's identity.
	DefaultServiceAccount string
	// Metrics configures how the metrics endpoint is served.
	Metrics MetricsOptions
}

// DefaultLeaderElectionID is the Lease name used for leader election.
const DefaultLeaderElectionID = "upgrade-operator.lunadas.dev"

// NewScheme returns a scheme with the built-in types and every API of this
// operator: upgrades.lunadas.dev v1alpha1 and v1beta1 (the storage version
// and conversion hub; the reconciler reads v1beta1) and starlingx.io.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(upgradesv1alpha1.AddToScheme(s))
	utilruntime.Must(upgradesv1beta1.AddToScheme(s))
	utilruntime.Must(starlingxv1alpha1.AddToScheme(s))
	return s
}

// ParseNamespaces splits a --watch-namespaces value ("a,b") into names,
// dropping blanks and duplicates.
func ParseNamespaces(v string) []string {
	var out []string
	seen := map[string]bool{}
	for _, ns := range strings.Split(v, ",") {
		ns = strings.TrimSpace(ns)
		if ns != "" && !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	return out
}

// Leader election keeps its Lease in coordination.k8s.io.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update

// New builds a manager with the ApplicationUpgrade controller registered.
// Pods are cached through controller.StripPod (spec dropped), scoped like
// everything else by WatchNamespaces.
func New(ctx context.Context, cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	if opts.MaxConcurrentReconciles < 0 {
		return nil, fmt.Errorf("--max-concurrent-reconciles is %d: give 1 or more (0 means 1)", opts.MaxConcurrentReconciles)
	}
	cacheOpts := cache.Options{
		ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Transform: controller.StripPod}},
	}
	if len(opts.WatchNamespaces) > 0 {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range opts.WatchNamespaces {
			cacheOpts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	id := opts.LeaderElectionID
	if id == "" {
		id = DefaultLeaderElectionID
	}
	if opts.Webhook.SelfSigned {
		if err := selfSign(ctx, cfg, &opts.Webhook); err != nil {
			return nil, err
		}
	}
	var certsReady chan struct{}
	if opts.Webhook.CertRotation.Enabled() {
		certsReady = make(chan struct{})
	}
	var guard *LeaseGuard
	if opts.LeaderElect {
		g, err := newLeaseGuard(cfg, id, opts.LeaderElectionNamespace)
		if err != nil {
			return nil, fmt.Errorf("leader election: %w", err)
		}
		guard = g
	}
	mgrOpts := ctrl.Options{
		Scheme: NewScheme(),
		Cache:  cacheOpts,
		// Every write of the manager's client is recorded under one pinned
		// field manager (docs/gitops.md), not a name derived from the
		// binary's User-Agent.
		Client:                  client.Options{FieldOwner: controller.FieldManager},
		Metrics:                 metricsOptions(opts),
		HealthProbeBindAddress:  opts.ProbeAddr,
		LeaderElection:          opts.LeaderElect,
		LeaderElectionID:        id,
		LeaderElectionNamespace: opts.LeaderElectionNamespace,
		// The new leader starts at once after a clean shutdown instead of
		// waiting for the lease to expire.
		LeaderElectionReleaseOnCancel: true,
		WebhookServer:                 webhookServer(opts.Webhook, certsReady),
		Controller:                    config.Controller{SkipNameValidation: ptr.To(opts.SkipNameValidation), MaxConcurrentReconciles: opts.MaxConcurrentReconciles},
		RenewDeadline:                 ptr.To(RenewDeadline),
	}
	if guard != nil {
		// The manager's elector renews through the guard, which remembers
		// the last renewal for the reconciler's LeaseHeld check.
		mgrOpts.LeaderElectionResourceLockInterface = guard
	}
	mgr, err := ctrl.NewManager(cfg, mgrOpts)
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if guard != nil && guard.events != nil {
		if err := mgr.Add(guard.events); err != nil {
			return nil, fmt.Errorf("leader election: %w", err)
		}
	}
	r := &controller.ApplicationUpgradeReconciler{
		Client:          mgr.GetClient(),
		Clock:           clock.RealClock{},
		Recorder:        mgr.GetEventRecorder("upgrade-operator"),
		WatchNamespaces: opts.WatchNamespaces,
		AssessFunc:      opts.AssessFunc,

		AllowCrossNamespaceRefs: opts.AllowCrossNamespaceRefs,
		DefaultServiceAccount:   opts.DefaultServiceAccount,
		Impersonate:             controller.NewImpersonator(mgr.GetConfig(), mgr.GetScheme(), mgr.GetRESTMapper()),
	}
	var leaseHeld func() error
	if guard != nil {
		leaseHeld = guard.Held
	}
	r.LeaseHeld = leaseHeld
	var outer reconcile.Reconciler = r
	if opts.Reconciler != nil {
		outer = opts.Reconciler(r)
	}
	if err := r.SetupWithManagerAs(ctx, mgr, outer); err != nil {
		return nil, fmt.Errorf("set up applicationupgrade controller: %w", err)
	}
	controller.SetPhaseMetricsReader(mgr.GetClient())
	if opts.Webhook.AppUpgrade || opts.Webhook.SelfSigned {
		v := &appwebhook.Validator{Reader: mgr.GetClient(), AllowCrossNamespaceRefs: opts.AllowCrossNamespaceRefs,
			Authorizer: appwebhook.SubjectAccessReviewer{Client: mgr.GetClient()}}
		if err := v.SetupWithManager(mgr); err != nil {
			return nil, err
		}
	}
	if opts.Platform.Enabled {
		if err := setupPlatform(ctx, mgr, opts.Platform, leaseHeld); err != nil {
			return nil, fmt.Errorf("set up platform upgrades: %w", err)
		}
	}
	if certsReady != nil {
		if err := addCertRotation(mgr, opts.Webhook, certsReady); err != nil {
			return nil, err
		}
	}
	if err := addProbes(mgr, opts); err != nil {
		return nil, err
	}
	return mgr, nil
}
