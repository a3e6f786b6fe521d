package simulator

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WatchEvent is one committed change to the store.
type WatchEvent struct {
	// Type is watch.Added, watch.Modified or watch.Deleted.
	Type watch.EventType
	// Object is the new version (for Deleted, the last one). Subscribers
	// share it: treat it as read-only.
	Object client.Object
	// Old is the previous version; nil for Added.
	Old client.Object
	// Time is the virtual time of the commit.
	Time time.Time
	// Stored is the new version at the kind's storage version: Object
	// itself, or for a multi-version kind delivered at another version
	// the object Object was converted from (no conversion needed to read
	// it there). Shared like Object: read-only.
	Stored client.Object
}

// Subscribe registers fn to be called with every committed change, in
// commit order, synchronously inside the write that made it. fn must not
// write to the store; Schedule the reaction instead.
//
// Objects of a multi-version kind (SetConversion) arrive at their storage
// version, or at the version of versions whose group is theirs, converted
// as a watch at that version would deliver them. An event whose
// conversion fails is not delivered to fn (a watch at that version would
// end with an error); it is logged to Options.Logger.
func (s *Sim) Subscribe(fn func(WatchEvent), versions ...schema.GroupVersion) {
	s.subs = append(s.subs, subscriber{fn: fn, versions: versions})
}

// subscriber is a Subscribe registration, or (raw set) the controllers'
// dispatcher, which picks versions per watch.
type subscriber struct {
	fn       func(WatchEvent)
	versions []schema.GroupVersion
	raw      func(*versionedEvent)
}

func (sub subscriber) notify(ev *versionedEvent) {
	if sub.raw != nil {
		sub.raw(ev)
		return
	}
	want := ev.gvk
	for _, gv := range sub.versions {
		if gv.Group == want.Group {
			want.Version = gv.Version
			break
		}
	}
	e, ok := ev.at(want)
	if ok {
		sub.fn(e)
	}
}

// versionedEvent is a committed change at its storage version gvk, and its
// conversions to other versions, each made at most once.
type versionedEvent struct {
	st     *store
	gvk    schema.GroupVersionKind
	ev     WatchEvent
	stored client.Object // the object as stored (ev.Object at the storage version)
	conv   map[schema.GroupVersionKind]convertedEvent
}

// convertedEvent is a versionedEvent's conversion to one version; ok is
// false when it failed.
type convertedEvent struct {
	ev WatchEvent
	ok bool
}

// at is the event at version gvk; false when the conversion failed (logged).
func (v *versionedEvent) at(gvk schema.GroupVersionKind) (WatchEvent, bool) {
	if gvk == v.gvk || v.st.conversions[gvk.GroupKind()] == nil {
		return v.ev, true
	}
	if c, done := v.conv[gvk]; done {
		return c.ev, c.ok
	}
	if v.conv == nil {
		v.conv = map[schema.GroupVersionKind]convertedEvent{}
	}
	src := v.ev
	src.Object = v.stored // the stored pointer: its conversion is memoised
	e, err := v.st.convertEvent(src, v.gvk, gvk)
	if err != nil {
		v.conv[gvk] = convertedEvent{}
		v.st.s.logger.Error(err, "watch event dropped: conversion failed", "kind", gvk, "object", objectName(v.ev.Object))
		return WatchEvent{}, false
	}
	v.conv[gvk] = convertedEvent{ev: e, ok: true}
	return e, true
}

// convertEvent converts an event's objects from version from to version
// to. The converted objects are the store's memoised conversions, shared
// and read-only like the stored objects of an event at its storage
// version (as an informer's handlers share the cache's converted object);
// with CheckSharedReads they are checked like any shared read.
func (st *store) convertEvent(ev WatchEvent, from, to schema.GroupVersionKind) (WatchEvent, error) {
	if from == to {
		return ev, nil
	}
	obj, err := st.convert(ev.Object, from, to)
	if err != nil {
		return ev, err
	}
	out := ev
	out.Object = obj
	if ev.Old != nil {
		old, err := st.convert(ev.Old, from, to)
		if err != nil {
			return ev, err
		}
		out.Old = old
		st.s.shared.handOut("a watch event at "+to.Version, old)
	}
	st.s.shared.handOut("a watch event at "+to.Version, obj)
	return out, nil
}
