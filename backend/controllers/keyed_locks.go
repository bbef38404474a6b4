package controllers

import "sync"

// keyedLocks is one mutex per key, created on first use and dropped when its last
// holder or waiter is done, so that a region's worth of keys costs nothing at rest.
type keyedLocks struct {
	mu    sync.Mutex
	locks map[string]*keyedLock
}

type keyedLock struct {
	sync.Mutex
	users int // holders and waiters
}

// lock takes key's mutex and returns its release, which may be called more than once.
func (k *keyedLocks) lock(key string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyedLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyedLock{}
		k.locks[key] = l
	}
	l.users++
	k.mu.Unlock()

	l.Lock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.Unlock()
			k.mu.Lock()
			if l.users--; l.users == 0 {
				delete(k.locks, key)
			}
			k.mu.Unlock()
		})
	}
}
