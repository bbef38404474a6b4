package process

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// controllersOutcome is how one leadership term's RunControllers ended.
type controllersOutcome struct {
	err  error
	lost bool // the term ended because the Lease could not be renewed
}

// runElected campaigns for the Lease and runs the controllers while holding it.
//
// The elector runs on a context of its own, cancelled only after the controllers have
// returned: with ReleaseOnCancel it then hands the Lease back at once, so the successor
// starts within a retry period instead of a lease duration, and never while this
// replica's controllers are still writing.
func (s *Shell) runElected(ctx context.Context, app App) error {
	electCtx, stopElecting := context.WithCancel(context.WithoutCancel(ctx))

	var (
		mu      sync.Mutex
		closing bool // set once shutdown begins before this replica leads
	)
	leading := make(chan struct{})
	outcome := make(chan controllersOutcome, 1)

	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: s.namespace, Name: s.opts.LeaderElectionLeaseName},
			Client:     s.kube.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: s.opts.LeaderElectionIdentity},
		},
		LeaseDuration:   s.opts.LeaderElectionLeaseDuration,
		RenewDeadline:   s.opts.LeaderElectionRenewDeadline,
		RetryPeriod:     s.opts.LeaderElectionRetryPeriod,
		ReleaseOnCancel: true,
		Name:            s.opts.LeaderElectionLeaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			// client-go calls this on a goroutine of its own; leaderCtx ends when the
			// Lease cannot be renewed or the elector is stopped.
			OnStartedLeading: func(leaderCtx context.Context) {
				mu.Lock()
				if closing {
					mu.Unlock()
					return
				}
				close(leading)
				mu.Unlock()

				s.logger.Info("became leader, starting controllers", "lease", s.leaseRef(), "identity", s.opts.LeaderElectionIdentity)
				s.isLeader.Set(1)
				defer s.isLeader.Set(0)
				ctrlCtx, cancel := context.WithCancel(leaderCtx)
				defer cancel()
				stop := context.AfterFunc(ctx, cancel)
				defer stop()
				err := app.RunControllers(ctrlCtx)
				outcome <- controllersOutcome{err: err, lost: leaderCtx.Err() != nil && ctx.Err() == nil}
			},
			OnStoppedLeading: func() {},
			OnNewLeader: func(identity string) {
				s.logger.Info("leader observed", "lease", s.leaseRef(), "leader", identity)
			},
		},
	})
	if err != nil {
		stopElecting()
		return fmt.Errorf("leader election: %w", err)
	}

	electorDone := make(chan struct{})
	go func() {
		defer close(electorDone)
		elector.Run(electCtx)
	}()
	s.logger.Info("campaigning for leadership", "lease", s.leaseRef(), "identity", s.opts.LeaderElectionIdentity)

	select {
	case <-leading:
	case <-ctx.Done():
		mu.Lock()
		closing = true
		mu.Unlock()
		select {
		case <-leading: // won the race with shutdown: drain below
		default:
			stopElecting()
			return s.awaitElector(electorDone)
		}
	case <-electorDone:
		stopElecting()
		return errors.New("leader election stopped before acquiring the lease")
	}

	result, err := s.awaitControllers(ctx, outcome, electorDone)
	if err != nil {
		// The controllers are still running: keep the Lease so no successor starts
		// beside them. It is released if they ever return, or expires once this
		// process exits.
		go func() {
			<-outcome
			stopElecting()
		}()
		return err
	}
	stopElecting()
	electorErr := s.awaitElector(electorDone)
	if result.lost {
		return joinOutcome(ErrLeadershipLost, result.err)
	}
	return errors.Join(s.controllersResult(ctx, result.err), electorErr)
}

// awaitControllers waits for the leader's controllers to return. Shutdown and a lost
// Lease both cancel them; either way they get the shutdown budget to return.
func (s *Shell) awaitControllers(ctx context.Context, outcome <-chan controllersOutcome, electorDone <-chan struct{}) (controllersOutcome, error) {
	ctxDone := ctx.Done()
	var drainTimeout <-chan time.Time
	lost := false
	for {
		select {
		case result := <-outcome:
			result.lost = result.lost || lost
			return result, nil
		case <-electorDone:
			// While leading, the elector stops on its own only when renewal failed.
			electorDone = nil
			lost = true
			s.logger.Error("leadership lost, stopping controllers", "lease", s.leaseRef(), "identity", s.opts.LeaderElectionIdentity)
			if drainTimeout == nil {
				drainTimeout = time.After(s.opts.ShutdownTimeout)
			}
		case <-ctxDone:
			ctxDone = nil
			if drainTimeout == nil {
				drainTimeout = time.After(time.Until(s.beginShutdown()))
			}
		case <-drainTimeout:
			err := fmt.Errorf("controllers did not stop within --shutdown-timeout %s", s.opts.ShutdownTimeout)
			if lost {
				err = joinOutcome(ErrLeadershipLost, err)
			}
			return controllersOutcome{}, err
		}
	}
}

// awaitElector waits for a stopped elector to release the Lease; release is bounded
// by the renew deadline inside client-go.
func (s *Shell) awaitElector(electorDone <-chan struct{}) error {
	timer := time.NewTimer(s.opts.LeaderElectionRenewDeadline + s.opts.LeaderElectionRetryPeriod)
	defer timer.Stop()
	select {
	case <-electorDone:
		return nil
	case <-timer.C:
		return fmt.Errorf("leader election did not stop within %s", s.opts.LeaderElectionRenewDeadline+s.opts.LeaderElectionRetryPeriod)
	}
}

func (s *Shell) leaseRef() string {
	return s.namespace + "/" + s.opts.LeaderElectionLeaseName
}

// joinOutcome wraps sentinel with cause unless cause is only the cancellation the
// sentinel itself brought about.
func joinOutcome(sentinel, cause error) error {
	if cause == nil || errors.Is(cause, context.Canceled) {
		return sentinel
	}
	return fmt.Errorf("%w: %w", sentinel, cause)
}
