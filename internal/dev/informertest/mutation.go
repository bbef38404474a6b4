// Package informertest helps tests hold controllers to the cache contract: objects from
// listers are shared and must be deep-copied before they are changed.
package informertest

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"
)

type encoded interface {
	GetName() string
	Encoded() ([]byte, error)
}

// DetectMutations records every object the informers hand out and, when the test ends,
// fails it if any of them changed in place.
func DetectMutations(t testing.TB, informers ...cache.SharedIndexInformer) {
	t.Helper()
	var mu sync.Mutex
	seen := map[encoded][]byte{}
	record := func(obj any) {
		o, ok := obj.(encoded)
		if !ok {
			return
		}
		b, err := o.Encoded()
		if err != nil {
			t.Errorf("encoding cached %s: %v", o.GetName(), err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if _, ok := seen[o]; !ok {
			seen[o] = b
		}
	}
	for _, inf := range informers {
		for _, obj := range inf.GetStore().List() {
			record(obj)
		}
		reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    record,
			UpdateFunc: func(_, newObj any) { record(newObj) },
		})
		if err != nil {
			t.Fatalf("watching the cache for mutations: %v", err)
		}
		// The handler replays the cache in the background; wait for it so that the
		// recording never reads an object while the test changes it.
		stop := make(chan struct{})
		timer := time.AfterFunc(time.Minute, func() { close(stop) })
		if !cache.WaitForCacheSync(stop, reg.HasSynced) {
			t.Fatalf("the mutation detector's handler did not catch up with the cache")
		}
		timer.Stop()
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for o, before := range seen {
			after, err := o.Encoded()
			if err != nil || !bytes.Equal(before, after) {
				t.Errorf("cached object %s was changed in place; DeepCopy it before mutating\nbefore: %s\nafter:  %s", o.GetName(), before, after)
			}
		}
	})
}
