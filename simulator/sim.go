package simulator

import (
	"context"
	"math/rand"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
)

// DefaultStart is the virtual time a simulation starts at when Options.Start
// is zero.
var DefaultStart = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// Options configure a simulation.
type Options struct {
	// Seed seeds the one *rand.Rand every random choice comes from.
	Seed int64
	// Scheme knows every type the store holds. Nil means client-go's scheme
	// (all built-in types); add CRD types to a scheme of your own.
	Scheme *runtime.Scheme
	// Start is the virtual time at Elapsed() == 0; zero means DefaultStart.
	Start time.Time
	// Logger is put into every reconcile's context (logr.FromContextOrDiscard);
	// the zero value discards.
	Logger logr.Logger
}

// Sim is a discrete-event simulation of an API server, the kube controllers
// and any number of reconcilers, all in virtual time on one goroutine.
type Sim struct {
	scheme *runtime.Scheme
	start  time.Time
	now    time.Time
	seq    uint64
	events eventHeap
	// freeEvents are run events, reused by scheduleAt.
	freeEvents []*event
	rng        *rand.Rand
	logger     logr.Logger
	runCtx     context.Context
	// reconcileCtx is the context of every reconcile with a discarding
	// logger, made from runCtx and reconcileCtxLogger (discardCtx).
	reconcileCtx       context.Context
	reconcileCtxLogger logr.Logger
	clock              *virtualClock
	store              *store
	subs               []subscriber
	ctrls              []*Controller
	clients            map[string]*simClient
	shared             sharedReads

	active      *Controller // the controller whose reconcile is running
	intercept   func(APIRequest) error
	mapper      meta.RESTMapper
	mapperKinds int
}

// New returns a simulation at virtual time opts.Start with an empty store.
func New(opts Options) *Sim {
	sch := opts.Scheme
	if sch == nil {
		sch = runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(sch); err != nil {
			panic(err) // client-go's own types always register
		}
	}
	start := opts.Start
	if start.IsZero() {
		start = DefaultStart
	}
	logger := opts.Logger
	if logger.GetSink() == nil {
		logger = logr.Discard()
	}
	s := &Sim{
		scheme:  sch,
		start:   start,
		now:     start,
		rng:     rand.New(rand.NewSource(opts.Seed)),
		logger:  logger,
		clients: map[string]*simClient{},
		shared:  sharedReads{on: CheckSharedReads},
	}
	s.clock = &virtualClock{s: s}
	s.store = newStore(s)
	return s
}

// Clock is the virtual clock: Now is the simulation's time, and timers,
// tickers and After channels fire as simulation events. Sleep panics: it
// would block the only goroutine (return a RequeueAfter instead).
func (s *Sim) Clock() clock.WithTicker { return s.clock }

// Now is the current virtual time.
func (s *Sim) Now() time.Time { return s.now }

// Elapsed is the virtual time since Options.Start.
func (s *Sim) Elapsed() time.Duration { return s.now.Sub(s.start) }

// Rand is the simulation's only source of randomness, seeded by Options.Seed.
func (s *Sim) Rand() *rand.Rand { return s.rng }

// Scheme is the scheme the store and clients use.
func (s *Sim) Scheme() *runtime.Scheme { return s.scheme }

// Schedule runs fn after the given virtual delay (negative means now). Events
// run in (virtual time, scheduling order); what names the event in errors.
func (s *Sim) Schedule(after time.Duration, what string, fn func()) {
	if after < 0 {
		after = 0
	}
	s.scheduleAt(s.now.Add(after), what, fn)
}

func (s *Sim) scheduleAt(at time.Time, what string, fn func()) {
	s.events.push(s.newEvent(at, what, fn))
}

// scheduleDelivery is Schedule(after, what, func() { to.arrive(&d) })
// without the closure: the delivery is held in the (reused) event.
func (s *Sim) scheduleDelivery(after time.Duration, what string, to *Controller, d delivery) {
	if after < 0 {
		after = 0
	}
	e := s.newEvent(s.now.Add(after), what, nil)
	e.to, e.d = to, d
	s.events.push(e)
}

// scheduleKick is scheduleAt(at, what, func() { if to.epoch == epoch {
// to.work() } }) without the closure: the controller and epoch are held
// in the (reused) event.
func (s *Sim) scheduleKick(at time.Time, what string, to *Controller, epoch int) {
	e := s.newEvent(at, what, nil)
	e.to, e.d.epoch, e.kick = to, epoch, true
	s.events.push(e)
}

// newEvent is the next event, at at (not before now), reusing a run one.
func (s *Sim) newEvent(at time.Time, what string, fn func()) *event {
	if at.Before(s.now) {
		at = s.now
	}
	s.seq++
	var e *event
	if n := len(s.freeEvents); n > 0 {
		e, s.freeEvents = s.freeEvents[n-1], s.freeEvents[:n-1]
	} else {
		e = new(event)
	}
	*e = event{at: at, seq: s.seq, what: what, fn: fn}
	return e
}

// Pending is the number of scheduled events not yet run.
func (s *Sim) Pending() int { return len(s.events) }

// ctx is the context reconciles and internal models run with: the one given
// to the current Run, or Background between runs.
func (s *Sim) ctx() context.Context {
	if s.runCtx != nil {
		return s.runCtx
	}
	return context.Background()
}
