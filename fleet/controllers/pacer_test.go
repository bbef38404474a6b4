package controllers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/hcpsched/hcpsched/internal/controller"
)

func TestPacerKeepsOneTimerPerKey(t *testing.T) {
	t.Parallel()
	p := newPacer()
	assert.Equal(t, controller.Result{RequeueAfter: time.Hour}, p.after("a", time.Hour), "first request arms a timer")
	assert.Equal(t, controller.Result{}, p.after("a", 2*time.Hour), "a later one is covered by it")
	assert.Equal(t, controller.Result{RequeueAfter: time.Minute}, p.after("a", time.Minute), "an earlier one arms its own")
	assert.Equal(t, controller.Result{RequeueAfter: time.Hour}, p.after("b", time.Hour), "keys are independent")

	p.started("a") // before the timer is due: still pending
	assert.Equal(t, controller.Result{}, p.after("a", time.Hour))

	p.after("c", 0)
	p.started("c") // the timer fired
	assert.Equal(t, controller.Result{RequeueAfter: time.Hour}, p.after("c", time.Hour), "the pass the timer started arms the next")
}
