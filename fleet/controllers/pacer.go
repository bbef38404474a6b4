package controllers

import (
	"sync"
	"time"

	"github.com/hcpsched/hcpsched/internal/controller"
)

// pacer keeps at most one pending timed requeue per key. Periodic controllers requeue
// every pass, and passes are also started by informer events; if each pass armed a new
// timer, every event would start another polling chain and the polling rate would grow
// with time.
type pacer struct {
	mu  sync.Mutex
	due map[string]time.Time
}

func newPacer() *pacer { return &pacer{due: map[string]time.Time{}} }

// started is called at the start of a pass: a due time that has passed is the timer that
// (or the one before that) started this pass, so it no longer counts as pending.
func (p *pacer) started(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if due, ok := p.due[key]; ok && !time.Now().Before(due) {
		delete(p.due, key)
	}
}

// after asks for the key to come back within d. It arms a timer unless one that fires no
// later is already pending.
func (p *pacer) after(key string, d time.Duration) controller.Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	want := time.Now().Add(d)
	if due, ok := p.due[key]; ok && !due.After(want) {
		return controller.Result{}
	}
	p.due[key] = want
	return controller.Result{RequeueAfter: d}
}
